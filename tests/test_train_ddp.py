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
