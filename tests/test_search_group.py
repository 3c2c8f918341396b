"""SearchGroup: many searches stepped from one thread search exactly as each would alone."""
import random
import time

import pytest

from katacli._core.game_state import GameState
from katacli.nn.batching import BatchingEvaluator
from katacli.search import SearchParams, Searcher
from katacli.search.stepping import SearchGroup
from support.fakes import row_by_row_tiny_net

# Board shapes searched side by side in one group (joined per shape by the batching evaluator).
SHAPES = [(9, 9), (13, 13), (7, 9), (9, 9), (6, 6)]


class RequestsOnly:
    """An evaluator with the per-request API only: searches must hand their work over as calls."""

    def __init__(self, inner):
        self.inner = inner

    def evaluate(self, requests):
        return self.inner.evaluate(requests)


class FailsOnShape:
    """Array answers from ``inner``, except for batches of one board width, which fail."""

    def __init__(self, inner, bad_width: int):
        self.inner, self.bad_width = inner, bad_width

    def evaluate(self, requests):
        return self.inner.evaluate(requests)

    def evaluate_batch(self, batch):
        if batch.board_x == self.bad_width:
            raise RuntimeError("simulated device failure")
        return self.inner.evaluate_batch(batch)


def _position(shape, seed: int) -> GameState:
    rng = random.Random(seed)
    state, pla = GameState(shape[0], shape[1]), 1
    for _ in range(6 + seed % 5):
        state.play(rng.choice([p for p in state.legal_moves(pla) if p is not None]), pla)
        pla = 3 - pla
    return state


def _evaluator(symmetry=0):
    return row_by_row_tiny_net(symmetry)


def _params(leaves: int, visits: int = 40) -> SearchParams:
    return SearchParams.defaults("analysis").replace(num_search_threads=leaves, max_visits=visits)


def _summary(searcher: Searcher):
    analysis = searcher.analysis()
    return analysis.root.visits, [(m.move, m.visits, m.winrate) for m in analysis.moves], analysis.root.winrate


def _run_group(evaluator, searchers):
    group, finished = SearchGroup(evaluator), {}
    for i, searcher in enumerate(searchers):
        group.add(searcher, lambda stats, exc, i=i: finished.setdefault(i, (stats, exc)))
    while len(group):
        group.step()
    return group, finished


# With random orientations the trees draw every leaf's but the root's, which the evaluator's generator
# draws: searched one after another on one evaluator, the roots draw in the order of the group's first
# round as long as the evaluator does not regroup them by board shape (one shape).
@pytest.mark.parametrize("leaves, symmetry, shapes", [(1, 0, SHAPES), (4, 0, SHAPES), (4, None, [(9, 9)] * 4)])
def test_grouped_searches_equal_lone_searches(leaves, symmetry, shapes):
    params = _params(leaves)
    alone = []
    evaluator = _evaluator(symmetry)
    for i, shape in enumerate(shapes):
        searcher = Searcher(_position(shape, i), params, evaluator, seed=7)
        searcher.run()
        alone.append(_summary(searcher))
    with BatchingEvaluator(_evaluator(symmetry), max_batch_size=64, server_per_cpu_core=False) as shared:
        searchers = [Searcher(_position(shape, i), params, shared, seed=7) for i, shape in enumerate(shapes)]
        with shared.client():
            group, finished = _run_group(shared, searchers)
    assert sorted(finished) == list(range(len(shapes)))
    for i, searcher in enumerate(searchers):
        stats, exc = finished[i]
        assert exc is None and stats.stopped_by == "visits" and stats.visits == 40
        assert _summary(searcher) == alone[i], shapes[i]
    # One round carries every search's leaves (the roots' first): as many rounds as one search steps.
    assert group.rounds <= 40 + 1
    assert group.leaves == len(shapes) + sum(finished[i][0].leaves_evaluated for i in finished)


def test_work_without_arrays_goes_through_calls():
    params = _params(2, visits=25)
    expected = []
    for i in range(3):
        searcher = Searcher(_position((9, 9), i), params, RequestsOnly(_evaluator()), seed=5)
        searcher.run()
        expected.append(_summary(searcher))
    evaluator = RequestsOnly(_evaluator())
    searchers = [Searcher(_position((9, 9), i), params, evaluator, seed=5) for i in range(3)]
    group, finished = _run_group(evaluator, searchers)
    assert all(finished[i][1] is None for i in range(3))
    assert [_summary(s) for s in searchers] == expected
    group.close()


def test_a_failed_batch_ends_only_its_own_search():
    evaluator = FailsOnShape(_evaluator(), bad_width=13)
    params = _params(2, visits=30)
    searchers = [Searcher(_position(shape, i), params, evaluator, seed=5)
                 for i, shape in enumerate([(9, 9), (13, 13), (7, 9)])]
    _, finished = _run_group(evaluator, searchers)
    assert finished[0][1] is None and finished[0][0].visits == 30
    assert finished[2][1] is None and finished[2][0].visits == 30
    stats, exc = finished[1]
    assert stats is None and "simulated device failure" in str(exc)
    # The failed search gave its leaves back: it can search again once the device works.
    evaluator.bad_width = 0
    assert searchers[1].run().visits == 30


