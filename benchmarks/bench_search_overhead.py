"""What the search costs outside the network: visits/s with a zero-cost evaluator.

The evaluator is a real :class:`~katacli.nn.evaluator.NNEvaluator` (the bundled tiny-b2c16 net's
glue: NN cache, symmetries, postprocessing, answer objects or arrays) whose network call is
replaced by constant outputs (the net's own answer for a blank board, repeated over the batch), so
everything but the network is measured. Each search starts from a fresh tree and an empty NN cache,
from positions of a random game (``--game benchmark``: from the bundled game `kata benchmark` searches, a
real network's, with fewer short-liberty chains and more living groups, so less ladder work and more
pass-alive area work a leaf); ``numSearchThreads`` is the number of leaves per batch.

Usage::

    python benchmarks/bench_search_overhead.py [--sizes 19,9] [--threads 1,16,64] [--visits 1600] [--repeat 5]
        [--leaf-threads 0,1] [--game random|benchmark]

Prints the median visits/s with the min-max spread over the repeats, per wall-clock second, per
CPU second of the process (the figure to compare on a machine shared with other work) and per CPU
second of the search thread (the one that descends and backs up: what bounds a search whose network
runs on a GPU, and the least noisy figure for a change to the core), and the CPU model. The zero-cost net starts no torch threads; the search's own helper threads (numLeafFeatureThreads,
one by default for batches of several leaves) fill leaf inputs beside the search thread and spin while
they wait for its next leaf, so with them a visit costs less wall time but more CPU time, and the wall
figure is the one to compare, on an idle machine. ``--leaf-threads 0,1`` gives a row for each count.

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

Then fewer board copies in the ladder scan (none for a frame's last candidate or a scan's search
roots, searches undone from the position the scan reads, a snapshot at most every 4 frames down a
line with the line replayed in between: 800 leaf boards of a 64-leaf search 11.1 -> 5.7 us per
scan), board_num_liberties and the suicide test inline, the main-phase legal mask without a call
per point, and pass-alive areas from one flood of the empty points when no chain can have two
vital regions (all those leaf boards: 3.4 -> 2.0 us). Against ff205ec (built in place in a copy)
and the whole tree at 334cf65 (this work plus the search tree's shared policy rows and smaller NN
cache entries), three rounds in turn, AMD EPYC, load average 5.8 to 9.0 (other work on the 2
cores), --repeat 5, visits per CPU second, the median of each round:

    size  threads   ff205ec                 ladder/area/legality     whole tree 334cf65
      19        1    9550 /  9514 /  8899    9792 /  9686 /  9469     9195 /  8620 /  9228
      19       16   16220 / 16077 / 15009   18616 / 18709 / 18207    17759 / 17748 / 18812
      19       64   23230 / 22611 / 23112   28819 / 29918 / 28636    29551 / 28444 / 31131
       9        1    7839 /  7719 /  7604    7970 /  7777 /  8285     7293 /  6627 /  7294
       9       16   31703 / 30990 / 30498   35734 / 34975 / 37725    34430 / 32365 / 34029
       9       64   41954 / 42126 / 43144   50130 / 50335 / 51865    51004 / 48786 / 48423

Then constant feature planes (all zero or all one) filled instead of gathered by the batch's
symmetry (a 16-leaf search's leaf rows 5.2 -> 2.6 us each); the same three-way comparison at load
8.3 to 10.0, visits per CPU second, three rounds: 19x19 with 16 leaves ff205ec 14018-15651, this
work 17298-18701, the whole tree at 986b364 15047-16809; with 64 leaves 19784-22213, 25513-29499,
24398-28401; with 1 leaf 8538-9536, 9311-9809, 7830-8584.

Where the time goes (19x19, thread CPU per visit, ff205ec -> the ladder, area and legality work):
with 1 leaf per batch 112 -> 105 us, of which the batch's Python and numpy glue 75 -> 73 (~122 us
per batch: NNBatch, cache look-ups, symmetry gather, numpy postprocessing), storing 7, descents and
leaf features 31 -> 25; with 16 leaves 64 -> 55 us: glue 17, storing 8, descents and features
39 -> 30; with 64 leaves 44 -> 37 us: glue 11, storing 6, descents and features 27 -> 20. perf
over the searches (16 leaves): Python and numpy 25%, ladder scans 10%, history 10% (the descent's
copy of each new board into the recent-board ring 4%, superko bans 3%), board 8%, selection,
backup and value math with libm's pow 19%, pass-alive areas 6%, the batch's symmetry gather 5%,
feature planes 4%, gc 2%. With 64 leaves: Python and numpy 20%, ladder scans 14% (leaves deep in
the tree hold real ladders: about 60 ladder moves and 10 attacker tries per visit), the gather 9%,
board 9%, areas 7%, feature planes 6%, selection and backup 14%. The gc share a whole-process
profile shows beyond that is start-up.

Then the batch's postprocessing in one nogil call (katacli/_core/nn_postprocess: symmetry undone,
KataGo's float32 softmax with its running sum, values, ownership tanh only for rows that keep it,
no expf for illegal moves), random symmetries drawn without randrange's Python calls, one cache
settings key per distinct optimism. Against 4e6d07a (its two Python files in a copy of the same
installed build), four rounds in turn, AMD EPYC, load average 5.7 to 7.1, --repeat 3, visits per
CPU second, the median of each round:

    size  threads   4e6d07a                        nogil postprocessing            gain
      19        1    9571 /  9303 /  9750 /  9593   17674 / 17702 / 17366 / 17455   1.81-1.90x
      19       16   19834 / 19105 / 20318 / 19957   23150 / 22637 / 23033 / 23184   1.13-1.19x
      19       64   31668 / 30692 / 32609 / 32207   33683 / 33524 / 32926 / 33362   1.01-1.09x

Thread CPU per visit, 4e6d07a -> now (glue: the leaf evaluator's call without the zero-cost net;
store: applying and backing up; rest: descents and leaf features): 1 leaf 107 -> 55 us (glue
75 -> 28, store 7 -> 6, rest 25 -> 21), 16 leaves 52 -> 41 us (glue 16 -> 8, store 7 -> 6, rest
30 -> 27), 64 leaves 32 -> 28 us (glue 9 -> 6, store 4 -> 4, rest 20 -> 18). Against the first
baseline (16 leaves 6,626, 64 leaves 7,125 visits per CPU second): 3.5x and 4.7x. The glue left is
Python per batch (NN cache keys and look-ups, NNBatch plumbing, ~25 us) and the input symmetry
gather; 5x at 16 leaves (~30 us a visit) needs the descents and leaf features cheaper too.

Then each descent resets its history with history_restore (the struct's head in one memcpy, the hash
lists into the buffers already there, only the recent boards its moves overwrote) instead of a free
and a ~50 KB deep copy. Against 7cb5314 (the installed package copied aside, PYTHONPATH), in turn,
AMD EPYC, load average 6.4 to 7.8, --sizes 19 --repeat 3, visits per CPU second, the median of each
round (a sixth round at a load spike: 1 leaf 17430 -> 16861, 16 leaves 21599 -> 21363, 64 leaves
30451 -> 30635):

    size  threads   7cb5314                                  history_restore                         gain
      19        1   17667 / 18281 / 17138 / 17112 / 16479    18627 / 18413 / 17975 / 17736 / 17906   1.01-1.09x
      19       16   23508 / 23742 / 23089 / 22140 / 22482    23785 / 24430 / 22815 / 23025 / 23604   0.99-1.05x
      19       64   34995 / 34018 / 34022 / 32397 / 32961    36366 / 36318 / 35465 / 33452 / 35513   1.03-1.08x

That is about 1 us less thread CPU per visit (16 leaves ~43 -> ~42 us, 64 leaves ~29.4 -> ~28.2 us):
the copy was a small part of a descent. pow(p, 0.25) in the value weighting cannot become
sqrt(sqrt(p)): they differ in the last bit for ~12% of p in (0, 1) (glibc, 2e8 random doubles).

Then helper threads fill the leaves' inputs (katacli/_core/leaf_workers, numLeafFeatureThreads; one by
default for a search alone with several leaves a batch): the search thread descends on a ring of 32
histories and publishes each leaf, the helper fills and restores it. Against dbe8c1e (built in place
in a copy, PYTHONPATH), two alternating rounds, idle (load 0.7-0.8), AMD EPYC 2 cores, --repeat 3,
wall-clock visits/s, HEAD with --leaf-threads 0,1:

    size  threads   dbe8c1e         HEAD, no helper     HEAD, 1 helper      gain (with the helper)
      19        1    5546 /  5772   17507 / 17585       17506 / 17635       3.0-3.2x
      19       16    6446 /  6778   25791 / 25491       34937 / 33284       4.9-5.4x
      19       64    7870 /  8046   40205 / 40215       53768 / 51991       6.5-6.8x
       9        1    5428 /  5662   15355 / 15388       15321 / 15438       2.7-2.8x
       9       16   16185 / 16806   52506 / 52323       64213 / 64297       3.8-4.0x
       9       64   20012 / 20541   68370 / 68463       88804 / 88236       4.3-4.4x

Three more alternating rounds (19x19, the helper by default, load 0.7): dbe8c1e 1 leaf 5101 / 5557 /
5639, 16 leaves 6042 / 6477 / 6625, 64 leaves 6983 / 7525 / 8130; HEAD 17240 / 17487 / 17592, 33453 /
29608 / 33901, 51167 / 44575 / 52212 (16 leaves 4.6-5.5x, 64 leaves 5.9-7.3x; the second round's helper
ran slower throughout).

Then a thinner batch path (the tree's batch views made once per lane and size, constant per-row settings
shared read-only, one network call without the piece split or an identity input gather, priors written by
the postprocessing straight into the block the NN cache and the nodes share, the loop's limit tests
inline), and this file's zero-cost net repeats its answer once per batch size instead of per call. Against
dbe8c1e (built in place in a copy; this file for both), three alternating rounds, AMD EPYC, idle but for
the second round, --sizes 19 --repeat 3, wall-clock visits/s: 1 leaf 5835 / 5833 / 5408 -> 24796 / 17024 /
23223 (4.25x / 2.9x / 4.3x), 16 leaves 6436 / 6618 / 6210 -> 37004 / 30512 / 33742 (5.75x / 4.6x / 5.4x),
64 leaves 7592 / 7055 / 6803 -> 55441 / 44116 / 48723 (7.3x / 6.25x / 7.2x). Against the build before this
work, six alternating process pairs at 1 leaf: 1.20-1.43x; at 16 leaves 1.00-1.13x.

Then a batch's answers refresh each node on their paths once, at the last leaf through it (a 256-leaf
batch used to refresh the root 256 times, a pow() per visited child each): --visits 6400, 256 leaves, no
helper, five alternating pairs against the commit before (a copy built in place): 1.25-1.47x
(median 1.31x); 64 leaves with one helper 1.05-1.15x.

Then the evaluator's glue for a batch got thinner (23 -> 14 us for one leaf, timed alone): the NN
cache's per-row scalars and no-result from the rules come out of the postprocessing's C loop, per-row
settings go down as one positional tuple instead of keyword dicts, one NNBatch (and its row settings)
serves every batch of a lane and size, the postprocessing and the tree read arrays through Py_buffers
(katacli/_core/buffers) instead of a memoryview object each, and the tree stopped building
__array_interface__ dicts to find a batch's policy rows. This file also freezes start-up objects now,
as kata does after loading a net (gc's own calls, for both builds). Against dbe8c1e (built in place in
a copy, this file for both), three alternating rounds, AMD EPYC, load average 1.0, --sizes 19 --repeat
3, wall-clock visits/s:

    size  threads   dbe8c1e                 HEAD                        gain
      19        1    5920 / 5996 / 5925     34155 / 33730 / 33349       5.63-5.77x
      19       16    6735 / 6861 / 6843     37579 / 38192 / 37488       5.48-5.58x
      19       64    7943 / 8362 / 8399     57212 / 59014 / 57029       6.79-7.20x

Deeper searches (--visits 6400, 19x19), no helper -> one: 16 leaves 26,095 -> 35,522, 64 leaves
27,907 -> 40,364, 256 leaves 30,870 -> 40,765. A ring of 8 histories was slower than one per slot (the
search thread stopped to fill leaves itself); 32 beat one per slot at 64 and 256 leaves (10 MB of
histories for 256 slots fall out of the caches).

Then selection and backup read less scattered memory: each child slot keeps its edge's prior (it was read
from the parent's 1.4 KB policy row, a cache miss a child, in selection's pass over the children and in
recompute_stats), a node keeps the prior of its next unexplored edge, and Node's fields are grouped by who
reads them (a parent's selection reads each child's virtual losses, visits, weight and utility: now the
first 48 bytes; they were spread over three lines). The search thread's CPU per visit is the figure here
(the wall figure follows it within 1%). Against 3a6cbfd (built in place in a copy, this file for both),
alternating rounds, AMD EPYC 2 cores, load average 1.1-1.2, --sizes 19 --threads 256 --repeat 2,
search-thread visits/s: --visits 12800 (what a GPU check runs) 1.03-1.15x (median 1.10x, five rounds),
--visits 25600 1.10-1.40x (median 1.19x, five rounds); --threads 64 --visits 6400 --repeat 3 0.98-1.06x
(median 1.02x). The gain grows with the tree: visits/s fall as the tree outgrows the caches (256 leaves,
one run each: 3,200 / 12,800 / 25,600 / 51,200 visits 54.7k / 52.1k / 34.3k / 16.1k), so the search is
bound by memory there. Software prefetching of the next children in that pass gained nothing measurable
(0.93-1.09x, five rounds), and nodes on 64-byte lines (aligned_alloc) lost (median 0.98x). (This file's
net answers every position alike, so its trees are narrow and deep: 4.5 / 25 moves a descent on average
at 800 / 12,800 visits with 256 leaves, counted; a real net's are shallower.)

Then one ladder table per tree, shared by the threads that fill its leaves (a seqlock per entry): a leaf's
previous boards are its parent's and grandparent's, scanned when those were leaves, but by whichever thread
filled them, and each thread had a table of its own. Previous-board lookups that missed (counted, 256
leaves, 800 / 12,800 visits): no helper 3% / 7%, one helper 30% / 22%, two helpers 50% / 25%; each miss
is a full scan (~5 us on 19x19 here). Against the commit before (a copy built in place), alternating
rounds, wall-clock visits/s: 256 leaves, 800 visits (--positions 6 --repeat 3) 1.12-1.29x (median 1.14x,
five rounds), with two helpers 1.23x (1.225-1.234x, four rounds); 64 leaves, 800 visits 1.10-1.19x; 256
leaves, 12,800 visits 1.04-1.20x (median ~1.10x).
"""
from __future__ import annotations

