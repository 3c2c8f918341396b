"""Named KataGo architectures (``b6c96``, ``b18c384nbt``, ...) and their random initialisation.

A name is ``b<blocks>c<channels>[nbt]`` from :data:`BASE_CONFIGS`, optionally followed by
``-mish`` or ``-silu`` to change the activation. :func:`random_description` builds a
version-15 :class:`~katacli.nn.description.ModelDesc` with freshly initialised weights,
named like KataGo's exporter names layers, ready for :class:`~katacli.nn.torch_model.KataGoModel`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional

import numpy as np

from katacli.nn.description import (
    META_ENCODER_INPUT_CHANNELS,
    NUM_GLOBAL_FEATURES_V7,
    NUM_SPATIAL_FEATURES_V7,
    Activation,
    ActivationDesc,
    BatchNormDesc,
    ConvDesc,
    GlobalPoolBlockDesc,
    MatBiasDesc,
    MatMulDesc,
    MetadataEncoderDesc,
    ModelDesc,
    NestedBottleneckBlockDesc,
    OrdinaryBlockDesc,
    PolicyHeadDesc,
    PostProcessParams,
    TrunkDesc,
    ValueHeadDesc,
)

CONFIG_MODEL_VERSION = 15
# KataGo's exporter writes normalization layers with this epsilon and identity statistics.
EXPORT_EPSILON = 1e-20
# Version-15 nets' short-term score error scaling as written by KataGo's current training code.
SHORTTERM_SCORE_ERROR_MULTIPLIER_V15 = 150.0
NESTED_INNER_BLOCKS = 2
POLICY_CHANNELS_V15 = 2  # policy and optimistic policy
SCORE_VALUE_CHANNELS = 6
VALUE_CHANNELS = 3


@dataclass(frozen=True)
class NetConfig:
    trunk_channels: int
    mid_channels: int
    gpool_channels: int
    blocks: tuple[str, ...]  # "regular", "regulargpool", "bottlenest2", "bottlenest2gpool"
    p1_channels: int
    g1_channels: int
    v1_channels: int
    v2_channels: int
    activation: Activation = Activation.RELU
    initial_kernel: int = 3


def _layout(kind: str, num_blocks: int, gpool_at: tuple[int, ...]) -> tuple[str, ...]:
    """Block kinds; ``gpool_at`` are 1-based block numbers with global pooling."""
    return tuple(kind + ("gpool" if i in gpool_at else "") for i in range(1, num_blocks + 1))


def _plain(n, c, gpool_c, gpool_at, p1, g1, v1, v2) -> NetConfig:
    return NetConfig(c, c, gpool_c, _layout("regular", n, gpool_at), p1, g1, v1, v2)


def _nbt(n, c, mid, gpool_c, gpool_at, p1, g1, v1, v2) -> NetConfig:
    return NetConfig(c, mid, gpool_c, _layout("bottlenest2", n, gpool_at), p1, g1, v1, v2)


# Channel counts, block layouts and head sizes of KataGo's model configs.
BASE_CONFIGS: dict[str, NetConfig] = {
    "b2c16": _plain(2, 16, 8, (2,), 8, 8, 8, 12),
    "b4c32": _plain(4, 32, 16, (3,), 12, 12, 12, 24),
    "b6c96": _plain(6, 96, 32, (3, 5), 32, 32, 32, 64),
    "b10c128": _plain(10, 128, 32, (5, 8), 32, 32, 32, 80),
    "b15c192": _plain(15, 192, 64, (7, 12), 32, 32, 32, 96),
    "b20c256": _plain(20, 256, 64, (7, 12, 17), 48, 48, 48, 112),
    "b30c320": _plain(30, 320, 96, (6, 11, 16, 21, 26), 48, 48, 96, 128),
    "b40c256": _plain(40, 256, 64, (6, 11, 16, 21, 26, 31, 36), 48, 48, 96, 128),
    "b5c192nbt": _nbt(5, 192, 96, 32, (2, 4), 32, 32, 32, 80),
    "b10c256nbt": _nbt(10, 256, 128, 64, (3, 6, 9), 32, 32, 32, 96),
    "b10c384nbt": _nbt(10, 384, 192, 64, (3, 6, 9), 48, 48, 48, 112),
    "b18c384nbt": _nbt(18, 384, 192, 64, (3, 6, 9, 12, 15), 48, 48, 96, 128),
    "b28c512nbt": _nbt(28, 512, 256, 64, tuple(range(3, 28, 3)), 64, 64, 128, 144),
}
ACTIVATION_SUFFIXES = {"mish": Activation.MISH, "silu": Activation.SILU, "relu": Activation.RELU}


def config_of_name(name: str) -> NetConfig:
    base, *suffixes = name.split("-")
    if base not in BASE_CONFIGS:
        raise ValueError(f"unknown model config {base!r}; known: {', '.join(BASE_CONFIGS)}")
    config = BASE_CONFIGS[base]
    for suffix in suffixes:
        if suffix not in ACTIVATION_SUFFIXES:
            raise ValueError(f"unknown model config suffix {suffix!r} in {name!r}; known: {', '.join(ACTIVATION_SUFFIXES)}")
        config = replace(config, activation=ACTIVATION_SUFFIXES[suffix])
    return config


class _Init:
    """Random layers named the way KataGo's exporter names them."""

    def __init__(self, config: NetConfig, rng: np.random.Generator, residual_scale: float):
        self.config = config
        self.rng = rng
        self.residual_scale = residual_scale

    def conv(self, name: str, cin: int, cout: int, kernel: int, scale: float = 1.0) -> ConvDesc:
        std = scale * math.sqrt(2.0 / (cin * kernel * kernel))
        weights = self.rng.normal(0.0, std, (cout, cin, kernel, kernel)).astype(np.float32)
        return ConvDesc(name=name, weights=weights)

    def matmul(self, name: str, cin: int, cout: int, scale: float = 1.0) -> MatMulDesc:
        weights = self.rng.normal(0.0, scale * math.sqrt(2.0 / cin), (cin, cout)).astype(np.float32)
        return MatMulDesc(name=name, weights=weights)

    def bias(self, name: str, channels: int) -> MatBiasDesc:
        return MatBiasDesc(name=name, weights=np.zeros(channels, np.float32))

    def norm(self, name: str, channels: int) -> BatchNormDesc:
        # Identity statistics plus a bias: what a fixup-style net exports.
        return BatchNormDesc(
            name=name,
            epsilon=EXPORT_EPSILON,
            mean=np.zeros(channels, np.float32),
            variance=np.full(channels, 1.0 - EXPORT_EPSILON, np.float32),
            scale=None,
            bias=np.zeros(channels, np.float32),
        )

    def act(self, name: str) -> ActivationDesc:
        return ActivationDesc(name=name, kind=self.config.activation)

    def block(self, name: str, kind: str, channels: int, mid: int):
        c = self.config
        if kind == "regular":
            return OrdinaryBlockDesc(
                name, self.norm(f"{name}.normactconv1.norm", channels), self.act(f"{name}.normactconv1.act"),
                self.conv(f"{name}.normactconv1.conv", channels, mid, 3),
                self.norm(f"{name}.normactconv2.norm", mid), self.act(f"{name}.normactconv2.act"),
                self.conv(f"{name}.normactconv2.conv", mid, channels, 3, self.residual_scale),
            )
        if kind == "regulargpool":
            regular = mid - c.gpool_channels
            pool = f"{name}.normactconv1.convpool"
            return GlobalPoolBlockDesc(
                name, self.norm(f"{name}.normactconv1.norm", channels), self.act(f"{name}.normactconv1.act"),
                self.conv(f"{pool}.conv1r", channels, regular, 3), self.conv(f"{pool}.conv1g", channels, c.gpool_channels, 3),
                self.norm(f"{pool}.normg", c.gpool_channels), self.act(f"{pool}.actg"),
                self.matmul(f"{pool}.linear_g", 3 * c.gpool_channels, regular),
                self.norm(f"{name}.normactconv2.norm", regular), self.act(f"{name}.normactconv2.act"),
                self.conv(f"{name}.normactconv2.conv", regular, channels, 3, self.residual_scale),
            )
        if kind.startswith("bottlenest2"):
            inner_kinds = ["regulargpool" if kind.endswith("gpool") else "regular"] + ["regular"] * (NESTED_INNER_BLOCKS - 1)
            return NestedBottleneckBlockDesc(
                name, self.norm(f"{name}.normactconvp.norm", channels), self.act(f"{name}.normactconvp.act"),
                self.conv(f"{name}.normactconvp.conv", channels, mid, 1),
                [self.block(f"{name}.blockstack.{j}", k, mid, mid) for j, k in enumerate(inner_kinds)],
                self.norm(f"{name}.normactconvq.norm", mid), self.act(f"{name}.normactconvq.act"),
                self.conv(f"{name}.normactconvq.conv", mid, channels, 1, self.residual_scale),
            )
        raise ValueError(f"unknown block kind {kind!r}")


