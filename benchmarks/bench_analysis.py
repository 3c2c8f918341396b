#!/usr/bin/env python3
"""Analysis engine throughput: every turn of a 200-move 19x19 game at 100 visits, positions per second.

The game is played once by sampling the network's policy (seeded, so every run analyses the same
moves), then sent as ONE query with analyzeTurns covering every turn, through the in-process
`kata analysis` engine (JSON in, JSON responses out), for several numAnalysisThreads x
numSearchThreadsPerAnalysisThread settings. The network cache is cleared between settings.

    python3 benchmarks/bench_analysis.py [--model PATH] [--moves 200] [--visits 100]
                                         [--settings 1x16,2x16,4x8] [--torch-threads N]

KataGo's own analysis engine is not run here (no katago binary); the figures are katacli's alone.
"net busy": the share of the wall time the network server threads spent evaluating batches (summed over
them: above 100% with several); "waiting": the share an analysis worker spent waiting for its round's
answers (averaged over the workers). Low both: the workers' own Python and core work is the limit; net
busy near 100%: the network is; low net busy with workers waiting: the batching between them is.

What bounds many small queries (AMD EPYC, 2 cores, 2026-11-27, g170-b6c96's inputs, --compare-search 1600):
with a network that costs nothing (--simulated-gpu 0.01,0.01) 64 x 1 does 15.4-16.4k visits/s and 16 x 4
21-23.6k, where a lone search of 64 leaves does 59.6k: 27% / 39%. perf over the 64 x 1 run: 34% of the CPU
in the interpreter and 21% in the kernel's thread switches, i.e. the Python each search runs per round (its
generator step, its NNBatch, its share of the join and the hand-out) and the hand-offs between the worker,
server and helper threads, not the core's tree work. Neither the thread switch interval (5 / 0.5 / 0.1 ms),
the leaf helpers (0 or auto) nor 32 or 64 searches a worker instead of 16 raised it, nor a spatial join
that releases the GIL once (torch.cat); keeping the GIL through the core's collect and apply of up to 4
leaves (no release and re-take per search) lost: 0.8x on the simulated GPU below. With a GPU's cost of about an H100's for b18c384nbt scaled to this
host's faster cores (--simulated-gpu 0.45,20 --serial-device): 64 x 1 12.3-14.4k, 64 x 4 19.8-21.8k
against 24.6-26.2k for a lone search of 256 leaves (about half, and about 80%), calls of 16 rows (one
worker's round) the most common. Stepping several trees per core call (one collect and one apply for a worker's searches)
is what would cut the per-search Python.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import threading
import sys
import time
from pathlib import Path
from typing import Optional

import numpy as np
import torch

from katacli.analysis.backend import AnalysisBackend, ModelInfo
from katacli.analysis.output import JsonLineWriter
from katacli.analysis.startup import build_engine
# Sibling scripts (bench_search_overhead's zero-cost network), even under PYTHONSAFEPATH.
sys.path.insert(0, str(Path(__file__).resolve().parent))

from random_positions import GameState  # (either build's)
from kata_env import cpu_model

from katacli.config import Config
from katacli.game.coords import BLACK, WHITE, format_color, format_vertex, parse_vertex
from katacli.nn.batching import BatchingEvaluator
from katacli.nn.evaluator import NNEvaluator
from katacli.search import Searcher, SearchParams
from katacli.setup.engine_settings import AnalysisSettings, NNSettings

DEFAULT_MODEL = Path(__file__).resolve().parents[1].parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
BOARD = 19
KOMI = 7.5
RULES = "tromp-taylor"
GAME_SEED = 20240601
# The game is played by sampling policy ** (1 / temperature): varied but sensible moves.
GAME_POLICY_TEMPERATURE = 0.5
# numAnalysisThreads x numSearchThreadsPerAnalysisThread
DEFAULT_SETTINGS = "1x16,2x16,4x8"
NN_CACHE_POWER = 20


def play_game(network: NNEvaluator, num_moves: int) -> list[list[str]]:
    """A game of num_moves moves sampled from the network's raw policy (pass only when nothing else is legal)."""
    rng = random.Random(GAME_SEED)
    params = SearchParams.defaults("analysis").replace(max_visits=1, root_symmetry_pruning=False)
    state = GameState(BOARD, BOARD)
    moves = []
    for _ in range(num_moves):
        pla = state.next_player
        searcher = Searcher(state, params, network, seed=rng.getrandbits(63))
        searcher.run()
        policy = np.asarray(searcher.analysis(max_pv_len=1, include_policy=True).policy[:BOARD * BOARD], np.float64)
        weights = np.where(policy > 0, np.power(np.maximum(policy, 1e-30), 1.0 / GAME_POLICY_TEMPERATURE), 0.0)
        if weights.sum() > 0:
            index = rng.choices(range(len(weights)), weights=weights.tolist())[0]
            point = (index % BOARD, index // BOARD)
        else:
            point = None
        state.play(point, pla)
        moves.append([format_color(pla), format_vertex(point, BOARD, BOARD)])
    return moves


# Turns of the game a lone search is timed at (--compare-search).
COMPARE_TURNS = (40, 90, 140)


def lone_search_rate(network, moves: list, leaves: int, visits: int) -> tuple[float, bool]:
    """(visits/s of one search at a time with ``leaves`` leaves a batch over COMPARE_TURNS' positions,
    whether it ran pipelined), the network cache cleared before each."""
    params = SearchParams.defaults("gtp").replace(num_search_threads=leaves, max_visits=visits)
    total, seconds, pipelined = 0, 0.0, False
    for turn in COMPARE_TURNS:
        state = GameState(BOARD, BOARD)
        for color, vertex in moves[:min(turn, len(moves))]:
            state.play(parse_vertex(vertex, BOARD, BOARD), BLACK if color == "B" else WHITE)
        network.cache.clear()
        searcher = Searcher(state, params, network, seed=turn)
        pipelined = pipelined or searcher.pipelined
        started = time.perf_counter()
        total += searcher.run().visits
        seconds += time.perf_counter() - started
    return total / max(seconds, 1e-9), pipelined


class CountingSink:
    """The engine's stdout: counts final responses and signals when all have arrived."""

    def __init__(self, expected: int):
        self.expected = expected
        self.finals = 0
        self.errors = []
        self.done = threading.Event()
        self._buffer = ""

    def write(self, text: str) -> int:
        self._buffer += text
        while "\n" in self._buffer:
            line, self._buffer = self._buffer.split("\n", 1)
            obj = json.loads(line)
            if "error" in obj:
                self.errors.append(obj)
                self.done.set()
            elif obj.get("isDuringSearch") is False:
                self.finals += 1
                if self.finals >= self.expected:
                    self.done.set()
        return len(text)

    def flush(self) -> None:
        pass


def run_setting(network: NNEvaluator, model_path: Path, moves: list, visits: int, analysis_threads: int,
                search_threads: int, gpu_servers: bool = False, leaf_threads: Optional[int] = None,
                server_threads: int = 1) -> dict:
    """``gpu_servers``: server_threads network server threads as on a GPU (a CPU network gets one per core
    at least); ``leaf_threads``: numLeafFeatureThreads (None: the default, a helper thread per analysis
    worker)."""
    network.cache.clear()
    rows_before, batches_before = network.num_positions_evaluated, network.num_batches
    keys = {"numAnalysisThreads": analysis_threads, "numSearchThreadsPerAnalysisThread": search_threads,
            "reportAnalysisWinratesAs": "BLACK"}
    if leaf_threads is not None:
        keys["numLeafFeatureThreads"] = leaf_threads
    cfg = Config(keys, mode="analysis")
    cfg.apply_mode_aliases("analysis")
    settings = AnalysisSettings.from_config(cfg)
    batch_size = max(8, analysis_threads * search_threads)
    info = ModelInfo(str(model_path), network.model_name, batch_size, False, int(network.version), "auto")
    backend = AnalysisBackend(network, info, max_batch_size=batch_size, num_server_threads=server_threads)
    if gpu_servers:
        backend.evaluator.close()
        backend.evaluator = BatchingEvaluator(network, max_batch_size=batch_size, num_server_threads=server_threads,
                                              server_per_cpu_core=False)
    turns = list(range(len(moves) + 1))
    sink = CountingSink(len(turns))
    engine = build_engine(cfg, settings, backend, JsonLineWriter(sink))
    query = {"id": "bench", "moves": moves, "rules": RULES, "komi": KOMI, "boardXSize": BOARD, "boardYSize": BOARD,
             "analyzeTurns": turns, "maxVisits": visits}
    engine.start()
    # (getattr: older builds, measured side by side from a copy, count neither)
    busy_before = getattr(backend.evaluator, "busy_seconds", 0.0)
    start = time.perf_counter()
    engine.handle_line(json.dumps(query))
    sink.done.wait()
    seconds = time.perf_counter() - start
    busy = getattr(backend.evaluator, "busy_seconds", 0.0) - busy_before
    groups = [worker._group for worker in engine.workers if worker._group is not None]
    waiting = sum(getattr(group, "wait_seconds", 0.0) for group in groups) / max(1, len(groups))
    engine.finish(wait=True)
    backend.close()
    if sink.errors:
        raise SystemExit(f"engine error: {sink.errors[0]}")
    rows = network.num_positions_evaluated - rows_before
    batches = network.num_batches - batches_before
    return {"positions": len(turns), "seconds": seconds, "rows": rows, "batches": batches,
            "net_busy": busy / seconds, "workers_waiting": waiting / seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--moves", type=int, default=200, help="game length (every turn is analysed)")
    parser.add_argument("--visits", type=int, default=100, help="maxVisits per position")
    parser.add_argument("--settings", default=DEFAULT_SETTINGS,
                        help="comma-separated numAnalysisThreads x numSearchThreadsPerAnalysisThread")
    parser.add_argument("--torch-threads", type=int, default=None, help="torch CPU threads (default: torch's)")
    parser.add_argument("--simulated-gpu", metavar="MS,US", default=None,
                        help="replace the network by a zero-cost one that waits MS milliseconds a call plus US "
                             "microseconds a position with the GIL released, as a GPU call does (e.g. 1,100 for "
                             "b18c384nbt on an H100): what the engine feeds a GPU, measured without one")
    parser.add_argument("--serial-device", action="store_true",
                        help="with --simulated-gpu: one network call at a time on the simulated GPU (calls of "
                             "several server threads queue), as on a GPU that one batch fills")
    parser.add_argument("--server-threads", type=int, default=1,
                        help="numNNServerThreadsPerModel: network server threads (each its own device lane)")
    parser.add_argument("--searches-per-driver", type=int, default=None,
                        help="how many searches one analysis worker thread steps (default: the engine's rule, "
                             "16 a worker and at least 4 workers): e.g. 32 or 64 for fewer, bigger rounds")
    parser.add_argument("--compare-search", type=int, default=0, metavar="VISITS",
                        help="also time a lone search with as many leaves a batch as the largest setting's "
                             "searches (numSearchThreads = analysis x search threads, searchPipelining auto) "
                             "at VISITS visits on a few of the game's positions, and print each setting's "
                             "visits/s against it (the CUDA issue's analysis goal: 80%%)")
    parser.add_argument("--leaf-threads", default=None,
                        help="numLeafFeatureThreads values to run each setting with, e.g. 0,auto (a row each; "
                             "default: the default only)")
    parser.add_argument("--switch-interval-ms", type=float, default=None,
                        help="Python's thread switch interval (sys.setswitchinterval; default 5 ms): a network "
                             "server thread back from a GPU call waits up to this long for the interpreter while "
                             "the workers run Python")
    args = parser.parse_args()
    if args.searches_per_driver is not None:   # the rule katacli.search.stepping.search_shares reads
        import katacli.search.stepping as stepping

        stepping.SEARCHES_PER_DRIVER, stepping.MIN_DRIVERS = max(1, args.searches_per_driver), 1
    if args.switch_interval_ms is not None:
        sys.setswitchinterval(args.switch_interval_ms / 1000.0)
    if not args.model.exists():
        raise SystemExit(f"model not found: {args.model} (pass --model)")
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    # The network as `kata analysis` loads it: its device, and on a GPU useFP16 = auto, channels-last, graphs.
    options = NNSettings.from_config(Config({}, mode="analysis")).evaluator_options()
    options["cache_size_power_of_two"] = NN_CACHE_POWER
    device, precision = options["device"], options["precision"]
    if args.simulated_gpu:
        from bench_search_overhead import ZeroCostEvaluator

        latency_ms, per_position_us = (float(v) for v in args.simulated_gpu.split(","))
        network = ZeroCostEvaluator(args.model, latency_ms / 1000.0, per_position_us / 1e6,
                                    serial_device=args.serial_device)
        device, precision = (f"simulated GPU ({latency_ms} ms + {per_position_us} us a position"
                             f"{', one call at a time' if args.serial_device else ''})", "zero-cost")
    else:
        network = NNEvaluator.from_file(args.model, **options, max_batch_size=256)
    from katacli.startup_objects import freeze_startup_objects

    freeze_startup_objects()   # as `kata analysis` does once its network is loaded
    moves = play_game(network, args.moves)
    if not args.simulated_gpu:   # as kata benchmark does: no timed run records a CUDA graph (or tunes cuDNN)
        from katacli.tuning.gpu_curve import record_graphs

        largest = max(max(8, a * s) for a, s in (
            (int(v) for v in setting.lower().split("x")) for setting in args.settings.split(",")))
        started = time.perf_counter()
        recorded = record_graphs(network, BOARD, BOARD, largest)
        if recorded:
            print(f"CUDA graphs recorded for batch sizes {recorded[0]}-{recorded[-1]} on every device lane in "
                  f"{time.perf_counter() - started:.1f} s (untimed; `kata analysis` records each the first time "
                  f"a batch of that size comes)")
    print(f"katacli analysis engine: {args.model.name}, {BOARD}x{BOARD} {RULES} komi {KOMI}, "
          f"{len(moves)}-move policy-sampled game, every turn ({len(moves) + 1} positions) at {args.visits} visits")
    print(f"device {device}, {os.cpu_count()} CPUs ({cpu_model()}), "
          f"torch {torch.__version__} with {torch.get_num_threads()} threads, {precision}; cache cleared per setting; "
          f"load average {os.getloadavg()[0]:.1f} at start; thread switch interval "
          f"{sys.getswitchinterval() * 1000:g} ms"
          + (f"; {args.searches_per_driver} searches a worker" if args.searches_per_driver else ""))
    print(f"{'analysis x search threads':>26} {'positions/s':>12} {'visits/s':>10} {'nn rows/s':>10} "
          f"{'avg batch':>10} {'seconds':>8} {'net busy':>9} {'waiting':>8}")
    leaf_options = [None] if args.leaf_threads is None else [
        -1 if v.strip() == "auto" else int(v) for v in args.leaf_threads.split(",")]
    rates: list[tuple[str, float]] = []
    for setting in args.settings.split(","):
        analysis_threads, search_threads = (int(v) for v in setting.lower().split("x"))
        for leaf_threads in leaf_options:
            result = run_setting(network, args.model, moves, args.visits, analysis_threads, search_threads,
                                 gpu_servers=bool(args.simulated_gpu), leaf_threads=leaf_threads,
                                 server_threads=args.server_threads)
            seconds = result["seconds"]
            label = f"{analysis_threads} x {search_threads}" + (
                "" if leaf_threads is None else f" helpers {'auto' if leaf_threads < 0 else leaf_threads}")
            rates.append((label.strip(), result['positions'] * args.visits / seconds))
            print(f"{label:>26} {result['positions'] / seconds:12.2f} "
                  f"{result['positions'] * args.visits / seconds:10.0f} {result['rows'] / seconds:10.0f} "
                  f"{result['rows'] / max(1, result['batches']):10.1f} {seconds:8.1f} "
                  f"{result['net_busy']:9.0%} {result['workers_waiting']:8.0%}", flush=True)
    if args.compare_search:
        leaves = max(a * t for a, t in ((int(v) for v in setting.lower().split("x"))
                                         for setting in args.settings.split(",")))
        rate, pipelined = lone_search_rate(network, moves, leaves, args.compare_search)
        print(f"a lone search of {leaves} leaves a batch on the same network (kata benchmark's kind), "
              f"{args.compare_search} visits from turns {', '.join(str(t) for t in COMPARE_TURNS)}: {rate:.0f} visits/s"
              f"{' (pipelined: two batches in flight)' if pipelined else ''}; the analysis settings above "
              f"against it: {', '.join(f'{label} {value / rate:.0%}' for label, value in rates)}")
    print("(KataGo side by side: benchmarks/compare_katago.py --katago PATH)")


if __name__ == "__main__":
    main()
