"""Whole self-play runs: in-process, through `kata selfplay`, killed with SIGKILL, stopped with SIGINT."""
from __future__ import annotations

import gzip
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from katacli.cpu_cores import usable_cpu_count
from katacli.data import GT, TrainingFile, join_game_hash, list_training_files
from katacli.nn.export import write_model_file
from katacli.nn.configs import random_description
from katacli.selfplay.model_pool import ModelManager, NoModelError, find_latest_model
from katacli.selfplay.runner import SelfplayRun, default_search_drivers
from katacli.setup.engine_settings import NNSettings
from katacli.worker_processes import REPEATED_SIGNAL_SECONDS

from support.compile import needs_cxx_compiler
from support.paths import BUNDLED_TINY_MODEL
from support.selfplay import (
    EXAMPLE_CONFIG, SHARED_TEST_MODEL, TINY_OVERRIDES, random_model, subprocess_env, tiny_config,
)
from support.processes import HAS_PROC, wait_until_gone, worker_pids

CLI = [sys.executable, "-m", "katacli.cli", "selfplay"]
# Every turn gets a full search and a row, so every finished game shows up in the data. Forks are off:
# a fork can start where the board is already all pass-alive, a game that ends before its first turn
# (an SGF line, no rows, as in KataGo), which made the exact game counts below fail about once in 50 runs.
ALL_ROWS = ("cheapSearchProb=0,policySurpriseDataWeight=0,valueSurpriseDataWeight=0,"
            "forkGameProb=0,earlyForkGameProb=0,sekiForkHackProb=0")
# Shorter games for the runs in a subprocess.
SHORT_GAMES = "maxMovesPerGame=50"


def check_output_dir(out: Path) -> tuple[int, int]:
    """Every .h5 opens and holds whole games; returns (games, rows) found in the files."""
    games = rows = 0
    for path in list_training_files(out / "tdata"):
        with TrainingFile(path) as f:
            data = f.read()
            assert f.num_rows == f.attrs["num_rows"] and f.num_games == f.attrs["num_games"]
            g = data["globalTargetsNC"]
            hashes = set()
            for first, count in f.game_rows:
                block = g[first:first + count]
                key = join_game_hash(block[0, GT.GAME_HASH:GT.GAME_HASH + 6])
                assert key not in hashes  # each game lies in one contiguous block
                hashes.add(key)
                main = block[block[:, GT.OWNERSHIP_WEIGHT] > 0]
                turns = main[:, GT.TURN_IDX]
                assert (np.diff(turns) >= 0).all()
            assert np.isfinite(g).all() and (data["scoreDistrN"].astype(int).sum(axis=1) == 100).all()
            games += f.num_games
            rows += f.num_rows
    return games, rows


def sgf_lines(out: Path) -> int:
    return sum(len(p.read_text().splitlines()) for p in (out / "sgfs").glob("*.sgfs"))


def model_dir(tmp_path: Path, shared: bool = True) -> Path:
    """A models directory with the shared test net (if present and wanted), else a tiny random-weight net file."""
    models = tmp_path / "models"
    models.mkdir()
    if shared and SHARED_TEST_MODEL.is_file():
        shutil.copy(SHARED_TEST_MODEL, models / SHARED_TEST_MODEL.name)
    else:
        write_model_file(random_description("b2c16", seed=3, model_name="tiny"), models / "tiny.bin.gz")
    return models


def run_cli(*args, **kwargs):
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=180, env=subprocess_env(), **kwargs)


# ---------------------------------------------------------------------------- in process


def test_in_process_run_writes_whole_games(tmp_path):
    cfg = tiny_config(ALL_ROWS + ",maxRowsPerTrainFile=25,firstFileRandMinProp=1.0")
    from katacli.selfplay.settings import SelfplaySettings
    settings = SelfplaySettings.from_config(cfg)
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device="cpu")
    manager.install("random-b2c16", random_model("b2c16", 4))
    run = SelfplayRun(settings, manager, tmp_path / "out", max_games_total=4, seed=1)
    ticks = []
    stats = run.run(on_tick=ticks.append, handle_signals=False)
    manager.close()
    assert stats.games_finished == 4 and ticks
    games, rows = check_output_dir(tmp_path / "out")
    assert games == 4 and rows == stats.rows_written == stats.rows_produced
    assert sgf_lines(tmp_path / "out") == 4


