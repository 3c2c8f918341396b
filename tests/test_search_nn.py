"""Search with the real g170 b6c96 network on 9x9: tactics found at modest visits, reuse, reporting.

Skipped cleanly when the shared model file is absent.
"""

import numpy as np
import pytest
import torch

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState

from katacli.game.rules import Rules
from katacli.search import SearchParams, Searcher

from support.paths import G170_B6, model_path

MODEL = model_path(G170_B6, module=True)
BLACK, WHITE = 1, 2
VISITS = 100

pytestmark = pytest.mark.needs_shared


@pytest.fixture(scope="module")
def evaluator():
    from katacli.nn.evaluator import NNEvaluator
    # One intra-op thread: small 9x9 batches gain little from more, and they suffer badly on a busy machine.
    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield NNEvaluator.from_file(MODEL, seed=0)
    finally:
        torch.set_num_threads(old_threads)


def state_from(diagram: str, to_move: int, komi: float) -> GameState:
    return GameState(board=GoBoard.from_diagram(diagram), rules=Rules.preset("tromp-taylor").with_komi(komi).to_core_tuple(),
                     next_player=to_move)


def params(**changes) -> SearchParams:
    base = dict(num_search_threads=4, chosen_move_temperature=0.0, chosen_move_temperature_early=0.0)
    base.update(changes)
    return SearchParams().replace(**base)


POSITIONS = {
    # Four white stones with one liberty at (3, 5).
    "capture": ("""
        .........
        .........
        ..XXX....
        .XOOOX...
        ..XOX....
        .........
        ......O..
        .....O...
        .........
    """, 7.5, (3, 5)),
    # Four black stones in atari: extend at (3, 5) to live.
    "escape": ("""
        .........
        .........
        ..OOO....
        .OXXXO...
        ..OXO....
        .........
        ......X..
        .....X...
        .........
    """, 7.5, (3, 5)),
    # White's two stones have liberties (4, 5) and (5, 3); atari from below starts a working ladder.
    "ladder": ("""
        .........
        .........
        ....X....
        ...XO....
        ...XOX...
        .........
        .........
        .........
        .........
    """, 25.5, (4, 5)),
}


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_finds_the_tactical_move(evaluator, name):
    diagram, komi, answer = POSITIONS[name]
    searcher = Searcher(state_from(diagram, BLACK, komi), params(), evaluator, seed=1)
    stats = searcher.run(max_visits=VISITS)
    assert stats.visits == VISITS
    assert searcher.best_move() == answer
    assert searcher.tree.total_virtual_losses() == 0


def test_analysis_reports_network_values_and_reuses_the_tree(evaluator):
    searcher = Searcher(GameState(9), params(num_search_threads=2), evaluator, seed=1, keep_ownership=True)
    searcher.run(max_visits=60)
    analysis = searcher.analysis(include_ownership=True, include_policy=True, max_pv_len=5)
    root = analysis.root
    assert root.visits == 60 and root.current_player == "B"
    assert 0.0 < root.raw_winrate < 1.0 and 0.0 < root.winrate < 1.0
    assert root.raw_score_selfplay_stdev > 0
    assert analysis.policy.shape == (82,) and abs(analysis.policy[analysis.policy >= 0].sum() - 1.0) < 1e-3
    assert analysis.ownership.shape == (81,) and np.all(np.abs(analysis.ownership) <= 1.0)
    assert all(len(m.pv) >= 1 and m.pv[0] == m.move for m in analysis.moves)
    best = searcher.best_move()
    kept = searcher.advance(best)
    assert kept and searcher.root_visits > 0
    # The new root is re-evaluated with root settings (policy optimism differs) without losing visits.
    before = searcher.root_visits
    searcher.run(max_visits=before + 20)
    assert searcher.root_visits == before + 20
    # Its children kept their slots across the new policy row; the priors kept in them follow the row.
    assert searcher.tree.check_invariants()
