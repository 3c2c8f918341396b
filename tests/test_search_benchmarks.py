"""The search benchmarks the GPU check relies on run, on the CPU, with the bundled tiny net.

Each is run the way the GPU check runs it, only small: a script that breaks against the library
(a renamed method it times, a changed argument) fails here, not on a lent GPU machine.
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from support.paths import BUNDLED_TINY_MODEL, REPO
from support.compile import needs_cxx_compiler
from support.selfplay import subprocess_env

BENCHMARKS = REPO / "benchmarks"


def _run(script: str, *args: str) -> str:
    result = subprocess.run([sys.executable, str(BENCHMARKS / script), *args], capture_output=True, text=True,
                            timeout=240, env=subprocess_env())
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout


def _rates(text: str, row: str) -> list[float]:
    """The first number after each row label matching ``row`` (a regex)."""
    return [float(m.group(1)) for m in re.finditer(row + r"\s+(\d+(?:\.\d+)?)", text)]


@pytest.mark.subprocess
def test_zero_cost_search_benchmark_with_a_simulated_gpu_and_both_pipelines():
    out = _run("bench_search_overhead.py", "--sizes", "9", "--threads", "8", "--visits", "60", "--positions", "1",
               "--repeat", "1", "--gpu-latency-ms", "0.2", "--gpu-per-position-us", "5", "--pipeline", "both")
    plain, pipelined = _rates(out, r"9\s+8\s+no\s+-"), _rates(out, r"9\s+8\s+yes\s+-")
    assert len(plain) == len(pipelined) == 1 and plain[0] > 0 and pipelined[0] > 0, out


@pytest.mark.subprocess
def test_zero_cost_search_benchmark_rows_with_and_without_leaf_helpers():
    out = _run("bench_search_overhead.py", "--sizes", "9", "--threads", "8", "--visits", "60", "--positions", "1",
               "--repeat", "1", "--leaf-threads", "0,auto")
    alone, helped = _rates(out, r"9\s+8\s+no\s+0"), _rates(out, r"9\s+8\s+no\s+auto")
    assert len(alone) == len(helped) == 1 and alone[0] > 0 and helped[0] > 0, out


@pytest.mark.subprocess
def test_search_stage_profile_splits_a_search():
    out = _run("profile_search_stages.py", "--model", str(BUNDLED_TINY_MODEL), "--threads", "4", "--visits", "60",
               "--positions", "1", "--boardsize", "9", "--pipeline", "off,worker")
    assert re.search(r"numSearchThreads = 4: \d+ visits", out), out
    assert re.search(r"numSearchThreads = 4, pipelined \(worker\): \d+ visits", out), out
    for stage in ("evaluator: device call", "search: store + back up", "search: evaluate + store (all)"):
        line = next(text for text in out.splitlines() if text.startswith(stage))
        assert int(line.split()[-3]) > 0, line   # calls


@pytest.mark.subprocess
def test_analysis_benchmark_against_a_simulated_gpu():
    out = _run("bench_analysis.py", "--model", str(BUNDLED_TINY_MODEL), "--moves", "6", "--visits", "20",
               "--settings", "4x1,2x2", "--simulated-gpu", "0.2,5")
    assert "simulated GPU" in out
    assert all(rate > 0 for rate in _rates(out, r"4 x 1") + _rates(out, r"2 x 2")), out
    assert len(_rates(out, r"4 x 1")) == 1 and len(_rates(out, r"2 x 2")) == 1, out


@pytest.mark.subprocess
@needs_cxx_compiler
def test_network_benchmark_on_the_cpu_with_a_compiled_row():
    out = _run("bench_nn.py", "--model", str(BUNDLED_TINY_MODEL), "--seconds", "0.05", "--skip-cuda",
               "--compile-batches", "4")
    for batch in (1, 8, 32, 128):   # net and evaluator evaluations/s for each CPU batch size
        rates = [float(v) for v in re.search(rf"^\s+{batch}\s+(\d+)\s+(\d+)\s*$", out, re.M).groups()]
        assert all(rate > 0 for rate in rates), out
    assert "torch.compile (mode default) on cpu" in out, out
    eager, compiled, ratio, _seconds = (float(v) for v in re.search(r"^\s+4\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$",
                                                                     out, re.M).groups())
    assert eager > 0 and compiled > 0 and ratio == pytest.approx(compiled / eager, abs=0.01), out
