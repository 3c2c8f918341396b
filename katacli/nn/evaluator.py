"""Evaluate positions with a KataGo network: batching, symmetries, postprocessing, caching.

Typical use::

    evaluator = NNEvaluator.from_file("model.bin.gz")           # CPU, or CUDA when available
    result = evaluator.evaluate_one(NNRequest(spatial, global_features, legal_mask,
                                              board_x=19, board_y=19, white_to_move=False))
    result.white_win, result.policy[y * 19 + x], result.policy_pass, result.white_ownership

``NNEvaluator.evaluate(requests)`` takes any number of requests of mixed board sizes, groups
them by shape into batches and returns one :class:`~katacli.nn.postprocess.NNOutput` per
request, in order, from White's point of view and in the real board's orientation (its
arrays are read-only since cached results are shared). It is thread-safe. :class:`~katacli.nn.batching.BatchingEvaluator` lets many threads (e.g. search
threads) each submit positions that server threads gather into batches.
"""

from __future__ import annotations

import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Callable, Optional, Sequence, Union

import numpy as np

from katacli.cpu_cores import usable_cpu_count
from katacli.nn.cache import DEFAULT_CACHE_SIZE_POWER_OF_TWO, NNCache
from katacli.nn.request import NNRequest  # noqa: F401  (part of this module's API)
from katacli.nn.postprocess import (
    NNOutput,
    allow_no_result_from_globals,
    postprocess_multipliers,
)
from katacli.nn.batch import (
    CACHED_COLUMN, NNBatch, NNBatchOutput, RowSettings, cached_row_has_ownership, cached_row_output, cached_rows,
    concatenate_outputs, copy_row, empty_output, filled, is_cached_row, with_shared_policy,
)
from katacli.nn.symmetry import NUM_SYMMETRIES, apply_symmetries, gather_indices
from katacli._core.nn_postprocess import postprocess_rows

if TYPE_CHECKING:
    import torch

    from katacli.nn.torch_model import KataGoModel

# torch is imported by the functions that use it, not by this module: the numpy evaluator
# (katacli.nn.numpy_evaluator) shares everything here but the network call and answers a kata
# analysis engine's first queries while torch is still being imported (~1 s of CPU).

DEFAULT_MAX_BATCH_SIZE = 256
# Distinct cache settings keys kept for reuse (optimism x temperature x passing hacks x profile: a handful).
MAX_INTERNED_SETTINGS = 1024
# warm_up: evaluations of a blank position that build the traced network and let TorchScript's
# profiling executor optimise it (its first runs are several times slower than later ones).
WARM_UP_ROUNDS = 3
# A CPU batch is split over parallel_threads only into pieces of at least this much network work
# (floating-point operations): handing a piece to another thread costs more than a small piece saves.
# `kata gtp` genmove on 2 cores (AMD EPYC), seconds whole batches -> split over 2 threads, two rounds:
# the packaged b4c32 net (0.055 GFLOP a 19x19 position) 10,000 visits on 19x19 with 2 leaves
# 7.6 / 8.1 -> 10.3 / 10.5 (pieces of 0.055 GFLOP: split loses), with 6 leaves 5.9 / 6.6 -> 5.3 / 6.0
# (0.165: split wins); g170-b6c96 1,500 visits on 9x9 (0.16 GFLOP a position) with 2 leaves
# 4.4 / 4.4 -> 4.3 / 4.7 (even).
MIN_PIECE_FLOPS = 0.1e9
# A batch's postprocessing (the core's nogil pass over its rows) is split over threads in pieces of at
# least this many rows, on at most POSTPROCESS_MAX_THREADS threads and the machine's cores: a big
# batch's answers are ready sooner for the search thread that waits for them, while the leaf helpers
# that fill its next batch sit idle. A row costs ~2 us (19x19, AMD EPYC development host), a thread
# ~30 us to start. The zero-cost search there (2 cores, one leaf helper, 6,400 visits, six alternating
# rounds), split against not: 128 / 256 / 512 leaves 1.018x / 1.037x / 1.002x (medians); pipelined on a
# simulated GPU of g170-b6c96's cost 1.017x / 1.035x / 1.035x. More cores, more to gain: a GPU host's
# search thread, whose helpers fill the features, spends a larger share of its time here.
POSTPROCESS_ROWS_PER_THREAD = 64
POSTPROCESS_MAX_THREADS = 4
# Random bits of one draw of random.randrange(NUM_SYMMETRIES) (NUM_SYMMETRIES.bit_length()).
SYMMETRY_DRAW_BITS = NUM_SYMMETRIES.bit_length()


def default_device() -> "torch.device":
    import torch

    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


# Intra-op threads of one CPU evaluation, on every thread, unless set_cpu_threads chose a number.
# Two threads help only on the main thread and only while their OpenMP team spins between kernels,
# which collapses beside any other busy program; katacli makes OpenMP wait passively
# (katacli/__init__.py), and with passive waiting one thread is faster. g170-b6c96 19x19, 2 cores,
# `kata benchmark -t 1,2` (main thread), visits/s: two spinning threads 209-227 / 294-388 idle but
# 45-52 / - beside one busy loop; two passive threads 109-120 / 153-175 either way; one thread
# 191-219 / 242-247 idle and 221 / 245 beside the busy loop. Search and engine threads (off the
# main thread) never gain from a second one. Cores are used by evaluations side by side instead
# (BatchingEvaluator's servers, several search threads).
CPU_THREADS_PER_EVALUATION = 1
_cpu_threads_chosen = False
_thread_state = threading.local()


