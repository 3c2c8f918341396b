"""Tuning numSearchThreads and the batch size for `kata benchmark` and `kata genconfig`, as KataGo's
``benchmark`` and ``genconfig`` do. (The top-level ``benchmarks/`` folder is different: scripts that
measure katacli's own speed and compare it with KataGo.)

The measuring itself is in the search layer, shared with the GTP command ``kata-benchmark``: all three
search the same bundled positions and print the same result line.

* :mod:`~katacli.search.benchmark_positions`: the bundled games (one per board size 7..19) and how positions
  are picked from a game (``benchmark_positions(board_len, count)``).
* :mod:`~katacli.search.speed_benchmark`: ``run_benchmark(positions, params, evaluator)`` -> :class:`BenchmarkResult`
  and its KataGo-format line; ``gtp_benchmark_line(...)`` for ``kata-benchmark``.
* :mod:`~katacli.tuning.runner`: :class:`Benchmarker` measures several thread counts (fixed list or
  automatic tuning) with a batch-size policy.
* :mod:`~katacli.tuning.recommend`: the Elo model (speed gained versus search quality lost per
  thread) and the recommendation.
* :mod:`~katacli.tuning.network`: loading the network as `kata gtp` would.
* :mod:`~katacli.tuning.genconfig_tuning`: genconfig's calibration of visits, threads and batch size.

The GTP config genconfig writes is built by :mod:`katacli.setup.config_writer`, where config becomes settings.

Modules are imported on use, so importing this package does not load torch.
"""
from katacli.search.speed_benchmark import BenchmarkResult, benchmark_params, gtp_benchmark_line, run_benchmark
from katacli.search.benchmark_positions import BenchmarkError, benchmark_positions
from katacli.tuning.recommend import Recommendation, elo_effect, recommend

__all__ = [
    "BenchmarkResult", "BenchmarkError", "Recommendation", "benchmark_params", "benchmark_positions",
    "elo_effect", "gtp_benchmark_line", "recommend", "run_benchmark",
]
