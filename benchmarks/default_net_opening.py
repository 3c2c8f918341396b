#!/usr/bin/env python3
"""Where a network wants to play first: its empty-board policy per board size, by line.

    python3 benchmarks/default_net_opening.py [--model NET.bin.gz] [--boards 9,13,15,17,19]
        [--search-visits 40,400] [--json]

A sane opening on 13x13 and larger is on the 3rd or 4th line (counted from the nearest edge, the edge
being line 1; on smaller boards the centre is sane too); a net that never saw the board size may
instead favour the 2nd line or the edge. For each
board size the policy of the empty board (Black to move, averaged over the 8 symmetries so that no
orientation is favoured) is summed per line and the best move is named with its line. By default the
network is katacli's packaged default net (the one `kata gtp` uses without -model).

--search-visits adds what a search of the empty board makes of it: the root's visits per line after
that many visits (katacli.Engine, its default settings). Self-play trains the policy towards its
searches' visits, so a search that leaves the policy's line at self-play's visit count shows where
the policy can go, and one that does not shows why it stays.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import kata_env  # noqa: E402,F401  (makes katacli importable from a checkout)

import katacli  # noqa: E402
from katacli.game.coords import parse_vertex  # noqa: E402
from katacli.nets import packaged_default_net  # noqa: E402

DEFAULT_BOARDS = (9, 13, 15, 17, 19)
NUM_SYMMETRIES = 8
# The lines a good opening move is on (3rd: territory, 4th: influence; on boards below 13x13 the
# 5th line, the centre of 9x9, too), and how many lines to print.
GOOD_LINES = (3, 4)
SMALL_BOARD_GOOD_LINES = (3, 4, 5)
BIG_BOARD = 13
SHOWN_LINES = 5
MIN_BOARD, MAX_BOARD = 2, 19


def line_of(row: int, column: int, size: int) -> int:
    """1 for the edge, 2 for the line next to it, ... (the nearest edge counts)."""
    return 1 + min(row, column, size - 1 - row, size - 1 - column)


def good_lines(size: int) -> tuple[int, ...]:
    return GOOD_LINES if size >= BIG_BOARD else SMALL_BOARD_GOOD_LINES


def opening(net, size: int) -> dict:
    game = katacli.Game(size)
    policy = np.mean([net.evaluate(game, symmetry=k).policy for k in range(NUM_SYMMETRIES)], axis=0)
    lines = np.fromfunction(np.vectorize(lambda r, c: line_of(int(r), int(c), size)), (size, size))
    per_line = {line: float(policy[lines == line].sum()) for line in range(1, min(SHOWN_LINES, (size + 1) // 2) + 1)}
    row, column = np.unravel_index(int(np.argmax(policy)), policy.shape)
    best = game.vertex_of(int(column), int(row))
    return {"size": size, "best_move": best, "best_line": line_of(int(row), int(column), size),
            "best_prior": float(policy[row, column]), "policy_per_line": per_line,
            "sane": line_of(int(row), int(column), size) in good_lines(size)}


def searched_opening(net, size: int, visits: int) -> dict:
    """The root's visits per line after a search of the empty board (Black to move)."""
    result = katacli.Engine(net, size=size).analyze(visits=visits)
    per_line: dict[int, int] = {}
    for move in result.moves:
        point = parse_vertex(move.move, size, size)
        if point is not None:
            line = line_of(point[1], point[0], size)
            per_line[line] = per_line.get(line, 0) + move.visits
    total = sum(per_line.values()) or 1
    shown = range(1, min(SHOWN_LINES, (size + 1) // 2) + 1)
    return {"size": size, "visits": visits, "best_move": result.moves[0].move,
            "visits_per_line": {line: per_line.get(line, 0) / total for line in shown}}


def visit_counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"visit counts must be numbers like 40,400, got {text!r}") from None
    if not counts or any(count < 1 for count in counts):
        raise argparse.ArgumentTypeError(f"visit counts must be at least 1, got {text!r}")
    return counts


def board_list(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"board sizes must be numbers like 9,13,19, got {text!r}") from None
    if not sizes or any(not MIN_BOARD <= s <= MAX_BOARD for s in sizes):
        raise argparse.ArgumentTypeError(f"board sizes must be {MIN_BOARD}..{MAX_BOARD}, got {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", help="the network (default: katacli's packaged default net)")
    parser.add_argument("--boards", type=board_list, default=list(DEFAULT_BOARDS), help="board sizes, e.g. 9,19")
    parser.add_argument("--search-visits", type=visit_counts, default=[],
                        help="also search the empty board with these many visits, e.g. 40,400")
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args(argv)
    model = args.model or packaged_default_net()
    if model is None:
        print("error: this installation has no default network; pass --model", file=sys.stderr)
        return 1
    try:
        net = katacli.load_network(str(model), device="cpu")
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    results = [opening(net, size) for size in args.boards]
    searches = [searched_opening(net, size, visits) for size in args.boards for visits in args.search_visits]
    if args.json:
        print(json.dumps({"model": Path(str(model)).name, "boards": results, "searches": searches}, indent=1))
        return 0
    print(f"{Path(str(model)).name}: empty-board policy (Black, 8 symmetries averaged)")
    print(f"{'board':>6} {'best':>6} {'line':>5} {'prior':>7}   policy on lines 1..{SHOWN_LINES}")
    for row in results:
        lines = "  ".join(f"{line}:{mass:.3f}" for line, mass in row["policy_per_line"].items())
        sane = good_lines(row["size"])
        verdict = "" if row["sane"] else f"   (not on lines {sane[0]}-{sane[-1]})"
        print(f"{row['size']:>4}x{row['size']:<2}{row['best_move']:>6} {row['best_line']:>5} "
              f"{row['best_prior']:>7.3f}   {lines}{verdict}")
    if searches:
        print("a search of the empty board: the root's visits per line")
        print(f"{'board':>6} {'visits':>7} {'best':>6}   visits on lines 1..{SHOWN_LINES}")
        for row in searches:
            lines = "  ".join(f"{line}:{share:.2f}" for line, share in row["visits_per_line"].items())
            print(f"{row['size']:>4}x{row['size']:<2}{row['visits']:>7} {row['best_move']:>6}   {lines}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
