"""Crash safety: SIGKILL of `kata train` at random points, and a full disk under training and self-play,
leave only whole files (checkpoint, metrics, exported nets, training data, SGFs) and a run that goes on.

The full-disk cases run twice: simulated (ENOSPC raised in process, works everywhere) and on a real
small tmpfs, which needs the right to mount (root, outside most containers); those skip otherwise.
"""
from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from katacli import atomic_files
from katacli.nn.model_file_reader import read_model_file
from katacli.train import checkpoint as ckpt
from katacli.train.metrics import METRICS_FILE

from test_train_loop import (
    assert_same_training_state, kata_train, make_settings, quiet, run_command, write_data,
)
from katacli.train.trainer import run_training

# Random kill points of `kata train`, seeded so a failure can be replayed.
KILL_SEED = 20
NUM_KILLS = 4
# Kill delays after start, in seconds: from during start-up (imports, first checkpoint) into training.
MAX_KILL_DELAY_SECONDS = 6.0
TRAIN_TOTAL_SAMPLES = 960
TRAIN_ARGS_SETTINGS = ("samplesPerEpoch=96,windowMinRows=1000000,lrWarmupSamples=0,metricsEverySamples=32,"
                       "checkpointEverySamples=64,exportEverySamples=64,swaPeriodSamples=48,numCpuThreads=1")
# A real tmpfs this small fills up within a few checkpoints of the tiny test net.
TMPFS_SIZE = "2m"
# What is left free on the tmpfs before the run that must hit the full disk.
FREE_BYTES_LEFT = 4096
SELFPLAY_FREE_BYTES = 256 << 10


def train_args(tmp_path: Path, output_dir: Path, export_dir: Path, total: int = TRAIN_TOTAL_SAMPLES) -> list[str]:
    return ["-data-dir", str(tmp_path / "data"), "-output-dir", str(output_dir), "-export-dir", str(export_dir),
            "-model-kind", "b2c16", "-max-samples", str(total), "-batch-size", "16", "-seed", "11", "-lr-scale", "5",
            "--quiet", "-override-config", TRAIN_ARGS_SETTINGS]


def assert_only_whole_files(output_dir: Path, export_dir: Path) -> int:
    """Every file a reader would pick up is whole; returns the checkpoint's samples (0 without one)."""
    samples = 0
    checkpoint = output_dir / ckpt.CHECKPOINT_FILE
    if checkpoint.exists():
        samples = int(ckpt.load_checkpoint(str(checkpoint))["samples"])
    initial = output_dir / ckpt.INITIAL_MODEL_FILE
    if initial.exists():
        read_model_file(initial)
    metrics = output_dir / METRICS_FILE
    if metrics.exists():
        text = metrics.read_text()
        assert text == "" or text.endswith("\n"), "a cut metrics line"
        for line in text.splitlines():
            json.loads(line)
    if export_dir.exists():
        for model in export_dir.glob("*.bin.gz"):
            read_model_file(model)
        for info in export_dir.glob("*.json"):
            json.loads(info.read_text())
    return samples


def error_lines(stderr: str) -> list[str]:
    """The `error:` lines (progress lines such as "resuming from ..." may precede them)."""
    return [line for line in stderr.splitlines() if line.startswith("error: ")]


def visible_partials(*directories: Path) -> list[Path]:
    return [p for d in directories if d.exists() for p in d.iterdir() if atomic_files.is_partial_file(p)]


# ---------------------------------------------------------------------------- SIGKILL of kata train


@pytest.mark.subprocess
def test_sigkill_of_train_at_random_points_then_resume(tmp_path):
    write_data(tmp_path)
    reference = make_settings(tmp_path, output_dir=str(tmp_path / "reference"), export_dir=str(tmp_path / "ref_models"),
                              max_samples=TRAIN_TOTAL_SAMPLES, num_cpu_threads=1, metrics_every_samples=32,
                              export_every_samples=64)
    run_training(reference, log=quiet)
    run_dir, models = tmp_path / "run", tmp_path / "models"
    args = train_args(tmp_path, run_dir, models)
    rng = random.Random(KILL_SEED)
    progress = []
    for _ in range(NUM_KILLS):
        proc = run_command(args)
        time.sleep(rng.uniform(0.0, MAX_KILL_DELAY_SECONDS))
        if proc.poll() is not None:
            _, err = proc.communicate()
            assert proc.returncode == 0, err
            break
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        progress.append(assert_only_whole_files(run_dir, models))
    assert progress == sorted(progress), "a resumed run never goes back before an earlier checkpoint"
    proc = run_command(args)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"trained {TRAIN_TOTAL_SAMPLES} samples" in err
    assert assert_only_whole_files(run_dir, models) == TRAIN_TOTAL_SAMPLES
    assert visible_partials(run_dir, models) == []  # temporaries of killed writers are cleared at start
    assert_same_training_state(reference.output_dir, str(run_dir))
    samples = [json.loads(line)["samples"] for line in (run_dir / METRICS_FILE).read_text().splitlines()]
    # No stretch twice (strictly increasing) and none missing: every metricsEverySamples boundary has
    # its line; each (re)started run also writes its early lines after 1, 2, 4, ... batches.
    assert samples == sorted(set(samples)) and samples[-1] == TRAIN_TOTAL_SAMPLES
    assert set(range(32, TRAIN_TOTAL_SAMPLES + 1, 32)) <= set(samples)
    assert sorted(p.name for p in models.glob("*.bin.gz")) == sorted(
        p.name for p in (tmp_path / "ref_models").glob("*.bin.gz"))


# ---------------------------------------------------------------------------- a full disk, simulated


