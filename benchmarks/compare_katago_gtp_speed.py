#!/usr/bin/env python3
"""GTP game speed, side by side with KataGo: start-up, the first move, the first analysis line, and a
game's moves with tree reuse, optionally beside busy loops (contention).

    python3 benchmarks/compare_katago_gtp_speed.py --katago /path/to/katago --model NET.bin.gz \\
        [--config configs/gtp_example.cfg] [--visits 600] [--first-visits 1500] [--moves 8] [--size 19]
        [--busy-loops 1] [--json]

For each engine in turn (never both at once): start it and time the first answer (`name`), then
``genmove`` with --first-visits visits (the first move pays for whatever the engine sets up lazily),
then --moves more genmoves alternating colours with --visits visits each, timing each (the tree is
reused between them as in a real game); then `clear_board` and the time to the first
`kata-analyze` info line, as Lizzie or KaTrain see it; then interactive analysis as a user leaves it
running: a fresh position (moves the game did not search) analysed for --analyze-seconds, its speed
read from the root visits the info lines report (``rootInfo``), as seconds per 1,000 visits after the
first info line. With --busy-loops N, N processes spin beside the engine the whole time, as other
programs on a user's machine do.

Printed: the CPU model, a table of seconds per stage for both engines and kata's speed-up (KataGo's
time / kata's time; above 1 means kata is faster).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from busy_loop import BusyLoops  # noqa: E402
from kata_env import KATA_COMMAND, KATA_ENV, REPO, cpu_model  # noqa: E402  (also makes katacli importable from a checkout)

from katacli.gtp.client import GtpClient, GtpClientError  # noqa: E402

MOVE_TIMEOUT_SECONDS = 3600.0
ANALYZE_INTERVAL_CENTISECONDS = 10
# A position neither engine's game searched (the first genmoves start from the empty board), so the
# evaluation caches give the analysis no head start.
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRST"   # (no I)


def analysis_position(size: int) -> tuple[str, ...]:
    """Four corner stones, as C3, R17, B18, S2 on 19x19, on any board of 5 or more."""
    def vertex(column: int, row: int) -> str:   # 1-based, from the left and from the bottom
        return f"{GTP_COLUMNS[column - 1]}{row}"
    return (f"b {vertex(3, 3)}", f"w {vertex(size - 2, size - 2)}", f"b {vertex(2, size - 1)}",
            f"w {vertex(size - 1, 2)}")
VISITS_PER_UNIT = 1000
SHARED_OVERRIDES = ("ponderingEnabled=false", "maxTime=1000000", "maxPlayouts=1000000000", "allowResignation=false")


def timed(action) -> float:
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


def first_info_line(engine: GtpClient) -> float:
    """Seconds from sending kata-analyze to its first info line; the analysis is then stopped."""
    started = time.perf_counter()
    engine.send_line(f"kata-analyze {ANALYZE_INTERVAL_CENTISECONDS}")
    while True:
        line = engine.read_line(MOVE_TIMEOUT_SECONDS)
        if line.startswith("info "):
            elapsed = time.perf_counter() - started
            break
    stop_analysis(engine)
    return elapsed


def stop_analysis(engine: GtpClient) -> None:
    engine.send_line("name")  # any command ends the analysis; skip to its answer
    while not engine.read_line(MOVE_TIMEOUT_SECONDS).startswith("= KataGo"):
        pass
    engine.read_line(MOVE_TIMEOUT_SECONDS)  # the blank line after the answer


def root_visits(info_line: str) -> int | None:
    words = info_line.split()
    for index in range(len(words) - 2):
        if words[index] == "rootInfo" and words[index + 1] == "visits":
            return int(words[index + 2])
    return None


def analysis_seconds_per_unit(engine: GtpClient, seconds: float, size: int) -> float:
    """Seconds per VISITS_PER_UNIT root visits while kata-analyze runs for ``seconds``."""
    for move in analysis_position(size):
        engine.command(f"play {move}")
    engine.send_line(f"kata-analyze {ANALYZE_INTERVAL_CENTISECONDS} rootInfo true")
    first = last = None
    started = time.perf_counter()
    while time.perf_counter() - started < seconds:
        line = engine.read_line(MOVE_TIMEOUT_SECONDS)
        visits = root_visits(line) if line.startswith("info ") else None
        if visits is not None:
            sample = (time.perf_counter(), visits)
            first = first or sample
            last = sample
    stop_analysis(engine)
    if first is None or last[1] <= first[1]:
        raise GtpClientError(f"kata-analyze gave no growing rootInfo visits in {seconds:.0f} s")
    return (last[0] - first[0]) * VISITS_PER_UNIT / (last[1] - first[1])


def measure(name: str, argv: list[str], args, log) -> dict:
    stages: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as cwd:  # KataGo's gtp_example.cfg writes logs to ./gtp_logs
        started = time.perf_counter()
        engine = GtpClient(argv, name=name, cwd=cwd, env=KATA_ENV)
        try:
            engine.command("name", MOVE_TIMEOUT_SECONDS)
            stages["start-up (first answer)"] = time.perf_counter() - started
            engine.command(f"boardsize {args.size}")
            engine.command("clear_board")
            engine.command(f"kata-set-param maxVisits {args.first_visits}")
            stages[f"first genmove ({args.first_visits} visits)"] = timed(
                lambda: engine.command("genmove b", MOVE_TIMEOUT_SECONDS))
            engine.command(f"kata-set-param maxVisits {args.visits}")
            colour, total = "w", 0.0
            for _ in range(args.moves):
                total += timed(lambda: engine.command(f"genmove {colour}", MOVE_TIMEOUT_SECONDS))
                colour = "b" if colour == "w" else "w"
            stages[f"{args.moves} more genmoves ({args.visits} visits, tree reuse)"] = total
            engine.command("clear_board")
            stages["first kata-analyze info line"] = first_info_line(engine)
            stages[f"kata-analyze, s per {VISITS_PER_UNIT:,} visits"] = analysis_seconds_per_unit(
                engine, args.analyze_seconds, args.size)
        finally:
            engine.close()
    for stage, seconds in stages.items():
        log(f"{name}: {stage}: {seconds:.2f} s")
    return stages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", default=os.environ.get("KATAGO_BINARY"), help="KataGo binary ($KATAGO_BINARY)")
    parser.add_argument("--model", required=True, help="network for both engines")
    parser.add_argument("--config", default=str(REPO / "configs" / "gtp_example.cfg"))
    parser.add_argument("--visits", type=int, default=600, help="visits of the game's moves after the first")
    parser.add_argument("--first-visits", type=int, default=1500, help="visits of the first genmove")
    parser.add_argument("--moves", type=int, default=8, help="genmoves after the first")
    parser.add_argument("--size", type=int, default=19, choices=range(5, 20), metavar="5..19")
    parser.add_argument("--analyze-seconds", type=float, default=8.0,
                        help="how long the interactive analysis runs")
    parser.add_argument("--busy-loops", type=int, default=0, help="processes spinning beside the engine")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.katago:
        parser.error("give --katago (or set KATAGO_BINARY)")
    if min(args.visits, args.first_visits, args.moves) < 1 or args.busy_loops < 0 or args.analyze_seconds <= 1:
        parser.error("--visits, --first-visits and --moves must be at least 1, --busy-loops at least 0, "
                     "--analyze-seconds above 1")
    overrides = ",".join(SHARED_OVERRIDES)
    engines = {
        "kata": [*KATA_COMMAND, "gtp", "-model", args.model, "-config", args.config,
                 "-override-config", overrides],
        "katago": [args.katago, "gtp", "-model", args.model, "-config", args.config,
                   "-override-config", overrides + ",logToStderr=false"],
    }
    log = (lambda text: print(text, file=sys.stderr, flush=True))
    results = {}
    try:
        with BusyLoops(args.busy_loops):
            for name, command in engines.items():
                log(f"$ {' '.join(shlex.quote(a) for a in command)}")
                results[name] = measure(name, command, args, log)
    except (GtpClientError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps({"cpu": cpu_model(), "busy_loops": args.busy_loops, "size": args.size,
                          "seconds": results}, indent=1))
        return 0
    print(f"{cpu_model()} ({len(os.sched_getaffinity(0))} usable cores); {args.size}x{args.size}, "
          f"{args.busy_loops} busy loop(s) beside the engine")
    print(f"{'stage':<52}{'kata s':>9}{'KataGo s':>10}{'speed-up':>10}")
    for stage in results["kata"]:
        mine, theirs = results["kata"][stage], results["katago"][stage]
        print(f"{stage:<52}{mine:>9.2f}{theirs:>10.2f}{theirs / max(mine, 1e-9):>9.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
