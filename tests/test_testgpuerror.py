"""`kata testgpuerror` (katacli.tuning.gpu_error): the error summary's numbers, the reference file, and the
command on the CPU (no GPU: it compares the CPU's reduced precisions); one test runs it on a CUDA GPU."""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest
from typer.testing import CliRunner

from katacli.cli import app, normalize_argv
from katacli.search.benchmark_positions import bundled_game
from katacli.tuning import gpu_error as ge

from support.paths import BUNDLED_TINY_MODEL as TINY_MODEL
from support.paths import G170_B6, model_path

ROW = re.compile(r"^(?P<label>.+) (?P<metric>\w+):\s+(?P<avg>[\d.]+)[%c]?\s+(?P<p90>[\d.]+)[%c]?\s+"
                 r"(?P<p99>[\d.]+)[%c]?\s+(?P<max>[\d.]+)[%c]?$")
MARGIN = re.compile(r"^(?P<label>.+) closest margin:\s+(?P<r99>[\d.e+-]+)x of limit \((?P<m99>\w+) 99%\), "
                    r"(?P<rmax>[\d.e+-]+)x of limit \((?P<mmax>\w+) max\)$")


def kata(*args: str):
    return CliRunner().invoke(app, normalize_argv(["testgpuerror", *args]))


def outputs(win=0.6, loss=0.35, no_result=0.05, lead=2.0, score=2.5, score_sq=20.0, st_wl=0.3, st_score=4.0,
            policy=(0.7, 0.2, -1.0, 0.1), ownership=(0.5, -0.5, 0.0, 1.0), size=(2, 2)) -> ge.Outputs:
    return ge.Outputs(win, loss, no_result, lead, score, score_sq, st_wl, st_score, np.asarray(policy, np.float64),
                      np.asarray(ownership, np.float64), *size)


def summary_rows(text: str) -> dict[tuple[str, str], dict[str, float]]:
    rows = {}
    for line in text.splitlines():
        match = ROW.match(line)
        if match and "closest margin" not in line:
            rows[(match["label"], match["metric"])] = {k: float(match[k]) for k in ("avg", "p90", "p99", "max")}
    return rows


# --------------------------------------------------------------------------- the numbers


def test_identical_outputs_have_zero_error_in_every_metric():
    ref = outputs()
    stats = ge.compare([ref, ref], [ref, dataclasses.replace(ref)])
    assert stats.num_positions == 2
    for metric in ge.METRICS:
        assert stats.summary(metric) == ge.Percentiles(0.0, 0.0, 0.0, 0.0), metric.name
    assert stats.passes(ge.FLOAT32_LIMITS_99, ge.FLOAT32_LIMITS_MAX)
    rows = summary_rows("\n".join(stats.report_lines("same")))
    assert len(rows) == len(ge.METRICS)
    assert all(v == {"avg": 0, "p90": 0, "p99": 0, "max": 0} for v in rows.values())


def test_known_perturbation_gives_known_errors():
    ref = outputs()
    # winrate: half the win-loss difference moves by 0.5*(0.04 + 0.02) = 0.03, no-result by 0.02 -> 0.05
    other = outputs(win=0.64, loss=0.33, no_result=0.03, lead=2.5, score=2.0, score_sq=20.0, st_wl=0.28,
                    st_score=4.5, policy=(0.69, 0.21, -1.0, 0.1), ownership=(0.47, -0.5, 0.0, 1.0))
    errors = ge.position_errors(ref, other)
    assert errors["winrateError"] == pytest.approx(0.05)
    assert errors["leadError"] == pytest.approx(0.5)
    assert errors["scoreMeanError"] == pytest.approx(0.5)
    assert errors["scoreStdevError"] == pytest.approx(abs(math.sqrt(20 - 6.25) - math.sqrt(20 - 4.0)))
    assert errors["topPolicyDelta"] == pytest.approx(0.01)  # the reference's top move: 0.7 -> 0.69
    # KL over the moves the reference gives weight (the illegal -1 is left out)
    kl = 0.7 * math.log(0.7 / 0.69) + 0.2 * math.log(0.2 / 0.21) + 0.1 * math.log(0.1 / 0.1)
    assert errors["policyKLDiv"] == pytest.approx(kl)
    assert errors["stWLErrorError"] == pytest.approx(0.02)
    assert errors["stScErrorError"] == pytest.approx(0.5)
    np.testing.assert_allclose(errors["ownershipError"], [0.03, 0.0, 0.0, 0.0], atol=1e-12)

    stats = ge.compare([ref], [other])
    winrate = stats.summary(ge.METRICS[0])
    assert winrate.average == pytest.approx(5.0) and winrate.max == pytest.approx(5.0)  # printed in percent
    rows = summary_rows("\n".join(stats.report_lines("perturbed")))
    assert rows[("perturbed", "winrateError")]["max"] == pytest.approx(5.0)
    assert rows[("perturbed", "leadError")]["avg"] == pytest.approx(0.5)
    assert rows[("perturbed", "ownershipError")]["max"] == pytest.approx(3.0)  # centi-units
    assert rows[("perturbed", "ownershipError")]["avg"] == pytest.approx(0.75)
    assert rows[("perturbed", "ownershipError")]["p99"] == 0.0  # sorted index (4-1)*99//100 = 2 of [0, 0, 0, 3]
    # against KataGo's FP16 limits the winrate is the worst metric: 5% of a 5% max limit, 2x a 2% 99% limit
    ratio, which = stats.worst_ratio(ge.REDUCED_LIMITS_MAX, at_max=True)
    assert (ratio, which) == (pytest.approx(1.0), "winrateError")
    ratio99, which99 = stats.worst_ratio(ge.REDUCED_LIMITS_99, at_max=False)
    assert (ratio99, which99) == (pytest.approx(2.5), "winrateError")
    assert not stats.passes(ge.REDUCED_LIMITS_99, ge.REDUCED_LIMITS_MAX)
    margin = MARGIN.match(stats.margin_line("perturbed", ge.REDUCED_LIMITS_99, ge.REDUCED_LIMITS_MAX))
    assert margin and float(margin["r99"]) == pytest.approx(2.5) and margin["mmax"] == "winrateError"


