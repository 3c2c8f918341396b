"""The array batch path (NNEvaluator.evaluate_batch, SearchTree.apply_batch) answers as the per-request path does."""
import random

import numpy as np
import pytest

from katacli._core.features import encode_v7
from katacli._core.game_state import GameState
from katacli.nn.batch import VALUE_COLUMNS, NNBatch
from katacli.nn.evaluator import NNEvaluator, NNRequest
from katacli.search import SearchParams, Searcher
from support.paths import BUNDLED_TINY_MODEL

SIZE = 9
AREA = SIZE * SIZE
NUM_SPATIAL, NUM_GLOBAL = 22, 19


def _positions(count: int, seed: int = 5) -> list[GameState]:
    rng = random.Random(seed)
    states = []
    for i in range(count):
        state, pla = GameState(SIZE), 1
        for _ in range(4 + 5 * i):
            legal = [p for p in state.legal_moves(pla) if p is not None]
            state.play(rng.choice(legal), pla)
            pla = 3 - pla
        states.append(state)
    return states


def _inputs(states):
    spatial = np.zeros((len(states), NUM_SPATIAL, SIZE, SIZE), np.float32)
    global_features = np.zeros((len(states), NUM_GLOBAL), np.float32)
    legal = np.zeros((len(states), AREA + 1), np.uint8)
    for i, state in enumerate(states):
        encode_v7(state, 0, spatial[i], global_features[i], legal[i])
    white = np.array([state.next_player == 2 for state in states])
    return spatial, global_features, legal.view(bool), white


def _assert_same_output(a, b):
    for name in VALUE_COLUMNS + ("policy_pass", "symmetry", "policy_optimism", "board_x", "board_y"):
        assert getattr(a, name) == getattr(b, name), name
    np.testing.assert_array_equal(a.policy, b.policy)
    assert (a.white_ownership is None) == (b.white_ownership is None)
    if a.white_ownership is not None:
        np.testing.assert_array_equal(a.white_ownership, b.white_ownership)


def _evaluator(**kwargs) -> NNEvaluator:
    return NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", seed=11, **kwargs)


def test_evaluate_batch_equals_evaluate_row_for_row():
    states = _positions(6)
    spatial, global_features, legal, white = _inputs(states)
    optimism = np.array([0.0, 1.0, 0.0, 0.5, 0.0, 0.0])
    wanted = np.array([True, False, True, False, False, True])
    requests = [NNRequest(spatial[i], global_features[i], legal[i], board_x=SIZE, board_y=SIZE,
                          white_to_move=bool(white[i]), policy_optimism=float(optimism[i]),
                          include_ownership=bool(wanted[i])) for i in range(len(states))]
    by_request = _evaluator(cache_size_power_of_two=None).evaluate(requests)
    batch = NNBatch(spatial, global_features, legal, SIZE, SIZE, white, optimism, wanted)
    by_batch = _evaluator(cache_size_power_of_two=None).evaluate_batch(batch)
    for i, expected in enumerate(by_request):
        for column, name in enumerate(VALUE_COLUMNS):
            assert by_batch.values[i, column] == getattr(expected, name)
        np.testing.assert_array_equal(by_batch.policy[i], expected.policy)
        assert by_batch.policy_pass[i] == np.float32(expected.policy_pass)
        assert by_batch.symmetry[i] == expected.symmetry
        assert by_batch.has_ownership(i) == (expected.white_ownership is not None)
        if expected.white_ownership is not None:
            np.testing.assert_array_equal(by_batch.ownership[i], expected.white_ownership)
        _assert_same_output(by_batch.output(i), expected)


def test_cache_rows_are_shared_between_the_two_apis():
    states = _positions(4)
    spatial, global_features, legal, white = _inputs(states)
    keys = np.array([[1000 + i, 7] for i in range(len(states))], np.uint64)
    evaluator = _evaluator()
    batch = NNBatch(spatial, global_features, legal, SIZE, SIZE, white, np.zeros(len(states)),
                    np.zeros(len(states), bool), cache_keys=keys)
    first = evaluator.evaluate_batch(batch)
    evaluated = evaluator.num_positions_evaluated
    again = evaluator.evaluate_batch(batch)   # every row from the cache
    assert evaluator.num_positions_evaluated == evaluated
    np.testing.assert_array_equal(again.policy, first.policy)
    np.testing.assert_array_equal(again.values, first.values)
    request = NNRequest(spatial[2], global_features[2], legal[2], board_x=SIZE, board_y=SIZE,
                        white_to_move=bool(white[2]), cache_key=(7 << 64) | 1002, include_ownership=False)
    _assert_same_output(evaluator.evaluate_one(request), first.output(2))   # a batch's row serves a request
    assert evaluator.num_positions_evaluated == evaluated
    wanting = NNRequest(spatial[2], global_features[2], legal[2], board_x=SIZE, board_y=SIZE,
                        white_to_move=bool(white[2]), cache_key=(7 << 64) | 1002)
    assert evaluator.evaluate_one(wanting).white_ownership is not None   # stored without ownership: evaluated
    assert evaluator.num_positions_evaluated == evaluated + 1


