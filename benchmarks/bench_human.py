"""What a human-SL net (-human-model) costs a search: playouts/s with and without one, in one run.

Three set-ups search the same 19x19 positions, alternating (who goes first rotates), --repeat times each:

  main only      the main net alone (no human net loaded)
  human at root  + the human net at the root only (humanSLChosenMoveProp, as gtp_human5k_example.cfg)
  human in tree  + the human net at every node (humanSLPlaExploreProbWeightful /
                 humanSLOppExploreProbWeightful > 0): every leaf is evaluated by both nets

Usage::

    python benchmarks/bench_human.py [--model MAIN] [--human-model HUMAN] [--visits 200]
                                     [--positions 3] [--threads 2] [--repeat 3]

Playouts are counted (not root visits) so that weightless playouts would count too.

Measured 2026-11-23 on a 2-core CPU machine (idle), g170-b6c96 + the shared test human net,
3 positions x 200 visits, numSearchThreads 2, 6 rounds: main only 372 playouts/s; human at root
371 (1.00x); human in tree 252 (0.68x). The shared test
human net is tiny (b3c48); with a real b18c384nbt-humanv0 the in-tree cost is about one more
main-net-sized evaluation per leaf.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_search import opening_positions  # noqa: E402

from katacli.nn.evaluator import NNEvaluator  # noqa: E402
from katacli.nn.model_file_reader import ModelFileError  # noqa: E402
from katacli.search import SearchParams, Searcher  # noqa: E402

SHARED_MODELS = ROOT.parent / "shared" / "models"
DEFAULT_MODEL = SHARED_MODELS / "g170-b6c96-s175395328-d26788732.bin.gz"
DEFAULT_HUMAN_MODEL = SHARED_MODELS / "human" / "test-b3c48nbt-humanmeta.bin.gz"
PROFILE = "rank_5k"
SETUPS = {
    "main only": dict(human=False),
    "human at root": dict(human=True, human_sl_chosen_move_prop=1.0),
    "human in tree": dict(human=True, human_sl_chosen_move_prop=1.0, human_sl_pla_explore_prob_weightful=0.5,
                          human_sl_opp_explore_prob_weightful=0.5),
}


def run_setup(setup: dict, main, human, positions, threads: int, visits: int) -> float:
    """Playouts per second over the positions (fresh tree and caches for each)."""
    changes = {k: v for k, v in setup.items() if k != "human"}
    params = SearchParams().replace(num_search_threads=threads, max_visits=visits, human_sl_profile=PROFILE, **changes)
    playouts = seconds = 0.0
    for state in positions:
        for net in (main, human):
            net.cache.clear()
        searcher = Searcher(state, params, main, seed=1, human_evaluator=human if setup["human"] else None)
        start = time.perf_counter()
        stats = searcher.run()
        seconds += time.perf_counter() - start
        playouts += stats.playouts
    return playouts / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--human-model", default=str(DEFAULT_HUMAN_MODEL))
    parser.add_argument("--visits", type=int, default=200)
    parser.add_argument("--positions", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    try:
        main_net = NNEvaluator.from_file(args.model)
        human_net = NNEvaluator.from_file(args.human_model)
    except (OSError, ValueError, ModelFileError) as exc:
        sys.exit(f"error: {exc}")
    positions = opening_positions(args.positions)
    run_setup(SETUPS["human in tree"], main_net, human_net, positions[:1], args.threads, 20)  # warm up both
    rates: dict[str, list[float]] = {name: [] for name in SETUPS}
    names = list(SETUPS)
    for round_index in range(args.repeat):
        # Alternate, so load changes hit every set-up alike, and rotate who goes first each round.
        shift = round_index % len(names)
        for name in names[shift:] + names[:shift]:
            rates[name].append(run_setup(SETUPS[name], main_net, human_net, positions, args.threads, args.visits))
    baseline = statistics.median(rates["main only"])
    print(f"{args.positions} positions x {args.visits} visits, numSearchThreads {args.threads}, "
          f"{args.repeat} alternating rounds (median playouts/s)")
    for name, values in rates.items():
        median = statistics.median(values)
        print(f"  {name:14s} {median:8.1f} playouts/s   {median / baseline:5.2f}x main only   "
              f"(runs: {', '.join(f'{v:.1f}' for v in values)})")


if __name__ == "__main__":
    main()
