"""Pipelined search (katacli.search.pipeline): two lanes of leaves, one evaluated while the other is collected.

It is meant for a GPU (the searchPipelining key); here the bundled tiny net on the CPU runs the same
code (the worker thread, the lanes, the stores). Checked: the tree's lanes keep their leaves
apart, a pipelined search stops at its visit limit exactly and leaves a consistent tree with no
virtual loss behind, a failing network leaves no pending leaf, and the key turns it on and off.
"""
from __future__ import annotations

import dataclasses
import threading

import numpy as np

import pytest

from katacli._core.game_state import GameState
from katacli.nn.evaluator import NNEvaluator
from katacli.search import Searcher, SearchParams
from katacli.search.evaluation import NetworkLeafEvaluator
from katacli.config import Config, Enabled
from katacli.search.pipeline import auto_pipelining, lane_capacity, pipelining_applies

from support.paths import BUNDLED_TINY_MODEL


@pytest.fixture(scope="module")
def tiny_net():
    return NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=16, seed=5)


def _params(threads: int, visits: int) -> SearchParams:
    return SearchParams.defaults("gtp").replace(num_search_threads=threads, max_visits=visits)


def _opening(size: int = 9) -> GameState:
    state = GameState(size, size)
    for move in [(2, 2), (6, 6), (2, 6), (6, 2)]:
        state.play(move, state.next_player)
    return state


class _FailingNet:
    """The tiny net's array path, failing on the given call (counted from 1)."""

    def __init__(self, net: NNEvaluator, fail_on: int):
        self.net, self.fail_on, self.calls = net, fail_on, 0
        self.device = net.device

    def evaluate_batch(self, batch):
        self.calls += 1
        if self.calls == self.fail_on:
            raise RuntimeError("network failed")
        return self.net.evaluate_batch(batch)

    def evaluate(self, requests):
        return self.net.evaluate(requests)

    def __getattr__(self, name):
        return getattr(self.net, name)


@pytest.mark.parametrize("threads, lanes, expected", [(16, 2, 8), (17, 2, 9), (2, 2, 1), (16, 1, 16), (1, 1, 1)])
def test_lane_capacity_splits_the_leaves_in_flight(threads, lanes, expected):
    assert lane_capacity(threads, lanes) == expected


def test_pipelining_needs_a_network_array_path_and_two_leaves_in_flight(tiny_net):
    assert pipelining_applies(tiny_net, None, 16)
    assert pipelining_applies(tiny_net, None, 2)
    assert not pipelining_applies(tiny_net, None, 1)          # one leaf in flight: KataGo's sequential search
    assert not pipelining_applies(None, None, 16)             # rollouts
    assert not pipelining_applies(tiny_net, tiny_net, 16)     # a human-SL net goes by requests


def test_the_search_pipelining_key_turns_it_on_and_off(tiny_net):
    off = Searcher(_opening(), _params(16, 100), tiny_net, seed=11)
    assert not off.pipelined and off.tree.max_batch_capacity == 16     # the default
    on = Searcher(_opening(), _params(16, 100).replace(search_pipelining=True), tiny_net, seed=11)
    assert on.pipelined and on.tree.max_batch_capacity == 8
    assert on.run().visits == 100
    on.set_params(_params(16, 200))                                    # turned off again: one lane
    assert not on.pipelined and on.run().visits == 200
    assert not Searcher(_opening(), _params(16, 100).replace(search_pipelining=True), tiny_net,
                        pipeline=False).pipelined                      # the argument wins


class _Net:
    """What auto_pipelining reads of an evaluator."""

    def __init__(self, gflop_per_19x19_position: float):
        self.flops_per_point = gflop_per_19x19_position * 1e9 / 361


# Pipelined only for a launched (CUDA-graph) net of 10+ GFLOP a position on the board searched, and
# lanes of 32+ leaves: b18c384nbt is 18.9 GFLOP on 19x19 (8.8 on 13x13), g170-b6c96 0.7.
@pytest.mark.parametrize("gflop, launches, threads, size, expected", [
    (18.9, True, 128, 19, True),      # b18c384nbt, GPU-bound on an H100: 1.45x measured
    (18.9, True, 64, 19, True),       # lanes of 32
    (18.9, True, 62, 19, False),      # lanes of 31: latency-bound batches
    (18.9, True, 128, 13, False),     # 8.8 GFLOP on 13x13
    (0.7, True, 256, 19, False),      # g170-b6c96: CPU-bound, 0.70-0.85x measured
    (18.9, False, 128, 19, False),    # the CPU, or a GPU without graphs
    (52.2, True, 64, 9, True),        # b28c512nbt: 11.7 GFLOP even on 9x9
])
def test_auto_pipelining_is_for_big_networks_launched_on_a_gpu(gflop, launches, threads, size, expected):
    assert auto_pipelining(_Net(gflop), launches, threads, size * size) is expected


def test_auto_pipelining_needs_the_networks_cost():
    assert not auto_pipelining(object(), True, 256, 361)   # an evaluator that does not say: never


