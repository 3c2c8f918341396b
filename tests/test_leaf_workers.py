"""Helper threads that fill leaf inputs (numLeafFeatureThreads) change nothing but the speed.

The tree is driven batch by batch with a deterministic fake network whose answers depend on each leaf's
rows (features, cache key), so a row filled differently, late or into the wrong slot changes the tree
that grows: the rows and the trees are compared bit for bit with and without helpers.
"""
import os
import random
import threading

import numpy as np
import pytest

from katacli._core.game_state import GameState
from katacli._core.leaf_workers import LeafHelpers
from katacli._core.search_tree import SearchTree
from katacli.config import Config, ConfigError
from katacli.nn.evaluator import NNEvaluator
from katacli.nn.symmetry import symmetry_pos_maps
from katacli.search import SearchParams, Searcher
from katacli.search import leaf_threads as leaf_threads_module
from katacli.search.leaf_threads import leaf_feature_threads
from support.paths import BUNDLED_TINY_MODEL

BLACK, WHITE = 1, 2


def _position(size: int, moves: int, seed: int) -> GameState:
    rng = random.Random(seed)
    state, pla = GameState(size), BLACK
    for _ in range(moves):
        legal = [p for p in state.legal_moves(pla) if p is not None]
        if not legal:
            break
        state.play(rng.choice(legal), pla)
        pla = 3 - pla
    return state


def _answers(tree: SearchTree, n: int):
    """A fake network's answers for the n waiting leaves, computed from their rows only."""
    keys = tree.cache_keys[:n]
    spatial = tree.spatial[:n].reshape(n, -1)
    legal = tree.legal[:n].astype(np.float32)
    mix = (keys[:, 0] % np.uint64(1009)).astype(np.float64) / 1009.0
    stones = spatial[:, 1 * tree.x_size * tree.y_size:3 * tree.x_size * tree.y_size].sum(axis=1)
    win = 0.2 + 0.6 * ((mix + 0.01 * stones) % 1.0)
    values = np.zeros((n, 9), np.float64)
    values[:, 0], values[:, 1] = win, 1.0 - win
    values[:, 3] = 10.0 * (win - 0.5)
    values[:, 4] = values[:, 3] ** 2 + 4.0
    values[:, 5] = values[:, 3]
    values[:, 6:] = -1.0
    weights = legal * (1.0 + np.arange(legal.shape[1], dtype=np.float32)[None, :] % 7 + mix[:, None])
    policy = weights / weights.sum(axis=1, keepdims=True)
    policy[legal == 0] = -1.0
    return values, np.ascontiguousarray(policy[:, :-1], np.float32), np.ascontiguousarray(policy[:, -1], np.float32)


def _make_tree(state: GameState, helpers, batch: int = 16, graph: bool = False, symmetries: bool = True):
    """A tree for state with `helpers` threads of its own, or sharing a LeafHelpers."""
    params = SearchParams().replace(num_search_threads=batch, use_graph_search=graph, root_symmetry_pruning=False,
                                    chosen_move_temperature=0.0, chosen_move_temperature_early=0.0)
    tree = SearchTree(state.x_size, state.y_size, batch)
    tree.configure(params)
    tree.seed(7)
    if symmetries:
        tree.set_leaf_symmetries(symmetry_pos_maps(state.y_size, state.x_size), 3)
    if isinstance(helpers, LeafHelpers):
        tree.set_leaf_helpers(helpers)
        assert tree.leaf_helpers is helpers
    else:
        assert tree.set_leaf_threads(helpers) == helpers
    tree.set_root(state)
    return tree


def _search(tree: SearchTree, visits: int, rows: list) -> None:
    """One search as the Searcher runs it (root set-up, then batches), every batch's rows kept."""
    for _ in _stepped_search(tree, visits, rows):
        pass


