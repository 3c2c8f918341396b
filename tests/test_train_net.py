"""The training network: its exported outputs equal the inference model's, its extra heads are
well-formed, and a net exported after training reads back (KataGo format, version 15) with
the same outputs as the training module."""
from __future__ import annotations

import gzip
from pathlib import Path

import pytest
import torch

from katacli.nn.torch_model import KataGoModel, load_model
from katacli.nn.model_file_reader import read_model_file
from katacli.train.batch import expand_rows
from katacli.train.exporting import architecture_name, export_name, export_to_models_dir, model_with_weights
from katacli.train.training_net import TrainingNet, UnsupportedModelError, score_belief_sizes
from katacli.train.synthetic import synthetic_rows

from support.paths import model_path

SHORT_OPTIMISTIC_CHANNEL = 5  # index of the exported optimistic policy in the training policy channels


def shared_model(name: str) -> KataGoModel:
    return load_model(model_path(name))


def batch(rows: int = 6, board: int = 9, pos_len: int | None = None, seed: int = 0):
    return expand_rows(synthetic_rows(rows, board, pos_len, seed=seed))


def assert_exported_outputs_match(net: TrainingNet, model: KataGoModel, b, atol: float = 1e-5) -> None:
    """The exported channels of the training outputs equal the inference model's raw outputs."""
    with torch.no_grad():
        train_out = net(b.spatial, b.global_inputs, mask_full=None)
        ref = model(b.spatial, b.global_inputs)
    n, _, h, w = b.spatial.shape
    mask = b.spatial[:, 0].reshape(n, h * w).bool()
    for train_channel, ref_channel in ((0, 0), (SHORT_OPTIMISTIC_CHANNEL, 1)):
        on_board = train_out.policy_logits[:, train_channel, : h * w][mask]
        assert torch.allclose(on_board, ref.policy[:, ref_channel].reshape(n, h * w)[mask], atol=atol)
        assert torch.allclose(train_out.policy_logits[:, train_channel, -1], ref.policy_pass[:, ref_channel], atol=atol)
    assert torch.allclose(train_out.value_logits, ref.value, atol=atol)
    assert torch.allclose(train_out.ownership_pretanh, ref.ownership, atol=atol)
    params = model.postprocess
    assert torch.allclose(train_out.score_mean, ref.score_value[:, 0] * params.score_mean_multiplier, atol=atol * 100)
    assert torch.allclose(train_out.lead, ref.score_value[:, 2] * params.lead_multiplier, atol=atol * 100)


def test_training_outputs_match_inference_model():
    model = KataGoModel.from_config("b2c16", seed=3)
    net = TrainingNet(model, seed=4).eval()
    assert_exported_outputs_match(net, model, batch(seed=1))


def test_smaller_boards_are_masked():
    model = KataGoModel.from_config("b2c16", seed=3)
    net = TrainingNet(model, seed=4).eval()
    b = batch(rows=4, board=7, pos_len=9, seed=2)
    assert_exported_outputs_match(net, model, b)
    with torch.no_grad():
        out = net(b.spatial, b.global_inputs)
    off_board = b.spatial[:, 0] == 0
    assert torch.all(out.policy_logits[:, :, :81].reshape(4, 6, 9, 9).permute(1, 0, 2, 3)[:, off_board] < -1000)
    for plane in (out.ownership_pretanh, out.scoring, out.futurepos_pretanh, out.seki_logits):
        assert torch.all(plane.permute(1, 0, 2, 3)[:, off_board] == 0)


