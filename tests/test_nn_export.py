"""Exporting networks to KataGo's model format: load -> export -> load gives the same
description and the same outputs, for the shared nets and for freshly built ones."""
from __future__ import annotations


import numpy as np
import pytest
import torch

from katacli.nn.configs import random_description
from katacli.nn.description import Activation
from katacli.nn.export import ModelExportError, export_model, model_file_bytes, write_model_file
from katacli.nn.torch_model import KataGoModel, load_model
from katacli.nn.model_file_reader import read_model_file

from support.paths import SHARED_NETS, model_path


def random_inputs(batch: int, height: int, width: int, seed: int = 0):
    """Plausible V7-like inputs: on-board mask, sparse binary planes, small globals."""
    gen = torch.Generator().manual_seed(seed)
    spatial = (torch.rand(batch, 22, height, width, generator=gen) < 0.15).float()
    spatial[:, 0] = 1.0
    global_features = torch.rand(batch, 19, generator=gen) - 0.5
    return spatial, global_features


def outputs(model: KataGoModel, spatial, global_features):
    with torch.inference_mode():
        return model(spatial, global_features)


def assert_identical(a, b):
    for x, y in zip(a, b):
        assert torch.equal(x, y)


@pytest.mark.parametrize("name", SHARED_NETS)
def test_shared_net_round_trip(tmp_path, name):
    original_desc = read_model_file(model_path(name))
    model = KataGoModel.from_description(original_desc).eval()
    path = tmp_path / "exported.bin.gz"
    written = export_model(model, path)
    assert written == original_desc
    assert read_model_file(path) == original_desc
    reloaded = load_model(path)
    spatial, global_features = random_inputs(2, 9, 7)
    assert_identical(outputs(model, spatial, global_features), outputs(reloaded, spatial, global_features))


@pytest.mark.parametrize("config", ["b2c16", "b4c32-mish", "b5c192nbt", "b6c96-silu"])
def test_config_net_round_trip(tmp_path, config):
    model = KataGoModel.from_config(config, seed=7).eval()
    path = tmp_path / f"{config}.bin.gz"
    desc = export_model(model, path)
    assert desc.version == 15
    reloaded = load_model(path)
    assert reloaded.to_description() == desc
    spatial, global_features = random_inputs(3, 8, 8, seed=1)
    assert_identical(outputs(model, spatial, global_features), outputs(reloaded, spatial, global_features))


def test_trained_weights_are_exported(tmp_path):
    """Changing parameters (as training does) changes what is written and read back."""
    model = KataGoModel.from_config("b2c16", seed=3)
    spatial, global_features = random_inputs(2, 5, 5)
    loss = sum(o.float().square().mean() for o in model(spatial, global_features))
    loss.backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p -= 0.01 * p.grad
    model.eval()
    path = tmp_path / "trained.bin"
    export_model(model, path)
    reloaded = load_model(path)
    assert_identical(outputs(model, spatial, global_features), outputs(reloaded, spatial, global_features))
    assert read_model_file(path) != random_description("b2c16", seed=3)


def test_export_as_version_17(tmp_path):
    model = load_model(model_path("test-b4c32.bin.gz"))
    path = tmp_path / "v17.bin.gz"
    export_model(model, path, version=17, name="b4c32-as-v17")
    desc = read_model_file(path)
    assert (desc.version, desc.name) == (17, "b4c32-as-v17")
    spatial, global_features = random_inputs(2, 6, 6)
    assert_identical(outputs(model, spatial, global_features), outputs(KataGoModel(desc).eval(), spatial, global_features))


def test_text_export(tmp_path):
    model = KataGoModel.from_config("b2c16", seed=5).eval()
    path = tmp_path / "model.txt.gz"
    desc = export_model(model, path)
    assert read_model_file(path) == desc


def test_binary_layout_is_katago_style():
    data = model_file_bytes(random_description("b2c16", seed=0))
    lines = data.split(b"\n")
    assert lines[:4] == [b"b2c16", b"15", b"22", b"19"]
    assert b"trunk\n2\n16\n16\n8\n8\n8\n0\n0\n0\n0\n0\n0\nmodel.conv_spatial\n3\n3\n22\n16\n1\n1\n@BIN@" in data
    assert data.count(b"@BIN@") > 40


def test_fused_model_cannot_be_exported(tmp_path):
    model = KataGoModel.from_config("b2c16", seed=0).fused()
    with pytest.raises(ValueError, match="fused"):
        export_model(model, tmp_path / "fused.bin.gz")


@pytest.mark.parametrize("bad_name", ["has space", "", "x" * 97, "dots.not.allowed"])
def test_invalid_model_names_are_refused(tmp_path, bad_name):
    desc = random_description("b2c16", seed=0)
    desc.name = bad_name
    with pytest.raises(ModelExportError, match="model name"):
        write_model_file(desc, tmp_path / "bad.bin.gz")


def test_version_limits_are_enforced(tmp_path):
    desc = random_description("b2c16-mish", seed=0)
    desc.version = 8  # no activation kinds, no pass hidden layer, 4 score outputs
    with pytest.raises(ModelExportError):
        write_model_file(desc, tmp_path / "old.bin.gz")
    transformer = read_model_file(model_path("b7c96h3tfrs-test5-cnorm.bin.gz"))
    transformer.version = 15
    with pytest.raises(ModelExportError, match="version >= 17"):
        write_model_file(transformer, tmp_path / "tf.bin.gz")


def test_unknown_suffix_is_refused(tmp_path):
    with pytest.raises(ModelExportError, match=r"\.bin\.gz"):
        write_model_file(random_description("b2c16", seed=0), tmp_path / "model.pt")


def test_non_finite_weights_are_refused(tmp_path):
    desc = random_description("b2c16", seed=0)
    desc.value_head.v3_bias.weights[1] = np.inf
    with pytest.raises(ModelExportError, match="NaN or infinite"):
        write_model_file(desc, tmp_path / "inf.bin.gz")


def test_activation_kinds_survive(tmp_path):
    desc = random_description("b4c32-mish", seed=0)
    write_model_file(desc, tmp_path / "m.bin")
    kinds = {b.pre_activation.kind for b in read_model_file(tmp_path / "m.bin").iter_blocks()}
    assert kinds == {Activation.MISH}
