"""`kata benchmark` / `kata genconfig` on a busy machine: per-position medians, noisy counts searched
again, and no more threads recommended than the measurements support."""
from __future__ import annotations

import pytest

from katacli.tuning import BenchmarkResult, recommend
from katacli.tuning.noise import NOISY_SPREAD, busy_machine_warning, relative_spread
from katacli.tuning.runner import Benchmarker

QUIET = [100.0, 120.0, 90.0, 110.0, 95.0, 105.0, 100.0, 115.0, 85.0, 100.0]


def measured(threads: int, speeds: list[float], visits: int = 100) -> BenchmarkResult:
    seconds = sum(visits / s for s in speeds)
    return BenchmarkResult(num_threads=threads, total_positions=len(speeds), positions_searched=len(speeds),
                           total_visits=visits * len(speeds), total_seconds=seconds, position_speeds=list(speeds))


@pytest.mark.parametrize("speeds, baseline, low, high", [
    ([2 * s for s in QUIET], QUIET, 0.0, 0.0),                     # uniformly twice as fast: no noise
    ([s * f for s, f in zip(QUIET, [1, 3, 1, 0.2, 1, 3, 0.2, 1, 3, 1])], QUIET, 1.0, 3.0),  # bursts
    ([100.0, 300.0], [100.0, 100.0], 0.9, 1.1),                    # too few positions: the full range
    ([], [], 0.0, 0.0),
])
def test_relative_spread(speeds, baseline, low, high):
    assert low <= relative_spread(speeds, baseline) <= high


def test_median_ignores_a_burst_of_other_work():
    burst = measured(4, [400.0] * 7 + [40.0] * 3)
    assert burst.median_visits_per_second == 400.0
    assert burst.visits_per_second < 200.0  # the total is dragged down by the three slow positions


def test_busy_warning():
    assert busy_machine_warning(load_average=0.3, cores=2) is None
    text = busy_machine_warning(load_average=3.0, cores=2)
    assert text.startswith("WARNING: this machine is busy") and "3.0 on 2 cores" in text


def test_more_threads_only_when_better_than_the_noise():
    baseline = measured(2, QUIET)
    # 12 threads measured during quiet moments and busy ones (249 then 16 visits/s, as seen in the wild):
    # its median looks 10% better, but the scatter is far larger than that.
    noisy = measured(12, [s * f for s, f in zip(QUIET, [2.5, 0.16, 2.5, 0.16, 1.1, 2.5, 0.16, 1.1, 1.1, 1.1])])
    assert recommend([baseline, noisy], seconds_per_move=5.0).best.num_threads == 2
    # Clearly faster on every position: recommended.
    fast = measured(12, [4 * s for s in QUIET])
    assert recommend([baseline, fast], seconds_per_move=5.0).best.num_threads == 12
    # Equal within a few percent: the fewer threads win, whatever order they were measured in.
    close = measured(8, [1.02 * s for s in QUIET])
    assert recommend([close, baseline], seconds_per_move=5.0).best.num_threads == 2


def test_a_noisy_count_is_searched_again():
    runs = {1: [QUIET], 4: [[s * f for s, f in zip(QUIET, [3, 0.2] * 5)], [2 * s for s in QUIET],
                            [2 * s for s in QUIET]]}
    noise_reports = []
    bench = Benchmarker([], None, None, 100, on_noise=lambda r, spread: noise_reports.append((r.num_threads, spread)))
    bench._search_positions = lambda threads: measured(threads, runs[threads].pop(0))
    assert bench.measure(1).remeasured == 0
    again = bench.measure(4)
    assert len(noise_reports) >= 1 and noise_reports[0][0] == 4 and noise_reports[0][1] > NOISY_SPREAD
    assert again.remeasured >= 1 and len(again.position_speeds) == 10 * (again.remeasured + 1)
    assert again.total_positions == again.positions_searched == len(again.position_speeds)