def test_cached_rows_answer_exactly_what_was_evaluated_with_ownership_where_kept():
    """The cache keeps a batch's rows as tuples of its arrays (scalars, shared policy, ownership): every
    field comes back bit for bit, through both APIs, and only rows evaluated with ownership offer it."""
    states = _positions(4, seed=5)
    spatial, global_features, legal, white = _inputs(states)
    keys = np.array([[2000 + i, 9] for i in range(len(states))], np.uint64)
    wanted = np.array([True, False, True, False])
    optimism = np.array([0.0, 0.5, 0.0, 1.0])
    evaluator = _evaluator()
    batch = NNBatch(spatial, global_features, legal, SIZE, SIZE, white, optimism, wanted, cache_keys=keys)
    first = evaluator.evaluate_batch(batch)
    evaluated = evaluator.num_positions_evaluated
    again = evaluator.evaluate_batch(batch)
    assert evaluator.num_positions_evaluated == evaluated
    for name in ("values", "policy", "policy_pass", "symmetry", "policy_optimism", "ownership_rows"):
        np.testing.assert_array_equal(getattr(again, name), getattr(first, name))
    np.testing.assert_array_equal(again.ownership[wanted], first.ownership[wanted])
    for i in range(len(states)):
        request = NNRequest(spatial[i], global_features[i], legal[i], board_x=SIZE, board_y=SIZE,
                            white_to_move=bool(white[i]), policy_optimism=float(optimism[i]),
                            cache_key=(9 << 64) | (2000 + i), include_ownership=bool(wanted[i]))
        _assert_same_output(evaluator.evaluate_one(request), first.output(i))
    assert evaluator.num_positions_evaluated == evaluated


def test_the_nn_cache_gives_the_garbage_collector_nothing_to_walk():
    """A cache of a million positions as objects made every full collection walk all of them."""
    import gc

    evaluator = _evaluator()
    states = _positions(6, seed=8)
    spatial, global_features, legal, white = _inputs(states)
    keys = np.array([[3000 + i, 4] for i in range(len(states))], np.uint64)
    batch = NNBatch(spatial, global_features, legal, SIZE, SIZE, white, np.zeros(len(states)),
                    np.array([True, False] * 3), cache_keys=keys)
    evaluator.evaluate_batch(batch)
    gc.collect()   # a collection untracks the tuples whose items are untracked: the rows, then
    gc.collect()   # the cache's entries holding them
    entries = list(evaluator.cache._slots.values())
    assert len(entries) == len(states)
    assert not any(gc.is_tracked(entry) or gc.is_tracked(entry[2]) for entry in entries)


class _PerRequestOnly:
    """The same network behind the per-request API only (as BatchingEvaluator and test fakes offer)."""

    def __init__(self, evaluator: NNEvaluator):
        self._evaluator = evaluator
        self.evaluate = evaluator.evaluate


@pytest.mark.parametrize("threads", [1, 8])
def test_search_results_are_the_same_on_both_paths(threads):
    # One fixed orientation (5: flipped and transposed) for every position on both paths: with random
    # ones the array path's tree draws its own (test_tree_symmetries.py), the request path the network's.
    state = _positions(1, seed=9)[0]
    params = SearchParams().replace(num_search_threads=threads, max_visits=150)
    results = []
    for evaluator in (_evaluator(default_symmetry=5), _PerRequestOnly(_evaluator(default_symmetry=5))):
        searcher = Searcher(state, params, evaluator, seed=3)
        searcher.run()
        results.append([(c.move, c.visits, c.weight, c.utility, c.score_mean) for c in searcher.child_results()])
    assert results[0] == results[1]
    assert sum(row[1] for row in results[0]) > 0


def _searched_tree_with_waiting_leaves(leaves: int, visits: int, seed: int):
    """(searcher, tree, n): a search of ``visits`` run, then n of ``leaves`` leaves collected and waiting."""
    state = _positions(1, seed=seed)[0]
    searcher = Searcher(state, SearchParams().replace(num_search_threads=leaves, max_visits=visits), _evaluator(),
                        seed=2)
    searcher.run()
    n, _ = searcher.tree.collect(leaves, leaves)
    assert n >= 1
    return searcher, searcher.tree, n


