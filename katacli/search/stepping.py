"""Many searches stepped from one thread, their leaves sent to the network together.

A search that runs in its own thread (``Searcher.run``) hands each batch of leaves to a
shared :class:`~katacli.nn.batching.BatchingEvaluator` and waits: with many small
searches (the analysis engine's concurrent queries, one or a few leaves each) every
visit then pays a thread hand-off and a wake-up, and the threads contend for the GIL,
so the batches the network sees stay far below the number of searches.

A :class:`SearchGroup` steps its searches as generators (``Searcher.run_steps``)
instead. One *round* takes the pending network work of every search, sends all the
array batches to the evaluator at once (``evaluate_batches``: one queueing, one wait),
gives each search its answer and lets it collect its next leaves (nogil, in the core).
So a round costs one hand-off whatever the number of searches. Work that cannot go
as arrays (a human-SL net, root symmetry averaging) runs on a small thread pool in
the same round, so such searches do not hold the others up.

Each search keeps its own limits, time checks, stop event and callbacks (they run
in the driver's thread, between rounds). While a group has searches, the thread
stepping it is registered as the evaluator's client (a batch waits for its leaves);
an idle group's thread is not, so batches never wait for it. ``on_done(stats, error)`` is called once per
search, in the driver's thread, when it finishes or fails; a failure of one search
(or of its batch) ends that search only.
"""
from __future__ import annotations

import contextlib
import math
import threading
import time
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Optional

from katacli.nn.batch import NNBatch
from katacli.search.leaf_threads import group_leaf_helpers

# Threads for the searches' non-array work (per-request evaluations), per group, by default.
CALL_WORKERS = 8
# Searches one driver thread steps at most. With 64 single-leaf analysis searches (AMD EPYC, 2 cores)
# on a simulated GPU (1 ms + 100 us a position) 2 drivers of 32 did 5.0k visits/s, 4 of 16 4.7k, 8 of 8
# 4.2k, 1 of 64 4.3k, a thread each 3.5k; with g170 on the CPU 4 of 16 beat 2 of 32 by 12%.
SEARCHES_PER_DRIVER = 16
# Up to this many searches get a driver each: with few searches, overlap beats grouping.
MIN_DRIVERS = 4


def search_shares(num_searches: int) -> list[int]:
    """How many of ``num_searches`` concurrent searches each driver thread steps (one entry per driver)."""
    num_searches = max(1, num_searches)
    drivers = min(num_searches, max(MIN_DRIVERS, math.ceil(num_searches / SEARCHES_PER_DRIVER)))
    base, extra = divmod(num_searches, drivers)
    return [base + (1 if i < extra else 0) for i in range(drivers)]


OnDone = Callable[[Optional[object], Optional[BaseException]], None]


@dataclass(eq=False)   # identity: a run is found in the list by itself
class _Run:
    steps: object                    # the generator from Searcher.run_steps
    on_done: OnDone
    work: object = field(default=None)   # what it waits for: an NNBatch or a call


def evaluate_batches(evaluator, batches: list) -> list:
    """Answers for several searches' NNBatches, in order, a failed batch's exception in its place: in one
    go where the evaluator can (a BatchingEvaluator), else one call each."""
    many = getattr(evaluator, "evaluate_batches", None)
    if many is not None:
        return many(batches)
    answers: list = []
    for batch in batches:
        try:
            answers.append(evaluator.evaluate_batch(batch))
        except Exception as exc:  # noqa: BLE001 -- that search's answer is its error
            answers.append(exc)
    return answers


