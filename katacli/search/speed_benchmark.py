"""Search a fixed set of positions with one setting and measure the speed: the benchmark's core.

Used by `kata benchmark`, `kata genconfig` (thread tuning) and the GTP command ``kata-benchmark``, so the
three measure the same thing and print the same line::

    numSearchThreads =  8: 10 / 10 positions, visits/s = 512.30 nnEvals/s = 480.12 nnBatches/s = 61.20
    avgBatchSize = 7.85 (15.6 secs)

(one line). Every position gets a fresh search (no tree reuse) and an empty network cache, as in KataGo,
so the figures measure search and network speed, not cache hits. ``nnEvals`` counts positions the
network actually evaluated.
"""
from __future__ import annotations

import dataclasses
import statistics
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

# KataGo's stand-ins for "no limit" on playouts and time.
UNLIMITED_PLAYOUTS = 1 << 50
UNLIMITED_SECONDS = 1.0e20
# Divisions by a zero duration (a stopped or empty run) use this instead.
MIN_SECONDS = 1e-9


@dataclass
class BenchmarkResult:
    """What searching the positions with one number of threads measured."""

    num_threads: int
    total_positions: int
    positions_searched: int = 0
    total_visits: int = 0
    total_seconds: float = 0.0
    nn_evals: int = 0
    nn_batches: int = 0
    max_batch_size: Optional[int] = None  # the network's batch limit during the run (None: no network)
    position_speeds: list = field(default_factory=list)  # visits/s of each position searched, in order
    remeasured: int = 0  # how many times the positions were searched again because the figures were noisy
    pipelined: bool = False  # two batches of numSearchThreads / 2 leaves in flight (searchPipelining)

    @property
    def seconds(self) -> float:
        return max(self.total_seconds, MIN_SECONDS)

    @property
    def visits_per_second(self) -> float:
        return self.total_visits / self.seconds

    @property
    def median_visits_per_second(self) -> float:
        """The median over positions: what the recommendation uses, since a burst of other work on the
        machine slows a few positions, which moves the total but hardly the median."""
        return statistics.median(self.position_speeds) if self.position_speeds else self.visits_per_second

    def merged(self, other: "BenchmarkResult") -> "BenchmarkResult":
        """This run and a repeat of it on the same positions, as one result."""
        return dataclasses.replace(
            self, positions_searched=self.positions_searched + other.positions_searched,
            total_positions=self.total_positions + other.total_positions,
            total_visits=self.total_visits + other.total_visits, total_seconds=self.total_seconds + other.total_seconds,
            nn_evals=self.nn_evals + other.nn_evals, nn_batches=self.nn_batches + other.nn_batches,
            position_speeds=self.position_speeds + other.position_speeds, remeasured=self.remeasured + 1)

    @property
    def nn_evals_per_second(self) -> float:
        return self.nn_evals / self.seconds

    @property
    def nn_batches_per_second(self) -> float:
        return self.nn_batches / self.seconds

    @property
    def average_batch_size(self) -> float:
        return self.nn_evals / self.nn_batches if self.nn_batches else 0.0

    def _head(self) -> str:
        return (f"numSearchThreads = {self.num_threads:2d}: {self.positions_searched} / {self.total_positions}"
                f" positions, visits/s = {self.visits_per_second:.2f}")

    def progress_line(self) -> str:
        """The line while positions are still being searched."""
        return f"{self._head()} ({self.total_seconds:.1f} secs)"

    def summary_line(self, elo_diff: Optional[float] = None, is_baseline: bool = False) -> str:
        """KataGo's result line; with ``elo_diff`` / ``is_baseline`` the Elo comparison is appended."""
        line = (f"{self._head()} nnEvals/s = {self.nn_evals_per_second:.2f}"
                f" nnBatches/s = {self.nn_batches_per_second:.2f} avgBatchSize = {self.average_batch_size:.2f}"
                f" ({self.total_seconds:.1f} secs)")
        if is_baseline:
            line += " (EloDiff baseline)"
        elif elo_diff is not None:
            line += f" (EloDiff {elo_diff:+.0f})"
        if self.pipelined:
            line += " (pipelined: two batches in flight)"
        return line

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        data.update(visits_per_second=self.visits_per_second, median_visits_per_second=self.median_visits_per_second,
                    nn_evals_per_second=self.nn_evals_per_second,
                    nn_batches_per_second=self.nn_batches_per_second, average_batch_size=self.average_batch_size)
        return data


