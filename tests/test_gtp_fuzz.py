"""Fuzzing the command loop: tens of thousands of random and malformed lines must never kill or hang
the engine, and every failure must be a proper ``? message`` (never an internal error)."""
from __future__ import annotations

import random
import threading

import pytest

from katacli.gtp.identity import KNOWN_COMMANDS
from support.gtp import make_engine

NUM_LINES_PER_RUN = 15000  # two runs: 30000 lines in all
TIME_LIMIT_SECONDS = 60.0
SEED = 20240601
# Commands whose random arguments could legitimately run for a long time (a benchmark of a billion
# visits, search limits lifted by kata-set-param) or write files; they get fixed, safe arguments.
SAFE_ONLY = {
    "kata-benchmark": ["x", "", "-1", "0 0"],
    "kata-set-param": ["", "noSuch 1", "cpuctExploration -1", "a b c", "cpuctExploration 1.1"],
    "kata-set-params": ["", "{", "[1]", '{"noSuch":1}'],
    "printsgf": ["", "-", "a b"],
    "loadsgf": ["", "no-such-file.sgf", "no-such-file.sgf 3", "a b c"],
    "quit": [""],  # keep the loop going; quit is tested elsewhere
}
EXTRA_NAMES = ["analyze", "genmove_analyze", "kata-get-params", "kata-set-params", "", "#", "GENMOVE", "play\x00",
               "boardsize:", "=1", "?", "0", "12345678901234567890", "kata-analyze\t", "lz-analyze#x"]
ATOMS = [
    "b", "w", "B", "W", "black", "WHITE", "x", "pass", "PASS", "resign", "A1", "a1", "E5", "J9", "T19", "Z25", "I5",
    "A0", "A-1", "(0,0)", "(4,4)", "(99,99)", "(1,", "0", "1", "2", "5", "7", "9", "19", "20", "-1", "-0", "+3",
    "1e3", "1.5", ".5", "nan", "inf", "-inf", "0x10", "99999999999999999999", "true", "false", "maybe", "all",
    "interval", "minmoves", "maxmoves", "avoid", "allow", "ownership", "rootInfo", "pvVisits", "movesOwnership",
    "chinese", "japanese", "tromp-taylor", "nogo", "aga", "ko", "scoring", "SIMPLE", "TERRITORY", '{"ko":"SIMPLE"}',
    "{", "}", "[]", "none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped", "alive", "dead", "seki",
    "C3,D4", ",", "9:13", "13:9", "é", "\u00ff", "\x01", "\x7f", "\t", "\r", "#comment", "''", '"', "\\", "%s", "{}",
]


def random_line(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.05:  # pure garbage bytes
        return "".join(chr(rng.randrange(0, 256)) for _ in range(rng.randrange(0, 40)))
    name = rng.choice(list(KNOWN_COMMANDS) + EXTRA_NAMES)
    if name in SAFE_ONLY:
        args = rng.choice(SAFE_ONLY[name])
    else:
        args = " ".join(rng.choice(ATOMS) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4, 6, 12])))
    prefix = str(rng.randrange(1000)) + rng.choice(["", " ", "  "]) if rng.random() < 0.3 else ""
    line = f"{prefix}{name} {args}"
    if rng.random() < 0.05:
        line = line.replace(" ", rng.choice(["\t", "  ", " \r "]))
    if rng.random() < 0.05:
        line += "\r"
    return line


@pytest.mark.parametrize("scripted", [False, True], ids=["rollout-search", "scripted-search"])
def test_random_lines_never_break_the_engine(scripted, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anything a command writes stays here
    engine, out, err = make_engine(override="maxVisits=3,maxTime=0.05,searchRandSeed=1", scripted=scripted)
    rng = random.Random(SEED + scripted)
    lines = [random_line(rng) for _ in range(NUM_LINES_PER_RUN)]
    failure: list = []

    def run():
        try:
            for line in lines:
                engine.handle_line(line + "\n")
            engine.stop_background()
        except BaseException as exc:  # reported below with the line that caused it
            failure.append(exc)

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(TIME_LIMIT_SECONDS)
    assert not worker.is_alive(), "the engine hung"
    assert not failure, f"the engine died: {failure[0]!r}"
    text = out.getvalue()
    assert "internal error" not in text, text[text.find("internal error") - 300: text.find("internal error") + 300]
    before = len(text)
    engine.handle_line("321 name\n")
    assert out.getvalue()[before:].endswith("=321 KataGo\n\n")
