"""What pattern avoidance costs the search: visits/s with and without it, 19x19.

Three settings are searched from the same positions of a game (fresh tree each time):
  off        avoidRepeatedPatternUtility = 0, no external table
  repeated   avoidRepeatedPatternUtility = 0.005 (the GTP handicap default): the table is rebuilt
             from the game's moves at every search, every new node gets a pattern hash
  sgf        as repeated, plus an external table of 200 random games' moves (about avoidSgfPattern*
             with a directory of 200 SGFs)
Usage::

    python benchmarks/bench_pattern_avoidance.py [--model PATH] [--visits 400] [--positions 4] [--repeat 3]

Without --model the leaves are evaluated by a built-in constant evaluator (uniform policy, even
value), so the figures show the search's own cost, where pattern hashing weighs most; with a
network the evaluations dominate and the difference shrinks. Runs of the settings alternate, so
that a change in the machine's load hits all of them alike; the median visits/s is printed.

Recorded when pattern avoidance landed (2 cores shared with a training run, load average 4 to 5):

    constant evaluator, --visits 800 --positions 4 --repeat 5
       setting   visits/s       best
           off     6721.5     7811.0
      repeated     6885.3     7890.4
           sgf     5985.2     8451.0
    g170-b6c96 (no NN cache), --visits 100 --positions 2 --repeat 3
           off      152.6      243.8
      repeated      161.1      195.2
           sgf      159.2      213.5

Hashing new nodes costs nothing measurable here; "sgf" pays for copying its 457k-shape table at
every search (KataGo copies its table per search too) when avoidRepeatedPatternUtility is on as well.
"""
from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from random_positions import random_game_state  # noqa: E402  (its kata_env makes katacli importable from a checkout)
from katacli.nn.postprocess import NNOutput  # noqa: E402
from katacli.search import SearchParams, Searcher  # noqa: E402
from katacli.search.pattern_avoidance import PatternBonusTable  # noqa: E402

SIZE = 19
REPEATED_UTILITY = 0.005
SGF_GAMES = 200
SGF_GAME_MOVES = 150


class ConstantEvaluator:
    """Uniform policy over legal points, an even game: no network cost at all."""

    def evaluate(self, requests):
        out = []
        for r in requests:
            area = r.board_x * r.board_y
            legal = np.asarray(r.legal_mask, dtype=bool)
            policy = np.where(legal[:area], 1.0 / max(1, legal[:area].sum()), -1.0).astype(np.float32)
            out.append(NNOutput(white_win=0.5, white_loss=0.5, no_result=0.0, white_lead=0.0, white_score_mean=0.0,
                                white_score_mean_sq=25.0, var_time_left=-1.0, shortterm_winloss_error=-1.0,
                                shortterm_score_error=-1.0, policy=policy, policy_pass=0.0,
                                white_ownership=np.zeros(area, np.float32), board_x=r.board_x, board_y=r.board_y,
                                symmetry=0))
        return out

    evaluate_many = evaluate_uncached = evaluate

    def lookup_cache(self, request):
        return None

    def store_cache(self, request, result):
        pass


def sgf_like_table(rng: random.Random) -> PatternBonusTable:
    table = PatternBonusTable()
    for _ in range(SGF_GAMES):
        table.add_game_moves(random_game_state(rng, SIZE, SGF_GAME_MOVES), REPEATED_UTILITY)
    return table


def run_once(evaluator, positions, visits: int, utility: float, table) -> float:
    params = SearchParams().replace(num_search_threads=1, max_visits=visits, avoid_repeated_pattern_utility=utility)
    total_visits, started = 0, time.perf_counter()
    for state in positions:
        searcher = Searcher(state, params, evaluator, seed=1)
        searcher.set_external_pattern_table(table)
        total_visits += searcher.run().visits
    return total_visits / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="a KataGo network (default: the constant evaluator)")
    parser.add_argument("--visits", type=int, default=400)
    parser.add_argument("--positions", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.model:
        from katacli.nn.evaluator import NNEvaluator
        from katacli.nn.model_file_reader import ModelFileError

        try:
            evaluator = NNEvaluator.from_file(args.model, cache_size_power_of_two=None)  # every run evaluates afresh
        except (OSError, ValueError, ModelFileError) as exc:
            sys.exit(f"error: {exc}")
    else:
        evaluator = ConstantEvaluator()
    rng = random.Random(7)
    positions = [random_game_state(rng, SIZE, 40 + 40 * i) for i in range(args.positions)]
    started = time.perf_counter()
    table = sgf_like_table(rng)
    print(f"external table: {len(table)} shapes from {SGF_GAMES} games, built in {time.perf_counter() - started:.2f}s")
    settings = {"off": (0.0, None), "repeated": (REPEATED_UTILITY, None), "sgf": (REPEATED_UTILITY, table)}
    rates: dict[str, list[float]] = {name: [] for name in settings}
    run_once(evaluator, positions[:1], min(args.visits, 50), 0.0, None)   # warm-up: the network's first calls
    names = list(settings)
    for round_index in range(args.repeat):
        # Each round in another order, so that no setting always runs first (or last) on a shared machine.
        for name in names[round_index % len(names):] + names[:round_index % len(names)]:
            utility, ext = settings[name]
            rates[name].append(run_once(evaluator, positions, args.visits, utility, ext))
    print(f"{'setting':>10} {'visits/s':>10} {'best':>10}")
    for name, values in rates.items():
        print(f"{name:>10} {statistics.median(values):10.1f} {max(values):10.1f}")


if __name__ == "__main__":
    main()
