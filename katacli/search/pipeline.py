"""Two leaf batches of one search in flight: the network evaluates one while the tree collects the other.

A search that waits for each batch leaves the GPU idle while the CPU descends the tree, stores the
answers and backs them up, and the CPU idle while the GPU runs. Pipelined, the tree keeps two lanes of
waiting leaves (``SearchTree(num_lanes=2)``): one lane's batch is evaluated on a worker thread while the
search thread collects the other's, and the first batch's answers are stored as soon as the second is
on its way. The leaves of the lane in flight stay pending with their virtual losses, exactly as the
leaves of one batch do for each other, so numSearchThreads keeps KataGo's meaning, the number of
leaves in flight (one per search thread there), split over the two lanes.

Chosen with the searchPipelining key: true, false, or auto (the default, :func:`auto_pipelining`). It is
meant for a network on a GPU: on the CPU the network and the tree compete for the same cores. Where the
evaluator can queue a batch and return (a CUDA net with graphs: ``NNEvaluator.submit_batch``, the device
runner's ``launch``) the search thread launches a lane's batch, collects the other lane while the GPU
runs, then waits for the first and stores it: one Python thread, the GPU's work overlapped. Elsewhere a
worker thread evaluates the lane in flight (on an H100 on 2026-11-26 that version lost below 128 leaves
and tied above: its Python and the search's contend for the GIL). numSearchThreads = 1 never pipelines:
KataGo's sequential search exactly.

Measured with the launching version (H100, 16-core Xeon, ``kata benchmark`` 3,200 visits, 19x19,
2026-11-27), pipelined against one batch at a time at the same numSearchThreads: b18c384nbt (18.9 GFLOP a
position; the GPU is the bottleneck) 128 leaves 8,541 / 5,902 visits/s (1.45x), 256 leaves 9,937 / 5,854
(1.70x), 90% of the network's own evaluations/s at the lanes' batch size; g170-b6c96 (0.7 GFLOP; its
search is CPU-bound) 64 leaves 9,828 / 12,177 (0.81x), 128 0.85x, 256 0.70x. Hence ``auto``. Caveat:
those runs were ~1 s each, and a pipelined search's second device lane recorded its CUDA graphs inside
them (a graph per batch size and lane, on first use). Rerun later that day with both lanes' graphs
recorded before timing (runs of 0.4-0.6 s, one each): g170-b6c96 64 leaves 15,349 / 15,199 (1.01x),
128 15,282 / 17,223 (0.89x), 256 24,711 / 21,543 (1.15x); on a simulated GPU of g170's cost on the
2-core development host 1.27x at 128 and 1.31x at 256. Too scattered to pipeline small nets by default
yet: longer, repeated runs on a GPU decide (benchmarks/gpu_check.sh says how).
"""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Optional

from katacli.nn.batch import accepts_batches

# Lanes of leaves a pipelined tree keeps (the core's MAX_LANES).
PIPELINE_LANES = 2
# Worker threads evaluating batches, shared by every pipelined search of the process: each search has
# at most one batch on a worker at a time, so this many searches run side by side without waiting.
EVAL_WORKERS = 8

_pool: Optional[ThreadPoolExecutor] = None
_pool_lock = threading.Lock()


def _eval_pool() -> ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=EVAL_WORKERS, thread_name_prefix="katacli-eval")
        return _pool


# searchPipelining = auto pipelines a search whose network runs launched on a GPU (launches_async) when a
# position costs the network at least this many floating-point operations on the board searched (b18c384nbt:
# 18.9 GFLOP on 19x19, 8.8 on 13x13; b10c384nbt 10.5 and b20c256 16.8 on 19x19; g170-b6c96 0.7) ...
AUTO_MIN_FLOPS_PER_POSITION = 10.0e9
# ... and each lane still holds a batch the GPU runs near its best (batches of 64+ on the H100 above;
# small batches are latency-bound, where halving them halves the throughput).
AUTO_MIN_LANE_LEAVES = 32


def auto_pipelining(evaluator, launches_async: bool, num_search_threads: int, board_area: int) -> bool:
    """searchPipelining = auto: whether the GPU, not the search, is the likely bottleneck (see above)."""
    flops_per_point = getattr(evaluator, "flops_per_point", None)
    return (launches_async and flops_per_point is not None
            and flops_per_point * board_area >= AUTO_MIN_FLOPS_PER_POSITION
            and lane_capacity(num_search_threads, PIPELINE_LANES) >= AUTO_MIN_LANE_LEAVES)


