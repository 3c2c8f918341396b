"""Measure several thread counts on the same positions with the same network (`kata benchmark`, `kata genconfig`).

The network's batch limit follows the thread count being measured, as KataGo's benchmark assumes: by
default the limit `kata gtp` would use for that many threads (never smaller than the batches a search
makes), or half the threads (``--half-batch-size``), or a fixed size (``--fixed-batch-size``).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional, Sequence

from katacli.search.speed_benchmark import BenchmarkResult, benchmark_params, run_benchmark
from katacli.tuning.network import engine_batch_size
from katacli.tuning.noise import MAX_REMEASURES, NOISY_SPREAD, relative_spread
from katacli.tuning.recommend import AUTOTUNE_INITIAL_MAX_THREADS, AutotuneRound, autotune_threads

# KataGo's bounds for --fixed-batch-size.
MAX_FIXED_BATCH_SIZE = 65536


@dataclass(frozen=True)
class BatchSizePolicy:
    """How big the network's batches may be while a given number of threads is measured."""

    fixed: Optional[int] = None
    half: bool = False

    def __post_init__(self) -> None:
        if self.fixed is not None and not 1 <= self.fixed <= MAX_FIXED_BATCH_SIZE:
            raise ValueError(f"Invalid value for fixed batch size: {self.fixed} (must be 1 to {MAX_FIXED_BATCH_SIZE})")
        if self.fixed is not None and self.half:
            raise ValueError("Cannot specify both fixed batch size and use half batch size")

    def size_for(self, num_threads: int) -> int:
        if self.fixed is not None:
            return self.fixed
        if self.half:
            return (num_threads + 1) // 2
        return engine_batch_size(num_threads)

    def describe(self) -> str:
        if self.fixed is not None:
            return f"nnMaxBatchSize fixed at {self.fixed}"
        if self.half:
            return "nnMaxBatchSize = half the number of threads"
        return "nnMaxBatchSize as `kata gtp` sets it by default (at least the number of threads)"


class Benchmarker:
    """Runs the benchmark for one thread count at a time; remembers nothing between counts."""

    def __init__(self, positions: Sequence, params, evaluator, visits: int, *,
                 batch_policy: BatchSizePolicy = BatchSizePolicy(), seed: Optional[int] = None,
                 on_progress: Optional[Callable[[BenchmarkResult], None]] = None,
                 on_result: Optional[Callable[[BenchmarkResult], None]] = None, human_evaluator=None,
                 on_noise: Optional[Callable[[BenchmarkResult, float], None]] = None, remeasure_noisy: bool = True):
        """``remeasure_noisy``: search a count again when its per-position speeds scatter against the
        baseline's (a busy CPU); off on a quiet GPU, whose noise is judged by timing batches instead
        (:mod:`katacli.tuning.gpu_curve`)."""
        self.positions = list(positions)
        self.params = params
        self.evaluator = evaluator
        self.human_evaluator = human_evaluator
        self.visits = visits
        self.batch_policy = batch_policy
        self.seed = seed
        self.on_progress = on_progress
        self.on_result = on_result
        self.on_noise = on_noise
        self.remeasure_noisy = remeasure_noisy
        self.baseline: Optional[BenchmarkResult] = None  # the first count measured

    def measure(self, num_threads: int) -> BenchmarkResult:
        """Search the positions with ``num_threads``; again (up to MAX_REMEASURES times) while the speeds
        compared with the baseline's, position by position, scatter more than NOISY_SPREAD."""
        result = self._search_positions(num_threads)
        if self.baseline is None:
            self.baseline = result
        else:
            base = self.baseline.position_speeds
            while self.remeasure_noisy and result.remeasured < MAX_REMEASURES:
                spread = relative_spread(result.position_speeds, base * (result.remeasured + 1))
                if spread <= NOISY_SPREAD:
                    break
                if self.on_noise is not None:
                    self.on_noise(result, spread)
                result = result.merged(self._search_positions(num_threads))
        if self.on_result is not None:
            self.on_result(result)
        return result

    def _search_positions(self, num_threads: int, params=None) -> BenchmarkResult:
        """The positions searched once with ``num_threads`` (``params``: instead of the benchmark's own)."""
        for evaluator in (self.evaluator, self.human_evaluator):
            if evaluator is not None:
                evaluator.max_batch_size = self.batch_policy.size_for(num_threads)
        params = benchmark_params(self.params if params is None else params, self.visits, num_threads)
        return run_benchmark(self.positions, params, self.evaluator, on_progress=self.on_progress, seed=self.seed,
                             human_evaluator=self.human_evaluator)

    def measure_variant(self, num_threads: int, **param_changes) -> BenchmarkResult:
        """Search the positions with ``num_threads`` and SearchParams fields changed (e.g. search_pipelining),
        once; ``on_result`` is not called (the caller reports a variant its own way)."""
        return self._search_positions(num_threads, self.params.replace(**param_changes))

    def run_thread_counts(self, thread_counts: Sequence[int]) -> list[BenchmarkResult]:
        """Each count in the order given (the first is the baseline of the Elo comparison)."""
        return [self.measure(threads) for threads in thread_counts]

    def autotune(self, seconds_per_move: float, on_round: Optional[Callable[[AutotuneRound], None]] = None,
                 max_threads: int = AUTOTUNE_INITIAL_MAX_THREADS) -> list[BenchmarkResult]:
        """Search for the best count (see :func:`katacli.tuning.recommend.autotune_threads`); ``max_threads``:
        the first range's ceiling (on a GPU, from its throughput curve)."""
        return autotune_threads(self.measure, seconds_per_move, on_round=on_round, max_threads=max_threads)


# KataGo refuses more search threads than this.
MAX_THREADS_PER_SEARCH = 4096


def parse_thread_list(text: str) -> list[int]:
    """``-t 1,2,4``: positive integers separated by commas (blank entries are skipped). ValueError otherwise."""
    counts = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            continue
        try:
            value = int(piece)
        except ValueError:
            raise ValueError(f"Number of threads to use: invalid value: {piece!r} is not a whole number") from None
        if not 1 <= value <= MAX_THREADS_PER_SEARCH:
            raise ValueError(f"Number of threads to use: invalid value: {piece} "
                             f"(must be 1 to {MAX_THREADS_PER_SEARCH})")
        counts.append(value)
    if not counts:
        raise ValueError("Must specify at least one valid value for -threads, e.g. -t 1,2,4,8")
    return counts
