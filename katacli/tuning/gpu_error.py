"""How far a network's outputs drift on a GPU, or in reduced precision, from an exact float32 reference.

``kata testgpuerror`` (KataGo's ``testgpuerror``): positions from real games are evaluated once by
the reference (float32 on the CPU, one position at a time), then by each configuration to check
(the GPU in float32 and float16; a CPU in bfloat16 or float16), one at a time and in batches. For each
configuration KataGo's summary is printed: the average, 90th percentile, 99th percentile and
maximum of the absolute error of the winrate, the scores, the policy and the ownership, and how
close the worst metric comes to KataGo's pass limits (float32 is held to tighter limits than the
reduced precisions).

A reference can be saved to a file (JSON lines, one position per line, KataGo's field names) and
read back, so that a machine compares itself with another machine's reference.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import random
from dataclasses import dataclass, field
from typing import Callable, Optional, Sequence

import numpy as np

from katacli.search.benchmark_positions import BenchmarkError, positions_from_game

# Below this a reference policy probability counts as zero in the KL divergence (KataGo's cutoff).
KL_MIN_PROBABILITY = 1e-30
# -quick keeps about this share of the positions (KataGo: 30%).
QUICK_FRACTION = 0.3
QUICK_SEED = 0x9e3779b9
# Batch size of the batched runs when the config sets neither nnMaxBatchSize nor numSearchThreads.
DEFAULT_BATCH_SIZE = 16
PERCENT = 100.0
LABEL_WIDTH = 60  # KataGo pads each row's name to 60 columns
CELL_WIDTH = 8
CELL_SEPARATOR = "  "
REFERENCE_FORMAT = "katacli-gpu-error-reference-1"
# Profile given to nets that take SGF metadata (human-SL nets), as KataGo's test does.
HUMAN_PROFILE_FOR_TEST = "preaz_5k"


class GpuErrorTestError(ValueError):
    """A test that cannot run as asked (unreadable or mismatched reference file, no positions)."""


@dataclass(frozen=True)
class ErrorLimits:
    """KataGo's pass limits for one percentile: winrate error (percent), score errors, top-policy
    change (percent) and policy KL divergence. The other metrics' limits are scaled from these."""

    winrate_percent: float
    score: float
    top_policy_percent: float
    policy_kl: float


# KataGo's limits (tests/testnnevalcanary.cpp, runBackendErrorTest): float32 against the reference,
# and a reduced precision ("current cfg", FP16) against it, for the 99th percentile and the maximum.
FLOAT32_LIMITS_99 = ErrorLimits(0.45, 0.34, 0.45, 0.0006)
FLOAT32_LIMITS_MAX = ErrorLimits(1.35, 0.900, 1.35, 0.0012)
REDUCED_LIMITS_99 = ErrorLimits(2.0, 1.00, 2.50, 0.0020)
REDUCED_LIMITS_MAX = ErrorLimits(5.0, 3.00, 6.00, 0.0040)
# Ownership sums errors over every point, so its limit is wider at the maximum than at the 99th percentile.
OWNERSHIP_LIMIT_FACTOR_99 = 1.75
OWNERSHIP_LIMIT_FACTOR_MAX = 4.0


@dataclass(frozen=True)
class Metric:
    """One row of the summary: how it is printed and which limit it is held to."""

    name: str
    scale: float  # printed (and checked) value = error * scale
    unit: str  # "%", "c" (centi-units) or ""
    decimals: int
    limit: Callable[[ErrorLimits, bool], float]  # (limits, at_max) -> this metric's limit


METRICS = (
    Metric("winrateError", PERCENT, "%", 5, lambda lim, at_max: lim.winrate_percent),
    Metric("leadError", 1.0, "", 5, lambda lim, at_max: lim.score),
    Metric("scoreMeanError", 1.0, "", 5, lambda lim, at_max: lim.score),
    Metric("scoreStdevError", 1.0, "", 5, lambda lim, at_max: lim.score * 0.6),
    Metric("topPolicyDelta", PERCENT, "%", 5, lambda lim, at_max: lim.top_policy_percent),
    Metric("policyKLDiv", 1.0, "", 6, lambda lim, at_max: lim.policy_kl),
    Metric("stWLErrorError", PERCENT, "c", 5, lambda lim, at_max: lim.winrate_percent * 1.8),
    Metric("stScErrorError", 1.0, "", 5, lambda lim, at_max: lim.score * 0.75),
    Metric("ownershipError", PERCENT, "c", 5, lambda lim, at_max: lim.winrate_percent * (
        OWNERSHIP_LIMIT_FACTOR_MAX if at_max else OWNERSHIP_LIMIT_FACTOR_99)),
)


