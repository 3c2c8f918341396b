"""benchmarks/compare_katago_gpu.py: reading `katago benchmark` (CUDA build) and `kata benchmark` output, and
the side-by-side table. The samples are in each program's format (KataGo 1.17.2's CUDA log lines and result
lines, kata's report), trimmed."""
from __future__ import annotations

import sys

import pytest

from support.paths import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
import compare_katago_gpu as cmp  # noqa: E402

KATAGO_OUTPUT = """\
2026-11-27 10:00:01+0000: Loading model and initializing benchmark...
2026-11-27 10:00:01+0000: Cuda backend thread 0: Found GPU NVIDIA H100 80GB HBM3 memory 84929347584 compute capability major 9 minor 0
2026-11-27 10:00:01+0000: Cuda backend thread 0: Model version 8 useFP16 = true useNHWC = true
2026-11-27 10:00:02+0000: Cuda backend thread 0: Model name: g170-b6c96-s175395328-d26788732
Testing using 3200 visits.
Your GTP config is currently set to use numSearchThreads = 16
Testing different numbers of threads (board size 19x19):
numSearchThreads =  16: 5 / 5 positions, visits/s = 5123.40 nnEvals/s = 4301.22 nnBatches/s = 301.10 avgBatchSize = 14.28 (3.1 secs) (EloDiff baseline)
numSearchThreads =  64: 5 / 5 positions, visits/s = 14770.02 nnEvals/s = 12031.50 nnBatches/s = 210.90 avgBatchSize = 57.05 (1.1 secs) (EloDiff +95)
numSearchThreads = 128: 5 / 5 positions, visits/s = 20011.9 nnEvals/s = 16020.00 nnBatches/s = 140.00 avgBatchSize = 114.40 (0.8 secs) (EloDiff +60)
"""

KATA_OUTPUT = """\
Testing with default positions for board size: 19
Loading model and initializing benchmark...
Loaded model g170-b6c96-s175395328-d26788732.bin.gz

Testing using 3200 visits.

The network runs on: NVIDIA H100 80GB HBM3 (cuda:0), float16
Your GTP config is currently set to use numSearchThreads = 16
Testing different numbers of threads (board size 19x19):
numSearchThreads = 16: 5 / 5 positions, visits/s = 2561.70 nnEvals/s = 2100.00 nnBatches/s = 150.00 avgBatchSize = 14.00 (6.2 secs) (EloDiff baseline)
numSearchThreads = 64: 5 / 5 positions, visits/s = 7385.01 nnEvals/s = 6000.00 nnBatches/s = 105.00 avgBatchSize = 57.10 (2.2 secs) (EloDiff +90)

Searching numSearchThreads = 64 again with searchPipelining the other way (and one more leaf helper, numLeafFeatureThreads, where the cores allow), to compare:
searchPipelining at numSearchThreads = 64: yours (false) 7385 visits/s, true 8200 (1.11x; medians over the positions).
Recommended: searchPipelining = true (11% faster here).
numLeafFeatureThreads at numSearchThreads = 64: yours (auto: 1) 8200 visits/s, 2 8300 (1.01x; medians over the positions).
numLeafFeatureThreads = 2 is within 5% of your config's (auto: 1), about as much as runs this short vary: keep your config's.
"""


def test_kata_second_looks_are_shown_not_counted_as_results():
    assert [line.split(" at ")[0] for line in cmp.KATA_SECOND_LOOK_LINE.findall(KATA_OUTPUT)
            if " at numSearchThreads" in line] == ["searchPipelining", "numLeafFeatureThreads"]
    assert len(cmp.KATA_SECOND_LOOK_LINE.findall(KATA_OUTPUT)) == 4
    assert cmp.visits_per_second(KATA_OUTPUT) == {16: 2561.70, 64: 7385.01}


def test_reads_visits_per_second_per_thread_count_from_both():
    assert cmp.visits_per_second(KATAGO_OUTPUT) == {16: 5123.40, 64: 14770.02, 128: 20011.9}
    assert cmp.visits_per_second(KATA_OUTPUT) == {16: 2561.70, 64: 7385.01}


def test_reads_where_each_engine_runs():
    assert cmp.katago_device(KATAGO_OUTPUT) == "NVIDIA H100 80GB HBM3, useFP16 = true"
    assert cmp.kata_device(KATA_OUTPUT) == "NVIDIA H100 80GB HBM3 (cuda:0), float16"
    assert "not a CUDA build" in cmp.katago_device("numSearchThreads =  1: 1 / 1 positions, visits/s = 5 nnEvals/s")
    assert cmp.kata_device("") == "unknown"


def test_side_by_side_rows_and_table():
    rows = cmp.side_by_side(cmp.visits_per_second(KATA_OUTPUT), cmp.visits_per_second(KATAGO_OUTPUT))
    assert [r["threads"] for r in rows] == [16, 64, 128]
    assert rows[0]["ratio"] == pytest.approx(2561.70 / 5123.40)
    assert rows[2] == {"threads": 128, "kata": None, "katago": 20011.9, "ratio": None}
    table = cmp.format_table(rows, "NVIDIA H100 80GB HBM3").splitlines()
    assert table[0] == "GPU: NVIDIA H100 80GB HBM3"
    assert table[1].split() == ["threads", "kata", "v/s", "KataGo", "v/s", "kata/KataGo"]
    assert table[2].split() == ["16", "2561.7", "5123.4", "0.50x"]
    assert table[4].split() == ["128", "-", "20011.9", "-"]


def test_both_engines_get_the_same_net_threads_and_visits():
    args = cmp.argparse.Namespace(katago="/opt/katago", model="net.bin.gz", config="gtp.cfg", threads="16,64",
                                  visits=800, positions=3, boardsize=13,
                                  kata_override_config=None)
    commands = cmp.commands(args)
    shared = ["-model", "net.bin.gz", "-config", "gtp.cfg", "-t", "16,64", "-v", "800", "-n", "3", "-boardsize", "13"]
    assert commands["katago"][:2] == ["/opt/katago", "benchmark"] and commands["katago"][2:2 + len(shared)] == shared
    assert commands["kata"][1:5] == ["-P", "-m", "katacli.cli", "benchmark"] and commands["kata"][5:] == shared
    args.kata_override_config = "cudaUseGraphs=false"
    with_override = cmp.commands(args)
    assert with_override["kata"][-2:] == ["-override-config", "cudaUseGraphs=false"]
    assert with_override["katago"] == commands["katago"]
