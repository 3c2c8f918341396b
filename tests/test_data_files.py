"""Training-data files: the schema helpers, atomic .h5 writing and reading, npz <-> h5 conversion."""
from __future__ import annotations

import os
import random
import subprocess
import sys
import zipfile

import h5py
import numpy as np
import pytest

from katacli.data import (
    FIELDS,
    GLOBAL_TARGET_CHANNELS,
    GT,
    REQUIRED_FIELDS,
    SchemaError,
    TrainingDataError,
    TrainingDataWriter,
    TrainingFile,
    convert_file,
    convert_tree,
    empty_arrays,
    game_row_ranges,
    h5_to_npz,
    join_game_hash,
    list_training_files,
    load_training_arrays,
    npz_to_h5,
    pack_planes,
    pad_global_targets,
    read_npz,
    remove_stale_partials,
    split_game_hash,
    unpack_planes,
    validate_arrays,
    write_h5,
)
from katacli.data.files import atomic_output, partial_name
from katacli.data.schema import describe, score_distr_len

POS_LEN = 9


def fake_rows(num_rows: int, pos_len: int = POS_LEN, games: int = 2, seed: int = 0) -> dict:
    """Random arrays in the schema's dtypes and shapes; rows split into `games` runs of game hashes."""
    rng = np.random.default_rng(seed)
    arrays = empty_arrays(num_rows, pos_len)
    for name, array in arrays.items():
        if array.dtype == np.float32:
            array[...] = rng.normal(size=array.shape)
        else:
            info = np.iinfo(array.dtype)
            array[...] = rng.integers(info.min, info.max, size=array.shape, endpoint=True)
    hashes = arrays["globalTargetsNC"][:, GT.GAME_HASH:GT.GAME_HASH + 6]
    bounds = np.linspace(0, num_rows, games + 1).astype(int)
    for g in range(games):
        hashes[bounds[g]:bounds[g + 1]] = split_game_hash(1000 + g, 2000 + g)
    return arrays


def assert_same_arrays(a: dict, b: dict) -> None:
    assert set(a) == set(b)
    for name in a:
        assert a[name].dtype == b[name].dtype, name
        assert np.array_equal(a[name], b[name]), name


# ---------------------------------------------------------------------------- schema


def test_every_global_target_channel_is_named_once():
    assert sorted(GLOBAL_TARGET_CHANNELS) == list(range(80))
    names = [name for name, _ in GLOBAL_TARGET_CHANNELS.values()]
    assert len(set(names)) == len(names)
    assert GLOBAL_TARGET_CHANNELS[GT.ROW_WEIGHT][0] == "rowWeight"
    assert GLOBAL_TARGET_CHANNELS[GT.GAME_MODE][0] == "gameMode"


def test_shapes_match_katago_for_19x19():
    shapes = {name: f.row_shape(19) for name, f in FIELDS.items()}
    assert shapes["binaryInputNCHWPacked"] == (22, 46)
    assert shapes["policyTargetsNCMove"] == (2, 362)
    assert shapes["scoreDistrN"] == (842,)
    assert shapes["valueTargetsNCHW"] == (5, 19, 19)
    assert shapes["qValueTargetsNCMove"] == (3, 362)
    assert score_distr_len(9) == 2 * 81 + 120


