"""The training loop end to end: overfitting a tiny dataset, exact resume (also after SIGKILL and
Ctrl-C of the real command), exports, metrics and the command's error handling."""
from __future__ import annotations

import json
import math
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from katacli.nn.torch_model import load_model
from katacli.nn.model_file_reader import read_model_file
from katacli.train import checkpoint as ckpt
from katacli.train.batch import expand_rows
from katacli.train.losses import KataGoLoss
from katacli.train.training_net import TrainingNet
from katacli.train.rows import RowBlock, read_rows
from katacli.train.settings import TrainSettings
from katacli.train.synthetic import write_synthetic_files
from katacli.train.trainer import AbortedBySecondInterrupt, TrainingError, _StopFlag, run_training
from katacli.train.window import NoTrainingDataError

from support.paths import G170_B6, MODELS, TEST_B4
from support.torch_threads import one_cpu_thread  # noqa: F401  (autouse fixture)
BOARD = 9


def quiet(_message: str) -> None:
    pass


def make_settings(tmp_path: Path, **overrides) -> TrainSettings:
    base = TrainSettings(
        data_dir=str(tmp_path / "data"), output_dir=str(tmp_path / "run"), export_dir=str(tmp_path / "models"),
        model_kind="b2c16", batch_size=16, samples_per_epoch=96, window_min_rows=10**6, lr_warmup_samples=0,
        lr_scale=5.0, metrics_every_samples=64, checkpoint_every_samples=64, export_every_samples=10**9, seed=11,
        swa_period_samples=48,
    )
    return replace(base, **overrides)


def write_data(tmp_path: Path, rows: int = 80, files: int = 2, seed: int = 1) -> None:
    write_synthetic_files(str(tmp_path / "data"), rows, BOARD, num_files=files, seed=seed)


def trained_net(output_dir: str) -> tuple[TrainingNet, dict]:
    state = ckpt.load_checkpoint(ckpt.checkpoint_path(output_dir))
    net = TrainingNet(load_model(ckpt.initial_model_path(output_dir)), seed=int(state["seed"]))
    net.load_state_dict(state["net"])
    return net, state


def eval_loss(net: TrainingNet, rows: RowBlock) -> dict[str, float]:
    batch = expand_rows(rows)
    with torch.no_grad():
        total, terms = KataGoLoss()(net.eval()(batch.spatial, batch.global_inputs), batch, training=False)
    n = len(batch)
    return {"loss": float(total) / n, **{k: float(v) / n for k, v in terms.items()}}


def all_rows(data_dir: Path) -> RowBlock:
    return RowBlock.concatenate(read_rows(str(p)) for p in sorted(data_dir.iterdir()))


def test_overfits_a_tiny_dataset(tmp_path):
    write_data(tmp_path, rows=32, files=1)
    s = make_settings(tmp_path, batch_size=16, max_samples=3200, lr_scale=60.0, samples_per_epoch=10**9,
                      random_symmetries=False, history_dropout=False, swa_scale=0, export_dir="",
                      metrics_every_samples=320, checkpoint_every_samples=10**9)
    result = run_training(s, log=quiet)
    assert result.samples == 3200
    rows = all_rows(tmp_path / "data")
    net, state = trained_net(s.output_dir)
    start = eval_loss(TrainingNet(load_model(ckpt.initial_model_path(s.output_dir)), seed=int(state["seed"])), rows)
    end = eval_loss(net, rows)
    print(f"overfit: loss {start['loss']:.2f} -> {end['loss']:.2f}, policy {start['p0loss']:.2f} -> {end['p0loss']:.2f}, "
          f"value {start['vloss']:.3f} -> {end['vloss']:.3f}")
    # Soft-policy targets keep a large irreducible part (their entropy), so the total falls less than its terms.
    assert end["loss"] < 0.65 * start["loss"]
    assert end["p0loss"] < 0.35 * start["p0loss"]
    assert end["vloss"] < 0.6 * start["vloss"]
    assert end["oloss"] < start["oloss"]
    records = [json.loads(line) for line in open(os.path.join(s.output_dir, "metrics.jsonl"))]
    samples = [r["samples"] for r in records]
    # Lines after 1, 2, 4, ... batches of 16, then at most metricsEverySamples (320) apart, and at the end.
    assert samples[:5] == [16, 32, 64, 128, 256] and samples[-1] == 3200
    assert all(0 < b - a <= 320 for a, b in zip(samples, samples[1:]))
    assert records[-1]["loss"] < records[0]["loss"]
    assert {"p0loss", "p1loss", "vloss", "oloss", "sbpdfloss", "leadloss", "lr", "samples_per_sec"} <= set(records[0])
    if _has_matplotlib():
        assert os.path.getsize(os.path.join(s.output_dir, "loss_curves.png")) > 1000


