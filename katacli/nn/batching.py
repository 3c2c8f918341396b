"""Many threads, one network: :class:`BatchingEvaluator` gathers their positions into batches.

Callers (search threads, self-play games, analysis searches) hand over a *group* of
requests (one search's leaves, or one position) and block until it is evaluated.
Server threads take whole groups off the queue and run them as one
:meth:`NNEvaluator.evaluate_uncached` call.

When to run a batch is the whole game. A small network on a CPU costs about as much
for one position as for eight, so firing on every arrival wastes most of the work,
while waiting for positions that will not come stalls everyone. Callers that will keep
coming back -- a running search, a self-play game thread -- register as *clients*
(:meth:`BatchingEvaluator.client`, a per-thread, re-entrant context). A free server then
runs the queue as soon as it holds the share of the clients not already in flight that
falls to it (clients / free servers), so with 16 games and two servers the games settle
into two groups that take turns on the cores (not always eight and eight: the split the
first batches happen to make persists). Without registered clients the
server waits ``max_wait_ms`` for more positions, as a plain batching queue does. A
registered client busy elsewhere delays a batch at most ``CLIENT_WAIT_LIMIT_S``.

With several servers free, a queue is shared out among them, splitting a caller's group
if need be: one search's leaves on a big board then run on every core at once.

A network that launches its calls (a CUDA net with graphs: ``launches_async`` and
``submit_batch``) gets two calls in flight from one server: while the device runs a call, the
server takes the next batch once it is at least as big (a smaller one would pay a whole call's
fixed cost for fewer positions), joins it, looks it up in the cache and launches it, and only
then postprocesses and hands out the first call's answers, unless the device had already
finished that call (``done()``), whose callers are then answered first. The device then waits
for the host's share of a call only when no batch is ready.

Clients may be shared between several evaluators (:class:`BatchClients`), as self-play
does when a new network takes over while games are running.
"""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from concurrent.futures import Future
from contextlib import contextmanager
from functools import partial
from typing import Iterator, Optional, Sequence

import numpy as np

from katacli.cpu_cores import usable_cpu_count
from katacli.nn.batch import NNBatch, NNBatchOutput, accepts_batches, concatenate_outputs
from katacli.nn.mixed_sizes import evaluate_mixed
from katacli.nn.postprocess import NNOutput

# Longest a batch waits for a registered client that is busy with something other than the network.
CLIENT_WAIT_LIMIT_S = 0.005
# What BatchingEvaluator._take answers a server that must not wait (it has a launched call to finish).
NOT_READY = object()
# How often a server with a launched call looks whether the device has finished it, while it waits for
# enough positions to launch the next (new positions wake it at once).
LAUNCHED_POLL_S = 0.0005


