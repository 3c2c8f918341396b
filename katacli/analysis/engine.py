"""The analysis engine: reads query lines, queues their positions, and runs the analysis threads.

Lifecycle::

    engine = AnalysisEngine(defaults, backend, JsonLineWriter(stdout), log, num_analysis_threads=4)
    engine.start()
    for line in stdin:
        engine.handle_line(line)     # errors / warnings / action answers are written at once
    engine.finish(wait=True)         # stdin closed: finish everything queued (False: quit now)

``serve(stream)`` is that loop, with Ctrl-C handled as quitting now. Everything
the engine writes goes through one :class:`JsonLineWriter`; log lines go to the
log (stderr or a file), never to stdout.
"""
from __future__ import annotations

import random
import time
from typing import Optional, TextIO

from katacli.analysis.actions import ActionHandler
from katacli.analysis.backend import AnalysisBackend
from katacli.analysis.interrupts import deferred_interrupts
from katacli.analysis.output import JsonLineWriter
from katacli.analysis.protocol import (
    QueryError, dumps, error, field_error, id_of, loads, parse_error_message,
)
from katacli.analysis.query import QueryDefaults, QueryParser
from katacli.analysis.scheduler import RequestQueue
from katacli.search.eval_cache import new_eval_cache

# How long quitting without waiting gives the analysis threads to notice, seconds (all of them together).
QUIT_JOIN_SECONDS = 5.0


class NullLog:
    """A log that drops everything (tests, embedding)."""

    def write(self, message: str) -> None:
        pass

    def info(self, message: str) -> None:
        pass


class AnalysisEngine:
    def __init__(self, defaults: QueryDefaults, backend: AnalysisBackend, writer: JsonLineWriter, log=None, *,
                 num_analysis_threads: int = 1, seed: Optional[int] = None, log_all_requests: bool = False,
                 log_errors_and_warnings: bool = True, log_search_info: bool = False, pattern_table=None):
        """``pattern_table``: the avoidSgfPattern* shapes every query's search steers away from, or None."""
        self.defaults = defaults
        self.backend = backend
        self.writer = writer
        self.log = log if log is not None else NullLog()
        self.log_all_requests = log_all_requests
        self.log_errors_and_warnings = log_errors_and_warnings
        self.interrupted = False   # serve() ended on Ctrl-C
        self.queue = RequestQueue()
        self.parser = QueryParser(defaults)
        # One eval cache for every query, as KataGo's analysis engine shares one between its bots.
        self.eval_cache = new_eval_cache(defaults.params)
        self.actions = ActionHandler(self.queue, backend, writer.write, self._report_error, self.eval_cache)
        seeds = random.Random(seed)
        self._worker_seeds = [seeds.getrandbits(63) for _ in range(num_analysis_threads)]
        self._log_search_info = log_search_info
        self._pattern_table = pattern_table
        self.workers: list = []  # made by start()
        self._started = False
        self._finished = False

    # ---- running ---------------------------------------------------------------------------
    def start(self) -> None:
        """Start the workers, and the network's background load if it has one: queries wait queued
        (in priority order, terminable) until it is loaded; everything else is answered meanwhile."""
        if not self._started:
            self._started = True
            loading = self.backend.loading
            if loading is not None:
                self.queue.hold()
                loading.when_done(self.queue.release)  # a failed load too: the workers then report it
            # The search modules are imported here, after "ready" (~20-50 ms on two cores): no query can be
            # searched before the network is loaded, which takes longer, so no answer comes later for it.
            from katacli.analysis.worker import AnalysisWorker, worker_capacities

            capacities = worker_capacities(len(self._worker_seeds), self.backend.evaluator is not None)
            self.workers = [
                AnalysisWorker(index, self.queue, self.backend.evaluator, self.writer.write, self.log, worker_seed,
                               self._log_search_info, human_evaluator=self.backend.human_evaluator,
                               eval_cache=self.eval_cache, pattern_table=self._pattern_table, capacity=capacity)
                for index, (worker_seed, capacity) in enumerate(zip(self._worker_seeds, capacities))
            ]
            self.backend.start_loading()
            for worker in self.workers:
                worker.start()

    def finish(self, wait: bool = True) -> None:
        """No more input. wait: finish every open request first; else stop at once, writing nothing more."""
        if self._finished:
            return
        self._finished = True
        if wait:
            self.queue.close()
            for worker in self.workers:
                worker.join()
        else:
            self.writer.silence()
            self.queue.abandon()
            # One deadline for all of them: a thread blocked writing to a pipe nobody reads never notices.
            deadline = time.monotonic() + QUIT_JOIN_SECONDS
            for worker in self.workers:
                worker.join(max(0.0, deadline - time.monotonic()))

    def serve(self, stream: TextIO, wait_at_end: bool = True) -> int:
        """Answer queries from ``stream`` until it ends (or Ctrl-C); the exit status. Ctrl-C is taken
        between lines (katacli.analysis.interrupts): a query being queued is queued whole first."""
        with deferred_interrupts() as interrupts:
            try:
                self.start()
                while True:
                    with interrupts.allowed():
                        line = stream.readline()
                    if not line:
                        break
                    self.handle_line(line)
                if interrupts.requested:
                    raise KeyboardInterrupt
            except KeyboardInterrupt:
                self.log.write("Interrupted, quitting without waiting for open queries")
                self.interrupted = True
                interrupts.quitting()
                self.finish(wait=False)
                return 0
        self.finish(wait=wait_at_end)
        return 0

    # ---- one line --------------------------------------------------------------------------
    def handle_line(self, line: str) -> None:
        line = line.strip()
        if not line:
            return
        if self.log_all_requests:
            self.log.write("Request: " + line)
        try:
            query = loads(line)
        except (ValueError, RecursionError) as exc:
            self._report_error(error(parse_error_message(line, exc)))
            return
        if not isinstance(query, dict):
            self._report_error(error("Request line was valid json but was not an object, ignoring: " + dumps(query)))
            return
        query_id = id_of(query)
        if query_id is None:
            self._report_error(error('Request must have a string "id" field'))
            return
        try:
            if isinstance(query.get("action"), str):
                self.actions.handle(query)
                return
            requests = self.parser.parse(query, self._report_warning)
        except QueryError as exc:
            self._report_error(field_error(query_id, exc.field, exc.message))
            return
        self.queue.push(requests)

    def _report_error(self, obj: dict) -> None:
        self.writer.write(obj)
        if self.log_errors_and_warnings:
            self.log.write("Error: " + dumps(obj))

    def _report_warning(self, obj: dict) -> None:
        self.writer.write(obj)
        if self.log_errors_and_warnings:
            self.log.write("Warning: " + dumps(obj))
