"""benchmarks/bench_train.py measures where it says: a CPU row's net is on the CPU, a CUDA row's on the GPU."""
from __future__ import annotations

import sys

import pytest
import torch

from katacli.config_keys.spec import Enabled
from katacli.train.synthetic import write_synthetic_files

from support.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import bench_train  # noqa: E402
from support.torch_threads import one_cpu_thread  # noqa: F401  (autouse fixture)

BOARD = 9
ROWS = 32


def trainer_for(tmp_path, device: str, precision: str = "off") -> bench_train.Trainer:
    write_synthetic_files(str(tmp_path / "data"), ROWS, BOARD, seed=4)
    case = bench_train.Case("b2c16", BOARD, 8, device, precision)
    return bench_train.make_trainer(case, str(tmp_path / "data"), str(tmp_path / "run"), compile_net=Enabled.FALSE)


def test_a_cpu_row_runs_and_says_cpu(tmp_path):
    trainer = trainer_for(tmp_path, "cpu")
    assert next(trainer.net.parameters()).device.type == "cpu"
    label = bench_train.ran_on(trainer)
    assert label.startswith("cpu (") and bench_train.cpu_model() in label
    train_rate, data_rate = bench_train.time_steps(trainer, 0.2)
    assert train_rate > 0 and data_rate > 0


def test_only_keeps_the_cases_of_one_net_and_precision():
    kept = [(c.model_kind, c.precision) for c in bench_train.CUDA_CASES if bench_train._selected(c, "b18c384nbt:bf16")]
    assert kept == [("b18c384nbt", "bf16")]
    assert len([c for c in bench_train.CUDA_CASES if bench_train._selected(c, "b6c96")]) == 2
    assert all(bench_train._selected(c, "") for c in bench_train.CUDA_CASES)


@pytest.mark.cuda
def test_a_cuda_row_runs_on_the_gpu_and_names_it(tmp_path):
    trainer = trainer_for(tmp_path, "cuda", "bf16")
    assert next(trainer.net.parameters()).device.type == "cuda"
    assert bench_train.ran_on(trainer) == f"cuda ({torch.cuda.get_device_name()})"
