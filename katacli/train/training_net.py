"""The training network: a :class:`~katacli.nn.torch_model.KataGoModel` plus KataGo's training-only heads.

A KataGo model file holds only what inference needs: two policy channels (policy and
short-term optimistic policy), value, six score/value scalars and ownership. KataGo trains
more outputs from the same trunk and head features, which regularise the net and feed the
optimistic-policy weights:

* policy: the opponent's reply, soft policy, soft opponent policy and long-term optimistic
  policy (4 extra channels from the same ``p1`` features and pass MLP hidden layer);
* value: 3 x 3 td-value logits and 3 td-score predictions (from the value ``v2`` features);
* spatial: scoring (area/territory), two future-position planes and 4 seki logits;
* the score belief: a mixture-of-softmaxes distribution over final scores.

:class:`TrainingNet` owns the inference model as ``.model`` (exported as is: its parameters
are the trained ones) and the extra heads beside it; it never changes :mod:`katacli.nn`.
Its forward pass runs the model's trunk and head layers itself so that the head features
are available; ``tests/test_train_net.py`` checks it matches ``KataGoModel.forward``.
"""

from __future__ import annotations

import math
from typing import NamedTuple, Optional

import torch
import torch.nn.functional as F
from torch import nn

from katacli.nn.description import Activation
from katacli.nn.layers import MaskInfo, apply_activation, global_pool, value_head_pool
from katacli.nn.torch_model import KataGoModel

EXTRA_SCORE_DISTR_RADIUS = 60
# Exported policy channels of a version-15 net: policy and short-term optimistic policy.
EXPORTED_POLICY_CHANNELS = 2
EXPORTED_SCORE_VALUE_CHANNELS = 6
# Extra policy channels: opponent reply, soft policy, soft opponent reply, long-term optimistic.
AUX_POLICY_CHANNELS = 4
NUM_TD_VALUES = 3
VALUE_LOGITS = 3
NUM_FUTUREPOS = 2
NUM_SEKI_LOGITS = 4
# Off-board policy logits are pushed this far down so they vanish in the softmax.
OFFBOARD_POLICY_LOGIT_PENALTY = 5000.0
# Shortterm error and variance heads use softplus with a floor on the gradient (KataGo).
SOFTPLUS_GRADIENT_FLOOR = 0.05
# Score belief offsets: a bias of 0.05 per point, parity alternates +-0.5.
SCORE_BELIEF_OFFSET_BIAS_SCALE = 0.05
# Output initialisation scales of KataGo's heads.
AUX_SPATIAL_OUTPUT_SCALE = 0.2
POLICY_OUTPUT_SCALE = 0.3
SCORE_BELIEF_OUTPUT_SCALE = 0.5
HEAD_BIAS_SCALE = 0.2
# Truncated normals at +-2 sigma have this much less spread than the requested sigma.
TRUNCATED_NORMAL_STD_CORRECTION = 0.87962566103423978

_ACTIVATION_GAINS = {
    Activation.RELU: math.sqrt(2.0),
    Activation.MISH: math.sqrt(2.210277),
    Activation.SILU: math.sqrt(2.0),
    Activation.IDENTITY: 1.0,
}


class UnsupportedModelError(ValueError):
    """The network cannot be trained by katacli (wrong version or head layout)."""


class TrainOutputs(NamedTuple):
    """Everything the losses need, postprocessed the way KataGo's training does."""

    policy_logits: torch.Tensor  # [N, 6, pos*pos+1]: policy, opp, soft, soft opp, long-opt, short-opt
    value_logits: torch.Tensor  # [N, 3]
    td_value_logits: torch.Tensor  # [N, 3 (long, mid, short), 3]
    td_score: torch.Tensor  # [N, 3]
    ownership_pretanh: torch.Tensor  # [N, 1, H, W]
    scoring: torch.Tensor  # [N, 1, H, W]
    futurepos_pretanh: torch.Tensor  # [N, 2, H, W]
    seki_logits: torch.Tensor  # [N, 4, H, W]
    score_mean: torch.Tensor  # [N]
    score_stdev: torch.Tensor  # [N]
    lead: torch.Tensor  # [N]
    variance_time: torch.Tensor  # [N]
    shortterm_value_error: torch.Tensor  # [N]
    shortterm_score_error: torch.Tensor  # [N]
    score_belief_logprobs: torch.Tensor  # [N, 2*(H*W+60)]


