"""PyTorch building blocks of KataGo networks, with KataGo's exact masking semantics.

Tensors are NCHW. ``mask`` is the on-board mask ``[N, 1, H, W]`` (input channel 0), or
``None`` when every position of the batch is on the board, which lets the layers skip
all masking work (the common case: the evaluator groups positions by board size).
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from katacli.nn.description import Activation

# Global pooling features are scaled around this board width (sqrt of the on-board area).
GPOOL_WIDTH_CENTER = 14.0
GPOOL_WIDTH_SCALE = 0.1
# Value-head pooling's quadratic term: ((w - 14)^2 * 0.01 - 0.1).
VALUE_POOL_QUADRATIC_SCALE = 0.01
VALUE_POOL_QUADRATIC_OFFSET = 0.1


def apply_activation(x: torch.Tensor, kind: Activation) -> torch.Tensor:
    if kind is Activation.RELU:
        return F.relu(x)
    if kind is Activation.MISH:
        return F.mish(x)
    if kind is Activation.SILU:
        return F.silu(x)
    return x


class NamedConv(nn.Conv2d):
    """Zero-padded 'same' convolution that remembers its layer name in the model file."""

    def __init__(self, name: str, in_channels: int, out_channels: int, kernel_y: int, kernel_x: int,
                 dilation_y: int = 1, dilation_x: int = 1, bias: bool = False):
        super().__init__(
            in_channels,
            out_channels,
            (kernel_y, kernel_x),
            padding=(dilation_y * (kernel_y // 2), dilation_x * (kernel_x // 2)),
            dilation=(dilation_y, dilation_x),
            bias=bias,
        )
        self.desc_name = name


class NamedLinear(nn.Linear):
    """Matrix multiplication layer (``weight`` is ``[out, in]``) with an optional separately named bias."""

    def __init__(self, name: str, in_features: int, out_features: int, bias_name: Optional[str] = None):
        super().__init__(in_features, out_features, bias=bias_name is not None)
        self.desc_name = name
        self.bias_name = bias_name


class NormAct(nn.Module):
    """A batch-norm layer of the model file, its activation, and masking: ``act(x*s + b) * mask``.

    Holds the file's parameters (mean, variance, optional scale, optional bias). For inference
    the affine part is either precomputed (:meth:`freeze`) or folded into the convolution that
    precedes it (:meth:`fold_into`), after which only the activation and masking remain.
    """

    def __init__(self, norm_name: str, act_name: str, channels: int, activation: Activation,
                 epsilon: float = 1e-20, has_scale: bool = False, has_bias: bool = True):
        super().__init__()
        self.norm_name = norm_name
        self.act_name = act_name
        self.activation = activation
        self.epsilon = epsilon
        self.register_buffer("mean", torch.zeros(channels))
        # 1 - epsilon is how KataGo's exporter writes identity statistics.
        self.register_buffer("variance", torch.full((channels,), 1.0 - epsilon))
        self.scale = nn.Parameter(torch.ones(channels)) if has_scale else None
        self.bias = nn.Parameter(torch.zeros(channels)) if has_bias else None
        self.mode = "live"  # live: compute from parameters; frozen: precomputed; folded: no affine

    @property
    def channels(self) -> int:
        return self.mean.shape[0]

    def merged_scale_bias(self) -> tuple[torch.Tensor, torch.Tensor]:
        eps = torch.tensor(self.epsilon, dtype=torch.float32)
        scale = self.scale if self.scale is not None else torch.ones_like(self.mean)
        merged_scale = scale / torch.sqrt(self.variance + eps)
        bias = self.bias if self.bias is not None else torch.zeros_like(self.mean)
        return merged_scale, bias - merged_scale * self.mean

    def freeze(self) -> None:
        with torch.no_grad():
            scale, bias = self.merged_scale_bias()
        self.register_buffer("frozen_scale", scale.detach().view(1, -1, 1, 1).clone())
        self.register_buffer("frozen_bias", bias.detach().view(1, -1, 1, 1).clone())
        self.mode = "frozen"

    @torch.no_grad()
    def fold_into(self, conv: nn.Conv2d, linears: tuple[nn.Linear, ...] = ()) -> nn.Conv2d:
        """Fold this layer's affine part into ``conv`` (and linear layers adding into its output).

        Returns a convolution with bias computing ``conv(x)*s + b``; the linears are rescaled in place.
        """
        scale, bias = self.merged_scale_bias()
        fused = nn.Conv2d(conv.in_channels, conv.out_channels, conv.kernel_size, padding=conv.padding,
                          dilation=conv.dilation, bias=True)
        fused.weight.copy_(conv.weight * scale.view(-1, 1, 1, 1))
        fused.bias.copy_(bias)
        for linear in linears:
            linear.weight.mul_(scale.view(-1, 1))
        self.mode = "folded"
        return fused

    def forward(self, x: torch.Tensor, mask: Optional[torch.Tensor]) -> torch.Tensor:
        if self.mode == "frozen":
            x = torch.addcmul(self.frozen_bias, x, self.frozen_scale)
        elif self.mode == "live":
            scale, bias = self.merged_scale_bias()
            if torch.is_autocast_enabled(x.device.type):
                # Training under autocast: x comes from a convolution in the low-precision dtype and goes on into
                # convolutions; float32 parameters would promote it to float32 only for the next layer to cast it
                # back (a copy each way, forward and backward). Outside autocast this changes nothing.
                scale, bias = scale.to(x.dtype), bias.to(x.dtype)
                mask = mask.to(x.dtype) if mask is not None else None
            x = torch.addcmul(bias.view(1, -1, 1, 1), x, scale.view(1, -1, 1, 1))
        x = apply_activation(x, self.activation)
        return x if mask is None else x * mask


class MaskInfo:
    """The mask of a batch and the per-position counts the pooling layers need."""

    def __init__(self, mask: Optional[torch.Tensor], height: int, width: int, batch: int,
                 device: torch.device, dtype: torch.dtype):
        self.mask = mask  # None: every position on board
        if mask is None:
            area = float(height * width)
            self.mask_sum = torch.full((batch, 1), area, device=device, dtype=dtype)
        else:
            self.mask_sum = mask.sum(dim=(2, 3))  # [N, 1]
        width_offset = torch.sqrt(self.mask_sum) - GPOOL_WIDTH_CENTER
        self.width_term = width_offset * GPOOL_WIDTH_SCALE
        self.quadratic_width_term = width_offset * width_offset * VALUE_POOL_QUADRATIC_SCALE - VALUE_POOL_QUADRATIC_OFFSET

    @classmethod
    def from_spatial(cls, spatial: torch.Tensor, mask_full: Optional[bool] = None) -> "MaskInfo":
        n, _, h, w = spatial.shape
        mask = spatial[:, 0:1]
        if mask_full is None:
            mask_full = bool(torch.all(mask == 1))
        return cls(None if mask_full else mask, h, w, n, spatial.device, spatial.dtype)


def global_pool(x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
    """KataGo's gpool: [mean, mean * width term, max] over on-board positions -> ``[N, 3C]``.

    ``x`` must already be masked (zero off board).
    """
    mean = x.sum(dim=(2, 3)) / info.mask_sum
    if info.mask is None:
        maximum = x.amax(dim=(2, 3))
    else:
        # Off-board positions become -1, below anything the activations produce, as in KataGo.
        maximum = (x + (info.mask - 1.0)).amax(dim=(2, 3))
    return torch.cat((mean, mean * info.width_term, maximum), dim=1)


def value_head_pool(x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
    """KataGo's value-head pooling: [mean, mean * width term, mean * quadratic width term]."""
    mean = x.sum(dim=(2, 3)) / info.mask_sum
    return torch.cat((mean, mean * info.width_term, mean * info.quadratic_width_term), dim=1)


