"""KataGo's own training files both ways.

KataGo's C++ self-play names the npz members without ``.npy`` (``globalTargetsNC``), numpy's
savez with it (``globalTargetsNC.npy``); every reader must accept both. The other direction,
kata's data read by KataGo's own ``shuffle.py`` and ``train.py``, runs when the environment
variable KATAGO_PYTHON_DIR names the ``python/`` directory of a KataGo checkout.
"""
from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import numpy as np
import pytest

from katacli.data import h5_to_npz, load_training_arrays, npz_to_h5
from katacli.train.rows import count_rows, list_files, read_rows
from katacli.train.synthetic import write_synthetic_files

from support.paths import REFERENCE

KATAGO_NPZ = REFERENCE / "katago-selfplay" / "tdata-9x9-test-b4c32.npz"
KATAGO_PYTHON_DIR = os.environ.get("KATAGO_PYTHON_DIR")
BOARD = 9



def needs_katago_npz(test):
    """Marks a test needs_shared and skips it without KataGo's self-play file."""
    skip = pytest.mark.skipif(not KATAGO_NPZ.exists(),
                              reason=f"KataGo reference self-play file not found ({KATAGO_NPZ.name})")
    return pytest.mark.needs_shared(skip(test))


@needs_katago_npz
def test_katago_file_really_has_bare_member_names():
    with zipfile.ZipFile(KATAGO_NPZ) as z:
        names = z.namelist()
    assert "globalTargetsNC" in names and not any(n.endswith(".npy") for n in names)


@needs_katago_npz
def test_every_reader_accepts_katago_member_names(tmp_path):
    arrays = load_training_arrays(KATAGO_NPZ)
    rows = arrays["globalTargetsNC"].shape[0]
    assert rows > 0
    assert count_rows(str(KATAGO_NPZ)) == rows
    block = read_rows(str(KATAGO_NPZ), 1, 3)
    np.testing.assert_array_equal(block.arrays["policyTargetsNCMove"], arrays["policyTargetsNCMove"][1:3])
    h5 = npz_to_h5(KATAGO_NPZ, tmp_path / "converted.h5")
    back = load_training_arrays(h5)
    for name, value in arrays.items():
        np.testing.assert_array_equal(back[name], value)
    # `kata convert` on a copy (it writes the .h5 beside its input).
    from typer.testing import CliRunner

    from katacli.cli import app, normalize_argv

    copy = tmp_path / "katago.npz"
    copy.write_bytes(KATAGO_NPZ.read_bytes())
    done = CliRunner().invoke(app, normalize_argv(["convert", str(copy)]))
    assert done.exit_code == 0, done.output
    converted = load_training_arrays(tmp_path / "katago.h5")
    for name, value in arrays.items():
        np.testing.assert_array_equal(converted[name], value)


def test_numpy_style_member_names_still_work(tmp_path):
    (npz,) = write_synthetic_files(str(tmp_path / "npz"), 12, BOARD, num_files=1, seed=3, file_format="npz")
    with zipfile.ZipFile(npz) as z:
        assert "globalTargetsNC.npy" in z.namelist()
    assert count_rows(str(npz)) == 12


def _bare_copy(src: Path, dst: Path) -> None:
    """Rewrite an npz as KataGo's C++ does: the same members, without the ``.npy`` suffix."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            zout.writestr(name.removesuffix(".npy"), zin.read(name))


def test_kata_train_reads_a_katago_style_data_dir(tmp_path):
    """`kata train -data-dir` on a directory of bare-named npz files (the reported failure)."""
    from typer.testing import CliRunner

    from katacli.cli import app, normalize_argv

    if KATAGO_NPZ.exists():
        data = tmp_path / "selfplay" / "tdata"
        data.mkdir(parents=True)
        (data / KATAGO_NPZ.name).write_bytes(KATAGO_NPZ.read_bytes())
    else:
        (plain,) = write_synthetic_files(str(tmp_path / "npz"), 40, BOARD, num_files=1, seed=4, file_format="npz")
        data = tmp_path / "selfplay"
        data.mkdir()
        _bare_copy(Path(plain), data / "bare.npz")
    done = CliRunner().invoke(app, normalize_argv([
        "train", "-data-dir", str(tmp_path / "selfplay"), "-output-dir", str(tmp_path / "run"),
        "-export-dir", str(tmp_path / "models"), "-model-kind", "b2c16", "-batch-size", "8",
        "-max-samples", "16", "--quiet", "-override-config",
        "windowMinRows=8,lrWarmupSamples=0,samplesPerEpoch=16,numCpuThreads=1"]))
    assert done.exit_code == 0, done.output
    assert "trained 16 samples" in done.stderr
    assert list((tmp_path / "models").glob("*.bin.gz"))


@pytest.mark.subprocess
@pytest.mark.skipif(not KATAGO_PYTHON_DIR, reason="set KATAGO_PYTHON_DIR to a KataGo checkout's python/ directory")
def test_katago_shuffle_and_train_read_kata_data(tmp_path):
    """kata's self-play data, converted to npz, goes through KataGo's shuffle.py and train.py."""
    katago = Path(KATAGO_PYTHON_DIR)
    write_synthetic_files(str(tmp_path / "h5"), 256, BOARD, num_files=2, seed=5, file_format="h5")
    npz_dir = tmp_path / "selfplay" / "kata-model" / "tdata"
    npz_dir.mkdir(parents=True)
    for i, h5 in enumerate(list_files(str(tmp_path / "h5"))):
        h5_to_npz(h5, npz_dir / f"part{i}.npz")  # what `kata convert` does
    shuffled = tmp_path / "shuffled"
    env = dict(os.environ, PYTHONPATH=str(katago))
    for split, (lower, upper) in {"train": (0.0, 1.0), "val": (0.0, 1.0)}.items():
        out = shuffled / split
        shuffled.mkdir(exist_ok=True)
        done = subprocess.run(
            [sys.executable, str(katago / "shuffle.py"), str(tmp_path / "selfplay"), "-min-rows", "100",
             "-keep-target-rows", "all", "-out-dir", str(out), "-out-tmp-dir", str(tmp_path / f"tmp-{split}"),
             "-approx-rows-per-out-file", "1000", "-num-processes", "1",
             "-only-include-md5-path-prop-lbound", str(lower), "-only-include-md5-path-prop-ubound", str(upper)],
            env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-3000:]
        assert list(out.glob("*.npz")), done.stdout[-2000:]
    trained = subprocess.run(
        [sys.executable, str(katago / "train.py"), "-traindir", str(tmp_path / "train"), "-datadir", str(shuffled),
         "-pos-len", str(BOARD), "-batch-size", "16", "-model-kind", "b1c6nbt", "-samples-per-epoch", "64",
         "-max-epochs-this-instance", "1", "-no-export", "-no-compile", "-quit-if-no-data"],
        env=env, capture_output=True, text=True, timeout=600)
    assert trained.returncode == 0, trained.stderr[-3000:]
    assert (tmp_path / "train" / "checkpoint.ckpt").exists()