class _SoftplusWithGradientFloor(torch.autograd.Function):
    """softplus(x) (or softplus(x/2)^2), whose gradient never drops below a floor (KataGo)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, floor: float, square: bool) -> torch.Tensor:
        ctx.save_for_backward(x)
        ctx.floor = floor
        return torch.square(F.softplus(0.5 * x)) if square else F.softplus(x)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        (x,) = ctx.saved_tensors
        return grad * (ctx.floor + (1.0 - ctx.floor) * torch.sigmoid(x)), None, None


def softplus_with_floor(x: torch.Tensor, square: bool = False) -> torch.Tensor:
    return _SoftplusWithGradientFloor.apply(x, SOFTPLUS_GRADIENT_FLOOR, square)


def _init(tensor: torch.Tensor, activation: Activation, scale: float, fan_in: Optional[int] = None) -> None:
    """KataGo's initialisation: truncated normal with std = scale * gain / sqrt(fan_in)."""
    if fan_in is None:
        fan_in = tensor.shape[1] * (tensor[0][0].numel() if tensor.dim() > 2 else 1)
    std = scale * _ACTIVATION_GAINS[activation] / math.sqrt(fan_in) / TRUNCATED_NORMAL_STD_CORRECTION
    with torch.no_grad():
        nn.init.trunc_normal_(tensor, mean=0.0, std=std, a=-2.0 * std, b=2.0 * std)


def score_belief_sizes(v2_channels: int) -> tuple[int, int]:
    """(hidden channels, mixture components) of the score belief head, as KataGo's configs size them."""
    if v2_channels <= 24:
        hidden = v2_channels
    else:
        hidden = v2_channels - 16
    if v2_channels <= 12:
        mixtures = 2
    elif v2_channels <= 64:
        mixtures = 4
    elif v2_channels <= 80:
        mixtures = 6
    else:
        mixtures = 8
    return max(hidden, 1), mixtures


def check_trainable(model: KataGoModel) -> None:
    """Raise :class:`UnsupportedModelError` unless the net has the version-15 head layout."""
    if model.is_fused:
        raise UnsupportedModelError("cannot train a fused (inference-only) model")
    if model.policy_head.gpool_to_pass2 is None or model.version < 15:
        raise UnsupportedModelError(
            f"model {model.name!r} is version {model.version}; training needs a version 15+ net "
            "(its pass-move MLP layout); start from -model-kind or a newer net"
        )
    if model.num_policy_channels != EXPORTED_POLICY_CHANNELS:
        raise UnsupportedModelError(
            f"model {model.name!r} has {model.num_policy_channels} policy channels; only nets with policy + "
            "optimistic policy (2 channels, no q-value outputs) can be trained"
        )
    if model.value_head.sv3.out_features != EXPORTED_SCORE_VALUE_CHANNELS:
        raise UnsupportedModelError(f"model {model.name!r} lacks the 6 score/value outputs of version 15 nets")


