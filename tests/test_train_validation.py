"""validationFraction: held-out data files (KataGo's shuffle.sh val split, by the MD5 of the file name), never
trained on, evaluated after each epoch and at the end into metrics_val.jsonl."""
from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from katacli.train import checkpoint as ckpt
from katacli.train.settings import TrainSettings
from katacli.train.synthetic import write_synthetic_files
from katacli.train.trainer import run_training
from katacli.train.window import NoTrainingDataError, is_validation_file, path_hash_fraction

from support.torch_threads import one_cpu_thread  # noqa: F401  (autouse fixture)

NAMES = [f"synthetic-1-{i:04d}.h5" for i in range(10)]


def test_files_are_held_out_by_the_md5_of_their_name_as_katagos_shuffle():
    # KataGo's shuffle.py: int(md5(basename).hexdigest()[:13], 16) / 2**52 >= lbound (0.95 for its val files).
    assert path_hash_fraction("/any/folder/" + NAMES[0]) == path_hash_fraction(NAMES[0])
    assert [name for name in NAMES if is_validation_file(name, 0.3)] == [NAMES[0], NAMES[2], NAMES[6]]
    assert not any(is_validation_file(name, 0.0) for name in NAMES)
    many = [f"{i:016X}.npz" for i in range(4000)]
    share = sum(is_validation_file(name, 0.05) for name in many) / len(many)
    assert 0.04 < share < 0.06
    # Held out at a fraction, held out at every larger one: a file never moves back into training.
    assert all(is_validation_file(name, 0.5) for name in many if is_validation_file(name, 0.05))


def _settings(tmp_path: Path, **overrides) -> TrainSettings:
    base = TrainSettings(
        data_dir=str(tmp_path / "data"), output_dir=str(tmp_path / "run"), export_dir=None, model_kind="b2c16",
        batch_size=16, samples_per_epoch=128, window_min_rows=10**6, lr_warmup_samples=0, seed=3,
        validation_fraction=0.3, max_validation_samples=10**6)
    return replace(base, **overrides)


def _validation_lines(tmp_path: Path) -> list[dict]:
    path = tmp_path / "run" / "metrics_val.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def test_held_out_files_are_never_trained_and_are_validated_after_each_epoch(tmp_path):
    write_synthetic_files(str(tmp_path / "data"), 400, 9, num_files=10, seed=1, file_format="h5")
    messages: list[str] = []
    result = run_training(_settings(tmp_path, max_samples=400), log=messages.append)
    assert result.samples == 400
    lines = _validation_lines(tmp_path)
    # Epochs of 128 samples: the net after each one's last step (epochs 0, 1, 2), then the final one (epoch 3).
    assert [line["samples"] for line in lines] == [128, 256, 384, 400]
    assert [line["epoch"] for line in lines] == [0, 1, 2, 3]
    assert all(line["rows"] == 120 and line["files"] == 3 and math.isfinite(line["loss"]) for line in lines)
    assert {"p0loss", "vloss", "oloss"} <= set(lines[0])
    assert any(m.startswith("validation at 400 samples: loss") and "over 120 held-out rows" in m for m in messages)
    assert any("(3 files held out for validation)" in m for m in messages)
    window = ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "run")))["data"]["window"]
    assert {Path(part["path"]).name for part in window} == set(NAMES) - {NAMES[0], NAMES[2], NAMES[6]}


def test_validation_is_deterministic_and_a_resume_neither_repeats_nor_loses_a_line(tmp_path):
    write_synthetic_files(str(tmp_path / "data"), 400, 9, num_files=10, seed=1, file_format="h5")
    run_training(_settings(tmp_path, max_samples=256, checkpoint_every_samples=128), log=lambda _m: None)
    first = _validation_lines(tmp_path)
    assert [line["samples"] for line in first] == [128, 256]
    run_training(_settings(tmp_path, max_samples=400, checkpoint_every_samples=128), log=lambda _m: None)
    lines = _validation_lines(tmp_path)
    assert [line["samples"] for line in lines] == [128, 256, 384, 400]
    straight = tmp_path / "straight"
    run_training(_settings(tmp_path, output_dir=str(straight / "run"), max_samples=400,
                           checkpoint_every_samples=128), log=lambda _m: None)
    again = _validation_lines(straight)
    # The same held-out rows in the same order and orientation: the resumed run's numbers are the straight one's.
    by_samples = {line["samples"]: line["loss"] for line in again}
    common = [line for line in lines if line["samples"] in by_samples]
    assert [line["samples"] for line in common] == [128, 256, 384, 400]
    for line in common:
        assert line["loss"] == pytest.approx(by_samples[line["samples"]], rel=1e-9, abs=1e-9)


def test_no_validation_by_default_and_a_clear_error_when_every_file_is_held_out(tmp_path):
    write_synthetic_files(str(tmp_path / "data"), 64, 9, num_files=2, seed=1, file_format="h5")
    run_training(_settings(tmp_path, validation_fraction=0.0, max_samples=32), log=lambda _m: None)
    assert not (tmp_path / "run" / "metrics_val.jsonl").exists()
    held = tmp_path / "held"
    write_synthetic_files(str(held / "data"), 64, 9, num_files=1, seed=1, file_format="h5")   # its one file: 0000
    with pytest.raises(NoTrainingDataError, match="all held out for validation"):
        run_training(_settings(held, validation_fraction=0.3, max_samples=32), log=lambda _m: None)


def test_a_changed_validation_fraction_is_noted_on_resume(tmp_path):
    write_synthetic_files(str(tmp_path / "data"), 400, 9, num_files=10, seed=1, file_format="h5")
    run_training(_settings(tmp_path, max_samples=128), log=lambda _m: None)
    messages: list[str] = []
    run_training(_settings(tmp_path, max_samples=192, validation_fraction=0.5), log=messages.append)
    assert any("validationFraction was 0.3 and is 0.5 now: files trained on before are validated" in m
               for m in messages), messages
