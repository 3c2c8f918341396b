"""Transformer and metadata-encoder paths that the shared nets do not exercise: learnable RoPE,
grouped-query attention, spatial trunk RMS norm, SGF metadata input. Each is checked against a
plain per-position numpy version of KataGo's formulas (eigenbackend.cpp) and by export round trips."""
from __future__ import annotations

import copy

import numpy as np
import pytest
import torch

from katacli.nn.configs import random_description
from katacli.nn.description import (
    Activation,
    ActivationDesc,
    MatBiasDesc,
    MatMulDesc,
    MetadataEncoderDesc,
    TransformerAttentionBlockDesc,
)
from katacli.nn.export import write_model_file
from katacli.nn.layers import MaskInfo
from katacli.nn.torch_model import AttentionBlock, KataGoModel
from katacli.nn.model_file_reader import read_model_file

from support.paths import TEST_TRANSFORMER, model_path


@pytest.fixture(scope="module")
def transformer_desc():
    return read_model_file(model_path(TEST_TRANSFORMER))


def gqa_learnable_rope_variant(block: TransformerAttentionBlockDesc, kv_heads: int, seed: int = 0):
    """The block with fewer key/value heads and learnable RoPE frequencies."""
    rng = np.random.default_rng(seed)
    block = copy.deepcopy(block)
    channels = block.q_proj.in_channels
    block.num_kv_heads = kv_heads
    block.learnable_rope = True
    block.rope_theta = 0.0  # only fixed RoPE stores a theta
    block.rope_name = block.name + ".rope_freqs"
    block.k_proj.weights = rng.normal(0, 0.2, (channels, kv_heads * block.q_head_dim)).astype(np.float32)
    block.v_proj.weights = rng.normal(0, 0.2, (channels, kv_heads * block.v_head_dim)).astype(np.float32)
    block.rope_freqs = rng.normal(0, 0.7, (kv_heads, block.q_head_dim // 2, 2)).astype(np.float32)
    return block


def naive_attention(block: TransformerAttentionBlockDesc, x: np.ndarray) -> np.ndarray:
    """One position at a time, as KataGo's Eigen backend computes an attention block (full board)."""
    c, h, w = x.shape
    seq = x.reshape(c, h * w).T.astype(np.float64)
    normed = seq / np.sqrt((seq**2).mean(axis=1, keepdims=True) + block.pre_norm.epsilon) * block.pre_norm.weight
    q, k, v = normed @ block.q_proj.weights, normed @ block.k_proj.weights, normed @ block.v_proj.weights
    dq, dv = block.q_head_dim, block.v_head_dim

    def rotate(data, heads):
        data = data.copy()
        for pos in range(h * w):
            py, px = divmod(pos, w)
            for head in range(heads):
                kv_head = head * block.num_kv_heads // heads
                for pair in range(dq // 2):
                    fx, fy = block.rope_freqs[kv_head, pair]
                    angle = px * fx + py * fy
                    i0 = head * dq + 2 * pair
                    x0, x1 = data[pos, i0], data[pos, i0 + 1]
                    data[pos, i0] = x0 * np.cos(angle) - x1 * np.sin(angle)
                    data[pos, i0 + 1] = x0 * np.sin(angle) + x1 * np.cos(angle)
        return data

    q, k = rotate(q, block.num_heads), rotate(k, block.num_kv_heads)
    group = block.num_heads // block.num_kv_heads
    heads_out = []
    for head in range(block.num_heads):
        kv_head = head // group
        scores = q[:, head * dq:(head + 1) * dq] @ k[:, kv_head * dq:(kv_head + 1) * dq].T / np.sqrt(dq)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        weights /= weights.sum(axis=1, keepdims=True)
        heads_out.append(weights @ v[:, kv_head * dv:(kv_head + 1) * dv])
    out = np.concatenate(heads_out, axis=1) @ block.out_proj.weights
    return x + out.T.reshape(c, h, w)


@pytest.mark.parametrize("kv_heads", [1, 3])
def test_learnable_rope_attention_matches_naive(transformer_desc, kv_heads):
    block_desc = gqa_learnable_rope_variant(transformer_desc.trunk.blocks[0], kv_heads)
    module = AttentionBlock(block_desc).eval()
    x = np.random.default_rng(1).normal(0, 1, (96, 5, 4)).astype(np.float32)
    with torch.inference_mode():
        got = module(torch.from_numpy(x)[None], MaskInfo(None, 5, 4, 1, torch.device("cpu"), torch.float32))[0].numpy()
    np.testing.assert_allclose(got, naive_attention(block_desc, x), atol=2e-4)


def test_fixed_rope_attention_matches_naive(transformer_desc):
    """The shared net's fixed RoPE, written out as per-position angles (KataGo's computeRopeCosSin)."""
    block_desc = copy.deepcopy(transformer_desc.trunk.blocks[0])
    pairs = block_desc.q_head_dim // 2
    per_axis, half_dim = pairs // 2, block_desc.q_head_dim / 2
    freqs = np.zeros((block_desc.num_kv_heads, pairs, 2), np.float64)
    for p in range(pairs):
        axis_pair = p if p < per_axis else p - per_axis
        freq = 1.0 / block_desc.rope_theta ** (2 * axis_pair / half_dim)
        freqs[:, p, 1 if p < per_axis else 0] = freq  # first half rotates with y, second with x
    naive_desc = copy.deepcopy(block_desc)
    naive_desc.rope_freqs = freqs
    module = AttentionBlock(block_desc).eval()
    x = np.random.default_rng(2).normal(0, 1, (96, 4, 6)).astype(np.float32)
    with torch.inference_mode():
        got = module(torch.from_numpy(x)[None], MaskInfo(None, 4, 6, 1, torch.device("cpu"), torch.float32))[0].numpy()
    np.testing.assert_allclose(got, naive_attention(naive_desc, x), atol=2e-4)


def padded_vs_exact(model: KataGoModel, meta=None):
    gen = torch.Generator().manual_seed(0)
    spatial = torch.zeros(2, 22, 9, 9)
    spatial[:, :, :6, :5] = (torch.rand(2, 22, 6, 5, generator=gen) < 0.2).float()
    spatial[:, 0, :6, :5] = 1.0
    global_features = torch.rand(2, 19, generator=gen) - 0.5
    with torch.inference_mode():
        padded = model(spatial, global_features, meta)
        exact = model(spatial[:, :, :6, :5].contiguous(), global_features, meta)
    torch.testing.assert_close(padded.policy[:, :, :6, :5], exact.policy, rtol=1e-4, atol=2e-5)
    torch.testing.assert_close(padded.value, exact.value, rtol=1e-4, atol=2e-5)
    torch.testing.assert_close(padded.score_value, exact.score_value, rtol=1e-4, atol=2e-5)
    return exact


def test_gqa_spatial_rmsnorm_variant_round_trip_and_masking(transformer_desc, tmp_path):
    desc = copy.deepcopy(transformer_desc)
    for i, block in enumerate(desc.trunk.blocks):
        if isinstance(block, TransformerAttentionBlockDesc):
            desc.trunk.blocks[i] = gqa_learnable_rope_variant(block, kv_heads=1, seed=i)
    desc.trunk.tip_norm.spatial = True
    desc.name = "b7c96-gqa-lrope-spatialnorm"
    path = tmp_path / "variant.bin.gz"
    write_model_file(desc, path)
    assert read_model_file(path) == desc
    model = KataGoModel(read_model_file(path)).eval()
    exact = padded_vs_exact(model)
    assert torch.isfinite(exact.policy).all()


def test_spatial_trunk_rmsnorm_formula(transformer_desc):
    tip = copy.deepcopy(transformer_desc.trunk.tip_norm)
    tip.spatial = True
    from katacli.nn.layers import TrunkTipRMSNorm

    module = TrunkTipRMSNorm("n", "a", tip.num_channels, tip.epsilon, True, Activation.IDENTITY)
    with torch.no_grad():
        module.gamma.copy_(torch.from_numpy(tip.gamma))
        module.beta.copy_(torch.from_numpy(tip.beta))
    x = np.random.default_rng(3).normal(0, 2, (1, 96, 3, 4)).astype(np.float32)
    expected = x / np.sqrt((x.astype(np.float64) ** 2).mean() + tip.epsilon) * tip.gamma[:, None, None] + tip.beta[:, None, None]
    with torch.inference_mode():
        got = module(torch.from_numpy(x), MaskInfo(None, 3, 4, 1, torch.device("cpu"), torch.float32)).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_metadata_encoder_net(tmp_path):
    """Human-style nets add an MLP of 192 SGF metadata inputs to the trunk's global bias."""
    rng = np.random.default_rng(4)
    desc = random_description("b2c16", seed=4, model_name="b2c16-meta")
    desc.meta_encoder_version = 1

    def mm(name, cin, cout):
        return MatMulDesc(name, rng.normal(0, 0.1, (cin, cout)).astype(np.float32))

    desc.trunk.metadata_encoder = MetadataEncoderDesc(
        "model.sgf_metadata_encoder", 192, mm("m.mul1", 192, 8), MatBiasDesc("m.bias1", np.zeros(8, np.float32)),
        ActivationDesc("m.act1", Activation.RELU), mm("m.mul2", 8, 8), MatBiasDesc("m.bias2", np.ones(8, np.float32)),
        ActivationDesc("m.act2", Activation.RELU), mm("m.mul3", 8, 16),
    )
    path = tmp_path / "meta.bin.gz"
    write_model_file(desc, path)
    loaded = read_model_file(path)
    assert loaded == desc and loaded.num_input_meta_channels == 192
    model = KataGoModel(loaded).eval()
    assert model.needs_metadata
    meta = torch.from_numpy(rng.random((2, 192)).astype(np.float32))
    with_meta = padded_vs_exact(model, meta)
    without = padded_vs_exact(model, torch.zeros(2, 192))
    assert not torch.allclose(with_meta.value, without.value)
    with pytest.raises(ValueError, match="metadata"):
        model(torch.ones(1, 22, 3, 3), torch.zeros(1, 19))



def test_random_description_with_a_metadata_encoder(tmp_path):
    """random_description(meta_encoder_version=1) gives a human-layout net; the rest of it is the seed's plain net."""
    plain = random_description("b2c16", seed=9)
    human = random_description("b2c16", seed=9, meta_encoder_version=1)
    assert human.meta_encoder_version == 1 and human.num_input_meta_channels == 192
    assert human.trunk.metadata_encoder.mul3.out_channels == human.trunk.trunk_channels
    stripped = copy.deepcopy(human)
    stripped.trunk.metadata_encoder, stripped.meta_encoder_version = None, 0
    assert stripped == plain
    path = tmp_path / "human.bin.gz"
    write_model_file(human, path)
    assert read_model_file(path) == human
    model = KataGoModel(read_model_file(path)).eval()
    zeros = torch.zeros(2, 192)
    ranks = zeros.clone()
    ranks[:, 6:40] = 1.0  # a rank thermometer
    assert not torch.allclose(padded_vs_exact(model, zeros).policy, padded_vs_exact(model, ranks).policy)
    with pytest.raises(ValueError, match="meta_encoder_version"):
        random_description("b2c16", seed=9, meta_encoder_version=7)