def _grow(state: GameState, helpers: int, batch: int = 16, visits: int = 600, graph: bool = False,
          symmetries: bool = True, advance_after: int = 0, tree: SearchTree = None):
    """Search state with a fake network (then, with advance_after, the position after the best move);
    returns every batch's rows, the node count, root visits and the root's moves and priors."""
    tree = tree or _make_tree(state, helpers, batch, graph, symmetries)
    rows = []
    _search(tree, visits, rows)
    if advance_after:
        moves, _ = tree.root_edges()
        tree.advance(moves[0], tree.root_pla)
        _search(tree, tree.root_visits + advance_after, rows)
    moves, priors = tree.root_edges()
    _grow.by_helpers = tree.leaves_filled_by_helpers
    return rows, tree.node_count(), tree.root_visits, moves, priors


def _assert_same(a, b):
    rows_a, *rest_a = a
    rows_b, *rest_b = b
    assert len(rows_a) == len(rows_b)
    for batch_a, batch_b in zip(rows_a, rows_b):
        for x, y in zip(batch_a, batch_b):
            np.testing.assert_array_equal(x, y)
    assert rest_a[:3] == rest_b[:3]
    np.testing.assert_array_equal(rest_a[3], rest_b[3])


@pytest.mark.parametrize("size,moves", [(19, 0), (19, 60), (19, 160), (9, 30), (13, 70)])
def test_helpers_fill_the_same_rows_and_grow_the_same_tree(size, moves):
    state = _position(size, moves, seed=size * 100 + moves)
    serial = _grow(state, 0)
    assert len(serial[0]) > 10 and serial[2] >= 600
    for helpers in (1, 3):
        _assert_same(serial, _grow(state, helpers))


def test_the_helpers_do_fill_leaves():
    """The comparisons above mean something only if helpers took leaves: they do, on any machine with a
    second core free now and then (a few searches in case the scheduler starves them in one)."""
    state = _position(19, 60, seed=1)
    filled = 0
    for _ in range(10):
        _grow(state, 1)
        filled += _grow.by_helpers
        if filled > 0:
            break
    assert filled > 0
    _grow(state, 0)
    assert _grow.by_helpers == 0


def test_same_tree_in_graph_search_with_canonical_rows_and_after_the_root_moves():
    state = _position(19, 40, seed=3)
    _assert_same(_grow(state, 0, graph=True), _grow(state, 2, graph=True))
    _assert_same(_grow(state, 0, symmetries=False, batch=5), _grow(state, 1, symmetries=False, batch=5))
    # advance() changes the root's history: the helpers' per-slot copies must follow it.
    _assert_same(_grow(state, 0, advance_after=300), _grow(state, 1, advance_after=300))


def _interleaved(states, helpers, visits: int = 400):
    """One search per state, their batches taken in turn from this thread (as a group or driver steps
    them); returns each search's rows and root as _grow does."""
    trees = [_make_tree(state, helpers) for state in states]
    rows = [[] for _ in trees]
    searches = [_stepped_search(tree, visits, r) for tree, r in zip(trees, rows)]
    while searches:
        searches = [s for s in searches if next(s, StopIteration) is not StopIteration]
    return [(r, t.node_count(), t.root_visits, *t.root_edges()) for r, t in zip(rows, trees)]


def _stepped_search(tree: SearchTree, visits: int, rows: list):
    """_search, yielding after each batch (as a group or driver steps searches in turn)."""
    def evaluate(n):
        rows.append([np.array(a[:n]) for a in (tree.spatial, tree.global_features, tree.legal, tree.cache_keys,
                                               tree.leaf_is_root, tree.leaf_white, tree.leaf_symmetry,
                                               tree.leaf_mirror_hack)])
        tree.apply_batch(*_answers(tree, n))

    tree.next_search_age()
    if not tree.root_evaluated and tree.prepare_root_eval():
        evaluate(1)
    tree.mark_root_current()
    tree.begin_search()
    while tree.root_visits < visits:
        n, _ = tree.collect(tree.max_batch_capacity, visits - tree.root_visits)
        if n:
            evaluate(n)
        yield


