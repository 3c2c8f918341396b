"""KataGo's postprocessing of raw network outputs (nneval.cpp), batched with numpy.

The network speaks from the side to move's point of view; everything produced here is
from White's, like KataGo's ``NNOutput``: win/loss/no-result probabilities, lead, self-play
score mean and mean square, variance of time left, short-term error estimates, the policy
over legal moves and pass, and ownership.

Inputs must already be in the real board's orientation (symmetry undone) and cropped to
the board: policy logits ``[N, board_y * board_x]`` row-major (top row first, x fastest).

The evaluators run the same arithmetic in one nogil pass (katacli/_core/nn_postprocess, which
``postprocess_multipliers`` feeds); these functions are its readable reference, and
tests/test_nn_postprocess_rows.py holds the two together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np

from katacli.nn.description import PostProcessParams

# Value given to illegal moves' logits before the softmax, and to their probabilities after it.
ILLEGAL_LOGIT = np.float32(-1e30)
ILLEGAL_POLICY = -1.0
# Without a ko rule that can cycle forever or territory scoring, no-result is impossible:
# KataGo pushes its logit down by this much and then zeroes it.
NO_RESULT_SUPPRESSION = 100000.0
# "Passing hacks": the pass prior may be at most this many times the sum of the other moves'.
MAX_PASS_POLICY_SUM_FACTOR = np.float32(19.0)
MIN_PASS_POLICY = np.float32(1e-20)
# softPlus(x) = x beyond this to avoid overflow.
SOFTPLUS_LINEAR_THRESHOLD = 40.0
# Versions before 9 have no short-term error heads; KataGo reports this for them.
MISSING_VALUE = -1.0
# Pre-v10 nets scale their short-term score error this way.
OLD_SHORTTERM_SCORE_ERROR_SCALE = 10.0
# V7 global feature indices that tell the rules apart for no-result purposes.
GLOBAL_KO_RULE_NOT_SIMPLE = 6  # 1 for positional/situational ko, 0 for simple ko
GLOBAL_TERRITORY_SCORING = 9


@dataclass(slots=True)  # no per-object __dict__: caches hold a million of these
class NNOutput:
    """One evaluated position, from White's point of view, in the real board's orientation."""

    white_win: float
    white_loss: float
    no_result: float
    white_lead: float
    white_score_mean: float  # KataGo's "whiteScoreSelfplay"
    white_score_mean_sq: float  # KataGo's "whiteScoreSelfplaySq"
    var_time_left: float  # -1 for nets without it
    shortterm_winloss_error: float  # -1 for nets without it
    shortterm_score_error: float  # -1 for nets without it
    policy: np.ndarray  # float32 [board_y * board_x], row-major, -1 where illegal
    policy_pass: float
    white_ownership: Optional[np.ndarray]  # float32 [board_y * board_x], row-major, in [-1, 1]; None when
    # the request left it out (NNRequest.include_ownership)
    board_x: int
    board_y: int
    symmetry: int
    policy_optimism: float = 0.0

    def policy_at(self, x: int, y: int) -> float:
        return float(self.policy[y * self.board_x + x])

    def ownership_at(self, x: int, y: int) -> float:
        return float(self.white_ownership[y * self.board_x + x])


def _softplus(x: np.ndarray) -> np.ndarray:
    # exp of at most SOFTPLUS_LINEAR_THRESHOLD cannot overflow (no errstate needed: it costs more than the math).
    return np.where(x > SOFTPLUS_LINEAR_THRESHOLD, x, np.log1p(np.exp(np.minimum(x, SOFTPLUS_LINEAR_THRESHOLD))))


def policy_probabilities(
    logits: np.ndarray,
    pass_logits: np.ndarray,
    legal: np.ndarray,
    pass_legal: np.ndarray,
    temperature: np.ndarray,
    output_scale: float = 1.0,
    passing_hacks: Optional[np.ndarray] = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Softmax over legal moves and pass (float32 as in KataGo); illegal entries become -1.

    ``logits`` ``[N, A]``, ``pass_logits`` ``[N]``, ``legal`` bool ``[N, A]``, ``pass_legal``
    bool ``[N]``, ``temperature`` ``[N]``. Returns (board probabilities ``[N, A]``, pass ``[N]``).
    """
    n, area = logits.shape
    all_logits = np.concatenate((logits, pass_logits[:, None]), axis=1).astype(np.float32)
    all_legal = np.concatenate((legal, pass_legal[:, None]), axis=1)
    if not np.all(all_legal.any(axis=1)):
        raise ValueError("a position has no legal move (not even pass)")
    scaling = (np.float32(output_scale) / temperature.astype(np.float32))[:, None]
    scaled = np.where(all_legal, all_logits * scaling, ILLEGAL_LOGIT)
    exps = np.exp(scaled - scaled.max(axis=1, keepdims=True))
    if passing_hacks is not None and passing_hacks.any():
        board_sum = exps[:, :area].sum(axis=1)
        capped = np.maximum(MIN_PASS_POLICY, np.minimum(exps[:, area], board_sum * MAX_PASS_POLICY_SUM_FACTOR))
        exps[:, area] = np.where(passing_hacks, capped, exps[:, area])
    sums = exps.sum(axis=1, keepdims=True)
    if not np.all(np.isfinite(sums)):
        raise FloatingPointError("non-finite policy sum")
    legal_counts = all_legal.sum(axis=1, keepdims=True)
    # If every legal move's probability rounded to 0, KataGo falls back to uniform.
    probs = np.where(sums > 0, exps / np.where(sums > 0, sums, 1), 1.0 / legal_counts)
    probs = np.where(all_legal, probs, ILLEGAL_POLICY).astype(np.float32)
    return probs[:, :area], probs[:, area]