def test_search_pipelining_is_a_true_false_auto_key():
    for text, expected in [("", Enabled.AUTO), ("searchPipelining = auto", Enabled.AUTO),
                           ("searchPipelining = true", Enabled.TRUE), ("searchPipelining = false", Enabled.FALSE)]:
        params = SearchParams.from_config(Config.from_text(text + "\nnumSearchThreads = 8\n", mode="gtp"), "gtp")
        assert params.search_pipelining is expected


def test_auto_pipelines_a_big_launched_net_and_keeps_the_tree_for_the_board(tiny_net, monkeypatch):
    """With auto, a Searcher splits its leaves over two lanes when the net qualifies, for the board it
    searches; true / false and the constructor argument override it."""
    monkeypatch.setattr(NetworkLeafEvaluator, "launches_async", property(lambda self: True))
    monkeypatch.setattr(tiny_net, "flops_per_point", 18.9e9 / 361)
    params = _params(128, 100)
    assert params.search_pipelining is Enabled.AUTO
    big = Searcher(GameState(19, 19), params, tiny_net, seed=1)
    assert big.pipelined and big.tree.max_batch_capacity == 64
    small = Searcher(GameState(13, 13), params, tiny_net, seed=1)
    assert not small.pipelined and small.tree.max_batch_capacity == 128
    small.set_position(GameState(19, 19))            # a new board size: decided again
    assert small.pipelined
    assert not Searcher(GameState(19, 19), params.replace(search_pipelining=Enabled.FALSE), tiny_net).pipelined
    assert not Searcher(GameState(19, 19), params, tiny_net, pipeline=False).pipelined
    monkeypatch.setattr(tiny_net, "flops_per_point", 0.7e9 / 361)
    assert not Searcher(GameState(19, 19), params, tiny_net).pipelined
    assert Searcher(GameState(19, 19), params.replace(search_pipelining=Enabled.TRUE), tiny_net).pipelined


def test_a_trees_lanes_keep_their_waiting_leaves_apart(tiny_net):
    searcher = Searcher(_opening(), _params(8, 100), tiny_net, seed=3, pipeline=True)
    searcher.run(max_visits=1)   # the root evaluated
    tree = searcher.tree
    assert (tree.num_lanes, tree.max_batch_capacity) == (2, 4)
    first, _ = tree.collect(4, 100)
    keys_first = tree.cache_keys[:first].copy()
    tree.select_lane(1)
    assert tree.num_leaves == 0
    second, _ = tree.collect(4, 100)
    assert first == 4 and second == 4
    # Lane 0's leaves are pending: lane 1 found other positions.
    assert not set(map(tuple, tree.cache_keys[:second].tolist())) & set(map(tuple, keys_first.tolist()))
    tree.select_lane(0)
    assert tree.num_leaves == first
    assert (tree.cache_keys[:first] == keys_first).all()
    for lane in (0, 1):
        tree.select_lane(lane)
        out = tiny_net.evaluate_batch(_batch_of(tree, tree.num_leaves, tiny_net))
        tree.apply_batch(out.values, out.policy, out.policy_pass, out.ownership, out.ownership_rows.view("uint8"))
    assert tree.total_virtual_losses() == 0
    assert tree.root_visits == 1 + first + second
    assert tree.check_invariants()


def _batch_of(tree, n, net):
    return NetworkLeafEvaluator(net).prepare_arrays(tree, n, _params(8, 100))


@pytest.mark.parametrize("threads, visits", [(16, 400), (7, 123), (2, 50)])
def test_a_pipelined_search_stops_at_its_visit_limit_with_a_consistent_tree(tiny_net, threads, visits):
    searcher = Searcher(_opening(), _params(threads, visits), tiny_net, seed=11, pipeline=True)
    assert searcher.pipelined
    stats = searcher.run()
    assert stats.visits == visits
    assert stats.stopped_by == "visits"
    assert searcher.tree.total_virtual_losses() == 0
    assert searcher.tree.check_invariants()
    assert stats.batches >= 2
    # The tree goes on from there: a second search on the same tree.
    more = searcher.run(max_visits=visits + 100)
    assert more.visits == visits + 100
    assert searcher.tree.total_virtual_losses() == 0


def test_a_pipelined_and_a_plain_search_agree_on_a_clear_best_move(tiny_net):
    """Same net, same visits: the two lanes change the order leaves are evaluated in, not what is found."""
    best = []
    for pipeline in (False, True):
        searcher = Searcher(_opening(), _params(8, 600), tiny_net, seed=2, pipeline=pipeline)
        searcher.run()
        children = sorted(searcher.child_results(), key=lambda c: -c.visits)
        best.append({c.move for c in children[:3]})
    assert best[0] & best[1]