def test_trees_stepped_in_turn_share_one_set_of_helpers():
    """Several trees (different boards) on one LeafHelpers, batch by batch in turn: each grows as alone."""
    states = [_position(19, 60, seed=2), _position(9, 25, seed=3), _position(19, 120, seed=4)]
    alone = _interleaved(states, 0)
    shared = LeafHelpers(1)
    for _ in range(5):   # until the helper has taken leaves (a starved helper proves nothing)
        together = _interleaved(states, shared)
        for a, b in zip(alone, together):
            _assert_same(a, b)
        if shared.leaves_filled > 0:
            break
    assert shared.leaves_filled > 0


def test_shared_helpers_used_from_two_threads_at_once():
    """Two threads collecting for trees that share helpers: one batch holds them, the other fills its own
    leaves; both searches come out as they would alone."""
    states = [_position(19, 70, seed=5), _position(19, 30, seed=6)]
    expected = [_grow(state, 0) for state in states]
    shared = LeafHelpers(1)
    results = [None, None]

    def run(i):
        results[i] = _grow(states[i], shared)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for a, b in zip(expected, results):
        _assert_same(a, b)


def test_searcher_results_match_with_and_without_helpers():
    """Through the Searcher with the real (tiny) network: the same search, root and children."""
    state = _position(19, 50, seed=9)
    results = []
    for helpers in (0, 1):
        evaluator = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", seed=11)
        params = SearchParams().replace(num_search_threads=16, max_visits=400, num_leaf_feature_threads=helpers)
        searcher = Searcher(state, params, evaluator, seed=5)
        assert searcher.tree.leaf_threads == helpers
        searcher.run()
        result = searcher.root_result()
        results.append((result.visits, [(c.move, c.visits, c.weight, c.utility) for c in result.children]))
    assert results[0] == results[1]


def test_set_leaf_threads_starts_stops_and_checks():
    tree = SearchTree(9, 9, 8)
    assert tree.leaf_threads == 0 and tree.leaf_helpers is None
    assert tree.set_leaf_threads(2) == 2 and tree.leaf_threads == 2
    assert tree.set_leaf_threads(0) == 0 and tree.leaf_threads == 0
    with pytest.raises(ValueError):
        tree.set_leaf_threads(-1)
    with pytest.raises(ValueError):
        LeafHelpers(0)
    shared = LeafHelpers(2)
    tree.set_leaf_helpers(shared)
    assert tree.leaf_threads == 2 and tree.leaf_helpers is shared
    tree.set_leaf_helpers(None)
    assert tree.leaf_threads == 0
    del shared   # the helpers stop with their last holder
    # One-leaf batches have nothing to overlap: no helper starts.
    assert SearchTree(9, 9, 1).set_leaf_threads(1) == 0


def test_auto_threads_follow_batch_size_and_cores(monkeypatch):
    auto = SearchParams()
    assert auto.num_leaf_feature_threads == -1
    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 8)
    assert leaf_feature_threads(auto, 1) == 0
    assert leaf_feature_threads(auto, 16) == 1
    assert leaf_feature_threads(auto.replace(num_leaf_feature_threads=3), 16) == 3
    assert leaf_feature_threads(auto.replace(num_leaf_feature_threads=3), 1) == 0
    assert leaf_feature_threads(auto.replace(num_leaf_feature_threads=0), 16) == 0
    # One of many searches at once (self-play's games, analysis groups): no helpers unless asked.
    assert leaf_feature_threads(auto, 16, solo=False) == 0
    assert leaf_feature_threads(auto.replace(num_leaf_feature_threads=2), 16, solo=False) == 2
    # Big batches on 8+ cores: a second helper (the search thread is the bottleneck there).
    assert leaf_feature_threads(auto, 127) == 1
    assert leaf_feature_threads(auto, 128) == 2
    assert leaf_feature_threads(auto, 256, solo=False) == 0
    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 7)
    assert leaf_feature_threads(auto, 256) == 1
    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 1)
    assert leaf_feature_threads(auto, 16) == 0
    assert leaf_feature_threads(auto, 256) == 0


