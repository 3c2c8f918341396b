"""A KataGo network's forward pass in plain numpy, for the moments before torch is imported.

``import torch`` costs about a second of CPU; a small convolutional net (g170-b6c96) runs a 19x19
position in numpy in tens of milliseconds, so ``kata analysis`` answers its first queries with
:class:`NumpyNet` while torch loads in the background (see :mod:`katacli.nn.numpy_evaluator`).

It computes what :class:`~katacli.nn.torch_model.KataGoModel` computes, in float32, for the layouts
it can do exactly (:func:`supports`): ordinary, global-pooling and nested-bottleneck residual blocks,
ReLU / Mish / SiLU activations, batch norms (folded into the convolution before them where the torch
model folds them), the SGF-metadata encoder, and the policy / value / ownership heads of model
versions 8-15. Transformer blocks and RMS-norm trunks are left to torch.

Activations are NHWC inside (a convolution is one matrix product over the gathered taps); inputs and
outputs are NCHW like :class:`~katacli.nn.device_runner.DeviceRunner`'s, so the evaluator's
postprocessing is the same for both.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from katacli.nn.description import (
    Activation,
    BatchNormDesc,
    ConvDesc,
    GlobalPoolBlockDesc,
    MatBiasDesc,
    MatMulDesc,
    ModelDesc,
    NestedBottleneckBlockDesc,
    OrdinaryBlockDesc,
)

# Model versions whose heads this module computes (8: g170; 15: current nets, pass logit MLP).
MIN_MODEL_VERSION = 8
MAX_MODEL_VERSION = 15
# The same pooling constants as katacli.nn.layers (KataGo's): board width terms around 14.
GPOOL_WIDTH_CENTER = 14.0
GPOOL_WIDTH_SCALE = 0.1
VALUE_POOL_QUADRATIC_SCALE = 0.01
VALUE_POOL_QUADRATIC_OFFSET = 0.1
_SUPPORTED_ACTIVATIONS = (Activation.IDENTITY, Activation.RELU, Activation.MISH, Activation.SILU)
# Above this, softplus(x) is x in float32 (torch's mish uses the same threshold).
SOFTPLUS_THRESHOLD = 20.0


def supports(desc: ModelDesc) -> bool:
    """Whether :class:`NumpyNet` computes this network exactly (else only torch can run it)."""
    if not MIN_MODEL_VERSION <= desc.version <= MAX_MODEL_VERSION:
        return False
    trunk = desc.trunk
    if not isinstance(trunk.tip_norm, BatchNormDesc) or trunk.tip_activation.kind not in _SUPPORTED_ACTIVATIONS:
        return False
    encoder = trunk.metadata_encoder
    if encoder is not None and not all(a.kind in _SUPPORTED_ACTIVATIONS for a in (encoder.act1, encoder.act2)):
        return False
    head_acts = [desc.policy_head.g1_activation, desc.policy_head.p1_activation, desc.value_head.v1_activation,
                 desc.value_head.v2_activation]
    if desc.policy_head.pass_activation is not None:
        head_acts.append(desc.policy_head.pass_activation)
    return all(_block_supported(b) for b in trunk.blocks) and all(a.kind in _SUPPORTED_ACTIVATIONS for a in head_acts)


def _block_supported(block) -> bool:
    if isinstance(block, OrdinaryBlockDesc):
        acts = (block.pre_activation, block.mid_activation)
    elif isinstance(block, GlobalPoolBlockDesc):
        acts = (block.pre_activation, block.gpool_activation, block.mid_activation)
    elif isinstance(block, NestedBottleneckBlockDesc):
        if not all(_block_supported(inner) for inner in block.blocks):
            return False
        acts = (block.pre_activation, block.post_activation)
    else:
        return False
    return all(a.kind in _SUPPORTED_ACTIVATIONS for a in acts)


def flops_per_position(desc: ModelDesc, board_area: int) -> float:
    """Multiply-adds x 2 of the network's convolutions for one position of ``board_area`` points (the
    matrix products of the pooled features are negligible beside them)."""
    return float(sum(2 * conv.weights.size * board_area for conv in _conv_descs(desc)))


def _conv_descs(desc: ModelDesc):
    def walk(blocks):
        for block in blocks:
            for name in ("regular_conv", "gpool_conv", "final_conv", "pre_conv", "post_conv"):
                if getattr(block, name, None) is not None:
                    yield getattr(block, name)
            yield from walk(getattr(block, "blocks", ()))

    yield desc.trunk.initial_conv
    yield from walk(desc.trunk.blocks)
    yield from (desc.policy_head.p1_conv, desc.policy_head.g1_conv, desc.policy_head.p2_conv)
    yield from (desc.value_head.v1_conv, desc.value_head.ownership_conv)


# ---------------------------------------------------------------------------------------------
# Layers


def _activate(x: np.ndarray, kind: Activation) -> np.ndarray:
    if kind is Activation.RELU:
        return np.maximum(x, 0.0, out=x)
    if kind is Activation.MISH:
        softplus = np.where(x > SOFTPLUS_THRESHOLD, x, np.log1p(np.exp(np.minimum(x, SOFTPLUS_THRESHOLD))))
        return x * np.tanh(softplus)
    if kind is Activation.SILU:
        return x / (1.0 + np.exp(-x))
    return x


def _scale_bias(norm: BatchNormDesc) -> tuple[np.ndarray, np.ndarray]:
    """The norm as ``x * scale + bias`` (computed in float32 as the torch model computes it)."""
    variance = np.asarray(norm.variance, np.float32)
    scale = np.asarray(norm.scale, np.float32) if norm.scale is not None else np.ones_like(variance)
    scale = scale / np.sqrt(variance + np.float32(norm.epsilon))
    bias = np.asarray(norm.bias, np.float32) if norm.bias is not None else np.zeros_like(variance)
    return scale.astype(np.float32), (bias - scale * np.asarray(norm.mean, np.float32)).astype(np.float32)


class _Conv:
    """A zero-padded 'same' convolution (optionally with a batch norm folded in) as one matrix product."""

    def __init__(self, desc: ConvDesc, fold: Optional[BatchNormDesc] = None):
        weights = np.asarray(desc.weights, np.float32)  # [out, in, ky, kx]
        self.bias = None
        if fold is not None:
            scale, self.bias = _scale_bias(fold)
            weights = weights * scale[:, None, None, None]
        self.out_channels, self.in_channels, self.ky, self.kx = weights.shape
        self.dy, self.dx = desc.dilation_y, desc.dilation_x
        # Rows in the order the taps are gathered: (ky, kx, in).
        self.matrix = np.ascontiguousarray(weights.transpose(2, 3, 1, 0).reshape(-1, self.out_channels))

    def __call__(self, x: np.ndarray) -> np.ndarray:
        n, h, w, c = x.shape
        if self.ky == 1 and self.kx == 1:
            out = x.reshape(-1, c) @ self.matrix
        else:
            py, px = self.dy * (self.ky // 2), self.dx * (self.kx // 2)
            padded = np.zeros((n, h + 2 * py, w + 2 * px, c), np.float32)
            padded[:, py:py + h, px:px + w] = x
            taps = [padded[:, i * self.dy:i * self.dy + h, j * self.dx:j * self.dx + w]
                    for i in range(self.ky) for j in range(self.kx)]
            out = np.concatenate(taps, axis=3).reshape(n * h * w, -1) @ self.matrix
        if self.bias is not None:
            out += self.bias
        return out.reshape(n, h, w, self.out_channels)


class _Linear:
    def __init__(self, mm: MatMulDesc, bias: Optional[MatBiasDesc] = None, scale: Optional[np.ndarray] = None):
        weights = np.asarray(mm.weights, np.float32)  # [in, out]
        self.matrix = np.ascontiguousarray(weights * scale[None, :] if scale is not None else weights)
        self.bias = np.asarray(bias.weights, np.float32) if bias is not None else None

    def __call__(self, x: np.ndarray) -> np.ndarray:
        out = x @ self.matrix
        return out + self.bias if self.bias is not None else out


class _NormAct:
    """act(x * scale + bias) * mask; with ``folded`` the affine part is already in the convolution before."""

    def __init__(self, norm: BatchNormDesc, kind: Activation, folded: bool = False):
        self.kind = kind
        self.affine = None if folded else _scale_bias(norm)

    def __call__(self, x: np.ndarray, mask: Optional[np.ndarray]) -> np.ndarray:
        if self.affine is not None:
            x = x * self.affine[0] + self.affine[1]
        x = _activate(x, self.kind)
        return x if mask is None else x * mask


class _Pooling:
    """The batch's mask and per-position width terms (KataGo's global and value-head pooling)."""

    def __init__(self, mask: Optional[np.ndarray], n: int, h: int, w: int):
        self.mask = mask
        if mask is None:
            self.mask_sum = np.full((n, 1), float(h * w), np.float32)
        else:
            self.mask_sum = mask.sum(axis=(1, 2), dtype=np.float32)  # [N, 1]
        offset = np.sqrt(self.mask_sum) - np.float32(GPOOL_WIDTH_CENTER)
        self.width_term = (offset * np.float32(GPOOL_WIDTH_SCALE)).astype(np.float32)
        self.quadratic_term = (offset * offset * np.float32(VALUE_POOL_QUADRATIC_SCALE)
                               - np.float32(VALUE_POOL_QUADRATIC_OFFSET)).astype(np.float32)

    def global_pool(self, x: np.ndarray) -> np.ndarray:
        mean = x.sum(axis=(1, 2)) / self.mask_sum
        # Off-board points become -1 (x is masked), below anything the activations give, as in KataGo.
        maximum = (x if self.mask is None else x + (self.mask - 1.0)).max(axis=(1, 2))
        return np.concatenate((mean, mean * self.width_term, maximum), axis=1)

    def value_pool(self, x: np.ndarray) -> np.ndarray:
        mean = x.sum(axis=(1, 2)) / self.mask_sum
        return np.concatenate((mean, mean * self.width_term, mean * self.quadratic_term), axis=1)


# ---------------------------------------------------------------------------------------------
# Blocks, trunk and heads


class _OrdinaryBlock:
    def __init__(self, desc: OrdinaryBlockDesc):
        self.pre = _NormAct(desc.pre_norm, desc.pre_activation.kind)
        self.regular = _Conv(desc.regular_conv, fold=desc.mid_norm)
        self.mid = _NormAct(desc.mid_norm, desc.mid_activation.kind, folded=True)
        self.final = _Conv(desc.final_conv)

    def __call__(self, x: np.ndarray, pool: _Pooling) -> np.ndarray:
        return x + self.final(self.mid(self.regular(self.pre(x, pool.mask)), pool.mask))


class _GlobalPoolBlock:
    def __init__(self, desc: GlobalPoolBlockDesc):
        self.pre = _NormAct(desc.pre_norm, desc.pre_activation.kind)
        self.regular = _Conv(desc.regular_conv, fold=desc.mid_norm)
        self.gpool = _Conv(desc.gpool_conv, fold=desc.gpool_norm)
        self.gpool_act = _NormAct(desc.gpool_norm, desc.gpool_activation.kind, folded=True)
        self.to_bias = _Linear(desc.gpool_to_bias, scale=_scale_bias(desc.mid_norm)[0])
        self.mid = _NormAct(desc.mid_norm, desc.mid_activation.kind, folded=True)
        self.final = _Conv(desc.final_conv)

    def __call__(self, x: np.ndarray, pool: _Pooling) -> np.ndarray:
        a = self.pre(x, pool.mask)
        pooled = pool.global_pool(self.gpool_act(self.gpool(a), pool.mask))
        regular = self.regular(a) + self.to_bias(pooled)[:, None, None, :]
        return x + self.final(self.mid(regular, pool.mask))


class _NestedBottleneckBlock:
    def __init__(self, desc: NestedBottleneckBlockDesc):
        self.pre = _NormAct(desc.pre_norm, desc.pre_activation.kind)
        self.pre_conv = _Conv(desc.pre_conv)
        self.blocks = [_block(b) for b in desc.blocks]
        self.post = _NormAct(desc.post_norm, desc.post_activation.kind)
        self.post_conv = _Conv(desc.post_conv)

    def __call__(self, x: np.ndarray, pool: _Pooling) -> np.ndarray:
        inner = self.pre_conv(self.pre(x, pool.mask))
        for block in self.blocks:
            inner = block(inner, pool)
        return x + self.post_conv(self.post(inner, pool.mask))


_BLOCKS = {OrdinaryBlockDesc: _OrdinaryBlock, GlobalPoolBlockDesc: _GlobalPoolBlock,
           NestedBottleneckBlockDesc: _NestedBottleneckBlock}


def _block(desc):
    return _BLOCKS[type(desc)](desc)


class _MetadataEncoder:
    def __init__(self, desc):
        self.layer1, self.kind1 = _Linear(desc.mul1, desc.bias1), desc.act1.kind
        self.layer2, self.kind2 = _Linear(desc.mul2, desc.bias2), desc.act2.kind
        self.layer3 = _Linear(desc.mul3)

    def __call__(self, meta: np.ndarray) -> np.ndarray:
        hidden = _activate(self.layer1(meta), self.kind1)
        return self.layer3(_activate(self.layer2(hidden), self.kind2))


class _PolicyHead:
    def __init__(self, desc):
        self.p1 = _Conv(desc.p1_conv, fold=desc.p1_norm)
        self.g1 = _Conv(desc.g1_conv, fold=desc.g1_norm)
        self.g1_act = _NormAct(desc.g1_norm, desc.g1_activation.kind, folded=True)
        self.to_bias = _Linear(desc.gpool_to_bias, scale=_scale_bias(desc.p1_norm)[0])
        self.p1_act = _NormAct(desc.p1_norm, desc.p1_activation.kind, folded=True)
        self.p2 = _Conv(desc.p2_conv)
        self.to_pass = _Linear(desc.gpool_to_pass, desc.pass_bias)
        self.pass_kind = desc.pass_activation.kind if desc.pass_activation is not None else None
        self.to_pass2 = _Linear(desc.gpool_to_pass2) if desc.gpool_to_pass2 is not None else None

    def __call__(self, x: np.ndarray, pool: _Pooling) -> tuple[np.ndarray, np.ndarray]:
        pooled = pool.global_pool(self.g1_act(self.g1(x), pool.mask))
        p1 = self.p1(x) + self.to_bias(pooled)[:, None, None, :]
        policy = self.p2(self.p1_act(p1, pool.mask))
        pass_logits = self.to_pass(pooled)
        if self.to_pass2 is not None:
            pass_logits = self.to_pass2(_activate(pass_logits, self.pass_kind))
        return policy, pass_logits


class _ValueHead:
    def __init__(self, desc):
        self.v1 = _Conv(desc.v1_conv, fold=desc.v1_norm)
        self.v1_act = _NormAct(desc.v1_norm, desc.v1_activation.kind, folded=True)
        self.v2, self.v2_kind = _Linear(desc.v2_mul, desc.v2_bias), desc.v2_activation.kind
        self.v3 = _Linear(desc.v3_mul, desc.v3_bias)
        self.sv3 = _Linear(desc.sv3_mul, desc.sv3_bias)
        self.ownership = _Conv(desc.ownership_conv)

    def __call__(self, x: np.ndarray, pool: _Pooling):
        v1 = self.v1_act(self.v1(x), pool.mask)
        v2 = _activate(self.v2(pool.value_pool(v1)), self.v2_kind)
        return self.v3(v2), self.sv3(v2), self.ownership(v1)


class NumpyNet:
    """The network of ``desc`` (which :func:`supports` must accept) as numpy arrays, ready to run."""

    def __init__(self, desc: ModelDesc):
        if not supports(desc):
            raise ValueError(f"model {desc.name} (version {desc.version}) has layers the numpy forward pass "
                             f"cannot compute; it needs torch")
        trunk = desc.trunk
        self.initial_conv = _Conv(trunk.initial_conv)
        self.initial_matmul = _Linear(trunk.initial_matmul)
        self.metadata_encoder = _MetadataEncoder(trunk.metadata_encoder) if trunk.metadata_encoder else None
        self.blocks = [_block(b) for b in trunk.blocks]
        self.tip = _NormAct(trunk.tip_norm, trunk.tip_activation.kind)
        self.policy_head = _PolicyHead(desc.policy_head)
        self.value_head = _ValueHead(desc.value_head)

    def __call__(self, spatial: np.ndarray, global_features: np.ndarray, meta: Optional[np.ndarray],
                 mask_full: bool) -> list[np.ndarray]:
        """Raw outputs (policy [N, P, H, W], pass [N, P], value [N, 3], score value [N, S], ownership
        [N, 1, H, W]) of NCHW float32 inputs, as DeviceRunner returns them."""
        x_in = np.ascontiguousarray(spatial.transpose(0, 2, 3, 1), dtype=np.float32)
        n, h, w, _ = x_in.shape
        mask = None if mask_full else np.ascontiguousarray(x_in[:, :, :, 0:1])
        pool = _Pooling(mask, n, h, w)
        bias = self.initial_matmul(np.asarray(global_features, np.float32))
        if self.metadata_encoder is not None:
            if meta is None:
                raise ValueError("this network needs SGF metadata input (meta) but none was given")
            bias = bias + self.metadata_encoder(np.asarray(meta, np.float32))
        x = self.initial_conv(x_in) + bias[:, None, None, :]
        for block in self.blocks:
            x = block(x, pool)
        x = self.tip(x, mask)
        policy, pass_logits = self.policy_head(x, pool)
        value, score_value, ownership = self.value_head(x, pool)
        return [np.ascontiguousarray(policy.transpose(0, 3, 1, 2)), pass_logits.astype(np.float32, copy=False),
                value.astype(np.float32, copy=False), score_value.astype(np.float32, copy=False),
                np.ascontiguousarray(ownership.transpose(0, 3, 1, 2))]
