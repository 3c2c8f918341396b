"""Running a fused network on one device: precision, memory layout, TF32, and CUDA graphs.

:class:`DeviceRunner` takes a batch as numpy arrays and returns the network's raw outputs as
float32 numpy arrays; :class:`~katacli.nn.evaluator.NNEvaluator` does everything around it
(symmetries, postprocessing, the cache).

On the CPU it runs the network through TorchScript traces (:mod:`katacli.nn.traced`). On CUDA:

* **float32 means float32.** PyTorch lets cuDNN use TF32 for float32 convolutions by default
  on Ampere and later, which moves the policy by ~2e-4: KataGo's FP32 mode never does. TF32 is
  used only when asked for (``allow_tf32``, the ``cudaUseTF32`` config key).
* **float16 is the network in half precision**, weights and activations, as KataGo's FP16 mode,
  not autocast (which would re-cast every weight on every call). A net whose layers cannot run
  in half (checked once against the float32 net) falls back to autocast.
* **CUDA graphs**: each batch size the search uses is padded up to one of a few bucket sizes
  and replayed from a captured graph, so a small network is not bound by kernel launches.
  Inputs travel through pinned host buffers.
* Several callers (BatchingEvaluator server threads) may run at once: each takes a *lane*, with
  its own stream, graphs and buffers, so one batch's copies and host work overlap another's
  compute. Lanes are made as needed (two to start with).
* **torch.compile** (``compile_net``, the ``cudaUseTorchCompile`` key): inductor fuses what lies between
  the convolutions (batch-norm affines, activations, residual adds, the casts in and out) into a few
  kernels; the batch dimension stays symbolic, so one compile serves every graph bucket. The first call
  waits for the compile; a compile that fails is logged and the net runs eagerly from then on.
* :meth:`DeviceRunner.launch` queues a call without waiting for it (``LaunchedCall.wait`` does): a
  pipelined search (katacli.search.pipeline) collects its next leaves on the same thread while the GPU
  runs the last ones.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
from contextlib import contextmanager, nullcontext
from typing import Iterator, Optional

import numpy as np
import torch

from katacli.nn.traced import TracedForward

log = logging.getLogger("katacli.nn")

PRECISIONS = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
# Batch sizes graphs are captured for; a batch runs in the smallest bucket that holds it (at most
# 1.5x the work of its own size), and the evaluator's max batch size is always a bucket.
GRAPH_BUCKETS = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024)
# Untimed runs on a side stream before capturing a graph: cuDNN picks its algorithms and the
# caching allocator settles (PyTorch's documented requirement for capture).
GRAPH_WARM_UP_RUNS = 2
# Callers that may run on one GPU at once (each lane holds its own graphs and buffers).
CUDA_LANES = 2
# A half-precision net whose raw outputs (logits, values, scores) on a random batch differ from its
# float32 original's by more than this, relative to 1 + their size, is not trusted in half: autocast
# keeps float32 where needed. (Absolute differences would fail large score outputs in bfloat16.)
HALF_CHECK_TOLERANCE = 0.1
HALF_CHECK_BATCH = 2
# Compute capability from which NVIDIA GPUs have tensor cores (Volta), where KataGo's useFP16=auto
# turns FP16 on.
TENSOR_CORE_MIN_CAPABILITY = (7, 0)


class _CastForward(torch.nn.Module):
    """The network with its inputs cast to the weights' dtype and channels-last, and its outputs back to
    float32: the whole call torch.compile sees, so that the casts fuse with the first and last layers."""

    def __init__(self, net: torch.nn.Module, dtype: Optional[torch.dtype], channels_last: bool):
        super().__init__()
        self.net = net
        self.dtype = dtype   # None: inputs stay float32 (float32 weights, or autocast around the call)
        self.channels_last = channels_last

    def cast_inputs(self, spatial: torch.Tensor, global_features: torch.Tensor,
                    meta: Optional[torch.Tensor]) -> tuple:
        if self.dtype is not None:
            spatial, global_features = spatial.to(self.dtype), global_features.to(self.dtype)
            meta = meta.to(self.dtype) if meta is not None else None
        if self.channels_last:
            spatial = spatial.contiguous(memory_format=torch.channels_last)
        return spatial, global_features, meta

    def forward(self, spatial: torch.Tensor, global_features: torch.Tensor, meta: Optional[torch.Tensor],
                mask_full: bool) -> list[torch.Tensor]:
        spatial, global_features, meta = self.cast_inputs(spatial, global_features, meta)
        return [t.float() for t in self.net(spatial, global_features, meta, mask_full=mask_full)]


# Compiles dynamo keeps per function before it runs the rest eagerly (torch's default: 8). Every runner's
# _CastForward shares one forward, and each runner, batch-size range, board size and mask_full adds one.
RECOMPILE_LIMIT = 64


def _allow_recompiles() -> None:
    config = torch._dynamo.config
    name = "recompile_limit" if hasattr(config, "recompile_limit") else "cache_size_limit"
    setattr(config, name, max(getattr(config, name), RECOMPILE_LIMIT))


def _compile_or_none(module: torch.nn.Module):
    """torch.compile's wrapper of ``module``, or None (logged in one line) where compiling cannot even
    be set up: importing dynamo creates its cache folder, for one."""
    try:
        compiled = torch.compile(module)
        _allow_recompiles()
        return compiled
    except Exception as exc:
        log.warning("torch.compile is not available (%s); the network runs without it", exc)
        return None


def set_tf32(allow: bool) -> None:
    """Whether float32 convolutions and matmuls on CUDA may use TF32 (process-wide in PyTorch)."""
    torch.backends.cudnn.allow_tf32 = bool(allow)
    torch.backends.cuda.matmul.allow_tf32 = bool(allow)


# PyTorch's own default lets cuDNN use TF32 for float32: in a katacli process float32 means float32
# until a network is configured otherwise (cudaUseTF32).
set_tf32(False)


# cudaUseTorchCompile = auto compiles a half-precision net on CUDA when a 19x19 position costs it at least
# this many floating-point operations: b18c384nbt (18.9 GFLOP) ran 1.43x compiled at batch 256 on an H100
# (10,852 -> 15,506 evals/s, float16, 15 s to compile); small nets (g170-b6c96: 0.7) leave their search
# CPU-bound, where the compile's wait at the first batch buys nothing.
AUTO_COMPILE_MIN_FLOPS_PER_POSITION = 10.0e9
AUTO_COMPILE_BOARD_AREA = 19 * 19


def auto_compile(device: torch.device, precision: str, flops_per_point: Optional[float]) -> bool:
    """cudaUseTorchCompile = auto (see AUTO_COMPILE_MIN_FLOPS_PER_POSITION): a big half-precision net on
    CUDA, where Triton (inductor's GPU code generator) is installed."""
    if device.type != "cuda" or precision == "float32" or flops_per_point is None:
        return False
    if flops_per_point * AUTO_COMPILE_BOARD_AREA < AUTO_COMPILE_MIN_FLOPS_PER_POSITION:
        return False
    try:
        from torch.utils._triton import has_triton
    except ImportError:
        return False
    return has_triton()


def use_compile_cache(directory: Optional[str]) -> None:
    """Keep torch.compile's caches (inductor's compiled graphs, Triton's kernels) in ``directory``, as KataGo
    keeps its GPU tuning under its home data directory: torch's default is the temp folder, which a reboot
    empties, and a compile found there takes seconds instead of tens of them. A TORCHINDUCTOR_CACHE_DIR the
    user set wins; None leaves torch's default."""
    if directory is None or "TORCHINDUCTOR_CACHE_DIR" in os.environ:
        return
    try:
        os.makedirs(directory, exist_ok=True)
        writable = os.access(directory, os.W_OK | os.X_OK)
    except OSError:
        writable = False
    if writable:
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = directory
    else:   # a read-only home (a container, a service user): torch's temp folder, no lasting cache
        log.warning("cannot write torch.compile's cache folder %s; compiled kernels go to the temp folder "
                    "(set homeDataDir to a writable folder to keep them)", directory)


def has_tensor_cores(device: torch.device) -> bool:
    return device.type == "cuda" and torch.cuda.get_device_capability(device) >= TENSOR_CORE_MIN_CAPABILITY


def graph_bucket(n: int, max_batch: int) -> int:
    """The batch size a batch of n runs at under CUDA graphs."""
    for bucket in GRAPH_BUCKETS:
        if bucket >= n:
            return min(bucket, max(max_batch, n))
    return n


class _CaptureFailed(Exception):
    """Recording a CUDA graph failed (the cause is chained)."""


class _Graph:
    """One captured forward pass: static device input/outputs and pinned host mirrors."""

    def __init__(self, graph, spatial_in, global_in, meta_in, outputs, host_spatial, host_global, host_meta,
                 host_outputs):
        self.graph = graph
        self.spatial_in, self.global_in, self.meta_in = spatial_in, global_in, meta_in
        self.outputs = outputs
        self.host_spatial, self.host_global, self.host_meta = host_spatial, host_global, host_meta
        self.host_outputs = host_outputs


class _Lane:
    def __init__(self, device: torch.device):
        self.stream = torch.cuda.Stream(device)
        self.graphs: dict[tuple, _Graph] = {}
        self.pool = torch.cuda.graph_pool_handle()


def _graph_outputs(graph: "_Graph", rows: int) -> list[np.ndarray]:
    """A finished replay's outputs for its first ``rows`` rows (copies: the pinned buffers are reused)."""
    return [host.numpy()[:rows].copy() for host in graph.host_outputs]


class LaunchedCall:
    """A network call :meth:`DeviceRunner.launch` queued (or ran at once): ``wait()`` -> its outputs;
    ``settle()`` waits for the device and gives the lane back without reading them (after an error)."""

    def __init__(self, outputs: Optional[list] = None, lane: Optional[_Lane] = None, graph=None, rows: int = 0,
                 lanes: Optional[queue.Queue] = None):
        self._outputs = outputs
        self._lane, self._graph, self._rows, self._lanes = lane, graph, rows, lanes

    def wait(self) -> list[np.ndarray]:
        if self._lane is not None:
            try:
                self._lane.stream.synchronize()   # releases the GIL while the GPU finishes
                self._outputs = _graph_outputs(self._graph, self._rows)
            finally:
                self._release()
        return self._outputs

    def done(self) -> bool:
        """Whether the device has finished the call (wait() would not block on it); does not wait."""
        return self._lane is None or self._lane.stream.query()

    def settle(self) -> None:
        if self._lane is not None:
            try:
                self._lane.stream.synchronize()
            finally:
                self._release()

    def _release(self) -> None:
        lane, self._lane = self._lane, None
        self._lanes.put(lane)


class DeviceRunner:
    """``runner(spatial, global_features, meta, mask_full)`` -> [policy, policy_pass, value, score, ownership]
    as float32 numpy arrays (see the module docstring). Thread-safe."""

    def __init__(self, net: torch.nn.Module, device: torch.device, precision: str = "float32",
                 channels_last: bool = True, trace: Optional[bool] = None, cuda_graphs: Optional[bool] = None,
                 allow_tf32: bool = False, max_batch_size: int = 256, compile_net: bool = False):
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {sorted(PRECISIONS)}, got {precision!r}")
        self.device = device
        self.precision = precision
        self.channels_last = channels_last
        self.max_batch_size = max(1, int(max_batch_size))
        self.is_cuda = device.type == "cuda"
        if self.is_cuda:
            set_tf32(allow_tf32)
            torch.backends.cudnn.benchmark = True  # fixed shapes (graph buckets): pick the fastest kernels
        self.allow_tf32 = bool(allow_tf32) and self.is_cuda
        net = net.to(device)
        if channels_last:
            net = net.to(memory_format=torch.channels_last)
        # "weights": the net itself in this dtype; "autocast": float32 weights under autocast.
        self.cast_mode = "none"
        if precision != "float32":
            net, self.cast_mode = self._cast(net, PRECISIONS[precision])
        self.net = net.eval()
        self._cast_forward = _CastForward(self.net, PRECISIONS[precision] if self.cast_mode == "weights" else None,
                                          channels_last)
        # (compiled at its first call; _forward_tensors falls back to the eager net if that fails)
        self._compiled = _compile_or_none(self._cast_forward) if compile_net else None
        use_trace = (device.type == "cpu" and not compile_net) if trace is None else trace
        self._traced = TracedForward(self.net) if use_trace else None
        self.cuda_graphs = self.is_cuda and (True if cuda_graphs is None else bool(cuda_graphs))
        self._lanes: Optional[queue.Queue] = None
        if self.is_cuda:
            self._lanes = queue.LifoQueue()  # a lone caller keeps reusing one lane (and its captured graphs)
            for _ in range(CUDA_LANES):
                self._lanes.put(_Lane(device))
        self._capture_lock = threading.Lock()

    # -- description

    def describe(self) -> str:
        """Device and precision in words, for start-up lines."""
        if self.is_cuda:
            parts = [f"{torch.cuda.get_device_name(self.device)} ({self.device})", self.precision]
            if self.precision == "float32":
                parts.append("TF32 allowed" if self.allow_tf32 else "no TF32")
            if self.cast_mode == "autocast":
                parts.append("autocast")
            parts.append("NHWC" if self.channels_last else "NCHW")
            if self.cuda_graphs:
                parts.append("CUDA graphs")
            if self.compiled:
                parts.append("torch.compile")
            return ", ".join(parts)
        return (f"CPU with PyTorch using {torch.get_num_threads()} thread(s), {self.precision}"
                + (", torch.compile" if self.compiled else ""))

    @property
    def compiled(self) -> bool:
        """Whether the network runs compiled (asked for, and not given up after a failed compile)."""
        return self._compiled is not None

    # -- running

    def __call__(self, spatial: np.ndarray, global_features: np.ndarray, meta: Optional[np.ndarray],
                 mask_full: bool) -> list[np.ndarray]:
        if not self.is_cuda:
            return self._run_plain(spatial, global_features, meta, mask_full)
        # Inference mode throughout: a graph's static buffers were made in it, and only in it may they be written.
        with self._lane() as lane, torch.inference_mode():
            if self.cuda_graphs:
                try:
                    return self._run_graph(lane, spatial, global_features, meta, mask_full)
                except _CaptureFailed as failure:  # a net with a step graphs cannot record: run it eagerly
                    log.warning("could not capture a CUDA graph of the network (%s); running it without graphs",
                                failure.__cause__)
                    self.cuda_graphs = False
            with torch.cuda.stream(lane.stream):
                outputs = self._run_plain(spatial, global_features, meta, mask_full)
            return outputs

    def launch(self, spatial: np.ndarray, global_features: np.ndarray, meta: Optional[np.ndarray],
               mask_full: bool) -> "LaunchedCall":
        """Queue a call and return at once where the device allows it (CUDA graphs: the copies in, the
        replay and the copies out queued on a lane's stream, the inputs already copied into its pinned
        buffers); ``wait()`` then gives what __call__ would have. Elsewhere the call runs now.
        The lane stays taken until the call is waited for or settled."""
        if not (self.is_cuda and self.cuda_graphs):
            return LaunchedCall(outputs=self(spatial, global_features, meta, mask_full))
        lane = self._take_lane()
        try:
            with torch.inference_mode():
                graph = self._enqueue_graph(lane, spatial, global_features, meta, mask_full)
        except _CaptureFailed as failure:
            self._lanes.put(lane)
            log.warning("could not capture a CUDA graph of the network (%s); running it without graphs",
                        failure.__cause__)
            self.cuda_graphs = False
            return LaunchedCall(outputs=self(spatial, global_features, meta, mask_full))
        except BaseException:
            lane.stream.synchronize()   # nothing queued may still read the buffers when the lane is reused
            self._lanes.put(lane)
            raise
        return LaunchedCall(lane=lane, graph=graph, rows=spatial.shape[0], lanes=self._lanes)

    def capture_lanes(self, spatial: np.ndarray, global_features: np.ndarray, meta: Optional[np.ndarray],
                      mask_full: bool) -> None:
        """Run this batch once on every lane, so that each has its graph for the batch's size recorded: a
        pipelined search keeps two calls in flight, one per lane, and a lane records a size's graph the
        first time it runs it (warm-up runs and the capture: tens of milliseconds to seconds). Without
        graphs (or off CUDA) the batch just runs once."""
        if not (self.is_cuda and self.cuda_graphs):
            self(spatial, global_features, meta, mask_full)
            return
        lanes = [self._take_lane() for _ in range(CUDA_LANES)]   # all at once: each call gets its own lane
        failed = False
        try:
            with torch.inference_mode():
                for lane in lanes:
                    self._run_graph(lane, spatial, global_features, meta, mask_full)
        except _CaptureFailed:
            failed = True
        finally:
            for lane in lanes:
                self._lanes.put(lane)
        if failed:   # __call__ meets the same failure, says so, turns graphs off and runs the batch without
            self(spatial, global_features, meta, mask_full)

    def _take_lane(self) -> _Lane:
        """A free lane, or a new one: a caller holding a launched call's lane must never wait for another."""
        try:
            return self._lanes.get_nowait()
        except queue.Empty:
            return _Lane(self.device)

    @contextmanager
    def _lane(self) -> Iterator[_Lane]:
        lane = self._take_lane()
        try:
            yield lane
        finally:
            self._lanes.put(lane)

    def _forward_tensors(self, spatial_t: torch.Tensor, global_t: torch.Tensor, meta_t: Optional[torch.Tensor],
                         mask_full: bool) -> list[torch.Tensor]:
        """The net on device tensors (float32 in), outputs as float32 device tensors."""
        autocast = (torch.autocast(device_type=self.device.type, dtype=PRECISIONS[self.precision])
                    if self.cast_mode == "autocast" else nullcontext())
        with autocast:
            if self._compiled is not None:
                outputs = self._run_compiled(spatial_t, global_t, meta_t, mask_full)
                if outputs is not None:
                    return outputs
            if self._traced is None:
                return self._cast_forward(spatial_t, global_t, meta_t, mask_full)
            spatial_t, global_t, meta_t = self._cast_forward.cast_inputs(spatial_t, global_t, meta_t)
            return [t.float() for t in self._traced(spatial_t, global_t, meta_t, mask_full)]

    def _run_compiled(self, spatial_t, global_t, meta_t, mask_full) -> Optional[list[torch.Tensor]]:
        """The compiled net's outputs, or None once compiling failed (logged; the eager net runs from then on).
        The batch dimension is marked dynamic: one compile serves every batch size (sizes 0 and 1 aside)."""
        compiled = self._compiled
        for t in (spatial_t, global_t, meta_t):
            if t is not None:
                torch._dynamo.maybe_mark_dynamic(t, 0)
        try:
            return compiled(spatial_t, global_t, meta_t, mask_full)
        except Exception as exc:   # noqa: BLE001 -- no Triton or compiler for this device, an op inductor lacks
            if torch.cuda.is_available() and torch.cuda.is_current_stream_capturing():
                raise   # a capture that fails is the CUDA graphs' failure: _capture says so and turns graphs off
            if self._compiled is compiled:
                self._compiled = None
                first_line = str(exc).splitlines()[0] if str(exc) else ""
                log.warning("torch.compile of the network failed (%s: %s); running it without "
                            "(cudaUseTorchCompile = false skips the attempt)", type(exc).__name__, first_line)
            return None

    def _run_plain(self, spatial, global_features, meta, mask_full) -> list[np.ndarray]:
        spatial_t = torch.from_numpy(spatial).to(self.device, non_blocking=True)
        global_t = torch.from_numpy(global_features).to(self.device, non_blocking=True)
        meta_t = torch.from_numpy(meta).to(self.device) if meta is not None else None
        with torch.inference_mode():
            out = self._forward_tensors(spatial_t, global_t, meta_t, mask_full)
            return [t.cpu().numpy() for t in out]

    def _run_graph(self, lane: _Lane, spatial, global_features, meta, mask_full) -> list[np.ndarray]:
        graph = self._enqueue_graph(lane, spatial, global_features, meta, mask_full)
        lane.stream.synchronize()
        return _graph_outputs(graph, spatial.shape[0])

    def _enqueue_graph(self, lane: _Lane, spatial, global_features, meta, mask_full) -> "_Graph":
        """Copy a batch into its graph's pinned buffers and queue the copies in, the replay and the copies
        out on the lane's stream (not waited for)."""
        n = spatial.shape[0]
        bucket = graph_bucket(n, self.max_batch_size)
        key = (bucket, spatial.shape[1:], global_features.shape[1:], None if meta is None else meta.shape[1:],
               bool(mask_full))
        graph = lane.graphs.get(key)
        if graph is None:
            graph = self._capture(lane, key, spatial, global_features, meta, mask_full)
        host_spatial, host_global = graph.host_spatial.numpy(), graph.host_global.numpy()
        host_spatial[:n] = spatial
        host_global[:n] = global_features
        if n < bucket:  # padding rows: any valid position; they are computed and thrown away
            host_spatial[n:] = spatial[:1]
            host_global[n:] = global_features[:1]
        if meta is not None:
            host_meta = graph.host_meta.numpy()
            host_meta[:n] = meta
            host_meta[n:] = meta[:1]
        with torch.cuda.stream(lane.stream):
            graph.spatial_in.copy_(graph.host_spatial, non_blocking=True)
            graph.global_in.copy_(graph.host_global, non_blocking=True)
            if meta is not None:
                graph.meta_in.copy_(graph.host_meta, non_blocking=True)
            graph.graph.replay()
            for host, out in zip(graph.host_outputs, graph.outputs):
                host.copy_(out, non_blocking=True)
        return graph

    def _capture(self, lane: _Lane, key, spatial, global_features, meta, mask_full) -> _Graph:
        bucket = key[0]

        def device_buffer(example: np.ndarray) -> torch.Tensor:
            t = torch.from_numpy(example[:1]).to(self.device)
            return t.expand(bucket, *t.shape[1:]).contiguous()

        with self._capture_lock, torch.inference_mode():
            spatial_in = device_buffer(spatial)
            global_in = device_buffer(global_features)
            meta_in = device_buffer(meta) if meta is not None else None
            lane.stream.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(lane.stream):
                for _ in range(GRAPH_WARM_UP_RUNS):
                    self._forward_tensors(spatial_in, global_in, meta_in, mask_full)
            lane.stream.synchronize()
            graph = torch.cuda.CUDAGraph()
            try:
                # thread_local: another lane replaying meanwhile must not break this capture
                with torch.cuda.graph(graph, pool=lane.pool, stream=lane.stream, capture_error_mode="thread_local"):
                    outputs = self._forward_tensors(spatial_in, global_in, meta_in, mask_full)
            except Exception as exc:
                raise _CaptureFailed() from exc
            host_outputs = [torch.empty(o.shape, dtype=o.dtype, pin_memory=True) for o in outputs]

            def pinned(t: Optional[torch.Tensor]) -> Optional[torch.Tensor]:
                return None if t is None else torch.empty(t.shape, dtype=t.dtype, pin_memory=True)

            captured = _Graph(graph, spatial_in, global_in, meta_in, outputs, pinned(spatial_in), pinned(global_in),
                              pinned(meta_in), host_outputs)
        lane.graphs[key] = captured
        log.debug("captured a CUDA graph for batch %d, input %s", bucket, tuple(spatial.shape[1:]))
        return captured

    # -- precision

    def _cast(self, net: torch.nn.Module, dtype: torch.dtype) -> tuple[torch.nn.Module, str]:
        """The net in ``dtype`` if it runs correctly so, else the float32 net under autocast."""
        import copy

        if not self.is_cuda:
            return net, "autocast"  # CPU kernels for half convolutions are missing or slow
        half = copy.deepcopy(net).to(dtype)
        try:
            if _half_agrees(net, half, dtype, self.device, self.channels_last):
                return half, "weights"
            log.warning("the network is not accurate in %s; running it with autocast", dtype)
        except Exception as exc:  # a layer without a half kernel: autocast keeps it in float32
            log.warning("the network cannot run in %s (%s); running it with autocast", dtype, exc)
        return net, "autocast"


def _half_agrees(net, half, dtype, device, channels_last: bool) -> bool:
    """Whether the half net's outputs on a random 9x9 batch stay near the float32 net's."""
    from katacli.nn.description import NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7

    generator = torch.Generator().manual_seed(0)
    size = 9
    spatial = (torch.rand(HALF_CHECK_BATCH, NUM_SPATIAL_FEATURES_V7, size, size, generator=generator) < 0.3).float()
    spatial[:, 0] = 1.0
    global_features = torch.zeros(HALF_CHECK_BATCH, NUM_GLOBAL_FEATURES_V7)
    meta = None
    encoder = getattr(getattr(net, "trunk", None), "metadata_encoder", None)
    if encoder is not None:
        meta = torch.zeros(HALF_CHECK_BATCH, encoder.layer1.in_features)
    spatial, global_features = spatial.to(device), global_features.to(device)
    meta = meta.to(device) if meta is not None else None
    if channels_last:
        spatial = spatial.contiguous(memory_format=torch.channels_last)
    with torch.inference_mode():
        want = net(spatial, global_features, meta, mask_full=True)
        got = half(spatial.to(dtype), global_features.to(dtype), meta.to(dtype) if meta is not None else None,
                   mask_full=True)
    for w, g in zip(want, got):
        g = g.float()
        relative = ((g - w).abs() / (1.0 + w.abs())).max().item() if g.shape == w.shape else float("inf")
        if not torch.isfinite(g).all() or relative > HALF_CHECK_TOLERANCE:
            return False
    return True