def pipelining_applies(evaluator, human_evaluator, num_search_threads: int) -> bool:
    """Whether a search asked to pipeline can: a network with the array path (not rollouts), no human-SL net
    (its leaves go as requests), at least one leaf per lane."""
    return (evaluator is not None and human_evaluator is None and accepts_batches(evaluator)
            and num_search_threads >= PIPELINE_LANES)


def lane_capacity(num_search_threads: int, lanes: int) -> int:
    """Leaves per lane: numSearchThreads split over the lanes (rounded up)."""
    return max(1, -(-int(num_search_threads) // lanes))


@dataclass
class _InFlight:
    lane: int
    leaves: int
    future: object   # a Future (worker) or a PendingBatch (launched on the device)


class LanePipeline:
    """One search's two lanes (see the module docstring). The search thread calls, in a loop:
    ``collect_lane`` (the lane to collect into, with the tree locked), then ``submit(n)`` for what it
    collected, which also stores the answers of the batch sent before; ``finish()`` stores the batch in
    flight at once (nothing more to collect), ``drain()`` at the end stores it, or after an error waits
    for it and gives its leaves up.

    ``prepare(n)`` -> NNBatch or None and ``store(output)`` run with ``lock`` held on the search thread;
    ``evaluate(batch)`` runs on a worker. A batch that fails is given up (``tree.abandon``)."""

    def __init__(self, tree, lock, prepare: Callable, evaluate: Callable, store: Callable,
                 launch: Optional[Callable] = None):
        """``launch(batch)``: where the evaluator queues a batch and returns at once (a CUDA net,
        ``NNEvaluator.submit_batch``), it is used instead of a worker: the search thread collects the next
        lane while the GPU runs, without a second Python thread to share the GIL with."""
        self.tree = tree
        self.lock = lock
        self._prepare = prepare
        self._evaluate = evaluate
        self._launch = launch
        self._store = store
        self.collect_lane = 0
        self._in_flight: Optional[_InFlight] = None

    @property
    def busy(self) -> bool:
        return self._in_flight is not None

    @property
    def leaves_in_flight(self) -> int:
        return self._in_flight.leaves if self._in_flight is not None else 0

    def submit(self, n: int) -> bool:
        """Send the n leaves just collected in collect_lane to a worker and store the batch sent before.
        False (nothing sent) where the array path does not apply: the caller evaluates them itself."""
        with self.lock:
            self.tree.select_lane(self.collect_lane)
            batch = self._prepare(n)
        if batch is None:
            return False
        future = self._launch(batch) if self._launch is not None else _eval_pool().submit(self._evaluate, batch)
        previous, self._in_flight = self._in_flight, _InFlight(self.collect_lane, n, future)
        self.collect_lane = (self.collect_lane + 1) % PIPELINE_LANES
        if previous is not None:
            self._finish(previous)
        return True

    def finish(self) -> None:
        """Wait for the batch in flight and store its answers."""
        in_flight, self._in_flight = self._in_flight, None
        if in_flight is not None:
            self.collect_lane = in_flight.lane
            self._finish(in_flight)

    def drain(self, failed: bool) -> None:
        """End of the search: store the batch in flight, or (failed) let it end and give every waiting
        leaf up (the lane in flight and one collected but not sent)."""
        if not failed:
            self.finish()
            return
        in_flight, self._in_flight = self._in_flight, None
        if in_flight is not None:
            _wait_quietly(in_flight.future)
        with self.lock:
            self.tree.abandon_all()

    def _finish(self, in_flight: _InFlight) -> None:
        try:
            output = in_flight.future.result()
        except BaseException:
            _wait_quietly(in_flight.future)   # interrupted while waiting: the worker still reads the lane
            with self.lock:
                self.tree.select_lane(in_flight.lane)
                self.tree.abandon()
            raise
        with self.lock:
            self.tree.select_lane(in_flight.lane)
            try:
                self._store(output)
            except BaseException:
                self.tree.abandon()
                raise


def _wait_quietly(future) -> None:
    """Wait until a worker's (or the device's) batch has ended, however it ended (a second Ctrl-C included)."""
    settle = getattr(future, "settle", None)
    if settle is not None:   # a launched batch (NNEvaluator.submit_batch): the device finishes, its lane freed
        while True:
            try:
                settle()
                return
            except BaseException:
                pass
    while not future.done():
        try:
            wait([future])
        except BaseException:
            pass