@needs_cxx_compiler
def test_a_compiled_net_compiles_when_installed_not_in_the_games_first_batches(tmp_path, caplog):
    from torch._dynamo.utils import counters

    cfg = tiny_config(ALL_ROWS + f",cudaUseTorchCompile=true,homeDataDir={tmp_path / 'home'}")
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device="cpu")
    with caplog.at_level("INFO", logger="katacli.selfplay"):
        handle = manager.install("random-b2c16", random_model("b2c16", 4))
    evaluator = manager._models["random-b2c16"].batcher.evaluator
    assert evaluator.runner.compiled and "torch.compile" in evaluator.describe_device()
    assert "model random-b2c16-4: Compiling the network" in caplog.text   # (the model's own name)
    graphs = counters["stats"]["unique_graphs"]
    spatial = np.zeros((5, 22, 19, 19), np.float32)
    spatial[:, 0] = 1.0
    evaluator.runner(spatial, np.zeros((5, 19), np.float32), None, True)   # a 19x19 batch: compiled already
    assert counters["stats"]["unique_graphs"] == graphs
    assert handle is not None
    manager.close()


def test_searches_stepped_by_driver_threads_write_whole_games(tmp_path):
    """As a GPU run steps them: each game thread hands its searches to a driver and waits per search."""
    cfg = tiny_config(ALL_ROWS + ",numGameThreads=5")
    from katacli.selfplay.settings import SelfplaySettings
    settings = SelfplaySettings.from_config(cfg)
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device="cpu")
    manager.install("random-b2c16", random_model("b2c16", 4))
    run = SelfplayRun(settings, manager, tmp_path / "out", max_games_total=6, seed=1, search_drivers=2)
    driver = manager.acquire().net.driver
    assert manager.search_drivers == 2 and len(driver.drivers) == 2
    stats = run.run(handle_signals=False)
    rounds = sum(d.rounds for d in driver.drivers)
    manager.close()
    assert stats.games_finished == 6
    games, rows = check_output_dir(tmp_path / "out")
    assert games == 6 and rows == stats.rows_written == stats.rows_produced
    # Every search went through the drivers, several to a round.
    assert rounds > 0 and stats.nn_positions / stats.nn_batches > 1.0
    assert not any(thread.name.startswith("search-driver") for thread in threading.enumerate())


def test_search_drivers_by_device():
    assert default_search_drivers(8, "cpu") == 0
    assert default_search_drivers(64, "cuda") == 4
    assert default_search_drivers(2, "cuda") == 2


def test_model_directory_watching(tmp_path):
    manager = ModelManager(NNSettings.from_config(tiny_config(), "selfplay"), device="cpu",
                           loader=lambda path: random_model("b2c16", 1))
    with pytest.raises(NoModelError):
        manager.poll(tmp_path)
    (tmp_path / "old.bin.gz").write_bytes(b"x")
    os.utime(tmp_path / "old.bin.gz", ns=(1_000_000_000, 1_000_000_000))
    assert manager.poll(tmp_path) and manager.latest_name() == "old.bin.gz"
    assert not manager.poll(tmp_path)
    handle = manager.acquire()
    (tmp_path / "run7").mkdir()
    (tmp_path / "run7" / "model.bin.gz").write_bytes(b"x")  # generic name: the directory names it
    (tmp_path / "notes.txt").write_text("ignored")
    assert find_latest_model(tmp_path).name == "run7"
    assert manager.poll(tmp_path) and manager.latest_name() == "run7"
    manager.release(handle)
    assert manager.acquire().name == "run7"
    manager.close()


# ---------------------------------------------------------------------------- the command