def benchmark_params(params, visits: int, num_threads: Optional[int] = None, *, full_search_after_passes: bool = True):
    """``params`` set up for a benchmark search: exactly ``visits`` visits, no time or playout limit;
    ``num_threads`` replaces numSearchThreads when given. ``full_search_after_passes`` also turns off the
    shorter searches after a pass (`kata benchmark` does, the GTP command ``kata-benchmark`` does not)."""
    changes: dict = dict(max_visits=visits, max_playouts=UNLIMITED_PLAYOUTS, max_time=UNLIMITED_SECONDS)
    if full_search_after_passes:
        changes.update(search_factor_after_one_pass=1.0, search_factor_after_two_pass=1.0)
    if num_threads is not None:
        changes["num_search_threads"] = num_threads
    return params.replace(**changes)


def _network_counters(evaluator) -> tuple[int, int]:
    return getattr(evaluator, "num_positions_evaluated", 0), getattr(evaluator, "num_batches", 0)


def _clear_cache(evaluator) -> None:
    cache = getattr(evaluator, "cache", None)
    if cache is not None:
        cache.clear()


def run_benchmark(positions: Sequence, params, evaluator, *, stop: Optional[threading.Event] = None,
                  on_progress: Optional[Callable[[BenchmarkResult], None]] = None,
                  seed: Optional[int] = None, human_evaluator=None) -> BenchmarkResult:
    """Search every position once with ``params`` (already set up by :func:`benchmark_params`).

    ``evaluator``: an NNEvaluator, or None for the rollout engine; ``human_evaluator``: a human-SL net
    searched beside it (-human-model; its evaluations are not counted in nn_evals). ``on_progress(result)`` is called after
    each position with the totals so far; ``stop`` ends the run after the current position.
    """
    from katacli.search import Searcher

    result = BenchmarkResult(num_threads=params.num_search_threads, total_positions=len(positions),
                             max_batch_size=getattr(evaluator, "max_batch_size", None))
    for state in positions:
        if stop is not None and stop.is_set():
            break
        _clear_cache(evaluator)
        _clear_cache(human_evaluator)
        evals_before, batches_before = _network_counters(evaluator)
        searcher = Searcher(state, params, evaluator, seed=seed, human_evaluator=human_evaluator)
        stats = searcher.run(stop_event=stop)
        result.pipelined = searcher.pipelined
        evals_after, batches_after = _network_counters(evaluator)
        if evaluator is not None and not hasattr(evaluator, "num_positions_evaluated"):
            # A network front end without counters: count what the search sent it.
            evals_after, batches_after = evals_before + stats.leaves_evaluated, batches_before + stats.batches
        result.positions_searched += 1
        result.position_speeds.append(stats.visits / max(stats.seconds, MIN_SECONDS))
        result.total_visits += stats.visits
        result.total_seconds += stats.seconds
        result.nn_evals += evals_after - evals_before
        result.nn_batches += batches_after - batches_before
        if on_progress is not None:
            on_progress(result)
    return result


def gtp_benchmark_line(params, evaluator, visits: int, board_len: int, stop: Optional[threading.Event] = None,
                       seed: Optional[int] = None) -> str:
    """The answer line of the GTP command ``kata-benchmark VISITS``: the bundled game for the current
    (square) board size, 10 positions, the engine's genmove parameters with the given visits.
    Raises BenchmarkError (a ValueError) for a board size without a bundled game (outside 7..19)."""
    from katacli.search.benchmark_positions import DEFAULT_NUM_POSITIONS, benchmark_positions

    positions = benchmark_positions(board_len, DEFAULT_NUM_POSITIONS)
    params = benchmark_params(params, visits, full_search_after_passes=False)
    result = run_benchmark(positions, params, evaluator, stop=stop, seed=seed)
    return result.summary_line()


# ru_maxrss units: kilobytes on Linux, bytes on macOS.
_RSS_UNITS_PER_MB = 1024.0 * 1024.0 if sys.platform == "darwin" else 1024.0


def peak_resident_mb() -> Optional[float]:
    """This process's peak resident memory in MB (network, torch, search trees), or None where the
    operating system does not report it."""
    try:
        import resource
    except ImportError:  # not on Windows
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / _RSS_UNITS_PER_MB