def test_a_short_run_draws_a_curve(tmp_path):
    """Three batches with KataGo's cadence setting (metricsEverySamples far away) still give a curve."""
    write_data(tmp_path, rows=48, files=1)
    s = make_settings(tmp_path, batch_size=8, max_samples=24, metrics_every_samples=25_600)
    run_training(s, log=quiet)
    records = [json.loads(line) for line in open(os.path.join(s.output_dir, "metrics.jsonl"))]
    assert [r["samples"] for r in records] == [8, 16, 24]
    assert all(math.isfinite(r["loss"]) for r in records)
    if _has_matplotlib():
        assert os.path.getsize(os.path.join(s.output_dir, "loss_curves.png")) > 1000


def _has_matplotlib() -> bool:
    import importlib.util

    return importlib.util.find_spec("matplotlib") is not None


def assert_same_training_state(dir_a: str, dir_b: str) -> None:
    a = ckpt.load_checkpoint(ckpt.checkpoint_path(dir_a))
    b = ckpt.load_checkpoint(ckpt.checkpoint_path(dir_b))
    assert a["samples"] == b["samples"]
    for name, tensor in a["net"].items():
        assert torch.equal(tensor, b["net"][name]), name
    for x, y in zip(a["lookahead"]["slow"], b["lookahead"]["slow"]):
        assert torch.equal(x, y)
    for name, tensor in a["swa"]["average"].items():
        assert torch.equal(tensor, b["swa"]["average"][name]), name
    assert a["data"] == b["data"]
    assert a["loss"] == b["loss"]


def test_resume_continues_identically(tmp_path):
    write_data(tmp_path)
    write_synthetic_files(str(tmp_path / "data"), 24, BOARD, num_files=1, seed=9, file_format="h5")  # formats mix
    straight = make_settings(tmp_path, output_dir=str(tmp_path / "straight"), max_samples=336)
    run_training(straight, log=quiet)
    split = make_settings(tmp_path, output_dir=str(tmp_path / "split"), max_samples=160)
    assert run_training(split, log=quiet).samples == 160
    # The second half must come from the checkpoint alone (a fresh Trainer, a different seed setting).
    result = run_training(replace(split, max_samples=336, seed=999), log=quiet)
    assert result.samples == 336
    assert_same_training_state(straight.output_dir, split.output_dir)
    lines = [json.loads(x)["samples"] for x in open(tmp_path / "split" / "metrics.jsonl")]
    assert lines == sorted(set(lines))  # no duplicated stretch after resuming
    # A resumed run keeps its net: a modelKind the user asks for that differs is refused (the default is not).
    with pytest.raises(TrainingError, match="trains a b2c16 net; it cannot continue as b4c32"):
        run_training(replace(split, max_samples=400, model_kind="b4c32", model_kind_given=True), log=quiet)
    assert run_training(replace(split, max_samples=352, model_kind="b6c96"), log=quiet).samples == 352


def test_a_finished_run_without_its_final_export_exports_when_run_again(tmp_path):
    # No -export-dir the first time (or an export that failed after the final checkpoint): running the command
    # again with one exports the trained net instead of "nothing to do" with the weights only in checkpoint.pt.
    write_data(tmp_path)
    settings = make_settings(tmp_path, max_samples=96, export_dir=None)
    assert run_training(settings, log=quiet).exported == []
    messages = []
    again = run_training(replace(settings, export_dir=str(tmp_path / "models")), log=messages.append)
    assert len(again.exported) == 1 and os.path.exists(again.exported[0]) and "-s96-" in again.exported[0]
    assert any("exporting the net" in m for m in messages)
    # The checkpoint lists that export (a later run named no latest export).
    assert ckpt.load_checkpoint(ckpt.checkpoint_path(settings.output_dir))["exported"] == again.exported
    messages.clear()
    third = run_training(replace(settings, export_dir=str(tmp_path / "models")), log=messages.append)
    assert third.samples == 96 and third.exported == again.exported
    assert any("nothing to do" in m for m in messages)   # exported now: nothing left