@pytest.mark.subprocess
def test_cli_small_run(tmp_path):
    models = model_dir(tmp_path)
    out = tmp_path / "out"
    result = run_cli("-models-dir", str(models), "-output-dir", str(out), "-config", str(EXAMPLE_CONFIG),
                     "-override-config", TINY_OVERRIDES, "-override-config", ALL_ROWS,
                     "-override-config", SHORT_GAMES, "-override-config", "ponderingEnabled=true",
                     "-max-games-total", "2", "-quiet")
    assert result.returncode == 0, result.stderr
    games, rows = check_output_dir(out)
    assert games == 2 and rows > 0 and sgf_lines(out) == 2
    assert list(out.glob("log-*.log")) and list(out.glob("selfplay-*.cfg"))
    # A key self-play never reads is named, as KataGo's warnUnusedKeys does (it was silently ignored).
    unused = "WARNING: Unused key 'ponderingEnabled' in -override-config: kata selfplay does not use it here"
    assert result.stderr.count(unused) == 1 and unused in next(out.glob("log-*.log")).read_text()
    assert "Unused key" not in result.stderr.replace(unused, "")   # the example config's keys are all read


@pytest.mark.subprocess
@pytest.mark.parametrize("processes", [1, 2])
def test_cli_exact_game_count_in_one_or_several_processes(tmp_path, processes):
    models = model_dir(tmp_path)
    out = tmp_path / "out"
    result = run_cli("-models-dir", str(models), "-output-dir", str(out), "-config", str(EXAMPLE_CONFIG),
                     "-override-config", TINY_OVERRIDES, "-override-config", ALL_ROWS,
                     "-override-config", f"{SHORT_GAMES},numGameThreads=3,numSelfplayProcesses={processes}",
                     "-max-games-total", "3", "-quiet")
    assert result.returncode == 0, result.stderr
    games, rows = check_output_dir(out)
    assert games == 3 and rows > 0 and sgf_lines(out) == 3
    (log,) = out.glob("log-*.log")  # one log, shared by the workers
    text = log.read_text()
    if processes > 1:
        assert "[worker 0]" in text and "[worker 1]" in text
        assert len(list(out.glob("tdata/*.h5"))) >= 2  # each worker writes its own files
    assert "average batch" in text


