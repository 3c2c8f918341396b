#!/usr/bin/env python3
"""Load a network, set up a 9x9 position, search 200 visits, print the best move and the win rate.

    .venv/bin/python examples/quickstart.py ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz
    .venv/bin/python examples/quickstart.py            # katacli's small built-in network
    .venv/bin/python examples/quickstart.py rollouts   # no network: random playouts (weak, but needs nothing)
"""
import argparse

import katacli

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("model", nargs="?", help="a KataGo network (.bin.gz); none: katacli's default network; "
                                              "rollouts: random playouts, no network")
args = parser.parse_args()
if args.model == "rollouts":
    net = None
else:
    net = katacli.load_network(args.model) if args.model else katacli.load_default_network()
game = katacli.Game(9, rules="japanese", komi=6.5).play("B", "E5").play("W", "C3")
result = katacli.analyze(game, net, visits=200)
print(f"{result.next_player} to move: best {result.best_move}, win rate {result.winrate:.1%}, "
      f"score lead {result.score_lead:+.1f}, PV {' '.join(result.pv[:6])}")
