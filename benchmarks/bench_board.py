"""Board core speed on one core: random legal playouts on 19x19 and 9x9.

Prints moves/s and playouts/s of katacli._core.playout (uniform random legal moves,
no own-eye filling, until both pass), then the cost per move of the board alone:
replaying a recorded playout with board_play_assume_legal versus board_play
(legality check, then play). The timed loops run in C without the GIL.

    python3 benchmarks/bench_board.py [--seconds 2] [--repeats 3] [--seed 1]
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import cpu_model  # noqa: E402

from katacli._core.playout import record_playout, replay_moves, run_playouts  # noqa: E402

SIZES = (19, 9)
CALIBRATION_PLAYOUTS = 20
REPLAYS_PER_CALIBRATION = 20
TARGET_MOVES_PER_SECOND_19 = 3_000_000


def best_rate(run, work_per_call: int, repeats: int) -> float:
    """Highest work per second over repeats calls (the least disturbed run)."""
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        elapsed = time.perf_counter() - started
        best = max(best, work_per_call / elapsed)
    return best


def calls_for(seconds: float, run, calibration_calls: int) -> int:
    """How many units of work (scaled from a calibration run) fill about `seconds`."""
    started = time.perf_counter()
    run(calibration_calls)
    elapsed = max(time.perf_counter() - started, 1e-6)
    return max(calibration_calls, int(calibration_calls * seconds / elapsed))


def bench_playouts(size: int, seconds: float, repeats: int, seed: int) -> tuple[float, float]:
    num = calls_for(seconds, lambda n: run_playouts(size, size, n, seed), CALIBRATION_PLAYOUTS)
    stones, _ = run_playouts(size, size, num, seed)   # same seed, same work in every repeat
    playouts_per_s = best_rate(lambda: run_playouts(size, size, num, seed), num, repeats)
    return playouts_per_s * stones / num, playouts_per_s


def bench_play_only(size: int, seconds: float, repeats: int, seed: int) -> tuple[float, float]:
    """Nanoseconds per move: (board_play_assume_legal, board_play with its legality check)."""
    moves = record_playout(size, size, seed)
    results = []
    for checked in (False, True):
        reps = calls_for(seconds, lambda n: replay_moves(size, size, moves, n, checked), REPLAYS_PER_CALIBRATION)
        rate = best_rate(lambda: replay_moves(size, size, moves, reps, checked), reps * len(moves), repeats)
        results.append(1e9 / rate)
    return results[0], results[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="approximate length of each timed run")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs per figure; the best is reported")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()

    print(f"{cpu_model()}: random playouts, one core, best of {args.repeats} runs of ~{args.seconds:g}s")
    for size in SIZES:
        moves_per_s, playouts_per_s = bench_playouts(size, args.seconds, args.repeats, args.seed)
        print(f"  {size}x{size}: {moves_per_s / 1e6:6.2f} M moves/s  {playouts_per_s:10.0f} playouts/s")
        if size == 19:
            verdict = "meets" if moves_per_s >= TARGET_MOVES_PER_SECOND_19 else "MISSES"
            print(f"         {verdict} the {TARGET_MOVES_PER_SECOND_19 / 1e6:g} M moves/s goal")
    print("board only, replaying a recorded playout")
    for size in SIZES:
        plain_ns, checked_ns = bench_play_only(size, args.seconds / 2, args.repeats, args.seed)
        print(f"  {size}x{size}: board_play_assume_legal {plain_ns:5.1f} ns/move, "
              f"board_play (legality checked) {checked_ns:5.1f} ns/move")


if __name__ == "__main__":
    main()