def set_cpu_threads(num_threads: int, num_interop_threads: Optional[int] = None) -> None:
    """Set how many CPU threads torch uses inside one evaluation (and, once per process, between ops)."""
    import torch

    global _cpu_threads_chosen
    _cpu_threads_chosen = True
    torch.set_num_threads(max(1, int(num_threads)))
    if num_interop_threads is not None:
        try:
            torch.set_num_interop_threads(max(1, int(num_interop_threads)))
        except RuntimeError:
            pass  # torch allows this only before any parallel work has started


class NNEvaluator:
    """Runs a network on batches of :class:`NNRequest` and postprocesses the results."""

    # What a start-up line says before warm_up compiles a net (runner.compiled).
    COMPILE_NOTICE = ("Compiling the network (torch.compile: about 20 s on a GPU for b18c384nbt, less once this "
                      "machine's compile cache holds it; cudaUseTorchCompile = false skips it)")

    def __init__(
        self,
        model: "KataGoModel",
        device: Union[str, "torch.device", None] = None,
        precision: str = "float32",
        channels_last: Optional[bool] = None,
        cache_size_power_of_two: Optional[int] = DEFAULT_CACHE_SIZE_POWER_OF_TWO,
        default_symmetry: Optional[int] = None,
        max_batch_size: int = DEFAULT_MAX_BATCH_SIZE,
        seed: Optional[int] = None,
        fuse: bool = True,
        trace: Optional[bool] = None,
        cuda_graphs: Optional[bool] = None,
        allow_tf32: bool = False,
        compile_net: Optional[bool] = None,
        compile_cache_dir: Optional[str] = None,
    ):
        """
        ``precision``: "float32" (exact), or "float16" / "bfloat16" autocast (CUDA; bfloat16 also CPU).
        ``channels_last``: NHWC memory layout; default on.
        ``cache_size_power_of_two``: None disables the cache.
        ``default_symmetry``: used for requests without one; None picks one at random per request.
        ``fuse``: fold batch norms into convolutions (faster; False runs the model exactly as given).
        ``trace``: run TorchScript traces (:mod:`katacli.nn.traced`); default on for the CPU.
        ``cuda_graphs``: replay captured CUDA graphs (default on CUDA). ``allow_tf32``: let float32 use
        TF32 on CUDA (faster, less exact; off as in KataGo). ``compile_net``: run the net through
        torch.compile; None decides by :func:`~katacli.nn.device_runner.auto_compile` (big half-precision
        nets on CUDA); ``compile_cache_dir``: where its caches are kept (None: torch's default, the temp
        folder). See :mod:`katacli.nn.device_runner`.
        """
        import torch

        from katacli.nn.device_runner import PRECISIONS, DeviceRunner, auto_compile, use_compile_cache

        if isinstance(model, (str, os.PathLike)):
            raise TypeError("NNEvaluator takes a loaded KataGoModel; for a file use NNEvaluator.from_file(path) "
                            "or katacli.load_network(path)")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
        if default_symmetry is not None and not 0 <= default_symmetry < NUM_SYMMETRIES:
            raise ValueError(f"default symmetry must be in 0..7, got {default_symmetry}")
        self.device = torch.device(device) if device is not None else default_device()
        if self.device.type == "cuda" and not torch.cuda.is_available():   # torch's own is a bare AssertionError
            raise ValueError(f"device {device!r}: no CUDA GPU is available to PyTorch here (a CPU-only torch "
                             "build, or no GPU visible); use device='cpu'")
        self.precision = precision
        # NHWC is faster on both devices (CPU, test-b4c32 9x9 traced: 1.25-1.5x; g170 19x19: 1.2x).
        self.channels_last = True if channels_last is None else channels_last
        net = model.fused() if fuse and not model.is_fused else model
        flops_per_point = flops_per_board_point(model)
        if compile_net is None:
            compile_net = auto_compile(self.device, precision, flops_per_point)
        if compile_net:
            use_compile_cache(compile_cache_dir)
        self.runner = DeviceRunner(net, self.device, precision, channels_last=self.channels_last, trace=trace,
                                   cuda_graphs=cuda_graphs, allow_tf32=allow_tf32,
                                   max_batch_size=max(1, int(max_batch_size)), compile_net=compile_net)
        self.net = self.runner.net
        self._init_common(model.version, model.name, model.postprocess, model.num_policy_channels,
                          model.needs_metadata, cache_size_power_of_two, default_symmetry, seed)
        self.flops_per_point = flops_per_point

    def _init_common(self, version: int, model_name: str, postprocess, num_policy_channels: int,
                     needs_metadata: bool, cache_size_power_of_two: Optional[int], default_symmetry: Optional[int],
                     seed: Optional[int]) -> None:
        """Everything but the network call: what the numpy evaluator shares (see NumpyEvaluator)."""
        self.version = version
        self.model_name = model_name
        self.postprocess = postprocess
        self._multipliers_of: Optional[tuple] = None
        self.num_policy_channels = num_policy_channels
        self.needs_metadata = needs_metadata
        self.cache: Optional[NNCache[NNOutput]] = (
            NNCache(cache_size_power_of_two) if cache_size_power_of_two is not None else None
        )
        # One settings-key object shared by every cache entry with those settings, not a tuple per entry.
        self._settings_keys: dict[tuple, tuple] = {}
        self.default_symmetry = default_symmetry
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self.num_positions_evaluated = 0
        self.num_batches = 0
        # Threads one batch is split over on the CPU, each piece a single-threaded network call
        # (torch releases the GIL): how a search thread uses several cores (see set_parallel_threads).
        self.parallel_threads = 1
        # Network work per position and board point (None: unknown, every batch is split), and the
        # least a piece of a split batch must hold (MIN_PIECE_FLOPS).
        self.flops_per_point: Optional[float] = None
        self.min_piece_flops = MIN_PIECE_FLOPS
        self._pool: Optional[ThreadPoolExecutor] = None
        self._pool_workers = 0

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike], contents=None, **kwargs) -> "NNEvaluator":
        """``contents``: the file's bytes as its start-up check kept them (ModelContents), if any."""
        from katacli.nn.torch_model import load_model

        return cls(load_model(path, contents), **kwargs)

    @property
    def max_batch_size(self) -> int:
        """Most positions in one network call; larger requests are split (the device runner sizes its
        CUDA graph buckets by it)."""
        return self.runner.max_batch_size

    @max_batch_size.setter
    def max_batch_size(self, value: int) -> None:
        self.runner.max_batch_size = max(1, int(value))

    # -- public API

    def set_parallel_threads(self, threads: Optional[int] = None) -> None:
        """Split each CPU batch over this many threads (None: one per core this process may use). For a process whose
        network calls come from one search at a time (the GTP engine, benchmarks, evalsgf): one batch
        of a search's leaves then keeps every core busy, as KataGo's search threads do. Engines that
        already evaluate from several threads at once (BatchingEvaluator's servers) leave it at 1."""
        self.parallel_threads = max(1, int(threads if threads is not None else usable_cpu_count()))

    def piece_count(self, rows: int, board_area: int) -> int:
        """How many threads a CPU network call of ``rows`` positions is split over: parallel_threads,
        but no piece with less than min_piece_flops of work (1 on other devices)."""
        if self.device.type != "cpu" or self.parallel_threads <= 1:
            return 1
        if self.flops_per_point is None or self.min_piece_flops <= 0:
            return self.parallel_threads
        worth = int(rows * self.flops_per_point * board_area // self.min_piece_flops)
        return max(1, min(self.parallel_threads, worth))

    def evaluate_one(self, request: NNRequest) -> NNOutput:
        return self.evaluate([request])[0]

    def evaluate(self, requests: Sequence[NNRequest]) -> list[NNOutput]:
        """Evaluate requests of any mix of board sizes; results in request order. Thread-safe."""
        results: list[Optional[NNOutput]] = [None] * len(requests)
        pending = []
        for i, request in enumerate(requests):
            cached = self.lookup_cache(request)
            if cached is not None:
                results[i] = cached
            else:
                pending.append(i)
        if pending:
            computed = self.evaluate_uncached([requests[i] for i in pending])
            for i, result in zip(pending, computed):
                results[i] = result
                self.store_cache(requests[i], result)
        return results

    # NNBatch.applied_symmetries is honoured (a search tree may fill features already transformed).
    accepts_applied_symmetries = True

    def evaluate_batch(self, batch: NNBatch) -> NNBatchOutput:
        """Evaluate a whole batch given as arrays (the search's path: no object per position). Thread-safe.

        Cache hits are copied in; the rest run through the network in batches of at most
        max_batch_size (split over parallel_threads on the CPU) and are stored in the cache as rows."""
        plan = self.plan_batch(batch)
        block = self._run_rows(plan.rows, plan.symmetries, plan.input_symmetries) if plan.misses else None
        return self.finish_batch(plan, block)

    @property
    def launches_async(self) -> bool:
        """Whether :meth:`submit_batch` returns before the network has run (a CUDA net with graphs), so that
        the caller can work meanwhile on the same thread."""
        return bool(getattr(self.runner, "is_cuda", False) and getattr(self.runner, "cuda_graphs", False))

    def submit_batch(self, batch: NNBatch) -> "PendingBatch":
        """evaluate_batch in two halves: the network call is queued now (see launches_async; elsewhere the
        whole batch is evaluated here and now), ``result()`` waits for it and finishes the answers."""
        plan = self.plan_batch(batch)
        rows = plan.rows
        if not plan.misses or not self.launches_async or len(rows) > self.max_batch_size:
            block = self._run_rows(rows, plan.symmetries, plan.input_symmetries) if plan.misses else None
            return PendingBatch(answer=self.finish_batch(plan, block))
        self.require_metadata(rows.meta)
        spatial, mask_full = _network_input(rows.spatial, plan.input_symmetries, batch.board_x, batch.board_y)
        with self._stats_lock:
            self.num_batches += 1
        launched = self.runner.launch(spatial, rows.global_features, rows.meta, mask_full)

        def finish() -> NNBatchOutput:
            raw = launched.wait()
            with self._stats_lock:
                self.num_positions_evaluated += len(rows)
            block = self.postprocess_arrays(raw, rows.legal_mask, batch.board_x, batch.board_y, plan.symmetries,
                                            rows.row_settings())
            return self.finish_batch(plan, block)

        return PendingBatch(finish=finish, settle=launched.settle, done=getattr(launched, "done", None))

    def plan_batch(self, batch: NNBatch) -> "BatchPlan":
        """What of a batch the cache answers and what must run through the network (with its symmetries)."""
        if batch.spatial.ndim != 4 or not (0 < batch.board_y <= batch.spatial.shape[2]
                                           and 0 < batch.board_x <= batch.spatial.shape[3]):
            raise ValueError(f"a batch's spatial features must be [N, C, H, W] holding the board, "
                             f"got shape {batch.spatial.shape}")
        hits, misses, keys, settings = self._batch_cache_hits(batch)
        rows = batch if len(misses) == len(batch) else batch.rows(misses)
        symmetries = input_symmetries = None
        if misses:
            symmetries, input_symmetries = self._row_symmetries(rows, batch.symmetry)
        return BatchPlan(batch, hits, misses, keys, settings, rows, symmetries, input_symmetries)

    def _row_symmetries(self, rows: NNBatch, symmetry: Optional[int]) -> tuple[np.ndarray, np.ndarray]:
        """(the orientation each row is evaluated in, the one its features must still be transformed by):
        rows the tree already filled in an orientation (applied_symmetries >= 0) need no transform."""
        applied = rows.applied_symmetries
        if applied is None:
            symmetries = self._batch_symmetries(len(rows), symmetry)
            return symmetries, symmetries
        # (a list's min: numpy's reductions cost more than a small batch's whole plan)
        if min(applied.tolist(), default=0) >= 0:   # every row already oriented (a tree drawing them): no transform
            return applied.astype(np.int64), filled(len(rows), 0, np.int64)
        applied = applied.astype(np.int64)
        canonical = applied < 0
        symmetries, input_symmetries = applied.copy(), np.zeros(len(rows), np.int64)
        if canonical.any():
            drawn = self._batch_symmetries(int(canonical.sum()), symmetry)
            symmetries[canonical] = drawn
            input_symmetries[canonical] = drawn
        return symmetries, input_symmetries

    def finish_batch(self, plan: "BatchPlan", block: Optional[NNBatchOutput]) -> NNBatchOutput:
        """The batch's answers: ``block`` (the network's answers for plan.rows) stored in the cache and
        merged with the cache hits."""
        batch, hits, misses = plan.batch, plan.hits, plan.misses
        n = len(batch)
        if misses:
            block = with_shared_policy(block)
        if misses and plan.keys is not None:
            self.cache.put_many([plan.keys[i] for i in misses], cached_rows(block), [plan.settings[i] for i in misses])
        if len(misses) == n:
            return block
        out = empty_output(n, batch.board_x * batch.board_y, bool(batch.include_ownership.any()), batch.board_x,
                           batch.board_y)
        for i, entry in hits:
            copy_row(out, i, entry)
        if misses:
            out.values[misses] = block.values
            out.policy[misses] = block.policy
            out.policy_pass[misses] = block.policy_pass
            if block.ownership is not None and out.ownership is not None:
                out.ownership[misses] = block.ownership
                out.ownership_rows[misses] = block.ownership_rows
            out.symmetry[misses] = block.symmetry
            out.policy_optimism[misses] = block.policy_optimism
        out.policy.flags.writeable = False
        return out

    def _batch_cache_hits(self, batch: NNBatch):
        """(hits as (row, entry), missing rows, keys or None, settings keys per row) of a batch."""
        n = len(batch)
        if self.cache is None or batch.cache_keys is None:
            return [], list(range(n)), None, None
        keys = batch.key_ints()
        temperature, hacks = batch.policy_temperature, batch.enable_passing_hacks
        # Settings as _settings_key makes them for an NNRequest, so both APIs share entries.
        if len(self._settings_keys) > MAX_INTERNED_SETTINGS:
            self._settings_keys.clear()
        interned = self._settings_keys.setdefault
        if batch.meta is None:  # the usual batch: one settings key per distinct optimism (root or not)
            optimisms = batch.policy_optimism.tolist()
            first = (optimisms[0] if n else 0.0, temperature, hacks, None, None)
            if optimisms.count(first[0]) == n:   # (most batches: the root is in one batch of a search)
                settings = [interned(first, first)] * n
            else:
                by_optimism = {}
                for opt in set(optimisms):
                    key = (opt, temperature, hacks, None, None)
                    by_optimism[opt] = interned(key, key)
                settings = [by_optimism[opt] for opt in optimisms]
        else:
            settings = [interned(key, key) for key in
                        ((opt, temperature, hacks, None, meta)
                         for opt, meta in zip(batch.policy_optimism.tolist(), (row.tobytes() for row in batch.meta)))]
        found = self.cache.get_many(keys, settings)
        if found.count(None) == n:
            return [], list(range(n)), keys, settings
        wanted = batch.include_ownership.tolist()
        hits, misses = [], []
        for i, entry in enumerate(found):
            if entry is None or (wanted[i] and not (cached_row_has_ownership(entry) if is_cached_row(entry)
                                                     else entry.white_ownership is not None)):
                misses.append(i)
            else:
                hits.append((i, entry))
        return hits, misses, keys, settings

    def _batch_symmetries(self, count: int, symmetry: Optional[int]) -> np.ndarray:
        """Symmetries for count positions, drawn as _symmetry_for draws them for requests without one."""
        if symmetry is not None or self.default_symmetry is not None:
            fixed = symmetry if symmetry is not None else self.default_symmetry
            if not 0 <= fixed < NUM_SYMMETRIES:
                raise ValueError(f"symmetry must be in 0..7, got {fixed}")
            return np.full(count, fixed, np.int64)
        # randrange(NUM_SYMMETRIES) draws SYMMETRY_DRAW_BITS random bits until they are below it: the
        # same draws without its two Python calls per position (a search batch pays per row).
        drawn = []
        with self._rng_lock:
            getrandbits = self._rng.getrandbits
            for _ in range(count):
                r = getrandbits(SYMMETRY_DRAW_BITS)
                while r >= NUM_SYMMETRIES:
                    r = getrandbits(SYMMETRY_DRAW_BITS)
                drawn.append(r)
        return np.array(drawn, np.int64)

    def _run_rows(self, batch: NNBatch, symmetries: np.ndarray, input_symmetries: np.ndarray) -> NNBatchOutput:
        """Network calls for every row, max_batch_size at a time, each split over parallel_threads on the CPU.
        ``input_symmetries``: the transform each row's features still need (see BatchPlan)."""
        n = len(batch)
        self.require_metadata(batch.meta)
        area = batch.spatial.shape[2] * batch.spatial.shape[3]

        def run(bound):
            start, end = bound
            if (start, end) == (0, n):
                rows, row_symmetries, row_input_symmetries = batch, symmetries, input_symmetries
            else:
                rows = batch.slice(start, end)
                row_symmetries, row_input_symmetries = symmetries[start:end], input_symmetries[start:end]
            return self._run_arrays(rows.spatial, rows.global_features, rows.meta, rows.legal_mask, batch.board_x,
                                    batch.board_y, row_symmetries, row_input_symmetries, rows.row_settings())

        if n <= self.max_batch_size and self.piece_count(n, area) == 1:   # one call (a search's usual batch)
            with self._stats_lock:
                self.num_batches += 1
            return run((0, n))
        pieces = []
        for start, end in self.call_bounds(n):
            with self._stats_lock:
                self.num_batches += 1
            pieces += _split_evenly(list(range(start, end)), self.piece_count(end - start, area))
        bounds = [(piece[0], piece[-1] + 1) for piece in pieces]
        if len(bounds) == 1:
            return run(bounds[0])
        pool = self._piece_pool(len(bounds) - 1) if self.parallel_threads > 1 else None
        futures = [pool.submit(run, bound) for bound in bounds[1:]] if pool is not None else None
        blocks = [run(bounds[0])] + ([f.result() for f in futures] if futures is not None
                                     else [run(bound) for bound in bounds[1:]])
        return concatenate_outputs(blocks)

    def warm_up(self, board_x: int, board_y: int, rounds: int = WARM_UP_ROUNDS,
                notify: Optional[Callable[[str], None]] = None) -> None:
        """Evaluate a blank board_x by board_y position a few times, so that the first real evaluation
        at that size does not pay for tracing and optimising the network (seconds on a CPU) or compiling
        it (``notify(COMPILE_NOTICE)`` says so first). Nets that take SGF metadata are skipped (their input
        needs a profile). The counters are left as they were."""
        if self.needs_metadata:
            return
        from katacli.nn.description import NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7

        spatial = np.zeros((NUM_SPATIAL_FEATURES_V7, board_y, board_x), np.float32)
        spatial[0] = 1.0  # feature 0: on the board
        blank = NNRequest(spatial, np.zeros(NUM_GLOBAL_FEATURES_V7, np.float32),
                          np.ones(board_x * board_y + 1, bool), board_x=board_x, board_y=board_y,
                          white_to_move=False, symmetry=0)
        evaluated, batches = self.num_positions_evaluated, self.num_batches
        if self.runner.compiled and notify is not None:
            notify(self.COMPILE_NOTICE)
        for _ in range(rounds):
            self.evaluate_uncached([blank])
        if self.runner.compiled:
            # A batch of one compiles for one position; larger batches share a compile with a dynamic batch
            # dimension, split where the device's convolution choice changes with the batch size (on the
            # CPU at 16): the smallest and the largest batch the search may send cover them.
            for n in sorted({2, max(2, self.max_batch_size)}):
                self.evaluate_uncached([blank] * n)
        self.num_positions_evaluated, self.num_batches = evaluated, batches

    def lookup_cache(self, request: NNRequest) -> Optional[NNOutput]:
        if self.cache is None or request.cache_key is None:
            return None
        cached = self.cache.get(request.cache_key, _settings_key(request))
        if is_cached_row(cached):  # stored by evaluate_batch
            if request.include_ownership and not cached_row_has_ownership(cached):
                return None
            return cached_row_output(cached)
        if cached is not None and request.include_ownership and cached.white_ownership is None:
            return None  # stored without the ownership this request needs: evaluate again
        return cached

    def store_cache(self, request: NNRequest, result: NNOutput) -> None:
        if self.cache is not None and request.cache_key is not None:
            self.cache.put(request.cache_key, result, _settings_key(request))

    def evaluate_uncached(self, requests: Sequence[NNRequest]) -> list[NNOutput]:
        """Run the network on every request (no cache), batching requests of the same shape."""
        symmetries = [self._symmetry_for(r) for r in requests]
        groups: dict[tuple, list[int]] = {}
        for i, (request, symmetry) in enumerate(zip(requests, symmetries)):
            _validate(request)
            # Symmetries keep the input's shape (no transpose of non-square inputs, as in KataGo).
            h, w = request.spatial.shape[1:]
            groups.setdefault((h, w, request.board_x, request.board_y), []).append(i)
        results: list[Optional[NNOutput]] = [None] * len(requests)
        for indices in groups.values():
            for start in range(0, len(indices), self.max_batch_size):
                chunk = indices[start : start + self.max_batch_size]
                with self._stats_lock:
                    self.num_batches += 1
                for piece, outputs in self._run_pieces(chunk, requests, symmetries):
                    for i, output in zip(piece, outputs):
                        results[i] = output
        return results

    def _run_pieces(self, chunk: list[int], requests, symmetries):
        """(request indices, outputs) for one batch, split over ``parallel_threads`` threads on the CPU."""
        spatial = requests[chunk[0]].spatial
        pieces = _split_evenly(chunk, self.piece_count(len(chunk), spatial.shape[1] * spatial.shape[2]))

        def run(piece):
            return self._run_batch([requests[i] for i in piece], [symmetries[i] for i in piece])

        if len(pieces) == 1:
            return [(chunk, run(chunk))]
        pool = self._piece_pool(len(pieces) - 1)
        futures = [pool.submit(run, piece) for piece in pieces[1:]]
        first = run(pieces[0])  # the calling thread takes a piece too
        return [(pieces[0], first)] + [(piece, future.result()) for piece, future in zip(pieces[1:], futures)]

    def _piece_pool(self, workers: int) -> ThreadPoolExecutor:
        with self._stats_lock:
            if self._pool is None or self._pool_workers < workers:
                if self._pool is not None:
                    self._pool.shutdown(wait=False)
                self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="katacli-nn")
                self._pool_workers = workers
            return self._pool

    # -- internals

    def _symmetry_for(self, request: NNRequest) -> int:
        if request.symmetry is not None:
            if not 0 <= request.symmetry < NUM_SYMMETRIES:
                raise ValueError(f"symmetry must be in 0..7, got {request.symmetry}")
            return request.symmetry
        if self.default_symmetry is not None:
            return self.default_symmetry
        with self._rng_lock:
            return self._rng.randrange(NUM_SYMMETRIES)

    def _forward(self, spatial: np.ndarray, global_features: np.ndarray, meta: Optional[np.ndarray], mask_full: bool):
        if self.device.type == "cpu" and not _cpu_threads_chosen and not getattr(_thread_state, "configured", False):
            import torch

            torch.set_num_threads(CPU_THREADS_PER_EVALUATION)
            _thread_state.configured = True
        return self.runner(spatial, global_features, meta, mask_full)

    def require_metadata(self, meta: Optional[np.ndarray]) -> None:
        """Refuse rows without SGF metadata when the net needs it (a human-SL net)."""
        if self.needs_metadata and meta is None:
            raise ValueError(f"model {self.model_name} needs SGF metadata input (NNBatch.meta)")

    def call_bounds(self, rows: int) -> list[tuple[int, int]]:
        """(start, end) of each network call for this many rows: at most max_batch_size per call."""
        return [(start, min(rows, start + self.max_batch_size)) for start in range(0, rows, self.max_batch_size)]

    def count_network_call(self, positions: int) -> None:
        """Count one network call of this many positions (for callers that run ``_forward`` themselves)."""
        with self._stats_lock:
            self.num_batches += 1
            self.num_positions_evaluated += positions

    def describe_device(self) -> str:
        """Where and how the network runs, in words (device, precision, layout), for start-up lines."""
        return self.runner.describe()

    def _run_batch(self, requests: list[NNRequest], symmetries: list[int]) -> list[NNOutput]:
        """One network call for requests of one shape (counted in num_positions_evaluated)."""
        first = requests[0]
        area = first.board_x * first.board_y
        raw = np.stack([r.spatial for r in requests]).astype(np.float32, copy=False)
        global_features = np.stack([r.global_features for r in requests]).astype(np.float32, copy=False)
        meta = None
        if self.needs_metadata:
            if any(r.meta is None for r in requests):
                raise ValueError(f"model {self.model_name} needs SGF metadata input (NNRequest.meta)")
            meta = np.stack([r.meta for r in requests]).astype(np.float32, copy=False)
        masks = [r.legal_mask for r in requests]
        if any(m.shape[0] == area for m in masks):  # a mask without the pass entry: pass is legal
            masks = [m if m.shape[0] > area else np.append(m, True) for m in masks]
        settings = RowSettings(
            white=np.array([bool(r.white_to_move) for r in requests]),
            optimism=np.array([r.policy_optimism for r in requests], np.float64),
            temperature=np.array([r.policy_temperature for r in requests], np.float32),
            hacks=np.array([r.enable_passing_hacks for r in requests]),
            allow_no_result=np.array([r.allow_no_result if r.allow_no_result is not None
                                      else allow_no_result_from_globals(r.global_features) for r in requests]),
            want_ownership=np.array([r.include_ownership for r in requests], bool))
        symmetries = np.asarray(symmetries, np.int64)
        block = self._run_arrays(raw, global_features, meta, np.stack(masks).astype(bool, copy=False), first.board_x,
                                 first.board_y, symmetries, symmetries, settings)
        return block.outputs()

    def _run_arrays(self, raw_spatial, network_globals, meta, legal, board_x: int, board_y: int, symmetries,
                    input_symmetries, settings: RowSettings) -> NNBatchOutput:
        """One network call on n rows of one shape, postprocessed as whole arrays (see NNBatchOutput).
        The rows' features are transformed by ``input_symmetries``, the outputs undone by ``symmetries``."""
        n = raw_spatial.shape[0]
        spatial, mask_full = _network_input(raw_spatial, input_symmetries, board_x, board_y)
        raw = self._forward(spatial, network_globals, meta, mask_full)
        with self._stats_lock:
            self.num_positions_evaluated += n
        return self.postprocess_arrays(raw, legal, board_x, board_y, symmetries, settings)

    def postprocess_arrays(self, raw, legal, board_x: int, board_y: int, symmetries,
                           settings: RowSettings) -> NNBatchOutput:
        """The network's raw outputs for n rows (in the symmetric orientation each row ran in, spatial
        outputs the shape of the rows' input) as answers (see NNBatchOutput): ``symmetries`` undone, each
        row as its ``settings`` say."""
        policy, policy_pass, value, score_value, ownership = raw
        white, optimism, temperature, hacks, allow_no_result, want_ownership, global_features = settings
        n = policy.shape[0]
        optimism32 = np.ascontiguousarray(optimism, np.float32)
        if self.needs_metadata:
            optimism32 = np.zeros(n, np.float32)  # as KataGo: human-SL nets are never asked for optimistic policies
        # One nogil pass over the rows (symmetry undone, softmax, values, ownership where wanted, the NN
        # cache's scalars): katacli/_core/nn_postprocess. The arrays go as they are (the search's and the
        # runner's already have the C loop's types and layout: a conversion each would cost more than a
        # one-row batch's softmax); any that does not fit is converted and the call made again.
        arrays = [policy, policy_pass, value, score_value, ownership, legal, white, optimism32, temperature, hacks,
                  allow_no_result, want_ownership, symmetries, global_features]
        fixed = (gather_indices(policy.shape[2], policy.shape[3], undo=True), board_x, board_y, self.version,
                 self.num_policy_channels >= 2, self._multipliers())
        threads = postprocess_threads(n)
        try:
            answers = _postprocess_call(arrays, fixed, threads)
        except (ValueError, TypeError, BufferError):   # (a genuine error, e.g. no legal move, is raised again)
            arrays = [None if a is None else convert(a) for a, convert in zip(arrays, _POSTPROCESS_TYPES)]
            answers = _postprocess_call(arrays, fixed, threads)
        columns, probs, own, scalars = answers
        want_ownership, symmetries = arrays[11], arrays[12]
        area = board_x * board_y
        if own is not None:
            own.flags.writeable = False
        scalars.flags.writeable = False
        # Results may be shared through the cache: callers must copy before modifying (e.g. adding noise).
        probs.flags.writeable = False
        return NNBatchOutput(values=columns, policy=probs[:, :area], policy_pass=probs[:, area], ownership=own,
                             ownership_rows=want_ownership, symmetry=symmetries,
                             policy_optimism=scalars[:, CACHED_COLUMN["policy_optimism"]], board_x=board_x,
                             board_y=board_y, cache_scalars=scalars)

    def _multipliers(self) -> tuple:
        """postprocess_multipliers of the model's postprocessing, made again only if that is replaced."""
        cached = self._multipliers_of
        if cached is None or cached[0] is not self.postprocess:
            cached = self._multipliers_of = (self.postprocess, postprocess_multipliers(self.postprocess))
        return cached[1]


