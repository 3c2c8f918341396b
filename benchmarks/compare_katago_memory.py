#!/usr/bin/env python3
"""Resident memory of `kata gtp` and of a KataGo binary, side by side, as searches grow the tree.

    python3 benchmarks/compare_katago_memory.py --katago /path/to/katago --model NET.bin.gz \\
        [--config configs/gtp_example.cfg] [--visits 10000,100000] [--moves 4] [--size 19] [--runs 1]
        [--seconds S]

For each engine (one after the other, so they do not compete for the processor): start it, set up an
empty board, and read its resident set size (VmRSS, Linux /proc); then for each visit count, play
--moves genmoves in a row with that many visits each (the tree is reused from move to move, as in a
game) and read the RSS after every move. With --seconds each search runs for that long instead
(maxTime, no visit limit): ``kata-search`` then ``play`` of its move, with the root's visits read
from ``debug_moves``; --moves 1 --seconds 300 is a pondering-like run on one position. A table of
megabytes per stage (the median over --runs starts of each engine; --json: every run, with each
move's seconds, which the progress lines show too) is printed
with the growth over start-up and the CPU model. The growth is what the search costs (tree and NN
cache); KataGo's graph search and kata's tree keep different node layouts, so equal visits need
not mean equal memory, and resident memory moves by a few MB from run to run (allocator arenas).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import KATA_COMMAND, KATA_ENV, REPO, cpu_model  # noqa: E402  (also makes katacli importable from a checkout)
from search_parity import parse_debug_moves  # noqa: E402

from katacli.gtp.client import GtpClient, GtpClientError  # noqa: E402

KIB_PER_MB = 1024.0
MOVE_TIMEOUT_SECONDS = 3600.0
# Both engines: one fixed search size per move, no pondering, no time limit, no resignation.
SHARED_OVERRIDES = ("ponderingEnabled=false", "maxPlayouts=1000000000", "allowResignation=false")
UNLIMITED_SECONDS = 1000000     # visits are the limit
START_STAGE = "start-up"
UNLIMITED_VISITS = 1000000000   # --seconds: time is the limit


def resident_mb(pid: int) -> float:
    """VmRSS of a process in MB (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / KIB_PER_MB
    raise OSError(f"no VmRSS for process {pid}")


def timed_move(engine: GtpClient, colour: str) -> int:
    """Search for the configured time, play the chosen move; the root's visits."""
    move = engine.command(f"kata-search {colour}", MOVE_TIMEOUT_SECONDS).strip()
    tree = parse_debug_moves(engine.command("debug_moves"))
    engine.command(f"play {colour} {move}")
    return tree.node.visits if tree.node is not None else 0


def measure(name: str, argv: list[str], size: int, visit_counts: list[int], moves: int, seconds: float | None,
            run: int, log) -> list[dict]:
    rows = []

    def record(stage: str, visits: int, elapsed: float | None = None) -> None:
        rows.append({"engine": name, "run": run, "stage": stage, "visits": visits,
                     "timed": seconds is not None and stage != START_STAGE, "seconds": elapsed,
                     "rss_mb": resident_mb(engine.process.pid)})
        log(f"{name} (run {run}): {rows[-1]['rss_mb']:.0f} MB after {stage}" + (f" ({visits} visits)" if visits else "")
            + (f" in {elapsed:.1f} s" if elapsed is not None else ""))

    with tempfile.TemporaryDirectory() as cwd:  # KataGo's gtp_example.cfg writes logs to ./gtp_logs
        engine = GtpClient(argv, name=name, cwd=cwd, env=KATA_ENV)
        try:
            engine.command(f"boardsize {size}")
            engine.command("clear_board")
            record(START_STAGE, 0)
            colour = "b"
            if seconds is not None:
                for move in range(1, moves + 1):
                    started = time.monotonic()
                    record(f"{seconds:g} s, move {move}", timed_move(engine, colour), time.monotonic() - started)
                    colour = "w" if colour == "b" else "b"
                return rows
            for visits in visit_counts:
                engine.command(f"kata-set-param maxVisits {visits}")
                for move in range(1, moves + 1):
                    started = time.monotonic()
                    engine.command(f"genmove {colour}", MOVE_TIMEOUT_SECONDS)
                    elapsed = time.monotonic() - started
                    colour = "w" if colour == "b" else "b"
                    record(f"{visits} visits, move {move}", visits, elapsed)
        finally:
            engine.close()
    return rows


def print_table(rows: list[dict], names: list[str], runs: int) -> None:
    """Median MB per stage and engine (with the range over runs), then each engine's growth."""
    def values(name: str, stage: str, key: str = "rss_mb") -> list[float]:
        return [row[key] for row in rows if row["engine"] == name and row["stage"] == stage]

    def cell(found: list[float]) -> str:
        if not found:
            return f"{'-':>20}"
        text = f"{statistics.median(found):.0f}"
        if runs > 1:
            text += f" ({min(found):.0f}-{max(found):.0f})"
        return f"{text:>20}"

    stages = list(dict.fromkeys(row["stage"] for row in rows))
    print(f"CPU: {cpu_model()}, {os.cpu_count()} cores; {runs} run(s) per engine, median (min-max) MB")
    print(f"{'stage':<28}" + "".join(f"{name + ' MB':>20}" for name in names))
    for stage in stages:
        print(f"{stage:<28}" + "".join(cell(values(name, stage)) for name in names))
        searched = {name: values(name, stage, "visits") for name in names}
        if any(row["timed"] for row in rows if row["stage"] == stage):
            print(f"{'  root visits':<28}" + "".join(cell(searched[name]) for name in names))
    growth = {name: [end - start for start, end in zip(values(name, stages[0]), values(name, stages[-1]))]
              for name in names}
    print(f"{'growth':<28}" + "".join(cell(growth[name]) for name in names))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", default=os.environ.get("KATAGO_BINARY"), help="KataGo binary ($KATAGO_BINARY)")
    parser.add_argument("--model", required=True, help="network for both engines")
    parser.add_argument("--config", default=str(REPO / "configs" / "gtp_example.cfg"))
    parser.add_argument("--visits", default="10000", help="comma-separated visit counts per move")
    parser.add_argument("--moves", type=int, default=4, help="genmoves in a row per visit count (tree reuse)")
    parser.add_argument("--size", type=int, default=19)
    parser.add_argument("--threads", type=int, default=2, help="numSearchThreads of both engines")
    parser.add_argument("--seconds", type=float, help="search this long per move instead of --visits")
    parser.add_argument("--runs", type=int, default=1, help="starts of each engine (the table shows the median)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        visit_counts = [int(v) for v in args.visits.split(",") if v.strip()]
    except ValueError:
        parser.error("--visits takes whole numbers separated by commas, e.g. 10000,100000")
    if not visit_counts or min(visit_counts) < 1 or args.moves < 1 or args.runs < 1:
        parser.error("--visits, --moves and --runs must be at least 1")
    if args.seconds is not None and args.seconds <= 0:
        parser.error("--seconds must be positive")
    if not sys.platform.startswith("linux"):
        parser.error("resident memory is read from /proc: Linux only")
    limits = ((f"maxTime={args.seconds:g}", f"maxVisits={UNLIMITED_VISITS}") if args.seconds is not None
              else (f"maxTime={UNLIMITED_SECONDS}",))
    overrides = ",".join([*SHARED_OVERRIDES, f"numSearchThreads={args.threads}", *limits])
    engines = {"kata": [*KATA_COMMAND, "gtp", "-model", args.model, "-config", args.config,
                        "-override-config", overrides]}
    if args.katago:
        engines["katago"] = [args.katago, "gtp", "-model", args.model, "-config", args.config,
                             "-override-config", overrides + ",logToStderr=false"]
    log = (lambda text: print(text, file=sys.stderr, flush=True))
    rows = []
    try:
        for run in range(1, args.runs + 1):
            for name, command in engines.items():
                log(f"$ {' '.join(shlex.quote(a) for a in command)}")
                rows += measure(name, command, args.size, visit_counts, args.moves, args.seconds, run, log)
    except (GtpClientError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"cpu": cpu_model(), "rows": rows}, indent=1))
        return 0
    print_table(rows, list(engines), args.runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
