"""What the search costs outside the network: visits/s with a zero-cost evaluator.

The evaluator is a real :class:`~katacli.nn.evaluator.NNEvaluator` (the bundled tiny-b2c16 net's
glue: NN cache, symmetries, postprocessing, answer objects or arrays) whose network call is
replaced by constant outputs (the net's own answer for a blank board, repeated over the batch), so
everything but the network is measured. Each search starts from a fresh tree and an empty NN cache,
from positions of a random game; ``numSearchThreads`` is the number of leaves per batch.

Usage::

    python benchmarks/bench_search_overhead.py [--sizes 19,9] [--threads 1,16,64] [--visits 1600] [--repeat 5]

Prints the median visits/s with the min-max spread over the repeats, per wall-clock second and per
CPU second of the process (the figure to compare on a machine shared with other work), and the CPU
model. Only the main thread works (the zero-cost net starts no torch threads), so on an idle machine
both agree.

Baseline, before the array batch path (one NNRequest and one NNOutput object per leaf), AMD EPYC,
2 cores shared with other work (load average 0.2 at the start), --visits 1600 --positions 2 --repeat 5,
wall-clock visits/s:

    size  threads   visits/s (median, min-max)
      19        1     5829   (5080-5892)
      19       16     6753   (6492-6841)
      19       64     9263   (7552-9527)
       9        1     5769   (5278-5813)
       9       16    17050   (16898-17287)
       9       64    21465   (21174-21645)

Before and after (the array batch path, superko bans read per point, the ladder cache, the
batch symmetry gather), run back to back on the same machine (load average 2.4 to 2.6: the
baseline commit dbe8c1e built in place in a copy, PYTHONPATH pointing at it), visits per CPU second:

    size  threads   before (median, min-max)    after (median, min-max)   gain
      19        1      5517 (5054-5823)           9199 (7637-9518)        1.67x
      19       16      6626 (5614-6693)          15052 (14686-15345)      2.27x
      19       64      7125 (6915-7958)          20092 (19256-22300)      2.82x
       9        1      5787 (5688-5831)           7656 (7610-7774)        1.32x
       9       16     16819 (16178-16969)        30610 (16934-31213)      1.82x
       9       64     20447 (18776-20852)        40819 (36058-41794)      2.00x

Then lazy undo in the ladder search (fewer ~6 KB board copies), an inline merge sort of a node's
edges (no qsort callback per comparison) and fewer numpy calls in the batch's postprocessing (float32
softmax, one value-column stack), back to back against the commit before them (0da74fa, built in
place in a copy), load average 4.1 to 4.9, visits per CPU second, two rounds:

    size  threads   before, round 1 / 2           after, round 1 / 2            gain
      19        1      8731 /  9034                 9360 /  9988               1.07-1.11x
      19       16     14661 / 15242                15818 / 16916               1.08-1.11x
      19       64     18867 / 21071                22337 / 24987               1.18-1.19x
       9        1      7368 /  7687                 7931 /  7891               1.03-1.08x
       9       16     29614 / 31839                32151 / 31628               0.99-1.09x
       9       64     40075 / 41282                44144 / 43556               1.06-1.10x

With the 2-liberty ladder check's single snapshot too, at a lighter load (2.6), two rounds of
--sizes 19 --threads 16,64 --repeat 3: 16 leaves 15545 / 15597 -> 16864 / 16472, 64 leaves
22296 / 22259 -> 24884 / 23265 (1.06-1.12x).

Where the rest goes (19x19, 16 leaves, ~60 us per visit, perf over the searches only): the core's
descents and leaf features ~40 us (ladder scans of the leaf's own board 15% of the CPU, pass-alive
areas 9%, moves and legality ~15%, selection and backup ~12% of which libm's pow, as KataGo's
value-weight exponent, 3%), the batch's network glue ~15 us (the input's symmetry gather 4%, numpy
postprocessing ~90 us per batch), storing ~8 us. Python's garbage collector takes under 1% during
searches (132 gen-0 and 12 gen-1 collections, 40 ms in 5 s): the gc samples a whole-process profile
shows are the interpreter's start-up and exit.
"""
from __future__ import annotations

