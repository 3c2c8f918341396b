"""`kata benchmark` / `kata genconfig` searching their best thread count with searchPipelining the other way
(katacli.tuning.pipelining): when that runs, what it recommends, and how the commands show it."""
from __future__ import annotations

import json
import dataclasses

import pytest
from typer.testing import CliRunner

from katacli.cli import app, normalize_argv
from katacli.config import Enabled
from katacli.search.speed_benchmark import BenchmarkResult
from katacli.setup.config_writer import GenConfigChoices, render_config
from katacli.tuning.pipelining import MIN_GAIN, MIN_THREADS, PipeliningCheck, check_pipelining, worth_checking

from support.paths import BUNDLED_TINY_MODEL as TINY_MODEL


def result(threads: int, speeds: list, pipelined: bool) -> BenchmarkResult:
    return BenchmarkResult(num_threads=threads, total_positions=len(speeds), positions_searched=len(speeds),
                           total_visits=int(sum(speeds)), total_seconds=float(len(speeds)),
                           position_speeds=list(speeds), pipelined=pipelined)


@pytest.mark.parametrize("chosen_pipelined, chosen, other, recommended", [
    (False, [1000, 1000, 1000], [1200, 1150, 1180], True),    # pipelining clearly faster: recommend it
    (False, [1000, 1000, 1000], [1030, 1020, 1040], None),    # within MIN_GAIN: keep auto
    (True, [1000, 990, 1010], [1100, 1090, 1120], False),     # auto pipelined, one batch at a time wins
    (True, [1000, 990, 1010], [800, 850, 820], None),         # auto's choice is faster
])
def test_the_other_setting_is_recommended_only_when_clearly_faster(chosen_pipelined, chosen, other, recommended):
    check = PipeliningCheck(result(256, chosen, chosen_pipelined), result(256, other, not chosen_pipelined))
    assert check.recommended == recommended
    assert (check.gain >= MIN_GAIN) == (recommended is not None)
    head, verdict = check.lines()
    assert "numSearchThreads = 256" in head and "pipelined" in head
    if recommended is None:
        assert "keep" in verdict
    else:
        assert f"searchPipelining = {'true' if recommended else 'false'}" in verdict
    data = check.to_dict()
    assert data["recommended_search_pipelining"] == recommended
    assert data["pipelined_visits_per_second"] == check.pipelined.median_visits_per_second
    assert check.pipelined.pipelined and not check.unpipelined.pipelined


class LaunchingNet:
    """What worth_checking reads of an evaluator: the array API and whether it launches its calls."""

    accepts_batches = True

    def __init__(self, launches_async: bool):
        self.launches_async = launches_async

    def evaluate_batch(self, batch):   # (the array API's presence is what counts)
        raise AssertionError("not called")


def test_the_check_runs_by_default_on_a_launching_gpu_net_from_min_threads():
    gpu, cpu = LaunchingNet(True), LaunchingNet(False)
    assert worth_checking(gpu, None, MIN_THREADS)
    assert not worth_checking(gpu, None, MIN_THREADS - 1)
    assert not worth_checking(cpu, None, 256)
    assert worth_checking(cpu, None, 4, forced=True)         # --compare-pipelining: any device
    assert not worth_checking(gpu, None, 256, forced=False)  # --no-compare-pipelining
    assert not worth_checking(gpu, None, 1, forced=True)     # one leaf in flight cannot be split in two
    assert not worth_checking(None, None, 256, forced=True)  # the rollout engine has no batches
    assert not worth_checking(gpu, object(), 256)            # a human-SL net's leaves go one by one


def test_check_pipelining_searches_the_same_count_the_other_way():
    calls = []

    class Bench:
        def measure_variant(self, num_threads, **changes):
            calls.append((num_threads, changes))
            return result(num_threads, [900.0], pipelined=changes["search_pipelining"] is Enabled.TRUE)

    check = check_pipelining(Bench(), result(64, [1000.0], pipelined=False))
    assert calls == [(64, {"search_pipelining": Enabled.TRUE})]
    assert check.other.pipelined and check.recommended is None


def test_benchmark_compares_pipelining_when_asked():
    r = CliRunner().invoke(app, normalize_argv(["benchmark", "-model", str(TINY_MODEL), "-t", "4", "-v", "24",
                                                "-n", "1", "--compare-pipelining", "--json"]))
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout[r.stdout.index("{"):])
    check = data["pipelining"]
    assert check["num_threads"] == 4 and check["config_pipelined"] is False
    assert check["pipelined_visits_per_second"] > 0 and check["unpipelined_visits_per_second"] > 0
    assert "Two batches in flight (searchPipelining) at numSearchThreads = 4" in r.stderr


def test_benchmark_on_the_cpu_does_not_compare_by_default():
    r = CliRunner().invoke(app, normalize_argv(["benchmark", "-model", str(TINY_MODEL), "-t", "16", "-v", "24",
                                                "-n", "1", "--json"]))
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout[r.stdout.index("{"):])["pipelining"] is None
    assert "searchPipelining" not in r.stderr


def test_a_generated_config_sets_search_pipelining_only_when_tuning_chose_it():
    plain = render_config(GenConfigChoices(num_search_threads=64))
    assert "searchPipelining" not in plain
    chosen = render_config(dataclasses.replace(GenConfigChoices(num_search_threads=64), search_pipelining=True,
                                               pipelining_note="Chosen by `kata genconfig`."))
    assert "\nsearchPipelining = true\n" in chosen


def test_genconfig_writes_search_pipelining_when_its_check_recommends_it(tmp_path, monkeypatch):
    import katacli.tuning.genconfig_tuning as genconfig_tuning

    checked = []

    def clearly_faster_pipelined(benchmarker, best):   # the comparison ran; its figures made up for the test
        checked.append(best.num_threads)
        faster = dataclasses.replace(best, pipelined=True, position_speeds=[2 * s for s in best.position_speeds])
        return PipeliningCheck(best, faster)

    monkeypatch.setattr(genconfig_tuning, "worth_checking", lambda *args: True)   # as on a GPU
    monkeypatch.setattr(genconfig_tuning, "check_pipelining", clearly_faster_pipelined)
    out = tmp_path / "gtp.cfg"
    r = CliRunner().invoke(app, normalize_argv(["genconfig", "-model", str(TINY_MODEL), "-output", str(out),
                                                "--non-interactive", "--tune-visits", "8", "--tune-positions", "1"]))
    assert r.exit_code == 0, r.output
    assert len(checked) == 1 and "Recommended: searchPipelining = true" in r.stdout
    text = out.read_text()
    assert "\nsearchPipelining = true\n" in text and "Chosen by `kata genconfig`" in text


def test_the_real_check_searches_the_positions_pipelined():
    from katacli.config import Config
    from katacli.search import SearchParams
    from katacli.search.benchmark_positions import benchmark_positions
    from katacli.setup.engine_settings import NNSettings
    from katacli.tuning.network import load_evaluator
    from katacli.tuning.runner import Benchmarker

    nn = NNSettings.from_config(Config({}, mode="benchmark"), "benchmark")
    evaluator = load_evaluator(str(TINY_MODEL), nn, max_batch_size=1)
    benchmarker = Benchmarker(benchmark_positions(19, 1), SearchParams.defaults("benchmark"), evaluator, 24)
    best = benchmarker.measure(4)
    check = check_pipelining(benchmarker, best)
    assert not check.chosen.pipelined and check.other.pipelined   # on the CPU auto does not pipeline
    assert check.other.num_threads == 4 and check.other.total_visits >= 24
    assert benchmarker.params.search_pipelining is Enabled.AUTO   # the variant's change did not stick
