#!/usr/bin/env python3
"""Self-play side by side with KataGo: the same config, net and game count through both engines.

    python3 benchmarks/compare_katago_selfplay.py --katago /path/to/katago --config selfplay1.cfg
        [--model ../shared/models/test-b4c32.bin.gz] [--games 100] [--repeat 3] [--override "bSizes=9,..."]

Both engines read the same KataGo self-play config (KataGo's own cpp/configs/training/selfplay1.cfg
works unchanged in `kata selfplay`) plus the overrides, play --games games with the same network,
and the training rows they wrote are counted. Rows/s includes start-up, as a user would see it.
With --repeat, the two engines take turns (katago, kata, katago, ...) and the median ratio is
printed: on a shared machine single runs vary by tens of percent.

Rows per game are random (cheap searches, surprise weighting, reduced visits), so a short run
says little: over 24 games the rows/s ratio of one build ranged from 0.88x to 1.06x. The
default of 100 games also makes start-up (kata's worker processes take about 3 s to import
torch and load the net, KataGo about 0.3 s) a small part of the time, as it is in real runs.
The seconds per game ratio is printed too, since it does not depend on rows per game.
"""
from __future__ import annotations

import argparse
import glob
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from katacli.data import load_training_arrays
sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import require_katago  # noqa: E402

DEFAULT_MODEL = Path(__file__).resolve().parents[1].parent / "shared" / "models" / "test-b4c32.bin.gz"
# 9x9 only, few visits, many games at once: a small-net throughput test.
DEFAULT_OVERRIDE = ("bSizes=9,bSizeRelProbs=1,allowRectangleProb=0.0,dataBoardLen=9,maxVisits=64,"
                    "cheapSearchVisits=40,reducedVisitsMin=40,numGameThreads=16,nnMaxBatchSize=32,"
                    "maxRowsPerTrainFile=100000,logToStdout=false")


def count_rows(output_dir: Path) -> int:
    rows = 0
    for path in glob.glob(str(output_dir / "**" / "*.npz"), recursive=True):
        with np.load(path) as data:
            rows += data["binaryInputNCHWPacked"].shape[0]
    for path in glob.glob(str(output_dir / "**" / "*.h5"), recursive=True):
        rows += load_training_arrays(path)["binaryInputNCHWPacked"].shape[0]
    return rows


def run(command: list[str], models: Path, output: Path, args) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(command + ["selfplay", "-models-dir", str(models), "-output-dir", str(output), "-config",
                                     args.config, "-max-games-total", str(args.games), "-override-config", args.override],
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, errors="replace")
    if done.returncode != 0:   # its last words say why (a KataGo built without libzip writes no data, say)
        last = [line for line in done.stderr.splitlines() if line.strip()][-3:]
        sys.exit(f"error: {command[0]} selfplay exited with status {done.returncode}: " + " / ".join(last))
    return time.perf_counter() - start, count_rows(output)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", required=True)
    parser.add_argument("--config", required=True, help="a KataGo self-play config, e.g. selfplay1.cfg")
    parser.add_argument("--kata", default=f"{sys.executable} -P -m katacli.cli")
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--games", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=1, help="alternating runs of each engine")
    parser.add_argument("--override", default=DEFAULT_OVERRIDE)
    args = parser.parse_args()
    require_katago(args.katago)
    print(f"{args.games} games, model {Path(args.model).name}, overrides: {args.override}")
    ratios, game_ratios, rows_per_game = [], [], {"katago": [], "kata": []}
    with tempfile.TemporaryDirectory() as tmp:
        models = Path(tmp) / "models"
        models.mkdir()
        shutil.copy(args.model, models)
        for round_index in range(args.repeat):
            rates, times = {}, {}
            for name, command in [("katago", [args.katago]), ("kata", args.kata.split())]:
                seconds, rows = run(command, models, Path(tmp) / f"{name}-{round_index}", args)
                rates[name], times[name] = rows / seconds, seconds
                rows_per_game[name].append(rows / args.games)
                print(f"round {round_index + 1} {name:>7}: {rows} rows in {seconds:.1f} s = {rates[name]:.2f} rows/s",
                      flush=True)
            ratios.append(rates["kata"] / rates["katago"])
            game_ratios.append(times["katago"] / times["kata"])
            print(f"round {round_index + 1} kata/katago: rows/s {ratios[-1]:.2f}x, games/s {game_ratios[-1]:.2f}x",
                  flush=True)
    if len(ratios) > 1:
        for label, values in (("rows/s", ratios), ("games/s", game_ratios)):
            print(f"median kata/katago {label} over {len(values)} rounds: {statistics.median(values):.2f}x "
                  f"(min {min(values):.2f}x, max {max(values):.2f}x)")
    print("rows per game: " + ", ".join(f"{name} {statistics.mean(values):.2f}"
                                         for name, values in rows_per_game.items()))


if __name__ == "__main__":
    main()
