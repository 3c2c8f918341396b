#!/usr/bin/env python3
"""`kata analysis` start-up as KaTrain sees it, beside KataGo's: seconds to the "ready" line on stderr
and to the first answer, optionally beside busy loops (contention). The sibling of
compare_katago_gtp_speed.py for the JSON engine.

    python3 benchmarks/compare_katago_analysis_startup.py --model NET.bin.gz [--human-model HUMAN.bin.gz]
        [--katago /path/to/katago] [--config analysis.cfg] [--analysis-threads N] [--runs 3] [--busy-loops 1]
        [--json]

Each run starts the engine, sends one 19x19 query at once (as KaTrain does on opening a game; it waits
in the engine until it can be searched) and times the line containing "ready to begin handling
requests" and the query's answer from the moment the process was started. The query has no
humanSLProfile, as KaTrain's analysis queries have unless a human-style AI plays. kata says "ready"
before its network is loaded (the load, torch's import and the 19x19 warm-up run after it), so its first
answer includes the load. --analysis-threads N passes -analysis-threads N, as KaTrain does. Engines run
one at a time; the median of --runs is printed, with kata's time over KataGo's (the goal: at most 1.5x).
Without --katago only kata is measured.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from busy_loop import BusyLoops  # noqa: E402
from kata_env import KATA_COMMAND, KATA_ENV  # noqa: E402

READY_TEXT = "ready to begin handling requests"
TIMEOUT_SECONDS = 600.0
BOARD_LEN = 19
FIRST_QUERY_VISITS = 20
QUERY = {"id": "startup", "moves": [["B", "Q16"], ["W", "D4"]], "rules": "japanese", "komi": 6.5,
         "boardXSize": BOARD_LEN, "boardYSize": BOARD_LEN, "analyzeTurns": [2], "maxVisits": FIRST_QUERY_VISITS,
         "includePolicy": True, "includeOwnership": True}


def one_run(argv: list[str]) -> dict[str, float]:
    """Seconds from starting ``argv`` to its ready line and to the first query's answer."""
    started = time.perf_counter()
    process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, env=KATA_ENV)
    ready: dict[str, float] = {}
    last_words: list[str] = []   # stderr's last lines, to say why an engine stopped

    def watch_stderr() -> None:
        for line in process.stderr:
            if READY_TEXT in line and "ready" not in ready:
                ready["ready"] = time.perf_counter() - started
            last_words[:] = (last_words + [line.strip()])[-3:]

    reader = threading.Thread(target=watch_stderr, daemon=True)
    reader.start()
    try:
        process.stdin.write(json.dumps(QUERY) + "\n")
        process.stdin.flush()
        line = process.stdout.readline()
        if not line:   # it stopped before answering (a config it refuses, say)
            process.wait(TIMEOUT_SECONDS)
            reader.join(TIMEOUT_SECONDS)
            raise RuntimeError(f"{argv[0]} stopped (status {process.returncode}) before answering: "
                               + " / ".join(w for w in last_words if w))
        answer = json.loads(line)
        first_answer = time.perf_counter() - started
        if "error" in answer:
            raise RuntimeError(f"the engine answered an error: {answer['error']}")
        process.stdin.close()
        process.wait(TIMEOUT_SECONDS)
        reader.join(TIMEOUT_SECONDS)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    if "ready" not in ready:
        raise RuntimeError(f"no line containing {READY_TEXT!r} on stderr")
    return {"ready": ready["ready"], "first answer": first_answer}


def measure(name: str, argv: list[str], runs: int, log) -> dict[str, float]:
    samples = [one_run(argv) for _ in range(runs)]
    result = {stage: statistics.median(s[stage] for s in samples) for stage in samples[0]}
    for stage in result:
        log(f"{name}: {stage}: " + " ".join(f"{s[stage]:.2f}" for s in samples) + f" s (median {result[stage]:.2f})")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", default=os.environ.get("KATAGO_BINARY"), help="KataGo binary ($KATAGO_BINARY)")
    parser.add_argument("--model", required=True, help="network for both engines")
    parser.add_argument("--human-model", help="a human-SL network (-human-model) for both engines")
    parser.add_argument("--config", help="analysis config for both engines (default: none for kata, KataGo needs one)")
    parser.add_argument("--analysis-threads", type=int, help="-analysis-threads N for both engines (KaTrain passes it)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--busy-loops", type=int, default=0, help="processes spinning beside the engine")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.runs < 1 or args.busy_loops < 0 or (args.analysis_threads is not None and args.analysis_threads < 1):
        parser.error("--runs and --analysis-threads must be at least 1, --busy-loops at least 0")
    if args.katago and not args.config:
        parser.error("KataGo's analysis engine needs --config (e.g. KaTrain's analysis_config.cfg)")
    common = ["-model", args.model] + (["-human-model", args.human_model] if args.human_model else [])
    common += ["-config", args.config] if args.config else []
    common += ["-analysis-threads", str(args.analysis_threads)] if args.analysis_threads else []
    engines = {"kata": [*KATA_COMMAND, "analysis", *common]}
    if args.katago:
        engines["katago"] = [args.katago, "analysis", *common]
    log = (lambda text: print(text, file=sys.stderr, flush=True))
    results = {}
    try:
        with BusyLoops(args.busy_loops):
            for name, command in engines.items():
                results[name] = measure(name, command, args.runs, log)
    except (OSError, RuntimeError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"busy_loops": args.busy_loops, "runs": args.runs, "seconds": results}, indent=1))
        return 0
    print(f"kata analysis start-up, median of {args.runs}, {args.busy_loops} busy loop(s) beside the engine")
    ratio = "katago" in results
    print(f"{'stage':<16}" + "".join(f"{name + ' s':>12}" for name in results) + (f"{'kata/katago':>13}" if ratio else ""))
    for stage in results["kata"]:
        print(f"{stage:<16}" + "".join(f"{results[name][stage]:>12.2f}" for name in results)
              + (f"{results['kata'][stage] / results['katago'][stage]:>12.2f}x" if ratio else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