@pytest.mark.subprocess
def test_a_failing_worker_stops_the_run_with_a_clear_error(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    write_model_file(random_description("b2c16", seed=3, model_name="tiny"), models / "tiny.bin.gz")
    out = tmp_path / "out"
    out.mkdir()
    (out / "tdata").write_text("")  # a file where each worker makes its training-data folder: every worker fails
    result = run_cli("-models-dir", str(models), "-output-dir", str(out), "-config", str(EXAMPLE_CONFIG),
                     "-override-config", TINY_OVERRIDES, "-override-config", "numSelfplayProcesses=2",
                     "-max-games-total", "2", "-quiet")
    assert result.returncode == 2
    assert result.stderr.startswith("error: self-play stopped: worker") and "Traceback" not in result.stderr


def test_a_model_cut_short_is_refused_before_workers_start(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    # Whole gzip and a readable header, weights cut short: the start-up check parses the whole body.
    whole = tmp_path / "whole.bin.gz"
    write_model_file(random_description("b2c16", seed=3, model_name="tiny"), whole)
    contents = gzip.decompress(whole.read_bytes())
    (models / "broken.bin.gz").write_bytes(gzip.compress(contents[: len(contents) // 2]))
    result = run_cli("-models-dir", str(models), "-output-dir", str(tmp_path / "out"), "-config", str(EXAMPLE_CONFIG),
                     "-override-config", TINY_OVERRIDES, "-override-config", "numSelfplayProcesses=2",
                     "-max-games-total", "2", "-quiet")
    assert result.returncode != 0 and "broken.bin.gz" in result.stderr
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_threads_are_shared_out_evenly():
    from katacli.worker_processes import default_num_processes, split_threads

    assert split_threads(16, 2) == [8, 8] and split_threads(5, 3) == [2, 2, 1]
    assert default_num_processes(1, "cpu") == 1 and default_num_processes(64, "cuda") == 1
    assert default_num_processes(64, "cpu") == usable_cpu_count()


def test_cpu_sizing_follows_the_cores_this_process_may_use(monkeypatch):
    # A process pinned to 2 of a machine's 64 cores (taskset, a container's cpuset) sizes its worker processes,
    # batch servers and network threads by those 2, not by the machine.
    import katacli.nn.batching as batching
    import katacli.nn.evaluator as evaluator_module
    import katacli.worker_processes as worker_processes

    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    for module in (worker_processes, batching, evaluator_module):
        monkeypatch.setattr(module, "usable_cpu_count", lambda: 2)
    assert worker_processes.default_num_processes(64, "cpu") == 2
    evaluator = evaluator_module.NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu")
    evaluator.set_parallel_threads()
    assert evaluator.parallel_threads == 2
    batcher = batching.BatchingEvaluator(evaluator)
    try:
        assert batcher.num_server_threads == 2
    finally:
        batcher.close()


def run_in_process(capsys, *args) -> tuple[int, str]:
    """`kata selfplay ...` in this process (quick: no interpreter start-up); (exit code, stderr)."""
    from katacli.cli import main
    try:
        main(["selfplay", *args])
        code = 0
    except SystemExit as exc:
        code = exc.code or 0
    return code, capsys.readouterr().err


def test_cli_errors_are_clear(tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    base = ["-models-dir", str(empty), "-output-dir", str(tmp_path / "out"), "-config", str(EXAMPLE_CONFIG),
            "-override-config", TINY_OVERRIDES]
    cases = [
        ([], "no model in"),
        (["-override-config", "bSizesXY=9-9"], "exactly one of bSizes"),
        (["-max-games-total", "0"], "positive"),
        (["-max-games-total", str(2**64)], "positive"),   # KataGo's 64-bit count (it ran without limit)
        (["-random-init", "b99c1"], "unknown model config"),
        (["-override-config", "maxVisits=abc"], "maxVisits"),
    ]
    for extra, message in cases:
        code, err = run_in_process(capsys, *base, *extra)
        assert code == 1 and message in err and err.startswith("error:"), (extra, err)
    code, err = run_in_process(capsys, "-models-dir", str(empty), "-output-dir", str(tmp_path / "out"),
                               "-config", str(tmp_path / "missing.cfg"))
    assert code == 1 and "not found" in err
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    code, err = run_in_process(capsys, "-models-dir", str(empty), "-output-dir", str(a_file), *base[4:])
    assert code == 1 and err.startswith(f"error: -output-dir {a_file} is not a directory"), err
    # A broken newest network is found before any game or worker starts.
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "net.bin.gz").write_bytes(b"\x1f\x8b not really gzip")
    code, err = run_in_process(capsys, "-models-dir", str(broken), *base[2:])
    assert code == 1 and err.startswith("error: -models-dir: ") and "not a valid gzip file" in err, err
    assert len(err.strip().splitlines()) == 1


def test_random_init_bootstrap(tmp_path, capsys):
    empty = tmp_path / "models"
    empty.mkdir()
    out = tmp_path / "out"
    code, err = run_in_process(capsys, "-models-dir", str(empty), "-output-dir", str(out), "-config",
                               str(EXAMPLE_CONFIG), "-override-config", TINY_OVERRIDES, "-max-games-total", "2",
                               "-random-init", "b2c16", "-quiet")
    assert code == 0, err
    assert sgf_lines(out) == 2
    for path in list_training_files(out / "tdata"):
        with TrainingFile(path) as f:
            assert f.attrs["model"] == "random-b2c16"


def _start(tmp_path: Path, extra: str, new_session: bool = False) -> tuple[subprocess.Popen, Path]:
    """``new_session``: in a process group of its own (as `timeout` or a service manager runs it)."""
    models = model_dir(tmp_path, shared=False)  # the tiniest net: these tests are about files, not play
    out = tmp_path / "out"
    proc = subprocess.Popen([*CLI, "-models-dir", str(models), "-output-dir", str(out), "-config",
                             str(EXAMPLE_CONFIG), "-override-config", TINY_OVERRIDES, "-override-config", extra,
                             "-override-config", SHORT_GAMES, "-quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            text=True, env=subprocess_env(), start_new_session=new_session)
    return proc, out


def _wait_for(condition, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if proc.poll() is not None:
            pytest.fail(f"selfplay exited early: {proc.stderr.read()}")
        if time.monotonic() > deadline:
            proc.kill()
            pytest.fail("selfplay made no progress")
        time.sleep(0.1)


@pytest.mark.subprocess
def test_sigkill_leaves_only_readable_files(tmp_path):
    # One file per game or two, so a kill is likely to land while a file is being written.
    proc, out = _start(tmp_path, ALL_ROWS + ",maxRowsPerTrainFile=1,firstFileRandMinProp=1.0,numGameThreads=3")
    _wait_for(lambda: len(list_training_files(out / "tdata")) >= 2, proc)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    games, rows = check_output_dir(out)
    assert games >= 2 and rows > 0
    leftovers = [p for p in (out / "tdata").iterdir() if not p.name.endswith(".h5")]
    assert all(p.name.startswith(".") and p.name.endswith(".partial") for p in leftovers)
    for line in (out / "sgfs").glob("*.sgfs"):
        text = line.read_text()
        assert all(l.startswith("(;") and l.endswith(")") for l in text.splitlines())


@pytest.mark.subprocess
def test_sigint_flushes_finished_games(tmp_path):
    proc, out = _start(tmp_path, ALL_ROWS + ",maxRowsPerTrainFile=100000,numGameThreads=2")
    _wait_for(lambda: sgf_lines(out) >= 2, proc)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    games, rows = check_output_dir(out)
    assert games == sgf_lines(out) >= 2  # every finished game reached a complete file
    assert not [p for p in (out / "tdata").iterdir() if p.name.endswith(".partial")]


@pytest.mark.subprocess
@pytest.mark.skipif(not HAS_PROC, reason="needs Linux /proc to find the worker processes")
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["INT", "TERM"])
def test_a_stop_sent_to_the_command_and_its_process_group_writes_every_finished_game(tmp_path, signum):
    """`timeout -s SIG` signals the command and then its whole process group; a service manager's stop
    signals every process of the group. The parent then gets the stop twice and the workers get it from
    both the group and the parent: still one clean stop, as KataGo's any number of signals (before, the
    repeat was taken for a second Ctrl-C and the buffered rows were lost)."""
    proc, out = _start(tmp_path, ALL_ROWS + ",maxRowsPerTrainFile=100000,numSelfplayProcesses=2",
                       new_session=True)
    _wait_for(lambda: sgf_lines(out) >= 2 and len(worker_pids(proc)) == 2, proc)
    os.kill(proc.pid, signum)
    os.killpg(proc.pid, signum)
    assert proc.wait(timeout=60) == 0, proc.stderr.read()
    games, rows = check_output_dir(out)
    assert games == sgf_lines(out) >= 2 and rows > 0   # every finished game's rows were written


@pytest.mark.subprocess
@pytest.mark.skipif(not HAS_PROC, reason="needs Linux /proc to find the worker processes")
def test_a_killed_worker_ends_the_run_with_an_error_and_leaves_readable_files(tmp_path):
    proc, out = _start(tmp_path, ALL_ROWS + ",maxRowsPerTrainFile=1,firstFileRandMinProp=1.0,numSelfplayProcesses=2")
    _wait_for(lambda: len(list_training_files(out / "tdata")) >= 1 and len(worker_pids(proc)) == 2, proc)
    os.kill(worker_pids(proc)[0], signal.SIGKILL)
    assert proc.wait(timeout=60) == 2
    assert "exited with status -9" in proc.stderr.read()
    games, rows = check_output_dir(out)
    assert games >= 1 and rows > 0


@pytest.mark.subprocess
@pytest.mark.skipif(not HAS_PROC, reason="needs Linux /proc to find the worker processes")
def test_workers_die_with_a_killed_parent_and_a_second_signal_exits_at_once(tmp_path):
    proc, out = _start(tmp_path, ALL_ROWS + ",numSelfplayProcesses=2")
    _wait_for(lambda: sgf_lines(out) >= 1 and len(worker_pids(proc)) == 2, proc)
    workers = worker_pids(proc)
    proc.send_signal(signal.SIGINT)
    # Two signals at once reach a Python handler once; the second must land while the workers stop
    # (0.3-0.4 s here, 2026-11-27, after the start-up objects were frozen: their exit no longer walks them).
    time.sleep(0.15)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=60) == 130
    wait_until_gone(workers)
    check_output_dir(out)


def test_a_second_signal_exits_at_once_but_the_same_stop_delivered_twice_does_not(tmp_path, monkeypatch):
    from katacli.selfplay import runner as runner_module
    from katacli.selfplay.settings import SelfplaySettings

    cfg = tiny_config()
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device="cpu")
    manager.install("random-b2c16", random_model("b2c16", 4))
    run = SelfplayRun(SelfplaySettings.from_config(cfg), manager, tmp_path / "out", max_games_total=1)
    exits = []
    monkeypatch.setattr(runner_module.os, "_exit", exits.append)
    run._on_signal(signal.SIGINT, None)
    assert run.stats.stopping and exits == []
    # The same stop delivered twice (`timeout` signals the command, then its process group): still a clean stop
    run._on_signal(signal.SIGINT, None)
    assert exits == []
    # A second Ctrl-C later on: leave at once
    run._stop_signals.first_at -= REPEATED_SIGNAL_SECONDS
    run._on_signal(signal.SIGINT, None)
    assert exits == [runner_module.EXIT_INTERRUPTED]
    # A worker process never leaves by itself (its parent does, and it dies with the parent)
    run._force_quit_allowed = False
    run._on_signal(signal.SIGTERM, None)
    assert exits == [runner_module.EXIT_INTERRUPTED]
    run.output.close()
    manager.close()


def test_a_model_file_that_will_not_load_is_said_once_and_retried_when_it_changes(tmp_path, caplog):
    loads = []

    def loader(path):
        loads.append(path.name)
        if path.read_bytes() == b"broken":
            raise ValueError("not a valid gzip file")
        return random_model("b2c16", 1)

    manager = ModelManager(NNSettings.from_config(tiny_config(), "selfplay"), device="cpu", loader=loader)
    (tmp_path / "a.bin.gz").write_bytes(b"x")
    os.utime(tmp_path / "a.bin.gz", ns=(1_000_000_000, 1_000_000_000))
    assert manager.poll(tmp_path)
    (tmp_path / "b.bin.gz").write_bytes(b"broken")
    os.utime(tmp_path / "b.bin.gz", ns=(2_000_000_000, 2_000_000_000))
    with caplog.at_level("WARNING"):
        assert not manager.poll(tmp_path) and not manager.poll(tmp_path) and not manager.poll(tmp_path)
    assert loads.count("b.bin.gz") == 1 and caplog.text.count("could not load") == 1   # not once a poll, forever
    (tmp_path / "b.bin.gz").write_bytes(b"whole now")   # the copy finished: it changed, so it is tried again
    os.utime(tmp_path / "b.bin.gz", ns=(3_000_000_000, 3_000_000_000))
    assert manager.poll(tmp_path) and manager.latest_name() == "b.bin.gz"
    for name in ("a.bin.gz", "b.bin.gz"):   # the folder emptied: the run goes on with its model, and says so once
        (tmp_path / name).unlink()
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert not manager.poll(tmp_path) and not manager.poll(tmp_path)
    assert caplog.text.count("now no model is in") == 1 and manager.latest_name() == "b.bin.gz"
    manager.close()
