#!/usr/bin/env python3
"""One search thread's network batches on the CPU: evaluated whole (one single-threaded torch call)
or split over every core (NNEvaluator.set_parallel_threads: pieces evaluated side by side, torch
releasing the GIL), as the GTP engine's search thread, kata benchmark and evalsgf use it.

    python3 benchmarks/bench_parallel_pieces.py [--model NET.bin.gz] [--batches 2,4,6] [--rounds 3]

Settings alternate round by round so that a change in the machine's load hits both; the table
gives positions/s per batch size and the ratio split/whole. Run it on an otherwise idle machine.
"""
from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import REPO  # noqa: E402,F401  (makes katacli importable from a checkout)

from katacli.nn.description import NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7  # noqa: E402
from katacli.nn.evaluator import NNEvaluator, NNRequest  # noqa: E402

DEFAULT_MODEL = REPO.parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"


def requests(count: int, size: int, rng) -> list[NNRequest]:
    out = []
    for _ in range(count):
        spatial = np.zeros((NUM_SPATIAL_FEATURES_V7, size, size), np.float32)
        spatial[0] = 1.0
        stones = rng.random((size, size))
        spatial[1], spatial[2] = stones < 0.2, stones > 0.8
        out.append(NNRequest(spatial, np.zeros(NUM_GLOBAL_FEATURES_V7, np.float32), np.ones(size * size + 1, bool),
                             board_x=size, board_y=size, white_to_move=False, symmetry=0))
    return out


def positions_per_second(evaluator: NNEvaluator, batch: list[NNRequest], seconds: float) -> float:
    """Measured on a worker thread, as a search thread calls the network."""
    box = {}

    def work():
        for _ in range(3):
            evaluator.evaluate_uncached(batch)
        calls, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            evaluator.evaluate_uncached(batch)
            calls += 1
        box["rate"] = calls * len(batch) / (time.perf_counter() - start)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return box["rate"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--batches", default="2,4,6")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0, help="per setting and round")
    args = parser.parse_args()
    if not args.model.is_file():
        parser.error(f"model not found: {args.model}")
    evaluator = NNEvaluator.from_file(args.model, device="cpu", cache_size_power_of_two=None)
    rng = np.random.default_rng(1)
    cores = os.cpu_count() or 1
    rates: dict[tuple[int, int], list[float]] = {}
    for _ in range(args.rounds):
        for size in (int(b) for b in args.batches.split(",")):
            batch = requests(size, args.size, rng)
            for threads in (1, cores):
                evaluator.set_parallel_threads(threads)
                rates.setdefault((size, threads), []).append(positions_per_second(evaluator, batch, args.seconds))
    print(f"{args.size}x{args.size}, {args.model.name}, {cores} cores, {args.rounds} rounds (median positions/s)")
    print("batch   whole   split  split/whole")
    for size in (int(b) for b in args.batches.split(",")):
        whole, split = (float(np.median(rates[(size, t)])) for t in (1, cores))
        print(f"{size:5d} {whole:7.0f} {split:7.0f} {split / whole:11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
