"""The equal-visit match against KataGo (benchmarks/compare_katago_match.py): its neutral Tromp-Taylor
scorer, openings and summary, a kata-vs-kata match through the real GTP loop, and kata against KataGo
when a KataGo binary is given (KATAGO_BINARY)."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from support.gtp import python_cli
from support.paths import MODELS

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
import compare_katago_match as match  # noqa: E402

KATAGO_MODEL = "g170-b6c96-s175395328-d26788732.bin.gz"


@pytest.mark.parametrize("moves, komi, result, winner", [
    ([], 7.0, "W+7", match.WHITE),                       # empty board: komi only
    (["E5"], 7.0, "B+74", match.BLACK),                  # one stone owns the whole 9x9 board
    (["E5", "pass", "pass"], 81.0, "0", 0),              # 81 - 81: a draw with integer komi
    (["E5", "D5", "pass", "pass"], 0.5, "W+0.5", match.WHITE),  # no territory when both border it
])
def test_tromp_taylor_count(moves, komi, result, winner):
    assert match.score_tromp_taylor(9, komi, moves) == (result, winner)


def test_openings_are_off_the_first_line_and_reproducible():
    import random

    first = match.random_opening(random.Random(3), 9, 4)
    assert first == match.random_opening(random.Random(3), 9, 4) and len(set(first)) == 4
    assert all(v[0] not in "AJ" and v[1:] not in ("1", "9") for v in first)


def test_summary_counts_and_intervals():
    games = [match.Game(1, [], "kata", winner="kata"), match.Game(1, [], "katago", winner="kata"),
             match.Game(2, [], "kata", winner="katago"), match.Game(2, [], "katago", winner="")]
    s = match.summary(games)
    assert (s["kata_wins"], s["kata_losses"], s["draws"]) == (2, 1, 1)
    assert s["kata_score_rate"] == pytest.approx(0.625)
    assert s["rate_95_low"] < 0.625 < s["rate_95_high"] and s["elo"] == pytest.approx(88.7, abs=0.1)
    clean_sweep = match.summary([match.Game(1, [], "kata", winner="kata")] * 10)
    assert clean_sweep["rate_95_high"] == pytest.approx(1.0) and 0.6 < clean_sweep["rate_95_low"] < 0.8  # Wilson, not 1..1


def test_kata_against_itself_through_gtp():
    cli = " ".join(python_cli())
    status = match.main(["--kata-command", f"{cli} gtp -override-config maxVisits=8",
                         "--katago-command", f"{cli} gtp -override-config maxVisits=8",
                         "--pairs", "1", "--size", "5", "--komi", "0.5"])
    assert status == 0


@pytest.mark.skipif(not os.environ.get("KATAGO_BINARY"), reason="set KATAGO_BINARY to a KataGo binary to run")
def test_kata_against_katago(capsys):
    model = MODELS / KATAGO_MODEL
    if not model.exists():
        pytest.skip(f"model {model} not found (the shared/ folder beside the checkout)")
    status = match.main(["--model", str(model), "--visits", "8", "--pairs", "1", "--size", "7",
                         "--kata-command", " ".join(python_cli()) + " gtp -model " + str(model)
                         + " -override-config maxVisits=8,numSearchThreads=1"])
    assert status == 0
    assert "2 games at 8 visits on 7x7" in capsys.readouterr().out
