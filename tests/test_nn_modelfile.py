"""Reading KataGo model files: every shared model loads with the right structure, every
format variant reads back identically, and broken files fail with a clear ModelFileError."""
from __future__ import annotations

import gzip
import os
import random
import re
import zlib
from pathlib import Path

import numpy as np
import pytest

from katacli.nn.description import (
    Activation,
    GlobalPoolBlockDesc,
    NestedBottleneckBlockDesc,
    NormKind,
    OrdinaryBlockDesc,
    RMSNormDesc,
    TransformerAttentionBlockDesc,
    TransformerFFNBlockDesc,
)
from katacli.nn.export import model_file_bytes, write_model_file
from katacli.nn.model_file_reader import ModelFileError, check_model_file, parse_model_bytes, read_model_file

from support.paths import G170_B6 as G170
from support.paths import MODELS, SHARED_NETS, model_path, require
from support.paths import TEST_B4 as PLAIN
from support.paths import TEST_NBT as NBT
from support.paths import TEST_NBT_MISH as NBT_MISH
from support.paths import TEST_TRANSFORMER as TRANSFORMER

require(MODELS, module=True)
pytestmark = pytest.mark.needs_shared

ALL_MODELS = SHARED_NETS

O, G, N, A, F = "ordinary", "gpool", "nested", "attention", "ffn"
KIND_NAMES = {
    OrdinaryBlockDesc: O,
    GlobalPoolBlockDesc: G,
    NestedBottleneckBlockDesc: N,
    TransformerAttentionBlockDesc: A,
    TransformerFFNBlockDesc: F,
}

# file, version, trunk channels, mid channels, gpool channels, block kinds, policy channels,
# score-value channels, activation, norm kind of the first block's pre-norm, initial conv kernel
STRUCTURE = [
    (G170, 8, 96, 96, 32, [O, O, G, O, G, O], 1, 4, Activation.RELU, NormKind.FIXUP, 5),
    (NBT, 15, 48, 24, 16, [N, N, N], 2, 6, Activation.RELU, NormKind.FIXUP, 3),
    (NBT_MISH, 15, 48, 24, 16, [N, N, N], 2, 6, Activation.MISH, NormKind.BATCHNORM_GAMMA, 3),
    (PLAIN, 15, 32, 32, 16, [O, O, G, O], 2, 6, Activation.RELU, NormKind.FIXUP, 3),
    (TRANSFORMER, 17, 96, 96, 32, [A, F] * 7, 2, 6, Activation.SILU, None, 3),
]


@pytest.fixture(scope="module")
def descs():
    return {name: read_model_file(model_path(name)) for name in ALL_MODELS}


@pytest.mark.parametrize(
    "name,version,trunk,mid,gpool,kinds,policy_channels,score_channels,activation,norm_kind,kernel", STRUCTURE
)
def test_shared_model_structure(descs, name, version, trunk, mid, gpool, kinds, policy_channels, score_channels,
                                activation, norm_kind, kernel):
    desc = descs[name]
    assert desc.name == name.removesuffix(".bin.gz")
    assert desc.version == version
    assert (desc.num_input_channels, desc.num_input_global_channels) == (22, 19)
    assert desc.trunk.trunk_channels == trunk
    assert desc.trunk.mid_channels == mid
    assert desc.trunk.gpool_channels == gpool
    assert [KIND_NAMES[type(b)] for b in desc.trunk.blocks] == kinds
    assert desc.trunk.num_blocks == len(kinds)
    assert desc.num_policy_channels == policy_channels
    assert desc.num_score_value_channels == score_channels
    assert desc.num_value_channels == 3 and desc.num_ownership_channels == 1
    assert desc.trunk.initial_conv.weights.shape == (trunk, 22, kernel, kernel)
    assert desc.trunk.tip_activation.kind == activation
    assert desc.has_score_belief is False
    first = desc.trunk.blocks[0]
    if norm_kind is not None:
        assert first.pre_norm.kind == norm_kind
        assert first.pre_norm.num_channels == trunk
    # The pass logit has its own hidden layer exactly from version 15 on.
    assert (desc.policy_head.gpool_to_pass2 is not None) == (version >= 15)


def test_nested_bottleneck_inner_blocks(descs):
    blocks = descs[NBT].trunk.blocks
    assert [[KIND_NAMES[type(inner)] for inner in b.blocks] for b in blocks] == [[O, O], [G, O], [O, O]]
    for block in blocks:
        assert block.pre_conv.weights.shape == (24, 48, 1, 1)
        assert block.post_conv.weights.shape == (48, 24, 1, 1)
    gpool = blocks[1].blocks[0]
    assert gpool.regular_conv.out_channels == 8 and gpool.gpool_conv.out_channels == 16
    assert gpool.gpool_to_bias.weights.shape == (3 * 16, 8)
    assert len(list(descs[NBT].iter_blocks())) == 9