class TrainingNet(nn.Module):
    def __init__(self, model: KataGoModel, seed: Optional[int] = None):
        super().__init__()
        check_trainable(model)
        self.model = model
        policy, value = model.policy_head, model.value_head
        activation = value.v2_activation.kind
        c_p1 = policy.p2_conv.in_channels
        c_pass = policy.gpool_to_pass2.in_features
        c_trunk = model.trunk.initial_conv.out_channels
        c_v1 = value.v1_conv.out_channels
        c_v2 = value.v2.out_features
        c_sb, num_mixtures = score_belief_sizes(c_v2)
        self.num_mixtures = num_mixtures
        self.aux_policy = nn.Conv2d(c_p1, AUX_POLICY_CHANNELS, 1, bias=False)
        self.aux_pass = nn.Linear(c_pass, AUX_POLICY_CHANNELS, bias=False)
        self.td_value = nn.Linear(c_v2, NUM_TD_VALUES * VALUE_LOGITS, bias=True)
        self.td_score = nn.Linear(c_v2, NUM_TD_VALUES, bias=True)
        self.scoring = nn.Conv2d(c_v1, 1, 1, bias=False)
        self.futurepos = nn.Conv2d(c_trunk, NUM_FUTUREPOS, 1, bias=False)
        self.seki = nn.Conv2d(c_trunk, NUM_SEKI_LOGITS, 1, bias=False)
        self.score_belief_hidden = nn.Linear(3 * c_v1, c_sb, bias=True)
        self.score_belief_offset = nn.Linear(1, c_sb, bias=False)
        self.score_belief_parity = nn.Linear(1, c_sb, bias=False)
        self.score_belief_out = nn.Linear(c_sb, num_mixtures, bias=True)
        self.score_belief_mix = nn.Linear(3 * c_v1, num_mixtures, bias=True)
        self._activation = activation
        generator_state = torch.random.get_rng_state()
        if seed is not None:
            torch.manual_seed(seed)
        try:
            self._initialize(activation)
        finally:
            if seed is not None:
                torch.random.set_rng_state(generator_state)

    def _initialize(self, act: Activation) -> None:
        ident = Activation.IDENTITY
        _init(self.aux_policy.weight, ident, POLICY_OUTPUT_SCALE)
        _init(self.aux_pass.weight, ident, POLICY_OUTPUT_SCALE)
        for linear in (self.td_value, self.td_score, self.score_belief_mix):
            _init(linear.weight, ident, 1.0)
            _init(linear.bias, ident, HEAD_BIAS_SCALE, fan_in=linear.in_features)
        for conv in (self.scoring, self.futurepos, self.seki):
            _init(conv.weight, ident, AUX_SPATIAL_OUTPUT_SCALE)
        hidden = self.score_belief_hidden
        _init(hidden.weight, act, 1.0)
        _init(hidden.bias, act, 1.0, fan_in=hidden.in_features)
        _init(self.score_belief_offset.weight, act, 1.0, fan_in=hidden.in_features)
        _init(self.score_belief_parity.weight, act, 1.0, fan_in=hidden.in_features)
        _init(self.score_belief_out.weight, ident, SCORE_BELIEF_OUTPUT_SCALE)
        _init(self.score_belief_out.bias, ident, SCORE_BELIEF_OUTPUT_SCALE * HEAD_BIAS_SCALE,
              fan_in=self.score_belief_out.in_features)

    # ------------------------------------------------------------------------------------------

    def _score_belief(self, pooled: torch.Tensor, global_features: torch.Tensor, area: int) -> torch.Tensor:
        """Log-probabilities over final scores (index k: score k - mid + 0.5), a mixture of softmaxes."""
        mid = area + EXTRA_SCORE_DISTR_RADIUS
        # float32 even under autocast: bfloat16 cannot hold offsets like 140.5 exactly.
        offsets = torch.arange(2 * mid, device=pooled.device, dtype=torch.float32) - mid + 0.5
        parity = 0.5 - torch.remainder(offsets - 0.5, 2.0)  # +0.5 on even offsets from mid, -0.5 on odd
        # The last global input is the komi parity feature that decides which scores are reachable.
        parity_input = parity.view(1, -1, 1) * global_features[:, -1:].unsqueeze(1)
        hidden = (self.score_belief_hidden(pooled).unsqueeze(1)
                  + self.score_belief_offset((offsets * SCORE_BELIEF_OFFSET_BIAS_SCALE).view(1, -1, 1))
                  + self.score_belief_parity(parity_input))
        per_mixture = F.log_softmax(self.score_belief_out(apply_activation(hidden, self._activation)), dim=1)
        mix = F.log_softmax(self.score_belief_mix(pooled), dim=1)
        return torch.logsumexp(per_mixture + mix.unsqueeze(1), dim=2)

    def forward(self, spatial: torch.Tensor, global_features: torch.Tensor, meta: Optional[torch.Tensor] = None,
                mask_full: Optional[bool] = None) -> TrainOutputs:
        model = self.model
        n, _, h, w = spatial.shape
        info = MaskInfo.from_spatial(spatial, mask_full)
        trunk = model.trunk(spatial, global_features, meta, info)

        head = model.policy_head
        p1 = head.p1_conv(trunk)
        pooled = global_pool(head.g1_norm(head.g1_conv(trunk), info.mask), info)
        p1 = p1 + head.gpool_to_bias(pooled).unsqueeze(-1).unsqueeze(-1)
        p1 = head.p1_norm(p1, info.mask)
        pass_hidden = apply_activation(head.gpool_to_pass(pooled), head.pass_activation.kind)
        exported, aux = head.p2_conv(p1), self.aux_policy(p1)
        # KataGo's channel order: policy, opp, soft, soft opp, long-term optimistic, short-term optimistic.
        board_logits = torch.cat((exported[:, :1], aux, exported[:, 1:]), dim=1)
        exported_pass, aux_pass = head.gpool_to_pass2(pass_hidden), self.aux_pass(pass_hidden)
        pass_logits = torch.cat((exported_pass[:, :1], aux_pass, exported_pass[:, 1:]), dim=1)
        if info.mask is not None:
            board_logits = board_logits - (1.0 - info.mask) * OFFBOARD_POLICY_LOGIT_PENALTY
        policy_logits = torch.cat((board_logits.view(n, board_logits.shape[1], h * w), pass_logits.unsqueeze(-1)), dim=2)

        vhead = model.value_head
        v1 = vhead.v1_norm(vhead.v1_conv(trunk), info.mask)
        vpooled = value_head_pool(v1, info)
        v2 = apply_activation(vhead.v2(vpooled), vhead.v2_activation.kind)
        value_logits = vhead.v3(v2)
        misc = vhead.sv3(v2)
        ownership = vhead.ownership_conv(v1)
        scoring, futurepos, seki = self.scoring(v1), self.futurepos(trunk), self.seki(trunk)
        if info.mask is not None:
            scoring, futurepos, seki = scoring * info.mask, futurepos * info.mask, seki * info.mask

        params = model.postprocess
        return TrainOutputs(
            policy_logits=policy_logits,
            value_logits=value_logits,
            td_value_logits=self.td_value(v2).view(n, NUM_TD_VALUES, VALUE_LOGITS),
            td_score=self.td_score(v2) * params.td_score_multiplier,
            ownership_pretanh=ownership,
            scoring=scoring,
            futurepos_pretanh=futurepos,
            seki_logits=seki,
            score_mean=misc[:, 0] * params.score_mean_multiplier,
            score_stdev=softplus_with_floor(misc[:, 1]) * params.score_stdev_multiplier,
            lead=misc[:, 2] * params.lead_multiplier,
            variance_time=softplus_with_floor(misc[:, 3]) * params.variance_time_multiplier,
            shortterm_value_error=softplus_with_floor(misc[:, 4], square=True) * params.shortterm_value_error_multiplier,
            shortterm_score_error=softplus_with_floor(misc[:, 5], square=True) * params.shortterm_score_error_multiplier,
            score_belief_logprobs=self._score_belief(vpooled, global_features, h * w),
        )
