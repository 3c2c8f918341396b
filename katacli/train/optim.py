"""Optimizer, learning-rate schedule, gradient clipping, lookahead and SWA, as KataGo's ``train.py`` sets them.

Parameters fall into KataGo's groups (input, normal, normal_attn, normal_gamma, noreg, output,
output_noreg...), each with its own LR factor and weight decay. The loss is a *sum* over
rows, so the SGD learning rate is a per-sample rate: ``3e-5 x lrScale x warmup x group
factor`` (AdamW: x1.33 x sqrt(global batch / 256)). Nets trained here have no batch norm
(fixup-style biases), so KataGo's fixup weight decays apply. Lookahead divides the LR by
its alpha, as KataGo does, so the effective step after averaging stays the same.
"""

from __future__ import annotations

import math
from typing import Iterable

import torch
from torch import nn

from katacli.nn.torch_model import AttentionBlock
from katacli.train.training_net import TrainingNet
from katacli.train.settings import TrainSettings

BASE_PER_SAMPLE_LR = 0.00003
ADAMW_LR_FACTOR = 1.33  # matches AdamW step sizes to SGD's for a mature net (KataGo)
SGD_MOMENTUM = 0.9
REFERENCE_BATCH = 256.0
# Gradient-norm caps for a global batch of 256 at lrScale 1.
GNORM_CAP_SGD_FIXUP = 2500.0
GNORM_CAP_ADAMW = 11000.0
MIN_LR_SCALE_FOR_CLIP = 1e-7
# KataGo's warmup: the first 2M samples in 8 equal steps at these fractions of the full LR.
KATAGO_WARMUP_SAMPLES = 2_000_000
WARMUP_FACTORS = (1 / 20, 1 / 14, 1 / 10, 1 / 7, 1 / 5, 1 / 3, 1 / 2, 1 / 1.4)
# Weight decays of fixup-style nets (per unit of wd scaling).
WD_SGD = 0.000001
WD_ADAMW = 0.005
WD_NOREG = 0.00000001
WD_ATTENTION_FACTOR = 0.5

INPUT_LAYERS = ("model.trunk.initial_conv.", "model.trunk.initial_matmul.", "model.trunk.metadata_encoder.")
TRUNK_PREFIX = "model.trunk."
GAMMA_NAMES = (".scale", ".norm_weight", ".gamma")


def parameter_group(name: str, param: nn.Parameter, attention_params: set[int]) -> str:
    """KataGo's regularization group of one parameter of a :class:`TrainingNet`."""
    is_weight = param.dim() >= 2
    if name.startswith(INPUT_LAYERS):
        return "input" if is_weight else "input_noreg"
    if name.startswith(TRUNK_PREFIX):
        if id(param) in attention_params and is_weight:
            return "normal_attn"
        if is_weight:
            return "normal"
        if name.endswith(GAMMA_NAMES):
            return "normal_gamma"
        return "noreg"
    return "output" if is_weight else "output_noreg"


def parameter_groups(net: TrainingNet) -> dict[str, list[tuple[str, nn.Parameter]]]:
    attention = {id(p) for m in net.modules() if isinstance(m, AttentionBlock) for p in m.parameters()}
    groups: dict[str, list[tuple[str, nn.Parameter]]] = {}
    for name, param in net.named_parameters():
        if param.requires_grad:
            groups.setdefault(parameter_group(name, param, attention), []).append((name, param))
    return groups


