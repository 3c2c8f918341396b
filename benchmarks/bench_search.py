"""Search speed on 19x19: visits/s, network evaluations/s and average batch size per numSearchThreads.

Like KataGo's ``benchmark`` command: for each thread count, search a few positions of a
game (fresh tree and empty NN cache for each) and report totals. Usage::

    python benchmarks/bench_search.py [--model PATH] [--threads 1,2,4,8,16] [--visits 200]
                                      [--positions 3] [--torch-threads N] [--repeat 3]
                                      [--graph-search on,off]

Each configuration runs --repeat times; the median and the best visits/s are printed, since
other processes on a shared machine make single runs noisy. On a machine that other jobs keep
busy, OMP_WAIT_POLICY=PASSIVE in the environment avoids spinning OpenMP workers collapsing
throughput; importing katacli sets it unless the environment says otherwise (the header prints the
value in force).

--graph-search runs each configuration with useGraphSearch on (KataGo's default: transpositions
share one node) and/or off (a plain tree); the runs of the two modes alternate, so that a change
in the machine's load hits both alike.

Recorded when graph search landed (2 cores shared with a training run and other jobs, load average
7.5 to 10, so single figures swing by 2x; no katago binary here, so KataGo's Eigen figure could not
be taken beside them): g170-b6c96, 19x19, 2 positions x 100 visits, numSearchThreads 2, torch
threads 2, OMP_WAIT_POLICY=PASSIVE, --repeat 3:

    numSearchThreads graph   visits/s     best  nnEvals/s  avgBatch
                   2    on       81.1    128.0       78.3      1.96
                   2   off       53.3    112.4       53.3      1.96
    (a second run, load average 10.4)
                   2    on       81.7     83.7       79.3      1.96
                   2   off       63.5     73.8       63.5      1.96

With graph search a transposition adds a visit without a network evaluation (visits/s above
nnEvals/s). The gap between the medians is mostly load noise (compare the best runs).

numSearchThreads is the number of leaves a search keeps in flight per network batch
(see katacli.search); torch's intra-op threads are set separately (default: all cores).
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))   # sibling scripts, even under PYTHONSAFEPATH
from random_positions import GameState  # noqa: E402  (either build's)
from kata_env import cpu_model  # noqa: E402

from katacli.game.coords import parse_vertex  # noqa: E402
from katacli.nn.evaluator import NNEvaluator, set_cpu_threads  # noqa: E402
from katacli.search import SearchParams, Searcher  # noqa: E402

DEFAULT_MODEL = ROOT.parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
# A made-up but ordinary opening; positions are taken every few moves along it.
OPENING = ("Q16 D4 Q3 D16 C14 F17 R5 E14 C10 O17 R14 P4 O3 Q8 R8 Q10 R11 K4 F3 C6 D11 H17 "
           "N16 C17 C16 B16 D17 B17 M4 O5").split()
POSITION_STRIDE = 10


def opening_positions(count: int) -> list[GameState]:
    positions = []
    state = GameState(19)
    player = 1
    for i, vertex in enumerate(OPENING + [None]):
        if i % POSITION_STRIDE == 0:
            positions.append(state.copy())
            if len(positions) == count:
                break
        if vertex is None:
            break
        state.play(parse_vertex(vertex, 19, 19), player)
        player = 3 - player
    return positions


def bench(evaluator: NNEvaluator, positions: list[GameState], threads: int, visits: int, graph: bool) -> dict:
    params = SearchParams().replace(num_search_threads=threads, max_visits=visits, use_graph_search=graph)
    total_visits = total_seconds = 0.0
    evals0, batches0 = evaluator.num_positions_evaluated, evaluator.num_batches
    for state in positions:
        if evaluator.cache is not None:
            evaluator.cache.clear()
        searcher = Searcher(state, params, evaluator, seed=1)
        start = time.monotonic()
        stats = searcher.run()
        total_seconds += time.monotonic() - start
        total_visits += stats.visits
    evals = evaluator.num_positions_evaluated - evals0
    batches = evaluator.num_batches - batches0
    return {"threads": threads, "visits_per_s": total_visits / total_seconds, "evals_per_s": evals / total_seconds,
            "avg_batch": evals / batches if batches else 0.0, "seconds": total_seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default=str(DEFAULT_MODEL))
    parser.add_argument("--threads", default="1,2,4,8,16", help="numSearchThreads values, comma separated")
    parser.add_argument("--visits", type=int, default=200, help="maxVisits per position")
    parser.add_argument("--positions", type=int, default=3, help="positions along the opening (every 10 moves)")
    parser.add_argument("--torch-threads", type=int, default=os.cpu_count() or 1, help="torch intra-op threads")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration (median and best reported)")
    parser.add_argument("--graph-search", default="on,off", help="useGraphSearch modes to run: on, off or on,off")
    args = parser.parse_args()
    modes = [{"on": True, "off": False}.get(m.strip()) for m in args.graph_search.split(",")]
    if None in modes or not modes:
        sys.exit(f"--graph-search takes on, off or on,off, not {args.graph_search!r}")
    if not Path(args.model).exists():
        sys.exit(f"model not found: {args.model}")
    set_cpu_threads(args.torch_threads)
    evaluator = NNEvaluator.from_file(args.model, seed=0)
    positions = opening_positions(args.positions)
    # Warm up torch's kernels for the batch sizes we will see.
    Searcher(positions[0], SearchParams().replace(num_search_threads=4), evaluator, seed=0).run(max_visits=12)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"{cpu_model()}: model {Path(args.model).name}, 19x19, {len(positions)} positions x {args.visits} visits, "
          f"torch threads {args.torch_threads}, {os.cpu_count()} cores, OMP_WAIT_POLICY={os.environ.get('OMP_WAIT_POLICY', 'unset')}, "
          f"load average {load:.1f}")
    print(f"{'numSearchThreads':>16} {'graph':>5} {'visits/s':>10} {'best':>8} {'nnEvals/s':>10} {'avgBatch':>9}")
    for threads in (int(t) for t in args.threads.split(",")):
        rows = {graph: [] for graph in modes}
        for _ in range(max(1, args.repeat)):
            for graph in modes:
                rows[graph].append(bench(evaluator, positions, threads, args.visits, graph))
        for graph in modes:
            median = statistics.median(r["visits_per_s"] for r in rows[graph])
            best = max(r["visits_per_s"] for r in rows[graph])
            evals = statistics.median(r["evals_per_s"] for r in rows[graph])
            batch = statistics.median(r["avg_batch"] for r in rows[graph])
            print(f"{threads:>16} {'on' if graph else 'off':>5} {median:>10.1f} {best:>8.1f} {evals:>10.1f} {batch:>9.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
