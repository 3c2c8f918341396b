"""What docs/python-api.md tells a newcomer works as written.

The recipe for comparing ``katacli.analyze`` with ``kata analysis`` is run as the page writes it: the
``kata analysis`` command line (a real process) and the Python lines, on the g170 network.
"""
from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys

import pytest

import katacli
from support.paths import G170_B6, REPO, model_path

DOC = REPO / "docs" / "python-api.md"
TIMEOUT = 180
JSON_PRECISION = 1e-7  # the JSON rounds to about nine significant digits
SIZE, RULES, KOMI, MOVES = 9, "japanese", 6.5, [["B", "E5"], ["W", "C3"]]


def doc_text() -> str:
    return DOC.read_text(encoding="utf-8")


def documented_command() -> list[str]:
    """The page's `kata analysis ...` line, its arguments after `kata`."""
    (line,) = re.findall(r"^kata analysis -model NET .*$", doc_text(), re.MULTILINE)
    return shlex.split(line)[1:]


def documented_visits() -> int:
    (visits,) = re.findall(r"katacli\.analyze\(game, net, visits=(\d+), num_search_threads=1, wide_root_noise=0\)",
                           doc_text())
    return int(visits)


def test_the_documented_kata_analysis_settings_match_analyze():
    net_path = str(model_path(G170_B6))
    args = [net_path if arg == "NET" else arg for arg in documented_command()]
    assert "nnRandomize=false" in args[-1] and "load_network(\"NET\", symmetry=0)" in doc_text()
    assert "nnNumpyUntilTorch=false" in args[-1]  # numpy's first answers differ from torch's in the last bits
    visits = documented_visits()
    query = {"id": "doc", "moves": MOVES, "rules": RULES, "komi": KOMI, "boardXSize": SIZE, "boardYSize": SIZE,
             "maxVisits": visits, "overrideSettings": {"reportAnalysisWinratesAs": "SIDETOMOVE"}}
    done = subprocess.run([sys.executable, "-m", "katacli.cli", *args], input=json.dumps(query) + "\n",
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr
    (answer,) = [json.loads(line) for line in done.stdout.splitlines()]

    net = katacli.load_network(net_path, symmetry=0)
    game = katacli.Game(SIZE, rules=RULES, komi=KOMI).play_moves(MOVES)
    result = katacli.analyze(game, net, visits=visits, num_search_threads=1, wide_root_noise=0)
    assert result.visits == answer["rootInfo"]["visits"]
    assert result.winrate == pytest.approx(answer["rootInfo"]["winrate"], abs=JSON_PRECISION)
    assert [m.move for m in result.moves] == [m["move"] for m in answer["moveInfos"]]
    for ours, theirs in zip(result.moves, answer["moveInfos"]):
        assert (ours.visits, ours.pv) == (theirs["visits"], theirs["pv"])
        assert ours.prior == pytest.approx(theirs["prior"], abs=JSON_PRECISION)
        assert ours.score_lead == pytest.approx(theirs["scoreLead"], abs=JSON_PRECISION * 100)


def test_the_documented_errors_are_value_errors_and_the_rest_are_not():
    """The page's error table: every katacli error it lists under ValueError is one."""
    table = doc_text().split("**Errors name the bad value.**", 1)[1].split("Model files raise", 1)[0]
    names = re.findall(r"^  \| `(\w+)` \|", table, re.MULTILINE)
    assert len(names) == 8
    for name in names:
        assert issubclass(getattr(katacli, name), ValueError), name
    assert not issubclass(katacli.ModelFileError, ValueError)