import argparse
import gc
import os
import random
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Optional

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import cpu_model  # noqa: E402  (also makes katacli importable from a checkout)
from random_positions import random_game_state  # noqa: E402

import katacli  # noqa: E402
from katacli.nn.evaluator import NNEvaluator  # noqa: E402
from katacli.search import SearchParams, Searcher  # noqa: E402
from katacli.search.benchmark_positions import benchmark_positions  # noqa: E402

# The installed package's tiny net (the benchmark measures the installed build, as `kata` runs it).
TINY_NET = Path(katacli.__file__).parent / "selfcheck" / "data" / "tiny-b2c16.bin.gz"
# Moves of the random game before each searched position (opening and middle game).
POSITION_MOVES = (30, 90)


class ZeroCostEvaluator(NNEvaluator):
    """An NNEvaluator whose network answers instantly: one recorded answer, repeated over the batch."""

    def __init__(self, model, gpu_latency_s: float = 0.0, gpu_per_position_s: float = 0.0, serial_device: bool = False,
                 **options):
        """``model``: a model file's path or a loaded KataGoModel; ``options``: NNEvaluator's. ``serial_device``:
        the simulated GPU runs one call at a time (a call queued behind another starts when it ends), as a
        GPU that one batch fills does; else calls from several threads overlap completely."""
        from katacli.nn.torch_model import load_model

        if isinstance(model, (str, Path)):
            model = load_model(model)
        super().__init__(model, device="cpu", trace=False, **options)
        self._answers: dict[tuple, list[np.ndarray]] = {}   # (input shape, batch size) -> the outputs
        # A simulated GPU: each network call sleeps this long (the GIL released, as a CUDA call's wait).
        self.gpu_latency_s, self.gpu_per_position_s = gpu_latency_s, gpu_per_position_s
        self.serial_device = serial_device
        self._device_lock = threading.Lock()
        self._device_free_at = 0.0   # time.monotonic() when the serial device's last queued call ends
        if gpu_latency_s or gpu_per_position_s:
            # ... and, as a CUDA net, lets a pipelined search launch a batch and wait for it later.
            self.runner = _SimulatedDevice(self, self.runner)

    def _forward(self, spatial, global_features, meta, mask_full):
        outputs = self.zero_cost_outputs(spatial, global_features, meta, mask_full)
        if self.gpu_latency_s or self.gpu_per_position_s:
            time.sleep(max(0.0, self.call_ends_at(spatial.shape[0]) - time.monotonic()))
        return outputs

    def call_ends_at(self, rows: int) -> float:
        """When a simulated GPU call of this many rows, started now, is over (time.monotonic())."""
        now, duration = time.monotonic(), self.gpu_latency_s + rows * self.gpu_per_position_s
        if not self.serial_device:
            return now + duration
        with self._device_lock:
            self._device_free_at = max(now, self._device_free_at) + duration
            return self._device_free_at

    def zero_cost_outputs(self, spatial, global_features, meta, mask_full):
        shape, n = spatial.shape[1:], spatial.shape[0]
        answers = self._answers.get((shape, n))
        if answers is None:
            if (shape, 1) not in self._answers:  # the real net once, on a blank input of this shape
                blank = np.zeros((1,) + shape, np.float32)
                self._answers[shape, 1] = super()._forward(blank, global_features[:1] * 0, meta, mask_full)
            # ... repeated over the batch once per batch size (read-only: every call of that size shares them)
            answers = [np.repeat(a, n, axis=0) for a in self._answers[shape, 1]]
            for a in answers:
                a.flags.writeable = False
            self._answers[shape, n] = answers
        return answers