class BatchClients:
    """Counts the threads that will keep sending positions (re-entrant per thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._depth: dict[int, int] = {}
        self._listeners: list["BatchingEvaluator"] = []

    @property
    def count(self) -> int:
        return len(self._depth)

    @contextmanager
    def registered(self) -> Iterator[None]:
        thread = threading.get_ident()
        with self._lock:
            self._depth[thread] = self._depth.get(thread, 0) + 1
        try:
            yield
        finally:
            with self._lock:
                depth = self._depth[thread] - 1
                if depth:
                    self._depth[thread] = depth
                else:
                    del self._depth[thread]
                listeners = list(self._listeners)
            for evaluator in listeners:  # fewer clients: a waiting batch may be complete now
                evaluator._wake()

    def _listen(self, evaluator: "BatchingEvaluator") -> None:
        with self._lock:
            self._listeners.append(evaluator)

    def _forget(self, evaluator: "BatchingEvaluator") -> None:
        with self._lock:
            if evaluator in self._listeners:
                self._listeners.remove(evaluator)


class _Group:
    """One caller's requests (a list of NNRequest, or one NNBatch of arrays) and, once served, their
    outputs (a list, or NNBatchOutput pieces by first row) or the error."""

    __slots__ = ("requests", "outputs", "error", "arrived", "_done", "futures", "unserved", "is_batch")

    def __init__(self, requests, futures: Optional[list] = None):
        self.requests = requests
        self.is_batch = isinstance(requests, NNBatch)
        self.outputs: list = [] if self.is_batch else [None] * len(requests)
        self.error: Optional[BaseException] = None
        self.arrived = time.monotonic()
        self.futures = futures
        self.unserved = len(requests)  # requests whose batch has not come back (may run in several batches)
        self._done = threading.Lock()  # held until served: the cheapest one-shot wait CPython has
        self._done.acquire()

    def finish(self, error: Optional[BaseException] = None) -> None:
        """Wake the caller: every batch holding part of this group is back (outputs filled in), or failed."""
        if error is not None:
            self.error = error
        if self.futures is not None:
            for i, future in enumerate(self.futures):
                if self.error is not None:
                    future.set_exception(self.error)
                else:
                    future.set_result(self.outputs[i])
        self._done.release()

    def wait(self):
        self._done.acquire()
        if self.error is not None:
            raise self.error
        if self.is_batch:  # (first row, output) pieces from one or several server batches, in row order
            if len(self.outputs) == 1:   # (the usual: one server batch held the whole group)
                return _resolved(self.outputs[0][1])
            pieces = [_resolved(piece) for _, piece in sorted(self.outputs, key=lambda item: item[0])]
            return pieces[0] if len(pieces) == 1 else concatenate_outputs(pieces)
        return self.outputs

    def part(self, start: int, end: int):
        """Requests start:end: a list slice, or a batch's rows (views; the batch itself when whole)."""
        if not self.is_batch:
            return self.requests[start:end]
        return self.requests if start == 0 and end == len(self.requests) else self.requests.slice(start, end)


class _Part:
    """Requests start:end of a group, waiting in the queue or in one batch."""

    __slots__ = ("group", "start", "end")

    def __init__(self, group: _Group, start: int, end: int):
        self.group, self.start, self.end = group, start, end


