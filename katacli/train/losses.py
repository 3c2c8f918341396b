"""KataGo's training loss (``python/katago/train/metrics_pytorch.py``), term by term.

Every term is a per-row loss times the row's weight (``globalTargetsNC`` C25) and the
weight of its target, summed over the batch: the gradient of a sum makes the learning rate
a per-sample rate, as in KataGo. The weights inside each term (``POLICY_OPPONENT_WEIGHT``...)
are KataGo's; the scales between terms (soft policy, value, td-value, seki, variance time)
are settings, defaulting to KataGo's.

:meth:`KataGoLoss.__call__` returns the total to differentiate and each term, undivided;
the trainer reports them per sample.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F

from katacli.train import rows as R
from katacli.train.batch import Batch
from katacli.train.training_net import TrainOutputs

# Per-term weights (KataGo's constants).
POLICY_OPPONENT_WEIGHT = 0.15
VALUE_WEIGHT = 1.20
TD_SCORE_WEIGHT = 0.0004
OWNERSHIP_WEIGHT = 1.5
SCORING_WEIGHT = 0.25
FUTUREPOS_WEIGHT = 0.25
FUTUREPOS_STEP_WEIGHTS = (1.0, 0.25)  # the farther board is harder to predict
SCORE_MEAN_WEIGHT = 0.0015
SCORE_BELIEF_WEIGHT = 0.020  # both the pdf and the cdf term
SCORE_STDEV_WEIGHT = 0.001
LEAD_WEIGHT = 0.0060
VARIANCE_TIME_WEIGHT = 0.0003
SHORTTERM_VALUE_ERROR_WEIGHT = 2.0
SHORTTERM_SCORE_ERROR_WEIGHT = 0.00002
# Scales of the policy variants in the total (version 12-15 nets).
POLICY_MAIN_SCALE = 0.930
LONG_OPTIMISTIC_POLICY_SCALE = 0.100
SHORT_OPTIMISTIC_POLICY_SCALE = 0.200
# Huber deltas.
SCORE_HUBER_DELTA = 12.0
SCORE_STDEV_HUBER_DELTA = 10.0
LEAD_HUBER_DELTA = 8.0
VARIANCE_TIME_HUBER_DELTA = 50.0
SHORTTERM_VALUE_ERROR_HUBER_DELTA = 0.4
SHORTTERM_SCORE_ERROR_HUBER_DELTA = 100.0
# Tiny irreducible errors keep the error predictions away from zero.
VARIANCE_TIME_EPSILON = 1.0e-5
SHORTTERM_VALUE_ERROR_EPSILON = 1.0e-8
SHORTTERM_SCORE_ERROR_EPSILON = 1.0e-4
SCORE_BELIEF_STDEV_EPSILON = 0.001
# Soft policy targets: (p + eps) ^ 0.25, renormalised.
SOFT_POLICY_POWER = 0.25
SOFT_POLICY_EPSILON = 1e-7
# Optimistic policy: rows weighted by how much better than expected the outcome was.
OPTIMISM_THRESHOLD_STDEVS = 1.5
OPTIMISM_SHARPNESS = 3.0
OPTIMISM_SCORE_VARIANCE_FLOOR = 0.25
OPTIMISM_VALUE_VARIANCE_FLOOR = 0.0001
NO_RESULT_WIN_SHARE = 0.5
# Seki: a moving average of the unowned share of the board rescales the seki loss.
SEKI_EMA_DECAY = 0.998
SEKI_SCALE_NUMERATOR = 8.0 * 0.005
SEKI_SCALE_OFFSET = 0.005
SEKI_NEUTRAL_WEIGHT = 0.5
SEKI_EVAL_SCALE = 7.0
# Scoring loss: a square-root transform tames huge squared errors.
SCORING_TRANSFORM_SCALE = 4.0


@dataclass
class LossScales:
    """The scales between loss terms that KataGo exposes as options."""

    soft_policy: float = 8.0
    value: float = 0.6
    td_value: tuple[float, float, float] = (0.6, 0.6, 0.6)
    seki: float = 1.0
    variance_time: float = 1.0
    disable_optimistic_policy: bool = False


def cross_entropy(logits: torch.Tensor, target_probs: torch.Tensor, dim: int) -> torch.Tensor:
    return -torch.sum(target_probs * F.log_softmax(logits, dim=dim), dim=dim)


def huber(x: torch.Tensor, y: torch.Tensor, delta: float) -> torch.Tensor:
    diff = torch.abs(x - y)
    return torch.where(diff > delta, 0.5 * delta * delta + delta * (diff - delta), 0.5 * diff * diff)


def _normalized(counts: torch.Tensor) -> torch.Tensor:
    return counts / torch.sum(counts, dim=1, keepdim=True).clamp_min(1e-30)


def _soft(probs: torch.Tensor, legal_mask: torch.Tensor) -> torch.Tensor:
    soft = torch.pow((probs + SOFT_POLICY_EPSILON) * legal_mask, SOFT_POLICY_POWER)
    return soft / torch.sum(soft, dim=1, keepdim=True)


class KataGoLoss:
    """The loss of one batch. Holds the seki moving average (checkpointed with :meth:`state_dict`)."""

    def __init__(self, scales: Optional[LossScales] = None):
        self.scales = scales or LossScales()
        # The sum becomes a float64 tensor on the batch's device at the first step, so the moving average is
        # updated without reading the GPU every step; the weight depends on the step count alone.
        self.seki_ema_sum: float | torch.Tensor = 0.0
        self.seki_ema_weight = 0.0
        self._constants: dict[tuple[torch.device, torch.dtype], torch.Tensor] = {}

    def state_dict(self) -> dict:
        return {"seki_ema_sum": float(self.seki_ema_sum), "seki_ema_weight": self.seki_ema_weight}

    def load_state_dict(self, state: dict) -> None:
        self.seki_ema_sum = float(state["seki_ema_sum"])
        self.seki_ema_weight = float(state["seki_ema_weight"])

    def _seki_scale(self, unowned_share: torch.Tensor, training: bool) -> float | torch.Tensor:
        if not training:
            return SEKI_EVAL_SCALE
        share = unowned_share.detach().float()
        if dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1:
            # Average over ranks so a DDP run tracks the same statistic as one process.
            share = share.clone()
            dist.all_reduce(share)
            share /= dist.get_world_size()
        self.seki_ema_sum = self.seki_ema_sum * SEKI_EMA_DECAY + share.double()
        self.seki_ema_weight = self.seki_ema_weight * SEKI_EMA_DECAY + 1.0
        return SEKI_SCALE_NUMERATOR / (SEKI_SCALE_OFFSET + self.seki_ema_sum / self.seki_ema_weight)

    def __call__(self, out: TrainOutputs, batch: Batch, training: bool = True) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        s = self.scales
        gt = batch.global_targets
        n = gt.shape[0]
        mask = batch.spatial[:, 0]
        mask_sum = mask.sum(dim=(1, 2))
        row_weight = gt[:, R.GT_ROW_WEIGHT]
        policy_weight = gt[:, R.GT_POLICY_WEIGHT]
        next_policy_weight = gt[:, R.GT_NEXT_POLICY_WEIGHT]
        ownership_weight = gt[:, R.GT_OWNERSHIP_WEIGHT]

        def weighted(per_row: torch.Tensor, *weights: torch.Tensor) -> torch.Tensor:
            total = per_row * row_weight
            for w in weights:
                total = total * w
            return total.sum()

        # ---- policy
        logits = out.policy_logits
        legal = torch.cat((mask.reshape(n, -1), mask.new_ones((n, 1))), dim=1)
        target_player = _normalized(batch.policy_targets[:, 0])
        target_opponent = _normalized(batch.policy_targets[:, 1])
        terms: dict[str, torch.Tensor] = {}
        terms["p0loss"] = weighted(cross_entropy(logits[:, 0], target_player, 1), policy_weight)
        terms["p1loss"] = POLICY_OPPONENT_WEIGHT * weighted(cross_entropy(logits[:, 1], target_opponent, 1), next_policy_weight)
        terms["p0softloss"] = weighted(cross_entropy(logits[:, 2], _soft(target_player, legal), 1), policy_weight)
        terms["p1softloss"] = POLICY_OPPONENT_WEIGHT * weighted(
            cross_entropy(logits[:, 3], _soft(target_opponent, legal), 1), next_policy_weight)

        if s.disable_optimistic_policy:
            long_weight = short_weight = policy_weight * 0.5
        else:
            # Long-term: the game was won (squared, so draws count less), or the final score beat the
            # prediction by about 1.5 standard deviations.
            win_squared = torch.square(gt[:, 0] + NO_RESULT_WIN_SHARE * gt[:, 2])
            score_excess = (gt[:, R.GT_SCORE] - out.score_mean.detach()) / torch.sqrt(
                torch.square(out.score_stdev.detach()) + OPTIMISM_SCORE_VARIANCE_FLOOR)
            long_weight = torch.clamp(win_squared + self._optimism(score_excess), 0.0, 1.0)
            long_weight = long_weight * policy_weight * ownership_weight
            # Short-term: the short-term value or score beat the prediction by about 1.5 stdevs.
            short_pred = F.softmax(out.td_value_logits[:, 2].detach(), dim=1)
            short_value = gt[:, R.GT_TD_VALUE[2].start] - gt[:, R.GT_TD_VALUE[2].start + 1]
            value_excess = (short_value - (short_pred[:, 0] - short_pred[:, 1])) / torch.sqrt(
                out.shortterm_value_error.detach() + OPTIMISM_VALUE_VARIANCE_FLOOR)
            score_excess = (gt[:, R.GT_TD_SCORE[2]] - out.td_score[:, 2].detach()) / torch.sqrt(
                out.shortterm_score_error.detach() + OPTIMISM_SCORE_VARIANCE_FLOOR)
            short_weight = torch.clamp(self._optimism(value_excess) + self._optimism(score_excess), 0.0, 1.0)
            short_weight = short_weight * policy_weight * ownership_weight
        terms["p0lopt"] = weighted(cross_entropy(logits[:, 4], target_player, 1), long_weight)
        terms["p0sopt"] = weighted(cross_entropy(logits[:, 5], target_player, 1), short_weight)

        # ---- value and td value
        value_weight = 1.0 - gt[:, R.GT_ONE_MINUS_VALUE_WEIGHT]
        td_weight = 1.0 - gt[:, R.GT_ONE_MINUS_TD_VALUE_WEIGHT]
        terms["vloss"] = VALUE_WEIGHT * weighted(cross_entropy(out.value_logits, gt[:, R.GT_VALUE], 1), value_weight)
        td_targets = torch.stack([gt[:, sl] for sl in R.GT_TD_VALUE], dim=1)
        # Minus the target's entropy, so a perfect prediction scores zero.
        td_loss = cross_entropy(out.td_value_logits, td_targets, 2) - cross_entropy(torch.log(td_targets + 1e-30), td_targets, 2)
        for k in range(3):
            terms[f"tdvloss{k + 1}"] = VALUE_WEIGHT * weighted(td_loss[:, k], td_weight)
        # Columns picked one by one: indexing with a list would upload an index tensor (a host sync) every step.
        td_score_targets = torch.stack([gt[:, column] for column in R.GT_TD_SCORE], dim=1)
        terms["tdsloss"] = TD_SCORE_WEIGHT * weighted(
            huber(out.td_score, td_score_targets, SCORE_HUBER_DELTA).sum(dim=1), ownership_weight)

        # ---- spatial targets
        vt = batch.value_targets
        target_ownership = vt[:, R.VT_OWNERSHIP]
        own_bce = F.binary_cross_entropy_with_logits(
            out.ownership_pretanh[:, 0] * 2.0, (1.0 + target_ownership) / 2.0, reduction="none")
        terms["oloss"] = OWNERSHIP_WEIGHT * weighted((own_bce * mask).sum(dim=(1, 2)) / mask_sum, ownership_weight)

        scoring_sq = (torch.square(out.scoring[:, 0] - vt[:, R.VT_SCORING] / R.SCORING_TARGET_SCALE) * mask).sum(dim=(1, 2)) / mask_sum
        scoring = SCORING_TRANSFORM_SCALE * (torch.sqrt(scoring_sq * 0.5 + 1.0) - 1.0)
        terms["sloss"] = weighted(scoring, gt[:, R.GT_SCORING_WEIGHT])

        steps = self._futurepos_steps(vt)
        futurepos = torch.square(torch.tanh(out.futurepos_pretanh) - vt[:, R.VT_FUTUREPOS]) * mask.unsqueeze(1) * steps
        terms["fploss"] = FUTUREPOS_WEIGHT * weighted(futurepos.sum(dim=(1, 2, 3)) / torch.sqrt(mask_sum),
                                                      gt[:, R.GT_FUTUREPOS_WEIGHT])
        terms["skloss"] = self._seki(out, vt, target_ownership, ownership_weight, mask, mask_sum, row_weight, training)

        # ---- scores
        terms["smloss"] = SCORE_MEAN_WEIGHT * weighted(huber(out.score_mean, gt[:, R.GT_SCORE], SCORE_HUBER_DELTA), ownership_weight)
        target_distribution = batch.score_distribution / R.SCORE_DISTRIBUTION_TOTAL
        belief = out.score_belief_logprobs
        cdf_gap = torch.cumsum(torch.exp(belief), dim=1) - torch.cumsum(target_distribution, dim=1)
        terms["sbcdfloss"] = SCORE_BELIEF_WEIGHT * weighted(torch.sum(torch.square(cdf_gap), dim=1), ownership_weight)
        terms["sbpdfloss"] = SCORE_BELIEF_WEIGHT * weighted(cross_entropy(belief, target_distribution, 1), ownership_weight)
        terms["sdregloss"] = SCORE_STDEV_WEIGHT * weighted(huber(out.score_stdev, self._belief_stdev(belief), SCORE_STDEV_HUBER_DELTA))
        terms["leadloss"] = LEAD_WEIGHT * weighted(huber(out.lead, gt[:, R.GT_LEAD], LEAD_HUBER_DELTA), gt[:, R.GT_LEAD_WEIGHT])
        terms["vtimeloss"] = VARIANCE_TIME_WEIGHT * weighted(
            huber(out.variance_time, gt[:, R.GT_VARIANCE_TIME] + VARIANCE_TIME_EPSILON, VARIANCE_TIME_HUBER_DELTA),
            ownership_weight)

        # ---- short-term error predictions (targets: this net's own squared td errors)
        short_probs = torch.softmax(out.td_value_logits[:, 2], dim=1).detach()
        value_sq_error = torch.square((short_probs[:, 0] - short_probs[:, 1]) - (td_targets[:, 2, 0] - td_targets[:, 2, 1]))
        terms["evstloss"] = SHORTTERM_VALUE_ERROR_WEIGHT * weighted(
            huber(out.shortterm_value_error, value_sq_error + SHORTTERM_VALUE_ERROR_EPSILON,
                  SHORTTERM_VALUE_ERROR_HUBER_DELTA), ownership_weight)
        score_sq_error = torch.square(out.td_score[:, 2].detach() - td_score_targets[:, 2])
        terms["esstloss"] = SHORTTERM_SCORE_ERROR_WEIGHT * weighted(
            huber(out.shortterm_score_error, score_sq_error + SHORTTERM_SCORE_ERROR_EPSILON,
                  SHORTTERM_SCORE_ERROR_HUBER_DELTA), ownership_weight)

        total = (
            terms["p0loss"] * POLICY_MAIN_SCALE
            + terms["p1loss"]
            + (terms["p0softloss"] + terms["p1softloss"]) * s.soft_policy
            + terms["p0lopt"] * LONG_OPTIMISTIC_POLICY_SCALE
            + terms["p0sopt"] * SHORT_OPTIMISTIC_POLICY_SCALE
            + terms["vloss"] * s.value
            + sum(terms[f"tdvloss{k + 1}"] * s.td_value[k] for k in range(3))
            + terms["tdsloss"]
            + terms["oloss"]
            + terms["sloss"] * SCORING_WEIGHT
            + terms["fploss"]
            + terms["skloss"] * s.seki
            + terms["smloss"]
            + terms["sbcdfloss"]
            + terms["sbpdfloss"]
            + terms["sdregloss"]
            + terms["leadloss"]
            + terms["vtimeloss"] * s.variance_time
            + terms["evstloss"]
            + terms["esstloss"]
        )
        terms["policy_accuracy"] = (weighted((torch.argmax(logits[:, 0], 1) == torch.argmax(target_player, 1)).float(),
                                             policy_weight))
        return total, {name: value.detach() for name, value in terms.items()}

    def _futurepos_steps(self, like: torch.Tensor) -> torch.Tensor:
        """FUTUREPOS_STEP_WEIGHTS as a [1, 2, 1, 1] tensor, uploaded once per device (an upload waits for the GPU)."""
        key = (like.device, like.dtype)
        if key not in self._constants:
            self._constants[key] = torch.tensor(FUTUREPOS_STEP_WEIGHTS, dtype=like.dtype, device=like.device).view(1, -1, 1, 1)
        return self._constants[key]

    @staticmethod
    def _optimism(stdevs_excess: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid((stdevs_excess - OPTIMISM_THRESHOLD_STDEVS) * OPTIMISM_SHARPNESS)

    @staticmethod
    def _belief_stdev(belief_logprobs: torch.Tensor) -> torch.Tensor:
        """Standard deviation of the score belief: what the score stdev output should say."""
        width = belief_logprobs.shape[1]
        mid = width // 2
        offsets = torch.arange(width, device=belief_logprobs.device, dtype=belief_logprobs.dtype) - mid + 0.5
        probs = torch.exp(belief_logprobs)
        mean = torch.sum(probs * offsets, dim=1, keepdim=True)
        return torch.sqrt(SCORE_BELIEF_STDEV_EPSILON + torch.sum(probs * torch.square(offsets - mean), dim=1))

    def _seki(self, out: TrainOutputs, vt: torch.Tensor, target_ownership: torch.Tensor, ownership_weight: torch.Tensor,
              mask: torch.Tensor, mask_sum: torch.Tensor, row_weight: torch.Tensor, training: bool) -> torch.Tensor:
        owned = torch.square(target_ownership)
        unowned = 1.0 - owned
        unowned_share = torch.mean(torch.sum(unowned * mask, dim=(1, 2)) / (1.0 + mask_sum) * ownership_weight)
        scale = self._seki_scale(unowned_share, training)
        target_seki = vt[:, R.VT_SEKI]
        sign_target = torch.stack((1.0 - torch.square(target_seki), F.relu(target_seki), F.relu(-target_seki)), dim=1)
        sign_loss = torch.sum(cross_entropy(out.seki_logits[:, 0:3], sign_target, 1) * mask, dim=(1, 2))
        neutral_logits = torch.stack((out.seki_logits[:, 3], torch.zeros_like(target_ownership)), dim=1)
        neutral_loss = torch.sum(cross_entropy(neutral_logits, torch.stack((unowned, owned), dim=1), 1) * mask, dim=(1, 2))
        per_row = (sign_loss + SEKI_NEUTRAL_WEIGHT * neutral_loss) / mask_sum
        return (per_row * row_weight * ownership_weight * scale).sum()
