"""examples/analyze_sgf_blunders.py: the query it builds, the mistake arithmetic, and one real run."""
from __future__ import annotations

import subprocess
import sys

import pytest

from support.analysis import REPO
from support.paths import import_script

EXAMPLE = REPO / "examples" / "analyze_sgf_blunders.py"
SGF = "(;GM[1]FF[4]SZ[7]KM[7.5]RU[Chinese]AB[aa]AW[gg];B[dd];W[cc];B[ce];W[ec];B[pass])"


def load_example():
    return import_script("examples/analyze_sgf_blunders.py")


def test_query_covers_every_turn_with_setup_stones_and_rules(tmp_path):
    example = load_example()
    path = tmp_path / "game.sgf"
    path.write_text(SGF.replace("B[pass]", "B[]"))
    query, moves = example.build_query(path, 50)
    assert moves == [["B", "D4"], ["W", "C5"], ["B", "C3"], ["W", "E5"], ["B", "pass"]]
    assert query["analyzeTurns"] == [0, 1, 2, 3, 4, 5] and query["maxVisits"] == 50
    assert sorted(query["initialStones"]) == [["B", "A7"], ["W", "G1"]]
    assert query["rules"]["scoring"] == "AREA" and query["komi"] == 7.5 and query["boardXSize"] == 7


def test_mistakes_are_losses_for_the_player_who_moved():
    example = load_example()
    values = {0: example.TurnValues(0.5, 0.0, "D4"), 1: example.TurnValues(0.3, -4.0, "C5"),
              2: example.TurnValues(0.6, 2.0, "C3")}
    mistakes = example.find_mistakes([["B", "A1"], ["W", "B2"]], values)
    assert [(m.move_number, round(m.winrate_loss, 6), m.score_loss, m.best_move) for m in mistakes] == [
        (2, 0.3, 6.0, "C5"), (1, 0.2, 4.0, "D4")]


def test_a_move_the_search_looked_at_is_judged_against_the_best_one_of_the_same_search():
    # The engine's own choice loses nothing (the root's change over it is the noise between two searches,
    # which listed such moves as mistakes); another move loses the gap between the two in that search.
    example = load_example()
    values = {0: example.TurnValues(0.5, 0.0, "D4", {"D4": (0.55, 1.0), "C3": (0.45, -2.0)}),
              1: example.TurnValues(0.4, -1.0, "C5", {"C5": (0.4, -1.0), "E5": (0.47, 0.5)}),
              2: example.TurnValues(0.45, 0.5, "C3", {})}
    mistakes = example.find_mistakes([["B", "D4"], ["W", "E5"]], values)
    assert [(m.move_number, round(m.winrate_loss, 6), round(m.score_loss, 6)) for m in mistakes] == [
        (2, 0.07, 1.5), (1, 0.0, 0.0)]


@pytest.mark.subprocess
def test_example_runs_against_the_rollout_engine(tmp_path):
    path = tmp_path / "game.sgf"
    path.write_text(SGF.replace("B[pass]", "B[]"))
    result = subprocess.run([sys.executable, str(EXAMPLE), str(path), "--model", "rollouts", "--visits", "40", "--top", "3"], cwd=REPO,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.strip().splitlines()
    assert lines[0].split()[:3] == ["move", "player", "played"] and len(lines) == 4
