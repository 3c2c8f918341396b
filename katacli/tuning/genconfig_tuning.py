"""Thread tuning for `kata genconfig`: calibrate the visits, tune numSearchThreads, pick the batch size.

Without a visit count from the user, a quick first run at :data:`CALIBRATION_THREADS` threads measures the
machine's speed and sets the tuning visits so each search takes about
:data:`TARGET_SECONDS_PER_SEARCH` seconds: long enough to measure, short enough to finish.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

from katacli.search.speed_benchmark import BenchmarkResult, MIN_SECONDS
from katacli.tuning.setting_checks import SettingCheck, take_second_looks
from katacli.tuning.recommend import Recommendation, recommend
from katacli.tuning.runner import Benchmarker

CALIBRATION_THREADS = 16
CALIBRATION_POSITIONS = 3
TARGET_SECONDS_PER_SEARCH = 2.0
TUNING_VISITS_GRANULARITY = 100
MIN_TUNING_VISITS = 200
MAX_TUNING_VISITS = 10_000
DEFAULT_TUNING_POSITIONS = 10
TUNING_BOARD_LEN = 19


@dataclass
class TuningOutcome:
    visits: int
    recommendation: Recommendation
    checks: tuple[SettingCheck, ...] = ()   # the best count searched with other settings (on a GPU)

    @property
    def num_threads(self) -> int:
        return self.recommendation.best.num_threads

    def note(self) -> str:
        best = self.recommendation.best
        return (f"Chosen by `kata genconfig`: {best.visits_per_second:.0f} visits/s with {self.visits}-visit searches, "
                f"the best estimated strength for {self.recommendation.seconds_per_move:g} s per move. "
                "Rerun `kata benchmark` after changing hardware.")


def calibrated_visits(result: BenchmarkResult) -> int:
    """Visits that make one search last about TARGET_SECONDS_PER_SEARCH at the measured speed."""
    speed = result.total_visits / max(result.total_seconds, MIN_SECONDS)
    visits = round(TARGET_SECONDS_PER_SEARCH * speed / TUNING_VISITS_GRANULARITY) * TUNING_VISITS_GRANULARITY
    return int(min(MAX_TUNING_VISITS, max(MIN_TUNING_VISITS, visits)))


def tune(evaluator, params, seconds_per_move: float, *, visits: Optional[int] = None,
         num_positions: int = DEFAULT_TUNING_POSITIONS, say: Callable[[str], None] = print,
         on_result: Optional[Callable[[BenchmarkResult], None]] = None,
         on_progress: Optional[Callable[[BenchmarkResult], None]] = None, human_evaluator=None,
         on_noise: Optional[Callable[[BenchmarkResult, float], None]] = None) -> TuningOutcome:
    """Tune numSearchThreads for this network on the bundled 19x19 game (``human_evaluator``: a -human-model
    net searched beside it, as `kata gtp -human-model` will)."""
    from katacli.tuning.network import default_visits, warm_up
    from katacli.search.benchmark_positions import benchmark_positions

    from katacli.tuning.gpu_curve import measure_gpu_curve
    from katacli.tuning.noise import busy_machine_warning

    warm_up(evaluator, params, TUNING_BOARD_LEN, TUNING_BOARD_LEN, notify=say)
    # On a GPU (see katacli.tuning.gpu_curve): batch timing judges the noise, the curve's knee the range tried.
    curve = measure_gpu_curve(evaluator, TUNING_BOARD_LEN, TUNING_BOARD_LEN)
    if curve is not None:
        for text in curve.lines():
            say(text)
    gpu_quiet = curve is not None and not curve.is_noisy and busy_machine_warning() is None
    if visits is None:
        say(f"Running quick initial benchmark at {CALIBRATION_THREADS} threads!")
        quick = Benchmarker(benchmark_positions(TUNING_BOARD_LEN, CALIBRATION_POSITIONS), params, evaluator,
                            default_visits(evaluator), on_result=on_result, on_progress=on_progress,
                            human_evaluator=human_evaluator, on_noise=on_noise, remeasure_noisy=not gpu_quiet)
        visits = calibrated_visits(quick.measure(CALIBRATION_THREADS))
    say(f"Tuning using {visits} visits.")
    benchmarker = Benchmarker(benchmark_positions(TUNING_BOARD_LEN, num_positions), params, evaluator, visits,
                              on_result=on_result, on_progress=on_progress, human_evaluator=human_evaluator,
                              on_noise=on_noise, remeasure_noisy=not gpu_quiet)
    results = benchmarker.autotune(seconds_per_move, on_round=lambda r: say(
        "Possible numbers of threads to test: " + ", ".join(map(str, r.candidates))),
        **({"max_threads": curve.autotune_max_threads()} if curve is not None else {}))
    recommendation = recommend(results, seconds_per_move, noise=curve.noise if gpu_quiet else None)
    # On a GPU: the best count with searchPipelining the other way and one more leaf helper.
    checks = take_second_looks(benchmarker, recommendation.best, evaluator, human_evaluator, say)
    return TuningOutcome(visits, recommendation, tuple(checks))
