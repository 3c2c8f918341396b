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
from typing import Optional, Sequence, Union

import numpy as np
import torch

from katacli.nn.cache import DEFAULT_CACHE_SIZE_POWER_OF_TWO, NNCache
from katacli.nn.torch_model import KataGoModel, load_model
from katacli.nn.request import NNRequest  # noqa: F401  (part of this module's API)
from katacli.nn.postprocess import (
    NNOutput,
    allow_no_result_from_globals,
    mix_policy_optimism,
    policy_probabilities,
    value_outputs,
    white_ownership,
)
from katacli.nn.symmetry import NUM_SYMMETRIES, apply_symmetries
from katacli.nn.device_runner import PRECISIONS, DeviceRunner

DEFAULT_MAX_BATCH_SIZE = 256
# warm_up: evaluations of a blank position that build the traced network and let TorchScript's
# profiling executor optimise it (its first runs are several times slower than later ones).
WARM_UP_ROUNDS = 3


def default_device() -> torch.device:
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

    def __init__(
        self,
        model: KataGoModel,
        device: Union[str, torch.device, None] = None,
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
    ):
        """
        ``precision``: "float32" (exact), or "float16" / "bfloat16" autocast (CUDA; bfloat16 also CPU).
        ``channels_last``: NHWC memory layout; default on.
        ``cache_size_power_of_two``: None disables the cache.
        ``default_symmetry``: used for requests without one; None picks one at random per request.
        ``fuse``: fold batch norms into convolutions (faster; False runs the model exactly as given).
        ``trace``: run TorchScript traces (:mod:`katacli.nn.traced`); default on for the CPU.
        ``cuda_graphs``: replay captured CUDA graphs (default on CUDA). ``allow_tf32``: let float32 use
        TF32 on CUDA (faster, less exact; off as in KataGo). See :mod:`katacli.nn.device_runner`.
        """
        if isinstance(model, (str, os.PathLike)):
            raise TypeError("NNEvaluator takes a loaded KataGoModel; for a file use NNEvaluator.from_file(path) "
                            "or katacli.load_network(path)")
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
        if default_symmetry is not None and not 0 <= default_symmetry < NUM_SYMMETRIES:
            raise ValueError(f"default symmetry must be in 0..7, got {default_symmetry}")
        self.device = torch.device(device) if device is not None else default_device()
        self.precision = precision
        # NHWC is faster on both devices (CPU, test-b4c32 9x9 traced: 1.25-1.5x; g170 19x19: 1.2x).
        self.channels_last = True if channels_last is None else channels_last
        self.version = model.version
        self.model_name = model.name
        self.postprocess = model.postprocess
        self.num_policy_channels = model.num_policy_channels
        self.needs_metadata = model.needs_metadata
        net = model.fused() if fuse and not model.is_fused else model
        self.max_batch_size = max(1, int(max_batch_size))
        self.runner = DeviceRunner(net, self.device, precision, channels_last=self.channels_last, trace=trace,
                                   cuda_graphs=cuda_graphs, allow_tf32=allow_tf32,
                                   max_batch_size=self.max_batch_size)
        self.net = self.runner.net
        self.cache: Optional[NNCache[NNOutput]] = (
            NNCache(cache_size_power_of_two) if cache_size_power_of_two is not None else None
        )
        self.default_symmetry = default_symmetry
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._stats_lock = threading.Lock()
        self.num_positions_evaluated = 0
        self.num_batches = 0
        # Threads one batch is split over on the CPU, each piece a single-threaded network call
        # (torch releases the GIL): how a search thread uses several cores (see set_parallel_threads).
        self.parallel_threads = 1
        self._pool: Optional[ThreadPoolExecutor] = None
        self._pool_workers = 0

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike], **kwargs) -> "NNEvaluator":
        return cls(load_model(path), **kwargs)

    # -- public API

    def set_parallel_threads(self, threads: Optional[int] = None) -> None:
        """Split each CPU batch over this many threads (None: one per core). For a process whose
        network calls come from one search at a time (the GTP engine, benchmarks, evalsgf): one batch
        of a search's leaves then keeps every core busy, as KataGo's search threads do. Engines that
        already evaluate from several threads at once (BatchingEvaluator's servers) leave it at 1."""
        self.parallel_threads = max(1, int(threads if threads is not None else (os.cpu_count() or 1)))

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

    def warm_up(self, board_x: int, board_y: int, rounds: int = WARM_UP_ROUNDS) -> None:
        """Evaluate a blank board_x by board_y position a few times, so that the first real evaluation
        at that size does not pay for tracing and optimising the network (seconds on a CPU). Nets that
        take SGF metadata are skipped (their input needs a profile). The counters are left as they were."""
        if self.needs_metadata:
            return
        from katacli.nn.description import NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7

        spatial = np.zeros((NUM_SPATIAL_FEATURES_V7, board_y, board_x), np.float32)
        spatial[0] = 1.0  # feature 0: on the board
        blank = NNRequest(spatial, np.zeros(NUM_GLOBAL_FEATURES_V7, np.float32),
                          np.ones(board_x * board_y + 1, bool), board_x=board_x, board_y=board_y,
                          white_to_move=False, symmetry=0)
        evaluated, batches = self.num_positions_evaluated, self.num_batches
        for _ in range(rounds):
            self.evaluate_uncached([blank])
        self.num_positions_evaluated, self.num_batches = evaluated, batches

    def lookup_cache(self, request: NNRequest) -> Optional[NNOutput]:
        if self.cache is None or request.cache_key is None:
            return None
        cached = self.cache.get(request.cache_key, _settings_key(request))
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
        pieces = _split_evenly(chunk, self.parallel_threads if self.device.type == "cpu" else 1)

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
            torch.set_num_threads(CPU_THREADS_PER_EVALUATION)
            _thread_state.configured = True
        return self.runner(spatial, global_features, meta, mask_full)

    def describe_device(self) -> str:
        """Where and how the network runs, in words (device, precision, layout), for start-up lines."""
        return self.runner.describe()

    def _run_batch(self, requests: list[NNRequest], symmetries: list[int]) -> list[NNOutput]:
        """One network call for requests of one shape (counted in num_positions_evaluated)."""
        n = len(requests)
        first = requests[0]
        board_x, board_y = first.board_x, first.board_y
        raw = np.stack([r.spatial for r in requests]).astype(np.float32, copy=False)
        spatial = apply_symmetries(raw, symmetries)
        global_features = np.stack([r.global_features for r in requests]).astype(np.float32, copy=False)
        meta = None
        if self.needs_metadata:
            if any(r.meta is None for r in requests):
                raise ValueError(f"model {self.model_name} needs SGF metadata input (NNRequest.meta)")
            meta = np.stack([r.meta for r in requests]).astype(np.float32, copy=False)
        mask_full = spatial.shape[2] * spatial.shape[3] == board_x * board_y
        policy, policy_pass, value, score_value, ownership = self._forward(spatial, global_features, meta, mask_full)
        with self._stats_lock:
            self.num_positions_evaluated += n

        # Back to the real board's orientation, cropped to the board, flattened row-major.
        area = board_x * board_y
        policy = apply_symmetries(policy, symmetries, undo=True)[:, :, :board_y, :board_x].reshape(n, -1, area)
        ownership = apply_symmetries(ownership, symmetries, undo=True)[:, 0, :board_y, :board_x].reshape(n, area)

        optimism = np.array([r.policy_optimism for r in requests], np.float32)
        if self.needs_metadata:
            optimism[:] = 0.0  # as KataGo: human-SL nets are never asked for optimistic policies
        logits, pass_logits = mix_policy_optimism(policy, policy_pass, optimism, self.num_policy_channels)
        masks = [r.legal_mask for r in requests]
        if any(m.shape[0] == area for m in masks):  # a mask without the pass entry: pass is legal
            masks = [m if m.shape[0] > area else np.append(m, True) for m in masks]
        legal = np.stack(masks).astype(bool, copy=False)
        pass_legal = legal[:, area]
        legal = legal[:, :area]
        temperature = np.array([r.policy_temperature for r in requests], np.float32)
        hacks = np.array([r.enable_passing_hacks for r in requests])
        probs, pass_probs = policy_probabilities(
            logits, pass_logits, legal, pass_legal, temperature, self.postprocess.output_scale_multiplier, hacks
        )
        white = np.array([bool(r.white_to_move) for r in requests])
        allow_no_result = np.array(
            [r.allow_no_result if r.allow_no_result is not None else allow_no_result_from_globals(r.global_features) for r in requests]
        )
        values = value_outputs(value, score_value, white, allow_no_result, self.version, self.postprocess)
        own = white_ownership(ownership, white, self.postprocess.output_scale_multiplier)
        # Results may be shared through the cache: callers must copy before modifying (e.g. adding noise).
        probs.flags.writeable = False
        own.flags.writeable = False
        wanted = [r.include_ownership for r in requests]
        if all(wanted):
            def ownership_of(i):
                return own[i]
        else:  # a copy, so that the batch's whole ownership array is not kept alive by one view of it
            def ownership_of(i):
                return own[i].copy() if wanted[i] else None
        columns = zip(values.white_win.tolist(), values.white_loss.tolist(), values.no_result.tolist(),
                      values.white_lead.tolist(), values.white_score_mean.tolist(), values.white_score_mean_sq.tolist(),
                      values.var_time_left.tolist(), values.shortterm_winloss_error.tolist(),
                      values.shortterm_score_error.tolist(), pass_probs.tolist(), optimism.tolist())
        return [
            NNOutput(
                white_win=win, white_loss=loss, no_result=no_result, white_lead=lead, white_score_mean=score,
                white_score_mean_sq=score_sq, var_time_left=var_time_left, shortterm_winloss_error=st_winloss,
                shortterm_score_error=st_score, policy=probs[i], policy_pass=policy_pass,
                white_ownership=ownership_of(i),
                board_x=board_x, board_y=board_y, symmetry=symmetries[i], policy_optimism=opt,
            )
            for i, (win, loss, no_result, lead, score, score_sq, var_time_left, st_winloss, st_score, policy_pass, opt)
            in enumerate(columns)
        ]


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
