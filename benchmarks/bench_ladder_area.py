"""Timing of the ladder scan and the area computations on 19x19 mid-game positions.

Not a test: prints microseconds per call. The feature encoder runs the ladder
scan three times (current and two previous boards) and one area computation per
NN evaluation. Positions come from RANDOM_MOVES random legal moves from an empty
board, so they are full of short-liberty chains (more ladder work than real games).

    python3 benchmarks/bench_ladder_area.py [num_positions]
"""
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from katacli._core.area import run_area_calculate, run_area_independent_life  # noqa: E402
from katacli._core.board import GoBoard  # noqa: E402
from katacli._core.ladder import run_ladder_features  # noqa: E402

BOARD_SIZE = 19
RANDOM_MOVES = 150
SEED = 20240521
MIN_SECONDS = 0.2          # time each function on each position for about this long
BLACK, WHITE = 1, 2


def random_position(rng):
    board = GoBoard(BOARD_SIZE)
    for move_number in range(RANDOM_MOVES):
        player = BLACK if move_number % 2 == 0 else WHITE
        points = board.empty_points()
        rng.shuffle(points)
        for point in points:
            if board.is_legal(point, player):
                board.play(point, player)
                break
        else:
            board.play(None, player)
    return board


def microseconds_per_call(run):
    """Grow the repeat count until one timing takes MIN_SECONDS; return microseconds per call."""
    repeats = 1
    while True:
        start = time.perf_counter()
        run(repeats)
        elapsed = time.perf_counter() - start
        if elapsed >= MIN_SECONDS:
            return elapsed / repeats * 1e6
        repeats *= 4


def main():
    if len(sys.argv) > 1 and not sys.argv[1].isdigit():
        print(__doc__)
        sys.exit(0 if sys.argv[1] in ("-h", "--help") else 2)
    num_positions = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    rng = random.Random(SEED)
    print(f"{BOARD_SIZE}x{BOARD_SIZE}, {RANDOM_MOVES} random moves per position; microseconds per call")
    print(f"{'position':>8} {'laddered':>8} {'ladder scan':>12} {'area':>8} {'indep. life':>12}")
    totals = [0.0, 0.0, 0.0]
    for index in range(num_positions):
        board = random_position(rng)
        laddered = run_ladder_features(board, WHITE, 1)
        timings = [
            microseconds_per_call(lambda n: run_ladder_features(board, WHITE, n)),
            microseconds_per_call(lambda n: run_area_calculate(board, n)),
            microseconds_per_call(lambda n: run_area_independent_life(board, n)),
        ]
        totals = [t + u for t, u in zip(totals, timings)]
        print(f"{index:>8} {laddered:>8} {timings[0]:>12.1f} {timings[1]:>8.1f} {timings[2]:>12.1f}")
    means = [t / num_positions for t in totals]
    print(f"{'mean':>8} {'':>8} {means[0]:>12.1f} {means[1]:>8.1f} {means[2]:>12.1f}")
    print(f"per NN evaluation (3 ladder scans + 1 area): {3 * means[0] + means[1]:.1f} us")


if __name__ == "__main__":
    main()