@pytest.mark.parametrize("pos_len", [7, 9, 19])
def test_pack_unpack_round_trip(pos_len):
    rng = np.random.default_rng(pos_len)
    planes = (rng.random((3, 22, pos_len, pos_len)) < 0.3).astype(np.float32)
    packed = pack_planes(planes)
    assert packed.shape == (3, 22, (pos_len * pos_len + 7) // 8)
    assert np.array_equal(unpack_planes(packed, pos_len), planes)


def test_pack_bit_order_is_katagos_big_endian():
    planes = np.zeros((1, 1, 3, 3), np.float32)
    planes[0, 0, 0, 0] = 1  # first point -> most significant bit of byte 0
    planes[0, 0, 2, 2] = 1  # ninth point -> most significant bit of byte 1
    assert pack_planes(planes)[0, 0].tolist() == [0x80, 0x80]


def test_game_hash_split_and_join():
    for h0, h1 in [(0, 0), (2**64 - 1, 12345), (0xDEADBEEF12345678, 0x0123456789ABCDEF)]:
        channels = split_game_hash(h0, h1)
        assert all(0 <= c < 2**22 and float(np.float32(c)) == c for c in channels)
        assert join_game_hash(channels) == (h0, h1)


def test_game_row_ranges():
    arrays = fake_rows(10, games=3)
    assert game_row_ranges(arrays["globalTargetsNC"]).tolist() == [[0, 3], [3, 3], [6, 4]]
    assert game_row_ranges(np.zeros((0, 80), np.float32)).shape == (0, 2)


def test_validate_rejects_bad_layouts():
    arrays = fake_rows(4)
    assert validate_arrays(arrays) == (4, POS_LEN)
    with pytest.raises(SchemaError, match="missing"):
        validate_arrays({k: v for k, v in arrays.items() if k != "scoreDistrN"})
    with pytest.raises(SchemaError, match="dtype"):
        validate_arrays({**arrays, "scoreDistrN": arrays["scoreDistrN"].astype(np.int16)})
    with pytest.raises(SchemaError, match="shape"):
        validate_arrays({**arrays, "globalInputNC": arrays["globalInputNC"][:, :5]})
    with pytest.raises(SchemaError, match="unknown"):
        validate_arrays({**arrays, "extra": arrays["globalInputNC"]})


def test_describe_lists_every_dataset():
    text = describe()
    for name in FIELDS:
        assert name in text
    assert "rowWeight" in text


# ---------------------------------------------------------------------------- files


def test_an_h5_file_of_other_input_features_is_refused(tmp_path):
    # Its planes would be read as V7's: a net trained on it learns from misread inputs, silently.
    path = write_h5(tmp_path / "v99.h5", fake_rows(4, games=1), attrs={"inputs_version": 99})
    with pytest.raises(TrainingDataError, match=r"v99\.h5 holds V99 inputs; kata reads V7 only"):
        TrainingFile(path)


def test_h5_write_read_round_trip(tmp_path):
    arrays = fake_rows(37, games=3)
    path = write_h5(tmp_path / "a.h5", arrays, attrs={"model": "net-1"})
    with TrainingFile(path) as f:
        assert f.num_rows == 37 and f.pos_len == POS_LEN and f.num_games == 3
        assert f.attrs["model"] == "net-1" and f.attrs["num_rows"] == 37
        assert_same_arrays(f.read(), arrays)
        part = f.read(["globalTargetsNC"], start=5, stop=9)
        assert np.array_equal(part["globalTargetsNC"], arrays["globalTargetsNC"][5:9])
        games = list(f.games())
        assert [g["globalTargetsNC"].shape[0] for g in games] == f.game_rows[:, 1].tolist()
    with h5py.File(path) as f:
        ds = f["binaryInputNCHWPacked"]
        assert ds.compression == "gzip" and ds.chunks is not None
    assert_same_arrays(load_training_arrays(path), arrays)


def test_atomic_output_leaves_nothing_on_failure(tmp_path):
    final = tmp_path / "x.h5"
    with pytest.raises(RuntimeError):
        with atomic_output(final) as temp:
            temp.write_bytes(b"half")
            raise RuntimeError("killed")
    assert list(tmp_path.iterdir()) == []


def test_partials_are_ignored_and_stale_ones_removed(tmp_path):
    write_h5(tmp_path / "done.h5", fake_rows(3))
    mine = partial_name(tmp_path / "mine.h5")
    mine.write_bytes(b"in progress")
    dead = tmp_path / ".dead.h5.999999999.partial"  # a pid that cannot be running
    dead.write_bytes(b"left by a killed run")
    assert [p.name for p in list_training_files(tmp_path)] == ["done.h5"]
    assert remove_stale_partials(tmp_path) == [dead]
    assert mine.exists() and not dead.exists()


@pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="zombie detection reads /proc")
def test_a_zombie_writer_is_dead_and_a_running_one_alive(tmp_path):
    # A killed writer whose parent died too may stay a zombie for good (inits in containers do not
    # always reap): its pid still answers signals, but it will never finish its file.
    zombie = subprocess.Popen([sys.executable, "-c", "pass"])
    while open(f"/proc/{zombie.pid}/stat").read().rsplit(")", 1)[1].split()[0] != "Z":
        os.sched_yield()   # exited, not yet reaped: we do not wait() until the end
    running = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        left = tmp_path / f".game.sgf.{zombie.pid}.partial"
        busy = tmp_path / f".other.sgf.{running.pid}.partial"
        left.write_text("(;FF[4]")
        busy.write_text("(;FF[4]")
        assert remove_stale_partials(tmp_path) == [left]
        assert busy.exists()
    finally:
        running.kill()
        running.wait()
        zombie.wait()


