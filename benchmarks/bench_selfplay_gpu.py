"""Self-play with a GPU's batching: average network batch, moves/s and rows/s.

Two kinds of run, each for a fixed time after a warm-up (rates are measured over that
window only, so process start-up and network loading do not count):

* ``sim``: on any machine. One self-play process (the share of the GPU config's games that
  one of its worker processes plays) against :mod:`katacli.selfplay.simulated_gpu`, an
  evaluator whose batch call sleeps as a GPU call takes (2 ms + 5 us per position by
  default, the GIL released). Shows whether batches fill as they would on a GPU.
* ``cuda``: where CUDA exists. The real network on the GPU, with the GPU config's worker
  processes (``numSelfplayProcesses``), and the same games with the plain example config
  in one process (the baseline, what `kata selfplay` did on a GPU before the GPU config).

Both play the issue's measurement: 9x9, 100 visits (cheap searches 20), no asymmetric playouts.
Rows are written as games end, in bursts: rows/s is moves/s times the rows per move of the
games finished in the run (RunStats.rows_per_move), the rate a run settles at.

    python benchmarks/bench_selfplay_gpu.py                       # sim, then cuda if present
    python benchmarks/bench_selfplay_gpu.py --mode cuda --cuda-runs baseline --seconds 30
    python benchmarks/bench_selfplay_gpu.py --mode sim --override numSearchThreads=1
"""
from __future__ import annotations

import argparse
import dataclasses
import logging
import os
import shutil
import tempfile
import sys
import time
from pathlib import Path

# Sibling scripts (bench_search_overhead's zero-cost network), even under PYTHONSAFEPATH.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from katacli.config import Config
from katacli.selfplay.settings import SelfplaySettings
from katacli.selfplay.stats import RunStats
from katacli.setup.engine_settings import NNSettings

REPO = Path(__file__).resolve().parents[1]
GPU_CONFIG = REPO / "configs" / "selfplay_gpu_example.cfg"
EXAMPLE_CONFIG = REPO / "configs" / "selfplay_example.cfg"
SHARED_MODEL = REPO.parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
FALLBACK_NET = "b6c96"
# The self-play measurement (9x9, 100 visits, cheap searches of 20, symmetric playouts).
MEASURED_GAMES = {
    "bSizes": "9", "bSizeRelProbs": "1", "allowRectangleProb": "0", "maxVisits": "100",
    "cheapSearchVisits": "20", "reducedVisitsMin": "20", "maxAsymmetricRatio": "1", "logToStdout": "false",
}
POLL_S = 0.25


def load_config(path: Path, overrides: list[str]) -> Config:
    cfg = Config.from_file(path, mode="selfplay")
    cfg.apply_overrides(MEASURED_GAMES)
    for override in overrides:
        cfg.apply_overrides(override)
    return cfg


def num_processes(cfg: Config) -> int:
    return cfg.get("numSelfplayProcesses", "selfplay") if cfg.is_set("numSelfplayProcesses") else 1


class Window:
    """Counters at the end of the warm-up and at the stop: the rates between them."""

    def __init__(self, warmup: float, seconds: float):
        self.warmup, self.seconds = warmup, seconds
        self.first_move_at = self.start_at = self.stop_at = None
        self.start = self.end = None

    def tick(self, stats: RunStats) -> bool:
        """Record what is due; True once the window is over (the caller stops the run)."""
        now = time.monotonic()
        if self.first_move_at is None and stats.moves_played > 0:
            self.first_move_at = now
        if self.first_move_at is not None and self.start is None and now - self.first_move_at >= self.warmup:
            self.start, self.start_at = dataclasses.replace(stats), now
        # Rows per move needs a finished game: the window runs on until one has.
        if self.start is not None and self.end is None and now - self.start_at >= self.seconds \
                and stats.finished_game_moves > 0 and stats.rows_produced > 0:
            self.end, self.stop_at = dataclasses.replace(stats), now
        return self.end is not None

    def result(self, label: str) -> dict:
        if self.end is None:
            raise SystemExit(f"{label}: the run ended before its measuring window (raise --games or lower --warmup)")
        seconds = self.stop_at - self.start_at
        d = {name: getattr(self.end, name) - getattr(self.start, name)
             for name in ("moves_played", "rows_produced", "games_finished", "nn_positions", "nn_batches")}
        moves_per_s = d["moves_played"] / seconds
        # Rows appear in bursts as games end: moves/s times the run's rows per move is the steady rate.
        return {"label": label, "seconds": seconds, "moves_per_s": moves_per_s,
                "rows_per_s": moves_per_s * self.end.rows_per_move, "games": d["games_finished"],
                "nn_per_s": d["nn_positions"] / seconds, "avg_batch": d["nn_positions"] / max(1, d["nn_batches"])}