import argparse
import os
import random
import statistics
import time
from pathlib import Path

import numpy as np

import katacli
from katacli._core.history import GameState
from katacli.nn.evaluator import NNEvaluator
from katacli.search import SearchParams, Searcher

# The installed package's tiny net (the benchmark measures the installed build, as `kata` runs it).
TINY_NET = Path(katacli.__file__).parent / "selfcheck" / "data" / "tiny-b2c16.bin.gz"
# Moves of the random game before each searched position (opening and middle game).
POSITION_MOVES = (30, 90)


class ZeroCostEvaluator(NNEvaluator):
    """An NNEvaluator whose network answers instantly: one recorded answer, repeated over the batch."""

    def __init__(self, path: Path):
        from katacli.nn.torch_model import load_model

        super().__init__(load_model(path), device="cpu", trace=False)
        self._answers: dict[tuple, list[np.ndarray]] = {}

    def _forward(self, spatial, global_features, meta, mask_full):
        shape = spatial.shape[1:]
        if shape not in self._answers:  # the real net once, on a blank input of this shape
            blank = np.zeros((1,) + shape, np.float32)
            self._answers[shape] = super()._forward(blank, global_features[:1] * 0, meta, mask_full)
        n = spatial.shape[0]
        return [np.repeat(a, n, axis=0) for a in self._answers[shape]]


def random_position(rng: random.Random, size: int, moves: int) -> GameState:
    state = GameState(size)
    pla = 1
    for _ in range(moves):
        legal = [p for p in state.legal_moves(pla) if p is not None]
        if not legal:
            break
        state.play(rng.choice(legal), pla)
        pla = 3 - pla
    return state


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


def run_once(evaluator: ZeroCostEvaluator, positions, threads: int, visits: int) -> tuple[float, float]:
    """(visits per wall second, visits per CPU second of this process) over the positions."""
    params = SearchParams().replace(num_search_threads=threads, max_visits=visits)
    total_visits, elapsed, cpu = 0, 0.0, 0.0
    for state in positions:
        evaluator.cache.clear()
        searcher = Searcher(state, params, evaluator, seed=1)
        started, cpu_started = time.perf_counter(), time.process_time()
        total_visits += searcher.run().visits
        elapsed += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
    return total_visits / elapsed, total_visits / cpu


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.0f} ({min(values):.0f}-{max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="19,9")
    parser.add_argument("--threads", default="1,16,64", help="numSearchThreads (leaves per batch) to try")
    parser.add_argument("--visits", type=int, default=1600)
    parser.add_argument("--positions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]
    evaluator = ZeroCostEvaluator(TINY_NET)
    print(f"CPU: {cpu_model()} ({len(os.sched_getaffinity(0))} usable cores); "
          f"{args.visits} visits, {args.positions} positions, {args.repeat} repeats")
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'size':>6} {'threads':>8}   visits/s: wall (median, min-max)   per CPU second (median, min-max)")
    for size in sizes:
        rng = random.Random(size)
        positions = [random_position(rng, size, POSITION_MOVES[i % len(POSITION_MOVES)] * size * size // 361)
                     for i in range(args.positions)]
        run_once(evaluator, positions[:1], thread_counts[0], min(args.visits, 100))  # warm up
        rates: dict[int, list[tuple[float, float]]] = {t: [] for t in thread_counts}
        for _ in range(args.repeat):  # settings alternate, so a change in load hits all alike
            for threads in thread_counts:
                rates[threads].append(run_once(evaluator, positions, threads, args.visits))
        for threads in thread_counts:
            wall, cpu = zip(*rates[threads])
            print(f"{size:>6} {threads:>8}   {_spread(list(wall)):>24}   {_spread(list(cpu)):>24}", flush=True)

if __name__ == "__main__":
    main()
