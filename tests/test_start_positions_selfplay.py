"""Self-play games from start and hint positions: the game setup, the hint's search, the rows and a real
`kata selfplay` run whose games begin at the given positions."""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from katacli._core import search_results
from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli.data.schema import GT, MODE_CLEANUP, MODE_HINTFORK, MODE_HINTPOS, MODE_SGFPOS
from katacli.data.files import TrainingFile, list_training_files
from katacli.game.coords import BLACK, WHITE
from katacli.game.sgf import read_sgf
from katacli.search import Searcher
from katacli.search.params import SearchParams
from katacli.selfplay import game as game_module
from katacli.selfplay.game import GameRunner
from katacli.selfplay.game_init import ForkPosition, GameInitializer
from katacli.selfplay.output import game_sgf
from katacli.selfplay.rows import game_rows
from katacli.selfplay.searching import RawNetSearcher
from katacli.selfplay.start_positions import PositionSample

from support.selfplay import (
    EXAMPLE_CONFIG,
    TINY_OVERRIDES,
    play_games,
    random_handle,
    subprocess_env,
    tiny_settings,
)

TINY_NET = Path(__file__).resolve().parents[1] / "katacli" / "selfcheck" / "data" / "tiny-b2c16.bin.gz"
CLI = [sys.executable, "-m", "katacli.cli", "selfplay"]
# Every turn a full search and a row; short games.
ALL_ROWS = "cheapSearchProb=0,policySurpriseDataWeight=0,valueSurpriseDataWeight=0,maxMovesPerGame=30"
# Setup stones at the root: every position from it has them (and the empty board is not one of them).
START_SGF = "(;SZ[7]AB[aa]AW[gg];B[dd];W[cc](;B[dc];W[cd])(;B[ee]))"
E = 0


def hint_sample(**changes) -> PositionSample:
    base = dict(x_size=7, y_size=7, stones=tuple(tuple(E for _ in range(7)) for _ in range(7)), next_player=BLACK,
                moves=((BLACK, (3, 3)), (WHITE, (2, 2))), initial_turn_number=10, has_hint=True, hint_move=(0, 6),
                training_weight=0.5)
    base.update(changes)
    return PositionSample(**base)


def write_start_dirs(tmp_path: Path) -> tuple[Path, Path]:
    sgfs, hints = tmp_path / "sgfs", tmp_path / "hints"
    sgfs.mkdir()
    hints.mkdir()
    (sgfs / "start.sgf").write_text(START_SGF)
    (hints / "one.hintposes.txt").write_text(hint_sample().to_json_line() + "\n")
    return sgfs, hints


def test_initializer_starts_from_a_drawn_sample(tmp_path):
    sgfs, _ = write_start_dirs(tmp_path)
    settings = tiny_settings(f"startPosesFromSgfDir={sgfs},startPosesProb=1.0")
    init = GameInitializer(settings.game, settings.play, settings.search, positions=settings.positions)
    seen = set()
    rng = random.Random(3)
    for _ in range(60):
        start = init.create(rng)
        assert start.is_sgf_pos and not start.is_hint_pos and start.allow_policy_init
        assert start.komi.extra_black == 0 and start.komi.komi_mean == 7.0  # komiMean, no handicap
        seen.add(tuple(start.state.moves))
    # Every unique position of the SGF (root, after dd, cc, dc, cd, ee) shows up.
    assert len(seen) == 6 and ((BLACK, (3, 3)), (WHITE, (2, 2)), (BLACK, (4, 4))) in seen


