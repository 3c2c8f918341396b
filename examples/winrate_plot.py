#!/usr/bin/env python3
"""Plot Black's win rate and score lead along a game, searching every position with tree reuse.

An :class:`katacli.Engine` follows the game move by move, so each search starts from the subtree the
previous one built (the way ``kata gtp`` reuses its tree). The plot is written with matplotlib.

    .venv/bin/python examples/winrate_plot.py game.sgf --model ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz
    .venv/bin/python examples/winrate_plot.py game.sgf --visits 50 --out game.png      # katacli's default network
    .venv/bin/python examples/winrate_plot.py game.sgf --model rollouts                # no network: random playouts

It also prints one line per position: move number, the move just played, Black's win rate and lead.
"""
from __future__ import annotations

import argparse
import sys

import katacli

DEFAULT_VISITS = 100
DEFAULT_OUT = "winrate.png"


def winrate_curve(game: katacli.Game, net, visits: int) -> list[tuple[int, float, float]]:
    """(moves played, Black's win rate, Black's score lead) for every position of ``game``."""
    engine = katacli.Engine(net, visits=visits, seed="winrate-plot").set_game(game.truncated(0))
    curve = []
    for number in range(len(game.moves) + 1):
        if number > 0:
            engine.play(*game.moves[number - 1])
        result = engine.analyze()
        curve.append((number, result.black_winrate, -result.white_score_lead))
    return curve


def plot(curve: list[tuple[int, float, float]], title: str, path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")  # files only, no window
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    numbers = [n for n, _, _ in curve]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 5))
    top.plot(numbers, [w * 100 for _, w, _ in curve], color="black")
    top.axhline(50, color="grey", linewidth=0.5)
    top.set_ylim(0, 100)
    top.set_ylabel("Black win rate (%)")
    top.set_title(title)
    bottom.plot(numbers, [lead for _, _, lead in curve], color="tab:blue")
    bottom.axhline(0, color="grey", linewidth=0.5)
    bottom.set_ylabel("Black score lead")
    bottom.set_xlabel("moves played")
    bottom.xaxis.set_major_locator(MaxNLocator(integer=True))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sgf", help="the game (SGF file)")
    parser.add_argument("--model", help="a KataGo network (.bin.gz); default: katacli's default network; "
                                        "rollouts: random playouts, no network")
    parser.add_argument("--visits", type=int, default=DEFAULT_VISITS, help=f"visits per position ({DEFAULT_VISITS})")
    parser.add_argument("--out", default=DEFAULT_OUT, help=f"the PNG to write (default {DEFAULT_OUT})")
    args = parser.parse_args()
    if args.visits < 1:
        parser.error("--visits must be at least 1")
    try:
        game = katacli.Game.from_sgf(args.sgf)
        if args.model == "rollouts":
            net = None
        else:
            net = katacli.load_network(args.model) if args.model else katacli.load_default_network()
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    curve = winrate_curve(game, net, args.visits)
    for number, winrate, lead in curve:
        move = " ".join(game.moves[number - 1]) if number else "start"
        print(f"{number:4d} {move:7s} Black {winrate:6.1%} {lead:+6.1f}")
    plot(curve, f"{args.sgf} ({net.name if net else 'random playouts'}, {args.visits} visits)", args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
