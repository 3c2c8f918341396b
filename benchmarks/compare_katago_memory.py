#!/usr/bin/env python3
"""Resident memory of `kata gtp` and of a KataGo binary, side by side, as searches grow the tree.

    python3 benchmarks/compare_katago_memory.py --katago /path/to/katago --model NET.bin.gz \\
        [--config configs/gtp_example.cfg] [--visits 10000,100000] [--moves 4] [--size 19]

For each engine (one after the other, so they do not compete for the processor): start it, set up an
empty board, and read its resident set size (VmRSS, Linux /proc); then for each visit count, play
--moves genmoves in a row with that many visits each (the tree is reused from move to move, as in a
game) and read the RSS after every move. A table of megabytes per stage is printed (--json: JSON).
The growth from "after start-up" is what the search tree costs; KataGo's graph search and kata's
tree keep different node layouts, so equal visits need not mean equal memory.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import KATA_ENV, REPO  # noqa: E402  (also makes katacli importable from a checkout)

from katacli.gtp.client import GtpClient, GtpClientError  # noqa: E402

KIB_PER_MB = 1024.0
MOVE_TIMEOUT_SECONDS = 3600.0
# Both engines: one fixed search size per move, no pondering, no time limit, no resignation.
SHARED_OVERRIDES = ("ponderingEnabled=false", "maxTime=1000000", "maxPlayouts=1000000000", "allowResignation=false")


def resident_mb(pid: int) -> float:
    """VmRSS of a process in MB (Linux)."""
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / KIB_PER_MB
    raise OSError(f"no VmRSS for process {pid}")


def measure(name: str, argv: list[str], size: int, visit_counts: list[int], moves: int, log) -> list[dict]:
    rows = []
    with tempfile.TemporaryDirectory() as cwd:  # KataGo's gtp_example.cfg writes logs to ./gtp_logs
        engine = GtpClient(argv, name=name, cwd=cwd, env=KATA_ENV)
        try:
            engine.command(f"boardsize {size}")
            engine.command("clear_board")
            rows.append({"engine": name, "stage": "after start-up", "visits": 0,
                         "rss_mb": resident_mb(engine.process.pid)})
            log(f"{name}: {rows[-1]['rss_mb']:.0f} MB after start-up")
            colour = "b"
            for visits in visit_counts:
                engine.command(f"kata-set-param maxVisits {visits}")
                for move in range(1, moves + 1):
                    engine.command(f"genmove {colour}", MOVE_TIMEOUT_SECONDS)
                    colour = "w" if colour == "b" else "b"
                    rows.append({"engine": name, "stage": f"{visits} visits, move {move}", "visits": visits,
                                 "rss_mb": resident_mb(engine.process.pid)})
                    log(f"{name}: {rows[-1]['rss_mb']:.0f} MB after {rows[-1]['stage']}")
        finally:
            engine.close()
    return rows


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
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    try:
        visit_counts = [int(v) for v in args.visits.split(",") if v.strip()]
    except ValueError:
        parser.error("--visits takes whole numbers separated by commas, e.g. 10000,100000")
    if not visit_counts or min(visit_counts) < 1 or args.moves < 1:
        parser.error("--visits and --moves must be at least 1")
    if not sys.platform.startswith("linux"):
        parser.error("resident memory is read from /proc: Linux only")
    overrides = ",".join([*SHARED_OVERRIDES, f"numSearchThreads={args.threads}"])
    engines = {"kata": [sys.executable, "-m", "katacli.cli", "gtp", "-model", args.model, "-config", args.config,
                        "-override-config", overrides]}
    if args.katago:
        engines["katago"] = [args.katago, "gtp", "-model", args.model, "-config", args.config,
                             "-override-config", overrides + ",logToStderr=false"]
    log = (lambda text: print(text, file=sys.stderr, flush=True))
    rows = []
    try:
        for name, command in engines.items():
            log(f"$ {' '.join(shlex.quote(a) for a in command)}")
            rows += measure(name, command, args.size, visit_counts, args.moves, log)
    except (GtpClientError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(rows, indent=1))
        return 0
    stages = list(dict.fromkeys(row["stage"] for row in rows))
    names = list(engines)
    print(f"{'stage':<28}" + "".join(f"{name + ' MB':>12}" for name in names))
    for stage in stages:
        values = {row["engine"]: row["rss_mb"] for row in rows if row["stage"] == stage}
        print(f"{stage:<28}" + "".join(f"{values.get(name, float('nan')):>12.0f}" for name in names))
    return 0


if __name__ == "__main__":
    sys.exit(main())