def test_the_checkpoint_lists_the_final_export(tmp_path):
    # The final export is recorded in the checkpoint, so a rerun names it as the latest (it named the one before).
    write_data(tmp_path)
    settings = make_settings(tmp_path, max_samples=96, export_every_samples=64)
    first = run_training(settings, log=quiet)
    assert "-s96-" in first.exported[-1]
    assert run_training(settings, log=quiet).exported == first.exported


def test_a_run_ending_on_an_export_boundary_lists_that_export(tmp_path):
    # The loop checkpointed, then exported, at the same count: the run ended without a checkpoint naming the
    # export, and a later run called the one before it the latest.
    write_data(tmp_path)
    settings = make_settings(tmp_path, max_samples=128, export_every_samples=64)
    first = run_training(settings, log=quiet)
    assert "-s128-" in first.exported[-1]
    listed = ckpt.load_checkpoint(ckpt.checkpoint_path(settings.output_dir))["exported"]
    assert listed == first.exported and "-s128-" in listed[-1]


def test_a_restart_from_another_directory_resumes_exactly(tmp_path, monkeypatch):
    # The checkpoint held the window's paths as -data-dir gave them (relative): from another working directory
    # the restart called the files gone and began a new epoch, with a new window and shuffle.
    write_data(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path)
    relative = make_settings(tmp_path, data_dir="data", output_dir="run", export_dir=None, max_samples=64)
    run_training(relative, log=quiet)
    monkeypatch.chdir(tmp_path / "elsewhere")
    messages: list[str] = []
    resumed = run_training(replace(relative, data_dir=str(tmp_path / "data"), output_dir=str(tmp_path / "run"),
                                   max_samples=160), log=messages.append)
    assert not any("gone" in m for m in messages) and not any(m.startswith("epoch") for m in messages[:2]), messages
    straight = run_training(make_settings(tmp_path, output_dir=str(tmp_path / "straight"), export_dir=None,
                                          max_samples=160), log=quiet)
    assert resumed.samples == straight.samples == 160
    a, _ = trained_net(str(tmp_path / "run"))
    b, _ = trained_net(str(tmp_path / "straight"))
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name


def test_a_run_from_an_init_model_restarts_with_a_config_naming_another_model_kind(tmp_path):
    # A shared train.cfg's modelKind (or -list-keys' modelKind = b6c96): the first start ignored it without a
    # word, and every restart was refused ("cannot continue as b6c96").
    write_data(tmp_path)
    settings = make_settings(tmp_path, init_model=str(MODELS / TEST_B4), model_kind="b6c96", export_dir=None,
                             max_samples=32)
    settings.model_kind_given = True
    messages: list[str] = []
    run_training(settings, log=messages.append)
    assert any("modelKind = b6c96 is ignored: this run trains the b4c32 net" in m for m in messages), messages
    assert run_training(replace(settings, max_samples=64), log=quiet).samples == 64


