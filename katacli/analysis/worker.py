"""Analysis threads: each takes the most urgent request, searches it, and writes its responses.

``numAnalysisThreads`` workers run at once, so that many positions are searched
concurrently; each search keeps ``numSearchThreads`` leaves in flight per batch,
and all of them go to the one shared evaluator. A worker writes exactly one
final response per request it takes (``isDuringSearch: false``), plus periodic
``isDuringSearch: true`` reports when the query asked for them.
"""
from __future__ import annotations

import random
import threading
import time
import traceback
from typing import Callable, Optional

from katacli.analysis.backend import loaded_evaluator
from katacli.analysis.protocol import error
from katacli.analysis.request import AnalysisRequest, RequestStatus
from katacli.analysis.responses import analysis_response, no_results_response
from katacli.analysis.scheduler import RequestQueue
from katacli.game.coords import format_vertex
from katacli.search import Searcher

# Longest gap between checks of the report schedule while a search runs, seconds.
REPORT_CHECK_SECONDS = 0.05


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
                 pattern_table=None):
        """``evaluator``: the shared evaluator, None for rollouts; ``human_evaluator``: the -human-model one;
        ``eval_cache``: the engine's shared eval cache (useEvalCache) or None. ``emit(obj)`` writes one response line."""
        self.index = index
        self.queue = queue
        self.evaluator = evaluator
        self.human_evaluator = human_evaluator
        self.eval_cache = eval_cache
        self.pattern_table = pattern_table   # avoidSgfPattern* (PatternBonusTable) or None
        self.emit = emit
        self.log = log
        self.log_search_info = log_search_info
        self._rng = random.Random(seed)
        self.thread = threading.Thread(target=self._loop, name=f"analysis-{index}", daemon=True)

    def start(self) -> None:
        self.thread.start()

    def join(self, timeout: Optional[float] = None) -> None:
        if self.thread.ident is not None:  # a Ctrl-C during start-up can leave some never started
            self.thread.join(timeout)

    def _loop(self) -> None:
        while True:
            request = self.queue.pop()
            if request is None:
                return
            try:
                self._analyse(request)
            except Exception as exc:  # keep serving; the client still gets its one final response
                self.log.write(f"Error analysing {request.query_id} turn {request.turn_number}:\n"
                               + traceback.format_exc())
                self.emit(error(f"Internal error analysing id {request.query_id} turn {request.turn_number}: {exc}"))
                self.emit(no_results_response(request))
            finally:
                self.queue.finish(request)

    def _analyse(self, request: AnalysisRequest) -> None:
        has_network = self.evaluator is not None
        # A network given while it loads is loaded by now (the queue is held until then).
        searcher = Searcher(request.state, request.params, loaded_evaluator(self.evaluator),
                            keep_ownership=request.report.wants_tree_ownership, seed=self._rng.getrandbits(63),
                            human_evaluator=self.human_evaluator, eval_cache=self.eval_cache)
        if request.restrictions is not None:
            searcher.set_restrictions(request.restrictions)
        searcher.set_external_pattern_table(self.pattern_table)
        callback = period = None
        if request.reports_during_search:
            reporter = DuringSearchReporter(request, self.emit, has_network)
            reporter.arm(searcher)
            callback, period = reporter, reporter.period
        stats = searcher.run(stop_event=request.stop_event, callback=callback, callback_period=period)
        if self.log_search_info:
            best = searcher.best_move()
            vertex = format_vertex(best, request.state.x_size, request.state.y_size) if best != "resign" else best
            self.log.write(f"Search of {request.query_id} turn {request.turn_number}: {stats.visits} visits in "
                           f"{stats.seconds:.3f}s ({stats.stopped_by}), best move {vertex}")
        response = analysis_response(request, searcher, during_search=False, has_network=has_network)
        if response is not None:
            self.emit(response)
        elif request.status is RequestStatus.TERMINATED:
            self.emit(no_results_response(request))
        else:
            self.log.write("Note: Search quitting due to no visits - this is normal when shutting down")