def test_append_whole_cuts_back_a_short_write(tmp_path, monkeypatch):
    path = tmp_path / "games.sgfs"
    path.write_bytes(b"(;first)\n")
    real_write = os.write
    monkeypatch.setattr(atomic_files.os, "write", lambda fd, data: real_write(fd, bytes(data)[: len(data) // 2]))
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        with pytest.raises(OSError) as caught:
            atomic_files.append_whole(fd, b"(;second game, cut by a full disk)\n", path)
    finally:
        os.close(fd)
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(path)
    assert path.read_bytes() == b"(;first)\n"


def test_atomic_write_on_a_full_disk_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / ckpt.CHECKPOINT_FILE
    atomic_files.atomic_write_bytes(str(target), b"old")

    def full(path):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic_files, "_fsync_path", full)
    with pytest.raises(OSError) as caught:
        atomic_files.atomic_write_bytes(str(target), b"new contents")
    assert caught.value.errno == errno.ENOSPC and caught.value.filename == str(target)
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == [target.name]


def test_train_on_a_full_disk_stops_with_one_line_and_resumes(tmp_path, monkeypatch):
    write_data(tmp_path)
    run_dir, models = tmp_path / "run", tmp_path / "models"
    done = kata_train(*train_args(tmp_path, run_dir, models, total=128))
    assert done.exit_code == 0, done.output
    real_fsync = atomic_files._fsync_path

    def full_after_first(path):  # the disk fills up while the next checkpoint or export is written
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(atomic_files, "_fsync_path", full_after_first)
    failed = kata_train(*train_args(tmp_path, run_dir, models, total=256))
    assert failed.exit_code == 1
    (line,) = error_lines(failed.stderr)
    assert "No space left on device" in line and "run the same command again" in line
    assert "Traceback" not in failed.output
    assert assert_only_whole_files(run_dir, models) == 128  # the last checkpoint before the disk filled
    assert visible_partials(run_dir, models) == []
    monkeypatch.setattr(atomic_files, "_fsync_path", real_fsync)
    resumed = kata_train(*train_args(tmp_path, run_dir, models, total=256))
    assert resumed.exit_code == 0 and "trained 256 samples" in resumed.stderr


# ---------------------------------------------------------------------------- a full disk, for real


@contextmanager
def small_tmpfs(mount_point: Path):
    mount_point.mkdir()
    try:
        result = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={TMPFS_SIZE}", "tmpfs", str(mount_point)],
                                capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no mount command: the real full-disk test needs to mount a small tmpfs")
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({result.stderr.strip() or 'not permitted'}); "
                    "the simulated full-disk tests above still run")
    try:
        yield mount_point
    finally:
        subprocess.run(["umount", "-l", str(mount_point)], capture_output=True)


def fill_up(directory: Path, leave: int = FREE_BYTES_LEFT) -> Path:
    """A filler file taking all but ``leave`` bytes of the file system."""
    stats = os.statvfs(directory)
    filler = directory / "filler"
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, stats.f_bavail * stats.f_frsize - leave))
    return filler


@pytest.mark.subprocess
def test_train_on_a_real_full_disk(tmp_path):
    write_data(tmp_path)
    with small_tmpfs(tmp_path / "disk") as disk:
        run_dir, models = disk / "run", disk / "models"
        done = kata_train(*train_args(tmp_path, run_dir, models, total=128))
        assert done.exit_code == 0, done.output
        filler = fill_up(disk)
        failed = kata_train(*train_args(tmp_path, run_dir, models, total=512))
        assert failed.exit_code == 1, failed.output
        (line,) = error_lines(failed.stderr)
        assert "No space left on device" in line and "Traceback" not in failed.output
        assert assert_only_whole_files(run_dir, models) >= 128
        assert visible_partials(run_dir, models) == []
        filler.unlink()
        resumed = kata_train(*train_args(tmp_path, run_dir, models, total=512))
        assert resumed.exit_code == 0 and "trained 512 samples" in resumed.stderr, resumed.output


@pytest.mark.subprocess
@pytest.mark.parametrize("processes", [1, 2])
def test_selfplay_on_a_real_full_disk(tmp_path, processes):
    from test_selfplay_run import ALL_ROWS, check_output_dir, model_dir, run_cli
    from support.selfplay import EXAMPLE_CONFIG, TINY_OVERRIDES

    models = model_dir(tmp_path)
    with small_tmpfs(tmp_path / "disk") as disk:
        fill_up(disk, leave=SELFPLAY_FREE_BYTES)  # room for a few dozen games
        out = disk / "out"
        overrides = f"{TINY_OVERRIDES},{ALL_ROWS},maxRowsPerTrainFile=30,firstFileRandMinProp=1.0,"
        overrides += f"numSelfplayProcesses={processes}"
        result = run_cli("-models-dir", str(models), "-output-dir", str(out), "-config", str(EXAMPLE_CONFIG),
                         "-override-config", overrides, "-max-games-total", "1000", "--quiet")
        assert result.returncode != 0, "the disk never filled up"
        (line,) = error_lines(result.stderr)
        assert "No space left on device" in line, result.stderr
        assert "Traceback" not in result.stderr and "Logging error" not in result.stderr, result.stderr
        games, rows = check_output_dir(out)
        assert games > 0 and rows > 0
        assert [p for p in (out / "tdata").iterdir() if atomic_files.is_partial_file(p)] == []
        for sgfs in (out / "sgfs").glob("*.sgfs"):
            text = sgfs.read_text()
            assert text.endswith("\n") and all(l.startswith("(;") and l.endswith(")") for l in text.splitlines())