def run_in_process(cfg: Config, device: str, window: Window, label: str, evaluator_factory=None,
                   threads: int | None = None, search_drivers: int | None = None) -> dict:
    """One self-play process (as `kata selfplay` runs with one process) for the window."""
    from katacli.nn.configs import random_description
    from katacli.nn.torch_model import KataGoModel, load_model
    from katacli.selfplay.model_pool import ModelManager
    from katacli.selfplay.runner import SelfplayRun

    settings = SelfplaySettings.from_config(cfg)
    if threads is not None:
        settings = dataclasses.replace(settings, runner=dataclasses.replace(settings.runner, num_game_threads=threads))
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device=device, evaluator_factory=evaluator_factory)
    if evaluator_factory is None and SHARED_MODEL.is_file():
        manager.install(SHARED_MODEL.name, load_model(SHARED_MODEL))
    else:
        manager.install(f"random-{FALLBACK_NET}", KataGoModel(random_description(FALLBACK_NET, seed=1)))
    try:
        with tempfile.TemporaryDirectory() as out:
            run = SelfplayRun(settings, manager, out, seed=1, search_drivers=search_drivers)

            def on_tick(stats: RunStats) -> None:
                if window.tick(stats):
                    run.request_stop()

            run.run(on_tick=on_tick, handle_signals=False)
    finally:
        manager.close()
    return window.result(label)


def run_processes(cfg: Config, window: Window, label: str, device: str = "cuda",
                  search_drivers: int | None = None) -> dict:
    """The config's worker processes on the GPU for the window (the real `kata selfplay` path)."""
    from katacli.selfplay.processes import ProcessRun, make_jobs

    settings = SelfplaySettings.from_config(cfg)
    nn = NNSettings.from_config(cfg, "selfplay")
    with tempfile.TemporaryDirectory() as tmp:
        models, out = Path(tmp) / "models", Path(tmp) / "out"
        models.mkdir()
        random_init = None
        if SHARED_MODEL.is_file():
            shutil.copy(SHARED_MODEL, models / SHARED_MODEL.name)
        else:
            random_init = FALLBACK_NET
        jobs = make_jobs(settings, min(num_processes(cfg), settings.runner.num_game_threads), nn=nn, cpu_threads=1,
                         pass_alive=settings_pass_alive(cfg), models_dir=str(models), output_dir=str(out),
                         poll_seconds=3600.0, seed=1, random_init=random_init, random_init_seed=1,
                         log_path=str(Path(tmp) / "selfplay.log"), device=device, search_drivers=search_drivers)
        run = ProcessRun(jobs, None)

        def on_tick(stats: RunStats) -> None:
            if window.tick(stats) and not stats.stopping:
                run.request_stop()

        run.run(on_tick=on_tick)
    return window.result(label)


def settings_pass_alive(cfg: Config):
    from katacli.commands.selfplay import read_selfplay_config

    return read_selfplay_config(cfg)[3]


def describe(cfg: Config, processes: int) -> str:
    games = cfg.get("numGameThreads", "selfplay")
    leaves = cfg.get("numSearchThreads", "selfplay")
    return f"{processes} process(es), {games} game threads, numSearchThreads {leaves}"


