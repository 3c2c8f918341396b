#!/usr/bin/env python3
"""Where a network wants to play first: its empty-board policy per board size, by line.

    python3 benchmarks/default_net_opening.py [--model NET.bin.gz] [--boards 9,13,15,17,19] [--json]

A sane opening on 13x13 and larger is on the 3rd or 4th line (counted from the nearest edge, the edge
being line 1; on smaller boards the centre is sane too); a net that never saw the board size may
instead favour the 2nd line or the edge. For each
board size the policy of the empty board (Black to move, averaged over the 8 symmetries so that no
orientation is favoured) is summed per line and the best move is named with its line. By default the
network is katacli's packaged default net (the one `kata gtp` uses without -model).
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
    if args.json:
        print(json.dumps({"model": Path(str(model)).name, "boards": results}, indent=1))
        return 0
    print(f"{Path(str(model)).name}: empty-board policy (Black, 8 symmetries averaged)")
    print(f"{'board':>6} {'best':>6} {'line':>5} {'prior':>7}   policy on lines 1..{SHOWN_LINES}")
    for row in results:
        lines = "  ".join(f"{line}:{mass:.3f}" for line, mass in row["policy_per_line"].items())
        sane = good_lines(row["size"])
        verdict = "" if row["sane"] else f"   (not on lines {sane[0]}-{sane[-1]})"
        print(f"{row['size']:>4}x{row['size']:<2}{row['best_move']:>6} {row['best_line']:>5} "
              f"{row['best_prior']:>7.3f}   {lines}{verdict}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