def test_hint_position_game_studies_the_hint_and_records_its_weight(tmp_path):
    _, hints = write_start_dirs(tmp_path)
    settings = tiny_settings(f"hintPosesDir={hints},hintPosesProb=1.0,{ALL_ROWS}")
    init = GameInitializer(settings.game, settings.play, settings.search, positions=settings.positions)
    start = init.create(random.Random(1))
    assert start.is_hint_pos and start.has_hint and start.hint_move == (0, 6) and not start.allow_policy_init
    assert start.hint_turn == 2 and start.hint_applies(start.state)
    game = play_games(settings, 1, search="mcts", handle=random_handle())[0]
    assert game.mode == MODE_HINTPOS and game.training_weight == 0.5 and game.initial_turn_number == 10
    assert game.start_state.moves[:2] == [(BLACK, (3, 3)), (WHITE, (2, 2))]
    # The hint turn's values are replaced by the next turn's (the forced visits skew them).
    assert game.turns[0].targets.value == game.turns[1].targets.value
    assert game.turns[0].targets.value is not game.turns[1].targets.value
    g = game_rows(game, pos_len=9, rng=random.Random(2))["globalTargetsNC"]
    assert len(g) > 0 and (g[:, GT.GAME_MODE] == MODE_HINTPOS).all() and (g[:, GT.INITIAL_TURN_NUMBER] == 10).all()
    assert (g[:, GT.ROW_WEIGHT] == 0.5).all()


def test_hint_forks_may_jump_into_the_encore_but_hint_positions_never_do(tmp_path, monkeypatch):
    # Cleanup training (territory scoring) skips hint positions only. A hint fork is a fork, as in KataGo
    # (isHintPos false), so it may begin in the encore: its record then starts there, the hint's moves
    # being setup stones.
    monkeypatch.setattr(game_module, "CLEANUP_TRAINING_PROB", 1.0)
    _, hints = write_start_dirs(tmp_path)
    settings = tiny_settings(f"hintPosesDir={hints},hintPosesProb=1.0,scoringRules=TERRITORY,hasButtons=false,"
                             f"{ALL_ROWS},earlyForkGameProb=0,forkGameProb=0,sekiForkHackProb=0")

    def runner() -> GameRunner:
        return GameRunner(settings, lambda model, rng: RawNetSearcher(model.net, rng))

    hinted = play_games(settings, 1, seed=1, runner=runner())[0]
    assert hinted.mode == MODE_HINTPOS and hinted.initial_encore_phase == 0
    assert read_sgf(game_sgf(hinted)).moves[:2] == [(BLACK, (3, 3)), (WHITE, (2, 2))]

    state = hinted.start_state.copy()
    state.play((0, 6), BLACK)
    fork_runner = runner()
    fork_runner.fork_store.add(ForkPosition(state, is_seki_fork=False, training_weight=0.5, is_hint_fork=True,
                                            initial_turn_number=10))
    forked = play_games(settings, 1, seed=1, runner=fork_runner)[0]
    assert forked.mode == MODE_CLEANUP and forked.initial_encore_phase in (1, 2) and forked.start_turn_idx == 0
    assert forked.training_weight == 0.5 and forked.initial_turn_number == 10
    text = game_sgf(forked)
    record = read_sgf(text)
    assert "gtype=cleanuptraining" in text and (BLACK, (0, 6)) in record.setup
    assert record.moves == [(t.player, t.move) for t in forked.turns]

def test_root_hint_gets_searched_almost_as_much_as_the_best_move():
    # White's big group can be captured at G5; the hinted G1 is a wasted corner move.
    board = GoBoard.from_diagram(".......\n.XXXXX.\nXOOOOO.\n.XXXXX.\n.......\n.......\n.......")
    state = GameState(7, 7, next_player=BLACK, board=board)
    params = SearchParams().replace(root_noise_enabled=False)
    hint = (6, 6)

    def visits(hinted: bool) -> tuple[int, int]:
        searcher = Searcher(state, params, None, seed=1)  # random playouts: no network needed
        if hinted:
            searcher.set_root_hint(hint)
        searcher.run(max_visits=400)
        by_move = {d["move"]: d["visits"] for d in search_results.analysis_data(searcher.tree, 1, 0)}
        return by_move.get(hint, 0), max(by_move.values())

    plain, plain_most = visits(hinted=False)
    hinted, most = visits(hinted=True)
    assert plain < 0.5 * plain_most
    # KataGo keeps the hinted move's weight within 80% of the most searched move's.
    assert hinted >= 0.7 * most


# ---------------------------------------------------------------------------- the command

def run_cli(*args):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=300, env=subprocess_env())


def models_dir(tmp_path: Path) -> Path:
    models = tmp_path / "models"
    models.mkdir()
    (models / TINY_NET.name).write_bytes(TINY_NET.read_bytes())
    return models


