"""Write networks back to KataGo's model file format.

:func:`write_model_file` writes a :class:`~katacli.nn.description.ModelDesc` in the exact
layout :mod:`katacli.nn.model_file_reader` reads (and KataGo 1.17 loads): one token per line,
weights as ``@BIN@`` blocks of little-endian float32 (binary) or decimal floats (text).
:func:`export_model` does the same for a :class:`~katacli.nn.torch_model.KataGoModel`.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from typing import Union

import numpy as np

from katacli.nn.description import (
    OLDEST_SUPPORTED_VERSION,
    NEWEST_SUPPORTED_VERSION,
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
    RMSNormDesc,
    TransformerAttentionBlockDesc,
    TransformerFFNBlockDesc,
    TransformerNormDesc,
    TrunkDesc,
    ValueHeadDesc,
)
from katacli.nn.model_file_reader import (
    BIN_MARKER,
    NUM_HEAD_OPTION_SLOTS,
    NUM_MODEL_HEADER_OPTION_SLOTS,
    NUM_TRUNK_HEADER_OPTION_SLOTS,
    expected_score_value_channels,
)

# KataGo 1.17 refuses model names that are longer or use other characters (they end up in file names).
MAX_MODEL_NAME_LENGTH = 96
_MODEL_NAME_PATTERN = re.compile(r"[A-Za-z0-9_-]+")
# Layer names are single tokens of the format.
_LAYER_NAME_PATTERN = re.compile(r"\S+")


class ModelExportError(ValueError):
    """The network cannot be written in the requested model version."""


class _Writer:
    def __init__(self, version: int, binary_floats: bool):
        self.out = io.BytesIO()
        self.version = version
        self.binary = binary_floats

    def line(self, value) -> None:
        if isinstance(value, bool):
            value = int(value)
        self.out.write(str(value).encode("ascii") + b"\n")

    def name(self, name: str) -> None:
        if not _LAYER_NAME_PATTERN.fullmatch(name):
            raise ModelExportError(f"layer name {name!r} must be one token without whitespace")
        self.line(name)

    def floats(self, values: np.ndarray) -> None:
        flat = np.ascontiguousarray(values, dtype=np.float32).reshape(-1)
        if not np.all(np.isfinite(flat)):
            raise ModelExportError("refusing to write NaN or infinite weights")
        if self.binary:
            self.out.write(BIN_MARKER)
            self.out.write(flat.astype("<f4").tobytes())
            self.out.write(b"\n")
        else:
            self.out.write(" ".join(repr(float(v)) for v in flat).encode("ascii") + b"\n")

    # -- layers

    def conv(self, conv: ConvDesc) -> None:
        self.name(conv.name)
        for value in (conv.kernel_y, conv.kernel_x, conv.in_channels, conv.out_channels, conv.dilation_y, conv.dilation_x):
            self.line(value)
        self.floats(conv.weights.transpose(2, 3, 1, 0))  # file order y, x, in, out

    def batch_norm(self, norm: BatchNormDesc) -> None:
        self.name(norm.name)
        self.line(norm.num_channels)
        self.line(float(norm.epsilon))
        self.line(norm.has_scale)
        self.line(norm.has_bias)
        self.floats(norm.mean)
        self.floats(norm.variance)
        if norm.scale is not None:
            self.floats(norm.scale)
        if norm.bias is not None:
            self.floats(norm.bias)

    def rms_norm(self, norm: RMSNormDesc) -> None:
        self.name(norm.name)
        self.line(norm.num_channels)
        self.line(float(norm.epsilon))
        self.line(norm.spatial)
        self.line(norm.cgroup_size)
        self.floats(norm.gamma)
        self.floats(norm.beta)

    def transformer_norm(self, norm: TransformerNormDesc) -> None:
        self.name(norm.name)
        self.line(norm.num_channels)
        self.line(float(norm.epsilon))
        self.floats(norm.weight)

    def activation(self, act: ActivationDesc) -> None:
        self.name(act.name)
        if self.version >= 11:
            self.line(act.kind.value)
        elif act.kind != Activation.RELU:
            raise ModelExportError(f"{act.name}: model version {self.version} can only store ReLU activations")

    def matmul(self, mm: MatMulDesc) -> None:
        self.name(mm.name)
        self.line(mm.in_channels)
        self.line(mm.out_channels)
        self.floats(mm.weights)

    def matbias(self, bias: MatBiasDesc) -> None:
        self.name(bias.name)
        self.line(bias.num_channels)
        self.floats(bias.weights)

    # -- blocks

    def block(self, block: BlockDesc) -> None:
        self.line(block.KIND)
        self.name(block.name)
        if isinstance(block, OrdinaryBlockDesc):
            self.batch_norm(block.pre_norm)
            self.activation(block.pre_activation)
            self.conv(block.regular_conv)
            self.batch_norm(block.mid_norm)
            self.activation(block.mid_activation)
            self.conv(block.final_conv)
        elif isinstance(block, GlobalPoolBlockDesc):
            self.batch_norm(block.pre_norm)
            self.activation(block.pre_activation)
            self.conv(block.regular_conv)
            self.conv(block.gpool_conv)
            self.batch_norm(block.gpool_norm)
            self.activation(block.gpool_activation)
            self.matmul(block.gpool_to_bias)
            self.batch_norm(block.mid_norm)
            self.activation(block.mid_activation)
            self.conv(block.final_conv)
        elif isinstance(block, NestedBottleneckBlockDesc):
            self.line(len(block.blocks))
            self.batch_norm(block.pre_norm)
            self.activation(block.pre_activation)
            self.conv(block.pre_conv)
            for inner in block.blocks:
                self.block(inner)
            self.batch_norm(block.post_norm)
            self.activation(block.post_activation)
            self.conv(block.post_conv)
        elif isinstance(block, TransformerAttentionBlockDesc):
            self.require_version(17, block.name, "transformer blocks")
            for value in (block.num_heads, block.num_kv_heads, block.q_head_dim, block.v_head_dim):
                self.line(value)
            self.line(block.use_rope)
            self.line(block.learnable_rope)
            self.transformer_norm(block.pre_norm)
            for proj in (block.q_proj, block.k_proj, block.v_proj, block.out_proj):
                self.matmul(proj)
            if block.use_rope:
                self.name(block.rope_name or f"{block.name}.rope_{'freqs' if block.learnable_rope else 'theta'}")
                if block.learnable_rope:
                    for size in block.rope_freqs.shape:
                        self.line(size)
                    self.floats(block.rope_freqs)
                else:
                    self.line(float(block.rope_theta))
        elif isinstance(block, TransformerFFNBlockDesc):
            self.require_version(17, block.name, "transformer blocks")
            self.line(block.num_channels)
            self.line(block.ffn_channels)
            self.line(block.use_swiglu)
            self.transformer_norm(block.pre_norm)
            self.matmul(block.linear1)
            if block.use_swiglu:
                self.matmul(block.linear_gate)
            self.matmul(block.linear2)
        else:
            raise ModelExportError(f"unknown block type {type(block).__name__}")

    def require_version(self, version: int, owner: str, what: str) -> None:
        if self.version < version:
            raise ModelExportError(f"{owner}: {what} need model version >= {version}, writing {self.version}")

    # -- model sections

    def metadata_encoder(self, enc: MetadataEncoderDesc) -> None:
        self.name(enc.name)
        self.line(enc.num_input_channels)
        self.matmul(enc.mul1)
        self.matbias(enc.bias1)
        self.activation(enc.act1)
        self.matmul(enc.mul2)
        self.matbias(enc.bias2)
        self.activation(enc.act2)
        self.matmul(enc.mul3)

    def trunk(self, trunk: TrunkDesc) -> None:
        self.name(trunk.name)
        for value in (
            trunk.num_blocks,
            trunk.trunk_channels,
            trunk.mid_channels,
            trunk.regular_channels,
            trunk.dilated_channels,
            trunk.gpool_channels,
        ):
            self.line(value)
        if self.version >= 15:
            self.line(trunk.norm_kind)
            for _ in range(NUM_TRUNK_HEADER_OPTION_SLOTS):
                self.line(0)
        if isinstance(trunk.tip_norm, RMSNormDesc):
            self.require_version(17, trunk.name, "an RMS-norm trunk tip")
        self.conv(trunk.initial_conv)
        self.matmul(trunk.initial_matmul)
        if trunk.metadata_encoder is not None:
            self.require_version(15, trunk.name, "a metadata encoder")
            self.metadata_encoder(trunk.metadata_encoder)
        for block in trunk.blocks:
            self.block(block)
        if isinstance(trunk.tip_norm, RMSNormDesc):
            self.rms_norm(trunk.tip_norm)
        else:
            self.batch_norm(trunk.tip_norm)
        self.activation(trunk.tip_activation)

    def policy_head(self, head: PolicyHeadDesc) -> None:
        self.name(head.name)
        channels = head.policy_out_channels
        if channels not in _allowed_policy_channels(self.version):
            raise ModelExportError(f"{head.name}: {channels} policy channels cannot be stored in version {self.version}")
        if self.version >= 17:
            self.line(channels)
            for _ in range(NUM_HEAD_OPTION_SLOTS):
                self.line(0)
        self.conv(head.p1_conv)
        self.conv(head.g1_conv)
        self.batch_norm(head.g1_norm)
        self.activation(head.g1_activation)
        self.matmul(head.gpool_to_bias)
        self.batch_norm(head.p1_norm)
        self.activation(head.p1_activation)
        self.conv(head.p2_conv)
        self.matmul(head.gpool_to_pass)
        has_pass_mlp = head.gpool_to_pass2 is not None
        if has_pass_mlp != (self.version >= 15):
            raise ModelExportError(f"{head.name}: the pass hidden layer exists exactly from model version 15 on")
        if has_pass_mlp:
            self.matbias(head.pass_bias)
            self.activation(head.pass_activation)
            self.matmul(head.gpool_to_pass2)

    def value_head(self, head: ValueHeadDesc) -> None:
        self.name(head.name)
        if self.version >= 17:
            for _ in range(NUM_HEAD_OPTION_SLOTS):
                self.line(0)
        if head.sv3_mul.out_channels != expected_score_value_channels(self.version):
            raise ModelExportError(
                f"{head.name}: {head.sv3_mul.out_channels} score value outputs cannot be stored in version {self.version}"
            )
        self.conv(head.v1_conv)
        self.batch_norm(head.v1_norm)
        self.activation(head.v1_activation)
        self.matmul(head.v2_mul)
        self.matbias(head.v2_bias)
        self.activation(head.v2_activation)
        self.matmul(head.v3_mul)
        self.matbias(head.v3_bias)
        self.matmul(head.sv3_mul)
        self.matbias(head.sv3_bias)
        self.conv(head.ownership_conv)

    def model(self, desc: ModelDesc) -> None:
        self.line(desc.name)
        self.line(desc.version)
        self.line(desc.num_input_channels)
        self.line(desc.num_input_global_channels)
        post = desc.postprocess
        if self.version >= 13:
            for value in (
                post.td_score_multiplier,
                post.score_mean_multiplier,
                post.score_stdev_multiplier,
                post.lead_multiplier,
                post.variance_time_multiplier,
                post.shortterm_value_error_multiplier,
                post.shortterm_score_error_multiplier,
            ):
                self.line(float(value))
        if self.version >= 15:
            self.line(desc.meta_encoder_version)
            self.line(desc.prefer_pass_alive_under_suicide_rules)
            for _ in range(NUM_MODEL_HEADER_OPTION_SLOTS - 1):
                self.line(0)
        elif desc.meta_encoder_version or desc.prefer_pass_alive_under_suicide_rules:
            raise ModelExportError("metadata encoders and pass-alive preferences need model version >= 15")
        self.trunk(desc.trunk)
        self.policy_head(desc.policy_head)
        self.value_head(desc.value_head)


def _allowed_policy_channels(version: int) -> tuple[int, ...]:
    if version >= 17:
        return (2, 4)  # policy + optimistic policy, optionally + 2 q-value outputs
    if version == 16:
        return (4,)
    if version >= 12:
        return (2,)
    return (1,)


def model_file_bytes(desc: ModelDesc, binary_floats: bool = True) -> bytes:
    """The uncompressed contents of the model file for ``desc``."""
    if not OLDEST_SUPPORTED_VERSION <= desc.version <= NEWEST_SUPPORTED_VERSION:
        raise ModelExportError(f"cannot write model version {desc.version}")
    if len(desc.name) > MAX_MODEL_NAME_LENGTH or not _MODEL_NAME_PATTERN.fullmatch(desc.name):
        raise ModelExportError(
            f"model name {desc.name!r} must be 1-{MAX_MODEL_NAME_LENGTH} characters of letters, digits, '_' and '-'"
        )
    writer = _Writer(desc.version, binary_floats)
    writer.model(desc)
    return writer.out.getvalue()


def write_model_file(desc: ModelDesc, path: Union[str, os.PathLike]) -> None:
    """Write ``desc`` to ``path``; the name's suffix picks the format (.bin.gz, .bin, .txt.gz, .txt)."""
    path = os.fspath(path)
    lower = path.lower()
    if lower.endswith(".bin.gz") or lower.endswith(".bin"):
        binary = True
    elif lower.endswith(".txt.gz") or lower.endswith(".txt"):
        binary = False
    else:
        raise ModelExportError(f"{path}: model file name should end with .bin.gz, .bin, .txt.gz or .txt")
    data = model_file_bytes(desc, binary)
    if lower.endswith(".gz"):
        # mtime=0 keeps the output reproducible.
        data = gzip.compress(data, compresslevel=6, mtime=0)
    with open(path, "wb") as f:
        f.write(data)


def export_model(model, path: Union[str, os.PathLike], version: int | None = None, name: str | None = None) -> ModelDesc:
    """Write a :class:`~katacli.nn.torch_model.KataGoModel` to ``path`` and return the description written.

    ``version`` defaults to the model's own version (15 for networks built from a named config);
    ``name`` to the model's name.
    """
    desc = model.to_description()
    if version is not None:
        desc.version = version
    if name is not None:
        desc.name = name
    write_model_file(desc, path)
    return desc
