"""KataGo's friendly pass in genmove (katacli/gtp/friendly_pass.py): on a finished 9x9 game under Chinese
rules, after White's pass, Black (200 visits) passes back instead of filling a point (KataGo 1.17.2 answers pass here,
benchmarks/compare_katago_search.py position 9x9-chinese-after-pass); not under Tromp-Taylor (no
friendlyPassOk) nor with friendlyPass=false."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.gtp import feed, make_engine
from support.paths import CONFIGS

G170 = "g170-b6c96-s175395328-d26788732.bin.gz"
POSITIONS = Path(__file__).resolve().parents[1] / "benchmarks" / "search_parity_positions.json"
OVERRIDE = "logDir=,logAllGTPCommunication=false,maxVisits=200,numSearchThreads=1,nnRandomize=false,chosenMoveTemperature=0,chosenMoveTemperatureEarly=0"


def _genmove_after_pass(rules: str, override: str = "") -> str:
    entry = next(p for p in json.loads(POSITIONS.read_text())["positions"] if p["name"] == "9x9-chinese-after-pass")
    assert entry["moves"][-1] == "W PASS"
    # KataGo's gtp_example.cfg values, as compare_katago_search.py runs both engines (the position's
    # verdict depends on them: with no config at all the search prefers filling E1).
    engine, out, _ = make_engine(override=OVERRIDE + override, model=G170, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    feed(engine, ["boardsize 9", f"kata-set-rules {rules}", "komi 7"] + [f"play {m}" for m in entry["moves"]]
         + ["genmove b"])
    engine.stop_background()
    return out.getvalue().strip().splitlines()[-1]


@pytest.mark.parametrize("rules,override,passes", [("chinese", "", True), ("tromp-taylor", "", False),
                                                   ("chinese", ",friendlyPass=false", False)])
def test_friendly_pass(rules, override, passes):
    answer = _genmove_after_pass(rules, override)
    assert answer.startswith("= ")
    assert (answer == "= pass") == passes, answer
