"""benchmarks/default_net_vs_rollouts.py: recounting an earlier (perhaps interrupted) run from the games
it saved gives kata match's own tallies; bad folders are one clear error."""
from __future__ import annotations

import importlib.util
import sys
from argparse import Namespace
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
ARGS = Namespace(games="4", games_by_board={9: 4}, seconds=0.5, net_leaves=16, rollout_leaves=1)


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("default_net_vs_rollouts",
                                                  REPO / "benchmarks" / "default_net_vs_rollouts.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def save_game(folder: Path, index: int, black: str, white: str, result: str, comment: str = "") -> None:
    folder.mkdir(parents=True, exist_ok=True)
    root_comment = f"C[{comment}]" if comment else ""
    (folder / f"match-{index:06d}.sgf").write_text(
        f"(;FF[4]GM[1]SZ[9]PB[{black}]PW[{white}]RE[{result}]{root_comment};B[ee];W[cc])")


@pytest.mark.parametrize("text, winner", [("B+R", 1), ("W+88.5", 2), ("b+0.5", 1), ("0", 0), ("Void", 0), ("", 0)])
def test_sgf_results_map_to_the_winner(bench, text, winner):
    assert bench.winner_of(text) == winner


def test_saved_games_are_counted_from_the_network_side(bench, tmp_path):
    folder = tmp_path / "9x9"
    save_game(folder, 1, "default-net", "rollouts", "B+R")
    save_game(folder, 2, "rollouts", "default-net", "B+12.5")   # the rollout engine won with black
    save_game(folder, 3, "rollouts", "default-net", "0")
    result = bench.tally_sgfs(folder, 9, ARGS)
    assert (result["games"], result["wins"], result["losses"], result["draws"]) == (3, 1, 1, 1)
    assert result["win_rate"] == 0.5 and result["bot"] == "default-net"
    assert result["interrupted"] and result["from_sgfs"]        # 3 of the 4 planned games
    assert result["seconds_per_move"] == ARGS.seconds   # no times in these files: the argument's


def test_the_time_per_move_comes_from_the_games_themselves(bench, tmp_path):
    # kata match writes each side's search seconds (KataGo's bTimeUsed / wTimeUsed): a recount shows the time
    # the games were played at, not --seconds' default.
    folder = tmp_path / "9x9"
    times = "startTurnIdx=0,initTurnNum=0,gameHash=0123,gtype=normal,bTimeUsed=0.11,wTimeUsed=0.09"
    save_game(folder, 1, "default-net", "rollouts", "B+R", times)
    save_game(folder, 2, "rollouts", "default-net", "W+3.5", times)
    assert bench.tally_sgfs(folder, 9, ARGS)["seconds_per_move"] == 0.1   # 0.4 s over 4 moves


@pytest.mark.parametrize("games, message", [
    ([], "no games in"),
    ([("default-net", "gnugo", "B+R")], "not default-net and rollouts"),
])
def test_a_folder_that_is_not_this_benchmarks_is_refused(bench, tmp_path, games, message):
    folder = tmp_path / "9x9"
    folder.mkdir()
    for i, (black, white, result) in enumerate(games):
        save_game(folder, i, black, white, result)
    with pytest.raises(SystemExit, match=message):
        bench.tally_sgfs(folder, 9, ARGS)


@pytest.mark.parametrize("games, error", [("20,10", "gives 2 numbers for 3 board sizes"), ("20,x,1", "separated by commas"),
                                          ("20,20,1", "at least 2")])
def test_games_per_board_must_fit_the_boards(bench, games, error, capsys):
    with pytest.raises(SystemExit):
        bench.main(["--boards", "9,13,19", "--games", games, "--seconds", "0.5"])
    assert error in capsys.readouterr().err
