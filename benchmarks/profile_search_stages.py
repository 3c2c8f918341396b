#!/usr/bin/env python3
"""Where a search's time goes, stage by stage, with a real network (on the GPU when there is one).

    python3 benchmarks/profile_search_stages.py --model NET.bin.gz [--threads 16,64] [--visits 3200]
        [--positions 3] [--cprofile] [--override KEY=VALUE,...] [--pipeline off,launch,worker]

The network is loaded as `kata benchmark` loads it (the config's device and precision: FP16 on a GPU with
tensor cores), warmed up, then each setting searches `kata benchmark`'s positions (fresh tree and empty
NN cache each). Timers wrap the evaluator's stages -- cache lookup and plan, the symmetry gather, the
device call (copies, network, synchronisation), postprocessing, cache store -- and the search's store
and back-up; the rest of the search's wall time is the tree's descents and the loop around them. The
table gives each stage's share and microseconds per visit, so a GPU figure can be split into what the
network costs and what the CPU around it costs. --cprofile adds cProfile's top functions (search only,
start-up excluded). Timers cost ~1 us a call: compare settings, not against `kata benchmark`.
"""
from __future__ import annotations

import argparse
import cProfile
import functools
import os
import pstats
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import cpu_model  # noqa: E402  (makes katacli importable from a checkout)

from katacli.config import Config  # noqa: E402
from katacli.nn import evaluator as evaluator_module  # noqa: E402
from katacli.nn.evaluator import NNEvaluator  # noqa: E402
from katacli.search import Searcher  # noqa: E402
from katacli.search.evaluation import NetworkLeafEvaluator  # noqa: E402
from katacli.search.benchmark_positions import benchmark_positions  # noqa: E402
from katacli.search.params import SearchParams  # noqa: E402
from katacli.search.speed_benchmark import benchmark_params  # noqa: E402
from katacli.tuning.gpu_curve import measure_gpu_curve  # noqa: E402
from katacli.setup.engine_settings import NNSettings  # noqa: E402

# Stages timed, in pipeline order: (label, owner, attribute).
STAGES = [
    ("evaluator: cache lookup, plan", NNEvaluator, "plan_batch"),
    ("evaluator: symmetry gather", evaluator_module, "apply_symmetries"),
    ("evaluator: device call", None, "runner"),
    ("evaluator: postprocess", NNEvaluator, "postprocess_arrays"),
    ("evaluator: merge, cache store", NNEvaluator, "finish_batch"),
    ("search: store + back up", Searcher, "_store"),
]
# The search's whole network call (the stages above but the store); with the store, "evaluate + store".
SEARCH_EVALUATE = (NetworkLeafEvaluator, "run_arrays")
EVALUATE_AND_STORE = ("search: evaluator call (all)", "search: store + back up")


class _TimedRunner:
    """The network's device runner with its calls timed (launch and the rest pass through)."""

    def __init__(self, runner, timed_call):
        self._runner, self._timed_call = runner, timed_call

    def __call__(self, *args):
        return self._timed_call(*args)

    def __getattr__(self, name):
        return getattr(self._runner, name)


class StageTimer:
    """Wall time and calls per stage, summed over threads."""

    def __init__(self):
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self._lock = threading.Lock()

    def wrap(self, label: str, fn):
        @functools.wraps(fn)
        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.perf_counter() - start
                with self._lock:
                    self.seconds[label] += elapsed
                    self.calls[label] += 1
        return timed

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()


def install_timers(timer: StageTimer, network: NNEvaluator) -> None:
    for label, owner, name in STAGES:
        if owner is None:   # the network's runner: an attribute of this evaluator
            network.runner = _TimedRunner(network.runner, timer.wrap(label, network.runner))
        else:
            setattr(owner, name, timer.wrap(label, getattr(owner, name)))
    owner, name = SEARCH_EVALUATE
    setattr(owner, name, timer.wrap(EVALUATE_AND_STORE[0], getattr(owner, name)))


# --pipeline modes: one batch at a time; two lanes with the batch launched from the search thread (what a
# CUDA net does when pipelined); two lanes with a worker thread evaluating one (the path before launches).
PIPELINE_MODES = ("off", "launch", "worker")