def test_unreadable_files_give_clear_errors(tmp_path):
    bad = tmp_path / "bad.h5"
    bad.write_bytes(b"not hdf5")
    with pytest.raises(TrainingDataError, match="HDF5"):
        TrainingFile(bad)
    with pytest.raises(TrainingDataError, match="not found"):
        TrainingFile(tmp_path / "missing.h5")
    other = tmp_path / "other.h5"
    with h5py.File(other, "w") as f:
        f["x"] = np.zeros(3)
    with pytest.raises(TrainingDataError, match="not a katacli"):
        TrainingFile(other)
    bad_npz = tmp_path / "bad.npz"
    bad_npz.write_bytes(b"PK\x03\x04 broken")
    with pytest.raises(TrainingDataError):
        read_npz(bad_npz)


@pytest.mark.parametrize("suffix", [".npz", ".h5"])
def test_damage_anywhere_in_a_file_is_a_clear_error(tmp_path, suffix):
    """Bytes overwritten all through a file (a bad disk, a copy cut and patched): reading it either works or
    raises TrainingDataError naming it -- never zlib.error (a broken deflate stream in an npz) or h5py's
    KeyError ("Unable to synchronously open object", a broken HDF5 header), which ended kata convert and
    kata train in tracebacks."""
    arrays = fake_rows(40, games=3, seed=11)
    pristine = tmp_path / f"pristine{suffix}"
    if suffix == ".npz":
        np.savez_compressed(pristine, **arrays)
    else:
        write_h5(pristine, arrays)
    data = pristine.read_bytes()
    damaged, errors = tmp_path / f"damaged{suffix}", 0
    for offset in range(0, len(data) - 16, 211):
        damaged.write_bytes(data[:offset] + b"\xff" * 16 + data[offset + 16:])
        try:
            load_training_arrays(damaged)
        except TrainingDataError as exc:
            errors += 1
            assert str(damaged) in str(exc)   # the error names the file
    assert errors > 0


# ---------------------------------------------------------------------------- conversion


def test_npz_to_h5_to_npz_is_lossless(tmp_path):
    arrays = fake_rows(25, games=4, seed=3)
    src = tmp_path / "katago.npz"
    np.savez_compressed(src, **arrays)  # what KataGo's shuffler writes
    h5 = npz_to_h5(src)
    assert h5 == tmp_path / "katago.h5"
    with TrainingFile(h5) as f:
        assert f.attrs["source"] == "katago.npz" and f.num_games == 4
    back = h5_to_npz(h5, tmp_path / "back.npz")
    with zipfile.ZipFile(back) as z:
        assert sorted(n[:-4] for n in z.namelist()) == sorted(arrays)  # only KataGo's keys
    assert_same_arrays(read_npz(back), arrays)


def test_h5_to_npz_to_h5_is_lossless(tmp_path):
    arrays = fake_rows(19, games=2, seed=5)
    first = write_h5(tmp_path / "a.h5", arrays)
    second = npz_to_h5(h5_to_npz(first), tmp_path / "b.h5")
    with TrainingFile(first) as a, TrainingFile(second) as b:
        assert_same_arrays(a.read(), b.read())
        assert np.array_equal(a.game_rows, b.game_rows)