def test_percentiles_pick_katagos_sorted_indices():
    p = ge.percentiles(list(range(100, -1, -1)))  # 101 values 0..100, unsorted
    assert (p.average, p.p90, p.p99, p.max) == (50.0, 90.0, 99.0, 100.0)
    p = ge.percentiles([float(v) for v in range(10)])  # (n-1)*90//100 = 8, (n-1)*99//100 = 8
    assert (p.p90, p.p99, p.max) == (8.0, 8.0, 9.0)
    with pytest.raises(ge.GpuErrorTestError):
        ge.percentiles([])


def test_mismatched_board_sizes_are_refused():
    with pytest.raises(ge.GpuErrorTestError, match="board sizes differ"):
        ge.position_errors(outputs(), outputs(policy=(0.5,) * 10, ownership=(0,) * 9, size=(3, 3)))


def test_configurations_to_test():
    assert [c.label for c in ge.configurations_to_test(True)] == ["cuda float32", "cuda float16"]
    assert [c.label for c in ge.configurations_to_test(True, ["bfloat16", "float16"])] == [
        "cuda float32", "cuda bfloat16", "cuda float16"]
    assert [c.label for c in ge.configurations_to_test(False)] == ["cpu float32", "cpu float16"]
    assert [c.label for c in ge.configurations_to_test(False, ["float16", "bfloat16"])] == [
        "cpu float32", "cpu float16", "cpu bfloat16"]
    assert ge.limits_for("float32") == (ge.FLOAT32_LIMITS_99, ge.FLOAT32_LIMITS_MAX)
    assert ge.limits_for("float16") == (ge.REDUCED_LIMITS_99, ge.REDUCED_LIMITS_MAX)


def test_quick_keeps_a_fixed_subset():
    game = bundled_game(9)
    every = ge.game_positions([game])
    assert [len(s.moves) for s in every] == list(range(len(game.moves)))  # before each move
    quick = ge.game_positions([game], quick=True)
    assert 0 < len(quick) < len(every) * 0.6
    assert [len(s.moves) for s in quick] == [len(s.moves) for s in ge.game_positions([game], quick=True)]


# --------------------------------------------------------------------------- evaluators and the reference file


class PerturbedEvaluator:
    """Wraps an evaluator and adds a fixed amount to White's lead."""

    def __init__(self, inner, lead_shift: float):
        self.inner, self.lead_shift = inner, lead_shift

    def evaluate_uncached(self, requests):
        return [dataclasses.replace(o, white_lead=o.white_lead + self.lead_shift)
                for o in self.inner.evaluate_uncached(requests)]


@pytest.fixture(scope="module")
def tiny_setup():
    from katacli.commands.testgpuerror import evaluator_factory
    from katacli.nn.torch_model import load_model

    model = load_model(TINY_MODEL)
    states = ge.game_positions([bundled_game(7)], quick=True)
    requests = ge.build_requests(states, ge.InputSettings(), model.needs_metadata)
    return model, requests, evaluator_factory(model, 4)


def test_same_evaluator_twice_is_exact_and_a_perturbed_one_shows_its_shift(tiny_setup):
    model, requests, make = tiny_setup
    evaluator = make(ge.REFERENCE)
    reference = ge.evaluate_all(evaluator, requests, 1)
    again = ge.compare(reference, ge.evaluate_all(make(ge.REFERENCE), requests, 1))
    assert all(again.summary(m).max == 0.0 for m in ge.METRICS)
    shifted = ge.compare(reference, ge.evaluate_all(PerturbedEvaluator(evaluator, 0.25), requests, 3))
    lead = shifted.summary(ge.METRICS[1])
    assert lead.average == pytest.approx(0.25, abs=1e-5) and lead.max == pytest.approx(0.25, abs=1e-5)
    assert shifted.summary(ge.METRICS[0]).max == 0.0  # nothing else moved


