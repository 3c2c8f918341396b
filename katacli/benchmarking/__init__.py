"""Benchmarking search speed and recommending numSearchThreads, as KataGo's ``benchmark`` does.

One core, three users: `kata benchmark`, `kata genconfig` (thread tuning) and the GTP command
``kata-benchmark`` all search the same bundled positions and print the same result line.

* :mod:`~katacli.benchmarking.positions`: the bundled games (one per board size 7..19) and how positions
  are picked from a game (``benchmark_positions(board_len, count)``).
* :mod:`~katacli.benchmarking.core`: ``run_benchmark(positions, params, evaluator)`` -> :class:`BenchmarkResult`
  and its KataGo-format line; ``gtp_benchmark_line(...)`` for ``kata-benchmark``.
* :mod:`~katacli.benchmarking.runner`: :class:`Benchmarker` measures several thread counts (fixed list or
  automatic tuning) with a batch-size policy.
* :mod:`~katacli.benchmarking.recommend`: the Elo model (speed gained versus search quality lost per
  thread) and the recommendation.
* :mod:`~katacli.benchmarking.network`: loading the network as `kata gtp` would.

Modules are imported on use, so importing this package does not load torch.
"""
from katacli.benchmarking.core import BenchmarkResult, benchmark_params, gtp_benchmark_line, run_benchmark
from katacli.benchmarking.positions import BenchmarkError, benchmark_positions
from katacli.benchmarking.recommend import Recommendation, elo_effect, recommend

__all__ = [
    "BenchmarkResult", "BenchmarkError", "Recommendation", "benchmark_params", "benchmark_positions",
    "elo_effect", "gtp_benchmark_line", "recommend", "run_benchmark",
]