def test_optional_metadata_input_survives_conversion(tmp_path):
    arrays = fake_rows(6)
    arrays["metadataInputNC"] = np.random.default_rng(1).normal(size=(6, 192)).astype(np.float32)
    np.savez_compressed(tmp_path / "meta.npz", **arrays)
    h5 = npz_to_h5(tmp_path / "meta.npz")
    assert_same_arrays(load_training_arrays(h5_to_npz(h5, tmp_path / "meta2.npz")), arrays)


@pytest.mark.subprocess
def test_convert_command(tmp_path):
    arrays = fake_rows(8)
    src_dir = tmp_path / "katago" / "sub"
    src_dir.mkdir(parents=True)
    np.savez_compressed(src_dir / "f.npz", **arrays)
    from support.selfplay import subprocess_env
    run = lambda *args: subprocess.run([sys.executable, "-m", "katacli.cli", "convert", *args],  # noqa: E731
                                       capture_output=True, text=True, timeout=120, env=subprocess_env())
    result = run(str(tmp_path / "katago"), str(tmp_path / "out"))
    assert result.returncode == 0, result.stderr
    assert_same_arrays(load_training_arrays(tmp_path / "out" / "sub" / "f.h5"), arrays)
    # A folder of .h5 files converts to .npz, the direction its files imply (it converted nothing, exit 0)
    result = run(str(tmp_path / "out"), str(tmp_path / "back"))
    assert result.returncode == 0, result.stderr
    assert_same_arrays(load_training_arrays(tmp_path / "back" / "sub" / "f.npz"), arrays)
    result = run(str(tmp_path / "out"), "--to", "h5")   # nothing of the other kind: an error, not "converted 0"
    assert result.returncode == 1 and "no .npz files to convert" in result.stderr
    result = run(str(tmp_path / "out" / "sub" / "f.h5"))
    assert result.returncode == 0 and (tmp_path / "out" / "sub" / "f.npz").exists()
    result = run(str(tmp_path / "nothing.h5"))
    assert result.returncode == 1 and "does not exist" in result.stderr and "Traceback" not in result.stderr
    (tmp_path / "junk.h5").write_bytes(b"junk")
    result = run(str(tmp_path / "junk.h5"))
    assert result.returncode == 1 and "error:" in result.stderr and "Traceback" not in result.stderr
    # A folder with one unreadable file among good ones: the others are converted, the bad one named, status 1.
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for name in ("a", "c"):
        np.savez_compressed(mixed / f"{name}.npz", **arrays)
    (mixed / "b.npz").write_bytes((mixed / "a.npz").read_bytes()[:300])
    result = run(str(mixed), str(tmp_path / "mixed-out"))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert sorted(p.name for p in (tmp_path / "mixed-out").iterdir()) == ["a.h5", "c.h5"]
    assert "b.npz" in result.stderr and "1 file(s) could not be read" in result.stderr


def test_convert_tree_reports_progress_and_skips_what_it_cannot_read(tmp_path):
    arrays = fake_rows(6)
    for name in ("a", "b", "c"):
        np.savez_compressed(tmp_path / f"{name}.npz", **arrays)
    (tmp_path / "b.npz").write_bytes(b"PK\x03\x04 broken")
    steps, skipped = [], []
    written = convert_tree(tmp_path, tmp_path / "out", ".h5", on_error=lambda path, exc: skipped.append(path.name),
                           on_progress=lambda done, total: steps.append((done, total)))
    assert [p.name for p in written] == ["a.h5", "c.h5"] and skipped == ["b.npz"]
    assert steps == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(TrainingDataError, match="b.npz"):   # without on_error the first bad file stops it
        convert_tree(tmp_path, tmp_path / "out2", ".h5")


