#!/usr/bin/env python3
"""Search speed beside other work: `kata benchmark` and `katago benchmark`, idle and beside busy loops.

    python3 benchmarks/compare_katago_contention.py --katago /path/to/katago --model NET.bin.gz \\
        [--threads 1,2] [--visits 100] [--busy-loops 0,1] [--config configs/gtp_example.cfg]

For each number of busy loops (processes spinning beside the engine, like a GUI, a browser or a
second engine that never sleeps), both benchmarks run one after the other on the same positions of
their bundled 19x19 game with the given search threads and visits; the visits/s of each thread
count is read from their output. Printed: visits/s per engine, thread count and load, and kata's
ratio to KataGo.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from busy_loop import BusyLoops  # noqa: E402
from kata_env import KATA_COMMAND, KATA_ENV, REPO  # noqa: E402

# Both benchmarks print one result line per thread count in KataGo's format.
RESULT_LINE = re.compile(r"numSearchThreads = +(\d+): +\d+ / +\d+ positions, visits/s = ([\d.]+) nnEvals/s")
RUN_TIMEOUT_SECONDS = 3600


def visits_per_second(output: str) -> dict[int, float]:
    """{threads: visits/s} from benchmark output (the last line per count wins)."""
    return {int(m.group(1)): float(m.group(2)) for m in RESULT_LINE.finditer(output)}


def run(command: list[str]) -> str:
    with tempfile.TemporaryDirectory() as cwd:
        done = subprocess.run(command, capture_output=True, text=True, cwd=cwd, env=KATA_ENV, timeout=RUN_TIMEOUT_SECONDS)
    if done.returncode != 0:
        raise RuntimeError(f"{command[0]} failed ({done.returncode}): {(done.stderr or done.stdout).strip()[-500:]}")
    return done.stdout + done.stderr


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", default=os.environ.get("KATAGO_BINARY"), help="KataGo binary ($KATAGO_BINARY)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--config", default=str(REPO / "configs" / "gtp_example.cfg"))
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--visits", type=int, default=100)
    parser.add_argument("--busy-loops", default="0,1", help="comma-separated numbers of busy loops to run beside")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.katago:
        parser.error("give --katago (or set KATAGO_BINARY)")
    try:
        loads = [int(n) for n in args.busy_loops.split(",")]
    except ValueError:
        parser.error("--busy-loops takes whole numbers separated by commas, e.g. 0,1")
    commands = {
        "kata": [*KATA_COMMAND, "benchmark", "-model", args.model, "-config", args.config,
                 "-t", args.threads, "-v", str(args.visits)],
        "katago": [args.katago, "benchmark", "-model", args.model, "-config", args.config, "-t", args.threads,
                   "-v", str(args.visits), "-override-config", "logToStderr=false"],
    }
    results: dict = {}
    try:
        for busy in loads:
            with BusyLoops(busy):
                for name, command in commands.items():
                    results[(busy, name)] = visits_per_second(run(command))
                    print(f"{busy} busy loop(s), {name}: {results[(busy, name)]}", file=sys.stderr, flush=True)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps([{"busy_loops": b, "engine": n, "visits_per_second": v} for (b, n), v in results.items()],
                         indent=1))
        return 0
    print(f"{'busy loops':>10}{'threads':>9}{'kata v/s':>11}{'KataGo v/s':>12}{'kata/KataGo':>13}")
    for busy in loads:
        for threads, mine in sorted(results[(busy, "kata")].items()):
            theirs = results[(busy, "katago")].get(threads, float("nan"))
            print(f"{busy:>10}{threads:>9}{mine:>11.1f}{theirs:>12.1f}{mine / theirs:>12.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