class BatchingEvaluator:
    """Batches positions submitted from many threads for one :class:`NNEvaluator` (see the module docstring).

    ``evaluate_many(requests)`` evaluates one caller's positions (kept together in one batch
    when they fit), ``evaluate(request)`` one position, ``submit(request)`` returns a Future.
    Cache hits are answered at once. Use as a context manager, or call :meth:`close`.

    On the CPU there are by default at least as many server threads as cores: PyTorch's
    single-threaded kernels side by side beat one multi-threaded call (see
    ``katacli.nn.evaluator.CPU_THREADS_PER_EVALUATION``).
    """

    def __init__(self, evaluator, max_batch_size: int = 64, max_wait_ms: float = 1.0,
                 num_server_threads: int = 1, clients: Optional[BatchClients] = None,
                 server_per_cpu_core: bool = True, pad_mixed_sizes: Optional[bool] = None):
        """``server_per_cpu_core``: on the CPU, run at least one server thread per core. Self-play turns
        it off: its game threads keep a core busy with Python, and one server makes bigger batches.
        ``pad_mixed_sizes``: run array batches of different board sizes in one network call, padded to
        the largest (:mod:`katacli.nn.mixed_sizes`); None: on CUDA only, where a bigger batch is cheaper
        than the padding."""
        self.evaluator = evaluator
        self.max_batch_size = max(1, int(max_batch_size))
        self.max_wait = max(0.0, max_wait_ms) / 1000.0
        device = getattr(evaluator, "device", None)  # stand-in evaluators in tests have none
        if server_per_cpu_core and device is not None and device.type == "cpu":
            num_server_threads = max(num_server_threads, usable_cpu_count())
        self.clients = clients if clients is not None else BatchClients()
        self.clients._listen(self)
        if pad_mixed_sizes is None:
            pad_mixed_sizes = device is not None and device.type == "cuda"
        self.pad_mixed_sizes = bool(pad_mixed_sizes) and hasattr(evaluator, "plan_batch")
        self._canvas = (0, 0)  # the largest input (height, width) padded to so far
        self._cv = threading.Condition(threading.Lock())
        self._pending: deque[_Group] = deque()
        self._pending_requests = 0
        self._in_flight = 0           # parts of groups being evaluated
        self._last_answered: Optional[float] = None  # time.monotonic() of the last batch answered
        self._busy_servers = 0
        self._closed = False
        self.num_batches = 0
        # Seconds the server threads spent evaluating batches (summed over them): against the wall time,
        # how busy the network kept (benchmarks/bench_analysis.py prints it).
        self.busy_seconds = 0.0
        self._threads = [threading.Thread(target=self._serve, name=f"nn-server-{i}", daemon=True)
                         for i in range(max(1, num_server_threads))]
        for thread in self._threads:
            thread.start()

    @property
    def num_server_threads(self) -> int:
        """Threads that take batches off the queue and run them."""
        return len(self._threads)

    def replace_evaluator(self, evaluator) -> None:
        """Run every batch from now on with ``evaluator`` (fully built; e.g. the torch evaluator taking
        over from the numpy one that answered while torch loaded). A batch being run finishes on the
        evaluator it started with: each batch reads it once."""
        with self._cv:
            self.evaluator = evaluator

    def activity(self) -> tuple[bool, Optional[float]]:
        """(whether positions are queued or being run, time.monotonic() of the last batch answered or None)."""
        with self._cv:
            return bool(self._pending or self._in_flight), self._last_answered

    # ---- callers
    def client(self):
        """Context manager: this thread will keep sending positions until it exits (see the module docstring)."""
        return self.clients.registered()

    @property
    def needs_metadata(self) -> bool:
        """Whether the network takes SGF metadata (a human-SL net)."""
        return bool(getattr(self.evaluator, "needs_metadata", False))

    @property
    def model_name(self) -> str:
        return getattr(self.evaluator, "model_name", "")

    def evaluate_many(self, requests: Sequence) -> list[NNOutput]:
        outputs: list = [None] * len(requests)
        missing = []
        for i, request in enumerate(requests):
            cached = self.evaluator.lookup_cache(request)
            if cached is None:
                missing.append(i)
            else:
                outputs[i] = cached
        if missing:
            group = self._enqueue(_Group([requests[i] for i in missing]))
            for i, output in zip(missing, group.wait()):
                outputs[i] = output
        return outputs

    def evaluate(self, request) -> NNOutput:
        return self.evaluate_many([request])[0]

    @property
    def accepts_batches(self) -> bool:
        """Whether callers may use evaluate_batch (see katacli.nn.batch.accepts_batches): only when the
        evaluator it wraps has the array API (stand-ins in tests may take requests only)."""
        return accepts_batches(self.evaluator)

    @property
    def accepts_applied_symmetries(self) -> bool:
        """Whether rows may come already in an orientation (NNBatch.applied_symmetries): when the evaluator
        it wraps takes them (joined batches and padded mixed sizes carry them through)."""
        return bool(getattr(self.evaluator, "accepts_applied_symmetries", False))

    @property
    def default_symmetry(self):
        """The wrapped evaluator's orientation for positions asked without one (None: random)."""
        return getattr(self.evaluator, "default_symmetry", 0)

    def evaluate_batch(self, batch: NNBatch) -> NNBatchOutput:
        """One caller's positions as arrays (a search's leaves: no object per position), batched with
        the other callers' positions of the same board size; the evaluator looks up and fills its cache."""
        if len(batch) == 0:
            return self.evaluator.evaluate_batch(batch)
        return self._enqueue(_Group(batch)).wait()

    def evaluate_batches(self, batches: Sequence[NNBatch]) -> list:
        """Several callers' batches at once (one thread stepping many searches): all are queued together,
        so they share network calls as the batches of as many threads would. Answers in order; a batch
        that failed has its exception in its place."""
        with self._cv:
            if self._closed:
                raise RuntimeError("BatchingEvaluator is closed")
            groups = []
            for batch in batches:
                group = _Group(batch) if len(batch) else None
                groups.append(group)
                if group is not None:
                    self._pending.append(_Part(group, 0, len(batch)))
                    self._pending_requests += len(batch)
            self._cv.notify_all()
        answers: list = []
        for batch, group in zip(batches, groups):
            try:
                answers.append(group.wait() if group is not None else self.evaluator.evaluate_batch(batch))
            except Exception as exc:  # noqa: BLE001 -- that caller's answer is its error
                answers.append(exc)
        return answers

    def submit(self, request) -> "Future[NNOutput]":
        future: Future = Future()
        cached = self.evaluator.lookup_cache(request) if not self._closed else None
        if cached is not None:
            future.set_result(cached)
        else:
            self._enqueue(_Group([request], [future]))
        return future

    def _enqueue(self, group: _Group) -> _Group:
        with self._cv:
            if self._closed:
                raise RuntimeError("BatchingEvaluator is closed")
            self._pending.append(_Part(group, 0, len(group.requests)))
            self._pending_requests += len(group.requests)
            self._cv.notify()
        return group

    def _wake(self) -> None:
        with self._cv:
            self._cv.notify_all()

    # ---- servers
    def _ready(self, now: float) -> tuple[bool, float]:
        """Whether a free server should run the queue now; else how long it may sleep. Lock held."""
        if self._closed or self._pending_requests >= self.max_batch_size:
            return True, 0.0
        free_servers = max(1, len(self._threads) - self._busy_servers)
        clients = self.clients.count
        if clients > 0:
            # Counted in groups, not client threads: a thread stepping 16 searches (an analysis worker, a
            # self-play driver) queues 16 groups at once, so its round alone passes the test and the
            # network runs it without waiting for the other threads. Counting threads instead (wait for
            # every thread's round) made batches bigger (24 -> 30 rows) but analysis slower: 0.80-0.84x
            # visits/s, 64 one-leaf searches on a simulated GPU, AMD EPYC 2 cores, 2026-11-27.
            not_in_flight = max(1, clients - self._in_flight)
            if len(self._pending) >= math.ceil(not_in_flight / free_servers):
                return True, 0.0
            deadline = self._pending[0].group.arrived + CLIENT_WAIT_LIMIT_S
        else:
            deadline = self._pending[0].group.arrived + self.max_wait
        return now >= deadline, deadline - now

    def _take(self, block: bool = True, min_requests: int = 0):
        """The next batch of parts to run; None once closed and drained; with ``block`` False,
        NOT_READY at once where it would wait (the server has a launched call to finish meanwhile), or
        while fewer than ``min_requests`` positions wait (and the queue is short of a full batch)."""
        with self._cv:
            while True:
                if self._pending:
                    ready, sleep = self._ready(time.monotonic())
                    if ready and not block and self._pending_requests < min(min_requests, self.max_batch_size):
                        ready = False
                    if ready:
                        break
                    if not block:
                        return NOT_READY
                    self._cv.wait(sleep)
                elif self._closed:
                    return None
                elif not block:
                    return NOT_READY
                else:
                    self._cv.wait()
            # With several servers free, share the queue among them: one search's leaves on a big
            # board then run on every core at once instead of as one batch on one.
            limit = self.max_batch_size
            free_servers = len(self._threads) - self._busy_servers
            if free_servers > 1 and self.clients.count > 0:
                limit = min(limit, max(1, math.ceil(self._pending_requests / free_servers)))
            batch: list[_Part] = []
            size = 0
            while self._pending and size < limit:
                part = self._pending[0]
                take = min(part.end - part.start, limit - size)
                if take < part.end - part.start:  # split: the rest stays first in the queue
                    self._pending[0] = _Part(part.group, part.start + take, part.end)
                    part = _Part(part.group, part.start, part.start + take)
                else:
                    self._pending.popleft()
                batch.append(part)
                size += take
            self._pending_requests -= size
            self._in_flight += len(batch)
            self._busy_servers += 1
            self.num_batches += 1
            if self._pending:
                self._cv.notify()  # another free server may take the rest now
            return batch

    def _serve(self) -> None:
        try:
            self._serve_batches()
        except BaseException as exc:  # a bug here must not leave callers waiting forever
            with self._cv:
                self._closed = True
                failed = list(self._pending)
                self._pending.clear()
                self._cv.notify_all()
            for group in {id(part.group): part.group for part in failed}.values():
                group.finish(RuntimeError(f"the network server thread failed: {exc!r}"))
            raise

    def _serve_batches(self) -> None:
        # With an evaluator that launches calls (a CUDA net with graphs), a server keeps up to two batches
        # in flight: the next batch is joined, looked up in the cache and launched while the device still
        # runs the last one, whose answers are then postprocessed and handed out. The device then waits
        # for the host's share of a call (joining, cache, postprocessing: ~1 ms a call of 25 rows on
        # 2 cores) only when no batch is ready.
        launched: Optional[_Launched] = None
        busy_since: Optional[float] = None
        try:
            while True:
                batch = self._take() if launched is None else self._take_beside(launched)
                if batch is NOT_READY or batch is None:
                    if launched is None:
                        return
                    self._deliver_launched(launched)
                    launched = None
                    self._count_busy(busy_since)
                    busy_since = None
                    continue
                if busy_since is None:
                    busy_since = time.perf_counter()
                evaluator = self.evaluator  # one evaluator for the whole batch (see replace_evaluator)
                members = self._launchable(batch, evaluator)
                if members is None:   # evaluated here and now, after the launched batch (answers in order)
                    if launched is not None:
                        self._deliver_launched(launched)
                        launched = None
                    self._run_batch(batch, evaluator)
                    self._count_busy(busy_since)
                    busy_since = None
                    continue
                if launched is not None and _finished(launched.pending):   # its answers first: no one waits
                    self._deliver_launched(launched)
                    launched = None
                try:
                    pending = evaluator.submit_batch(_joined(members))
                except BaseException as exc:   # that batch's callers get the error
                    pending = exc
                if launched is not None:
                    self._deliver_launched(launched)
                launched = _Launched(batch, members, pending)
        except BaseException as exc:
            if launched is not None:   # its callers must not wait for ever
                self._deliver(launched.parts, None, {}, RuntimeError(f"the network server thread failed: {exc!r}"))
            raise

    def _take_beside(self, launched: "_Launched"):
        """A batch to launch while the launched call runs: one at least as big as it (a smaller one would
        cost the device a call's fixed time for fewer positions), taken as soon as there is one;
        NOT_READY (or None, closed) once the launched call has finished first."""
        rows_in_flight = sum(len(rows) for _, rows in launched.members)
        while True:
            batch = self._take(block=False, min_requests=rows_in_flight)
            if batch is not NOT_READY or _finished(launched.pending):
                return batch
            with self._cv:   # new callers' parts wake it; the device's end is polled
                self._cv.wait(LAUNCHED_POLL_S)

    def _deliver_launched(self, launched: "_Launched") -> None:
        """Wait for a launched call and hand its answers (or its error) to its callers."""
        self._deliver(launched.parts, None, partial(_launched_outputs, launched), None)

    def _count_busy(self, busy_since: Optional[float]) -> None:
        """Add the time since busy_since to busy_seconds: the server goes idle."""
        if busy_since is not None:
            with self._cv:
                self.busy_seconds += time.perf_counter() - busy_since

    def _launchable(self, batch: list, evaluator) -> Optional[list]:
        """[(part, rows)] of a batch that can go to the device as one launched call (an evaluator that
        launches calls, array parts of one board size and settings), else None."""
        if not (getattr(evaluator, "launches_async", False) and hasattr(evaluator, "submit_batch")):
            return None
        members, key = [], None
        for part in batch:
            if not part.group.is_batch:
                return None
            rows = part.group.part(part.start, part.end)
            part_key = _join_key(rows)
            if key is not None and part_key != key:
                return None
            key = part_key
            members.append((part, rows))
        return members

    def _run_batch(self, batch: list, evaluator) -> None:
        """Evaluate a batch here and now and hand the answers out."""
        request_parts = [part for part in batch if not part.group.is_batch]
        requests = [r for part in request_parts for r in part.group.part(part.start, part.end)]
        outputs: Optional[list] = None
        error: Optional[BaseException] = None
        try:
            if requests:
                outputs = evaluator.evaluate_uncached(requests)
                for request, output in zip(requests, outputs):
                    evaluator.store_cache(request, output)
            batch_outputs = self._evaluate_batch_parts([part for part in batch if part.group.is_batch], evaluator)
        except BaseException as exc:  # every waiting caller gets the error
            error = exc
            batch_outputs = {}
        self._deliver(batch, outputs, batch_outputs, error)

    def _deliver(self, batch: list, outputs: Optional[list], batch_outputs, error: Optional[BaseException]) -> None:
        """Hand a served batch's answers (``batch_outputs`` may be a callable making them, which may raise)
        to its callers, or the error to all of them."""
        if callable(batch_outputs):
            try:
                batch_outputs = batch_outputs()
            except BaseException as exc:  # every waiting caller gets the error
                error, batch_outputs = exc, {}
        done = []
        with self._cv:
            offset = 0
            for part in batch:
                group, count = part.group, part.end - part.start
                if group.is_batch:
                    if id(part) in batch_outputs:
                        group.outputs.append((part.start, batch_outputs[id(part)]))
                elif outputs is not None:
                    group.outputs[part.start:part.end] = outputs[offset:offset + count]
                if not group.is_batch:
                    offset += count
                if error is not None and group.error is None:
                    group.error = error
                group.unserved -= count
                if group.unserved == 0:
                    done.append(group)
            self._in_flight -= len(batch)
            self._last_answered = time.monotonic()
            self._busy_servers -= 1
            if self._pending:
                self._cv.notify()
        for group in done:
            group.finish()

    def _evaluate_batch_parts(self, parts: list, evaluator) -> dict:
        """Array parts of one server batch -> {id(part): its NNBatchOutput}: parts that can share a network
        call (same board, same settings) are joined into one NNBatch and evaluated together."""
        joined: dict[tuple, list] = {}
        for part in parts:
            rows = part.group.part(part.start, part.end)
            joined.setdefault(_join_key(rows), []).append((part, rows))
        # One network call per setting, whatever the board size, when padding is on; else per size too.
        calls: dict[tuple, list] = {}
        for key, members in joined.items():
            calls.setdefault(key[3:] if self.pad_mixed_sizes else key, []).append(members)
        results = {}
        for sizes in calls.values():
            combined = [_joined(members) for members in sizes]
            if len(combined) > 1:
                # Pad to the largest shape seen so far: a GPU then sees few input shapes (few CUDA graphs).
                height = max([self._canvas[0]] + [b.spatial.shape[2] for b in combined])
                width = max([self._canvas[1]] + [b.spatial.shape[3] for b in combined])
                self._canvas = (height, width)
                answers = evaluate_mixed(evaluator, combined, self._canvas)
            else:
                answers = [evaluator.evaluate_batch(combined[0])]
            for members, answer in zip(sizes, answers):
                results.update(_answers_by_part(members, answer))
        return results

    # ---- lifetime
    def close(self) -> None:
        """Serve what is queued, then stop the server threads."""
        with self._cv:
            if self._closed:
                return
            self._closed = True
            self._cv.notify_all()
        for thread in self._threads:
            thread.join()
        self.clients._forget(self)

    def __enter__(self) -> "BatchingEvaluator":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Launched:
    """A batch a server launched: its parts, their (part, rows), and the pending answer (a PendingBatch,
    or the exception that stopped the launch)."""

    __slots__ = ("parts", "members", "pending")

    def __init__(self, parts: list, members: list, pending):
        self.parts, self.members, self.pending = parts, members, pending


