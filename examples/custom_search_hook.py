#!/usr/bin/env python3
"""Change what the search believes, by subclassing katacli.Network: a search that dislikes the edge.

:meth:`katacli.Network.adjust` sees every network evaluation before anything uses it, the search's
leaves included. This example scales down the policy prior of first-line moves by ``--edge-factor``
(and renormalises), so the search explores them less; the values are left alone. It analyses one
position with the plain network and with the adjusted one and prints both top-move tables.

    .venv/bin/python examples/custom_search_hook.py --model ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz
    .venv/bin/python examples/custom_search_hook.py --random-net b2c16 --edge-factor 0    # no model file needed

Other hooks work the same way: make ``output.white_win`` more optimistic for one colour, add a
bonus to a joseki's moves, or blend in a second network's policy.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

import numpy as np

import katacli

DEFAULT_EDGE_FACTOR = 0.05
DEFAULT_VISITS = 200
DEFAULT_MOVES = ["E5", "C3", "C7", "G3"]
TOP_MOVES = 6


class EdgeShyNetwork(katacli.Network):
    """A network whose first-line moves look ``edge_factor`` times less likely to the search."""

    def __init__(self, base: katacli.Network, edge_factor: float):
        super().__init__(base.nn, name=f"{base.name} (edge x{edge_factor:g})")
        self.edge_factor = edge_factor

    def adjust(self, request, output):
        # output is White's view, flat row-major arrays, -1 for illegal moves; its arrays are read-only.
        policy = np.array(output.policy, dtype=np.float32).reshape(output.board_y, output.board_x)
        edge = np.ones(policy.shape, dtype=bool)
        edge[1:-1, 1:-1] = False
        legal = policy >= 0
        policy[edge & legal] *= self.edge_factor
        total = policy[legal].sum() + max(0.0, output.policy_pass)
        policy[legal] /= total
        return dataclasses.replace(output, policy=policy.reshape(-1), policy_pass=output.policy_pass / total)


def top_table(title: str, result: katacli.AnalysisResult) -> str:
    lines = [title, f"{'move':>5} {'visits':>6} {'winrate':>8} {'prior':>6}  pv"]
    for move in result.moves[:TOP_MOVES]:
        lines.append(f"{move.move:>5} {move.visits:>6} {move.winrate:>8.1%} {move.prior:>6.3f}  {' '.join(move.pv[:5])}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--model", help="a KataGo network (.bin.gz)")
    source.add_argument("--random-net", metavar="ARCH", help="random weights of this architecture, e.g. b2c16")
    parser.add_argument("--edge-factor", type=float, default=DEFAULT_EDGE_FACTOR,
                        help=f"multiplier for first-line priors (default {DEFAULT_EDGE_FACTOR})")
    parser.add_argument("--visits", type=int, default=DEFAULT_VISITS, help=f"visits (default {DEFAULT_VISITS})")
    parser.add_argument("--moves", nargs="*", default=DEFAULT_MOVES, help="moves on a 9x9 board, alternating")
    args = parser.parse_args()
    if args.edge_factor < 0:
        parser.error("--edge-factor must be >= 0")
    try:
        net = katacli.load_network(args.model, symmetry=0) if args.model else katacli.Network.random(args.random_net)
        game = katacli.Game(9, rules="chinese").play_moves(args.moves)
    except (OSError, ValueError) as exc:
        parser.error(str(exc))
    shy = EdgeShyNetwork(net, args.edge_factor)
    settings = {"visits": args.visits, "seed": 1, "num_search_threads": 1, "wide_root_noise": 0}
    print(top_table(f"{net.name}:", katacli.analyze(game, net, **settings)))
    print()
    print(top_table(f"{shy.name}:", katacli.analyze(game, shy, **settings)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
