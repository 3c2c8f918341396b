"""Reader for KataGo model files (``.bin.gz``, ``.bin``, ``.txt.gz``, ``.txt``, ``.gz``).

The format is a whitespace-separated token stream: names, integers and, for every
weight array, either decimal floats (text files) or a ``@BIN@`` marker followed by
raw little-endian float32 values (binary files). Layers appear in a fixed order
that depends on the model version; see :mod:`katacli.nn.description`.

Every failure raises :class:`ModelFileError`, whose message names the file, the
model version when known, and the layer or field that could not be read.
"""

from __future__ import annotations

import gzip
import os
import re
import zlib
from dataclasses import dataclass, field
from typing import Callable, Optional, Union

import numpy as np

from katacli.nn.description import (
    META_ENCODER_INPUT_CHANNELS,
    NEWEST_SUPPORTED_VERSION,
    NUM_GLOBAL_FEATURES_V7,
    NUM_SPATIAL_FEATURES_V7,
    OLDEST_SUPPORTED_VERSION,
    TRUNK_NORM_RMSNORM,
    TRUNK_NORM_STANDARD,
    Activation,
    ActivationDesc,
    BatchNormDesc,
    BlockDesc,
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
    RMSNormDesc,
    TransformerAttentionBlockDesc,
    TransformerFFNBlockDesc,
    TransformerNormDesc,
    TrunkDesc,
    ValueHeadDesc,
)

# KataGo gives up looking for a binary block's "@BIN@" after this many characters.
MAX_CHARS_BEFORE_BIN_MARKER = 100
BIN_MARKER = b"@BIN@"
# Version 15+ model headers carry this many reserved integer slots after the meta encoder version
# (the first of them is the "prefer pass-alive under suicide rules" flag).
NUM_MODEL_HEADER_OPTION_SLOTS = 7
NUM_TRUNK_HEADER_OPTION_SLOTS = 5  # after the trunk norm kind, version >= 15
NUM_HEAD_OPTION_SLOTS = 3  # policy and value head headers, version >= 17
# check_model_file reads the file in pieces of this size (a big network need not be held twice),
# and parses the header from this much of the start of its contents (the header is a few dozen bytes).
CHECK_READ_CHUNK_BYTES = 1 << 20
HEADER_PREFIX_BYTES = 1 << 16
GZIP_WBITS_FLAG = 16  # zlib's wbits flag for a gzip header and trailer


class ModelFileError(Exception):
    """A model file could not be read (corrupt, truncated or unsupported)."""


class _ParseError(Exception):
    """Internal: what failed, without the file name and version context."""


# ---------------------------------------------------------------------------------------------
# Token streams