def test_stop_event_and_callbacks_work_in_a_group():
    import threading

    stop = threading.Event()
    calls = []
    evaluator = _evaluator()
    searcher = Searcher(_position((9, 9), 1), _params(1, visits=10_000), evaluator, seed=5)

    def callback(s):
        calls.append(s.root_visits)
        if len(calls) == 3:
            stop.set()
        return False

    group, finished = SearchGroup(evaluator), {}
    group.add(searcher, lambda stats, exc: finished.setdefault(0, (stats, exc)),
              stop_event=stop, callback=callback, callback_period=0.0)
    while len(group):
        group.step()
    stats, exc = finished[0]
    assert exc is None and stats.stopped_by == "stop" and stats.visits < 10_000
    assert len(calls) >= 3


def test_a_group_takes_its_own_evaluators_searches_only():
    group = SearchGroup(_evaluator())
    with pytest.raises(ValueError, match="own evaluator"):
        group.add(Searcher(_position((9, 9), 0), _params(1), _evaluator()), lambda *_: None)


def test_close_gives_back_the_leaves_of_unfinished_searches():
    evaluator = _evaluator()
    searcher = Searcher(_position((9, 9), 2), _params(4, visits=200), evaluator, seed=5)
    group, finished = SearchGroup(evaluator), {}
    group.add(searcher, lambda stats, exc: finished.setdefault(0, (stats, exc)))
    group.step()
    group.close()
    assert not finished and len(group) == 0
    assert searcher.run(max_visits=50).visits == 50


def test_a_driver_steps_searches_handed_over_by_other_threads():
    import threading

    from katacli.search.stepping import SearchDrivers

    params = _params(2, visits=30)
    expected = []
    for i in range(6):
        searcher = Searcher(_position((9, 9), i), params, _evaluator(), seed=5)
        searcher.run()
        expected.append(_summary(searcher))
    with BatchingEvaluator(_evaluator(), max_batch_size=64, server_per_cpu_core=False) as shared:
        drivers = SearchDrivers(shared, 2)
        searchers = [Searcher(_position((9, 9), i), params, shared, seed=5, driver=drivers) for i in range(6)]
        results = {}

        def play(i):
            results[i] = searchers[i].run()   # blocks until a driver thread has stepped it to its end

        threads = [threading.Thread(target=play, args=(i,)) for i in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        drivers.close()
    assert all(results[i].visits == 30 for i in range(6))
    assert [_summary(s) for s in searchers] == expected
    # The searches overlapped: a round carried more than one search's batch of 2 leaves on average.
    rounds = sum(d.rounds for d in drivers.drivers)
    assert sum(d.leaves for d in drivers.drivers) / rounds > 2.0


def test_a_search_failing_on_a_driver_raises_in_its_callers_thread():
    from katacli.search.stepping import SearchDriver

    evaluator = FailsOnShape(_evaluator(), bad_width=13)
    driver = SearchDriver(evaluator)
    good = Searcher(_position((9, 9), 1), _params(1, visits=20), evaluator, seed=5, driver=driver)
    bad = Searcher(_position((13, 13), 1), _params(1, visits=20), evaluator, seed=5, driver=driver)
    with pytest.raises(RuntimeError, match="simulated device failure"):
        bad.run()
    assert good.run().visits == 20
    driver.close()
    with pytest.raises(RuntimeError, match="closed"):
        good.run(max_visits=30)


def test_the_stepping_thread_is_a_batch_client_only_while_its_group_has_searches():
    with BatchingEvaluator(_evaluator(), max_batch_size=64, server_per_cpu_core=False) as shared:
        group = SearchGroup(shared)
        assert shared.clients.count == 0
        group.add(Searcher(_position((9, 9), 1), _params(1, visits=8), shared, seed=5), lambda *_: None)
        assert shared.clients.count == 1
        while len(group):
            group.step()
        assert shared.clients.count == 0
        group.add(Searcher(_position((9, 9), 2), _params(1, visits=200), shared, seed=5), lambda *_: None)
        group.close()
        assert shared.clients.count == 0


def test_a_group_counts_the_time_it_waited_for_answers():
    class Slow:
        """The evaluator, each array batch answered 5 ms late."""

        def __init__(self, inner):
            self.inner = inner

        def __getattr__(self, name):
            return getattr(self.inner, name)

        def evaluate_batch(self, batch):
            time.sleep(0.005)
            return self.inner.evaluate_batch(batch)

    evaluator = Slow(_evaluator())
    searchers = [Searcher(_position((9, 9), seed), _params(1, visits=5), evaluator, seed=seed, solo=False)
                 for seed in range(2)]
    group, finished = _run_group(evaluator, searchers)
    assert all(exc is None for _, exc in finished.values())
    # Every round's two batches are answered one after the other, each 5 ms late.
    assert group.wait_seconds >= 0.010 * group.rounds * 0.9
    assert group.rounds >= 4
