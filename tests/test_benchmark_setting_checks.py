"""`kata benchmark` / `kata genconfig` searching their best thread count again with searchPipelining the other
way and one more leaf helper (katacli.tuning.setting_checks): when that runs, what it recommends, and how the
commands show and write it."""
from __future__ import annotations

import dataclasses
import json

import pytest
from typer.testing import CliRunner

from katacli.cli import app, normalize_argv
from katacli.config import Config, Enabled
from katacli.search import SearchParams
from katacli.search.benchmark_positions import benchmark_positions
from katacli.search.speed_benchmark import BenchmarkResult
from katacli.setup.config_writer import GenConfigChoices, render_config
from katacli.setup.engine_settings import NNSettings
from katacli.tuning import setting_checks
from katacli.tuning.network import load_evaluator
from katacli.tuning.runner import Benchmarker
from katacli.tuning.setting_checks import (
    MIN_GAIN, MIN_THREADS, SettingCheck, check_helpers, check_pipelining, second_looks, worth_checking,
)

from support.paths import BUNDLED_TINY_MODEL as TINY_MODEL


def recommended_values(checks: list) -> dict:
    """{key: value} of the settings the checks recommend (what genconfig writes)."""
    return {check.key: check.recommended for check in checks if check.recommended is not None}


def result(threads: int, speeds: list, pipelined: bool = False) -> BenchmarkResult:
    return BenchmarkResult(num_threads=threads, total_positions=len(speeds), positions_searched=len(speeds),
                           total_visits=int(sum(speeds)), total_seconds=float(len(speeds)),
                           position_speeds=list(speeds), pipelined=pipelined)


@pytest.mark.parametrize("chosen, other, recommended", [
    ([1000, 1000, 1000], [1200, 1150, 1180], "true"),    # clearly faster: recommended
    ([1000, 1000, 1000], [1030, 1020, 1040], None),      # within MIN_GAIN: keep the config's
    ([1000, 990, 1010], [800, 850, 820], None),          # slower
])
def test_another_setting_is_recommended_only_when_clearly_faster(chosen, other, recommended):
    check = SettingCheck("searchPipelining", "false", "true", result(256, chosen), result(256, other, True))
    assert check.recommended == recommended
    assert (check.gain >= MIN_GAIN) == (recommended is not None)
    assert check.best is (check.other if recommended else check.chosen)
    head, verdict = check.lines()
    assert head.startswith("searchPipelining at numSearchThreads = 256: yours (false)")
    assert ("Recommended: searchPipelining = true" in verdict) == (recommended is not None)
    assert ("keep" in verdict) == (recommended is None)
    assert check.to_dict()["recommended"] == recommended
    assert recommended_values([check]) == ({"searchPipelining": "true"} if recommended else {})


class LaunchingNet:
    """What worth_checking reads of an evaluator: the array API and whether it launches its calls."""

    accepts_batches = True

    def __init__(self, launches_async: bool):
        self.launches_async = launches_async

    def evaluate_batch(self, batch):   # (the array API's presence is what counts)
        raise AssertionError("not called")


def test_second_looks_run_by_default_on_a_launching_gpu_net_from_min_threads():
    gpu, cpu = LaunchingNet(True), LaunchingNet(False)
    assert worth_checking(gpu, None, MIN_THREADS)
    assert not worth_checking(gpu, None, MIN_THREADS - 1)
    assert not worth_checking(cpu, None, 256)
    assert worth_checking(cpu, None, 4, forced=True)         # --second-looks: any device
    assert not worth_checking(gpu, None, 256, forced=False)  # --no-second-looks
    assert not worth_checking(gpu, None, 1, forced=True)     # one leaf in flight cannot be split in two
    assert not worth_checking(None, None, 256, forced=True)  # the rollout engine has no batches
    assert not worth_checking(gpu, object(), 256)            # a human-SL net's leaves go one by one


class FakeBench:
    """measure_variant's calls recorded; each variant 'measured' at a made-up speed."""

    def __init__(self, speed: float, params=None, step: float = 1.0):
        """Variants measure ``speed``, then ``speed * step``, ``speed * step ** 2``, ..."""
        self.speed, self.step, self.calls = speed, step, []
        self.params = params if params is not None else SearchParams.defaults("benchmark")

    def measure_variant(self, num_threads, **changes):
        self.calls.append((num_threads, changes))
        speed = self.speed * self.step ** (len(self.calls) - 1)
        return result(num_threads, [speed], pipelined=changes.get("search_pipelining") is Enabled.TRUE)


def test_the_helper_check_adds_one_helper_to_the_better_pipelining_where_cores_allow(monkeypatch):
    monkeypatch.setattr(setting_checks, "usable_cpu_count", lambda: 16)
    monkeypatch.setattr("katacli.search.leaf_threads.usable_cpu_count", lambda: 16)
    bench = FakeBench(2000.0, step=1.5)   # pipelined 2x the best run below, one more helper 1.5x that
    checks = second_looks(bench, result(256, [1000.0], pipelined=False))
    assert [c.key for c in checks] == ["searchPipelining", "numLeafFeatureThreads"]
    # Pipelining won, so the helper check starts from the pipelined run: 128 leaves a lane, two helpers (auto).
    assert bench.calls == [(256, {"search_pipelining": Enabled.TRUE}),
                           (256, {"search_pipelining": Enabled.TRUE, "num_leaf_feature_threads": 3})]
    assert checks[1].chosen is checks[0].other and checks[1].chosen_value == "auto: 2"
    assert recommended_values(checks) == {"searchPipelining": "true", "numLeafFeatureThreads": "3"}