def _launched_outputs(launched: _Launched) -> dict:
    """{id(part): its rows of the answer} of a launched call, waiting for it; raises its error."""
    if isinstance(launched.pending, BaseException):
        raise launched.pending
    return _answers_by_part(launched.members, launched.pending.result())


def _joined(members: list) -> NNBatch:
    """The rows of [(part, rows)] as one batch (the rows themselves when there is one member)."""
    return members[0][1] if len(members) == 1 else join_batches([rows for _, rows in members])


class _Rows:
    """Rows start:end of a server batch's answer, cut out by the caller that waits for them (_resolved):
    the server thread, which every caller waits on, only hands them out."""

    __slots__ = ("answer", "start", "end")

    def __init__(self, answer: NNBatchOutput, start: int, end: int):
        self.answer, self.start, self.end = answer, start, end


def _resolved(piece) -> NNBatchOutput:
    return output_rows(piece.answer, piece.start, piece.end) if type(piece) is _Rows else piece


def _answers_by_part(members: list, answer) -> dict:
    """{id(part): its rows of ``answer``} (an NNBatchOutput, or the _Rows to cut), the answer to
    _joined(members)."""
    if len(members) == 1:
        return {id(members[0][0]): answer}
    results, start = {}, 0
    for part, rows in members:
        end = start + len(rows)
        results[id(part)] = _Rows(answer, start, end)
        start = end
    return results


