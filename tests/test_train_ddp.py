"""DDP: two CPU processes (gloo) launched by torchrun, as documented, train the same net as one
process with the same global batch."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest
import torch
import torch.distributed as dist

from katacli.nn.torch_model import load_model
from katacli.train import checkpoint as ckpt
from katacli.train.settings import TrainSettings
from katacli.train.synthetic import write_synthetic_files
from katacli.train.trainer import run_training


pytestmark = pytest.mark.subprocess  # every test here starts processes
PER_RANK_BATCH = 8
WORLD = 2
MAX_SAMPLES = 160
COMMON_KEYS = ("samplesPerEpoch=64,windowMinRows=1000000,lrWarmupSamples=0,lrScale=5,metricsEverySamples=32,"
               "checkpointEverySamples=1000000,swaPeriodSamples=32,numCpuThreads=1")


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_two_process_ddp_matches_one_process(tmp_path):
    data = tmp_path / "data"
    write_synthetic_files(str(data), 64, 9, num_files=2, seed=2, file_format="h5")
    env = dict(os.environ, OMP_NUM_THREADS="1")  # PYTHONPATH already names this run's katacli (conftest)
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={WORLD}",
           "-m", "katacli.cli", "train", "-data-dir", str(data), "-output-dir", str(tmp_path / "ddp"),
           "-export-dir", str(tmp_path / "models"), "-model-kind", "b2c16", "-max-samples", str(MAX_SAMPLES),
           "-batch-size", str(PER_RANK_BATCH), "-seed", "5", "-device", "cpu", "--quiet", "-override-config", COMMON_KEYS]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    exported = {p.name for p in (tmp_path / "models").iterdir()}
    assert {"kata-b2c16-s64-d64.bin.gz", "kata-b2c16-s128-d64.bin.gz", "kata-b2c16-s160-d64.bin.gz"} <= exported

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        single = TrainSettings(
            data_dir=str(data), output_dir=str(tmp_path / "single"), model_kind="b2c16", max_samples=MAX_SAMPLES,
            batch_size=PER_RANK_BATCH * WORLD, seed=5, samples_per_epoch=64, window_min_rows=1_000_000,
            lr_warmup_samples=0, lr_scale=5.0, metrics_every_samples=32, checkpoint_every_samples=1_000_000,
            swa_period_samples=32, device="cpu")
        run_training(single, log=lambda _m: None)
    finally:
        torch.set_num_threads(threads)

    a = ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "ddp")))
    b = ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "single")))
    assert a["samples"] == b["samples"] == MAX_SAMPLES
    assert a["data"] == b["data"]
    for name, tensor in a["net"].items():
        assert torch.allclose(tensor, b["net"][name], rtol=1e-4, atol=1e-6), name
    # The weights moved, so the equality above is not that of two untouched initialisations.
    start = load_model(ckpt.initial_model_path(str(tmp_path / "ddp"))).state_dict()
    assert max(float((a["net"]["model." + n] - t).abs().max()) for n, t in start.items()) > 1e-3


# A stand-in for `kata` under torchrun that gives one rank a fault of its own (KATA_TEST_FAULT):
# "unreadable": that rank cannot read files named KATA_TEST_FAULT_FILE (a file system that shows it late);
# "data-gone": from its second epoch on, that rank can read no file at all;
# "dies": that rank's process ends at once (as by kill -9) before the step at KATA_TEST_FAULT_SAMPLES;
# "setup": that rank cannot see the data directory (a folder one node lacks).
FAULTY_RANK_LAUNCHER = '''
import os, sys
if os.environ.get("RANK") == os.environ["KATA_TEST_FAULT_RANK"]:
    import katacli.train.rows as R
    import katacli.train.window as W
    import katacli.train.trainer as T
    fault, read_rows = os.environ["KATA_TEST_FAULT"], R.read_rows
    def unreadable(path, *args, **kwargs):
        if fault == "data-gone" or os.environ.get("KATA_TEST_FAULT_FILE", "") in os.path.basename(path):
            raise R.TrainingFileError(f"{path}: cannot be read on this node")
        return read_rows(path, *args, **kwargs)
    if fault == "unreadable":
        R.read_rows = unreadable
    elif fault == "data-gone":
        begin_epoch = W.DataStream.begin_epoch
        def begin_later_epochs_without_data(self, samples, files):
            if self.state.epoch >= 0:
                R.read_rows = unreadable
            return begin_epoch(self, samples, files)
        W.DataStream.begin_epoch = begin_later_epochs_without_data
    elif fault == "setup":
        def cannot_see_the_data(self):
            raise T.TrainingError(f"data directory {self.s.data_dir} does not exist")
        T.Trainer._check_settings = cannot_see_the_data
    elif fault == "dies":
        train_step = T.Trainer.train_step
        def step_or_die(self, batch):
            if self.samples >= int(os.environ["KATA_TEST_FAULT_SAMPLES"]):
                os._exit(9)
            return train_step(self, batch)
        T.Trainer.train_step = step_or_die
from katacli.cli import main
sys.argv = ["kata"] + sys.argv[1:]
main()
'''


TORCHRUN_MONITOR_SECONDS = 5


def _ddp_run_with_a_faulty_rank(tmp_path, fault: str, max_samples: int, **env) -> subprocess.CompletedProcess:
    launcher = tmp_path / "kata_with_fault.py"
    launcher.write_text(FAULTY_RANK_LAUNCHER)
    environment = dict(os.environ, OMP_NUM_THREADS="1", KATA_TEST_FAULT=fault, KATA_TEST_FAULT_RANK="1",
                       **{key: str(value) for key, value in env.items()})
    # torchrun looks at its workers every few seconds here (0.1 s by default): a survivor then meets the lost
    # peer itself, as on a machine where the dead rank was on another node, before torchrun stops it.
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", f"--nproc_per_node={WORLD}",
           "--monitor-interval", str(TORCHRUN_MONITOR_SECONDS), str(launcher),
           "train", "-data-dir", str(tmp_path / "data"), "-output-dir", str(tmp_path / "run"),
           "-model-kind", "b2c16", "-max-samples", str(max_samples), "-batch-size", str(PER_RANK_BATCH), "-seed", "5",
           "-device", "cpu", "--quiet", "-override-config",
           COMMON_KEYS.replace("checkpointEverySamples=1000000", "checkpointEverySamples=64")]
    return subprocess.run(cmd, env=environment, capture_output=True, text=True, timeout=240)


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_a_file_one_rank_cannot_read_is_left_out_by_every_rank(tmp_path):
    # It was skipped by that rank alone, without a word (its log is not shown): the ranks trained on different
    # windows, which breaks the promise of one process's results.
    paths = write_synthetic_files(str(tmp_path / "data"), 96, 9, num_files=3, seed=2, file_format="h5")
    hidden = os.path.basename(paths[1])
    done = _ddp_run_with_a_faulty_rank(tmp_path, "unreadable", 32, KATA_TEST_FAULT_FILE=hidden)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{hidden} out of this epoch's window: rank 1 cannot read it" in done.stderr
    window = ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "run")))["data"]["window"]
    assert [os.path.basename(part["path"]) for part in window] == [os.path.basename(paths[0]), os.path.basename(paths[2])]


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_a_data_error_on_one_rank_stops_every_rank_and_rank_0_saves_what_was_trained(tmp_path):
    # Rank 1 said "the samples trained so far are saved" while rank 0 went on and died in gloo, leaving the
    # checkpoint samples behind.
    write_synthetic_files(str(tmp_path / "data"), 64, 9, num_files=2, seed=2, file_format="h5")
    done = _ddp_run_with_a_faulty_rank(tmp_path, "data-gone", 10_000)
    assert done.returncode != 0
    assert "RuntimeError" not in done.stderr, done.stderr[-3000:]   # (torchrun's own ChildFailedError stays)
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr[-3000:]   # said once, by rank 0
    # The second epoch begins before the batch from 48 to 64 samples is trained.
    assert "(on rank 1)" in errors[0] and "the 48 samples trained so far are saved" in errors[0]
    assert ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "run")))["samples"] == 48


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_a_rank_that_dies_leaves_rank_0_saving_the_last_finished_step(tmp_path):
    write_synthetic_files(str(tmp_path / "data"), 64, 9, num_files=2, seed=2, file_format="h5")
    done = _ddp_run_with_a_faulty_rank(tmp_path, "dies", 10_000, KATA_TEST_FAULT_SAMPLES=96)
    assert done.returncode != 0
    assert "another training process stopped" in done.stderr, done.stderr[-3000:]
    assert "the 96 samples trained so far are saved" in done.stderr
    assert ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "run")))["samples"] == 96


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_a_rank_that_cannot_start_stops_every_rank_and_rank_0_says_why(tmp_path):
    write_synthetic_files(str(tmp_path / "data"), 64, 9, num_files=2, seed=2, file_format="h5")
    done = _ddp_run_with_a_faulty_rank(tmp_path, "setup", 64)
    assert done.returncode != 0
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert errors == [f"error: rank 1: data directory {tmp_path / 'data'} does not exist"], done.stderr[-3000:]


@pytest.mark.skipif(not dist.is_available(), reason="torch.distributed is not available")
def test_a_resumed_window_one_rank_cannot_read_is_agreed_on_before_training(tmp_path):
    # A resumed run read its saved window in each rank's data thread: a file one rank could not read was
    # dropped there alone (different windows again), and a file gone on one rank made it alone rescan.
    paths = write_synthetic_files(str(tmp_path / "data"), 96, 9, num_files=3, seed=2, file_format="h5")
    first = _ddp_run_with_a_faulty_rank(tmp_path, "none", 32)
    assert first.returncode == 0, first.stderr[-3000:]
    hidden = os.path.basename(paths[1])
    done = _ddp_run_with_a_faulty_rank(tmp_path, "unreadable", 48, KATA_TEST_FAULT_FILE=hidden)
    assert done.returncode == 0, done.stderr[-3000:]
    assert f"{hidden} out of this epoch's window: rank 1 cannot read it" in done.stderr
    state = ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "run")))
    assert state["samples"] == 48 and hidden not in {os.path.basename(p["path"]) for p in state["data"]["window"]}
