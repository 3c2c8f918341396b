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


# ---------------------------------------------------------------------------------------------
# On a GPU: noise from batch timing, thread range from the network's throughput curve


class _FakeGpuRunner:
    """Times like a GPU: a fixed launch cost plus a cost per position that shrinks with the batch."""

    def __init__(self, jitter: float = 0.0):
        self.max_batch_size = 8
        self.calls = []
        self.captured = []   # batch sizes recorded on every lane before being timed
        self.jitter = jitter

    def __call__(self, spatial, global_features, meta, mask_full):
        self.calls.append(spatial.shape[0])
        return []

    def capture_lanes(self, spatial, global_features, meta, mask_full):
        self.captured.append(spatial.shape[0])


class _FakeGpuEvaluator:
    def __init__(self, runner):
        import torch

        self.device = torch.device("cuda")
        self.runner = runner
        self.needs_metadata = False


def _gpu_clock(runner, launch_s=1e-3, per_position_s=2e-5, jitter=0.0):
    """A clock read before and after each batch, advancing by what the fake GPU's batch takes: a launch
    cost and a cost per position, so evaluations/s rise with the batch and level off."""
    import itertools

    state = {"t": 0.0, "after": False}
    wobble = itertools.cycle([1.0 + jitter, 1.0 - jitter, 1.0 + 2 * jitter, 1.0])

    def clock():
        if state["after"]:
            state["t"] += (launch_s + per_position_s * runner.calls[-1]) * next(wobble)
        state["after"] = not state["after"]
        return state["t"]
    return clock


def test_gpu_curve_finds_the_knee_and_a_quiet_gpu_is_not_noisy():
    from katacli.tuning.gpu_curve import GPU_NOISY_SPREAD, measure_gpu_curve

    runner = _FakeGpuRunner()
    curve = measure_gpu_curve(_FakeGpuEvaluator(runner), 19, 19, max_batch=512, repeats=4,
                              clock=_gpu_clock(runner))
    rates = [p.evals_per_second for p in curve.points]
    assert [p.batch for p in curve.points][-1] == 512 and rates == sorted(rates)  # bigger batches never slower here
    assert curve.noise < 1e-9 and not curve.is_noisy
    knee = curve.knee()
    assert 64 <= knee <= 256  # where the fake GPU's throughput flattens
    assert curve.autotune_max_threads() == 2 * knee
    assert runner.max_batch_size == 8  # the evaluator's batch limit is left as it was
    # Graphs recorded on both lanes before timing up to half the largest size (a pipelined lane's reach).
    assert runner.captured == [p.batch for p in curve.points if p.batch <= 256]
    assert "levels off from batch" in " ".join(curve.lines())
    noisy_runner = _FakeGpuRunner()
    noisy = measure_gpu_curve(_FakeGpuEvaluator(noisy_runner), 19, 19, max_batch=64, repeats=4,
                              clock=_gpu_clock(noisy_runner, jitter=0.3))
    assert noisy.noise > GPU_NOISY_SPREAD and noisy.is_noisy and "shared with other work" in " ".join(noisy.lines())


def test_no_curve_off_a_gpu():
    from katacli.tuning.gpu_curve import measure_gpu_curve

    assert measure_gpu_curve(None, 19, 19) is None

    class Cpu:
        import torch
        device = torch.device("cpu")

    assert measure_gpu_curve(Cpu(), 19, 19) is None


def test_a_quiet_gpu_is_never_searched_twice_and_its_noise_sets_the_margin():
    from katacli.tuning.recommend import noise_margin_elo
    from katacli.tuning.runner import Benchmarker

    class Scattered(Benchmarker):
        """Per-position speeds that scatter against the baseline's, as a GPU's do on an idle machine."""

        def _search_positions(self, num_threads):
            self.searched = getattr(self, "searched", 0) + 1
            speeds = [1000.0, 1400.0, 700.0, 1100.0] if num_threads == 1 else [3000.0, 1500.0, 4000.0, 2000.0]
            return measured(num_threads, speeds)

    noisy_calls = []
    quiet = Scattered([], None, None, 100, remeasure_noisy=False, on_noise=lambda r, s: noisy_calls.append(s))
    quiet.measure(1)
    quiet.measure(8)
    assert quiet.searched == 2 and not noisy_calls
    cpu = Scattered([], None, None, 100, on_noise=lambda r, s: noisy_calls.append(s))
    cpu.measure(1)
    cpu.measure(8)
    assert cpu.searched > 2 and noisy_calls  # on a CPU the scatter still means a busy machine
    a, b = measured(1, [1000.0] * 4), measured(8, [3000.0, 1500.0, 4000.0, 2000.0])
    assert noise_margin_elo(b, a, noise=0.02) < noise_margin_elo(b, a)


def test_only_result_lines_start_with_numsearchthreads():
    # Scripts read KataGo's result lines by their "numSearchThreads = N:" prefix: the re-search notice must not
    # look like one.
    import io

    from rich.console import Console

    from katacli.commands.benchmark import Report

    out = io.StringIO()
    report = Report(console=Console(file=out, width=200))
    report.noise(measured(2, [10.0, 20.0]), 0.4)
    assert out.getvalue().startswith("Speeds at numSearchThreads = 2 scatter by 40%")