def _finished(pending) -> bool:
    """Whether a launched call (a PendingBatch, or the exception that stopped its launch) is over."""
    done = getattr(pending, "done", None)
    return done is None or bool(done())


def _join_key(rows: NNBatch) -> tuple:
    """What batches must share to be joined into one network call: board, input shape, settings."""
    return (rows.board_x, rows.board_y, rows.spatial.shape[1:], rows.policy_temperature,
            rows.enable_passing_hacks, rows.symmetry, rows.cache_keys is None, rows.meta is None)


def join_batches(batches: list) -> NNBatch:
    """Several NNBatches of one board size and settings as one (their rows in order)."""
    first = batches[0]

    def cat(name: str):
        arrays = [getattr(b, name) for b in batches]
        return None if arrays[0] is None else np.concatenate(arrays)

    applied = None
    if any(b.applied_symmetries is not None for b in batches):
        applied = np.concatenate([b.applied_symmetries if b.applied_symmetries is not None
                                  else np.full(len(b), -1, np.int8) for b in batches])
    return NNBatch(cat("spatial"), cat("global_features"), cat("legal_mask"), first.board_x, first.board_y,
                   cat("white_to_move"), cat("policy_optimism"), cat("include_ownership"), first.policy_temperature,
                   first.enable_passing_hacks, cat("cache_keys"), cat("meta"), first.symmetry, applied)


def output_rows(output: NNBatchOutput, start: int, end: int) -> NNBatchOutput:
    """Rows start:end of an answer (views: the arrays stay read-only)."""
    rows = slice(start, end)
    return NNBatchOutput(
        values=output.values[rows], policy=output.policy[rows], policy_pass=output.policy_pass[rows],
        ownership=None if output.ownership is None else output.ownership[rows],
        ownership_rows=output.ownership_rows[rows], symmetry=output.symmetry[rows],
        policy_optimism=output.policy_optimism[rows], board_x=output.board_x, board_y=output.board_y)