def test_convert_file_never_writes_over_its_input_or_under_the_other_formats_name(tmp_path):
    h5 = write_h5(tmp_path / "a.h5", fake_rows(4))
    before = h5.read_bytes()
    for dst in ("a.h5", "out.h5", "out.txt"):   # the same file, or npz bytes under a wrong suffix
        with pytest.raises(TrainingDataError, match=r"\.h5 file converts to \.npz"):
            convert_file(h5, tmp_path / dst)
        assert not (tmp_path / "out.h5").exists() and not (tmp_path / "out.txt").exists()
    assert h5.read_bytes() == before
    (tmp_path / "junk.npz").write_bytes(b"not a zip at all")   # numpy would advise unpickling it
    with pytest.raises(TrainingDataError, match=r"junk\.npz as npz: not an npz \(zip\) file$"):
        convert_file(tmp_path / "junk.npz")
    (tmp_path / "linked.npz").symlink_to(h5)   # the right suffix, but the input itself
    with pytest.raises(TrainingDataError, match="is the input file"):
        convert_file(h5, tmp_path / "linked.npz")
    assert h5.read_bytes() == before
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    assert convert_file(h5, out_dir) == out_dir / "a.npz"   # a directory takes the converted name
    assert_same_arrays(load_training_arrays(out_dir / "a.npz"), load_training_arrays(h5))


# ---------------------------------------------------------------------------- writer


def test_writer_cuts_files_between_whole_games(tmp_path):
    writer = TrainingDataWriter(tmp_path, POS_LEN, max_rows_per_file=10, rng=random.Random(1),
                                attrs={"model": "m"})
    games = [fake_rows(n, games=1, seed=i) for i, n in enumerate([4, 4, 4, 7, 2])]
    for i, g in enumerate(games):
        g["globalTargetsNC"][:, GT.GAME_HASH:GT.GAME_HASH + 6] = split_game_hash(i, i)
    written = [writer.add_game(g) for g in games]
    # 12 rows >= 10 after the third game; the last two (9 rows) wait for close().
    assert [w is not None for w in written] == [False, False, True, False, False]
    assert writer.close() is not None
    files = list_training_files(tmp_path)
    assert len(files) == 2 and writer.rows_written == 21 and writer.games_written == 5
    counts = []
    for path in files:
        with TrainingFile(path) as f:
            counts += f.game_rows[:, 1].tolist()
            assert f.attrs["model"] == "m"
    assert sorted(counts) == sorted([4, 4, 4, 7, 2])


def test_first_file_is_cut_early_at_random(tmp_path):
    sizes = set()
    for seed in range(6):
        writer = TrainingDataWriter(tmp_path / str(seed), POS_LEN, max_rows_per_file=100,
                                    first_file_rand_min_prop=0.15, rng=random.Random(seed))
        rows = 0
        while writer.add_game(fake_rows(5, games=1)) is None:
            rows += 5
        sizes.add(rows + 5)
        assert 15 <= rows + 5 <= 100
    assert len(sizes) > 1


def test_required_fields_are_katagos():
    # As KataGo's shuffler: six arrays always, q-values and metadata only in some files.
    assert REQUIRED_FIELDS == ("binaryInputNCHWPacked", "globalInputNC", "policyTargetsNCMove", "globalTargetsNC",
                               "scoreDistrN", "valueTargetsNCHW")
    assert not FIELDS["metadataInputNC"].required and not FIELDS["qValueTargetsNCMove"].required


def test_older_katago_files_convert_as_they_are(tmp_path):
    """Data format version 2: 64 global target channels and no q-values."""
    arrays = fake_rows(12, games=2, seed=9)
    del arrays["qValueTargetsNCMove"]
    arrays["globalTargetsNC"] = np.ascontiguousarray(arrays["globalTargetsNC"][:, :64])
    np.savez_compressed(tmp_path / "v2.npz", **arrays)
    h5 = npz_to_h5(tmp_path / "v2.npz")
    with TrainingFile(h5) as f:
        assert f.num_games == 2 and "qValueTargetsNCMove" not in f.fields
    back = read_npz(h5_to_npz(h5, tmp_path / "back.npz"))
    assert_same_arrays(back, arrays)
    padded = pad_global_targets(back["globalTargetsNC"])
    assert padded.shape == (12, 80) and (padded[:, 64:] == 0).all()
    assert np.array_equal(padded[:, :64], arrays["globalTargetsNC"])


def test_partial_name_is_hidden_and_tagged(tmp_path):
    name = partial_name(tmp_path / "abc.h5").name
    assert name.startswith(".abc.h5.") and name.endswith(f"{os.getpid()}.partial")