def test_output_shapes_and_score_belief_is_a_distribution():
    net = TrainingNet(KataGoModel.from_config("b2c16", seed=3), seed=4)
    b = batch(rows=5)
    out = net(b.spatial, b.global_inputs)
    assert out.policy_logits.shape == (5, 6, 82)
    assert out.td_value_logits.shape == (5, 3, 3)
    assert out.futurepos_pretanh.shape == (5, 2, 9, 9)
    assert out.seki_logits.shape == (5, 4, 9, 9)
    assert out.score_belief_logprobs.shape == (5, 2 * (81 + 60))
    assert torch.allclose(out.score_belief_logprobs.exp().sum(dim=1), torch.ones(5), atol=1e-5)
    for positive in (out.score_stdev, out.variance_time, out.shortterm_value_error, out.shortterm_score_error):
        assert torch.all(positive > 0)


def test_every_parameter_gets_a_gradient():
    net = TrainingNet(KataGoModel.from_config("b2c16", seed=3), seed=4)
    b = batch(rows=3)
    out = net(b.spatial, b.global_inputs)
    sum(t.float().sum() for t in out).backward()
    missing = [name for name, p in net.named_parameters() if p.grad is None]
    assert missing == []


def test_seeded_heads_are_reproducible():
    a = TrainingNet(KataGoModel.from_config("b2c16", seed=3), seed=9)
    b = TrainingNet(KataGoModel.from_config("b2c16", seed=3), seed=9)
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name


def test_architecture_names_for_export():
    assert architecture_name(KataGoModel.from_config("b2c16", seed=0)) == "b2c16"
    assert architecture_name(KataGoModel.from_config("b5c192nbt", seed=0)) == "b5c192nbt"
    # every -model-kind is its own name (a resumed run is checked against it; exports must not collide)
    for kind in ("b4c32-mish", "b5c192nbt-silu", "b4c32"):
        assert architecture_name(KataGoModel.from_config(kind, seed=0)) == kind


def test_a_transformer_trunk_is_named_by_its_attention_blocks_and_heads():
    from katacli.nn.torch_model import load_model
    from support.paths import model_path

    model = load_model(model_path("b7c96h3tfrs-test5-cnorm.bin.gz"))
    assert architecture_name(model) == "b7c96h3tf"


def test_score_belief_sizes_follow_katago_configs():
    # (v2 channels) -> (hidden channels, mixtures) of KataGo's b2c16, b6c96, b10c128, b18c384nbt configs.
    assert score_belief_sizes(12) == (12, 2)
    assert score_belief_sizes(64) == (48, 4)
    assert score_belief_sizes(80) == (64, 6)
    assert score_belief_sizes(128) == (112, 8)


def test_shared_version15_and_transformer_nets_are_trainable():
    for name in ("test-b4c32.bin.gz", "b7c96h3tfrs-test5-cnorm.bin.gz"):
        model = shared_model(name)
        net = TrainingNet(model, seed=0).eval()
        assert_exported_outputs_match(net, model, batch(rows=3, seed=5), atol=1e-4)


def test_old_nets_are_refused_with_a_reason():
    with pytest.raises(UnsupportedModelError, match="version 8"):
        TrainingNet(shared_model("g170-b6c96-s175395328-d26788732.bin.gz"))


def test_exported_net_reads_back_with_identical_outputs(tmp_path):
    model = KataGoModel.from_config("b2c16", seed=3)
    net = TrainingNet(model, seed=4)
    # Move the weights away from their initial values, as training does.
    with torch.no_grad():
        for p in net.parameters():
            p.add_(torch.randn_like(p) * 0.01)
    name = export_name("kata-b2c16", 1234, 5678)
    path = export_to_models_dir(model_with_weights(net.model, None), str(tmp_path), name, {"samples": 1234})
    assert Path(path).name == "kata-b2c16-s1234-d5678.bin.gz"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kata-b2c16-s1234-d5678.bin.gz", "kata-b2c16-s1234-d5678.json"]
    desc = read_model_file(path)
    assert desc.version == 15 and desc.name == name
    assert gzip.decompress(Path(path).read_bytes()).startswith(name.encode() + b"\n15\n")
    reloaded = KataGoModel.from_description(desc).eval()
    assert_exported_outputs_match(net.eval(), reloaded, batch(seed=7))
