"""Leaf features filled already in a drawn orientation (SearchTree.set_leaf_symmetries): the search tree
writes each point's features where the symmetry puts them, so the evaluator gathers nothing.

Checked: the features filled through a position map equal the real board's features transformed by
apply_symmetry (every symmetry, square and rectangular boards, with ko, ladders and history); the
evaluator answers a row given in its orientation exactly as it answers the real-board row evaluated in
that orientation, alone or padded among other board sizes (a GPU's shared batches); and a search whose
tree draws orientations (through the network or a BatchingEvaluator in front of it) leaves a consistent
tree, draws all eight, and is switched off where batches may go as requests (human-SL net, root symmetry
averaging) or the orientation is fixed.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from katacli._core.features import encode_v7
from katacli._core.game_state import GameState
from katacli.nn.batch import NNBatch
from katacli.nn.evaluator import NNEvaluator
from katacli.nn.symmetry import apply_symmetry, symmetry_pos_maps
from katacli.search import Searcher, SearchParams
from katacli.search.evaluation import NetworkLeafEvaluator

from support.paths import BUNDLED_TINY_MODEL


def _random_state(rng: random.Random, x_size: int, y_size: int, moves: int) -> GameState:
    state = GameState(x_size, y_size)
    for _ in range(moves):
        legal = [(x, y) for x in range(x_size) for y in range(y_size) if state.is_legal((x, y), state.next_player)]
        if not legal:
            break
        state.play(rng.choice(legal), state.next_player)
    return state


def _features(state: GameState, pos_map=None) -> np.ndarray:
    spatial = np.zeros((22, state.y_size, state.x_size), np.float32)
    encode_v7(state, spatial=spatial, global_=np.zeros(19, np.float32), pos_map=pos_map)
    return spatial


@pytest.mark.parametrize("x_size, y_size, moves", [(9, 9, 30), (19, 19, 120), (13, 9, 40), (7, 11, 25), (5, 5, 12)])
def test_features_filled_through_a_position_map_equal_the_transformed_features(x_size, y_size, moves):
    rng = random.Random(x_size * 100 + y_size)
    maps = symmetry_pos_maps(y_size, x_size)
    for _ in range(3):
        state = _random_state(rng, x_size, y_size, moves)
        canonical = _features(state)
        for s in range(8):
            assert np.array_equal(_features(state, maps[s]), np.ascontiguousarray(apply_symmetry(canonical, s))), s


def test_a_bad_position_map_is_refused():
    state = GameState(9, 9)
    with pytest.raises(ValueError, match="pos_map"):
        _features(state, np.zeros(80, np.int32))


@pytest.fixture(scope="module")
def tiny_net():
    return NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None, seed=5)


def test_the_evaluator_answers_a_row_given_in_its_orientation_as_the_real_board_row(tiny_net):
    rng = random.Random(7)
    states = [_random_state(rng, 9, 9, 20 + 5 * i) for i in range(8)]
    canonical = np.stack([_features(s) for s in states])
    applied = np.arange(8, dtype=np.int8)
    transformed = np.stack([np.ascontiguousarray(apply_symmetry(canonical[i], int(applied[i]))) for i in range(8)])

    def batch(spatial, applied_symmetries=None, symmetry=None):
        n = len(spatial)
        return NNBatch(spatial=spatial, global_features=np.zeros((n, 19), np.float32),
                       legal_mask=np.ones((n, 82), bool), board_x=9, board_y=9, white_to_move=np.zeros(n, bool),
                       policy_optimism=np.zeros(n), include_ownership=np.ones(n, bool), symmetry=symmetry,
                       applied_symmetries=applied_symmetries)

    for i in range(8):   # one row per call both ways: the same network arithmetic, so equal to the bit
        got = tiny_net.evaluate_batch(batch(transformed[i:i + 1], applied[i:i + 1]))
        want = tiny_net.evaluate_batch(batch(canonical[i:i + 1], symmetry=i))
        assert got.symmetry[0] == i
        np.testing.assert_array_equal(got.policy[0], want.policy[0])
        np.testing.assert_array_equal(got.values[0], want.values[0])
        np.testing.assert_array_equal(got.ownership[0], want.ownership[0])
    whole = tiny_net.evaluate_batch(batch(transformed, applied))   # and as one batch, to rounding
    assert list(whole.symmetry) == list(range(8))
    # A row marked -1 is in the real board's orientation: the evaluator picks and applies one itself.
    mixed = tiny_net.evaluate_batch(batch(canonical[1:2], np.array([-1], np.int8)))
    want = tiny_net.evaluate_batch(batch(canonical[1:2], symmetry=int(mixed.symmetry[0])))
    np.testing.assert_array_equal(mixed.policy[0], want.policy[0])


def _opening() -> GameState:
    state = GameState(9, 9)
    for move in [(2, 2), (6, 6), (2, 6), (6, 2)]:
        state.play(move, state.next_player)
    return state


def test_a_search_whose_tree_draws_orientations(tiny_net):
    params = SearchParams.defaults("gtp").replace(num_search_threads=16, max_visits=600)
    searcher = Searcher(_opening(), params, tiny_net, seed=3)
    assert searcher.tree.draws_leaf_symmetries
    drawn = []
    original = NetworkLeafEvaluator.prepare_arrays

    def spy(self, tree, n, p):
        batch = original(self, tree, n, p)
        drawn.extend(s for s, root in zip(batch.applied_symmetries.tolist(), tree.leaf_is_root[:n]) if not root)
        return batch

    NetworkLeafEvaluator.prepare_arrays = spy
    try:
        stats = searcher.run()
    finally:
        NetworkLeafEvaluator.prepare_arrays = original
    assert stats.visits == 600
    assert searcher.tree.total_virtual_losses() == 0 and searcher.tree.check_invariants()
    assert set(drawn) == set(range(8))      # every orientation, none left canonical below the root


def test_trees_do_not_draw_orientations_where_rows_may_go_as_requests_or_the_orientation_is_fixed(tiny_net):
    base = SearchParams.defaults("gtp").replace(num_search_threads=8)
    assert not Searcher(_opening(), base.replace(root_num_symmetries_to_sample=4), tiny_net).tree.draws_leaf_symmetries
    fixed = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", default_symmetry=0)
    assert not Searcher(_opening(), base, fixed).tree.draws_leaf_symmetries      # nnRandomize = false
    assert not Searcher(_opening(), base, tiny_net, human_evaluator=tiny_net).tree.draws_leaf_symmetries
    searcher = Searcher(_opening(), base, tiny_net)
    assert searcher.tree.draws_leaf_symmetries
    searcher.set_params(base.replace(root_num_symmetries_to_sample=2))           # turned off with the setting
    assert not searcher.tree.draws_leaf_symmetries


@pytest.mark.parametrize("symmetry", [3, 6])
def test_rows_in_an_orientation_padded_with_other_board_sizes_answer_as_real_board_rows(tiny_net, symmetry):
    """A GPU's BatchingEvaluator pads boards of several sizes into one call (katacli.nn.mixed_sizes)."""
    from katacli.nn.mixed_sizes import evaluate_mixed

    rng = random.Random(symmetry)
    shapes = [(9, 9), (7, 7), (9, 7)]
    canonical, applied = [], []
    for x_size, y_size in shapes:
        states = [_random_state(rng, x_size, y_size, 10) for _ in range(2)]
        spatial = np.stack([_features(s) for s in states])
        n, area = len(states), x_size * y_size

        def batch(rows, **kw):
            return NNBatch(spatial=rows, global_features=np.zeros((n, 19), np.float32),
                           legal_mask=np.ones((n, area + 1), bool), board_x=x_size, board_y=y_size,
                           white_to_move=np.zeros(n, bool), policy_optimism=np.zeros(n),
                           include_ownership=np.ones(n, bool), **kw)

        canonical.append(batch(spatial, symmetry=symmetry))
        transformed = np.stack([np.ascontiguousarray(apply_symmetry(row, symmetry)) for row in spatial])
        applied.append(batch(transformed, applied_symmetries=np.full(n, symmetry, np.int8)))
    want = evaluate_mixed(tiny_net, canonical, (9, 9))
    got = evaluate_mixed(tiny_net, applied, (9, 9))
    for w, g in zip(want, got):
        np.testing.assert_array_equal(g.policy, w.policy)
        np.testing.assert_array_equal(g.values, w.values)
        np.testing.assert_array_equal(g.ownership, w.ownership)


def test_searches_sharing_a_batching_evaluator_draw_orientations_too(tiny_net):
    from katacli.nn.batching import BatchingEvaluator

    with BatchingEvaluator(tiny_net, max_batch_size=64) as shared:
        searcher = Searcher(_opening(), SearchParams.defaults("analysis").replace(num_search_threads=4,
                                                                                  max_visits=200), shared, seed=2)
        assert searcher.tree.draws_leaf_symmetries
        assert searcher.run().visits == 200
        assert searcher.tree.total_virtual_losses() == 0 and searcher.tree.check_invariants()