def test_a_network_failing_mid_search_leaves_no_pending_leaf(tiny_net):
    failing = _FailingNet(tiny_net, fail_on=4)
    searcher = Searcher(_opening(), _params(16, 400), failing, seed=7, pipeline=True)
    with pytest.raises(RuntimeError, match="network failed"):
        searcher.run()
    assert searcher.tree.total_virtual_losses() == 0
    assert searcher.tree.check_invariants()
    for lane in (0, 1):
        searcher.tree.select_lane(lane)
        assert searcher.tree.num_leaves == 0
    stats = searcher.run(max_visits=300)   # the next search on the same tree works
    assert stats.visits == 300


def test_analysis_from_another_thread_during_a_pipelined_search(tiny_net):
    searcher = Searcher(_opening(), _params(16, 3000), tiny_net, seed=9, pipeline=True)
    snapshots, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            snapshots.append(searcher.analysis(max_pv_len=3))
            stop.wait(0.002)   # as kata-analyze reports: now and then, not in a busy loop

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        stats = searcher.run()
    finally:
        stop.set()
        watcher.join()
    assert stats.visits == 3000
    assert snapshots and searcher.tree.total_virtual_losses() == 0


class _LaunchingNet:
    """The tiny net as a device that queues calls (a CUDA net's NNEvaluator.submit_batch): the inputs are
    read at launch, the network runs when the answer is asked for, on the search's own thread. Fails on
    the given launch's answer (counted from 1)."""

    launches_async = True

    def __init__(self, net: NNEvaluator, fail_on: int = 0):
        self.net, self.fail_on = net, fail_on
        self.launched = self.answered = self.settled = 0
        self.threads: set = set()

    def submit_batch(self, batch):
        from katacli.nn.evaluator import PendingBatch

        self.launched += 1
        number = self.launched
        frozen = dataclasses.replace(batch, **{f.name: getattr(batch, f.name).copy() for f in dataclasses.fields(batch)
                                               if isinstance(getattr(batch, f.name), np.ndarray)})

        def finish():
            self.threads.add(threading.get_ident())
            if number == self.fail_on:
                raise RuntimeError("device failed")
            self.answered += 1
            return self.net.evaluate_batch(frozen)

        def settle():
            self.settled += 1

        return PendingBatch(finish=finish, settle=settle)

    def __getattr__(self, name):
        return getattr(self.net, name)


def _fresh_net() -> NNEvaluator:
    return NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=16, seed=5)


def test_a_launched_pipeline_searches_as_the_worker_pipeline_does_on_one_thread():
    """Same batches in the same order, stored at the same moments: the same tree, without a worker thread."""
    results = []
    for net in (_fresh_net(), _LaunchingNet(_fresh_net())):
        searcher = Searcher(_opening(), _params(8, 300), net, seed=3, pipeline=True)
        stats = searcher.run()
        assert stats.visits == 300 and searcher.tree.total_virtual_losses() == 0
        results.append([(c.move, c.visits, c.win_loss) for c in searcher.child_results()])
    assert results[0] == results[1]
    assert net.launched >= 2 and net.answered == net.launched and net.threads == {threading.get_ident()}


def test_a_launched_batch_failing_leaves_no_pending_leaf_and_settles_the_one_in_flight():
    net = _LaunchingNet(_fresh_net(), fail_on=4)
    searcher = Searcher(_opening(), _params(16, 400), net, seed=7, pipeline=True)
    with pytest.raises(RuntimeError, match="device failed"):
        searcher.run()
    assert net.settled == 1   # launch 5 was on the device when launch 4's answer failed
    assert searcher.tree.total_virtual_losses() == 0 and searcher.tree.check_invariants()
    for lane in (0, 1):
        searcher.tree.select_lane(lane)
        assert searcher.tree.num_leaves == 0
    net.fail_on = 0
    assert searcher.run(max_visits=300).visits == 300


def test_submit_batch_answers_as_evaluate_batch(tiny_net):
    searcher = Searcher(_opening(), _params(8, 50), tiny_net, seed=1)
    searcher.run()
    tree = searcher.tree
    n, _ = tree.collect(8, 8)
    assert n > 1
    batch = _batch_of(tree, n, tiny_net)
    by_submit = _fresh_net().submit_batch(batch).result()
    by_evaluate = _fresh_net().evaluate_batch(batch)
    tree.abandon()
    assert not tiny_net.launches_async   # the CPU runs a submitted batch at once
    for name in ("values", "policy", "policy_pass", "symmetry"):
        np.testing.assert_array_equal(getattr(by_submit, name), getattr(by_evaluate, name))


def test_a_device_runners_launch_on_the_cpu_runs_the_call_at_once(tiny_net):
    runner = tiny_net.runner
    spatial = np.zeros((2, 22, 9, 9), np.float32)
    spatial[:, 0] = 1.0
    global_features = np.zeros((2, 19), np.float32)
    expected = runner(spatial, global_features, None, True)
    launched = runner.launch(spatial, global_features, None, True)
    for got, want in zip(launched.wait(), expected):
        np.testing.assert_array_equal(got, want)
    launched.settle()   # nothing left to wait for