def test_transformer_model_details(descs):
    desc = descs[TRANSFORMER]
    attention = desc.trunk.blocks[0]
    assert (attention.num_heads, attention.num_kv_heads, attention.q_head_dim, attention.v_head_dim) == (3, 3, 32, 32)
    assert attention.use_rope and not attention.learnable_rope and attention.rope_theta == 100.0
    ffn = desc.trunk.blocks[1]
    assert ffn.use_swiglu and ffn.ffn_channels == 256
    assert isinstance(desc.trunk.tip_norm, RMSNormDesc) and not desc.trunk.tip_norm.spatial
    assert desc.postprocess.shortterm_score_error_multiplier == 150.0


def test_old_version_uses_default_postprocess_constants(descs):
    post = descs[G170].postprocess
    assert (post.score_mean_multiplier, post.lead_multiplier, post.variance_time_multiplier) == (20.0, 20.0, 40.0)
    assert post.shortterm_score_error_multiplier == 30.0


def test_weights_layout(descs):
    """Conv weights are [out, in, ky, kx]; file order is y, x, in, out."""
    raw = gzip.decompress(model_path(PLAIN).read_bytes())
    start = raw.index(b"@BIN@") + 5
    file_order = np.frombuffer(raw, "<f4", count=3 * 3 * 22 * 32, offset=start).reshape(3, 3, 22, 32)
    weights = descs[PLAIN].trunk.initial_conv.weights
    assert np.array_equal(weights, file_order.transpose(3, 2, 0, 1))


@pytest.mark.parametrize("name", ALL_MODELS)
def test_rewrite_is_byte_identical(descs, name):
    """Writing a loaded model reproduces KataGo's own exported file exactly."""
    assert model_file_bytes(descs[name]) == gzip.decompress(model_path(name).read_bytes())


@pytest.mark.parametrize("suffix", [".bin", ".txt", ".txt.gz", ".bin.gz"])
def test_every_file_format_reads_back(descs, tmp_path, suffix):
    desc = descs[PLAIN]
    path = tmp_path / f"model{suffix}"
    write_model_file(desc, path)
    assert read_model_file(path) == desc


@pytest.mark.parametrize("binary", [True, False])
def test_bare_gz_extension_tries_both_formats(descs, tmp_path, binary):
    desc = descs[NBT]
    path = tmp_path / "model.gz"
    path.write_bytes(gzip.compress(model_file_bytes(desc, binary_floats=binary)))
    assert read_model_file(path) == desc


@pytest.mark.parametrize("suffix", [".bin", ".txt.gz", ".gz"])
def test_a_checked_files_kept_contents_are_read_once(descs, tmp_path, suffix):
    """check_model_file(keep_contents=True) keeps the inflated file for one read_model_file, which gives
    what reading the file gives and releases them; a second read reads the file."""
    desc = descs[NBT]
    path = tmp_path / f"model{suffix}"
    if suffix == ".gz":  # either format: the binary one is tried first
        path.write_bytes(gzip.compress(model_file_bytes(desc)))
    else:
        write_model_file(desc, path)
    assert check_model_file(path).contents is None
    header = check_model_file(path, keep_contents=True)
    assert read_model_file(path, header.contents) == desc
    assert header.contents.take() is None
    assert read_model_file(path, header.contents) == desc


def test_description_equality_sees_weight_changes(descs):
    desc = read_model_file(model_path(PLAIN))
    assert desc == descs[PLAIN]
    desc.value_head.v3_bias.weights[0] += 1.0
    assert desc != descs[PLAIN]


# ---------------------------------------------------------------------------------------------
# Broken files


@pytest.fixture(scope="module")
def plain_bytes() -> bytes:
    return gzip.decompress(model_path(PLAIN).read_bytes())


def write_bin(tmp_path: Path, data: bytes, name: str = "broken.bin") -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def expect_error(path: Path, *fragments: str) -> str:
    with pytest.raises(ModelFileError) as info:
        read_model_file(path)
    message = str(info.value)
    assert str(path) in message
    for fragment in fragments:
        assert re.search(fragment, message), f"{fragment!r} not in {message!r}"
    return message


def test_missing_file(tmp_path):
    expect_error(tmp_path / "nope.bin.gz", "cannot read")