def _random_metadata_encoder(init: _Init, num_inputs: int, channels: int) -> MetadataEncoderDesc:
    """KataGo's metadata MLP (inputs -> channels -> channels -> trunk bias), named as its exporter names it."""
    m = "model.metadata_encoder"
    return MetadataEncoderDesc(
        name=m, num_input_channels=num_inputs,
        mul1=init.matmul(f"{m}.linear1", num_inputs, channels), bias1=init.bias(f"{m}.bias1", channels),
        act1=init.act(f"{m}.act1"),
        mul2=init.matmul(f"{m}.linear2", channels, channels), bias2=init.bias(f"{m}.bias2", channels),
        act2=init.act(f"{m}.act2"),
        mul3=init.matmul(f"{m}.linear_output_to_trunk", channels, channels),
    )


def random_description(config_name: str, seed: Optional[int] = None, model_name: Optional[str] = None,
                       meta_encoder_version: int = 0) -> ModelDesc:
    """A version-15 model description of the named architecture with random weights.

    ``meta_encoder_version`` 1 adds the SGF metadata encoder of KataGo's human-SL nets (its weights are
    drawn after all others, so a seed gives the same trunk and heads with or without it).
    """
    if meta_encoder_version and meta_encoder_version not in META_ENCODER_INPUT_CHANNELS:
        raise ValueError(f"unknown meta_encoder_version {meta_encoder_version}; known: "
                         f"{', '.join(map(str, META_ENCODER_INPUT_CHANNELS))}")
    config = config_of_name(config_name)
    rng = np.random.default_rng(seed)
    init = _Init(config, rng, residual_scale=1.0 / math.sqrt(len(config.blocks)))
    c = config
    mid = c.mid_channels
    blocks = [init.block(f"model.blocks.{i}", kind, c.trunk_channels, mid) for i, kind in enumerate(c.blocks)]
    trunk = TrunkDesc(
        name="trunk",
        trunk_channels=c.trunk_channels,
        mid_channels=mid,
        regular_channels=mid - c.gpool_channels,
        dilated_channels=c.gpool_channels,
        gpool_channels=c.gpool_channels,
        initial_conv=init.conv("model.conv_spatial", NUM_SPATIAL_FEATURES_V7, c.trunk_channels, c.initial_kernel),
        initial_matmul=init.matmul("model.linear_global", NUM_GLOBAL_FEATURES_V7, c.trunk_channels),
        blocks=blocks,
        tip_norm=init.norm("model.norm_trunkfinal", c.trunk_channels),
        tip_activation=init.act("model.act_trunkfinal"),
    )
    p = "model.policy_head"
    policy = PolicyHeadDesc(
        name=p,
        p1_conv=init.conv(f"{p}.conv1p", c.trunk_channels, c.p1_channels, 1),
        g1_conv=init.conv(f"{p}.conv1g", c.trunk_channels, c.g1_channels, 1),
        g1_norm=init.norm(f"{p}.biasg", c.g1_channels),
        g1_activation=init.act(f"{p}.actg"),
        gpool_to_bias=init.matmul(f"{p}.linear_g", 3 * c.g1_channels, c.p1_channels),
        p1_norm=init.norm(f"{p}.bias2", c.p1_channels),
        p1_activation=init.act(f"{p}.act2"),
        p2_conv=init.conv(f"{p}.conv2p", c.p1_channels, POLICY_CHANNELS_V15, 1),
        gpool_to_pass=init.matmul(f"{p}.linear_pass", 3 * c.g1_channels, c.p1_channels),
        pass_bias=init.bias(f"{p}.linear_pass_bias", c.p1_channels),
        pass_activation=init.act(f"{p}.act_pass"),
        gpool_to_pass2=init.matmul(f"{p}.linear_pass2", c.p1_channels, POLICY_CHANNELS_V15),
    )
    v = "model.value_head"
    small = 0.1  # keeps the random net's value and score outputs in a sensible range
    value = ValueHeadDesc(
        name=v,
        v1_conv=init.conv(f"{v}.conv1", c.trunk_channels, c.v1_channels, 1),
        v1_norm=init.norm(f"{v}.bias1", c.v1_channels),
        v1_activation=init.act(f"{v}.act1"),
        v2_mul=init.matmul(f"{v}.linear2", 3 * c.v1_channels, c.v2_channels),
        v2_bias=init.bias(f"{v}.bias2", c.v2_channels),
        v2_activation=init.act(f"{v}.act2"),
        v3_mul=init.matmul(f"{v}.linear_valuehead", c.v2_channels, VALUE_CHANNELS, small),
        v3_bias=init.bias(f"{v}.bias_valuehead", VALUE_CHANNELS),
        sv3_mul=init.matmul(f"{v}.linear_miscvaluehead", c.v2_channels, SCORE_VALUE_CHANNELS, small),
        sv3_bias=init.bias(f"{v}.bias_miscvaluehead", SCORE_VALUE_CHANNELS),
        ownership_conv=init.conv(f"{v}.conv_ownership", c.v1_channels, 1, 1, small),
    )
    if meta_encoder_version:
        trunk.metadata_encoder = _random_metadata_encoder(init, META_ENCODER_INPUT_CHANNELS[meta_encoder_version],
                                                          c.trunk_channels)
    return ModelDesc(
        name=model_name or config_name,
        version=CONFIG_MODEL_VERSION,
        meta_encoder_version=meta_encoder_version,
        num_input_channels=NUM_SPATIAL_FEATURES_V7,
        num_input_global_channels=NUM_GLOBAL_FEATURES_V7,
        trunk=trunk,
        policy_head=policy,
        value_head=value,
        postprocess=PostProcessParams(shortterm_score_error_multiplier=SHORTTERM_SCORE_ERROR_MULTIPLIER_V15),
    )
