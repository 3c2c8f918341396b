#!/usr/bin/env python3
"""Side by side with KataGo: anti-mirror play and the eval cache, through `kata gtp` and `katago gtp`.

    python3 benchmarks/compare_katago_search_features.py --katago /path/to/katago --model NET.bin.gz \\
        --config /path/to/KataGo/cpp/configs/gtp_example.cfg [--visits 300] [--seeds 1,2,3,4]

Both engines get the same config with overrides that make a search deterministic (one search thread, no
network randomisation, no move temperature, fixed seeds), so their searches should agree move by move:

* anti-mirror: a 19x19 game where White answered each of Black's 16 random moves with its mirror image
  (komi 7.5), and the hard case where Black took tengen first and then mirrored White (komi 0.5). Each
  engine runs ``kata-genmove_analyze`` for the player to move with antiMirror false and true; printed:
  the chosen move and the five most visited moves with visits and utility.
* eval cache: a 9x9 game; ``kata-search`` the position (its nodes are recorded), ``undo`` the last move and
  ``kata-genmove_analyze`` the earlier position, with useEvalCache false and true (subtreeValueBiasFactor 0,
  since KataGo keeps that table across undo while kata starts a new one). Printed: the undone move's
  visits and utility (its node holds the cache entry) and the top moves.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import require_katago  # noqa: E402

TIMEOUT_SECONDS = 900
SIZE = 19
CENTER = (SIZE // 2, SIZE // 2)
MIRRORED_PAIRS = 16
COLUMNS = "ABCDEFGHJKLMNOPQRST"
DETERMINISTIC = ("logToStderr=false, numSearchThreads=1, nnRandomize=false, nnRandSeed=compare, "
                 "searchRandSeed=compare, chosenMoveTemperature=0.0, chosenMoveTemperatureEarly=0.0, "
                 "wideRootNoise=0.0, rules=chinese, ponderingEnabled=false, allowResignation=false, maxTime=100000")
EVAL_CACHE_GAMES = ("E5,E3,C4,G5,D7,F4", "C3,G7,C7,G3,E5,D6", "E5,D4,D5,C5,E4,D3")


def vertex(point, size):
    return COLUMNS[point[0]] + str(size - point[1])


def mirror(point):
    return (SIZE - 1 - point[0], SIZE - 1 - point[1])


def mirrored_game(seed: int, center_first: bool) -> tuple[list[str], str]:
    """GTP commands setting up a mirrored game, and the colour to move (the one not mirroring)."""
    rng = random.Random(seed)
    leader, follower = ("w", "b") if center_first else ("b", "w")
    commands = [f"boardsize {SIZE}", "komi 0.5" if center_first else "komi 7.5"]
    used = set()
    if center_first:
        used.add(CENTER)
        commands.append(f"play b {vertex(CENTER, SIZE)}")
    for _ in range(MIRRORED_PAIRS):
        point = CENTER
        while point == CENTER or point in used or mirror(point) in used:
            point = (rng.randrange(3, SIZE - 3), rng.randrange(3, SIZE - 3))
        used |= {point, mirror(point)}
        commands += [f"play {leader} {vertex(point, SIZE)}", f"play {follower} {vertex(mirror(point), SIZE)}"]
    return commands, leader


def final_analysis(engine: list[str], commands: list[str]) -> tuple[str, dict]:
    """(chosen move, {move: (visits, utility)}) from the last kata-genmove_analyze of a GTP session."""
    out = subprocess.run(engine, input="\n".join(commands + ["quit"]) + "\n", capture_output=True, text=True,
                         timeout=TIMEOUT_SECONDS).stdout
    lines = [line for line in out.splitlines() if line.startswith(("info", "play"))]
    if len(lines) < 2:
        sys.exit(f"no analysis from {engine[0]}: {out[-500:]}")
    moves = {}
    for part in lines[-2].split("info ")[1:]:
        fields = part.split()
        values = dict(zip(fields[0::2], fields[1::2]))
        moves[values["move"]] = (int(values["visits"]), float(values["utility"]))
    return lines[-1].split()[1], moves


def show(label: str, result: tuple[str, dict], extra: tuple[str, ...] = ()) -> None:
    chosen, moves = result
    top = sorted(moves.items(), key=lambda item: -item[1][0])[:5]
    picked = [(m, moves[m]) for m in extra if m in moves and m not in dict(top)]
    text = ", ".join(f"{m} {v} {u:+.6f}" for m, (v, u) in top + picked)
    print(f"  {label:32s} plays {chosen:4s} | {text}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--katago", required=True, help="path of a katago binary")
    parser.add_argument("--model", required=True, help="network file for both engines")
    parser.add_argument("--config", required=True, help="KataGo's gtp_example.cfg")
    parser.add_argument("--visits", type=int, default=300)
    parser.add_argument("--seeds", default="1,2,3,4")
    args = parser.parse_args()
    require_katago(args.katago)
    engines = {"katago": [args.katago, "gtp"], "kata": [sys.executable, "-P", "-m", "katacli.cli", "gtp"]}

    def run(name: str, overrides: str, commands: list[str]):
        argv = engines[name] + ["-config", args.config, "-model", args.model, "-override-config",
                                f"{DETERMINISTIC}, maxVisits={args.visits}, {overrides}"]
        return final_analysis(argv, commands)

    agree = total = 0
    for center_first in (False, True):
        for seed in (int(s) for s in args.seeds.split(",")):
            commands, to_move = mirrored_game(seed, center_first)
            print(f"mirrored game seed {seed}{' (tengen first, komi 0.5)' if center_first else ''}:")
            for anti in ("false", "true"):
                results = {name: run(name, f"antiMirror={anti}", commands + [f"kata-genmove_analyze {to_move} 1000"])
                           for name in engines}
                for name, result in results.items():
                    show(f"{name} antiMirror={anti}", result)
                total += 1
                agree += results["katago"][0] == results["kata"][0]
    for game in EVAL_CACHE_GAMES:
        moves = game.split(",")
        commands, pla = ["boardsize 9", "komi 7"], "b"
        for move in moves:
            commands.append(f"play {pla} {move}")
            pla = "w" if pla == "b" else "b"
        earlier = "w" if pla == "b" else "b"
        commands += [f"kata-search {pla}", "undo", f"kata-genmove_analyze {earlier} 1000"]
        print(f"eval cache, 9x9 game {game}, then undo {moves[-1]}:")
        for cache in ("false", "true"):
            results = {name: run(name, f"subtreeValueBiasFactor=0.0, useEvalCache={cache}, evalCacheMinVisits=10",
                                 commands) for name in engines}
            for name, result in results.items():
                show(f"{name} useEvalCache={cache}", result, (moves[-1],))
            total += 1
            agree += results["katago"][0] == results["kata"][0]
    print(f"same move chosen in {agree} of {total} comparisons")


if __name__ == "__main__":
    main()