@dataclass
class ValueOutputs:
    """White-perspective scalar outputs for a batch (arrays of length N)."""

    white_win: np.ndarray
    white_loss: np.ndarray
    no_result: np.ndarray
    white_lead: np.ndarray
    white_score_mean: np.ndarray
    white_score_mean_sq: np.ndarray
    var_time_left: np.ndarray
    shortterm_winloss_error: np.ndarray
    shortterm_score_error: np.ndarray


def value_outputs(
    value_logits: np.ndarray,
    score_value: np.ndarray,
    white_to_move: np.ndarray,
    allow_no_result: np.ndarray,
    version: int,
    params: PostProcessParams,
) -> ValueOutputs:
    """KataGo's value postprocessing (model versions >= 4), in double precision.

    ``value_logits`` ``[N, 3]``; ``score_value`` ``[N, 4 or 6]``; ``white_to_move`` and
    ``allow_no_result`` bool ``[N]`` (no-result exists only with simple ko or territory scoring).
    """
    scale = float(params.output_scale_multiplier)
    logits = value_logits.astype(np.float64) * scale
    sv = score_value.astype(np.float64) * scale
    win_logit, loss_logit = logits[:, 0], logits[:, 1]
    no_result_logit = np.where(allow_no_result, logits[:, 2], logits[:, 2] - NO_RESULT_SUPPRESSION)
    max_logit = np.maximum(np.maximum(win_logit, loss_logit), no_result_logit)
    win = np.exp(win_logit - max_logit)
    loss = np.exp(loss_logit - max_logit)
    no_result = np.where(allow_no_result, np.exp(no_result_logit - max_logit), 0.0)
    total = win + loss + no_result
    win, loss, no_result = win / total, loss / total, no_result / total

    score_mean = sv[:, 0] * params.score_mean_multiplier
    score_stdev = _softplus(sv[:, 1]) * params.score_stdev_multiplier
    score_mean_sq = score_mean * score_mean + score_stdev * score_stdev
    lead = sv[:, 2] * params.lead_multiplier
    var_time_left = _softplus(sv[:, 3]) * params.variance_time_multiplier
    # Score mean and square are conditional on the game having a result; no-result counts as 0.
    has_result = 1.0 - no_result
    score_mean, score_mean_sq, lead = score_mean * has_result, score_mean_sq * has_result, lead * has_result

    n = logits.shape[0]
    if version >= 14:
        s = _softplus(sv[:, 4] * 0.5)
        shortterm_winloss = np.sqrt(s * s * params.shortterm_value_error_multiplier)
        s = _softplus(sv[:, 5] * 0.5)
        shortterm_score = np.sqrt(s * s * params.shortterm_score_error_multiplier)
    elif version >= 10:
        shortterm_winloss = np.sqrt(_softplus(sv[:, 4]) * params.shortterm_value_error_multiplier)
        shortterm_score = np.sqrt(_softplus(sv[:, 5]) * params.shortterm_score_error_multiplier)
    elif version >= 9:
        shortterm_winloss = _softplus(sv[:, 4])
        shortterm_score = _softplus(sv[:, 5]) * OLD_SHORTTERM_SCORE_ERROR_SCALE
    if version < 9:
        var_time_left = np.full(n, MISSING_VALUE)
        shortterm_winloss = np.full(n, MISSING_VALUE)
        shortterm_score = np.full(n, MISSING_VALUE)

    # One check of every value (a search's batch pays for each numpy call, not for the elements).
    if not np.isfinite(np.stack(
            (total, score_mean, score_mean_sq, lead, var_time_left, shortterm_winloss, shortterm_score))).all():
        raise FloatingPointError("non-finite network value output")

    sign = np.where(white_to_move, 1.0, -1.0)
    return ValueOutputs(
        white_win=np.where(white_to_move, win, loss).astype(np.float32),
        white_loss=np.where(white_to_move, loss, win).astype(np.float32),
        no_result=no_result.astype(np.float32),
        white_lead=(sign * lead).astype(np.float32),
        white_score_mean=(sign * score_mean).astype(np.float32),
        white_score_mean_sq=score_mean_sq.astype(np.float32),
        var_time_left=var_time_left.astype(np.float32),
        shortterm_winloss_error=shortterm_winloss.astype(np.float32),
        shortterm_score_error=shortterm_score.astype(np.float32),
    )