@dataclass(frozen=True)
class Outputs:
    """The parts of one evaluation the test compares (White's view; policy with pass last, -1 where illegal)."""

    white_win: float
    white_loss: float
    no_result: float
    white_lead: float
    white_score_mean: float
    white_score_mean_sq: float
    shortterm_winloss_error: float
    shortterm_score_error: float
    policy: np.ndarray
    ownership: np.ndarray
    board_x: int
    board_y: int

    @classmethod
    def of(cls, output) -> "Outputs":
        """From an :class:`~katacli.nn.postprocess.NNOutput` (which must include the ownership)."""
        policy = np.append(np.asarray(output.policy, np.float64), output.policy_pass)
        return cls(float(output.white_win), float(output.white_loss), float(output.no_result),
                   float(output.white_lead), float(output.white_score_mean), float(output.white_score_mean_sq),
                   float(output.shortterm_winloss_error), float(output.shortterm_score_error), policy,
                   np.asarray(output.white_ownership, np.float64), output.board_x, output.board_y)

    def to_json(self, position_hash: str) -> str:
        return json.dumps({
            "nnHash": position_hash, "whiteWinProb": self.white_win, "whiteLossProb": self.white_loss,
            "whiteNoResultProb": self.no_result, "whiteScoreMean": self.white_score_mean,
            "whiteScoreMeanSq": self.white_score_mean_sq, "whiteLead": self.white_lead,
            "shorttermWinlossError": self.shortterm_winloss_error,
            "shorttermScoreError": self.shortterm_score_error, "policyProbs": self.policy.tolist(),
            "nnXLen": self.board_x, "nnYLen": self.board_y, "whiteOwnerMap": self.ownership.tolist()})

    @classmethod
    def from_json(cls, data: dict) -> "Outputs":
        return cls(data["whiteWinProb"], data["whiteLossProb"], data["whiteNoResultProb"], data["whiteLead"],
                   data["whiteScoreMean"], data["whiteScoreMeanSq"], data["shorttermWinlossError"],
                   data["shorttermScoreError"], np.asarray(data["policyProbs"], np.float64),
                   np.asarray(data["whiteOwnerMap"], np.float64), int(data["nnXLen"]), int(data["nnYLen"]))


def _score_stdev(out: Outputs) -> float:
    return math.sqrt(max(0.0, out.white_score_mean_sq - out.white_score_mean ** 2))


def position_errors(reference: Outputs, other: Outputs) -> dict[str, object]:
    """Each metric's error of ``other`` against ``reference`` for one position (ownership: one per point)."""
    if (reference.board_x, reference.board_y) != (other.board_x, other.board_y):
        raise GpuErrorTestError(f"board sizes differ: reference {reference.board_x}x{reference.board_y}, "
                                f"compared {other.board_x}x{other.board_y}")
    # The winrate's error: the win-loss value halved (a winrate), plus the no-result probability's error.
    winrate = (abs(0.5 * (reference.white_win - reference.white_loss) - 0.5 * (other.white_win - other.white_loss))
               + abs(reference.no_result - other.no_result))
    top = int(np.argmax(reference.policy))
    kept = reference.policy > KL_MIN_PROBABILITY
    with np.errstate(divide="ignore", invalid="ignore"):  # a zero where the reference has weight: infinite KL
        kl = float(np.sum(reference.policy[kept] * (np.log(reference.policy[kept]) - np.log(other.policy[kept]))))
    return {
        "winrateError": winrate,
        "leadError": abs(reference.white_lead - other.white_lead),
        "scoreMeanError": abs(reference.white_score_mean - other.white_score_mean),
        "scoreStdevError": abs(_score_stdev(reference) - _score_stdev(other)),
        "topPolicyDelta": abs(reference.policy[top] - other.policy[top]),
        "policyKLDiv": kl,
        "stWLErrorError": abs(reference.shortterm_winloss_error - other.shortterm_winloss_error),
        "stScErrorError": abs(reference.shortterm_score_error - other.shortterm_score_error),
        "ownershipError": np.abs(reference.ownership - other.ownership),
    }