def test_run_configuration_reports_batched_only_for_the_reference_itself(tiny_setup):
    model, requests, make = tiny_setup
    reference = ge.evaluate_all(make(ge.REFERENCE), requests, 1)
    lines = []
    result = ge.run_configuration(ge.REFERENCE, make, requests, reference, 4, True, lines.append)
    assert result.unbatched is None and result.batched.num_positions == len(requests) and result.passed()
    broken = ge.run_configuration(ge.Configuration("cpu", "float32"), lambda c: _raise(),
                                  requests, reference, 4, True, lines.append)
    assert broken.error == "no such device" and not broken.passed()
    assert lines[-1] == "Cannot run cpu float32: no such device"


def _raise():
    raise RuntimeError("no such device")


def test_reference_file_round_trip_and_mismatch(tiny_setup, tmp_path):
    model, requests, make = tiny_setup
    path = str(tmp_path / "ref.jsonl")
    computed, how = ge.read_or_make_reference(path, requests, lambda: ge.evaluate_all(make(ge.REFERENCE), requests, 1),
                                              model.name)
    assert how == "saved"
    loaded, how = ge.read_or_make_reference(path, requests, lambda: pytest.fail("must not recompute"), model.name)
    assert how == "loaded"
    stats = ge.compare(computed, loaded)
    assert all(stats.summary(m).max < 1e-6 for m in ge.METRICS)  # JSON keeps the values
    with pytest.raises(ge.GpuErrorTestError, match="has .* positions, this test has"):
        ge.load_reference(path, requests[:-1])
    with pytest.raises(ge.GpuErrorTestError, match="other positions or settings"):
        ge.load_reference(path, list(reversed(requests)))
    (tmp_path / "bad.jsonl").write_text("not json\n")
    with pytest.raises(ge.GpuErrorTestError, match="not a katacli reference file|damaged"):
        ge.load_reference(str(tmp_path / "bad.jsonl"), requests)


# --------------------------------------------------------------------------- the command


def test_command_on_the_cpu_compares_reduced_precisions(tmp_path):
    ref = tmp_path / "ref.jsonl"
    result = kata("-model", str(TINY_MODEL), "-boardsize", "7", "-quick", "-reference-file", str(ref),
                  "-precision", "float16,bfloat16", "-override-config", "nnMaxBatchSize=5")
    assert result.exit_code in (0, 1), result.output
    out = result.output
    assert "For batch test, using batch size from nnMaxBatchSize in config: 5" in out
    assert "Saved reference values for" in out and ref.exists()
    rows = summary_rows(out)
    labels = {label for label, _ in rows}
    assert {"batched cpu float32 error vs reference", "cpu float16 error vs reference",
            "batched cpu float16 error vs reference", "cpu bfloat16 error vs reference"} <= labels
    assert "cpu float32 error vs reference" not in labels  # that is the reference itself
    assert rows[("batched cpu float32 error vs reference", "winrateError")]["max"] < 0.01
    assert out.count("closest margin") == 5
    # a second run reads the reference and also compares the CPU's unbatched float32 with it: exact
    again = kata("-model", str(TINY_MODEL), "-boardsize", "7", "-quick", "-reference-file", str(ref),
                 "-precision", "float16", "-override-config", "nnMaxBatchSize=5")
    assert "Loaded reference values" in again.output
    rows = summary_rows(again.output)
    assert rows[("cpu float32 error vs reference", "leadError")]["max"] == 0.0
    assert ("cpu bfloat16 error vs reference", "leadError") not in rows


@pytest.mark.parametrize("args, message", [
    (["-boardsize", "rectangle"], "no built-in positions for KataGo's 'rectangle' set"),
    (["-boardsize", "25"], "board size 25"),
    (["-boardsize", "big"], "invalid value big"),
    (["-precision", "float8"], "unknown precision 'float8'"),
    (["-boardsize", "9", "-sgf", "x.sgf"], "Cannot specify both -sgf and -boardsize"),
    (["-sgf", "missing.sgf"], "missing.sgf"),
])
def test_user_mistakes_are_one_line_errors(args, message):
    result = kata("-model", str(TINY_MODEL), *args)
    assert result.exit_code == 1
    assert message in result.output and "Traceback" not in result.output


def test_help_explains_the_test():
    result = kata("--help")
    assert result.exit_code == 0
    assert "float16" in result.output and "reference" in result.output and "-boardsize" in result.output


@pytest.mark.cuda
def test_gpu_float32_and_float16_are_within_katagos_limits():
    result = kata("-model", str(model_path(G170_B6)), "-boardsize", "9")
    assert "GPU: " in result.output
    rows = summary_rows(result.output)
    assert ("batched cuda float16 error vs reference", "winrateError") in rows
    assert result.exit_code == 0, result.output