class _BinaryTokenStream:
    """Tokens of a binary-float model file, read with a cursor since weights are raw bytes."""

    _TOKEN = re.compile(rb"\s*(\S+)")

    def __init__(self, data: bytes, copy: bool = True):
        self.data = data
        self.pos = 0
        self.copy = copy  # False: weights are read-only views of ``data`` (checking, not building)

    def token(self, what: str) -> str:
        match = self._TOKEN.match(self.data, self.pos)
        if match is None:
            raise _ParseError(f"unexpected end of file while reading {what}")
        self.pos = match.end()
        try:
            return match.group(1).decode("ascii")
        except UnicodeDecodeError:
            raise _ParseError(f"expected {what} but found binary data") from None

    def floats(self, count: int, what: str) -> np.ndarray:
        data = self.data
        start = data.find(b"@", self.pos, self.pos + MAX_CHARS_BEFORE_BIN_MARKER + 1)
        if start < 0:
            raise _ParseError(
                f"{what}: could not find the '@BIN@' marker of its binary float block"
                " (is this a text model named like a binary one?)"
            )
        if data[start : start + len(BIN_MARKER)] != BIN_MARKER:
            raise _ParseError(f"{what}: malformed '@BIN@' marker of its binary float block")
        begin = start + len(BIN_MARKER)
        end = begin + 4 * count
        if end > len(data):
            available = max(0, (len(data) - begin) // 4)
            raise _ParseError(f"{what}: file truncated, expected {count} floats but only {available} remain")
        values = np.frombuffer(data, dtype="<f4", count=count, offset=begin)
        if self.copy:
            values = values.astype(np.float32)
        self.pos = end
        return values


class _TextTokenStream:
    """Tokens of a text model file: everything, weights included, is whitespace separated."""

    def __init__(self, data: bytes):
        self.tokens = data.split()
        self.index = 0

    def token(self, what: str) -> str:
        if self.index >= len(self.tokens):
            raise _ParseError(f"unexpected end of file while reading {what}")
        tok = self.tokens[self.index]
        self.index += 1
        try:
            return tok.decode("ascii")
        except UnicodeDecodeError:
            raise _ParseError(f"expected {what} but found non-text data") from None

    def floats(self, count: int, what: str) -> np.ndarray:
        chunk = self.tokens[self.index : self.index + count]
        if len(chunk) < count:
            raise _ParseError(f"{what}: file truncated, expected {count} floats but only {len(chunk)} remain")
        try:
            values = np.array([float(tok) for tok in chunk], dtype=np.float32)
        except ValueError:
            raise _ParseError(
                f"{what}: could not read float weights (is this a binary model named like a text one?)"
            ) from None
        self.index += count
        return values


_TokenStream = Union[_BinaryTokenStream, _TextTokenStream]


# ---------------------------------------------------------------------------------------------
# Layer parsers


class _Parser:
    def __init__(self, stream: _TokenStream, version: int = -1, build: bool = True):
        self.s = stream
        self.version = version
        self.build = build  # False: every layer is read and checked, no weight array is laid out anew

    # -- scalars

    def name(self, what: str) -> str:
        return self.s.token(what)

    def int_(self, what: str) -> int:
        tok = self.s.token(what)
        try:
            return int(tok)
        except ValueError:
            raise _ParseError(f"{what}: expected an integer, found {tok[:40]!r}") from None

    def positive_int(self, what: str) -> int:
        value = self.int_(what)
        if value <= 0:
            raise _ParseError(f"{what}: must be positive, found {value}")
        return value

    def flag(self, what: str) -> bool:
        value = self.int_(what)
        if value not in (0, 1):
            raise _ParseError(f"{what}: expected 0 or 1, found {value}")
        return value == 1

    def float_(self, what: str) -> float:
        tok = self.s.token(what)
        try:
            value = float(tok)
        except ValueError:
            raise _ParseError(f"{what}: expected a number, found {tok[:40]!r}") from None
        if not np.isfinite(value):
            raise _ParseError(f"{what}: must be finite, found {tok}")
        return value

    def floats(self, count: int, what: str) -> np.ndarray:
        values = self.s.floats(count, what)
        if not np.all(np.isfinite(values)):
            raise _ParseError(f"{what}: NaN or infinite weight")
        return values

    def reserved_zeros(self, count: int, what: str) -> None:
        for i in range(count):
            value = self.int_(f"{what} option slot {i}")
            if value != 0:
                raise _ParseError(f"{what}: unsupported option (slot {i} is {value}, expected 0)")

    # -- layers

    def conv(self) -> ConvDesc:
        name = self.name("convolution layer name")
        ky = self.positive_int(f"{name}: kernel y size")
        kx = self.positive_int(f"{name}: kernel x size")
        cin = self.positive_int(f"{name}: input channels")
        cout = self.positive_int(f"{name}: output channels")
        dy = self.positive_int(f"{name}: y dilation")
        dx = self.positive_int(f"{name}: x dilation")
        if ky % 2 != 1 or kx % 2 != 1:
            raise _ParseError(f"{name}: convolution kernel sizes must be odd, found {ky}x{kx}")
        flat = self.floats(ky * kx * cin * cout, name)
        # File order is y, x, in, out.
        weights = flat.reshape(ky, kx, cin, cout).transpose(3, 2, 0, 1)
        if self.build:
            weights = np.ascontiguousarray(weights)
        return ConvDesc(name=name, weights=weights, dilation_y=dy, dilation_x=dx)

    def batch_norm(self) -> BatchNormDesc:
        name = self.name("batch norm layer name")
        channels = self.positive_int(f"{name}: number of channels")
        epsilon = self.float_(f"{name}: epsilon")
        if not epsilon > 0:
            raise _ParseError(f"{name}: epsilon must be positive, found {epsilon}")
        has_scale = self.flag(f"{name}: has-scale flag")
        has_bias = self.flag(f"{name}: has-bias flag")
        mean = self.floats(channels, f"{name} mean")
        variance = self.floats(channels, f"{name} variance")
        scale = self.floats(channels, f"{name} scale") if has_scale else None
        bias = self.floats(channels, f"{name} bias") if has_bias else None
        return BatchNormDesc(name=name, epsilon=epsilon, mean=mean, variance=variance, scale=scale, bias=bias)

    def rms_norm(self) -> RMSNormDesc:
        name = self.name("rms norm layer name")
        channels = self.positive_int(f"{name}: number of channels")
        epsilon = self.float_(f"{name}: epsilon")
        spatial = self.int_(f"{name}: spatial flag") != 0
        cgroup_size = self.int_(f"{name}: channel group size")
        if not 0 < epsilon <= 1:
            raise _ParseError(f"{name}: epsilon must be in (0, 1], found {epsilon}")
        if cgroup_size != 0:
            raise _ParseError(f"{name}: grouped spatial RMS norm (group size {cgroup_size}) is not supported")
        gamma = self.floats(channels, f"{name} gamma")
        beta = self.floats(channels, f"{name} beta")
        return RMSNormDesc(name=name, epsilon=epsilon, spatial=spatial, gamma=gamma, beta=beta)

    def transformer_norm(self) -> TransformerNormDesc:
        name = self.name("transformer norm layer name")
        channels = self.positive_int(f"{name}: number of channels")
        epsilon = self.float_(f"{name}: epsilon")
        if not 0 < epsilon <= 1:
            raise _ParseError(f"{name}: epsilon must be in (0, 1], found {epsilon}")
        weight = self.floats(channels, f"{name} weight")
        return TransformerNormDesc(name=name, epsilon=epsilon, weight=weight)

    def activation(self) -> ActivationDesc:
        name = self.name("activation layer name")
        if self.version < 11:
            return ActivationDesc(name=name, kind=Activation.RELU)  # not stored before version 11
        kind = self.s.token(f"{name}: activation kind")
        try:
            return ActivationDesc(name=name, kind=Activation(kind))
        except ValueError:
            raise _ParseError(f"{name}: unknown activation {kind[:40]!r}") from None

    def matmul(self) -> MatMulDesc:
        name = self.name("matmul layer name")
        cin = self.positive_int(f"{name}: input channels")
        cout = self.positive_int(f"{name}: output channels")
        weights = self.floats(cin * cout, name).reshape(cin, cout)
        return MatMulDesc(name=name, weights=weights)

    def matbias(self) -> MatBiasDesc:
        name = self.name("bias layer name")
        channels = self.positive_int(f"{name}: number of channels")
        return MatBiasDesc(name=name, weights=self.floats(channels, name))

    # -- blocks

    def ordinary_block(self) -> OrdinaryBlockDesc:
        block = OrdinaryBlockDesc(
            name=self.name("residual block name"),
            pre_norm=self.batch_norm(),
            pre_activation=self.activation(),
            regular_conv=self.conv(),
            mid_norm=self.batch_norm(),
            mid_activation=self.activation(),
            final_conv=self.conv(),
        )
        _expect(block.name, "preBN channels", block.pre_norm.num_channels, "regular conv input channels", block.regular_conv.in_channels)
        _expect(block.name, "midBN channels", block.mid_norm.num_channels, "regular conv output channels", block.regular_conv.out_channels)
        _expect(block.name, "midBN channels", block.mid_norm.num_channels, "final conv input channels", block.final_conv.in_channels)
        return block

    def gpool_block(self) -> GlobalPoolBlockDesc:
        block = GlobalPoolBlockDesc(
            name=self.name("global pooling block name"),
            pre_norm=self.batch_norm(),
            pre_activation=self.activation(),
            regular_conv=self.conv(),
            gpool_conv=self.conv(),
            gpool_norm=self.batch_norm(),
            gpool_activation=self.activation(),
            gpool_to_bias=self.matmul(),
            mid_norm=self.batch_norm(),
            mid_activation=self.activation(),
            final_conv=self.conv(),
        )
        n = block.name
        _expect(n, "preBN channels", block.pre_norm.num_channels, "regular conv input channels", block.regular_conv.in_channels)
        _expect(n, "preBN channels", block.pre_norm.num_channels, "gpool conv input channels", block.gpool_conv.in_channels)
        _expect(n, "gpoolBN channels", block.gpool_norm.num_channels, "gpool conv output channels", block.gpool_conv.out_channels)
        _expect(n, "3 x gpoolBN channels", 3 * block.gpool_norm.num_channels, "gpool-to-bias input channels", block.gpool_to_bias.in_channels)
        _expect(n, "midBN channels", block.mid_norm.num_channels, "regular conv output channels", block.regular_conv.out_channels)
        _expect(n, "midBN channels", block.mid_norm.num_channels, "gpool-to-bias output channels", block.gpool_to_bias.out_channels)
        _expect(n, "midBN channels", block.mid_norm.num_channels, "final conv input channels", block.final_conv.in_channels)
        return block

    def nested_bottleneck_block(self) -> NestedBottleneckBlockDesc:
        name = self.name("nested bottleneck block name")
        num_blocks = self.positive_int(f"{name}: number of inner blocks")
        pre_norm = self.batch_norm()
        pre_activation = self.activation()
        pre_conv = self.conv()
        blocks = self.block_stack(name, num_blocks, pre_conv.out_channels)
        block = NestedBottleneckBlockDesc(
            name=name,
            pre_norm=pre_norm,
            pre_activation=pre_activation,
            pre_conv=pre_conv,
            blocks=blocks,
            post_norm=self.batch_norm(),
            post_activation=self.activation(),
            post_conv=self.conv(),
        )
        _expect(name, "preBN channels", pre_norm.num_channels, "pre conv input channels", pre_conv.in_channels)
        _expect(name, "postBN channels", block.post_norm.num_channels, "pre conv output channels", pre_conv.out_channels)
        _expect(name, "postBN channels", block.post_norm.num_channels, "post conv input channels", block.post_conv.in_channels)
        return block

    def transformer_attention_block(self) -> TransformerAttentionBlockDesc:
        name = self.name("attention block name")
        num_heads = self.positive_int(f"{name}: number of heads")
        num_kv_heads = self.positive_int(f"{name}: number of key/value heads")
        q_head_dim = self.positive_int(f"{name}: query head size")
        v_head_dim = self.positive_int(f"{name}: value head size")
        use_rope = self.int_(f"{name}: rope flag") != 0
        learnable_rope = self.int_(f"{name}: learnable rope flag") != 0
        if num_heads % num_kv_heads != 0:
            raise _ParseError(f"{name}: {num_heads} heads not divisible by {num_kv_heads} key/value heads")
        if use_rope and q_head_dim % 2 != 0:
            raise _ParseError(f"{name}: query head size {q_head_dim} must be even with rope")
        block = TransformerAttentionBlockDesc(
            name=name,
            num_heads=num_heads,
            num_kv_heads=num_kv_heads,
            q_head_dim=q_head_dim,
            v_head_dim=v_head_dim,
            use_rope=use_rope,
            learnable_rope=learnable_rope,
            pre_norm=self.transformer_norm(),
            q_proj=self.matmul(),
            k_proj=self.matmul(),
            v_proj=self.matmul(),
            out_proj=self.matmul(),
        )
        _expect(name, "q projection outputs", block.q_proj.out_channels, "heads x query head size", num_heads * q_head_dim)
        _expect(name, "k projection outputs", block.k_proj.out_channels, "kv heads x query head size", num_kv_heads * q_head_dim)
        _expect(name, "v projection outputs", block.v_proj.out_channels, "kv heads x value head size", num_kv_heads * v_head_dim)
        _expect(name, "out projection inputs", block.out_proj.in_channels, "heads x value head size", num_heads * v_head_dim)
        if use_rope and learnable_rope:
            block.rope_name = self.name(f"{name}: rope frequencies name")
            kv_heads = self.int_(f"{name}: rope key/value heads")
            pairs = self.int_(f"{name}: rope pairs")
            dims = self.int_(f"{name}: rope dimensions")
            if (kv_heads, pairs, dims) != (num_kv_heads, q_head_dim // 2, 2):
                raise _ParseError(
                    f"{name}: rope frequency shape ({kv_heads}, {pairs}, {dims}) does not match"
                    f" ({num_kv_heads}, {q_head_dim // 2}, 2)"
                )
            block.rope_freqs = self.floats(kv_heads * pairs * 2, block.rope_name).reshape(kv_heads, pairs, 2)
        elif use_rope:
            block.rope_name = self.name(f"{name}: rope theta name")
            block.rope_theta = self.float_(f"{name}: rope theta")
            if block.rope_theta <= 0:
                raise _ParseError(f"{name}: rope theta must be positive")
        return block

    def transformer_ffn_block(self) -> TransformerFFNBlockDesc:
        name = self.name("feed-forward block name")
        channels = self.positive_int(f"{name}: number of channels")
        ffn_channels = self.positive_int(f"{name}: hidden channels")
        use_swiglu = self.int_(f"{name}: SwiGLU flag") != 0
        pre_norm = self.transformer_norm()
        linear1 = self.matmul()
        linear_gate = self.matmul() if use_swiglu else None
        linear2 = self.matmul()
        _expect(name, "linear1 inputs", linear1.in_channels, "channels", channels)
        _expect(name, "linear1 outputs", linear1.out_channels, "hidden channels", ffn_channels)
        if linear_gate is not None:
            _expect(name, "gate inputs", linear_gate.in_channels, "channels", channels)
            _expect(name, "gate outputs", linear_gate.out_channels, "hidden channels", ffn_channels)
        _expect(name, "linear2 inputs", linear2.in_channels, "hidden channels", ffn_channels)
        _expect(name, "linear2 outputs", linear2.out_channels, "channels", channels)
        return TransformerFFNBlockDesc(
            name=name, use_swiglu=use_swiglu, pre_norm=pre_norm, linear1=linear1, linear_gate=linear_gate, linear2=linear2
        )

    def block_stack(self, owner: str, num_blocks: int, channels: int) -> list[BlockDesc]:
        readers = {
            OrdinaryBlockDesc.KIND: self.ordinary_block,
            GlobalPoolBlockDesc.KIND: self.gpool_block,
            NestedBottleneckBlockDesc.KIND: self.nested_bottleneck_block,
            TransformerAttentionBlockDesc.KIND: self.transformer_attention_block,
            TransformerFFNBlockDesc.KIND: self.transformer_ffn_block,
        }
        blocks = []
        for i in range(num_blocks):
            kind = self.s.token(f"{owner}: kind of block {i}")
            reader = readers.get(kind)
            if reader is None:
                raise _ParseError(f"{owner}: unknown block kind {kind[:40]!r} for block {i}")
            block = reader()
            block_in, block_out = _block_io_channels(block)
            _expect(owner, f"{block.name} input channels", block_in, "stack channels", channels)
            _expect(owner, f"{block.name} output channels", block_out, "stack channels", channels)
            blocks.append(block)
        return blocks

    # -- model sections

    def metadata_encoder(self, encoder_version: int) -> MetadataEncoderDesc:
        name = self.name("metadata encoder name")
        channels = self.int_(f"{name}: number of input channels")
        expected = META_ENCODER_INPUT_CHANNELS[encoder_version]
        if channels != expected:
            raise _ParseError(f"{name}: {channels} input channels, expected {expected}")
        enc = MetadataEncoderDesc(
            name=name,
            num_input_channels=channels,
            mul1=self.matmul(),
            bias1=self.matbias(),
            act1=self.activation(),
            mul2=self.matmul(),
            bias2=self.matbias(),
            act2=self.activation(),
            mul3=self.matmul(),
        )
        _expect(name, "mul1 inputs", enc.mul1.in_channels, "input channels", channels)
        _expect(name, "mul1 outputs", enc.mul1.out_channels, "bias1 channels", enc.bias1.num_channels)
        _expect(name, "mul2 inputs", enc.mul2.in_channels, "mul1 outputs", enc.mul1.out_channels)
        _expect(name, "mul2 outputs", enc.mul2.out_channels, "bias2 channels", enc.bias2.num_channels)
        _expect(name, "mul3 inputs", enc.mul3.in_channels, "mul2 outputs", enc.mul2.out_channels)
        return enc

    def trunk(self, meta_encoder_version: int) -> TrunkDesc:
        name = self.name("trunk name")
        num_blocks = self.positive_int(f"{name}: number of blocks")
        trunk_channels = self.positive_int(f"{name}: trunk channels")
        mid_channels = self.positive_int(f"{name}: mid channels")
        regular_channels = self.positive_int(f"{name}: regular channels")
        dilated_channels = self.int_(f"{name}: dilated channels")
        gpool_channels = self.positive_int(f"{name}: gpool channels")
        norm_kind = TRUNK_NORM_STANDARD
        if self.version >= 15:
            norm_kind = self.int_(f"{name}: trunk norm kind")
            self.reserved_zeros(NUM_TRUNK_HEADER_OPTION_SLOTS, name)
            if norm_kind not in (TRUNK_NORM_STANDARD, TRUNK_NORM_RMSNORM):
                raise _ParseError(f"{name}: unknown trunk norm kind {norm_kind}")
        initial_conv = self.conv()
        initial_matmul = self.matmul()
        _expect(name, "initial conv outputs", initial_conv.out_channels, "trunk channels", trunk_channels)
        _expect(name, "initial matmul outputs", initial_matmul.out_channels, "trunk channels", trunk_channels)
        encoder = None
        if meta_encoder_version > 0:
            encoder = self.metadata_encoder(meta_encoder_version)
            _expect(name, "metadata encoder outputs", encoder.mul3.out_channels, "trunk channels", trunk_channels)
        blocks = self.block_stack(name, num_blocks, trunk_channels)
        tip_norm = self.batch_norm() if norm_kind == TRUNK_NORM_STANDARD else self.rms_norm()
        _expect(name, "tip norm channels", tip_norm.num_channels, "trunk channels", trunk_channels)
        return TrunkDesc(
            name=name,
            trunk_channels=trunk_channels,
            mid_channels=mid_channels,
            regular_channels=regular_channels,
            dilated_channels=dilated_channels,
            gpool_channels=gpool_channels,
            initial_conv=initial_conv,
            initial_matmul=initial_matmul,
            blocks=blocks,
            tip_norm=tip_norm,
            tip_activation=self.activation(),
            metadata_encoder=encoder,
        )

    def expected_policy_channels(self, name: str) -> int:
        if self.version >= 17:
            channels = self.int_(f"{name}: policy output channels")
            if channels not in (2, 4):
                raise _ParseError(f"{name}: invalid number of policy output channels {channels}")
            self.reserved_zeros(NUM_HEAD_OPTION_SLOTS, name)
            return channels
        if self.version == 16:
            return 4
        if self.version >= 12:
            return 2
        return 1

    def policy_head(self) -> PolicyHeadDesc:
        name = self.name("policy head name")
        channels = self.expected_policy_channels(name)
        head = PolicyHeadDesc(
            name=name,
            p1_conv=self.conv(),
            g1_conv=self.conv(),
            g1_norm=self.batch_norm(),
            g1_activation=self.activation(),
            gpool_to_bias=self.matmul(),
            p1_norm=self.batch_norm(),
            p1_activation=self.activation(),
            p2_conv=self.conv(),
            gpool_to_pass=self.matmul(),
        )
        if self.version >= 15:
            head.pass_bias = self.matbias()
            head.pass_activation = self.activation()
            head.gpool_to_pass2 = self.matmul()
        g1 = head.g1_norm.num_channels
        p1 = head.p1_norm.num_channels
        _expect(name, "p1 conv outputs", head.p1_conv.out_channels, "p1BN channels", p1)
        _expect(name, "g1 conv outputs", head.g1_conv.out_channels, "g1BN channels", g1)
        _expect(name, "gpool-to-bias inputs", head.gpool_to_bias.in_channels, "3 x g1BN channels", 3 * g1)
        _expect(name, "gpool-to-bias outputs", head.gpool_to_bias.out_channels, "p1BN channels", p1)
        _expect(name, "p2 conv inputs", head.p2_conv.in_channels, "p1BN channels", p1)
        _expect(name, "gpool-to-pass inputs", head.gpool_to_pass.in_channels, "3 x g1BN channels", 3 * g1)
        _expect(name, "p2 conv outputs", head.p2_conv.out_channels, "policy channels", channels)
        if self.version >= 15:
            hidden = head.gpool_to_pass.out_channels
            _expect(name, "pass bias channels", head.pass_bias.num_channels, "gpool-to-pass outputs", hidden)
            _expect(name, "pass2 inputs", head.gpool_to_pass2.in_channels, "gpool-to-pass outputs", hidden)
            _expect(name, "pass2 outputs", head.gpool_to_pass2.out_channels, "policy channels", channels)
        else:
            _expect(name, "gpool-to-pass outputs", head.gpool_to_pass.out_channels, "policy channels", channels)
        return head

    def value_head(self) -> ValueHeadDesc:
        name = self.name("value head name")
        if self.version >= 17:
            self.reserved_zeros(NUM_HEAD_OPTION_SLOTS, name)
        head = ValueHeadDesc(
            name=name,
            v1_conv=self.conv(),
            v1_norm=self.batch_norm(),
            v1_activation=self.activation(),
            v2_mul=self.matmul(),
            v2_bias=self.matbias(),
            v2_activation=self.activation(),
            v3_mul=self.matmul(),
            v3_bias=self.matbias(),
            sv3_mul=self.matmul(),
            sv3_bias=self.matbias(),
            ownership_conv=self.conv(),
        )
        v1 = head.v1_norm.num_channels
        v2 = head.v2_mul.out_channels
        score_channels = expected_score_value_channels(self.version)
        _expect(name, "v1 conv outputs", head.v1_conv.out_channels, "v1BN channels", v1)
        _expect(name, "v2 inputs", head.v2_mul.in_channels, "3 x v1BN channels", 3 * v1)
        _expect(name, "v2 bias channels", head.v2_bias.num_channels, "v2 outputs", v2)
        _expect(name, "v3 inputs", head.v3_mul.in_channels, "v2 outputs", v2)
        _expect(name, "v3 outputs", head.v3_mul.out_channels, "value channels", 3)
        _expect(name, "v3 bias channels", head.v3_bias.num_channels, "value channels", 3)
        _expect(name, "sv3 inputs", head.sv3_mul.in_channels, "v2 outputs", v2)
        _expect(name, "sv3 outputs", head.sv3_mul.out_channels, "score value channels", score_channels)
        _expect(name, "sv3 bias channels", head.sv3_bias.num_channels, "score value channels", score_channels)
        _expect(name, "ownership conv inputs", head.ownership_conv.in_channels, "v1 conv outputs", head.v1_conv.out_channels)
        _expect(name, "ownership conv outputs", head.ownership_conv.out_channels, "ownership channels", 1)
        return head

    def header(self) -> tuple[str, int, int, int]:
        """(name, version, spatial inputs, global inputs): the start of every model file."""
        name = self.name("model name")
        self.version = self.int_("model version")
        if self.version < OLDEST_SUPPORTED_VERSION:
            raise _ParseError(
                f"unsupported model version {self.version}: only versions {OLDEST_SUPPORTED_VERSION}"
                f"-{NEWEST_SUPPORTED_VERSION} (V7 input features) are supported"
            )
        if self.version > NEWEST_SUPPORTED_VERSION:
            raise _ParseError(
                f"unsupported model version {self.version}: newer than the newest supported"
                f" version {NEWEST_SUPPORTED_VERSION}"
            )
        num_inputs = self.int_("number of spatial input channels")
        num_global_inputs = self.int_("number of global input channels")
        if num_inputs != NUM_SPATIAL_FEATURES_V7 or num_global_inputs != NUM_GLOBAL_FEATURES_V7:
            raise _ParseError(
                f"expected {NUM_SPATIAL_FEATURES_V7} spatial and {NUM_GLOBAL_FEATURES_V7} global input"
                f" channels, found {num_inputs} and {num_global_inputs}"
            )
        return name, self.version, num_inputs, num_global_inputs

    def model(self) -> ModelDesc:
        name, _, num_inputs, num_global_inputs = self.header()
        post = PostProcessParams()
        if self.version >= 13:
            for field_name in (
                "td_score_multiplier",
                "score_mean_multiplier",
                "score_stdev_multiplier",
                "lead_multiplier",
                "variance_time_multiplier",
                "shortterm_value_error_multiplier",
                "shortterm_score_error_multiplier",
            ):
                value = self.float_(field_name)
                if value <= 0:
                    raise _ParseError(f"{field_name} must be positive, found {value}")
                setattr(post, field_name, value)
        meta_encoder_version = 0
        prefer_pass_alive = False
        if self.version >= 15:
            meta_encoder_version = self.int_("metadata encoder version")
            if meta_encoder_version != 0 and meta_encoder_version not in META_ENCODER_INPUT_CHANNELS:
                raise _ParseError(f"unsupported metadata encoder version {meta_encoder_version}")
            prefer_pass_alive = self.flag("prefer-pass-alive-under-suicide-rules flag")
            self.reserved_zeros(NUM_MODEL_HEADER_OPTION_SLOTS - 1, "model header")
        trunk = self.trunk(meta_encoder_version)
        policy_head = self.policy_head()
        value_head = self.value_head()
        _expect(name, "initial conv inputs", trunk.initial_conv.in_channels, "spatial input channels", num_inputs)
        _expect(name, "initial matmul inputs", trunk.initial_matmul.in_channels, "global input channels", num_global_inputs)
        _expect(name, "trunk channels", trunk.trunk_channels, "policy p1 conv inputs", policy_head.p1_conv.in_channels)
        _expect(name, "trunk channels", trunk.trunk_channels, "policy g1 conv inputs", policy_head.g1_conv.in_channels)
        _expect(name, "trunk channels", trunk.trunk_channels, "value v1 conv inputs", value_head.v1_conv.in_channels)
        return ModelDesc(
            name=name,
            version=self.version,
            num_input_channels=num_inputs,
            num_input_global_channels=num_global_inputs,
            trunk=trunk,
            policy_head=policy_head,
            value_head=value_head,
            postprocess=post,
            meta_encoder_version=meta_encoder_version,
            prefer_pass_alive_under_suicide_rules=prefer_pass_alive,
        )


def expected_score_value_channels(version: int) -> int:
    """Outputs of the misc-value head: score mean, stdev, lead, variance time (+ 2 short-term errors from v9)."""
    return 6 if version >= 9 else 4


def _expect(owner: str, what: str, value: int, expected_what: str, expected: int) -> None:
    if value != expected:
        raise _ParseError(f"{owner}: {what} ({value}) != {expected_what} ({expected})")


def _block_io_channels(block: BlockDesc) -> tuple[int, int]:
    if isinstance(block, (OrdinaryBlockDesc, GlobalPoolBlockDesc)):
        return block.pre_norm.num_channels, block.final_conv.out_channels
    if isinstance(block, NestedBottleneckBlockDesc):
        return block.pre_norm.num_channels, block.post_conv.out_channels
    if isinstance(block, TransformerAttentionBlockDesc):
        return block.q_proj.in_channels, block.out_proj.out_channels
    return block.num_channels, block.linear2.out_channels


# ---------------------------------------------------------------------------------------------
# Entry points


def _file_format(path: str) -> Optional[bool]:
    """True for binary floats, False for text, None for a bare '.gz' (try both)."""
    lower = path.lower()
    if lower.endswith(".txt") or lower.endswith(".txt.gz"):
        return False
    if lower.endswith(".bin") or lower.endswith(".bin.gz"):
        return True
    if lower.endswith(".gz"):
        return None
    raise ModelFileError(f"{path}: model file name should end with .bin.gz, .bin, .txt.gz, .txt or .gz")


def parse_model_bytes(data: bytes, binary_floats: bool, source: str = "<bytes>", build: bool = True) -> ModelDesc:
    """Parse uncompressed model file contents. ``build=False`` checks all of it just as strictly but
    leaves the weights as views of ``data`` (read-only, not laid out for torch): a fast whole-file check."""
    stream = _BinaryTokenStream(data, copy=build) if binary_floats else _TextTokenStream(data)
    parser = _Parser(stream, build=build)
    try:
        return parser.model()
    except _ParseError as e:
        version = f"model version {parser.version}" if parser.version >= 0 else "model version unknown"
        raise ModelFileError(f"{source} ({version}): {e}") from None
    except (ValueError, IndexError, OverflowError, MemoryError) as e:  # defensive: never a bare traceback
        version = f"model version {parser.version}" if parser.version >= 0 else "model version unknown"
        raise ModelFileError(f"{source} ({version}): malformed model file ({type(e).__name__}: {e})") from e


def read_model_file(path: Union[str, os.PathLike], contents: Optional["ModelContents"] = None) -> ModelDesc:
    """Read a KataGo model file into a :class:`ModelDesc`. ``contents``: the file's bytes as its start-up
    check inflated them (:func:`check_model_file` with ``keep_contents``), used instead of reading
    the file again when they are still there."""
    path = os.fspath(path)
    binary = _file_format(path)
    raw = contents.take() if contents is not None else None
    if raw is not None:
        return _parse_contents(raw, binary, path, build=True)
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as e:
        raise ModelFileError(f"{path}: cannot read model file: {e.strerror or e}") from None
    if path.lower().endswith(".gz"):
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as e:
            raise ModelFileError(f"{path}: not a valid gzip file or truncated ({e})") from None
    return _parse_contents(raw, binary, path, build=True)


def _parse_contents(raw: bytes, binary: Optional[bool], path: str, build: bool) -> ModelDesc:
    """``raw`` parsed as the format ``_file_format`` named, or as either for a bare '.gz'."""
    if binary is not None:
        return parse_model_bytes(raw, binary, path, build)
    try:
        return parse_model_bytes(raw, True, path, build)
    except ModelFileError as binary_error:
        try:
            return parse_model_bytes(raw, False, path, build)
        except ModelFileError as text_error:
            raise ModelFileError(
                f"{path}: could parse it neither as a binary nor as a text model:\n  {binary_error}\n  {text_error}"
            ) from None


class ModelContents:
    """A checked model file's inflated bytes, kept for the one load that follows (:func:`read_model_file`),
    which takes them: they are not held after it (a b18 net's are ~100 MB, ~0.7 s to inflate again)."""

    def __init__(self, data: bytes):
        self._data: Optional[bytes] = data

    def take(self) -> Optional[bytes]:
        """The bytes, once; None after that."""
        data, self._data = self._data, None
        return data


@dataclass(frozen=True)
class ModelFileHeader:
    """What :func:`check_model_file` found at the start of a model file."""

    path: str
    name: str
    version: int
    takes_metadata: bool = False  # an SGF metadata encoder: a human-SL net, which needs a humanSLProfile
    contents: Optional[ModelContents] = field(default=None, repr=False, compare=False)  # with keep_contents


def _decompressed_contents(path: str, gzipped: bool, check_prefix: Callable[[bytes], None]) -> bytes:
    """The file's contents, a gzip file checked to its end (length and CRC), read at most
    CHECK_READ_CHUNK_BYTES in or out at a time. ``check_prefix`` sees the first HEADER_PREFIX_BYTES
    as soon as they are read and raises for a file that is no model, so that what is not a model
    (a gzip bomb) is never held whole."""
    contents = bytearray()
    prefix_checked = False

    def keep(data: bytes) -> None:
        nonlocal prefix_checked
        contents.extend(data)
        if not prefix_checked and len(contents) >= HEADER_PREFIX_BYTES:
            prefix_checked = True
            check_prefix(bytes(contents[:HEADER_PREFIX_BYTES]))

    decoder = zlib.decompressobj(wbits=zlib.MAX_WBITS | GZIP_WBITS_FLAG) if gzipped else None
    try:
        with open(path, "rb") as f:
            while chunk := f.read(CHECK_READ_CHUNK_BYTES):
                if decoder is None:
                    keep(chunk)
                    continue
                while chunk:
                    keep(decoder.decompress(chunk, CHECK_READ_CHUNK_BYTES))
                    if decoder.eof:  # a further gzip member may follow (gzip and KataGo read them all)
                        chunk = decoder.unused_data
                        if chunk:
                            decoder = zlib.decompressobj(wbits=zlib.MAX_WBITS | GZIP_WBITS_FLAG)
                    else:
                        chunk = decoder.unconsumed_tail
    except OSError as e:
        raise ModelFileError(f"{path}: cannot read model file: {e.strerror or e}") from None
    except zlib.error as e:
        raise ModelFileError(f"{path}: not a valid gzip file or corrupt ({e})") from None
    if decoder is not None and not decoder.eof:
        raise ModelFileError(f"{path}: gzip file is truncated")
    if not prefix_checked:
        check_prefix(bytes(contents))
    return bytes(contents)


# What every command says to -human-model without -model (KataGo also needs both).
HUMAN_MODEL_WITHOUT_MODEL = "-human-model needs a main network too: pass -model"


def check_model_file(path: Union[str, os.PathLike], keep_contents: bool = False) -> ModelFileHeader:
    """Check a model file quickly enough to do before a command starts serving: it exists, is a
    file, its gzip stream is whole (every byte read, CRC checked), its header (name, supported
    version, input channels) parses, and so does its whole body: every layer, every weight count
    and the weights themselves (finite), as :func:`read_model_file` reads them, but without laying
    the weights out for a network (a file cut short inside its weights and re-gzipped is refused here,
    not at the first genmove). Raises :class:`ModelFileError` with a one-line message otherwise.
    ``keep_contents``: the header's ``contents`` keeps the inflated file for the load that follows."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise ModelFileError(f"model file not found: {path}")
    if os.path.isdir(path):
        raise ModelFileError(f"model path is a directory, not a model file: {path}")
    if not os.path.isfile(path):  # a pipe or device could block or never end
        raise ModelFileError(f"model path is not a regular file: {path}")
    binary = _file_format(path)  # None: a name KataGo would accept, either format
    header: list = []

    def check_header(prefix: bytes) -> None:
        try:
            header.extend(_Parser(_BinaryTokenStream(prefix)).header()[:2])
        except _ParseError as e:
            raise ModelFileError(f"{path}: not a KataGo model file: {e}") from None

    contents = _decompressed_contents(path, path.lower().endswith(".gz"), check_header)
    desc = _parse_contents(contents, binary, path, build=False)
    name, version = header
    return ModelFileHeader(path=path, name=name, version=version, takes_metadata=desc.trunk.metadata_encoder is not None,
                           contents=ModelContents(contents) if keep_contents else None)