def read_output(out: Path) -> tuple[np.ndarray, list[str]]:
    blocks = []
    for path in list_training_files(out / "tdata"):
        with TrainingFile(path) as f:
            blocks.append(f.read()["globalTargetsNC"])
    sgfs = [line for p in (out / "sgfs").glob("*.sgfs") for line in p.read_text().splitlines()]
    return np.concatenate(blocks), sgfs


@pytest.mark.parametrize("kind", ["start", "hint"])
def test_selfplay_games_start_from_the_given_positions(tmp_path, kind):
    sgfs, hints = write_start_dirs(tmp_path)
    out = tmp_path / "out"
    # Area scoring only: under territory scoring 4% of the games jump ahead into the encore (cleanup training)
    # and record only that part. Start positions may; hint positions never do, but the hint forks made from
    # them may (see test_hint_forks_may_jump_into_the_encore_but_hint_positions_never_do).
    keys = (f"startPosesFromSgfDir={sgfs},startPosesProb=1.0" if kind == "start"
            else f"hintPosesDir={hints},hintPosesProb=1.0") + ",scoringRules=AREA"
    result = run_cli("-models-dir", str(models_dir(tmp_path)), "-output-dir", str(out), "-config", str(EXAMPLE_CONFIG),
                     "-override-config", TINY_OVERRIDES, "-override-config", ALL_ROWS + ",maxVisits=8",
                     # No random forks: a forked game would start from an earlier game, not from the positions.
                     "-override-config", keys + ",initGamesWithPolicy=false,numSelfplayProcesses=1,"
                     "earlyForkGameProb=0,forkGameProb=0,sekiForkHackProb=0",
                     "-max-games-total", "3", "-quiet")
    assert result.returncode == 0, result.stderr
    rows, games = read_output(out)
    assert len(games) == 3
    if kind == "start":
        starts = {(), ((BLACK, (3, 3)),), ((BLACK, (3, 3)), (WHITE, (2, 2))),
                  ((BLACK, (3, 3)), (WHITE, (2, 2)), (BLACK, (3, 2))),
                  ((BLACK, (3, 3)), (WHITE, (2, 2)), (BLACK, (3, 2)), (WHITE, (2, 3))),
                  ((BLACK, (3, 3)), (WHITE, (2, 2)), (BLACK, (4, 4)))}
        for text in games:
            record = read_sgf(text)
            assert {(BLACK, (0, 0)), (WHITE, (6, 6))} <= set(record.setup) and "gtype=sgfpos" in text
            assert any(tuple(record.moves[:len(s)]) == s for s in starts), text
        assert (rows[:, GT.GAME_MODE] == MODE_SGFPOS).all()
    else:
        for text in games:
            moves = read_sgf(text).moves
            assert moves[:2] == [(BLACK, (3, 3)), (WHITE, (2, 2))]
            # A game that did not play the hint is forked: a later game plays the hint there first.
            assert "gtype=hintpos" in text or ("gtype=hintfork" in text and moves[2] == (BLACK, (0, 6)))
        assert set(rows[:, GT.GAME_MODE]) <= {MODE_HINTPOS, MODE_HINTFORK} and MODE_HINTPOS in rows[:, GT.GAME_MODE]
        assert (rows[:, GT.ROW_WEIGHT] == 0.5).all() and (rows[:, GT.INITIAL_TURN_NUMBER] == 10).all()
        assert all("initTurnNum=10" in text for text in games)


@pytest.mark.parametrize("keys, message", [
    ("startPosesFromSgfDir=/no/such/dir,startPosesProb=1", "startPosesFromSgfDir: /no/such/dir does not exist"),
    ("startPosesProb=0.5", "startPosesProb = 0.5 needs startPosesFromSgfDir"),
])
def test_bad_start_position_settings_stop_at_startup(tmp_path, keys, message):
    result = run_cli("-models-dir", str(models_dir(tmp_path)), "-output-dir", str(tmp_path / "out"),
                     "-config", str(EXAMPLE_CONFIG), "-override-config", TINY_OVERRIDES, "-override-config", keys,
                     "-max-games-total", "1", "-quiet")
    assert result.returncode != 0
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(errors) == 1 and message in errors[0], result.stderr