@dataclass(frozen=True)
class Percentiles:
    average: float
    p90: float
    p99: float
    max: float


def percentiles(values: Sequence[float]) -> Percentiles:
    """Average, and KataGo's 90th/99th percentiles and maximum: the sorted values at index (n-1)*p/100."""
    if len(values) == 0:
        raise GpuErrorTestError("no errors to summarize (no positions)")
    ordered = np.sort(np.asarray(values, np.float64))
    last = len(ordered) - 1
    return Percentiles(float(np.mean(ordered)), float(ordered[last * 90 // 100]), float(ordered[last * 99 // 100]),
                       float(ordered[last]))


def _cell(value: float, metric: Metric) -> str:
    # KataGo's columns: %7.5f (%8.6f for the KL divergence) and the unit, in cells 8 wide, 2 spaces apart.
    return (f"{value:{metric.decimals + 2}.{metric.decimals}f}" + metric.unit).ljust(CELL_WIDTH)


@dataclass
class ErrorStats:
    """The errors of one configuration against the reference, over every position."""

    errors: dict[str, list] = field(default_factory=lambda: {m.name: [] for m in METRICS})

    def add(self, reference: Outputs, other: Outputs) -> None:
        for name, value in position_errors(reference, other).items():
            if isinstance(value, np.ndarray):
                self.errors[name].extend(value.tolist())
            else:
                self.errors[name].append(float(value))

    @property
    def num_positions(self) -> int:
        return len(self.errors["winrateError"])

    def summary(self, metric: Metric) -> Percentiles:
        p = percentiles(self.errors[metric.name])
        return Percentiles(p.average * metric.scale, p.p90 * metric.scale, p.p99 * metric.scale, p.max * metric.scale)

    def report_lines(self, label: str) -> list[str]:
        """KataGo's rows: the label and metric padded to 60 columns, then average, 90%, 99% and max."""
        lines = []
        for metric in METRICS:
            p = self.summary(metric)
            values = " " + CELL_SEPARATOR.join(_cell(v, metric) for v in (p.average, p.p90, p.p99, p.max))
            lines.append(f"{label} {metric.name}:".ljust(LABEL_WIDTH) + values.rstrip())
        return lines

    def worst_ratio(self, limits: ErrorLimits, at_max: bool) -> tuple[float, str]:
        """The largest error/limit ratio over the metrics and which metric it is (above 1: over the limit)."""
        worst, which = -1.0, ""
        for metric in METRICS:
            p = self.summary(metric)
            ratio = (p.max if at_max else p.p99) / metric.limit(limits, at_max)
            if ratio > worst:
                worst, which = ratio, metric.name
        return worst, which

    def margin_line(self, label: str, limits_99: ErrorLimits, limits_max: ErrorLimits) -> str:
        r99, which99 = self.worst_ratio(limits_99, at_max=False)
        rmax, whichmax = self.worst_ratio(limits_max, at_max=True)
        return (f"{label} closest margin: ".ljust(LABEL_WIDTH)
                + f" {r99:.3g}x of limit ({which99} 99%), {rmax:.3g}x of limit ({whichmax} max)")

    def passes(self, limits_99: ErrorLimits, limits_max: ErrorLimits) -> bool:
        return self.worst_ratio(limits_99, False)[0] <= 1.0 and self.worst_ratio(limits_max, True)[0] <= 1.0


def compare(reference: Sequence[Outputs], candidate: Sequence[Outputs]) -> ErrorStats:
    if len(reference) != len(candidate):
        raise GpuErrorTestError(f"{len(reference)} reference evaluations but {len(candidate)} to compare")
    stats = ErrorStats()
    for ref, other in zip(reference, candidate):
        stats.add(ref, other)
    return stats


def limits_for(precision: str) -> tuple[ErrorLimits, ErrorLimits]:
    """(99th percentile, maximum) limits: float32 is held to KataGo's FP32 limits, the others to its FP16 ones."""
    if precision == "float32":
        return FLOAT32_LIMITS_99, FLOAT32_LIMITS_MAX
    return REDUCED_LIMITS_99, REDUCED_LIMITS_MAX


# -- positions


@dataclass(frozen=True)
class InputSettings:
    """Network input settings of the test (KataGo reads them from the config so odd settings get tested)."""

    policy_optimism: float = 0.0
    playout_doubling_advantage: float = 0.0
    policy_temperature: float = 1.0


def game_positions(games, quick: bool = False) -> list:
    """The position before each move of every game (GameStates), in order; ``quick`` keeps about 30% (the same
    ones every run)."""
    states = []
    for game in games:
        states.extend(positions_from_game(game, max(1, len(game.moves))))
    if quick:
        rng = random.Random(QUICK_SEED)
        states = [s for s in states if rng.random() < QUICK_FRACTION] or states[:1]
    if not states:
        raise BenchmarkError("no positions to test")
    return states


def build_requests(states, settings: InputSettings, needs_metadata: bool) -> list:
    """One uncached NNRequest per position for the player to move, each with its own fixed symmetry
    (varied over the positions, so every symmetry's code path is compared)."""
    from katacli.nn.human_profile import parse_human_profile
    from katacli.nn.symmetry import NUM_SYMMETRIES
    from katacli.search.raw_eval import position_request

    profile = parse_human_profile(HUMAN_PROFILE_FOR_TEST) if needs_metadata else None
    requests = []
    for i, state in enumerate(states):
        request = position_request(state, state.next_player, i % NUM_SYMMETRIES, settings.policy_optimism,
                                   settings.playout_doubling_advantage, profile, needs_metadata)
        requests.append(dataclasses.replace(request, policy_temperature=settings.policy_temperature))
    return requests


def position_hash(request) -> str:
    """A digest of a request's network input: a saved reference matches only the same positions."""
    digest = hashlib.sha256()
    for part in (request.spatial, request.global_features, np.asarray([request.symmetry or 0]),
                 np.asarray([request.policy_optimism, request.policy_temperature])):
        digest.update(np.ascontiguousarray(part).tobytes())
    return digest.hexdigest()[:32]


# -- evaluation


def evaluate_all(evaluator, requests, batch_size: int) -> list[Outputs]:
    """Evaluate every request, ``batch_size`` positions per network call (1: one at a time)."""
    import torch

    outputs = []
    # Inference mode, as the engines evaluate: no autograd bookkeeping, and the device runner's CUDA graph
    # buffers (inference tensors) may be written.
    with torch.inference_mode():
        for start in range(0, len(requests), batch_size):
            outputs.extend(Outputs.of(o) for o in evaluator.evaluate_uncached(requests[start:start + batch_size]))
    return outputs


# -- reference files


def save_reference(path: str, requests, outputs: Sequence[Outputs], model_name: str) -> None:
    from katacli.atomic_files import atomic_write_text

    header = json.dumps({"format": REFERENCE_FORMAT, "model": model_name, "positions": len(outputs)})
    lines = [header] + [out.to_json(position_hash(req)) for req, out in zip(requests, outputs)]
    atomic_write_text(path, "\n".join(lines) + "\n")


def load_reference(path: str, requests) -> list[Outputs]:
    """A saved reference for these exact positions; a file for other positions (another net's inputs,
    board size, -quick or config) is refused with one line saying so."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = [line for line in f if line.strip()]
    except OSError as exc:
        raise GpuErrorTestError(f"cannot read the reference file {path}: {exc.strerror}") from None
    try:
        header = json.loads(lines[0]) if lines else {}
        if header.get("format") != REFERENCE_FORMAT:
            raise GpuErrorTestError(f"{path} is not a katacli reference file (written by kata testgpuerror "
                                    "-reference-file)")
        rows = [json.loads(line) for line in lines[1:]]
        outputs = [Outputs.from_json(row) for row in rows]
    except (json.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        if isinstance(exc, GpuErrorTestError):
            raise
        raise GpuErrorTestError(f"the reference file {path} is damaged: {exc}") from None
    if len(outputs) != len(requests):
        raise GpuErrorTestError(f"the reference file {path} has {len(outputs)} positions, this test has "
                                f"{len(requests)} (same -boardsize/-sgf, -quick and config as when it was saved?)")
    for i, (row, request) in enumerate(zip(rows, requests)):
        if row.get("nnHash") != position_hash(request):
            raise GpuErrorTestError(f"the reference file {path} was made for other positions or settings "
                                    f"(position {i} differs): save a new one")
    return outputs


def read_or_make_reference(path: Optional[str], requests, make: Callable[[], list], model_name: str):
    """(reference outputs, what happened: "loaded", "saved" or "computed")."""
    import os

    if path is not None and os.path.exists(path):
        return load_reference(path, requests), "loaded"
    outputs = make()
    if path is not None:
        save_reference(path, requests, outputs, model_name)
        return outputs, "saved"
    return outputs, "computed"


# -- the whole test


@dataclass(frozen=True)
class Configuration:
    """One way of running the network to compare with the reference."""

    device: str  # "cpu" or "cuda"
    precision: str  # "float32", "float16" or "bfloat16"

    @property
    def label(self) -> str:
        return f"{self.device} {self.precision}"


REFERENCE = Configuration("cpu", "float32")


def configurations_to_test(cuda: bool, precisions: Optional[Sequence[str]] = None) -> list[Configuration]:
    """The GPU in float32 and each reduced precision (default float16, KataGo's FP16) when there is one;
    otherwise the CPU's reduced precisions (default float16, the half precision kata's engines use) and its
    batched float32. bfloat16 only when asked: it keeps 3 fewer mantissa bits than the float16 KataGo's
    reduced-precision limits were made for, and a healthy machine's bfloat16 can land just past them."""
    wanted = list(precisions) if precisions else ["float16"]
    if cuda:
        return [Configuration("cuda", "float32")] + [Configuration("cuda", p) for p in wanted if p != "float32"]
    return [REFERENCE] + [Configuration("cpu", p) for p in wanted if p != "float32"]


@dataclass
class ConfigurationResult:
    configuration: Configuration
    unbatched: Optional[ErrorStats]  # None: the reference itself, computed in this run
    batched: ErrorStats
    seconds: float
    error: Optional[str] = None  # why this configuration could not run

    def passed(self) -> bool:
        if self.error is not None:
            return False
        limits = limits_for(self.configuration.precision)
        return all(s.passes(*limits) for s in (self.unbatched, self.batched) if s is not None)


def run_configuration(configuration: Configuration, make_evaluator, requests, reference: Sequence[Outputs],
                      batch_size: int, reference_computed: bool, report: Callable[[str], None]) -> ConfigurationResult:
    """Evaluate the positions one at a time and in batches with one configuration; its errors against the reference."""
    import time

    started = time.perf_counter()
    try:
        evaluator = make_evaluator(configuration)
        # The reference's own configuration, evaluated one at a time, is the reference: only its batches differ.
        same_as_reference = configuration == REFERENCE and reference_computed
        unbatched = None
        if not same_as_reference:
            report(f"Running evaluations in {configuration.label}")
            unbatched = compare(reference, evaluate_all(evaluator, requests, 1))
        report(f"Running batched evaluations in {configuration.label} (batches of {batch_size})")
        batched = compare(reference, evaluate_all(evaluator, requests, batch_size))
    except (RuntimeError, ValueError, NotImplementedError) as exc:  # e.g. a precision this torch cannot run here
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        report(f"Cannot run {configuration.label}: {reason}")
        return ConfigurationResult(configuration, None, ErrorStats(), 0.0, error=reason)
    return ConfigurationResult(configuration, unbatched, batched, time.perf_counter() - started)


def report_results(results: Sequence[ConfigurationResult], report: Callable[[str], None]) -> bool:
    """KataGo's summary rows and closest margins for each configuration; True when all are within the limits."""
    report("Reporting the average, 90%, 99%, and max abs error between the following configurations: ")
    for result in results:
        if result.error is not None:
            continue
        limits = limits_for(result.configuration.precision)
        for prefix, stats in (("", result.unbatched), ("batched ", result.batched)):
            if stats is None:
                continue
            label = f"{prefix}{result.configuration.label} error vs reference"
            for line in stats.report_lines(label):
                report(line)
            report(stats.margin_line(label, *limits))
    return all(r.passed() for r in results)
