"""KataGo networks as PyTorch modules.

:class:`KataGoModel` mirrors a :class:`~katacli.nn.description.ModelDesc` layer for layer,
so it loads a model file's weights exactly (:meth:`KataGoModel.from_description`,
:func:`load_model`) and can be turned back into one (:meth:`KataGoModel.to_description`).
:meth:`KataGoModel.from_config` builds a randomly initialised net from a named
architecture (``b6c96``, ``b18c384nbt``, ...) for training.

Inputs are V7 features: ``spatial`` float32 ``[N, 22, H, W]`` whose channel 0 is the
on-board mask, and ``global_features`` float32 ``[N, 19]``; any H, W (rectangular too).
Outputs are raw, from the side to move's point of view; see :mod:`katacli.nn.postprocess`.

For inference, :meth:`KataGoModel.fused` returns a copy with every batch norm that directly
follows a convolution folded into it and the others precomputed.
"""

from __future__ import annotations

import copy
import os
from typing import NamedTuple, Optional, Union

import numpy as np
import torch
from torch import nn

from katacli.nn.description import (
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
from katacli.nn.layers import (
    MaskInfo,
    NamedConv,
    NamedLinear,
    NormAct,
    TransformerAttention,
    TransformerFFN,
    TrunkTipRMSNorm,
    apply_activation,
    global_pool,
    tensor_from,
    value_head_pool,
)


class ModelOutput(NamedTuple):
    """Raw network outputs, from the side to move's point of view, in the input's orientation."""

    policy: torch.Tensor  # [N, policy channels, H, W] logits (channel 0 policy, 1 optimistic policy, ...)
    policy_pass: torch.Tensor  # [N, policy channels] pass logits
    value: torch.Tensor  # [N, 3] win / loss / no-result logits
    score_value: torch.Tensor  # [N, 4 or 6] score mean, stdev, lead, variance time, short-term errors (pre-activation)
    ownership: torch.Tensor  # [N, 1, H, W] pre-tanh


# ---------------------------------------------------------------------------------------------
# Conversions between description layers and modules


def _conv(desc: ConvDesc) -> NamedConv:
    conv = NamedConv(desc.name, desc.in_channels, desc.out_channels, desc.kernel_y, desc.kernel_x,
                     desc.dilation_y, desc.dilation_x)
    with torch.no_grad():
        conv.weight.copy_(tensor_from(desc.weights))
    return conv


def _conv_desc(conv: nn.Conv2d) -> ConvDesc:
    if conv.bias is not None:
        raise ValueError("cannot describe a fused model; export the unfused one")
    return ConvDesc(name=conv.desc_name, weights=_array(conv.weight),
                    dilation_y=conv.dilation[0], dilation_x=conv.dilation[1])


def _linear(mm: MatMulDesc, bias: Optional[MatBiasDesc] = None) -> NamedLinear:
    linear = NamedLinear(mm.name, mm.in_channels, mm.out_channels, bias.name if bias is not None else None)
    with torch.no_grad():
        linear.weight.copy_(tensor_from(mm.weights.T))
        if bias is not None:
            linear.bias.copy_(tensor_from(bias.weights))
    return linear


def _matmul_desc(linear: NamedLinear) -> MatMulDesc:
    return MatMulDesc(name=linear.desc_name, weights=np.ascontiguousarray(_array(linear.weight).T))


def _bias_desc(linear: NamedLinear) -> MatBiasDesc:
    return MatBiasDesc(name=linear.bias_name, weights=_array(linear.bias))


def _norm_act(norm: BatchNormDesc, act: ActivationDesc) -> NormAct:
    module = NormAct(norm.name, act.name, norm.num_channels, act.kind, norm.epsilon, norm.has_scale, norm.has_bias)
    with torch.no_grad():
        module.mean.copy_(tensor_from(norm.mean))
        module.variance.copy_(tensor_from(norm.variance))
        if norm.scale is not None:
            module.scale.copy_(tensor_from(norm.scale))
        if norm.bias is not None:
            module.bias.copy_(tensor_from(norm.bias))
    return module


def _norm_act_desc(module: NormAct) -> tuple[BatchNormDesc, ActivationDesc]:
    norm = BatchNormDesc(
        name=module.norm_name,
        epsilon=module.epsilon,
        mean=_array(module.mean),
        variance=_array(module.variance),
        scale=_array(module.scale) if module.scale is not None else None,
        bias=_array(module.bias) if module.bias is not None else None,
    )
    return norm, ActivationDesc(name=module.act_name, kind=module.activation)


def _array(t: torch.Tensor) -> np.ndarray:
    return t.detach().to("cpu", torch.float32).numpy().copy()


# ---------------------------------------------------------------------------------------------
# Residual blocks


class OrdinaryBlock(nn.Module):
    def __init__(self, desc: OrdinaryBlockDesc):
        super().__init__()
        self.desc_name = desc.name
        self.pre = _norm_act(desc.pre_norm, desc.pre_activation)
        self.regular_conv = _conv(desc.regular_conv)
        self.mid = _norm_act(desc.mid_norm, desc.mid_activation)
        self.final_conv = _conv(desc.final_conv)

    def forward(self, x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
        out = self.regular_conv(self.pre(x, info.mask))
        return x + self.final_conv(self.mid(out, info.mask))

    def fuse(self) -> None:
        self.pre.freeze()
        self.regular_conv = self.mid.fold_into(self.regular_conv)

    def describe(self) -> OrdinaryBlockDesc:
        pre_norm, pre_act = _norm_act_desc(self.pre)
        mid_norm, mid_act = _norm_act_desc(self.mid)
        return OrdinaryBlockDesc(self.desc_name, pre_norm, pre_act, _conv_desc(self.regular_conv), mid_norm, mid_act,
                                 _conv_desc(self.final_conv))


class GlobalPoolBlock(nn.Module):
    def __init__(self, desc: GlobalPoolBlockDesc):
        super().__init__()
        self.desc_name = desc.name
        self.pre = _norm_act(desc.pre_norm, desc.pre_activation)
        self.regular_conv = _conv(desc.regular_conv)
        self.gpool_conv = _conv(desc.gpool_conv)
        self.gpool_norm = _norm_act(desc.gpool_norm, desc.gpool_activation)
        self.gpool_to_bias = _linear(desc.gpool_to_bias)
        self.mid = _norm_act(desc.mid_norm, desc.mid_activation)
        self.final_conv = _conv(desc.final_conv)

    def forward(self, x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
        a = self.pre(x, info.mask)
        regular = self.regular_conv(a)
        pooled = global_pool(self.gpool_norm(self.gpool_conv(a), info.mask), info)
        regular = regular + self.gpool_to_bias(pooled).unsqueeze(-1).unsqueeze(-1)
        return x + self.final_conv(self.mid(regular, info.mask))

    def fuse(self) -> None:
        self.pre.freeze()
        self.regular_conv = self.mid.fold_into(self.regular_conv, (self.gpool_to_bias,))
        self.gpool_conv = self.gpool_norm.fold_into(self.gpool_conv)

    def describe(self) -> GlobalPoolBlockDesc:
        pre_norm, pre_act = _norm_act_desc(self.pre)
        gpool_norm, gpool_act = _norm_act_desc(self.gpool_norm)
        mid_norm, mid_act = _norm_act_desc(self.mid)
        return GlobalPoolBlockDesc(
            self.desc_name, pre_norm, pre_act, _conv_desc(self.regular_conv), _conv_desc(self.gpool_conv),
            gpool_norm, gpool_act, _matmul_desc(self.gpool_to_bias), mid_norm, mid_act, _conv_desc(self.final_conv),
        )


class NestedBottleneckBlock(nn.Module):
    def __init__(self, desc: NestedBottleneckBlockDesc):
        super().__init__()
        self.desc_name = desc.name
        self.pre = _norm_act(desc.pre_norm, desc.pre_activation)
        self.pre_conv = _conv(desc.pre_conv)
        self.blocks = nn.ModuleList(_block(b) for b in desc.blocks)
        self.post = _norm_act(desc.post_norm, desc.post_activation)
        self.post_conv = _conv(desc.post_conv)

    def forward(self, x: torch.Tensor, info: MaskInfo) -> torch.Tensor:
        inner = self.pre_conv(self.pre(x, info.mask))
        for block in self.blocks:
            inner = block(inner, info)
        return x + self.post_conv(self.post(inner, info.mask))

    def fuse(self) -> None:
        self.pre.freeze()
        self.post.freeze()
        for block in self.blocks:
            block.fuse()

    def describe(self) -> NestedBottleneckBlockDesc:
        pre_norm, pre_act = _norm_act_desc(self.pre)
        post_norm, post_act = _norm_act_desc(self.post)
        return NestedBottleneckBlockDesc(
            self.desc_name, pre_norm, pre_act, _conv_desc(self.pre_conv), [b.describe() for b in self.blocks],
            post_norm, post_act, _conv_desc(self.post_conv),
        )


class AttentionBlock(TransformerAttention):
    def __init__(self, desc: TransformerAttentionBlockDesc):
        super().__init__(
            desc.name, desc.q_proj.in_channels, desc.num_heads, desc.num_kv_heads, desc.q_head_dim, desc.v_head_dim,
            desc.use_rope, desc.learnable_rope, desc.pre_norm.name, desc.pre_norm.epsilon,
            (desc.q_proj.name, desc.k_proj.name, desc.v_proj.name, desc.out_proj.name), desc.rope_name, desc.rope_theta,
        )
        with torch.no_grad():
            self.norm_weight.copy_(tensor_from(desc.pre_norm.weight))
            for linear, mm in ((self.q_proj, desc.q_proj), (self.k_proj, desc.k_proj), (self.v_proj, desc.v_proj),
                               (self.out_proj, desc.out_proj)):
                linear.weight.copy_(tensor_from(mm.weights.T))
            if self.rope_freqs is not None:
                self.rope_freqs.copy_(tensor_from(desc.rope_freqs))

    def fuse(self) -> None:
        pass

    def describe(self) -> TransformerAttentionBlockDesc:
        return TransformerAttentionBlockDesc(
            name=self.desc_name, num_heads=self.num_heads, num_kv_heads=self.num_kv_heads, q_head_dim=self.q_head_dim,
            v_head_dim=self.v_head_dim, use_rope=self.use_rope, learnable_rope=self.learnable_rope,
            pre_norm=TransformerNormDesc(self.norm_name, self.norm_epsilon, _array(self.norm_weight)),
            q_proj=_matmul_desc(self.q_proj), k_proj=_matmul_desc(self.k_proj), v_proj=_matmul_desc(self.v_proj),
            out_proj=_matmul_desc(self.out_proj), rope_name=self.rope_name,
            rope_freqs=_array(self.rope_freqs) if self.rope_freqs is not None else None, rope_theta=self.rope_theta,
        )


class FFNBlock(TransformerFFN):
    def __init__(self, desc: TransformerFFNBlockDesc):
        super().__init__(
            desc.name, desc.num_channels, desc.ffn_channels, desc.use_swiglu, desc.pre_norm.name, desc.pre_norm.epsilon,
            (desc.linear1.name, desc.linear_gate.name if desc.linear_gate else None, desc.linear2.name),
        )
        with torch.no_grad():
            self.norm_weight.copy_(tensor_from(desc.pre_norm.weight))
            self.linear1.weight.copy_(tensor_from(desc.linear1.weights.T))
            self.linear_gate.weight.copy_(tensor_from(desc.linear_gate.weights.T))
            self.linear2.weight.copy_(tensor_from(desc.linear2.weights.T))

    def fuse(self) -> None:
        pass

    def describe(self) -> TransformerFFNBlockDesc:
        return TransformerFFNBlockDesc(
            name=self.desc_name, use_swiglu=True,
            pre_norm=TransformerNormDesc(self.norm_name, self.norm_epsilon, _array(self.norm_weight)),
            linear1=_matmul_desc(self.linear1), linear_gate=_matmul_desc(self.linear_gate),
            linear2=_matmul_desc(self.linear2),
        )


_BLOCK_MODULES = {
    OrdinaryBlockDesc: OrdinaryBlock,
    GlobalPoolBlockDesc: GlobalPoolBlock,
    NestedBottleneckBlockDesc: NestedBottleneckBlock,
    TransformerAttentionBlockDesc: AttentionBlock,
    TransformerFFNBlockDesc: FFNBlock,
}


def _block(desc: BlockDesc) -> nn.Module:
    return _BLOCK_MODULES[type(desc)](desc)


# ---------------------------------------------------------------------------------------------
# Trunk and heads


class MetadataEncoder(nn.Module):
    """SGF metadata encoder of human-style nets: a 3-layer MLP whose output biases the trunk."""

    def __init__(self, desc: MetadataEncoderDesc):
        super().__init__()
        self.desc_name = desc.name
        self.layer1 = _linear(desc.mul1, desc.bias1)
        self.act1 = desc.act1
        self.layer2 = _linear(desc.mul2, desc.bias2)
        self.act2 = desc.act2
        self.layer3 = _linear(desc.mul3)

    def forward(self, meta: torch.Tensor) -> torch.Tensor:
        hidden = apply_activation(self.layer1(meta), self.act1.kind)
        hidden = apply_activation(self.layer2(hidden), self.act2.kind)
        return self.layer3(hidden)

    def describe(self) -> MetadataEncoderDesc:
        return MetadataEncoderDesc(
            self.desc_name, self.layer1.in_features, _matmul_desc(self.layer1), _bias_desc(self.layer1), self.act1,
            _matmul_desc(self.layer2), _bias_desc(self.layer2), self.act2, _matmul_desc(self.layer3),
        )


class Trunk(nn.Module):
    def __init__(self, desc: TrunkDesc):
        super().__init__()
        self.desc_name = desc.name
        self.header = (desc.mid_channels, desc.regular_channels, desc.dilated_channels, desc.gpool_channels)
        self.initial_conv = _conv(desc.initial_conv)
        self.initial_matmul = _linear(desc.initial_matmul)
        self.metadata_encoder = MetadataEncoder(desc.metadata_encoder) if desc.metadata_encoder else None
        self.blocks = nn.ModuleList(_block(b) for b in desc.blocks)
        if isinstance(desc.tip_norm, RMSNormDesc):
            tip = desc.tip_norm
            self.tip = TrunkTipRMSNorm(tip.name, desc.tip_activation.name, tip.num_channels, tip.epsilon, tip.spatial,
                                       desc.tip_activation.kind)
            with torch.no_grad():
                self.tip.gamma.copy_(tensor_from(tip.gamma))
                self.tip.beta.copy_(tensor_from(tip.beta))
        else:
            self.tip = _norm_act(desc.tip_norm, desc.tip_activation)

    def forward(self, spatial: torch.Tensor, global_features: torch.Tensor, meta: Optional[torch.Tensor],
                info: MaskInfo) -> torch.Tensor:
        bias = self.initial_matmul(global_features)
        if self.metadata_encoder is not None:
            if meta is None:
                raise ValueError("this network needs SGF metadata input (meta) but none was given")
            bias = bias + self.metadata_encoder(meta)
        x = self.initial_conv(spatial) + bias.unsqueeze(-1).unsqueeze(-1)
        for block in self.blocks:
            x = block(x, info)
        if isinstance(self.tip, NormAct):
            return self.tip(x, info.mask)
        return self.tip(x, info)

    def fuse(self) -> None:
        for block in self.blocks:
            block.fuse()
        if isinstance(self.tip, NormAct):
            self.tip.freeze()

    def describe(self) -> TrunkDesc:
        if isinstance(self.tip, NormAct):
            tip_norm, tip_act = _norm_act_desc(self.tip)
        else:
            tip_norm = RMSNormDesc(self.tip.norm_name, self.tip.epsilon, self.tip.spatial, _array(self.tip.gamma),
                                   _array(self.tip.beta))
            tip_act = ActivationDesc(self.tip.act_name, self.tip.activation)
        mid, regular, dilated, gpool = self.header
        return TrunkDesc(
            name=self.desc_name, trunk_channels=self.initial_conv.out_channels, mid_channels=mid,
            regular_channels=regular, dilated_channels=dilated, gpool_channels=gpool,
            initial_conv=_conv_desc(self.initial_conv), initial_matmul=_matmul_desc(self.initial_matmul),
            blocks=[b.describe() for b in self.blocks], tip_norm=tip_norm, tip_activation=tip_act,
            metadata_encoder=self.metadata_encoder.describe() if self.metadata_encoder else None,
        )


class PolicyHead(nn.Module):
    def __init__(self, desc: PolicyHeadDesc):
        super().__init__()
        self.desc_name = desc.name
        self.p1_conv = _conv(desc.p1_conv)
        self.g1_conv = _conv(desc.g1_conv)
        self.g1_norm = _norm_act(desc.g1_norm, desc.g1_activation)
        self.gpool_to_bias = _linear(desc.gpool_to_bias)
        self.p1_norm = _norm_act(desc.p1_norm, desc.p1_activation)
        self.p2_conv = _conv(desc.p2_conv)
        # Version >= 15: pass = pass2(act(pass(pooled) + bias)); before: pass = pass(pooled).
        self.gpool_to_pass = _linear(desc.gpool_to_pass, desc.pass_bias)
        self.pass_activation = desc.pass_activation
        self.gpool_to_pass2 = _linear(desc.gpool_to_pass2) if desc.gpool_to_pass2 is not None else None

    def forward(self, x: torch.Tensor, info: MaskInfo) -> tuple[torch.Tensor, torch.Tensor]:
        p1 = self.p1_conv(x)
        pooled = global_pool(self.g1_norm(self.g1_conv(x), info.mask), info)
        p1 = p1 + self.gpool_to_bias(pooled).unsqueeze(-1).unsqueeze(-1)
        policy = self.p2_conv(self.p1_norm(p1, info.mask))
        pass_logits = self.gpool_to_pass(pooled)
        if self.gpool_to_pass2 is not None:
            pass_logits = self.gpool_to_pass2(apply_activation(pass_logits, self.pass_activation.kind))
        return policy, pass_logits

    def fuse(self) -> None:
        self.p1_conv = self.p1_norm.fold_into(self.p1_conv, (self.gpool_to_bias,))
        self.g1_conv = self.g1_norm.fold_into(self.g1_conv)

    def describe(self) -> PolicyHeadDesc:
        g1_norm, g1_act = _norm_act_desc(self.g1_norm)
        p1_norm, p1_act = _norm_act_desc(self.p1_norm)
        has_mlp = self.gpool_to_pass2 is not None
        return PolicyHeadDesc(
            name=self.desc_name, p1_conv=_conv_desc(self.p1_conv), g1_conv=_conv_desc(self.g1_conv), g1_norm=g1_norm,
            g1_activation=g1_act, gpool_to_bias=_matmul_desc(self.gpool_to_bias), p1_norm=p1_norm,
            p1_activation=p1_act, p2_conv=_conv_desc(self.p2_conv), gpool_to_pass=_matmul_desc(self.gpool_to_pass),
            pass_bias=_bias_desc(self.gpool_to_pass) if has_mlp else None,
            pass_activation=self.pass_activation if has_mlp else None,
            gpool_to_pass2=_matmul_desc(self.gpool_to_pass2) if has_mlp else None,
        )


class ValueHead(nn.Module):
    def __init__(self, desc: ValueHeadDesc):
        super().__init__()
        self.desc_name = desc.name
        self.v1_conv = _conv(desc.v1_conv)
        self.v1_norm = _norm_act(desc.v1_norm, desc.v1_activation)
        self.v2 = _linear(desc.v2_mul, desc.v2_bias)
        self.v2_activation = desc.v2_activation
        self.v3 = _linear(desc.v3_mul, desc.v3_bias)
        self.sv3 = _linear(desc.sv3_mul, desc.sv3_bias)
        self.ownership_conv = _conv(desc.ownership_conv)

    def forward(self, x: torch.Tensor, info: MaskInfo) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        v1 = self.v1_norm(self.v1_conv(x), info.mask)
        v2 = apply_activation(self.v2(value_head_pool(v1, info)), self.v2_activation.kind)
        return self.v3(v2), self.sv3(v2), self.ownership_conv(v1)

    def fuse(self) -> None:
        self.v1_conv = self.v1_norm.fold_into(self.v1_conv)

    def describe(self) -> ValueHeadDesc:
        v1_norm, v1_act = _norm_act_desc(self.v1_norm)
        return ValueHeadDesc(
            name=self.desc_name, v1_conv=_conv_desc(self.v1_conv), v1_norm=v1_norm, v1_activation=v1_act,
            v2_mul=_matmul_desc(self.v2), v2_bias=_bias_desc(self.v2), v2_activation=self.v2_activation,
            v3_mul=_matmul_desc(self.v3), v3_bias=_bias_desc(self.v3), sv3_mul=_matmul_desc(self.sv3),
            sv3_bias=_bias_desc(self.sv3), ownership_conv=_conv_desc(self.ownership_conv),
        )


# ---------------------------------------------------------------------------------------------
# The model


class KataGoModel(nn.Module):
    def __init__(self, desc: ModelDesc):
        super().__init__()
        self.name = desc.name
        self.version = desc.version
        self.postprocess = copy.deepcopy(desc.postprocess)
        self.meta_encoder_version = desc.meta_encoder_version
        self.prefer_pass_alive_under_suicide_rules = desc.prefer_pass_alive_under_suicide_rules
        self.num_input_channels = desc.num_input_channels
        self.num_input_global_channels = desc.num_input_global_channels
        self.trunk = Trunk(desc.trunk)
        self.policy_head = PolicyHead(desc.policy_head)
        self.value_head = ValueHead(desc.value_head)
        self.is_fused = False

    @classmethod
    def from_description(cls, desc: ModelDesc) -> "KataGoModel":
        return cls(desc)

    @classmethod
    def from_config(cls, config_name: str, seed: Optional[int] = None) -> "KataGoModel":
        """A randomly initialised net of a named architecture, e.g. ``b18c384nbt`` or ``b6c96-mish``."""
        from katacli.nn.configs import random_description

        return cls(random_description(config_name, seed=seed))

    @property
    def num_policy_channels(self) -> int:
        return self.policy_head.p2_conv.out_channels

    @property
    def needs_metadata(self) -> bool:
        return self.trunk.metadata_encoder is not None

    def to_description(self) -> ModelDesc:
        if self.is_fused:
            raise ValueError("cannot describe a fused model; export the unfused one")
        return ModelDesc(
            name=self.name, version=self.version, num_input_channels=self.num_input_channels,
            num_input_global_channels=self.num_input_global_channels, trunk=self.trunk.describe(),
            policy_head=self.policy_head.describe(), value_head=self.value_head.describe(),
            postprocess=copy.deepcopy(self.postprocess), meta_encoder_version=self.meta_encoder_version,
            prefer_pass_alive_under_suicide_rules=self.prefer_pass_alive_under_suicide_rules,
        )

    def fused(self) -> "KataGoModel":
        """An inference copy: batch norms folded into convolutions where possible, others precomputed."""
        model = copy.deepcopy(self).eval()
        for p in model.parameters():
            p.requires_grad_(False)
        model.trunk.fuse()
        model.policy_head.fuse()
        model.value_head.fuse()
        model.is_fused = True
        return model

    def forward(self, spatial: torch.Tensor, global_features: torch.Tensor, meta: Optional[torch.Tensor] = None,
                mask_full: Optional[bool] = None) -> ModelOutput:
        """Evaluate a batch. ``mask_full``: whether every position is on the board (None: check)."""
        info = MaskInfo.from_spatial(spatial, mask_full)
        trunk = self.trunk(spatial, global_features, meta, info)
        policy, policy_pass = self.policy_head(trunk, info)
        value, score_value, ownership = self.value_head(trunk, info)
        return ModelOutput(policy, policy_pass, value, score_value, ownership)


def load_model(path: Union[str, os.PathLike], contents=None) -> KataGoModel:
    """Read a KataGo model file into an (unfused) :class:`KataGoModel` in eval mode; ``contents``: its
    bytes from the start-up check, if kept (see :func:`~katacli.nn.model_file_reader.read_model_file`)."""
    from katacli.nn.model_file_reader import read_model_file

    return KataGoModel.from_description(read_model_file(path, contents)).eval()