class Schedule:
    """Learning rate, weight decay and clipping threshold as functions of the samples trained."""

    def __init__(self, settings: TrainSettings, world_size: int):
        self.s = settings
        self.global_batch = settings.batch_size * world_size
        self.adamw = settings.optimizer == "adamw"

    def lr_scale(self, samples: int) -> float:
        if not self.s.lr_points:
            return self.s.lr_scale
        scale = self.s.lr_points[0][1]
        for start, value in self.s.lr_points:
            if samples >= start:
                scale = value
        return scale

    def warmup(self, samples: int) -> float:
        span = self.s.lr_warmup_samples
        if span <= 0 or samples >= span:
            return 1.0
        return WARMUP_FACTORS[int(samples * len(WARMUP_FACTORS) // span)]

    def per_sample_lr(self, samples: int) -> float:
        base = BASE_PER_SAMPLE_LR * (ADAMW_LR_FACTOR if self.adamw else 1.0)
        return base * self.lr_scale(samples) * self.warmup(samples)

    def group_lr_factor(self, group: str) -> float:
        s = self.s
        factor = {
            "input_noreg": s.noreg_lr_factor,
            "noreg": s.noreg_lr_factor,
            "output": s.head_lr_factor,
            "output_noreg": s.head_lr_factor * s.noreg_lr_factor,
        }.get(group, 1.0)
        if s.lookahead_k > 0:
            factor /= s.lookahead_alpha
        if self.adamw:
            factor *= math.sqrt(self.global_batch / REFERENCE_BATCH)
        return factor

    def weight_decay(self, group: str) -> float:
        batch_ratio = self.global_batch / REFERENCE_BATCH
        scaling = math.sqrt(batch_ratio) if self.adamw else batch_ratio
        if group in ("noreg", "input_noreg", "output_noreg"):
            return WD_NOREG * scaling
        decay = (WD_ADAMW if self.adamw else WD_SGD) * scaling
        return decay * (WD_ATTENTION_FACTOR if group == "normal_attn" else 1.0)

    def gnorm_cap(self, samples: int) -> float:
        cap = GNORM_CAP_ADAMW if self.adamw else GNORM_CAP_SGD_FIXUP
        cap *= self.s.gnorm_clip_scale * math.sqrt(self.global_batch / REFERENCE_BATCH)
        # Smaller learning rates get looser clipping (KataGo).
        return cap / math.sqrt(max(MIN_LR_SCALE_FOR_CLIP, self.lr_scale(samples)))

    def apply(self, optimizer: torch.optim.Optimizer, samples: int) -> float:
        """Set every group's LR and weight decay for this point of training; returns the per-sample LR."""
        lr = self.per_sample_lr(samples)
        for group in optimizer.param_groups:
            group["lr"] = lr * self.group_lr_factor(group["group_name"])
            group["weight_decay"] = self.weight_decay(group["group_name"])
        return lr


def build_optimizer(net: TrainingNet, schedule: Schedule, fused: bool = False) -> torch.optim.Optimizer:
    """KataGo's optimizer over the parameter groups. ``fused``: torch's one-kernel update, which also takes a
    device-side skip flag (``optimizer.found_inf``), so a step with bad gradients is skipped without a host sync."""
    groups = [{"params": [p for _, p in params], "group_name": name, "lr": 0.0,
               "weight_decay": schedule.weight_decay(name)} for name, params in parameter_groups(net).items()]
    extra = {"fused": True} if fused else {}
    if schedule.adamw:
        return torch.optim.AdamW(groups, lr=0.0, **extra)
    optimizer = torch.optim.SGD(groups, lr=0.0, momentum=SGD_MOMENTUM, **extra)
    if fused:
        # Fused SGD makes uninitialised momentum buffers on its first step and keeps them even when found_inf
        # skips that step; zero buffers give the same first step (0.9 * 0 + g = g) and no garbage.
        for group in optimizer.param_groups:
            for param in group["params"]:
                optimizer.state[param]["momentum_buffer"] = torch.zeros_like(param, memory_format=torch.preserve_format)
    return optimizer


def fused_optimizer_supported(device: torch.device) -> bool:
    """Whether torch has fused SGD/AdamW kernels for ``device`` (CUDA and, in recent torch, the CPU)."""
    try:
        probe = nn.Parameter(torch.zeros(1, device=device))
        torch.optim.SGD([probe], lr=0.0, momentum=SGD_MOMENTUM, fused=True)
    except (RuntimeError, ValueError):
        return False
    return True


class Lookahead:
    """Slow weights that move ``alpha`` of the way to the fast ones every ``k`` steps."""

    def __init__(self, params: Iterable[nn.Parameter], k: int, alpha: float):
        self.params = list(params)
        self.k = k
        self.alpha = alpha
        self.counter = 0
        self.slow = [p.detach().clone() for p in self.params]

    @property
    def in_sync(self) -> bool:
        return self.counter == 0

    @torch.no_grad()
    def step(self) -> None:
        self.counter += 1
        if self.counter >= self.k:
            # foreach: a few kernels for all parameters instead of three per parameter.
            fast = [p.detach() for p in self.params]
            torch._foreach_add_(self.slow, torch._foreach_sub(fast, self.slow), alpha=self.alpha)
            torch._foreach_copy_(fast, self.slow)
            self.counter = 0

    def state_dict(self) -> dict:
        return {"counter": self.counter, "slow": [t.cpu() for t in self.slow]}

    def load_state_dict(self, state: dict) -> None:
        self.counter = int(state["counter"])
        if len(state["slow"]) != len(self.slow):
            raise ValueError("lookahead state does not match the network")
        for slow, saved in zip(self.slow, state["slow"]):
            slow.copy_(saved)


class SwaAverage:
    """An exponential moving average of the exported model's weights, snapshotted every period."""

    def __init__(self, model: nn.Module, scale: float, period_samples: int):
        self.model = model
        self.decay_share = 1.0 / scale
        self.period = period_samples
        self.accumulated = 0
        self.snapshots = 0
        self.average = {name: t.detach().clone() for name, t in model.state_dict().items()}

    @torch.no_grad()
    def after_step(self, samples_in_step: int, in_sync: bool) -> None:
        self.accumulated += samples_in_step
        if self.accumulated < self.period or not in_sync:
            return
        self.accumulated = 0
        current = self.model.state_dict()
        for name, avg in self.average.items():
            if self.snapshots == 0 or not avg.is_floating_point():
                avg.copy_(current[name])
            else:
                avg.add_(current[name] - avg, alpha=self.decay_share)
        self.snapshots += 1

    def state_dict(self) -> dict:
        return {"accumulated": self.accumulated, "snapshots": self.snapshots,
                "average": {k: v.cpu() for k, v in self.average.items()}}

    def load_state_dict(self, state: dict) -> None:
        self.accumulated = int(state["accumulated"])
        self.snapshots = int(state["snapshots"])
        for name, avg in self.average.items():
            avg.copy_(state["average"][name])