def test_tree_batch_arrays_are_views_of_the_lane_rows_and_flags_read_the_leaves():
    _, tree, n = _searched_tree_with_waiting_leaves(4, 40, seed=4)
    spatial, global_features, legal, keys, white, is_root, mirror_hack, symmetry = tree.batch_arrays(n)
    assert tree.batch_arrays(n)[0] is spatial   # made once per lane and size
    np.testing.assert_array_equal(spatial, tree.spatial[:n])
    assert np.shares_memory(spatial, tree.spatial) and np.shares_memory(legal, tree.legal)
    np.testing.assert_array_equal(legal, tree.legal[:n].view(bool))
    np.testing.assert_array_equal(keys, tree.cache_keys[:n])
    np.testing.assert_array_equal(white, tree.leaf_white[:n].view(bool))
    np.testing.assert_array_equal(symmetry, tree.leaf_symmetry[:n])
    assert tree.batch_flags(n) == (bool(is_root.any()), bool(mirror_hack.any()))
    assert not tree.batch_flags(n)[0]   # the root was evaluated by the first batch
    with pytest.raises(ValueError):
        tree.batch_arrays(tree.max_batch_capacity + 1)
    tree.abandon()


def test_prepared_batch_shares_constant_rows_and_they_cannot_be_written():
    searcher, tree, n = _searched_tree_with_waiting_leaves(2, 30, seed=6)
    batch = searcher._leaf_evaluator.prepare_arrays(tree, n, searcher.params)
    again = searcher._leaf_evaluator.prepare_arrays(tree, n, searcher.params)
    assert batch.policy_optimism is again.policy_optimism   # no root among the leaves: one shared array
    np.testing.assert_array_equal(batch.policy_optimism, np.full(n, searcher.params.policy_optimism))
    assert not batch.include_ownership.any()
    with pytest.raises(ValueError):
        batch.policy_optimism[0] = 5.0
    tree.abandon()


def test_a_plain_batch_is_made_once_per_lane_size_and_settings_and_a_new_tree_starts_over():
    """Batches without the root, the anti-mirror shift or metadata are views of the tree's buffers, refilled
    in place: the same NNBatch (and its row settings) serves every batch of a lane and size; other settings,
    and another tree, get their own."""
    searcher, tree, n = _searched_tree_with_waiting_leaves(2, 30, seed=6)
    leaf_evaluator, params = searcher._leaf_evaluator, searcher.params
    batch = leaf_evaluator.prepare_arrays(tree, n, params)
    assert leaf_evaluator.prepare_arrays(tree, n, params) is batch
    assert batch.row_settings() is batch.row_settings()
    assert np.shares_memory(batch.spatial, tree.spatial) and np.shares_memory(batch.cache_keys, tree.cache_keys)
    other = leaf_evaluator.prepare_arrays(tree, n, params.replace(policy_optimism=0.5))
    assert other is not batch and other.policy_optimism[0] == 0.5
    assert leaf_evaluator.prepare_arrays(tree, n, params) is batch
    tree.abandon()
    searcher2, tree2, n2 = _searched_tree_with_waiting_leaves(2, 30, seed=7)
    fresh = leaf_evaluator.prepare_arrays(tree2, n2, searcher2.params)
    assert fresh is not batch and np.shares_memory(fresh.spatial, tree2.spatial)
    assert len(leaf_evaluator._plain_batches) == 1   # the first tree's batches were let go
    tree2.abandon()


def _child_stats(leaves: int, leaf_by_leaf: bool, **changes):
    state = _positions(1, seed=12)[0]
    params = SearchParams().replace(num_search_threads=leaves, max_visits=300, **changes)
    searcher = Searcher(state, params, _evaluator(), seed=5)
    searcher.tree.leaf_by_leaf_backup = leaf_by_leaf
    searcher.run()
    return [(c.move, c.visits, c.weight, c.utility, c.score_mean) for c in searcher.child_results()]


@pytest.mark.parametrize("leaves, changes", [
    (16, {"subtree_value_bias_factor": 0.0, "use_graph_search": False}),   # a tree: bit for bit
    (1, {}),                                                                # one leaf: always the same
])
def test_refreshing_each_node_once_a_batch_equals_refreshing_after_every_leaf(leaves, changes):
    assert _child_stats(leaves, False, **changes) == _child_stats(leaves, True, **changes)


def test_with_shared_statistics_a_batch_backup_stays_close_to_leaf_by_leaf():
    # The subtree value bias table and graph search share statistics between nodes, so the order of the
    # refreshes shows in the last digits (and may move a visit); the search is the same.
    batch, leaf_by_leaf = _child_stats(16, False), _child_stats(16, True)
    assert sum(c[1] for c in batch) == sum(c[1] for c in leaf_by_leaf)
    assert batch[0][0] == leaf_by_leaf[0][0]
    for a, b in zip(batch, leaf_by_leaf):
        if a[0] == b[0] and a[1] == b[1]:
            assert abs(a[3] - b[3]) < 1e-2
