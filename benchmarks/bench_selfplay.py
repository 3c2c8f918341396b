"""Self-play throughput: training rows per second with a small net on 9x9 (CPU, and CUDA when present).

Runs the real pipeline in-process (game threads, shared batching evaluator, MCTS, row
building and .h5 writing into a temporary directory) and prints games, moves/s, rows/s,
network positions/s and the average batch size.

    python benchmarks/bench_selfplay.py                       # CPU, then CUDA if available
    python benchmarks/bench_selfplay.py --device cpu --games 16 --threads 8 --visits 64
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

from katacli.config import Config
from katacli.nn.configs import random_description
from katacli.nn.torch_model import KataGoModel, load_model
from katacli.selfplay.model_pool import ModelManager
from katacli.selfplay.runner import SelfplayRun
from katacli.selfplay.settings import SelfplaySettings
from katacli.setup.engine_settings import NNSettings

REPO = Path(__file__).resolve().parents[1]
EXAMPLE_CONFIG = REPO / "configs" / "selfplay_example.cfg"
SHARED_MODEL = REPO.parent / "shared" / "models" / "test-b4c32.bin.gz"
FALLBACK_NET = "b4c32"


def bench_config(board: int, visits: int, threads: int, batch: int) -> Config:
    cfg = Config.from_file(EXAMPLE_CONFIG, mode="selfplay")
    cfg.apply_overrides({
        "bSizes": str(board), "bSizeRelProbs": "1", "allowRectangleProb": "", "dataBoardLen": str(board),
        "maxVisits": str(visits), "cheapSearchVisits": str(max(1, visits // 4)),
        "reducedVisitsMin": str(max(1, visits // 4)), "numGameThreads": str(threads),
        "nnMaxBatchSize": str(batch), "komiAuto": "false", "komiMean": "7", "logToStdout": "false",
        "handicapAsymmetricPlayoutProb": "0", "normalAsymmetricPlayoutProb": "0",
    })
    return cfg


def load_net() -> tuple[str, KataGoModel]:
    if SHARED_MODEL.is_file():
        return SHARED_MODEL.name, load_model(SHARED_MODEL)
    return f"random-{FALLBACK_NET}", KataGoModel(random_description(FALLBACK_NET, seed=1))


def run_once(device: str, args) -> dict:
    cfg = bench_config(args.board, args.visits, args.threads, args.batch)
    settings = SelfplaySettings.from_config(cfg)
    manager = ModelManager(NNSettings.from_config(cfg, "selfplay"), device=device, cpu_threads=args.cpu_threads)
    name, model = load_net()
    handle = manager.install(name, model)
    evaluator = handle.net.evaluator.evaluator
    with tempfile.TemporaryDirectory() as out:
        run = SelfplayRun(settings, manager, out, max_games_total=args.games, seed=args.seed,
                          search_drivers=args.search_drivers)
        start = time.perf_counter()
        stats = run.run(handle_signals=False)
        seconds = time.perf_counter() - start
    manager.close()
    return {
        "device": device, "model": name, "games": stats.games_finished, "seconds": seconds,
        "moves_per_s": stats.moves_played / seconds, "rows_per_s": stats.rows_produced / seconds,
        "rows": stats.rows_produced, "nn_pos_per_s": evaluator.num_positions_evaluated / seconds,
        "avg_batch": evaluator.num_positions_evaluated / max(1, evaluator.num_batches),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", choices=["cpu", "cuda", "all"], default="all")
    parser.add_argument("--games", type=int, default=8)
    parser.add_argument("--threads", type=int, default=4, help="numGameThreads (games in flight)")
    parser.add_argument("--visits", type=int, default=32, help="maxVisits (cheap searches get a quarter)")
    parser.add_argument("--board", type=int, default=9)
    parser.add_argument("--batch", type=int, default=64, help="nnMaxBatchSize")
    parser.add_argument("--cpu-threads", type=int, default=1, help="torch intra-op threads on CPU")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--search-drivers", type=int, default=None,
                        help="threads stepping the games' searches (0: each game thread searches; default: "
                             "as kata selfplay chooses)")
    args = parser.parse_args()
    devices = ["cpu", "cuda"] if args.device == "all" else [args.device]
    if "cuda" in devices and not torch.cuda.is_available():
        if args.device == "cuda":
            sys.exit("error: --device cuda: CUDA is not available here")
        devices.remove("cuda")
        print("CUDA not available; CPU only")
    print(f"{args.games} games on {args.board}x{args.board}, maxVisits {args.visits}, {args.threads} game threads")
    for device in devices:
        r = run_once(device, args)
        print(f"{r['device']:>4}  {r['model']}: {r['games']} games in {r['seconds']:.1f}s  "
              f"{r['rows_per_s']:.2f} rows/s ({r['rows']} rows)  {r['moves_per_s']:.1f} moves/s  "
              f"{r['nn_pos_per_s']:.0f} nn positions/s  avg batch {r['avg_batch']:.1f}")


if __name__ == "__main__":
    main()
