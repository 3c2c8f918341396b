"""What the GPU itself can do, for `kata benchmark` and `kata genconfig` on a GPU.

On a CPU, noise comes from other programs taking the processor, and comparing the per-position speeds
of two thread counts shows it (:mod:`katacli.tuning.noise`). On a GPU that comparison misfires: the
positions of one count legitimately differ in how batches form (tree shapes, cache hits), so their
ratios scatter by 40% on an idle machine and every count would be searched three times. What a GPU
does is run batches, so its noise is judged by timing batches: the network alone, on blank positions,
a few times at each batch size. An idle GPU repeats a batch's time within a few percent; a GPU shared
with another process does not.

The same timings give the network's throughput curve (evaluations/s by batch size). A search cannot
go faster than the network at its batch size, and past the curve's knee bigger batches buy little, so
the knee bounds the thread counts worth trying.
"""
from __future__ import annotations

import statistics
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence

import numpy as np

from katacli.nn.device_runner import GRAPH_BUCKETS
from katacli.tuning.network import is_gpu

# Timed calls per batch size, after one untimed call (which captures the CUDA graph).
CURVE_REPEATS = 6
# The largest batch measured; the search's batches are at most numSearchThreads.
CURVE_MAX_BATCH = 1024
# Batch timings that spread more than this (interquartile range / median) mean the GPU is shared.
GPU_NOISY_SPREAD = 0.10
# The knee: the smallest batch reaching this share of the curve's best evaluations/s.
KNEE_SHARE_OF_PEAK = 0.85
# Thread counts tried by automatic tuning reach this multiple of the knee.
KNEE_THREAD_HEADROOM = 2


@dataclass(frozen=True)
class CurvePoint:
    batch: int
    evals_per_second: float
    spread: float  # interquartile range of the batch's times over their median


@dataclass(frozen=True)
class GpuCurve:
    board: tuple[int, int]
    points: tuple[CurvePoint, ...]

    @property
    def noise(self) -> float:
        """The GPU's timing noise: the median over batch sizes of their times' spread. (Not the worst: the
        smallest batches take a fraction of a millisecond, where the host's own jitter shows; on an idle
        H200 with g170-b6c96 one size spread by 16% while the GPU had nothing else to do.)"""
        return statistics.median([p.spread for p in self.points]) if self.points else 0.0

    @property
    def is_noisy(self) -> bool:
        return self.noise > GPU_NOISY_SPREAD

    @property
    def peak(self) -> CurvePoint:
        return max(self.points, key=lambda p: p.evals_per_second)

    def knee(self) -> int:
        """The smallest batch whose throughput is within KNEE_SHARE_OF_PEAK of the best."""
        target = KNEE_SHARE_OF_PEAK * self.peak.evals_per_second
        return min(p.batch for p in self.points if p.evals_per_second >= target)

    def autotune_max_threads(self) -> int:
        return KNEE_THREAD_HEADROOM * self.knee()

    def lines(self) -> list[str]:
        x, y = self.board
        row = ", ".join(f"{p.batch}: {p.evals_per_second:,.0f}" for p in self.points)
        return [f"The network alone on this GPU ({x}x{y}, evaluations/s by batch size): {row}",
                f"  throughput levels off from batch {self.knee()} (within {KNEE_SHARE_OF_PEAK:.0%} of the best); "
                f"batch timings repeat within {self.noise:.1%}"
                + (" -- the GPU looks shared with other work: figures will be noisy" if self.is_noisy else "")]


def timing_spread(seconds: Sequence[float]) -> float:
    """(Q3 - Q1) / median of a batch's repeated times (0 for fewer than two)."""
    if len(seconds) < 2:
        return 0.0
    middle = statistics.median(seconds)
    if middle <= 0:
        return 0.0
    q1, _, q3 = statistics.quantiles(seconds, n=4)
    return (q3 - q1) / middle


def curve_batches(max_batch: int) -> list[int]:
    return [b for b in GRAPH_BUCKETS if b <= max_batch]


def measure_gpu_curve(evaluator, board_x: int, board_y: int, max_batch: int = CURVE_MAX_BATCH,
                      repeats: int = CURVE_REPEATS, clock=time.perf_counter) -> Optional[GpuCurve]:
    """Time the evaluator's network on blank positions at each batch size up to ``max_batch``; None off a GPU."""
    if not is_gpu(evaluator):
        return None
    runner = evaluator.runner
    points = []
    with _buckets_up_to(runner, max_batch):   # graph buckets up to the largest batch measured
        for batch in curve_batches(max_batch):
            inputs = _blank_inputs(evaluator, batch, board_x, board_y)
            # Untimed: records the graph, on every lane for the sizes a pipelined search's lane can reach
            # (half the largest thread count tried; it keeps a call in flight per lane), so that no timed
            # search pays for a capture. The largest sizes only on one lane: each lane's graphs hold memory.
            if batch <= max_batch // 2:
                runner.capture_lanes(*inputs, True)
            else:
                runner(*inputs, True)
            seconds = []
            for _ in range(repeats):
                start = clock()
                runner(*inputs, True)
                seconds.append(clock() - start)
            points.append(CurvePoint(batch, batch / max(statistics.median(seconds), 1e-9), timing_spread(seconds)))
    return GpuCurve((board_x, board_y), tuple(points))


def record_graphs(evaluator, board_x: int, board_y: int, max_batch: int) -> list[int]:
    """Record the network's CUDA graph of every batch size up to ``max_batch`` on every device lane, on
    blank positions, so that no timed run pays for a capture (and for cuDNN's choice of algorithms at a
    new shape: on a big net seconds in all); the sizes recorded, [] off a GPU or without graphs."""
    if not is_gpu(evaluator) or not getattr(evaluator.runner, "cuda_graphs", False):
        return []
    batches = curve_batches(max_batch)
    with _buckets_up_to(evaluator.runner, max_batch):
        for batch in batches:
            evaluator.runner.capture_lanes(*_blank_inputs(evaluator, batch, board_x, board_y), True)
    return batches


@contextmanager
def _buckets_up_to(runner, max_batch: int) -> Iterator[None]:
    """The runner's graph buckets reach max_batch meanwhile (its own max batch size restored after)."""
    saved_max = runner.max_batch_size
    runner.max_batch_size = max(saved_max, max_batch)
    try:
        yield
    finally:
        runner.max_batch_size = saved_max


def _blank_inputs(evaluator, batch: int, board_x: int, board_y: int) -> tuple:
    """(spatial, global features, metadata or None) of ``batch`` empty boards."""
    from katacli.nn.description import NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7

    spatial = np.zeros((batch, NUM_SPATIAL_FEATURES_V7, board_y, board_x), np.float32)
    spatial[:, 0] = 1.0   # feature 0: on the board
    return spatial, np.zeros((batch, NUM_GLOBAL_FEATURES_V7), np.float32), _blank_meta(evaluator, batch)


def _blank_meta(evaluator, batch: int) -> Optional[np.ndarray]:
    if not evaluator.needs_metadata:
        return None
    encoder = evaluator.net.trunk.metadata_encoder
    return np.zeros((batch, encoder.layer1.in_features), np.float32)