def search_all(network, positions, params, mode: str = "off") -> tuple[int, float]:
    visits, seconds = 0, 0.0
    # The worker path: hide the evaluator's launches, as for a net that cannot launch (benchmark only).
    NetworkLeafEvaluator.launches_async = property(
        lambda self: mode == "launch" and bool(getattr(self.evaluator, "launches_async", False)))
    for state in positions:
        network.cache.clear()
        searcher = Searcher(state, params, network, seed=1, pipeline=mode != "off")
        start = time.perf_counter()
        visits += searcher.run().visits
        seconds += time.perf_counter() - start
    return visits, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", type=Path, required=True)
    parser.add_argument("--threads", default="16,64", help="numSearchThreads values")
    parser.add_argument("--visits", type=int, default=3200)
    parser.add_argument("--positions", type=int, default=3)
    parser.add_argument("--boardsize", type=int, default=19)
    parser.add_argument("--override", default="", help="config keys KEY=VALUE,... (e.g. searchPipelining=true)")
    parser.add_argument("--cprofile", action="store_true", help="also print cProfile's top functions")
    parser.add_argument("--pipeline", default="off",
                        help=f"comma-separated: {', '.join(PIPELINE_MODES)} (two lanes of leaves: the batch launched "
                             "from the search thread, as a CUDA net does, or evaluated by a worker thread)")
    args = parser.parse_args()
    modes = args.pipeline.split(",")
    if not set(modes) <= set(PIPELINE_MODES):
        raise SystemExit(f"--pipeline takes {', '.join(PIPELINE_MODES)}")
    if not args.model.exists():
        raise SystemExit(f"model not found: {args.model}")
    overrides = dict(kv.split("=", 1) for kv in args.override.split(",") if kv)
    cfg = Config(overrides, mode="gtp")
    options = NNSettings.from_config(cfg).evaluator_options()
    network = NNEvaluator.from_file(args.model, **options, max_batch_size=max(int(t) for t in args.threads.split(",")))
    print(f"{args.model.name} on {network.describe_device()}; host {cpu_model()} ({os.cpu_count()} CPUs)")
    positions = benchmark_positions(args.boardsize, args.positions)
    base = SearchParams.from_config(cfg)
    # As kata benchmark does: every batch size's CUDA graph recorded first, on both device lanes for the
    # sizes a pipelined lane reaches, so that no timed search records one (nothing happens off a GPU).
    max_threads = max(int(t) for t in args.threads.split(","))
    measure_gpu_curve(network, args.boardsize, args.boardsize, max_batch=2 * max_threads, repeats=1)
    timer = StageTimer()
    install_timers(timer, network)
    for threads, mode in ((int(t), mode) for t in args.threads.split(",") for mode in modes):
        params = benchmark_params(base, args.visits, threads)
        search_all(network, positions[:1], benchmark_params(base, min(args.visits, 400), threads), mode)  # warm up
        timer.reset()
        profiler = cProfile.Profile() if args.cprofile else None
        if profiler is not None:
            profiler.enable()
        visits, seconds = search_all(network, positions, params, mode)
        if profiler is not None:
            profiler.disable()
        per_visit = 1e6 / max(visits, 1)
        pipelined = "" if mode == "off" else f", pipelined ({mode})"
        print(f"\nnumSearchThreads = {threads}{pipelined}: {visits} visits in {seconds:.2f} s, "
              f"{visits / seconds:.0f} visits/s "
              f"({per_visit * seconds:.1f} us a visit)")
        print(f"{'stage':<36} {'calls':>7} {'share':>7} {'us/visit':>9}")
        evaluate_all = sum(timer.seconds.get(label, 0.0) for label in EVALUATE_AND_STORE)
        rows = [(label, timer.calls.get(label, 0), timer.seconds.get(label, 0.0)) for label, _, _ in STAGES]
        rows.append(("search: evaluate + store (all)", timer.calls.get(EVALUATE_AND_STORE[0], 0), evaluate_all))
        rows.append(("search: descents, loop (the rest)", 0, max(0.0, seconds - evaluate_all)))
        for label, calls, spent in rows:
            print(f"{label:<36} {calls:>7} {100 * spent / seconds:6.1f}% {spent * per_visit:9.2f}")
        if profiler is not None:
            stats = pstats.Stats(profiler)
            stats.sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