def test_no_helper_check_without_spare_cores_or_with_a_users_count(monkeypatch):
    best = result(256, [1000.0])
    monkeypatch.setattr(setting_checks, "usable_cpu_count", lambda: 4)
    assert check_helpers(FakeBench(2000.0), best) is None
    monkeypatch.setattr(setting_checks, "usable_cpu_count", lambda: 64)
    users = SearchParams.defaults("benchmark").replace(num_leaf_feature_threads=2)
    assert check_helpers(FakeBench(2000.0, users), best) is None


def test_the_real_pipelining_check_searches_the_positions_pipelined():
    nn = NNSettings.from_config(Config({}, mode="benchmark"), "benchmark")
    evaluator = load_evaluator(str(TINY_MODEL), nn, max_batch_size=1)
    benchmarker = Benchmarker(benchmark_positions(19, 1), SearchParams.defaults("benchmark"), evaluator, 24)
    best = benchmarker.measure(4)
    check = check_pipelining(benchmarker, best)
    assert not check.chosen.pipelined and check.other.pipelined   # on the CPU auto does not pipeline
    assert check.other.num_threads == 4 and check.other.total_visits >= 24
    assert benchmarker.params.search_pipelining is Enabled.AUTO   # the variant's change did not stick


def test_benchmark_takes_second_looks_when_asked():
    r = CliRunner().invoke(app, normalize_argv(["benchmark", "-model", str(TINY_MODEL), "-t", "4", "-v", "24",
                                                "-n", "1", "--second-looks", "--json"]))
    assert r.exit_code == 0, r.output
    checks = json.loads(r.stdout[r.stdout.index("{"):])["setting_checks"]
    assert checks[0]["key"] == "searchPipelining" and checks[0]["num_threads"] == 4
    assert checks[0]["config_value"] == "false" and checks[0]["other_value"] == "true"
    assert checks[0]["config_visits_per_second"] > 0 and checks[0]["other_visits_per_second"] > 0
    assert "searchPipelining at numSearchThreads = 4: yours (false)" in r.stderr


def test_benchmark_on_the_cpu_takes_none_by_default():
    r = CliRunner().invoke(app, normalize_argv(["benchmark", "-model", str(TINY_MODEL), "-t", "16", "-v", "24",
                                                "-n", "1", "--json"]))
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout[r.stdout.index("{"):])["setting_checks"] == []
    assert "searchPipelining at" not in r.stderr


def test_a_generated_config_sets_only_the_settings_tuning_chose():
    plain = render_config(GenConfigChoices(num_search_threads=64))
    assert "searchPipelining =" not in plain.replace("# searchPipelining", "")
    chosen = render_config(dataclasses.replace(GenConfigChoices(num_search_threads=64), tuned_settings={
        "searchPipelining": ("true", "Chosen by `kata genconfig`."), "numLeafFeatureThreads": ("3", "Chosen.")}))
    assert "\nsearchPipelining = true\n" in chosen and "\nnumLeafFeatureThreads = 3\n" in chosen


def test_genconfig_writes_what_its_second_looks_recommend(tmp_path, monkeypatch):
    looked = []

    def twice_as_fast(benchmarker, best):   # the second looks ran; their figures made up for the test
        looked.append(best.num_threads)
        faster = dataclasses.replace(best, pipelined=True, position_speeds=[2 * s for s in best.position_speeds])
        return [SettingCheck("searchPipelining", "false", "true", best, faster),
                SettingCheck("numLeafFeatureThreads", "auto: 1", "2", faster, faster)]

    monkeypatch.setattr(setting_checks, "worth_checking", lambda *args: True)   # as on a GPU
    monkeypatch.setattr(setting_checks, "second_looks", twice_as_fast)
    out = tmp_path / "gtp.cfg"
    r = CliRunner().invoke(app, normalize_argv(["genconfig", "-model", str(TINY_MODEL), "-output", str(out),
                                                "--non-interactive", "--tune-visits", "8", "--tune-positions", "1"]))
    assert r.exit_code == 0, r.output
    assert len(looked) == 1 and "Recommended: searchPipelining = true" in r.stdout
    text = out.read_text()
    assert "\nsearchPipelining = true\n" in text and "Chosen by `kata genconfig`" in text
    assert "numLeafFeatureThreads = 2" not in text   # not faster: the default stays


@pytest.mark.cuda
def test_on_a_gpu_the_benchmark_takes_its_second_looks_by_default():
    r = CliRunner().invoke(app, normalize_argv(["benchmark", "-model", str(TINY_MODEL), "-t", "32", "-v", "400",
                                                "-n", "1", "--json"]))
    assert r.exit_code == 0, r.output
    checks = json.loads(r.stdout[r.stdout.index("{"):])["setting_checks"]
    assert checks and checks[0]["key"] == "searchPipelining" and checks[0]["num_threads"] == 32
    assert checks[0]["config_visits_per_second"] > 0 and checks[0]["other_visits_per_second"] > 0
