"""Self-play that fills GPU batches: the GPU config against a simulated GPU (CPU), and a short run on CUDA."""
from __future__ import annotations

import dataclasses
import time

import numpy as np
import pytest

from katacli.config import Config
from katacli.data import TrainingFile, list_training_files
from katacli.nn.request import NNRequest
from katacli.selfplay.model_pool import ModelManager
from katacli.selfplay.progress import status_line
from katacli.selfplay.runner import SelfplayRun
from katacli.selfplay.settings import SelfplaySettings
from katacli.selfplay.simulated_gpu import SimulatedGpuEvaluator
from katacli.selfplay.stats import RunStats
from katacli.setup.engine_settings import NNSettings

from support.paths import CONFIGS
from support.selfplay import random_model

GPU_CONFIG = CONFIGS / "selfplay_gpu_example.cfg"
# The measurement (9x9, 100 visits, cheap searches of 20), with games cut short so that a
# test run stays short: batches depend on the games in flight, not on how long they last.
SHORT_9X9 = ("bSizes=9,bSizeRelProbs=1,allowRectangleProb=0,dataBoardLen=9,maxVisits=100,cheapSearchVisits=20,"
             "reducedVisitsMin=20,maxAsymmetricRatio=1,komiAuto=false,komiMean=7,logToStdout=false,"
             "maxMovesPerGame=12,initGamesWithPolicy=false,cheapSearchProb=0.5")
# KataGo's GPU self-play fills batches of hundreds; the GPU config must reach at least this on average.
MIN_GPU_AVERAGE_BATCH = 64
SIM_LATENCY_S = 0.002
SIM_PER_POSITION_S = 5e-6


def request(board: int, white: bool = False, stones: int = 0) -> NNRequest:
    spatial = np.zeros((22, board, board), np.float32)
    spatial[0] = 1.0
    spatial[1].flat[:stones] = 1.0  # the mover's stones
    legal = np.ones(board * board + 1, bool)
    legal[0] = False
    return NNRequest(spatial, np.zeros(19, np.float32), legal, board, board, white_to_move=white)


def test_simulated_gpu_times_and_answers_batches_per_board_size():
    sim = SimulatedGpuEvaluator(latency_s=0.01, per_position_s=0.0, max_batch_size=4)
    requests = [request(9, stones=5)] * 6 + [request(7)] * 2
    start = time.perf_counter()
    outputs = sim.evaluate_uncached(requests)
    # 9x9: two calls (4 + 2), 7x7: one -- as NNEvaluator splits by shape and max batch size.
    assert time.perf_counter() - start >= 3 * 0.01
    assert (sim.num_batches, sim.num_positions_evaluated) == (3, 8)
    first = outputs[0]
    assert first.policy[0] == -1.0 and first.policy.shape == (81,)
    assert first.policy[first.policy >= 0].sum() + first.policy_pass == pytest.approx(1.0)
    assert first.white_win < 0.5  # Black to move with five more stones: White is behind
    assert outputs[-1].policy.shape == (49,) and sim.lookup_cache(requests[0]) is None
    with pytest.raises(ValueError):
        SimulatedGpuEvaluator(latency_s=-1.0)


def gpu_config(extra: str = "") -> Config:
    cfg = Config.from_file(GPU_CONFIG, mode="selfplay")
    cfg.apply_overrides(SHORT_9X9)
    if extra:
        cfg.apply_overrides(extra)
    return cfg


def run_one_process(cfg: Config, tmp_path, evaluator_factory=None, device: str = "cpu"):
    """One worker process's share of the config's games, each thread playing one game."""
    settings = SelfplaySettings.from_config(cfg)
    threads = settings.runner.num_game_threads // cfg.get("numSelfplayProcesses", "selfplay")
    settings = dataclasses.replace(settings, runner=dataclasses.replace(settings.runner, num_game_threads=threads))
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device=device, evaluator_factory=evaluator_factory)
    manager.install("random-b2c16", random_model("b2c16", 4))
    run = SelfplayRun(settings, manager, tmp_path / "out", max_games_total=threads, seed=1)
    try:
        stats = run.run(handle_signals=False)
    finally:
        manager.close()
    return threads, stats


def test_gpu_config_fills_batches_against_a_simulated_gpu(tmp_path):
    cfg = gpu_config()
    batch = cfg.get("nnMaxBatchSize", "selfplay")
    threads, stats = run_one_process(
        cfg, tmp_path, lambda model: SimulatedGpuEvaluator(SIM_LATENCY_S, SIM_PER_POSITION_S, max_batch_size=batch))
    assert stats.games_finished == threads and stats.rows_written > 0
    assert stats.average_batch >= MIN_GPU_AVERAGE_BATCH, status_line(stats)
    assert stats.nn_batches > 0 and "average batch" in status_line(stats)


def test_run_stats_network_and_row_rates():
    stats = RunStats(nn_positions=600, nn_batches=8, rows_produced=30, finished_game_moves=120)
    assert stats.average_batch == 75.0 and stats.rows_per_move == 0.25
    assert RunStats().average_batch == 0.0 and RunStats().rows_per_move == 0.0
    assert "average batch 75.0" in status_line(stats)


def test_model_manager_counts_closed_models_too():
    cfg = gpu_config()
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device="cpu",
                           evaluator_factory=lambda model: SimulatedGpuEvaluator(0.0, 0.0))
    first = manager.install("first", random_model("b2c16", 1))
    first.net.evaluator.evaluate_many([request(9)] * 3)
    second = manager.install("second", random_model("b2c16", 2))  # "first" is unused: closed
    second.net.evaluator.evaluate(request(9))
    deadline = time.monotonic() + 5.0
    while manager.network_counts() != (4, 2) and time.monotonic() < deadline:
        time.sleep(0.01)  # the old model closes on a thread of its own
    assert manager.network_counts() == (4, 2)
    manager.close()
    assert manager.network_counts() == (4, 2)


@pytest.mark.cuda
def test_short_selfplay_on_the_gpu_writes_rows(tmp_path):
    cfg = gpu_config("numGameThreads=128,numSelfplayProcesses=8,maxVisits=32,cheapSearchVisits=8")
    threads, stats = run_one_process(cfg, tmp_path, device="cuda")
    assert stats.games_finished == threads and stats.nn_positions > 0 and stats.average_batch > 1.0
    rows = 0
    for path in list_training_files(tmp_path / "out" / "tdata"):
        with TrainingFile(path) as f:
            data = f.read()
            assert np.isfinite(data["globalTargetsNC"]).all()
            rows += f.num_rows
    assert rows == stats.rows_written > 0


@pytest.mark.subprocess
def test_gpu_benchmark_runs_against_the_simulated_gpu():
    import subprocess
    import sys

    from support.paths import REPO
    from support.selfplay import subprocess_env

    result = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "bench_selfplay_gpu.py"), "--mode", "sim", "--warmup", "0.5",
         "--seconds", "1", "--override", "maxMovesPerGame=12,initGamesWithPolicy=false"],
        capture_output=True, text=True, timeout=180, env=subprocess_env())
    assert result.returncode == 0, result.stderr
    line = next(text for text in result.stdout.splitlines() if text.strip().startswith("sim "))
    average = float(line.split("average batch ")[1].split()[0])
    assert average >= MIN_GPU_AVERAGE_BATCH and " rows/s" in line, result.stdout