def _network_input(raw_spatial: np.ndarray, symmetries, board_x: int, board_y: int) -> tuple[np.ndarray, bool]:
    """Rows' features transformed by ``symmetries``, and whether the board fills the input (no mask needed)."""
    mask_full = raw_spatial.shape[2] * raw_spatial.shape[3] == board_x * board_y
    if np.count_nonzero(symmetries) == 0 and raw_spatial.flags.c_contiguous:   # identity everywhere: no gather
        return raw_spatial, mask_full
    return apply_symmetries(raw_spatial, symmetries), mask_full


def _float32(array) -> np.ndarray:
    return np.ascontiguousarray(array, np.float32)


def _bytes(flags) -> np.ndarray:
    """Flags as the contiguous bools the core reads as bytes (its const unsigned char views take numpy's
    bools as they are: no copy when they already are)."""
    return np.ascontiguousarray(flags, bool)


def _int64(array) -> np.ndarray:
    return np.ascontiguousarray(array, np.int64)


# The type each of postprocess_arrays' arrays is converted to when it does not fit the C loop as it is.
_POSTPROCESS_TYPES = (_float32, _float32, _float32, _float32, _float32, _bytes, _bytes, _float32, _float32, _bytes,
                      _bytes, _bytes, _int64, _float32)


def postprocess_threads(rows: int) -> int:
    """Threads a batch of this many rows is postprocessed on (see POSTPROCESS_ROWS_PER_THREAD)."""
    if rows < 2 * POSTPROCESS_ROWS_PER_THREAD:   # the usual small batch: no need to ask the OS for its cores
        return 1
    return max(1, min(rows // POSTPROCESS_ROWS_PER_THREAD, POSTPROCESS_MAX_THREADS, usable_cpu_count()))


def _postprocess_call(arrays: list, fixed: tuple, threads: int = 1) -> tuple:
    """postprocess_rows on postprocess_arrays' arrays (in _POSTPROCESS_TYPES' order) and its fixed settings,
    its rows split over ``threads`` threads."""
    (policy, policy_pass, value, score_value, ownership, legal, white, optimism, temperature, hacks, allow_no_result,
     want_ownership, symmetries, global_features) = arrays
    undo_table, board_x, board_y, version, mix_optimism, multipliers = fixed
    return postprocess_rows(policy, policy_pass, value, score_value, ownership, legal, white, optimism, temperature,
                            hacks, allow_no_result, want_ownership, symmetries, undo_table, board_x, board_y,
                            version, mix_optimism, multipliers,
                            global_features=global_features if allow_no_result is None else None, cache_scalars=True,
                            threads=threads)


def flops_per_board_point(model) -> float:
    """Floating-point operations of one position per board point: two per weight of every convolution
    and linear layer (the linear layers of pooled features are counted per point too: a slight
    overestimate, negligible beside the convolutions)."""
    import torch

    return float(sum(2 * layer.weight.numel() for layer in model.modules()
                     if isinstance(layer, (torch.nn.Conv2d, torch.nn.Linear))))


def _split_evenly(items: list, parts: int) -> list[list]:
    """items in at most ``parts`` consecutive pieces whose sizes differ by at most one."""
    parts = max(1, min(parts, len(items)))
    size, extra = divmod(len(items), parts)
    pieces, start = [], 0
    for k in range(parts):
        end = start + size + (1 if k < extra else 0)
        pieces.append(items[start:end])
        start = end
    return pieces


def _settings_key(request: NNRequest) -> tuple:
    """Settings that change a position's result and so must match for a cache hit."""
    meta = request.meta.tobytes() if request.meta is not None else None  # human-SL nets: the profile's row
    return (request.policy_optimism, request.policy_temperature, request.enable_passing_hacks, request.allow_no_result,
            meta)


def _validate(request: NNRequest) -> None:
    spatial = request.spatial
    if spatial.ndim != 3:
        raise ValueError(f"spatial features must be [C, H, W], got shape {spatial.shape}")
    if not (0 < request.board_y <= spatial.shape[1] and 0 < request.board_x <= spatial.shape[2]):
        raise ValueError(
            f"board {request.board_x}x{request.board_y} does not fit the spatial input {spatial.shape[2]}x{spatial.shape[1]}"
        )
    area = request.board_x * request.board_y
    if request.legal_mask.shape not in ((area,), (area + 1,)):
        raise ValueError(f"legal mask must have {area} or {area + 1} entries, got shape {request.legal_mask.shape}")


class PendingBatch:
    """A batch :meth:`NNEvaluator.submit_batch` started: ``result()`` (once) gives its NNBatchOutput or
    raises its error; ``settle()`` ends it without the answers (after an error elsewhere)."""

    __slots__ = ("_answer", "_finish", "_settle", "_done")

    def __init__(self, answer: Optional[NNBatchOutput] = None, finish=None, settle=None, done=None):
        self._answer, self._finish, self._settle, self._done = answer, finish, settle, done

    def done(self) -> bool:
        """Whether result() would not wait for the device (answered, or its call finished); does not wait.
        Without a way to ask (``done`` not given), a pending call counts as finished."""
        return self._finish is None or self._done is None or bool(self._done())

    def result(self) -> NNBatchOutput:
        if self._finish is not None:
            finish, self._finish, self._settle = self._finish, None, None
            self._answer = finish()
        return self._answer

    def settle(self) -> None:
        if self._settle is not None:
            settle, self._finish, self._settle = self._settle, None, None
            settle()


class BatchPlan:
    """One NNBatch between :meth:`NNEvaluator.plan_batch` and :meth:`NNEvaluator.finish_batch`: cache hits as
    (row, entry), the rows to run (``rows``, with ``symmetries``), their indices in the batch, cache keys."""

    __slots__ = ("batch", "hits", "misses", "keys", "settings", "rows", "symmetries", "input_symmetries")

    def __init__(self, batch, hits, misses, keys, settings, rows, symmetries, input_symmetries):
        self.batch, self.hits, self.misses, self.keys, self.settings = batch, hits, misses, keys, settings
        # the orientation each row runs in, and the transform its features still need (none for rows a
        # tree filled in their orientation)
        self.rows, self.symmetries, self.input_symmetries = rows, symmetries, input_symmetries
