#!/usr/bin/env python3
"""Side by side with KataGo: the same work through `kata` and through a `katago` binary, one run.

    python3 benchmarks/compare_katago.py --katago /path/to/katago [--model NET.bin.gz]
        [--moves 200] [--visits 100] [--settings 1x16,2x8] [--search-threads 1,2]

Two measurements, each run for both engines back to back on the same machine:

* analysis: one query analysing every turn of the same 200-move 19x19 game at 100 visits, through
  each engine's JSON analysis engine as a subprocess, for several numAnalysisThreads x
  numSearchThreadsPerAnalysisThread settings; positions per second.
* search: GTP `kata-benchmark`-style genmove searches are not comparable between builds, so the
  search comparison is the same query with one position searched at a time (numAnalysisThreads = 1)
  at each of the given numSearchThreadsPerAnalysisThread values (the `1xN` rows); positions per
  second, like the analysis rows (every position gets the same visits, so the ratio is that of
  visits per second).

The game is the one benchmarks/bench_analysis.py plays (seeded policy sampling). Both engines get
the same key settings through a minimal config; the network cache is fresh for every run (a new
process), the clock starts once each engine has answered a one-visit warm-up query (its net loaded),
and KataGo runs with its Eigen (CPU) backend if that is how it was built.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_analysis import DEFAULT_MODEL, KOMI, RULES, play_game  # noqa: E402
from kata_env import cpu_model, require_katago  # noqa: E402

from katacli.nn.evaluator import NNEvaluator  # noqa: E402

ENGINE_TIMEOUT_SECONDS = 3600
CONFIG_TEMPLATE = """
logToStderr = false
logAllRequests = false
logAllResponses = false
logSearchInfo = false
reportAnalysisWinratesAs = BLACK
nnCacheSizePowerOfTwo = 20
nnMutexPoolSizePowerOfTwo = 14
nnRandomize = true
numAnalysisThreads = {analysis_threads}
numSearchThreadsPerAnalysisThread = {search_threads}
nnMaxBatchSize = {batch}
maxVisits = {visits}
"""


WARM_UP_QUERY = {"id": "warm-up", "moves": [["B", "K10"], ["W", "K9"]], "rules": RULES, "komi": KOMI,
                 "boardXSize": 19, "boardYSize": 19, "maxVisits": 1}
# kata answers a small net's first queries in numpy while torch loads (nnNumpyUntilTorch); this measures
# the steady state, so kata's net is torch's from the start.
KATA_OVERRIDES = "nnNumpyUntilTorch=false"


def run_engine(argv: list[str], query: dict, expected: int) -> float:
    """Send one query, wait for `expected` responses; returns seconds from sending to the last answer."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True)
    # Let both engines finish loading before the clock starts: KataGo answers a version query once its
    # net is loaded, kata as soon as it starts (its net loads in the background), so each first answers
    # a one-visit search of a position the game does not have.
    proc.stdin.write(json.dumps(WARM_UP_QUERY) + "\n")
    proc.stdin.flush()
    while json.loads(proc.stdout.readline()).get("id") != WARM_UP_QUERY["id"]:
        pass
    start = time.perf_counter()
    proc.stdin.write(json.dumps(query) + "\n")
    proc.stdin.flush()
    got = 0
    while got < expected:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"{argv[0]} stopped after {got} of {expected} responses")
        response = json.loads(line)
        if "error" in response:
            raise RuntimeError(f"{argv[0]}: {response['error']}")
        if not response.get("isDuringSearch", False):
            got += 1
    seconds = time.perf_counter() - start
    proc.stdin.close()
    proc.wait(timeout=ENGINE_TIMEOUT_SECONDS)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", required=True, help="path of a katago binary")
    parser.add_argument("--kata", default=f"{sys.executable} -P -m katacli.cli", help="how to run kata")
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--moves", type=int, default=200)
    parser.add_argument("--visits", type=int, default=100)
    parser.add_argument("--settings", default="1x16,2x8", help="numAnalysisThreads x searchThreadsPerAnalysisThread")
    parser.add_argument("--search-threads", default="1,2", help="search threads for the one-position comparison")
    args = parser.parse_args()
    require_katago(args.katago)

    network = NNEvaluator.from_file(args.model, device="cpu")
    moves = play_game(network, args.moves)
    del network
    query = {"id": "game", "moves": moves, "rules": RULES, "komi": KOMI, "boardXSize": 19, "boardYSize": 19,
             "analyzeTurns": list(range(len(moves) + 1)), "maxVisits": args.visits}
    positions = len(moves) + 1
    runs = [tuple(int(v) for v in s.split("x")) for s in args.settings.split(",")]
    runs += [(1, int(t)) for t in args.search_threads.split(",")]
    print(f"{positions} positions of a {len(moves)}-move 19x19 game, {args.visits} visits each, "
          f"{cpu_model()}, {len(os.sched_getaffinity(0))} usable cores, model {Path(args.model).name}")
    print(f"{'setting':>10} {'kata pos/s':>11} {'katago pos/s':>13} {'kata/katago':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for analysis_threads, search_threads in runs:
            cfg = Path(tmp) / f"a{analysis_threads}s{search_threads}.cfg"
            batch = max(8, analysis_threads * search_threads)
            cfg.write_text(CONFIG_TEMPLATE.format(analysis_threads=analysis_threads, search_threads=search_threads,
                                                  batch=batch, visits=args.visits))
            kata = args.kata.split() + ["analysis", "-model", args.model, "-config", str(cfg),
                                        "-override-config", KATA_OVERRIDES]
            katago = [args.katago, "analysis", "-model", args.model, "-config", str(cfg)]
            kata_s = run_engine(kata, query, positions)
            katago_s = run_engine(katago, query, positions)
            print(f"{analysis_threads:>4}x{search_threads:<5} {positions / kata_s:>11.2f} {positions / katago_s:>13.2f} "
                  f"{katago_s / kata_s:>11.2f}x", flush=True)


if __name__ == "__main__":
    main()
