"""Which numSearchThreads to recommend: speed gained against search quality lost, in Elo.

More threads (in katacli: more leaves per network batch) make each visit cheaper, but every leaf picked
in parallel is picked with less information than a sequential search would have, so MCTS gets worse.
KataGo weighs the two with a rough model fitted to test matches, which this module uses as well:

* each doubling of visits per second is worth about :data:`ELO_PER_SPEED_DOUBLING` Elo;
* each thread costs about :data:`ELO_COST_PER_THREAD_AT_800_VISITS` Elo in an 800-visit search, less in
  longer searches (about 2 Elo at 5000 visits), because a big tree hides the parallel-pick noise.

The recommended setting maximises gain minus cost for the expected time per move, with two guards
against a busy machine: speeds are the median over positions (a burst of other work slows a few), and
a count with more threads is recommended only when its estimate beats the best one with fewer threads
by more than the measurement noise (:mod:`katacli.tuning.noise`). The model is approximate; it
is a starting point, not a verdict.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Sequence

from katacli.search.speed_benchmark import BenchmarkResult
from katacli.tuning.noise import relative_spread

ELO_PER_SPEED_DOUBLING = 250.0
ELO_COST_PER_THREAD_AT_800_VISITS = 7.0
# The thread cost scales with (2 * PIVOT / (PIVOT + visits per move)) ** DECAY: 1 at PIVOT visits.
THREAD_COST_PIVOT_VISITS = 800.0
THREAD_COST_DECAY_EXPONENT = 0.85
DEFAULT_SECONDS_PER_MOVE = 5.0
# Speeds measured on the same positions disagree by at least this much even on a quiet machine.
MIN_RELATIVE_NOISE = 0.05

# Automatic tuning tries thread counts of the form {1, 3, 5} * 2^k: dense where it matters (few threads),
# sparse where neighbouring counts perform alike.
AUTOTUNE_ODD_FACTORS = (1, 3, 5)
AUTOTUNE_MAX_POWER_OF_TWO = 19
AUTOTUNE_INITIAL_MAX_THREADS = 32
# Raise the ceiling (and search again) while the best count sits in the top third of the range tried.
AUTOTUNE_RAISE_FRACTION = 2.0 / 3.0
AUTOTUNE_CEILING_GROWTH = 2
AUTOTUNE_CEILING_EXTRA = 32
AUTOTUNE_ABSOLUTE_MAX_THREADS = 5000


def thread_cost_elo(num_threads: int, visits_per_move: float) -> float:
    """Search quality lost by using num_threads parallel picks in a search of visits_per_move visits."""
    relative_tree_size = (THREAD_COST_PIVOT_VISITS + visits_per_move) / (2.0 * THREAD_COST_PIVOT_VISITS)
    return num_threads * ELO_COST_PER_THREAD_AT_800_VISITS * relative_tree_size ** -THREAD_COST_DECAY_EXPONENT


def elo_effect(result: BenchmarkResult, seconds_per_move: float) -> float:
    """Net strength of a setting on an absolute scale (only differences between settings mean anything)."""
    speed = max(result.median_visits_per_second, 1e-9)
    gain = ELO_PER_SPEED_DOUBLING * math.log2(speed)
    return gain - thread_cost_elo(result.num_threads, speed * seconds_per_move)


@dataclass(frozen=True)
class Recommendation:
    results: tuple[BenchmarkResult, ...]  # in the order they were measured; the first is the baseline
    seconds_per_move: float
    best_index: int

    @property
    def best(self) -> BenchmarkResult:
        return self.results[self.best_index]

    def elo_vs_baseline(self, index: int) -> float:
        baseline = elo_effect(self.results[0], self.seconds_per_move)
        return elo_effect(self.results[index], self.seconds_per_move) - baseline

    def explanation(self) -> list[str]:
        """The reasoning and one line per setting, as KataGo prints them after a benchmark."""
        lines = [
            "",
            f"Based on some test data, each speed doubling gains perhaps ~{ELO_PER_SPEED_DOUBLING:.0f} Elo by "
            "searching deeper.",
            f"Based on some test data, each thread costs perhaps {ELO_COST_PER_THREAD_AT_800_VISITS:.0f} Elo if "
            f"using 800 visits, and {thread_cost_elo(1, 5000):.0f} Elo if using 5000 visits (by making MCTS worse).",
            f"So APPROXIMATELY based on this benchmark, if you intend to do a {self.seconds_per_move:g} second "
            "search: ",
        ]
        for i, result in enumerate(self.results):
            marker = " (recommended)" if i == self.best_index else ""
            effect = "(baseline)" if i == 0 else f"{self.elo_vs_baseline(i):+5.0f} Elo"
            lines.append(f"numSearchThreads = {result.num_threads:2d}: {effect}{marker}")
        lines.append("")
        return lines

    def to_dict(self) -> dict:
        return {
            "seconds_per_move": self.seconds_per_move,
            "recommended_threads": self.best.num_threads,
            "results": [dict(r.to_dict(), elo_vs_baseline=self.elo_vs_baseline(i))
                        for i, r in enumerate(self.results)],
        }


def noise_margin_elo(result: BenchmarkResult, baseline: BenchmarkResult, noise: float | None = None) -> float:
    """How many Elo of estimated difference the measurement noise of ``result`` could explain. ``noise``:
    a relative noise measured otherwise (a GPU's batch timing); None: the per-position speed scatter."""
    if noise is not None:
        return ELO_PER_SPEED_DOUBLING * math.log2(1.0 + max(noise, MIN_RELATIVE_NOISE))
    repeats = len(result.position_speeds) // max(1, len(baseline.position_speeds))
    spread = relative_spread(result.position_speeds, baseline.position_speeds * max(1, repeats))
    return ELO_PER_SPEED_DOUBLING * math.log2(1.0 + max(spread, MIN_RELATIVE_NOISE))


def recommend(results: Sequence[BenchmarkResult], seconds_per_move: float = DEFAULT_SECONDS_PER_MOVE,
              noise: float | None = None) -> Recommendation:
    """The setting with the best estimated strength, preferring fewer threads unless more are better by
    more than the noise (``noise``: see :func:`noise_margin_elo`); the first result is the baseline others
    compare to."""
    if not results:
        raise ValueError("no benchmark results to recommend from")
    effects = [elo_effect(r, seconds_per_move) for r in results]
    by_threads = sorted(range(len(results)), key=lambda i: (results[i].num_threads, i))
    best = by_threads[0]
    for i in by_threads[1:]:
        if effects[i] > effects[best] + noise_margin_elo(results[i], results[0], noise):
            best = i
    return Recommendation(tuple(results), seconds_per_move, best)


def autotune_candidates() -> list[int]:
    """Every thread count automatic tuning may try, ascending."""
    return sorted({odd << power for odd in AUTOTUNE_ODD_FACTORS for power in range(AUTOTUNE_MAX_POWER_OF_TWO)})


@dataclass
class AutotuneRound:
    """One pass of the search: the candidates it may try (printed before it starts)."""

    candidates: list[int]


def autotune_threads(measure: Callable[[int], BenchmarkResult], seconds_per_move: float,
                     max_threads: int = AUTOTUNE_INITIAL_MAX_THREADS, min_threads: int = 1,
                     on_round: Callable[[AutotuneRound], None] | None = None) -> list[BenchmarkResult]:
    """Home in on the best thread count by ternary search over :func:`autotune_candidates`.

    ``measure(threads)`` runs the benchmark (each count is measured once). Strength against thread count
    is roughly unimodal, though noisy, so a ternary search needs only a handful of measurements. When the
    best count lands near the top of the range, the range grows and the search repeats. Returns every
    measured result, ordered by thread count.
    """
    measured: dict[int, BenchmarkResult] = {}

    def effect(threads: int) -> float:
        if threads not in measured:
            measured[threads] = measure(threads)
        return elo_effect(measured[threads], seconds_per_move)

    all_candidates = autotune_candidates()
    while True:
        candidates = [t for t in all_candidates if min_threads <= t <= max_threads] or [min(all_candidates)]
        if on_round is not None:
            on_round(AutotuneRound(candidates))
        low, high = 0, len(candidates) - 1
        while low <= high:
            third = (high - low) // 3
            first_mid, second_mid = low + third, high - third
            if effect(candidates[first_mid]) < effect(candidates[second_mid]):
                low = first_mid + 1
            else:
                high = second_mid - 1
        best_threads = max(measured, key=lambda t: effect(t))
        if best_threads > AUTOTUNE_RAISE_FRACTION * max_threads and max_threads < AUTOTUNE_ABSOLUTE_MAX_THREADS:
            min_threads = max_threads // 2
            max_threads = max_threads * AUTOTUNE_CEILING_GROWTH + AUTOTUNE_CEILING_EXTRA
            continue
        return [measured[t] for t in sorted(measured)]
