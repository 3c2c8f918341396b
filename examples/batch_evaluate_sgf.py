#!/usr/bin/env python3
"""Evaluate every position of a collection of SGF games with the raw network and write one CSV row each.

No search: each position costs one network evaluation, and positions go to the network in batches
(KataGo's batching), so thousands of positions take seconds on a GPU and minutes on a CPU.

    .venv/bin/python examples/batch_evaluate_sgf.py games/ --model ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz \\
        --out positions.csv
    .venv/bin/python examples/batch_evaluate_sgf.py a.sgf b.sgf --every 10 --random-net b2c16   # no model file needed

Columns: file, move_number (moves played before the position), next_player, last_move, black_winrate,
black_score_lead, winrate and score_lead for the side to move, the policy's favourite move and its
probability, and the pass probability. Unreadable SGFs are reported on stderr and skipped.
"""
from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path
from typing import Iterator

import katacli

FIELDS = ["file", "move_number", "next_player", "last_move", "black_winrate", "black_score_lead", "winrate",
          "score_lead", "policy_move", "policy_prob", "pass_prob"]
DEFAULT_BATCH = 64


def sgf_files(paths: list[str]) -> Iterator[Path]:
    """The given files, and every *.sgf below the given directories, in name order."""
    for name in paths:
        path = Path(name)
        if path.is_dir():
            yield from sorted(path.rglob("*.sgf"))
        else:
            yield path


def positions(paths: list[str], every: int) -> Iterator[tuple[str, int, katacli.Game]]:
    """(file, moves played, game cut there) for every ``every``-th position of every readable game."""
    for path in sgf_files(paths):
        try:
            game = katacli.Game.from_sgf(path)
        except (ValueError, OSError) as exc:
            print(f"skipping {path}: {exc}", file=sys.stderr)
            continue
        for number in range(0, len(game.moves) + 1, every):
            yield str(path), number, game.truncated(number)


def row(file: str, number: int, game: katacli.Game, evaluation: katacli.Evaluation) -> dict:
    move, prob = evaluation.top_moves(1)[0]
    return {
        "file": file, "move_number": number, "next_player": evaluation.next_player,
        "last_move": " ".join(game.moves[-1]) if game.moves else "",
        "black_winrate": round(1.0 - evaluation.white_winrate, 6),
        "black_score_lead": round(-evaluation.white_score_lead, 3),
        "winrate": round(evaluation.winrate, 6), "score_lead": round(evaluation.score_lead, 3),
        "policy_move": move, "policy_prob": round(prob, 6), "pass_prob": round(evaluation.pass_policy, 6),
    }


def evaluate(net: katacli.Network, paths: list[str], every: int, batch_size: int, out) -> int:
    """Write the CSV to ``out``; returns the number of positions."""
    writer = csv.DictWriter(out, fieldnames=FIELDS)
    writer.writeheader()
    batch: list = []
    count = 0

    def flush() -> None:
        for (file, number, game), evaluation in zip(batch, net.evaluate_many([g for _, _, g in batch])):
            writer.writerow(row(file, number, game, evaluation))
        batch.clear()

    for item in positions(paths, every):
        batch.append(item)
        count += 1
        if len(batch) >= batch_size:
            flush()
    flush()
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", help="SGF files and/or directories searched for *.sgf")
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a KataGo network (.bin.gz)")
    source.add_argument("--random-net", metavar="ARCH", help="random weights of this architecture, e.g. b2c16")
    parser.add_argument("--every", type=int, default=1, help="evaluate every N-th position (default 1)")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH, help="positions per network call")
    parser.add_argument("--out", help="CSV file to write (default: stdout)")
    args = parser.parse_args()
    if args.every < 1 or args.batch_size < 1:
        parser.error("--every and --batch-size must be at least 1")
    try:
        net = katacli.load_network(args.model, symmetry=0) if args.model else katacli.Network.random(args.random_net)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    if args.out:
        with open(args.out, "w", newline="", encoding="utf-8") as out:
            count = evaluate(net, args.paths, args.every, args.batch_size, out)
        print(f"wrote {count} positions to {args.out}", file=sys.stderr)
    else:
        evaluate(net, args.paths, args.every, args.batch_size, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