def show(r: dict) -> None:
    print(f"  {r['label']}: {r['moves_per_s']:.1f} moves/s, {r['rows_per_s']:.2f} rows/s, "
          f"{r['nn_per_s']:.0f} positions/s, average batch {r['avg_batch']:.1f} "
          f"({r['games']} games in {r['seconds']:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mode", choices=["sim", "cuda", "all"], default="all")
    parser.add_argument("--config", type=Path, default=GPU_CONFIG)
    parser.add_argument("--override", action="append", default=[], help="KEY=VALUE,... on top of --config")
    parser.add_argument("--cuda-runs", choices=["config", "baseline", "both"], default="both",
                        help="cuda: --config's processes, the baseline (the example config in one process, as "
                             "`kata selfplay` ran on a GPU before the GPU config), or both")
    parser.add_argument("--warmup", type=float, default=5.0, help="seconds after the first move before measuring")
    parser.add_argument("--seconds", type=float, default=20.0, help="length of the measuring window")
    parser.add_argument("--latency-ms", type=float, default=2.0, help="sim: the GPU call's fixed cost")
    parser.add_argument("--per-position-us", type=float, default=5.0, help="sim: its cost per position")
    parser.add_argument("--sim-network", choices=["requests", "arrays"], default="arrays",
                        help="sim: a stand-in answering per request (selfplay.simulated_gpu) or the real "
                             "NNEvaluator's array path with a zero-cost network, as a search on a GPU runs")
    parser.add_argument("--search-drivers", type=int, default=None,
                        help="driver threads per process stepping the searches (0: each game thread searches; "
                             "default: as kata selfplay chooses on a GPU)")
    args = parser.parse_args()
    logging.disable(logging.WARNING)

    import torch

    cfg = load_config(args.config, args.override)
    processes = num_processes(cfg)
    if args.mode in ("sim", "all"):
        from katacli.selfplay.simulated_gpu import SimulatedGpuEvaluator

        threads = max(1, cfg.get("numGameThreads", "selfplay") // processes)
        batch = cfg.get("nnMaxBatchSize", "selfplay")
        print(f"simulated GPU ({args.latency_ms:g} ms + {args.per_position_us:g} us per position), "
              f"one process of {describe(cfg, processes)}: {threads} game threads", flush=True)
        latency_s, per_position_s = args.latency_ms / 1000, args.per_position_us / 1e6
        if args.sim_network == "arrays":
            from bench_search_overhead import ZeroCostEvaluator

            def factory(model):
                return ZeroCostEvaluator(model, latency_s, per_position_s, max_batch_size=batch)
        else:
            def factory(model):
                return SimulatedGpuEvaluator(latency_s, per_position_s, max_batch_size=batch)
        from katacli.selfplay.runner import default_search_drivers

        drivers = default_search_drivers(threads, "cuda") if args.search_drivers is None else args.search_drivers
        show(run_in_process(cfg, "cpu", Window(args.warmup, args.seconds),
                            f"sim {args.sim_network}, {drivers} search drivers", factory,
                            threads=threads, search_drivers=drivers))
    if args.mode in ("cuda", "all"):
        if not torch.cuda.is_available():
            print("CUDA not available: no GPU runs")
            return
        model = SHARED_MODEL.name if SHARED_MODEL.is_file() else f"random {FALLBACK_NET}"
        print(f"{torch.cuda.get_device_name()}, {os.cpu_count()} CPU cores, {model}", flush=True)
        if args.cuda_runs in ("baseline", "both"):
            base = load_config(EXAMPLE_CONFIG, [])
            print(f" baseline: {EXAMPLE_CONFIG.name}, 1 process, {base.get('numGameThreads', 'selfplay')} game "
                  f"threads, numSearchThreads {base.get('numSearchThreads', 'selfplay')}", flush=True)
            show(run_in_process(base, "cuda", Window(args.warmup, args.seconds), "baseline"))
        if args.cuda_runs in ("config", "both"):
            print(f" {args.config.name}: {describe(cfg, processes)}", flush=True)
            label = "gpu config" if args.search_drivers is None else f"gpu config, {args.search_drivers} search drivers"
            show(run_processes(cfg, Window(args.warmup, args.seconds), label, search_drivers=args.search_drivers))


if __name__ == "__main__":
    main()
