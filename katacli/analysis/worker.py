"""Analysis threads: each searches the most urgent requests, several at once, and writes their responses.

``numAnalysisThreads`` positions are searched concurrently (KataGo's meaning), each
keeping ``numSearchThreads`` leaves in flight per batch, all going to the one shared
evaluator. They are not one OS thread each: a worker steps up to
``katacli.search.stepping.SEARCHES_PER_DRIVER`` searches from its thread as a
:class:`~katacli.search.stepping.SearchGroup`, so that a round of all their leaves costs
one hand-off to the network instead of one per search (with many single-leaf
searches, per-search threads fed a GPU batches of under half the searches). A few
workers share the searches, so that one collects leaves while another's batch is on
the network (:func:`worker_capacities`).

A worker writes exactly one final response per request it takes
(``isDuringSearch: false``), plus periodic ``isDuringSearch: true`` reports when the
query asked for them.
"""
from __future__ import annotations

import random
import threading
import time
import traceback
from typing import Callable, Optional

from katacli.analysis.backend import loaded_evaluator
from katacli.analysis.protocol import error, field_error
from katacli.analysis.request import AnalysisRequest, RequestStatus
from katacli.analysis.responses import analysis_response, no_results_response
from katacli.analysis.scheduler import RequestQueue
from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import rules_of
from katacli.nn.human_profile import ProfileNotSetError
from katacli.search import Searcher
from katacli.search.search_log import network_counts, root_pda, search_log_text
from katacli.search.stepping import SearchGroup, search_shares

# Longest gap between checks of the report schedule while a search runs, seconds.
REPORT_CHECK_SECONDS = 0.05


def worker_capacities(num_searches: int, has_network: bool) -> list[int]:
    """How many searches each worker thread steps: ``num_searches`` in all (numAnalysisThreads). Without
    a network (rollouts) a search never waits for anything, so each gets its own thread."""
    if not has_network:
        return [1] * max(1, num_searches)
    return search_shares(num_searches)


class DuringSearchReporter:
    """The Searcher callback for reportDuringSearchEvery / firstReportDuringSearchAfter."""

    def __init__(self, request: AnalysisRequest, emit: Callable[[dict], None], has_network: bool):
        self.request = request
        self.emit = emit
        self.has_network = has_network
        self.next_report = request.first_report_after
        self.start = time.monotonic()
        self._stats_before = None

    @property
    def period(self) -> float:
        return min(self.request.report_every, self.request.first_report_after, REPORT_CHECK_SECONDS)

    def arm(self, searcher: Searcher) -> None:
        self.start = time.monotonic()
        self._stats_before = searcher.last_stats

    def __call__(self, searcher: Searcher) -> bool:
        # run() calls back once more after it has finished; the final response covers that moment.
        if searcher.last_stats is not self._stats_before:
            return False
        elapsed = time.monotonic() - self.start
        if elapsed < self.next_report:
            return False
        self.next_report += self.request.report_every
        if self.next_report <= elapsed:
            self.next_report = elapsed + self.request.report_every
        response = analysis_response(self.request, searcher, during_search=True, has_network=self.has_network)
        if response is not None:
            self.emit(response)
        return False