class SearchGroup:
    """Searches sharing one evaluator, stepped round by round from the thread that calls :meth:`step`."""

    def __init__(self, evaluator, max_calls: int = CALL_WORKERS):
        """``max_calls``: threads for work that is not an array batch (one per search that may need one)."""
        self.evaluator = evaluator
        self._max_calls = max(1, max_calls)
        self._runs: list[_Run] = []
        self._pool: Optional[ThreadPoolExecutor] = None
        # The stepping thread's registration as the evaluator's client, held while searches run.
        self._registration = contextlib.ExitStack()
        self.rounds = 0
        self.leaves = 0
        # Seconds step() waited for the network's answers (the rest of a round is the searches' own work).
        self.wait_seconds = 0.0
        # The helper thread every search of the group fills its leaves with (one batch at a time is
        # collected here), made when the first search comes; False: none possible (one core).
        self._leaf_helpers = None

    def __len__(self) -> int:
        return len(self._runs)

    @property
    def leaf_helpers(self):
        """The LeafHelpers the group's searches share, or None (none yet, or one usable core)."""
        return self._leaf_helpers or None

    def add(self, searcher, on_done: OnDone, **run_kwargs) -> None:
        """Start a search (``run_kwargs`` as for Searcher.run); it runs up to its first network work now."""
        if searcher.evaluator is not self.evaluator:
            raise ValueError("a SearchGroup steps searches of its own evaluator only")
        if self._leaf_helpers is None:
            self._leaf_helpers = group_leaf_helpers() or False
        if self._leaf_helpers:
            searcher.share_leaf_helpers(self._leaf_helpers)
        run = _Run(searcher.run_steps(**run_kwargs), on_done)
        if not self._runs:
            self._register()
        self._resume(run, lambda: next(run.steps))
        if not self._runs:
            self._registration.close()   # it ended at once

    def step(self) -> None:
        """One round: every search's pending work evaluated, the answers given back, each search advanced
        to its next work (or its end)."""
        runs = list(self._runs)
        if not runs:
            return
        arrays = [run for run in runs if isinstance(run.work, NNBatch)]
        calls = [run for run in runs if not isinstance(run.work, NNBatch)]
        futures = [self._call_pool().submit(run.work) for run in calls]
        started = time.perf_counter()
        try:
            answers: list = evaluate_batches(self.evaluator, [run.work for run in arrays]) if arrays else []
        except Exception as exc:  # noqa: BLE001 -- every search of the failed round gets the error
            answers = [exc] * len(arrays)
        self.wait_seconds += time.perf_counter() - started
        self.rounds += 1
        self.leaves += sum(len(run.work) for run in arrays)
        for run, answer in zip(arrays, answers):
            self._answer(run, answer)
        for run, future in zip(calls, futures):
            exc = future.exception()
            self._answer(run, exc if exc is not None else future.result())

    def close(self) -> None:
        """Stop every search still running (each gives up its leaves; on_done is not called) and the pool."""
        for run in self._runs:
            run.steps.close()
        self._runs.clear()
        self._registration.close()
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None

    def fail_all(self, error: BaseException) -> None:
        """End every search still running with ``error`` (each gives up its leaves; on_done gets the error)."""
        runs, self._runs = self._runs, []
        self._registration.close()
        for run in runs:
            run.steps.close()
            run.on_done(None, error)

    # ---- helpers
    def _answer(self, run: _Run, answer) -> None:
        if isinstance(answer, BaseException):
            self._resume(run, lambda: run.steps.throw(answer))
        else:
            self._resume(run, lambda: run.steps.send(answer))

    def _resume(self, run: _Run, advance: Callable[[], object]) -> None:
        """Advance a search to its next work; on its end or failure, drop it and report."""
        try:
            run.work = advance()
        except StopIteration as finished:
            self._drop(run)
            run.on_done(finished.value, None)
            return
        except Exception as exc:  # noqa: BLE001 -- one search's failure ends that search only
            self._drop(run)
            run.on_done(None, exc)
            return
        if run not in self._runs:
            self._runs.append(run)

    def _drop(self, run: _Run) -> None:
        if run in self._runs:
            self._runs.remove(run)
            if not self._runs:
                self._registration.close()   # idle: batches must not wait for this thread

    def _register(self) -> None:
        client = getattr(self.evaluator, "client", None)   # (rollouts and plain evaluators have none)
        if client is not None:
            self._registration.enter_context(client())

    def _call_pool(self) -> ThreadPoolExecutor:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._max_calls, thread_name_prefix="search-group-call")
        return self._pool


class _Handoff:
    """One search handed to a driver: the caller waits on it for the stats or the error."""

    __slots__ = ("searcher", "run_kwargs", "stats", "error", "done")

    def __init__(self, searcher, run_kwargs: dict):
        self.searcher, self.run_kwargs = searcher, run_kwargs
        self.stats = self.error = None
        self.done = threading.Event()

    def finish(self, stats, error: Optional[BaseException]) -> None:
        self.stats, self.error = stats, error
        self.done.set()


class SearchDriver:
    """A thread that steps the searches other threads hand it, as one :class:`SearchGroup`.

    ``run(searcher, ...)`` blocks its caller until that search ends, like ``Searcher.run``, but the
    search is stepped here, round by round with every other search handed over: a self-play game
    thread then wakes once per move instead of once per network batch. The driver is its
    evaluator's client only while it has searches (its group's registration).
    """

    def __init__(self, evaluator, name: str = "search-driver", max_calls: int = CALL_WORKERS):
        self.evaluator = evaluator
        self._group = SearchGroup(evaluator, max_calls=max_calls)
        self._cv = threading.Condition()
        self._incoming: deque[_Handoff] = deque()
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    @property
    def load(self) -> int:
        """Searches running or waiting here."""
        with self._cv:
            return len(self._group) + len(self._incoming)

    @property
    def rounds(self) -> int:
        """Rounds stepped so far (each one batch of every search's leaves)."""
        return self._group.rounds

    @property
    def leaves(self) -> int:
        """Leaves those rounds sent to the network."""
        return self._group.leaves

    def run(self, searcher, **run_kwargs):
        """Search to the end on the driver's thread; returns the SearchStats (or raises the search's error)."""
        handoff = _Handoff(searcher, run_kwargs)
        with self._cv:
            if self._closed:
                raise RuntimeError("the search driver is closed")
            self._incoming.append(handoff)
            self._cv.notify()
        handoff.done.wait()
        if handoff.error is not None:
            raise handoff.error
        return handoff.stats

    def close(self) -> None:
        """Finish the searches handed over, then stop the thread."""
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join()

    def _loop(self) -> None:
        try:
            while True:
                with self._cv:
                    while not self._incoming and not len(self._group) and not self._closed:
                        self._cv.wait()
                    if self._closed and not self._incoming and not len(self._group):
                        return
                    new = list(self._incoming)
                    self._incoming.clear()
                for handoff in new:
                    self._group.add(handoff.searcher, handoff.finish, **handoff.run_kwargs)
                self._group.step()
        except BaseException as exc:  # a bug here must not leave callers waiting forever
            with self._cv:
                self._closed = True
                waiting = list(self._incoming)
                self._incoming.clear()
            failure = RuntimeError(f"the search driver failed: {exc!r}")
            self._group.fail_all(failure)
            for handoff in waiting:
                handoff.finish(None, failure)
            raise
        finally:
            self._group.close()


class SearchDrivers:
    """A few :class:`SearchDriver` threads for one evaluator; ``run`` hands a search to the least loaded."""

    def __init__(self, evaluator, count: int, max_calls: int = CALL_WORKERS):
        self.drivers = [SearchDriver(evaluator, f"search-driver-{i}", max_calls) for i in range(max(1, count))]

    def run(self, searcher, **run_kwargs):
        return min(self.drivers, key=lambda driver: driver.load).run(searcher, **run_kwargs)

    def close(self) -> None:
        for driver in self.drivers:
            driver.close()
