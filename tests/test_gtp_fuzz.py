"""Fuzzing the command loop: tens of thousands of random and malformed lines must never kill or hang
the engine, and every failure must be a proper ``? message`` (never an internal error)."""
from __future__ import annotations

import random
import threading

import pytest

from support.fuzz import random_gtp_line
from support.gtp import make_engine

NUM_LINES_PER_RUN = 15000  # two runs: 30000 lines in all
TIME_LIMIT_SECONDS = 60.0
SEED = 20240601


@pytest.mark.parametrize("scripted", [False, True], ids=["rollout-search", "scripted-search"])
def test_random_lines_never_break_the_engine(scripted, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # anything a command writes stays here
    engine, out, err = make_engine(override="maxVisits=3,maxTime=0.05,searchRandSeed=1", scripted=scripted)
    rng = random.Random(SEED + scripted)
    lines = [random_gtp_line(rng) for _ in range(NUM_LINES_PER_RUN)]
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
