"""The PyTorch network itself: masking as KataGo does it, the fused inference copy, named configs."""
from __future__ import annotations


import pytest
import torch

from katacli.nn.configs import BASE_CONFIGS, config_of_name
from katacli.nn.description import Activation, GlobalPoolBlockDesc, NestedBottleneckBlockDesc
from katacli.nn.configs import random_description
from katacli.nn.torch_model import KataGoModel, load_model

from support.paths import SHARED_NETS, model_path
CLOSE = dict(rtol=1e-4, atol=2e-5)


def shared_model(name: str) -> KataGoModel:
    return load_model(model_path(name))


def board_inputs(batch: int, board_y: int, board_x: int, pad_y: int = 0, pad_x: int = 0, seed: int = 0):
    """Random sparse features of a board, optionally zero-padded below and to the right."""
    gen = torch.Generator().manual_seed(seed)
    spatial = torch.zeros(batch, 22, board_y + pad_y, board_x + pad_x)
    spatial[:, :, :board_y, :board_x] = (torch.rand(batch, 22, board_y, board_x, generator=gen) < 0.15).float()
    spatial[:, 0, :board_y, :board_x] = 1.0
    global_features = torch.rand(batch, 19, generator=gen) - 0.5
    return spatial, global_features


@pytest.mark.parametrize("name", SHARED_NETS)
def test_padded_board_equals_exact_board(name):
    """A 7x5 board inside a 9x9 input (masked, as KataGo pads into its NN buffers) gives the same outputs."""
    model = shared_model(name).fused()
    spatial, global_features = board_inputs(2, 7, 5, pad_y=2, pad_x=4)
    exact_spatial = spatial[:, :, :7, :5].contiguous()
    with torch.inference_mode():
        padded = model(spatial, global_features)
        exact = model(exact_spatial, global_features)
    torch.testing.assert_close(padded.policy[:, :, :7, :5], exact.policy, **CLOSE)
    torch.testing.assert_close(padded.ownership[:, :, :7, :5], exact.ownership, **CLOSE)
    for field in ("policy_pass", "value", "score_value"):
        torch.testing.assert_close(getattr(padded, field), getattr(exact, field), **CLOSE)


@pytest.mark.parametrize("name", SHARED_NETS)
def test_fused_matches_unfused(name):
    model = shared_model(name)
    fused = model.fused()
    assert fused.is_fused and not model.is_fused
    for pad in (0, 3):  # with and without off-board positions
        spatial, global_features = board_inputs(3, 6, 6, pad_y=pad, pad_x=pad, seed=pad)
        with torch.inference_mode():
            a, b = model(spatial, global_features), fused(spatial, global_features)
        for x, y in zip(a, b):
            torch.testing.assert_close(x, y, **CLOSE)


def test_mask_detection_matches_explicit_flag():
    model = shared_model("test-b4c32.bin.gz").fused()
    spatial, global_features = board_inputs(2, 5, 5)
    with torch.inference_mode():
        detected = model(spatial, global_features)
        explicit = model(spatial, global_features, mask_full=False)
    for x, y in zip(detected, explicit):
        torch.testing.assert_close(x, y, **CLOSE)


def test_batch_rows_are_independent():
    model = shared_model("test-b3c48nbt-mish-bng.bin.gz").fused()
    spatial, global_features = board_inputs(4, 9, 9, seed=3)
    with torch.inference_mode():
        batched = model(spatial, global_features)
        single = model(spatial[2:3], global_features[2:3])
    for x, y in zip(batched, single):
        torch.testing.assert_close(x[2:3], y, **CLOSE)


def test_output_shapes():
    model = shared_model("test-b3c48nbt.bin.gz")
    spatial, global_features = board_inputs(2, 13, 9)
    with torch.inference_mode():
        out = model(spatial, global_features)
    assert out.policy.shape == (2, 2, 13, 9)
    assert out.policy_pass.shape == (2, 2)
    assert out.value.shape == (2, 3)
    assert out.score_value.shape == (2, 6)
    assert out.ownership.shape == (2, 1, 13, 9)


@pytest.mark.parametrize(
    "name,blocks,trunk,nested",
    [("b6c96", 6, 96, False), ("b10c128", 10, 128, False), ("b15c192", 15, 192, False),
     ("b18c384nbt", 18, 384, True), ("b28c512nbt", 28, 512, True)],
)
def test_named_configs(name, blocks, trunk, nested):
    config = config_of_name(name)
    assert len(config.blocks) == blocks and config.trunk_channels == trunk
    assert all(kind.startswith("bottlenest2") for kind in config.blocks) == nested
    assert any(kind.endswith("gpool") for kind in config.blocks)


def test_config_description_structure():
    desc = random_description("b5c192nbt-mish", seed=1)
    assert desc.version == 15 and desc.trunk.num_blocks == 5
    gpool_blocks = [b for b in desc.iter_blocks() if isinstance(b, GlobalPoolBlockDesc)]
    assert len(gpool_blocks) == 2
    assert all(isinstance(b, NestedBottleneckBlockDesc) and len(b.blocks) == 2 for b in desc.trunk.blocks)
    assert {b.pre_activation.kind for b in desc.iter_blocks()} == {Activation.MISH}


def test_unknown_config_names():
    with pytest.raises(ValueError, match="unknown model config"):
        config_of_name("b7c77")
    with pytest.raises(ValueError, match="suffix"):
        config_of_name("b6c96-tanh")
    assert set(BASE_CONFIGS) >= {"b6c96", "b10c128", "b15c192", "b18c384nbt", "b28c512nbt"}


def test_config_model_is_trainable():
    model = KataGoModel.from_config("b4c32", seed=0).train()
    spatial, global_features = board_inputs(2, 7, 7)
    out = model(spatial, global_features)
    loss = sum(o.square().mean() for o in out)
    loss.backward()
    grads = [p.grad for p in model.parameters() if p.requires_grad]
    assert grads and all(g is not None for g in grads)
    assert any(g.abs().sum() > 0 for g in grads)


def test_same_seed_same_weights():
    assert random_description("b2c16", seed=11) == random_description("b2c16", seed=11)
    assert random_description("b2c16", seed=11) != random_description("b2c16", seed=12)