class _SimulatedDevice:
    """The device runner of a simulated GPU: ``launch`` starts a call and returns at once; waiting for it
    sleeps until the call would have finished. Calls overlap as the waited-for calls of several threads
    do here (each on its own lane's stream on a real GPU), so both pipelines meet the same device."""

    is_cuda = cuda_graphs = True

    def __init__(self, evaluator: ZeroCostEvaluator, runner):
        self._evaluator, self._runner = evaluator, runner

    def __call__(self, *args):
        return self._runner(*args)

    def __getattr__(self, name):   # everything else (describe, precision) is the real runner's
        return getattr(self._runner, name)

    def launch(self, spatial, global_features, meta, mask_full):
        e = self._evaluator
        outputs = e.zero_cost_outputs(spatial, global_features, meta, mask_full)
        return _SimulatedCall(outputs, e.call_ends_at(spatial.shape[0]))


class _SimulatedCall:
    def __init__(self, outputs, ready_at: float):
        self._outputs, self._ready_at = outputs, ready_at

    def wait(self):
        self.settle()
        return self._outputs

    def done(self) -> bool:
        return time.monotonic() >= self._ready_at

    def settle(self) -> None:
        time.sleep(max(0.0, self._ready_at - time.monotonic()))


def run_once(evaluator: ZeroCostEvaluator, positions, threads: int, visits: int,
             pipeline: bool = False, leaf_threads: Optional[int] = None) -> tuple[float, float, float]:
    """(visits per wall second, per CPU second of this process, per CPU second of the search thread) over the
    positions; pipeline: two batches in flight (katacli.search.pipeline), as on a GPU; leaf_threads:
    numLeafFeatureThreads (None: the build's default; older builds, measured from a copy, have no such key)."""
    params = SearchParams().replace(num_search_threads=threads, max_visits=visits)
    if leaf_threads is not None:
        params = params.replace(num_leaf_feature_threads=leaf_threads)
    total_visits, elapsed, cpu, search_cpu = 0, 0.0, 0.0, 0.0
    for state in positions:
        evaluator.cache.clear()
        # (pipeline only when asked: older builds, measured side by side from a copy, have no such argument)
        searcher = Searcher(state, params, evaluator, seed=1, **({"pipeline": True} if pipeline else {}))
        started, cpu_started, thread_started = time.perf_counter(), time.process_time(), time.thread_time()
        total_visits += searcher.run().visits   # the search thread is this one
        elapsed += time.perf_counter() - started
        cpu += time.process_time() - cpu_started
        search_cpu += time.thread_time() - thread_started
    return total_visits / elapsed, total_visits / cpu, total_visits / search_cpu


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):8.0f} ({min(values):.0f}-{max(values):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="19,9")
    parser.add_argument("--threads", default="1,16,64", help="numSearchThreads (leaves per batch) to try")
    parser.add_argument("--visits", type=int, default=1600)
    parser.add_argument("--positions", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--gpu-latency-ms", type=float, default=0.0,
                        help="simulate a GPU: each network call waits this long (GIL released)")
    parser.add_argument("--gpu-per-position-us", type=float, default=0.0, help="and this much per position")
    parser.add_argument("--serial-device", action="store_true",
                        help="the simulated GPU runs one call at a time (a pipelined search's second call queues)")
    parser.add_argument("--pipeline", choices=["off", "on", "both"], default="off",
                        help="two batches in flight (what a CUDA network gets by default); both: a row of each")
    parser.add_argument("--game", choices=["random", "benchmark"], default="random",
                        help="positions from a random game (many short-liberty chains: more ladder work), or from "
                             "the bundled game `kata benchmark` searches (a real network's)")
    parser.add_argument("--leaf-threads", default="default",
                        help="numLeafFeatureThreads to try, e.g. 0,1 (a row each; auto = -1); default: the "
                             "build's default, the only choice for builds older than the key")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    thread_counts = [int(t) for t in args.threads.split(",")]
    evaluator = ZeroCostEvaluator(TINY_NET, args.gpu_latency_ms / 1000.0, args.gpu_per_position_us / 1e6,
                                  serial_device=args.serial_device)
    # As kata does once its network is loaded (katacli.startup_objects; gc's own calls here, so that builds
    # older than that module, measured side by side from a copy, get the same): full collections then walk
    # only what the searches make, not torch's ~170,000 objects.
    gc.collect()
    gc.freeze()
    modes = {"off": [False], "on": [True], "both": [False, True]}[args.pipeline]
    leaf_options = [None] if args.leaf_threads == "default" else [
        -1 if value.strip() == "auto" else int(value) for value in args.leaf_threads.split(",")]
    if args.gpu_latency_ms or args.gpu_per_position_us:
        print(f"simulated GPU: {args.gpu_latency_ms} ms + {args.gpu_per_position_us} us per position per call")
    print(f"CPU: {cpu_model()} ({len(os.sched_getaffinity(0))} usable cores); "
          f"{args.visits} visits, {args.positions} positions, {args.repeat} repeats")
    print(f"load average {os.getloadavg()[0]:.1f} at the start")
    print(f"{'size':>6} {'threads':>8} {'pipelined':>9} {'helpers':>7}   visits/s: wall (median, min-max)   "
          "per CPU second (median, min-max)   per search-thread CPU second")
    for size in sizes:
        if args.game == "benchmark":
            positions = benchmark_positions(size, args.positions)
        else:
            rng = random.Random(size)
            positions = [random_game_state(rng, size, POSITION_MOVES[i % len(POSITION_MOVES)] * size * size // 361)
                         for i in range(args.positions)]
        run_once(evaluator, positions[:1], thread_counts[0], min(args.visits, 100))  # warm up
        settings = [(t, m, h) for t in thread_counts for m in modes for h in leaf_options if not (m and t < 2)]
        rates: dict[tuple, list[tuple[float, float, float]]] = {key: [] for key in settings}
        for _ in range(args.repeat):  # settings alternate, so a change in load hits all alike
            for threads, pipeline, helpers in settings:
                rates[threads, pipeline, helpers].append(
                    run_once(evaluator, positions, threads, args.visits, pipeline, helpers))
        for threads, pipeline, helpers in settings:
            wall, cpu, search_cpu = zip(*rates[threads, pipeline, helpers])
            shown = "-" if helpers is None else ("auto" if helpers < 0 else str(helpers))
            print(f"{size:>6} {threads:>8} {'yes' if pipeline else 'no':>9} {shown:>7}   {_spread(list(wall)):>24}   "
                  f"{_spread(list(cpu)):>24}   {_spread(list(search_cpu)):>24}", flush=True)

if __name__ == "__main__":
    main()