def test_wrong_extension(tmp_path):
    expect_error(write_bin(tmp_path, b"x", "model.zip"), r"\.bin\.gz")


def test_truncated_gzip(tmp_path):
    compressed = model_path(PLAIN).read_bytes()
    expect_error(write_bin(tmp_path, compressed[: len(compressed) // 2], "cut.bin.gz"), "gzip")


def test_not_gzip(tmp_path):
    expect_error(write_bin(tmp_path, b"definitely not gzip data", "fake.bin.gz"), "gzip")


def test_truncated_in_weights(tmp_path, plain_bytes):
    message = expect_error(write_bin(tmp_path, plain_bytes[: len(plain_bytes) // 2]), "model version 15", "truncated")
    assert "expected" in message and "floats" in message


def test_truncated_in_header(tmp_path, plain_bytes):
    expect_error(write_bin(tmp_path, plain_bytes[:40]), "model version 15", "end of file")


def test_empty_file(tmp_path):
    expect_error(write_bin(tmp_path, b""), "model version unknown", "model name")


@pytest.mark.parametrize("version", [b"7", b"3", b"18", b"99"])
def test_unsupported_version(tmp_path, plain_bytes, version):
    data = plain_bytes.replace(b"test-b4c32\n15\n", b"test-b4c32\n" + version + b"\n", 1)
    expect_error(write_bin(tmp_path, data), "unsupported model version " + version.decode())


def test_non_numeric_version(tmp_path, plain_bytes):
    data = plain_bytes.replace(b"test-b4c32\n15\n", b"test-b4c32\nfifteen\n", 1)
    expect_error(write_bin(tmp_path, data), "model version", "integer", "fifteen")


def test_unknown_block_kind(tmp_path, plain_bytes):
    data = plain_bytes.replace(b"ordinary_block", b"mystery_block", 1)
    expect_error(write_bin(tmp_path, data), "model version 15", "unknown block kind 'mystery_block'")


def test_channel_mismatch(tmp_path, plain_bytes):
    # Trunk header: blocks, trunk, mid, regular, dilated, gpool channels; claim 40 trunk channels.
    data = plain_bytes.replace(b"trunk\n4\n32\n", b"trunk\n4\n40\n", 1)
    expect_error(write_bin(tmp_path, data), "model version 15", r"trunk channels \(40\)")


def test_nan_weight(tmp_path, plain_bytes):
    start = plain_bytes.index(b"@BIN@") + 5
    data = plain_bytes[:start] + np.float32(np.nan).tobytes() + plain_bytes[start + 4 :]
    expect_error(write_bin(tmp_path, data), "model.conv_spatial", "NaN")


def test_unsupported_option_slot(tmp_path, plain_bytes):
    data = plain_bytes.replace(b"150.0\n0\n0\n", b"150.0\n0\n3\n", 1)
    expect_error(write_bin(tmp_path, data), "model version 15", "expected 0 or 1")


def test_text_model_named_binary(tmp_path, descs):
    text = model_file_bytes(descs[PLAIN], binary_floats=False)
    expect_error(write_bin(tmp_path, text), "@BIN@")


def test_binary_model_named_text(tmp_path, plain_bytes):
    expect_error(write_bin(tmp_path, plain_bytes, "model.txt"), "float")


def test_every_truncation_point_fails_cleanly(plain_bytes):
    """Cutting the file anywhere gives a ModelFileError, never another exception."""
    cuts = sorted(set(list(range(0, 400, 7)) + list(range(400, len(plain_bytes), len(plain_bytes) // 60))))
    for cut in cuts:
        with pytest.raises(ModelFileError):
            parse_model_bytes(plain_bytes[:cut], binary_floats=True, source="cut")


def test_corrupted_header_bytes_fail_cleanly(plain_bytes):
    """Random damage to the text header parses or raises ModelFileError, nothing else."""
    rng = random.Random(1234)
    header_end = plain_bytes.index(b"@BIN@")
    for _ in range(200):
        data = bytearray(plain_bytes)
        for _ in range(rng.randint(1, 3)):
            data[rng.randrange(header_end)] = rng.choice(b"0123456789 \n@xyz-.\x00\xff")
        try:
            parse_model_bytes(bytes(data), binary_floats=True, source="fuzz")
        except ModelFileError:
            pass


# ---------------------------------------------------------------------------------------------
# The quick check commands run before they start serving


def test_check_model_file_reads_the_header_of_every_format(tmp_path, descs):
    for suffix in (".bin.gz", ".txt.gz", ".bin", ".txt"):
        path = tmp_path / f"model{suffix}"
        write_model_file(descs[PLAIN], path)
        header = check_model_file(path)
        assert (header.name, header.version, header.path) == (descs[PLAIN].name, 15, str(path))


@pytest.mark.parametrize("damage, fragment", [
    ("missing", "not found"),
    ("directory", "directory"),
    ("truncated gzip", "truncated"),
    ("flipped byte", "corrupt"),
    ("not gzip", "gzip"),
    ("empty", "truncated"),
    ("not a model", "not a KataGo model file"),
    ("future version", "unsupported model version 99"),
    ("wrong name", r"\.bin\.gz"),
])
def test_check_model_file_refuses_damage_in_one_line(tmp_path, plain_bytes, damage, fragment):
    compressed = gzip.compress(plain_bytes)
    middle = len(compressed) // 2
    contents = {
        "truncated gzip": compressed[:middle],
        "flipped byte": compressed[:middle] + bytes([compressed[middle] ^ 0xFF]) + compressed[middle + 1:],
        "not gzip": b"definitely not gzip data",
        "empty": b"",
        "not a model": gzip.compress(bytes(range(256)) * 4),
        "future version": gzip.compress(plain_bytes.replace(b"\n15\n", b"\n99\n", 1)),
        "wrong name": compressed,
    }
    path = tmp_path / ("model.zip" if damage == "wrong name" else "model.bin.gz")
    if damage == "directory":
        path.mkdir()
    elif damage in contents:
        path.write_bytes(contents[damage])
    with pytest.raises(ModelFileError) as caught:
        check_model_file(path)
    message = str(caught.value)
    assert re.search(fragment, message) and "\n" not in message, message
    assert str(path) in message


BODY_CUTS = (0.2, 0.6, 0.95)  # where a whole, re-gzipped copy of a net is cut: all inside its weights


@pytest.mark.parametrize("suffix", [".bin.gz", ".txt.gz"])
@pytest.mark.parametrize("cut", BODY_CUTS)
def test_check_model_file_reads_the_whole_body(tmp_path, descs, suffix, cut):
    """A net cut short inside its weights and gzipped again has a whole gzip stream and a valid header:
    the check still refuses it, naming the layer, as loading it would."""
    whole = tmp_path / f"whole{suffix}"
    write_model_file(descs[PLAIN], whole)
    raw = gzip.decompress(whole.read_bytes())
    cut_path = tmp_path / f"cut{suffix}"
    cut_path.write_bytes(gzip.compress(raw[: int(len(raw) * cut)]))
    assert check_model_file(whole).name == descs[PLAIN].name
    with pytest.raises(ModelFileError) as caught:
        check_model_file(cut_path)
    with pytest.raises(ModelFileError) as loading:
        read_model_file(cut_path)
    assert str(caught.value) == str(loading.value) and "truncated" in str(caught.value)


def test_check_model_file_refuses_a_nan_weight(tmp_path, plain_bytes):
    marker = plain_bytes.rindex(b"@BIN@") + len(b"@BIN@")
    path = tmp_path / "nan.bin.gz"
    path.write_bytes(gzip.compress(plain_bytes[:marker] + np.float32("nan").tobytes() + plain_bytes[marker + 4:]))
    with pytest.raises(ModelFileError, match="NaN or infinite weight"):
        check_model_file(path)


def test_check_model_file_keeps_little_in_memory_for_a_gzip_bomb(tmp_path):
    """200 MB of zeros compress to 200 kB: the check reads it through in bounded pieces and then
    finds no model header, without ever holding the 200 MB."""
    import tracemalloc

    path = tmp_path / "bomb.bin.gz"
    zeros = bytes(1 << 20)
    compressor = zlib.compressobj(wbits=zlib.MAX_WBITS | 16)
    with open(path, "wb") as f:
        for _ in range(200):
            f.write(compressor.compress(zeros))
        f.write(compressor.flush())
    tracemalloc.start()
    try:
        with pytest.raises(ModelFileError, match="not a KataGo model file"):
            check_model_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 << 20


def test_check_model_file_refuses_a_pipe(tmp_path):
    fifo = tmp_path / "model.bin.gz"
    os.mkfifo(fifo)
    with pytest.raises(ModelFileError, match="not a regular file"):
        check_model_file(fifo)


def test_check_model_file_accepts_concatenated_gzip_members(tmp_path, plain_bytes):
    """gzip (and KataGo's reader) accept a file of several members; so does the check."""
    half = len(plain_bytes) // 2
    path = tmp_path / "model.bin.gz"
    path.write_bytes(gzip.compress(plain_bytes[:half]) + gzip.compress(plain_bytes[half:]))
    assert check_model_file(path).version == 15