def test_searchers_run_alone_get_a_helper_and_a_drivers_none(monkeypatch):
    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 4)
    evaluator = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", seed=1)
    params = SearchParams().replace(num_search_threads=8)
    assert Searcher(GameState(9), params, evaluator).tree.leaf_threads == 1
    assert Searcher(GameState(9), params, evaluator, solo=False).tree.leaf_threads == 0
    assert Searcher(GameState(9), params.replace(num_search_threads=1), evaluator).tree.leaf_threads == 0
    assert Searcher(GameState(9), params, None).tree.leaf_threads == 0   # rollouts: nothing to fill


def test_config_key_reads_and_rejects_bad_values():
    cfg = Config.from_text("numSearchThreads = 8\nnumLeafFeatureThreads = 2\n", mode="gtp")
    assert SearchParams.from_config(cfg, "gtp").num_leaf_feature_threads == 2
    with pytest.raises(ConfigError):
        SearchParams.from_config(Config.from_text("numSearchThreads = 8\nnumLeafFeatureThreads = -2\n",
                                                  mode="gtp"), "gtp")


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork()")
def test_a_forked_child_searches_without_the_parents_helpers():
    """A tree whose helpers started before fork() still searches in the child (on the child's thread)."""
    state = _position(9, 20, seed=4)
    expected = _grow(state, 0, visits=200)
    inherited = _make_tree(state, 1)
    pid = os.fork()
    if pid == 0:
        status = 1
        try:
            _assert_same(expected, _grow(state, 1, visits=200, tree=inherited))
            del inherited   # freeing it must not wait for helpers the child does not have
            status = 0
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
    _assert_same(expected, _grow(state, 1, visits=200, tree=inherited))


def test_a_groups_searches_share_its_helper_unless_they_opt_out(monkeypatch):
    from katacli.search.stepping import SearchGroup

    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 4)
    evaluator = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", seed=1)
    group = SearchGroup(evaluator)
    params = SearchParams().replace(num_search_threads=8, max_visits=60)
    searchers = [Searcher(_position(9, 10 * i, seed=i), params, evaluator, seed=i, solo=False) for i in range(3)]
    opted_out = Searcher(GameState(9), params.replace(num_leaf_feature_threads=0), evaluator, solo=False)
    assert all(s.tree.leaf_helpers is None for s in searchers + [opted_out])
    done = []
    for s in searchers + [opted_out]:
        group.add(s, lambda stats, exc: done.append(exc))
    shared = group.leaf_helpers
    assert shared is not None and shared.threads == 1
    assert all(s.tree.leaf_helpers is shared for s in searchers) and opted_out.tree.leaf_helpers is None
    while len(group):
        group.step()
    assert done == [None] * 4
    group.close()
    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 2)
    lone = SearchGroup(evaluator)
    lone.add(Searcher(GameState(9), params, evaluator, solo=False), lambda stats, exc: None)
    assert lone.leaf_helpers is None
    while len(lone):
        lone.step()
    lone.close()



def test_benchmark_says_whether_searches_get_a_helper(monkeypatch):
    from katacli.commands.benchmark import _leaf_helper_line

    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 2)
    assert "1 helper thread(s)" in _leaf_helper_line(SearchParams())
    assert "numLeafFeatureThreads = 0" in _leaf_helper_line(SearchParams().replace(num_leaf_feature_threads=0))
    monkeypatch.setattr(leaf_threads_module, "usable_cpu_count", lambda: 1)
    assert "one CPU core" in _leaf_helper_line(SearchParams())