def white_ownership(ownership_logits: np.ndarray, white_to_move: np.ndarray, output_scale: float = 1.0) -> np.ndarray:
    """tanh of the ownership logits ``[N, A]``, negated where Black is to move."""
    own = np.tanh(ownership_logits.astype(np.float32) * np.float32(output_scale))
    return np.where(white_to_move[:, None], own, -own).astype(np.float32)


def mix_policy_optimism(policy: np.ndarray, policy_pass: np.ndarray, optimism: np.ndarray,
                        num_policy_channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Blend the main and optimistic policy channels: ``p + (p_opt - p) * optimism``.

    ``policy`` ``[N, C, A]``, ``policy_pass`` ``[N, C]``; nets with one channel have no optimism.
    """
    if num_policy_channels < 2:
        return policy[:, 0], policy_pass[:, 0]
    opt = optimism.astype(np.float32)
    p, p_opt = policy[:, 0], policy[:, 1]
    mixed = p + (p_opt - p) * opt[:, None]
    mixed_pass = policy_pass[:, 0] + (policy_pass[:, 1] - policy_pass[:, 0]) * opt
    return mixed, mixed_pass


def allow_no_result_from_globals(global_features: np.ndarray) -> bool:
    """Whether no-result is possible, read from V7 global features: simple ko or territory scoring."""
    return bool(global_features[GLOBAL_KO_RULE_NOT_SIMPLE] == 0 or global_features[GLOBAL_TERRITORY_SCORING] == 1)


def postprocess_multipliers(params: PostProcessParams) -> tuple:
    """The model's postprocessing scales in the order katacli/_core/nn_postprocess.postprocess_rows takes them."""
    return (params.output_scale_multiplier, params.score_mean_multiplier, params.score_stdev_multiplier,
            params.lead_multiplier, params.variance_time_multiplier, params.shortterm_value_error_multiplier,
            params.shortterm_score_error_multiplier)
