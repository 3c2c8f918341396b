"""Plain description of a KataGo network, as stored in a KataGo model file.

The dataclasses here mirror the layers of the model file format one to one, so a
file can be read into them, turned into a PyTorch module, and written back
without losing anything. Weight arrays are float32 numpy arrays in these layouts:

- convolutions: ``[out_channels, in_channels, kernel_y, kernel_x]`` (PyTorch order)
- matrix multiplications: ``[in_channels, out_channels]`` (``y = x @ weights``)
- everything else: one value per channel.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from enum import Enum
from typing import ClassVar, Optional, Union

import numpy as np

# Model versions whose inputs are the V7 features this package produces.
OLDEST_SUPPORTED_VERSION = 8
NEWEST_SUPPORTED_VERSION = 17

NUM_SPATIAL_FEATURES_V7 = 22
NUM_GLOBAL_FEATURES_V7 = 19

# Trunk tip normalization kinds, as numbered in the version >= 15 trunk header.
TRUNK_NORM_STANDARD = 0
TRUNK_NORM_RMSNORM = 1

# Input channels of the SGF metadata encoder (human-style nets), by encoder version.
META_ENCODER_INPUT_CHANNELS = {1: 192}


class Activation(str, Enum):
    """Activation functions, valued by the name the model file uses for them."""

    IDENTITY = "ACTIVATION_IDENTITY"
    RELU = "ACTIVATION_RELU"
    MISH = "ACTIVATION_MISH"
    SILU = "ACTIVATION_SILU"


class NormKind(str, Enum):
    """What a batch-norm layer of the file really does.

    The file stores every normalization as a batch norm (mean, variance, optional
    scale, optional bias). KataGo's training code exports its normalization
    variants this way: ``fixup`` and ``fixscale`` nets write identity statistics
    (mean 0, variance 1 - epsilon) with a bias (and, for fixscale or a fixup
    layer with gamma, a scale); batch-norm nets write their running statistics,
    with a gamma when trained with one.
    """

    FIXUP = "fixup"  # identity statistics, bias only
    FIXSCALE = "fixscale"  # identity statistics, scale and bias
    BATCHNORM = "batchnorm"  # running statistics, no gamma
    BATCHNORM_GAMMA = "batchnorm_gamma"  # running statistics with gamma


def _values_equal(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (
            isinstance(a, np.ndarray)
            and isinstance(b, np.ndarray)
            and a.dtype == b.dtype
            and a.shape == b.shape
            and bool(np.array_equal(a, b, equal_nan=True))
        )
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_values_equal(x, y) for x, y in zip(a, b))
    return a == b


class _Desc:
    """Base for description dataclasses: equality that understands numpy arrays."""

    def __eq__(self, other) -> bool:
        if type(self) is not type(other):
            return NotImplemented
        return all(
            _values_equal(getattr(self, f.name), getattr(other, f.name)) for f in dataclasses.fields(self)
        )

    __hash__ = None  # mutable, compared by value


@dataclass(eq=False)
class ConvDesc(_Desc):
    name: str
    weights: np.ndarray  # [out, in, ky, kx]
    dilation_y: int = 1
    dilation_x: int = 1

    @property
    def out_channels(self) -> int:
        return int(self.weights.shape[0])

    @property
    def in_channels(self) -> int:
        return int(self.weights.shape[1])

    @property
    def kernel_y(self) -> int:
        return int(self.weights.shape[2])

    @property
    def kernel_x(self) -> int:
        return int(self.weights.shape[3])


@dataclass(eq=False)
class BatchNormDesc(_Desc):
    name: str
    epsilon: float
    mean: np.ndarray
    variance: np.ndarray
    scale: Optional[np.ndarray]  # None when the file has no scale (treated as 1)
    bias: Optional[np.ndarray]  # None when the file has no bias (treated as 0)

    @property
    def num_channels(self) -> int:
        return int(self.mean.shape[0])

    @property
    def has_scale(self) -> bool:
        return self.scale is not None

    @property
    def has_bias(self) -> bool:
        return self.bias is not None

    @property
    def kind(self) -> NormKind:
        eps = np.float32(self.epsilon)
        identity_stats = bool(np.all(self.mean == 0) and np.all(np.abs(self.variance + eps - 1) <= 1e-6))
        if identity_stats:
            return NormKind.FIXSCALE if self.has_scale else NormKind.FIXUP
        return NormKind.BATCHNORM_GAMMA if self.has_scale else NormKind.BATCHNORM

    def merged_scale_bias(self) -> tuple[np.ndarray, np.ndarray]:
        """Per-channel (scale, bias) with y = x * scale + bias, computed in float32 like KataGo."""
        scale = self.scale if self.scale is not None else np.ones(self.num_channels, np.float32)
        bias = self.bias if self.bias is not None else np.zeros(self.num_channels, np.float32)
        merged_scale = (scale / np.sqrt(self.variance + np.float32(self.epsilon))).astype(np.float32)
        merged_bias = (bias - merged_scale * self.mean).astype(np.float32)
        return merged_scale, merged_bias


@dataclass(eq=False)
class RMSNormDesc(_Desc):
    """Trunk-tip RMS norm with gamma and beta (trunk norm kind 1, version >= 17)."""

    name: str
    epsilon: float
    spatial: bool
    gamma: np.ndarray
    beta: np.ndarray
    cgroup_size: int = 0

    @property
    def num_channels(self) -> int:
        return int(self.gamma.shape[0])


@dataclass(eq=False)
class TransformerNormDesc(_Desc):
    """RMS norm inside transformer blocks: weight only."""

    name: str
    epsilon: float
    weight: np.ndarray

    @property
    def num_channels(self) -> int:
        return int(self.weight.shape[0])


@dataclass(eq=False)
class ActivationDesc(_Desc):
    name: str
    kind: Activation = Activation.RELU


@dataclass(eq=False)
class MatMulDesc(_Desc):
    name: str
    weights: np.ndarray  # [in, out]

    @property
    def in_channels(self) -> int:
        return int(self.weights.shape[0])

    @property
    def out_channels(self) -> int:
        return int(self.weights.shape[1])


@dataclass(eq=False)
class MatBiasDesc(_Desc):
    name: str
    weights: np.ndarray

    @property
    def num_channels(self) -> int:
        return int(self.weights.shape[0])


@dataclass(eq=False)
class OrdinaryBlockDesc(_Desc):
    KIND: ClassVar[str] = "ordinary_block"
    name: str
    pre_norm: BatchNormDesc
    pre_activation: ActivationDesc
    regular_conv: ConvDesc
    mid_norm: BatchNormDesc
    mid_activation: ActivationDesc
    final_conv: ConvDesc


@dataclass(eq=False)
class GlobalPoolBlockDesc(_Desc):
    KIND: ClassVar[str] = "gpool_block"
    name: str
    pre_norm: BatchNormDesc
    pre_activation: ActivationDesc
    regular_conv: ConvDesc
    gpool_conv: ConvDesc
    gpool_norm: BatchNormDesc
    gpool_activation: ActivationDesc
    gpool_to_bias: MatMulDesc
    mid_norm: BatchNormDesc
    mid_activation: ActivationDesc
    final_conv: ConvDesc


@dataclass(eq=False)
class TransformerAttentionBlockDesc(_Desc):
    KIND: ClassVar[str] = "transformer_attention_block"
    name: str
    num_heads: int
    num_kv_heads: int
    q_head_dim: int
    v_head_dim: int
    use_rope: bool
    learnable_rope: bool
    pre_norm: TransformerNormDesc
    q_proj: MatMulDesc
    k_proj: MatMulDesc
    v_proj: MatMulDesc
    out_proj: MatMulDesc
    rope_name: str = ""
    rope_freqs: Optional[np.ndarray] = None  # learnable rope: [kv_heads, q_head_dim // 2, 2] (x, y)
    rope_theta: float = 0.0  # fixed rope


@dataclass(eq=False)
class TransformerFFNBlockDesc(_Desc):
    KIND: ClassVar[str] = "transformer_ffn_block"
    name: str
    use_swiglu: bool
    pre_norm: TransformerNormDesc
    linear1: MatMulDesc
    linear_gate: Optional[MatMulDesc]
    linear2: MatMulDesc

    @property
    def num_channels(self) -> int:
        return self.linear1.in_channels

    @property
    def ffn_channels(self) -> int:
        return self.linear1.out_channels


@dataclass(eq=False)
class NestedBottleneckBlockDesc(_Desc):
    KIND: ClassVar[str] = "nested_bottleneck_block"
    name: str
    pre_norm: BatchNormDesc
    pre_activation: ActivationDesc
    pre_conv: ConvDesc
    blocks: list["BlockDesc"]
    post_norm: BatchNormDesc
    post_activation: ActivationDesc
    post_conv: ConvDesc


BlockDesc = Union[
    OrdinaryBlockDesc,
    GlobalPoolBlockDesc,
    NestedBottleneckBlockDesc,
    TransformerAttentionBlockDesc,
    TransformerFFNBlockDesc,
]


@dataclass(eq=False)
class MetadataEncoderDesc(_Desc):
    name: str
    num_input_channels: int
    mul1: MatMulDesc
    bias1: MatBiasDesc
    act1: ActivationDesc
    mul2: MatMulDesc
    bias2: MatBiasDesc
    act2: ActivationDesc
    mul3: MatMulDesc


@dataclass(eq=False)
class TrunkDesc(_Desc):
    name: str
    trunk_channels: int
    mid_channels: int
    regular_channels: int
    dilated_channels: int
    gpool_channels: int
    initial_conv: ConvDesc
    initial_matmul: MatMulDesc
    blocks: list[BlockDesc]
    tip_norm: Union[BatchNormDesc, RMSNormDesc]
    tip_activation: ActivationDesc
    metadata_encoder: Optional[MetadataEncoderDesc] = None

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    @property
    def norm_kind(self) -> int:
        return TRUNK_NORM_RMSNORM if isinstance(self.tip_norm, RMSNormDesc) else TRUNK_NORM_STANDARD


@dataclass(eq=False)
class PolicyHeadDesc(_Desc):
    name: str
    p1_conv: ConvDesc
    g1_conv: ConvDesc
    g1_norm: BatchNormDesc
    g1_activation: ActivationDesc
    gpool_to_bias: MatMulDesc
    p1_norm: BatchNormDesc
    p1_activation: ActivationDesc
    p2_conv: ConvDesc
    gpool_to_pass: MatMulDesc
    # Version >= 15: the pass logit goes through a small hidden layer.
    pass_bias: Optional[MatBiasDesc] = None
    pass_activation: Optional[ActivationDesc] = None
    gpool_to_pass2: Optional[MatMulDesc] = None

    @property
    def policy_out_channels(self) -> int:
        return self.p2_conv.out_channels


@dataclass(eq=False)
class ValueHeadDesc(_Desc):
    name: str
    v1_conv: ConvDesc
    v1_norm: BatchNormDesc
    v1_activation: ActivationDesc
    v2_mul: MatMulDesc
    v2_bias: MatBiasDesc
    v2_activation: ActivationDesc
    v3_mul: MatMulDesc  # win / loss / no-result logits
    v3_bias: MatBiasDesc
    sv3_mul: MatMulDesc  # score mean, score stdev, lead, variance time, short-term errors
    sv3_bias: MatBiasDesc
    ownership_conv: ConvDesc


@dataclass(eq=False)
class PostProcessParams(_Desc):
    """Output scalings. Stored in the file from version 13; earlier versions use these defaults."""

    td_score_multiplier: float = 20.0
    score_mean_multiplier: float = 20.0
    score_stdev_multiplier: float = 20.0
    lead_multiplier: float = 20.0
    variance_time_multiplier: float = 40.0
    shortterm_value_error_multiplier: float = 0.25
    shortterm_score_error_multiplier: float = 30.0
    output_scale_multiplier: float = 1.0


@dataclass(eq=False)
class ModelDesc(_Desc):
    name: str
    version: int
    num_input_channels: int
    num_input_global_channels: int
    trunk: TrunkDesc
    policy_head: PolicyHeadDesc
    value_head: ValueHeadDesc
    postprocess: PostProcessParams = field(default_factory=PostProcessParams)
    meta_encoder_version: int = 0
    prefer_pass_alive_under_suicide_rules: bool = False

    @property
    def num_policy_channels(self) -> int:
        return self.policy_head.policy_out_channels

    @property
    def num_value_channels(self) -> int:
        return self.value_head.v3_mul.out_channels

    @property
    def num_score_value_channels(self) -> int:
        return self.value_head.sv3_mul.out_channels

    @property
    def num_ownership_channels(self) -> int:
        return self.value_head.ownership_conv.out_channels

    @property
    def num_input_meta_channels(self) -> int:
        return META_ENCODER_INPUT_CHANNELS.get(self.meta_encoder_version, 0)

    @property
    def has_score_belief(self) -> bool:
        """KataGo model files never carry the training-only score-belief head."""
        return False

    def iter_blocks(self):
        """Every block of the trunk, nested ones included, depth first."""

        def walk(blocks):
            for block in blocks:
                yield block
                if isinstance(block, NestedBottleneckBlockDesc):
                    yield from walk(block.blocks)

        yield from walk(self.trunk.blocks)

    def num_parameters(self) -> int:
        """Learnable values, as KataGo counts them: batch-norm running statistics excluded."""
        total = 0

        def visit(obj):
            nonlocal total
            if isinstance(obj, np.ndarray):
                total += obj.size
            elif dataclasses.is_dataclass(obj):
                for f in dataclasses.fields(obj):
                    if not (isinstance(obj, BatchNormDesc) and f.name in ("mean", "variance")):
                        visit(getattr(obj, f.name))
            elif isinstance(obj, list):
                for item in obj:
                    visit(item)

        visit(self)
        return total