def run_command(args: list[str], **popen) -> subprocess.Popen:
    env = dict(os.environ)  # PYTHONPATH already names this run's katacli (conftest), compiled core included
    return subprocess.Popen([sys.executable, "-m", "katacli.cli", "train", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **popen)


def wait_for_checkpoint_beyond(output_dir: Path, samples: int, proc: subprocess.Popen, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    path = output_dir / ckpt.CHECKPOINT_FILE
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"training ended early: {proc.stderr.read()}")
        if path.exists():
            try:
                done = int(torch.load(path, weights_only=True)["samples"])
            except Exception:
                done = -1  # replaced while reading
            if done > samples:
                return done
        time.sleep(0.05)
    raise AssertionError("no checkpoint appeared in time")


@pytest.mark.subprocess
def test_command_survives_ctrl_c_and_kill(tmp_path):
    write_data(tmp_path)
    # Enough steps that the run is still going when the test reacts to its first checkpoint.
    total = 1920
    reference = make_settings(tmp_path, output_dir=str(tmp_path / "reference"), max_samples=total, num_cpu_threads=1)
    run_training(reference, log=quiet)
    args = ["-data-dir", str(tmp_path / "data"), "-output-dir", str(tmp_path / "run"), "-model-kind", "b2c16",
            "-max-samples", str(total), "-batch-size", "16", "-seed", "11", "-lr-scale", "5", "--quiet",
            "-override-config", "samplesPerEpoch=96,windowMinRows=1000000,lrWarmupSamples=0,metricsEverySamples=64,"
            "checkpointEverySamples=64,swaPeriodSamples=48,numCpuThreads=1"]
    # Ctrl-C: the step finishes, a checkpoint is written, then the process ends as Ctrl-C ends one.
    proc = run_command(args)
    wait_for_checkpoint_beyond(tmp_path / "run", 0, proc)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == -signal.SIGINT, err   # stopped cleanly, then ended as Ctrl-C ends a process
    assert "interrupted" in err
    # SIGKILL after the next checkpoint: the run continues from the last checkpoint on disk.
    proc = run_command(args)
    wait_for_checkpoint_beyond(tmp_path / "run", int(torch.load(tmp_path / "run" / "checkpoint.pt")["samples"]), proc)
    proc.kill()
    proc.wait()
    proc = run_command(args)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert f"trained {total} samples" in err
    assert_same_training_state(reference.output_dir, str(tmp_path / "run"))


def test_training_waits_for_new_data_when_throttled(tmp_path):
    import threading

    write_data(tmp_path, rows=32, files=1)
    messages: list[str] = []
    s = make_settings(tmp_path, samples_per_epoch=32, max_samples=96, max_train_samples_per_new_row=1.0,
                      data_poll_seconds=0.05, export_dir="")
    outcome = {}
    worker = threading.Thread(target=lambda: outcome.update(result=run_training(s, log=messages.append)))
    worker.start()
    deadline = time.monotonic() + 60
    while not any("waiting for new data" in m for m in messages):
        assert worker.is_alive() and time.monotonic() < deadline, messages
        time.sleep(0.02)
    # The first epoch (32 samples) was free; 64 new rows allow the remaining two.
    write_synthetic_files(str(tmp_path / "data"), 64, BOARD, seed=5)
    worker.join(60)
    assert not worker.is_alive() and outcome["result"].samples == 96
    state = ckpt.load_checkpoint(ckpt.checkpoint_path(s.output_dir))
    assert state["bucket"] == {"level": 0.0, "rows_at_fill": 96}


def test_exports_are_katago_models_named_by_samples(tmp_path):
    write_data(tmp_path)
    s = make_settings(tmp_path, max_samples=192, export_every_samples=96)
    result = run_training(s, log=quiet)
    names = sorted(p.name for p in (tmp_path / "models").iterdir())
    assert names == ["kata-b2c16-s192-d80.bin.gz", "kata-b2c16-s192-d80.json",
                     "kata-b2c16-s96-d80.bin.gz", "kata-b2c16-s96-d80.json"]
    assert result.exported[-1].endswith("kata-b2c16-s192-d80.bin.gz")
    desc = read_model_file(result.exported[-1])
    assert desc.version == 15 and desc.name == "kata-b2c16-s192-d80"
    # With SWA snapshots, the export is the average, not the raw weights.
    net, state = trained_net(s.output_dir)
    assert state["swa"]["snapshots"] > 0
    exported = load_model(result.exported[-1]).state_dict()
    for name, tensor in state["swa"]["average"].items():
        assert torch.equal(exported[name], tensor), name


def test_init_model_and_fresh_run_errors(tmp_path):
    write_data(tmp_path)
    shared = MODELS / TEST_B4
    if shared.exists():
        s = make_settings(tmp_path, init_model=str(shared), max_samples=32, export_prefix="tuned")
        result = run_training(s, log=quiet)
        assert os.path.basename(result.exported[-1]) == "tuned-s32-d80.bin.gz"
        assert read_model_file(result.exported[-1]).trunk.trunk_channels == 32
    with pytest.raises(TrainingError, match="does not exist"):
        run_training(make_settings(tmp_path, init_model=str(tmp_path / "none.bin.gz")), log=quiet)
    with pytest.raises(TrainingError, match="unknown model config"):
        run_training(make_settings(tmp_path, output_dir=str(tmp_path / "x"), model_kind="b3c7"), log=quiet)
    old_net = MODELS / G170_B6
    if old_net.exists():   # a net it cannot train (version 8) is refused before the run's first file
        with pytest.raises(TrainingError, match="training needs a version 15"):
            run_training(make_settings(tmp_path, output_dir=str(tmp_path / "v8"), init_model=str(old_net)), log=quiet)
        assert not (tmp_path / "v8" / ckpt.INITIAL_MODEL_FILE).exists()
    with pytest.raises(NoTrainingDataError, match="fewer than one global batch of 1000"):
        run_training(make_settings(tmp_path, output_dir=str(tmp_path / "big"), batch_size=1000), log=quiet)
    junk = tmp_path / "junk-data"   # only unreadable files: the run says why it found no rows
    junk.mkdir()
    (junk / "a.npz").write_bytes(b"not a zip")
    said = []
    with pytest.raises(NoTrainingDataError, match="no training rows"):
        run_training(make_settings(tmp_path, output_dir=str(tmp_path / "j"), data_dir=str(junk)), log=said.append)
    assert any("skipping unreadable training file" in line and "a.npz" in line for line in said)
    assert not (tmp_path / "big").exists()
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    for settings, message in [
        (make_settings(tmp_path, data_dir=str(a_file)), f"data directory {a_file} is not a directory"),
        (make_settings(tmp_path, output_dir=str(a_file)), f"-output-dir {a_file} is a file, not a directory"),
        (make_settings(tmp_path, output_dir=str(a_file / "run")), f"{a_file} is a file, not a directory"),
        (make_settings(tmp_path, export_dir=str(a_file)), f"-export-dir {a_file} is a file, not a directory"),
    ]:   # found before any step (an export directory was found only at the first export)
        with pytest.raises(TrainingError, match=re.escape(message)):
            run_training(settings, log=quiet)


def kata_train(*args: str):
    """Run ``kata train ARGS`` in this process (KataGo-style single-dash flags)."""
    from typer.testing import CliRunner

    from katacli.cli import app, normalize_argv

    return CliRunner().invoke(app, normalize_argv(["train", *args]))


def test_command_reports_user_mistakes_without_traceback(tmp_path):
    missing = kata_train("-data-dir", str(tmp_path / "nothing"), "-output-dir", str(tmp_path / "run"), "--quiet")
    assert missing.exit_code == 1 and missing.stderr.startswith("error: ") and "does not exist" in missing.stderr
    assert not (tmp_path / "run").exists()
    bad_value = kata_train("-data-dir", "x", "-output-dir", "y", "-override-config", "lrScale=abc")
    assert bad_value.exit_code == 1 and "lrScale" in bad_value.stderr and "'abc' is not a number" in bad_value.stderr
    out_of_range = kata_train("-data-dir", "x", "-output-dir", "y", "-batch-size", "0")
    assert out_of_range.exit_code == 1 and "batchSize" in out_of_range.stderr
    bad_schedule = kata_train("-data-dir", "x", "-output-dir", "y", "-override-config", "lrSchedule=(5;1)")
    assert bad_schedule.exit_code == 1 and "lrSchedule" in bad_schedule.stderr
    no_dirs = kata_train("--quiet")
    assert no_dirs.exit_code == 1 and "-data-dir" in no_dirs.stderr
    # Values that would train nothing or ruin the net are refused up front: a NaN learning rate (it was
    # checkpointed, and every resume then failed), a schedule past lrScale's range, no gradient at all.
    for args, key in ((("-lr-scale", "nan"), "lrScale"), (("-override-config", "lrSchedule=(0,1.0),(1280,1e9)"),
                                                           "lrSchedule"),
                      (("-override-config", "lrSchedule=(0,1.0),(1280,-1)"), "lrSchedule"),
                      (("-override-config", "gnormClipScale=0"), "gnormClipScale")):
        refused = kata_train("-data-dir", "x", "-output-dir", "y", *args)
        assert refused.exit_code == 1 and key in refused.stderr and "Traceback" not in refused.output, refused.output
    empty = tmp_path / "empty"
    empty.mkdir()
    no_rows = kata_train("-data-dir", str(empty), "-output-dir", str(tmp_path / "run2"), "--quiet", "-model-kind", "b2c16")
    assert no_rows.exit_code == 1 and "no training rows" in no_rows.stderr
    assert not (tmp_path / "run2").exists()
    for result in (missing, bad_value, out_of_range, bad_schedule, no_dirs, no_rows):
        assert result.exception is None or isinstance(result.exception, SystemExit)
        assert "Traceback" not in result.output
    keys = kata_train("-list-keys")
    assert keys.exit_code == 0 and "lrScale = 1.0" in keys.stdout and "batchSize = 256" in keys.stdout
    helped = kata_train("--help")
    assert helped.exit_code == 0 and "--max-samples" in helped.stdout and "torchrun" in helped.stdout


def test_config_file_and_unknown_key_warning(tmp_path):
    write_data(tmp_path)
    cfg = tmp_path / "train.cfg"
    cfg.write_text("modelKind = b2c16\nbatchSize = 16\nmaxSamples = 32\nlrWarmupSamples = 0\nwindowMinRows = 100\n"
                   "samplesPerEpoch = 16\nlrScal = 2.0\nnumCpuThreads = 1\n")
    done = kata_train("-config", str(cfg), "-data-dir", str(tmp_path / "data"), "-output-dir", str(tmp_path / "run"),
                      "-export-dir", str(tmp_path / "models"), "--quiet")
    assert done.exit_code == 0, done.output
    assert "Unknown config key 'lrScal'" in done.stderr
    assert "trained 32 samples" in done.stderr
    assert sorted(p.name for p in (tmp_path / "models").glob("*.bin.gz")) == ["kata-b2c16-s16-d80.bin.gz", "kata-b2c16-s32-d80.bin.gz"]


def test_only_a_second_ctrl_c_aborts_and_it_is_told_apart():
    # kata train says "aborted without saving (second Ctrl-C)" only for this exception; any other
    # KeyboardInterrupt came before the loop ("interrupted before training began").
    flag = _StopFlag()
    flag._handle(signal.SIGTERM, None)
    flag._handle(signal.SIGTERM, None)   # SIGTERM only ever asks to stop after the step
    assert flag.requested
    with pytest.raises(AbortedBySecondInterrupt):
        flag._handle(signal.SIGINT, None)
    assert issubclass(AbortedBySecondInterrupt, KeyboardInterrupt)


def test_an_empty_checkpoint_says_so(tmp_path):
    empty = tmp_path / ckpt.CHECKPOINT_FILE
    empty.write_bytes(b"")
    with pytest.raises(ckpt.CheckpointError, match=r"cannot read checkpoint \(the file is empty\)"):
        ckpt.load_checkpoint(str(empty))


def test_a_second_run_on_the_same_folder_is_refused_while_the_first_trains(tmp_path):
    # Two runs on one -output-dir interleaved their metrics and wrote over each other's checkpoint.
    from katacli.train.trainer import lock_output_dir

    write_data(tmp_path)
    settings = make_settings(tmp_path, max_samples=32)
    os.makedirs(settings.output_dir)
    held = lock_output_dir(settings.output_dir)   # as a running `kata train` holds it
    try:
        with pytest.raises(TrainingError, match=f"another kata train \\(pid {os.getpid()}\\) is training in"):
            run_training(settings, log=quiet)
    finally:
        held.close()
    assert run_training(settings, log=quiet).samples == 32   # free again: trains
    assert run_training(replace(settings, max_samples=48), log=quiet).samples == 48   # released after a run


def test_a_new_run_that_cannot_start_leaves_no_file(tmp_path):
    # A human-SL net on data without SGF metadata: a clear error, and no initial_model.bin.gz left behind.
    from support.paths import model_path

    write_data(tmp_path)
    settings = make_settings(tmp_path, max_samples=32, init_model=str(model_path("human/test-b3c48nbt-humanmeta.bin.gz")))
    with pytest.raises(Exception, match="needs SGF metadata rows"):
        run_training(settings, log=quiet)
    assert not os.path.exists(ckpt.initial_model_path(settings.output_dir))


def test_data_that_fails_at_an_epoch_start_keeps_what_was_trained(tmp_path, monkeypatch):
    # Files deleted (or one of another board edge added) while training: the epoch that begins next cannot
    # start, and the run stops -- with the samples trained since the last checkpoint saved, not thrown away.
    write_data(tmp_path, rows=80, files=2)
    s = make_settings(tmp_path, max_samples=640, samples_per_epoch=96, checkpoint_every_samples=10**9)
    from katacli.train import trainer as trainer_module

    original = trainer_module.Trainer._prepare_epoch

    def failing_at_the_third_epoch(self, stop, samples=None):
        if (samples or self.samples) >= 2 * 96:
            raise NoTrainingDataError(f"no training rows under {s.data_dir} (.h5/.npz files)")
        return original(self, stop, samples)

    monkeypatch.setattr(trainer_module.Trainer, "_prepare_epoch", failing_at_the_third_epoch)
    with pytest.raises(NoTrainingDataError, match=r"the 176 samples trained so far are saved in .*run the same command again"):
        run_training(s, log=quiet)
    assert ckpt.load_checkpoint(ckpt.checkpoint_path(s.output_dir))["samples"] == 176   # the batch in hand stays untrained
    monkeypatch.setattr(trainer_module.Trainer, "_prepare_epoch", original)
    assert run_training(s, log=quiet).samples == 640   # the same command goes on from there


def test_a_net_whose_outputs_blew_up_is_not_exported(tmp_path):
    from katacli.train.exporting import model_with_weights, nonfinite_outputs

    model = load_model(MODELS / TEST_B4)
    assert nonfinite_outputs(model) == []
    broken = model_with_weights(model, None)
    with torch.no_grad():
        for p in broken.parameters():
            p.mul_(1e30)   # finite weights, outputs that overflow (KataGo: "Got nonfinite for policy sum")
    assert nonfinite_outputs(broken)


def test_ctrl_c_during_the_final_export_lets_it_finish(tmp_path, monkeypatch):
    # Ctrl-C while the last checkpoint or export is written: what is being written is finished (a stop is what
    # the run is doing anyway), not abandoned half made with "interrupted before training began".
    write_data(tmp_path)
    s = make_settings(tmp_path, max_samples=128)
    from katacli.train import trainer as trainer_module

    original = trainer_module.Trainer.export_model

    def export_after_a_ctrl_c(self):
        os.kill(os.getpid(), signal.SIGINT)
        return original(self)

    monkeypatch.setattr(trainer_module.Trainer, "export_model", export_after_a_ctrl_c)
    result = run_training(s, log=quiet)
    assert result.samples == 128 and result.exported and Path(result.exported[-1]).is_file()
    monkeypatch.setattr(trainer_module.Trainer, "export_model", original)
    assert run_training(s, log=quiet).exported == result.exported   # and the checkpoint after it lists it


def test_export_refuses_a_net_whose_outputs_blew_up(tmp_path, monkeypatch):
    write_data(tmp_path)
    s = make_settings(tmp_path, max_samples=64)
    from katacli.train import trainer as trainer_module

    monkeypatch.setattr(trainer_module, "nonfinite_outputs", lambda model: ["policy", "value"])
    with pytest.raises(TrainingError, match="outputs are not finite, so it is not exported"):
        run_training(s, log=quiet)
    assert not list(Path(s.export_dir).glob("*.bin.gz"))


@pytest.mark.parametrize("prefix, expected", [("my net!", "my-net"), ("a  b", "a-b"), ("!!!", "kata-b6c96"),
                                              ("", "kata-b6c96"), ("run_3-x", "run_3-x")])
def test_export_prefixes_become_model_names_without_double_dashes(prefix, expected):
    assert TrainSettings(export_prefix=prefix).export_prefix_for("b6c96") == expected
