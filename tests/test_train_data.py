"""Training data: reading npz/HDF5 rows, the power-law window, the shuffled stream (determinism,
resume, DDP slices) and augmentation (symmetries, history dropout)."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from katacli.nn.symmetry import apply_symmetry
from katacli.train import rows as R
from katacli.train.batch import apply_batch_symmetry, drop_history, expand_rows, history_keep_mask
from katacli.train.synthetic import synthetic_rows, write_synthetic_files
from katacli.train.window import DataStream, NoTrainingDataError, choose_window, DataFile, desired_window_rows

BOARD = 9


def stream(data_dir, batch=8, world=1, rank=0, seed=7, per_epoch=10**9, min_rows=10**9, **kw) -> DataStream:
    return DataStream(str(data_dir), batch, world, rank, seed, per_epoch, min_rows, 0.4, 0.675, log=lambda m: None, **kw)


def test_npz_and_hdf5_hold_the_same_rows(tmp_path):
    block = synthetic_rows(10, BOARD, seed=1)
    R.write_npz(str(tmp_path / "a.npz"), block)
    R.write_hdf5(str(tmp_path / "a.h5"), block)
    for name in ("a.npz", "a.h5"):
        path = str(tmp_path / name)
        assert R.count_rows(path) == 10
        back = R.read_rows(path, 2, 7)
        for field, array in block.arrays.items():
            np.testing.assert_array_equal(back.arrays[field], array[2:7])


def test_a_converted_copy_beside_its_h5_is_counted_once(tmp_path):
    """`kata convert x.h5` writes x.npz beside it: the same rows, which training must not see twice."""
    from katacli.data import convert_file
    from katacli.train.window import DataScanner

    data = tmp_path / "data"
    write_synthetic_files(str(data), 26, 9, num_files=1, seed=3, file_format="h5")
    (h5,) = data.glob("*.h5")
    convert_file(h5)
    assert h5.with_suffix(".npz").exists()
    messages = []
    scanner = DataScanner(str(data), log=messages.append)
    files = scanner.scan()
    assert [f.path for f in files] == [str(h5)] and sum(f.rows for f in files) == 26
    scanner.scan()
    assert len(messages) == 1 and "kata convert copy" in messages[0]  # said once, not on every scan
    # A lone .npz (KataGo's own data) still counts.
    h5.unlink()
    assert sum(f.rows for f in DataScanner(str(data), log=messages.append).scan()) == 26


def test_a_file_whose_rows_are_damaged_is_skipped_once_and_training_goes_on(tmp_path):
    """Its headers read (the row count at the scan), its rows not (a broken deflate stream inside): the epoch
    trains on the other files, the file is named once and left out of later epochs (it stopped the run)."""
    import zipfile

    data = tmp_path / "data"
    write_synthetic_files(str(data), 60, BOARD, num_files=2, seed=4, file_format="npz")
    bad = sorted(data.glob("*.npz"))[0]
    with zipfile.ZipFile(bad) as z:
        member = next(i for i in z.infolist() if i.filename.startswith("binaryInputNCHWPacked"))
    raw = bytearray(bad.read_bytes())
    middle = member.header_offset + 30 + len(member.filename) + member.compress_size // 2
    raw[middle:middle + 16] = b"\xff" * 16
    bad.write_bytes(bytes(raw))
    messages = []
    s = stream(data, batch=8, per_epoch=16, min_rows=10**9)
    s.scanner.log = messages.append
    batches = [s.next_batch(8 * i) for i in range(6)]   # three epochs of two batches
    assert all(len(b) == 8 for b in batches)
    assert s.window_rows == 30 and all(part.path != str(bad) for part in s.state.window)
    assert len(messages) == 1 and str(bad) in messages[0] and "skipping unreadable" in messages[0]


def test_binary_inputs_round_trip():
    spatial = (np.random.default_rng(0).random((3, 22, 9, 9)) < 0.3).astype(np.float32)
    packed = R.pack_binary_inputs(spatial)
    assert packed.shape == (3, 22, 11)
    np.testing.assert_array_equal(R.unpack_binary_inputs(packed, 9), spatial)


def test_old_64_channel_global_targets_are_padded(tmp_path):
    block = synthetic_rows(2, BOARD, seed=1)
    block.arrays[R.GLOBAL_TARGETS] = block.arrays[R.GLOBAL_TARGETS][:, :64].copy()
    np.savez_compressed(tmp_path / "old.npz", **block.arrays)  # as KataGo wrote data format 2
    back = R.read_rows(str(tmp_path / "old.npz"))
    assert back.arrays[R.GLOBAL_TARGETS].shape == (2, 80)


def test_bad_files_give_clear_errors(tmp_path):
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    with pytest.raises(R.TrainingFileError, match="junk.npz"):
        R.count_rows(str(tmp_path / "junk.npz"))
    np.savez(tmp_path / "partial.npz", globalTargetsNC=np.zeros((2, 80), np.float32))
    with pytest.raises(R.TrainingFileError, match="missing training arrays"):
        R.read_rows(str(tmp_path / "partial.npz"))


def test_window_size_is_katagos_power_law():
    # Below the minimum everything is used; at the minimum the growth rate is expand_per_row.
    assert desired_window_rows(1000, 250_000, 0.4, 0.675) == 250_000
    assert desired_window_rows(250_000, 250_000, 0.4, 0.675) == 250_000
    grown = desired_window_rows(251_000, 250_000, 0.4, 0.675)
    assert abs((grown - 250_000) - 400) <= 1
    big = desired_window_rows(100_000_000, 250_000, 0.4, 0.675)
    expected = (100_000_000 ** 0.675 - 250_000 ** 0.675) / (0.675 * 250_000 ** -0.325) * 0.4 + 250_000
    assert abs(big - expected) <= 1
    assert desired_window_rows(100_000_000, 250_000, 0.4, 0.675, max_rows=1_000_000) == 1_000_000


def test_window_takes_the_newest_rows():
    files = [DataFile("old", 100, 1.0), DataFile("mid", 100, 2.0), DataFile("new", 50, 3.0)]
    parts = choose_window(files, 120)
    assert [(p.path, p.start, p.stop) for p in parts] == [("mid", 30, 100), ("new", 0, 50)]


def test_stream_is_deterministic_and_resumes_exactly(tmp_path):
    write_synthetic_files(str(tmp_path), 40, BOARD, num_files=3, seed=3)
    a = stream(tmp_path, per_epoch=32)
    first = [a.next_batch(i * 8) for i in range(7)]
    b = stream(tmp_path, per_epoch=32)
    for i in range(3):
        b.next_batch(i * 8)
    saved = b.state_dict()
    c = stream(tmp_path, per_epoch=32)
    c.load_state_dict(saved)
    for i in range(3, 7):
        resumed = c.next_batch(i * 8)
        assert torch.equal(resumed.spatial, first[i].spatial)
        assert torch.equal(resumed.policy_targets, first[i].policy_targets)
    assert c.state.epoch == 1  # 56 samples at 32 per epoch: one rescan


def test_ranks_split_the_global_batch(tmp_path):
    write_synthetic_files(str(tmp_path), 40, BOARD, num_files=2, seed=4)
    whole = stream(tmp_path, batch=8).next_batch(0)
    halves = [stream(tmp_path, batch=4, world=2, rank=r).next_batch(0) for r in (0, 1)]
    for field in ("spatial", "global_inputs", "policy_targets", "value_targets"):
        joined = torch.cat([getattr(h, field) for h in halves])
        assert torch.equal(joined, getattr(whole, field)), field


def test_stream_errors(tmp_path):
    with pytest.raises(NoTrainingDataError, match="does not exist"):
        stream(tmp_path / "nowhere").next_batch(0)
    with pytest.raises(NoTrainingDataError, match="no training rows"):
        stream(tmp_path).next_batch(0)
    write_synthetic_files(str(tmp_path), 5, BOARD, seed=1)
    with pytest.raises(NoTrainingDataError, match="fewer than one global batch"):
        stream(tmp_path, batch=8).next_batch(0)


def test_new_files_enter_the_next_epoch(tmp_path):
    write_synthetic_files(str(tmp_path), 16, BOARD, seed=1)
    s = stream(tmp_path, per_epoch=16, min_rows=16)
    s.next_batch(0)
    assert s.state.total_rows_seen == 16
    path = write_synthetic_files(str(tmp_path), 16, BOARD, seed=2)[0]
    os.utime(path, (os.path.getmtime(path) + 10,) * 2)
    s.next_batch(8)
    assert s.state.total_rows_seen == 16  # same epoch
    s.next_batch(16)
    assert s.state.total_rows_seen == 32 and s.state.window[-1].path == path


def test_symmetry_moves_inputs_and_targets_together():
    b = expand_rows(synthetic_rows(3, BOARD, seed=5))
    for symmetry in range(8):
        t = apply_batch_symmetry(b, symmetry)
        board_policy = b.policy_targets[:, :, :-1].reshape(3, 2, BOARD, BOARD)
        expected = apply_symmetry(board_policy, symmetry).reshape(3, 2, -1)
        assert torch.equal(t.policy_targets[:, :, :-1], expected)
        assert torch.equal(t.policy_targets[:, :, -1], b.policy_targets[:, :, -1])
        assert torch.equal(t.spatial, apply_symmetry(b.spatial, symmetry))
        assert torch.equal(t.value_targets, apply_symmetry(b.value_targets, symmetry))


def test_history_dropout():
    keep = history_keep_mask(np.random.default_rng(0), 100_000)
    # Once a step is dropped, every older one is too; each step survives with 98% on top of the last.
    assert np.all(np.diff(keep, axis=1) <= 0)
    assert abs(keep[:, 0].mean() - 0.98) < 0.003 and abs(keep[:, 4].mean() - 0.98 ** 5) < 0.005
    b = expand_rows(synthetic_rows(2, BOARD, seed=6))
    b.spatial[:, 9:17] = torch.arange(1, 9, dtype=torch.float32).view(1, 8, 1, 1)
    b.global_inputs[:, :5] = 1.0
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 0, 0, 0, 0]], dtype=torch.float32)
    out = drop_history(b, mask)
    assert torch.equal(out.spatial[0], b.spatial[0])
    moves_1_to_5 = out.spatial[1, 9:14, 0, 0].tolist()
    assert moves_1_to_5 == [1.0, 0.0, 0.0, 0.0, 0.0]
    # Ladder features: 1 turn ago known (channel 15 kept), 2 turns ago unknown -> copy of 1 turn ago.
    assert out.spatial[1, 15, 0, 0] == 7.0 and out.spatial[1, 16, 0, 0] == 7.0
    assert out.global_inputs[1, :5].tolist() == [1.0, 0.0, 0.0, 0.0, 0.0]


def test_a_saved_window_is_found_from_another_directory_and_in_older_checkpoints(tmp_path, monkeypatch):
    write_synthetic_files(str(tmp_path / "data"), 40, BOARD, num_files=2, seed=3)
    monkeypatch.chdir(tmp_path)
    first = stream("data")
    first.next_batch(0)
    saved = first.state_dict()
    expected = first.next_batch(8).spatial
    assert [part["path"] for part in saved["window"]] == sorted(os.listdir(tmp_path / "data"))   # data-dir relative
    older = {key: value for key, value in saved.items() if key != "paths_in_data_dir"}   # before: cwd-relative
    older["window"] = [{**part, "path": os.path.join("data", part["path"])} for part in saved["window"]]
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    for state in (saved, older):
        again = stream(tmp_path / "data")
        again.load_state_dict(state)
        assert [os.path.dirname(part.path) for part in again.state.window] == [str(tmp_path / "data")] * 2
        assert again.state.epoch_start_samples == first.state.epoch_start_samples   # no fresh epoch forced
        assert torch.equal(again.next_batch(8).spatial, expected)   # the same rows, in the same order


def test_files_of_two_board_edges_are_named_in_the_error(tmp_path):
    write_synthetic_files(str(tmp_path / "data"), 16, 9, num_files=1, seed=3)
    write_synthetic_files(str(tmp_path / "data" / "big"), 16, 19, num_files=1, seed=4)
    with pytest.raises(R.TrainingFileError, match=r"mix board edges \[9, 19\] \(e\.g\. \S+ has 9, \S+big\S+ has 19\)"):
        stream(tmp_path / "data", min_rows=10).next_batch(0)
