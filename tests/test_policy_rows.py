"""Policy rows shared by the NN cache and the search tree's nodes (katacli._core.policy_rows): a node
evaluated from a network answer holds a reference to the answer's rows instead of a copy of its priors."""
import gc

import numpy as np
import pytest

from katacli._core.game_state import GameState
from katacli._core.policy_rows import policy_block_references, shared_policy
from katacli._core.search_tree import SearchTree
from katacli.nn.batch import NNBatch
from katacli.nn.evaluator import NNEvaluator
from katacli.search import SearchParams
from support.paths import BUNDLED_TINY_MODEL
from test_search_batch_path import _inputs, _positions

SIZE = 9
AREA = SIZE * SIZE
NUM_VALUE_COLUMNS = 9
LEAVES = 4


def _values(n: int) -> np.ndarray:
    values = np.zeros((n, NUM_VALUE_COLUMNS))
    values[:, 0] = values[:, 1] = 0.5      # even win / loss
    values[:, 6:] = -1.0                   # no time-left or short-term error heads
    return values


def _uniform_policy(tree: SearchTree, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Equal priors over each waiting leaf's legal moves, -1 elsewhere, as a network answers."""
    legal = tree.legal[:n].astype(bool)
    rows = np.where(legal, 1.0 / legal.sum(axis=1, keepdims=True), -1.0).astype(np.float32)
    return rows[:, :AREA], rows[:, AREA]


def _tree(state: GameState) -> SearchTree:
    tree = SearchTree(SIZE, SIZE, LEAVES)
    tree.configure(SearchParams())
    tree.set_root(state)
    return tree


def test_shared_views_hold_the_rows_read_only():
    policy = np.arange(2 * AREA, dtype=np.float32).reshape(2, AREA)
    shared, shared_pass = shared_policy(policy, np.array([0.25, 0.5], np.float32))
    np.testing.assert_array_equal(shared, policy)
    np.testing.assert_array_equal(shared_pass, [0.25, 0.5])
    assert not shared.flags.writeable and not shared_pass.flags.writeable
    assert policy_block_references(shared) == policy_block_references(shared_pass[1:]) == 1
    assert policy_block_references(policy) is None


def test_shared_policy_refuses_mismatched_shapes():
    with pytest.raises(ValueError, match="policy_pass"):
        shared_policy(np.zeros((2, AREA), np.float32), np.zeros(3, np.float32))


def test_nodes_share_the_rows_until_the_tree_lets_go():
    tree = _tree(GameState(SIZE))
    n = tree.prepare_root_eval()
    root_policy, root_pass = shared_policy(*_uniform_policy(tree, n))
    tree.apply_batch(_values(n), root_policy, root_pass)
    assert policy_block_references(root_policy) == 2
    tree.begin_search()
    n, _ = tree.collect(LEAVES, LEAVES)
    assert n == LEAVES
    leaf_policy, leaf_pass = shared_policy(*_uniform_policy(tree, n))
    tree.apply_batch(_values(n), leaf_policy, leaf_pass)
    assert policy_block_references(leaf_policy) == 1 + n
    del tree
    gc.collect()
    assert policy_block_references(root_policy) == policy_block_references(leaf_policy) == 1


def test_a_slice_of_the_rows_is_shared_row_for_row():
    tree = _tree(GameState(SIZE))
    n = tree.prepare_root_eval()
    policy, policy_pass = _uniform_policy(tree, n)
    policy = policy.copy()
    policy[0, :5] = [0.5, 0.3, 0.1, 0.05, 0.05]
    policy[0, 5:] = 0.0
    rows, rows_pass = shared_policy(np.vstack([np.full((1, AREA), 0.9, np.float32), policy]),
                                    np.concatenate([[0.9], policy_pass]).astype(np.float32))
    tree.apply_batch(_values(n), rows[1:], rows_pass[1:])
    assert policy_block_references(rows) == 2
    moves, priors = tree.root_edges()
    assert moves[:3] == [(0, 0), (1, 0), (2, 0)]
    np.testing.assert_array_equal(priors[:5], np.array([0.5, 0.3, 0.1, 0.05, 0.05], np.float32))


def test_an_unmasked_prior_on_an_occupied_point_makes_no_edge():
    state = GameState(SIZE)
    state.play((4, 4), 1)
    tree = _tree(state)
    n = tree.prepare_root_eval()
    policy, policy_pass = _uniform_policy(tree, n)
    policy = policy.copy()
    policy[0, 4 * SIZE + 4] = 0.5       # an evaluator that does not mask illegal moves
    rows, rows_pass = shared_policy(policy, policy_pass)
    tree.apply_batch(_values(n), rows, rows_pass)
    moves, _ = tree.root_edges()
    assert (4, 4) not in moves and len(moves) == AREA   # every other point and pass
    assert policy_block_references(rows) == 1            # the node keeps a masked copy of its own


def test_other_arrays_are_copied_into_a_block_of_the_trees_own():
    tree = _tree(GameState(SIZE))
    n = tree.prepare_root_eval()
    policy, policy_pass = _uniform_policy(tree, n)
    tree.apply_batch(_values(n), policy, policy_pass)
    moves, priors = tree.root_edges()
    assert len(moves) == AREA + 1 and np.all(priors == np.float32(1.0 / (AREA + 1)))


def test_the_evaluators_answers_come_as_shared_rows():
    states = _positions(3)
    spatial, global_features, legal, white = _inputs(states)
    batch = NNBatch(spatial, global_features, legal, SIZE, SIZE, white, np.zeros(3), np.zeros(3, bool))
    out = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", seed=11).evaluate_batch(batch)
    assert policy_block_references(out.policy) == 1   # the views (the cache holds them too)
    assert np.may_share_memory(out.policy, out.policy_pass)   # one block: pass priors beside the points
