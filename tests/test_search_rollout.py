"""The network-free engine: random-playout leaf evaluation, and NoGo (legality, rollouts, search, resign)."""
import random

import pytest

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli._core import nogo

from katacli.game.rules import Rules
from katacli.search import RESIGN, SearchParams, Searcher

BLACK, WHITE = 1, 2


def state_from(diagram: str, to_move: int = BLACK, komi: float = 0.5) -> GameState:
    board = GoBoard.from_diagram(diagram)
    return GameState(board=board, rules=Rules.preset("tromp-taylor").with_komi(komi).to_core_tuple(),
                     next_player=to_move)


def quiet_params(**changes) -> SearchParams:
    base = dict(chosen_move_temperature=0.0, chosen_move_temperature_early=0.0, root_symmetry_pruning=False)
    base.update(changes)
    return SearchParams().replace(**base)


# ---- Go with rollouts ---------------------------------------------------------------------
def test_rollouts_find_the_winning_capture():
    # White's two stones have one liberty left, at (2, 3): capturing them wins the board.
    state = state_from("""
        ..X..
        .XOX.
        .XOX.
        .X.X.
        .....
    """, to_move=BLACK, komi=0.5)
    searcher = Searcher(state, quiet_params(), None, seed=7)
    searcher.run(max_visits=1500)
    assert searcher.best_move() == (2, 3)
    assert searcher.analysis().root.winrate < 0.2      # White's view: Black is winning


def test_rollout_search_counts_and_ownership():
    searcher = Searcher(GameState(5), quiet_params(), None, seed=1, keep_ownership=True)
    stats = searcher.run(max_visits=500)
    assert stats.visits == 500 == searcher.root_visits
    assert searcher.tree.check_invariants()
    analysis = searcher.analysis(include_ownership=True)
    assert analysis.ownership is not None and analysis.ownership.shape == (25,)
    assert (abs(analysis.ownership) <= 1.0 + 1e-9).all()


def test_rollouts_respect_max_time():
    searcher = Searcher(GameState(9), quiet_params(), None, seed=1)
    stats = searcher.run(max_time=0.1)
    assert stats.stopped_by == "time"
    assert stats.seconds < 0.5


# ---- NoGo ---------------------------------------------------------------------------------
def test_nogo_legality():
    board = GoBoard.from_diagram("""
        .XO..
        XO...
        .....
        .....
        .....
    """)
    # Black at (0, 0) joins (0, 1), which keeps the liberty (0, 2): legal.
    assert nogo.is_legal(board, (0, 0), BLACK)
    # White at (0, 0) would take the last liberty of Black (1, 0): a capture, illegal.
    assert not nogo.is_legal(board, (0, 0), WHITE)
    # Black at (2, 1) takes White (1, 1)'s... (1, 1) still has (1, 2); legal.
    assert nogo.is_legal(board, (2, 1), BLACK)
    # Black at (3, 0) would capture White (2, 0)? (2, 0) has liberty (2, 1) too, so no capture: legal.
    assert nogo.is_legal(board, (3, 0), BLACK)
    board.play((2, 1), BLACK)
    # Now White (2, 0) has only (3, 0): Black there would capture -> illegal; White there is fine.
    assert not nogo.is_legal(board, (3, 0), BLACK)
    assert nogo.is_legal(board, (3, 0), WHITE)
    assert not nogo.is_legal(board, (1, 0), BLACK)   # occupied


@pytest.mark.parametrize("seed", range(5))
def test_nogo_rollouts_end_with_the_loser_stuck(seed):
    winner, final = nogo.random_game(GoBoard(6, 6), BLACK, seed)
    loser = 3 - winner
    assert nogo.legal_moves(final, loser) == []
    final.check_consistency()
    # Nothing was ever captured.
    assert final.captures == (0, 0)


def _random_nogo_position_with_a_winning_move(size: int, seed: int):
    """Random NoGo play until the player to move has a move that leaves the opponent stuck, and other moves."""
    rng = random.Random(seed)
    board = GoBoard(size, size)
    pla = BLACK
    while True:
        moves = nogo.legal_moves(board, pla)
        if not moves:
            return None
        winning = []
        for m in moves:
            b = board.copy()
            b.play(m, pla)
            if not nogo.legal_moves(b, 3 - pla):
                winning.append(m)
        if winning and len(winning) < len(moves):
            return board, pla, set(winning)
        board.play(rng.choice(moves), pla)
        pla = 3 - pla


def test_nogo_search_plays_a_winning_move():
    found = None
    for seed in range(50):
        found = _random_nogo_position_with_a_winning_move(4, seed)
        if found:
            break
    board, pla, winning = found
    searcher = Searcher(GameState(board=board, next_player=pla), quiet_params(), None, nogo=True, seed=3)
    searcher.run(max_visits=800)
    assert searcher.best_move() in winning


def test_nogo_without_moves_resigns():
    board = GoBoard.from_diagram("""
        .X
        X.
    """)
    # White to move: both empty points are Black eyes (suicide), so White has no legal move.
    assert nogo.legal_moves(board, WHITE) == []
    searcher = Searcher(GameState(board=board, next_player=WHITE), quiet_params(), None, nogo=True, seed=1)
    searcher.run(max_visits=20)
    assert searcher.best_move() == RESIGN
    assert searcher.choose_move() == RESIGN


def test_nogo_search_never_passes_and_plays_legal_moves():
    searcher = Searcher(GameState(5), quiet_params(), None, nogo=True, seed=2)
    for _ in range(6):
        searcher.run(max_visits=150)
        move = searcher.best_move()
        assert move is not None and move != RESIGN
        state = searcher.root_state
        assert nogo.is_legal(state.board(), move, state.next_player)
        searcher.advance(move)


@pytest.mark.subprocess
def test_the_search_imports_without_torch():
    """The rollout engine needs no network: importing the search must not load torch (about 1 s and
    200 MB, which a rollout engine's first genmove used to pay)."""
    import subprocess
    import sys

    code = "import sys, katacli.search.searcher, katacli.gtp.bot; print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