# ---------------------------------------------------------------------------------------------
# RMS norms (transformer nets)


def rms_norm_positions(x: torch.Tensor, weight: torch.Tensor, epsilon: float) -> torch.Tensor:
    """RMS norm over channels at each position of ``x`` ``[N, L, C]``, scaled by ``weight``."""
    inv_rms = torch.rsqrt(x.square().mean(dim=-1, keepdim=True) + epsilon)
    return x * inv_rms * weight


class TrunkTipRMSNorm(nn.Module):
    """Trunk-tip RMS norm with gamma, beta and activation (trunk norm kind 1)."""

    def __init__(self, norm_name: str, act_name: str, channels: int, epsilon: float, spatial: bool, activation: Activation):
        super().__init__()
        self.norm_name = norm_name
        self.act_name = act_name
        self.epsilon = epsilon
        self.spatial = spatial
        self.activation = activation
        self.gamma = nn.Parameter(torch.ones(channels))
        self.beta = nn.Parameter(torch.zeros(channels))

    def forward(self, x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
        c = x.shape[1]
        if self.spatial:
            sq = x.square() if info.mask is None else x.square() * info.mask
            mean_sq = sq.sum(dim=(1, 2, 3)) / (info.mask_sum[:, 0] * c)
            x = x * torch.rsqrt(mean_sq + self.epsilon).view(-1, 1, 1, 1)
        else:
            x = x * torch.rsqrt(x.square().mean(dim=1, keepdim=True) + self.epsilon)
        x = apply_activation(x * self.gamma.view(1, -1, 1, 1) + self.beta.view(1, -1, 1, 1), self.activation)
        return x if info.mask is None else x * info.mask


# ---------------------------------------------------------------------------------------------
# Transformer blocks


def _rope_tables(block: "TransformerAttention", height: int, width: int, device) -> tuple[torch.Tensor, torch.Tensor]:
    """cos/sin of the rotation angles, ``[heads_or_1, pairs, L]``, positions in row-major order."""
    pairs = block.q_head_dim // 2
    ys = torch.arange(height, dtype=torch.float32, device=device).repeat_interleave(width)
    xs = torch.arange(width, dtype=torch.float32, device=device).repeat(height)
    if block.learnable_rope:
        freqs = block.rope_freqs.float()  # [kv_heads, pairs, 2] as (x, y)
        angle = xs.view(1, 1, -1) * freqs[:, :, 0:1] + ys.view(1, 1, -1) * freqs[:, :, 1:2]
    else:
        pairs_per_axis = pairs // 2
        half_dim = block.q_head_dim / 2
        p = torch.arange(pairs, dtype=torch.float32, device=device)
        axis_index = torch.where(p < pairs_per_axis, p, p - pairs_per_axis)
        freq = 1.0 / torch.pow(torch.tensor(block.rope_theta, dtype=torch.float32, device=device), 2 * axis_index / half_dim)
        pos = torch.where((p < pairs_per_axis).view(-1, 1), ys.view(1, -1), xs.view(1, -1))
        angle = (pos * freq.view(-1, 1)).unsqueeze(0)
    return torch.cos(angle), torch.sin(angle)


def _apply_rope(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate channel pairs (2p, 2p+1) of ``x`` ``[N, heads, L, D]`` by tables ``[heads|1, D/2, L]``."""
    n, h, length, d = x.shape
    pairs = x.view(n, h, length, d // 2, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]
    cos = cos.transpose(1, 2).unsqueeze(0)  # [1, heads|1, L, D/2]
    sin = sin.transpose(1, 2).unsqueeze(0)
    return torch.stack((x0 * cos - x1 * sin, x0 * sin + x1 * cos), dim=-1).view(n, h, length, d)


class TransformerAttention(nn.Module):
    def __init__(self, name: str, channels: int, num_heads: int, num_kv_heads: int, q_head_dim: int, v_head_dim: int,
                 use_rope: bool, learnable_rope: bool, norm_name: str, norm_epsilon: float,
                 proj_names: tuple[str, str, str, str], rope_name: str = "", rope_theta: float = 0.0):
        super().__init__()
        self.desc_name = name
        self.num_heads = num_heads
        self.num_kv_heads = num_kv_heads
        self.q_head_dim = q_head_dim
        self.v_head_dim = v_head_dim
        self.use_rope = use_rope
        self.learnable_rope = learnable_rope
        self.rope_name = rope_name
        self.rope_theta = rope_theta
        self.norm_name = norm_name
        self.norm_epsilon = norm_epsilon
        self.norm_weight = nn.Parameter(torch.ones(channels))
        q_name, k_name, v_name, out_name = proj_names
        self.q_proj = NamedLinear(q_name, channels, num_heads * q_head_dim)
        self.k_proj = NamedLinear(k_name, channels, num_kv_heads * q_head_dim)
        self.v_proj = NamedLinear(v_name, channels, num_kv_heads * v_head_dim)
        self.out_proj = NamedLinear(out_name, num_heads * v_head_dim, channels)
        self.rope_freqs = nn.Parameter(torch.zeros(num_kv_heads, q_head_dim // 2, 2)) if use_rope and learnable_rope else None
        self._rope_cache: dict = {}

    def rope(self, height: int, width: int, device) -> tuple[torch.Tensor, torch.Tensor]:
        if self.learnable_rope and self.training:
            return _rope_tables(self, height, width, device)
        key = (height, width, str(device))
        if key not in self._rope_cache:
            self._rope_cache[key] = _rope_tables(self, height, width, device)
        return self._rope_cache[key]

    def forward(self, x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
        n, c, h, w = x.shape
        seq = x.flatten(2).transpose(1, 2)  # [N, L, C]
        normed = rms_norm_positions(seq, self.norm_weight, self.norm_epsilon)
        q = self.q_proj(normed).view(n, h * w, self.num_heads, self.q_head_dim).transpose(1, 2)
        k = self.k_proj(normed).view(n, h * w, self.num_kv_heads, self.q_head_dim).transpose(1, 2)
        v = self.v_proj(normed).view(n, h * w, self.num_kv_heads, self.v_head_dim).transpose(1, 2)
        if self.use_rope:
            cos, sin = self.rope(h, w, x.device)
            if self.learnable_rope:
                group = self.num_heads // self.num_kv_heads
                q = _apply_rope(q, cos.repeat_interleave(group, dim=0), sin.repeat_interleave(group, dim=0))
            else:
                q = _apply_rope(q, cos, sin)
            k = _apply_rope(k, cos, sin)
        if self.num_kv_heads != self.num_heads:
            group = self.num_heads // self.num_kv_heads
            k = k.repeat_interleave(group, dim=1)
            v = v.repeat_interleave(group, dim=1)
        attn_mask = None
        if info.mask is not None:
            attn_mask = info.mask.view(n, 1, 1, h * w) > 0  # off-board keys get no attention
        out = F.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, scale=1.0 / math.sqrt(self.q_head_dim))
        out = self.out_proj(out.transpose(1, 2).reshape(n, h * w, self.num_heads * self.v_head_dim))
        out = out.transpose(1, 2).reshape(n, c, h, w)
        return x + (out if info.mask is None else out * info.mask)


class TransformerFFN(nn.Module):
    def __init__(self, name: str, channels: int, ffn_channels: int, use_swiglu: bool, norm_name: str,
                 norm_epsilon: float, linear_names: tuple[str, Optional[str], str]):
        super().__init__()
        if not use_swiglu:
            # The file does not say which activation a plain FFN uses; KataGo's backends refuse it too.
            raise ValueError(f"{name}: transformer feed-forward blocks without SwiGLU are not supported")
        self.desc_name = name
        self.use_swiglu = use_swiglu
        self.norm_name = norm_name
        self.norm_epsilon = norm_epsilon
        self.norm_weight = nn.Parameter(torch.ones(channels))
        l1_name, gate_name, l2_name = linear_names
        self.linear1 = NamedLinear(l1_name, channels, ffn_channels)
        self.linear_gate = NamedLinear(gate_name, channels, ffn_channels)
        self.linear2 = NamedLinear(l2_name, ffn_channels, channels)

    def forward(self, x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
        n, c, h, w = x.shape
        seq = x.flatten(2).transpose(1, 2)
        normed = rms_norm_positions(seq, self.norm_weight, self.norm_epsilon)
        hidden = F.silu(self.linear1(normed)) * self.linear_gate(normed)
        out = self.linear2(hidden).transpose(1, 2).reshape(n, c, h, w)
        return x + (out if info.mask is None else out * info.mask)


def tensor_from(array: np.ndarray) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32))