class AnalysisWorker:
    def __init__(self, index: int, queue: RequestQueue, evaluator, emit: Callable[[dict], None], log,
                 seed: int, log_search_info: bool = False, human_evaluator=None, eval_cache=None,
                 pattern_table=None, capacity: int = 1):
        """``evaluator``: the shared evaluator, None for rollouts; ``human_evaluator``: the -human-model one;
        ``eval_cache``: the engine's shared eval cache (useEvalCache) or None; ``capacity``: searches this
        worker runs at once. ``emit(obj)`` writes one response line."""
        self.index = index
        self.queue = queue
        self.evaluator = evaluator
        self.human_evaluator = human_evaluator
        self.eval_cache = eval_cache
        self.pattern_table = pattern_table   # avoidSgfPattern* (PatternBonusTable) or None
        self.emit = emit
        self.log = log
        self.log_search_info = log_search_info
        self.capacity = max(1, capacity)
        self._rng = random.Random(seed)
        self._group: Optional[SearchGroup] = None
        self.thread = threading.Thread(target=self._loop, name=f"analysis-{index}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def join(self, timeout: Optional[float] = None) -> None:
        if self.thread.ident is not None:  # a Ctrl-C during start-up can leave some never started
            self.thread.join(timeout)

    def _loop(self) -> None:
        try:
            while True:
                # Fill free places; wait for a request only when nothing is running.
                while self._running() < self.capacity:
                    blocking = self._running() == 0
                    request = self.queue.pop(block=blocking)
                    if request is None:
                        if blocking:
                            return   # the queue is closed and empty
                        break
                    self._begin(request)
                self._group.step()
        finally:
            if self._group is not None:
                self._group.close()

    def _running(self) -> int:
        return len(self._group) if self._group is not None else 0

    def _begin(self, request: AnalysisRequest) -> None:
        """Start searching a request (or answer it at once if that fails)."""
        try:
            # A network given while it loads is loaded by now (the queue is held until then).
            evaluator = loaded_evaluator(self.evaluator)
            if self._group is None or (not len(self._group) and self._group.evaluator is not evaluator):
                self._group = SearchGroup(evaluator, max_calls=self.capacity)
            # (never pipelined: a group keeps the network busy with the other searches' leaves, and a
            # pipelined tree would split numSearchThreads over two lanes)
            searcher = Searcher(request.state, request.params, evaluator,
                                keep_ownership=request.report.wants_tree_ownership,
                                seed=self._rng.getrandbits(63), human_evaluator=self.human_evaluator,
                                eval_cache=self.eval_cache, pipeline=False,
                                solo=False)   # the group's helper thread, not one of its own
            if request.restrictions is not None:
                searcher.set_restrictions(request.restrictions)
            searcher.set_external_pattern_table(self.pattern_table)
            callback = period = None
            if request.reports_during_search:
                reporter = DuringSearchReporter(request, self.emit, evaluator is not None)
                reporter.arm(searcher)
                callback, period = reporter, reporter.period
            self._group.add(searcher, lambda stats, exc: self._end(request, searcher, stats, exc),
                            stop_event=request.stop_event, callback=callback, callback_period=period)
        except Exception as exc:  # noqa: BLE001 -- keep serving; the client still gets its one final response
            self._end(request, None, None, exc)

    def _end(self, request: AnalysisRequest, searcher: Optional[Searcher], stats, exc: Optional[BaseException]) -> None:
        """A search finished (stats) or failed (exc): write its final response and release the request."""
        try:
            if isinstance(exc, ProfileNotSetError):   # the query (overrideSettings) or the config must give one
                self.emit(field_error(request.query_id, "overrideSettings", str(exc)))
                self.emit(no_results_response(request))
            elif exc is not None:
                self.log.write(f"Error analysing {request.query_id} turn {request.turn_number}:\n"
                               + "".join(traceback.format_exception(exc)))
                self.emit(error(f"Internal error analysing id {request.query_id} turn {request.turn_number}: "
                                f"{exc}"))
                self.emit(no_results_response(request))
            else:
                self._respond(request, searcher, stats)
        except Exception as failure:  # noqa: BLE001 -- a response that cannot be built must not stop the worker
            self.log.write(f"Error answering {request.query_id} turn {request.turn_number}: {failure!r}")
            self.emit(no_results_response(request))
        finally:
            self.queue.finish(request)

    def _respond(self, request: AnalysisRequest, searcher: Searcher, stats) -> None:
        has_network = searcher.evaluator is not None
        if self.log_search_info:   # KataGo's genmove log block, no move marked and no time (as its analysis engine)
            state = request.state
            perspective = {"B": BLACK, "W": WHITE}.get(request.report.perspective, state.next_player)
            self.log.write(search_log_text(
                searcher, state, rules_of(state).to_string(), None, None, stats.playouts,
                network_counts(searcher.evaluator), root_pda(searcher.params, state.next_player),
                perspective).rstrip("\n"))
        response = analysis_response(request, searcher, during_search=False, has_network=has_network)
        if response is not None:
            self.emit(response)
        elif request.status is RequestStatus.TERMINATED:
            self.emit(no_results_response(request))
        else:
            self.log.write("Note: Search quitting due to no visits - this is normal when shutting down")
