#!/usr/bin/env python3
"""Network evaluation speed.

CPU: g170-b6c96 on 19x19 at batch 1, 8, 32 and 128, as raw forward passes ("net") and through
the full evaluator (symmetry, batching, postprocessing: "evaluator").
CUDA (when available): a randomly initialised b18c384nbt on 19x19 at batch 64..512, float16 and
float32, through katacli's device runner (CUDA graphs, half weights) and beside it the eager net.
With --compile-batches (CUDA, or the CPU net with --skip-cuda): torch.compile of the same float16 (CPU:
float32) net at those batch sizes beside its eager call, both on device tensors -- whether a compiled
inference path would pay (each size compiles once, a minute or more for b18c384nbt; untimed).

    python3 benchmarks/bench_nn.py [--seconds 2] [--threads N] [--model path] [--cpu-precision bfloat16]
                                   [--compile-batches 256]
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import sys

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import cpu_model  # noqa: E402
from katacli.nn.batch import NNBatch
from katacli.nn.evaluator import NNEvaluator, NNRequest, set_cpu_threads
from katacli.nn.torch_model import KataGoModel, load_model

DEFAULT_MODEL = Path(__file__).resolve().parents[1].parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
BOARD = 19
CPU_BATCHES = (1, 8, 32, 128)
CUDA_BATCHES = (64, 128, 256, 512)
CUDA_CONFIG = "b18c384nbt"
WARMUP_CALLS = 5


def timed_rate(fn, positions_per_call: int, seconds: float) -> float:
    for _ in range(WARMUP_CALLS):
        fn()
    calls = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        fn()
        calls += 1
    return calls * positions_per_call / (time.perf_counter() - start)


def blank_inputs(batch: int) -> tuple[np.ndarray, np.ndarray]:
    """``batch`` empty 19x19 boards as the runner takes them: spatial [batch, 22, 19, 19], global [batch, 19]."""
    spatial = np.zeros((batch, 22, BOARD, BOARD), np.float32)
    spatial[:, 0] = 1.0
    return spatial, np.zeros((batch, 19), np.float32)


def empty_board_request() -> NNRequest:
    spatial = np.zeros((22, BOARD, BOARD), np.float32)
    spatial[0] = 1.0
    global_features = np.zeros(19, np.float32)
    global_features[5] = -7.5 / 20.0
    return NNRequest(spatial, global_features, np.ones(BOARD * BOARD + 1, bool), BOARD, BOARD, white_to_move=False)


def bench_cpu(model: KataGoModel, seconds: float, precision: str) -> None:
    evaluator = NNEvaluator(model, device="cpu", precision=precision, channels_last=True, cache_size_power_of_two=None)
    net = evaluator.net
    print(f"CPU ({cpu_model()}), {model.name}, {BOARD}x{BOARD}, {precision}, {torch.get_num_threads()} threads")
    print(f"{'batch':>6} {'net evals/s':>12} {'evaluator evals/s':>18}")
    request = empty_board_request()
    for batch in CPU_BATCHES:
        spatial = torch.zeros(batch, 22, BOARD, BOARD).contiguous(memory_format=torch.channels_last)
        spatial[:, 0] = 1.0
        global_features = torch.zeros(batch, 19)

        def forward():
            with torch.inference_mode():
                if precision == "float32":
                    net(spatial, global_features, mask_full=True)
                else:
                    with torch.autocast("cpu", dtype=torch.bfloat16):
                        net(spatial, global_features, mask_full=True)

        requests = [request] * batch
        net_rate = timed_rate(forward, batch, seconds)
        eval_rate = timed_rate(lambda: evaluator.evaluate(requests), batch, seconds)
        print(f"{batch:>6} {net_rate:>12.0f} {eval_rate:>18.0f}", flush=True)


def bench_cuda(seconds: float, config: str = CUDA_CONFIG) -> None:
    """Per precision and batch: the runner alone (numpy in and out: copies, graphs, the net), the whole
    evaluator as the search calls it (one NNBatch of arrays: random symmetries gathered, the runner,
    postprocessing; no cache), the same through per-position request objects (as `kata-raw-nn` and the
    human-SL path call it), and for comparison the eager net under autocast, which is how katacli ran
    FP16 before the device runner (device tensors in, nothing copied)."""
    model = KataGoModel.from_config(config, seed=0)
    print(f"\nCUDA ({torch.cuda.get_device_name()}), random-init {config}, {BOARD}x{BOARD}, channels-last; evals/s")
    print(f"{'precision':>9} {'batch':>6} {'runner':>9} {'runner no graphs':>17} {'evaluator':>10} "
          f"{'requests':>9} {'eager autocast':>15}")
    request = empty_board_request()
    for precision in ("float16", "float32"):
        evaluators = {graphs: NNEvaluator(model, device="cuda", precision=precision, channels_last=True,
                                          cache_size_power_of_two=None, cuda_graphs=graphs, compile_net=False,
                                          max_batch_size=max(CUDA_BATCHES)) for graphs in (True, False)}
        autocast_net = NNEvaluator(model, device="cuda", precision="float32", channels_last=True,
                                   cache_size_power_of_two=None, cuda_graphs=False, compile_net=False).net
        for batch in CUDA_BATCHES:
            spatial, global_features = blank_inputs(batch)
            spatial_t = torch.from_numpy(spatial).cuda().contiguous(memory_format=torch.channels_last)
            global_t = torch.from_numpy(global_features).cuda()
            dtype = torch.float16 if precision == "float16" else torch.float32

            def eager_autocast():
                with torch.inference_mode(), torch.autocast("cuda", dtype=dtype, enabled=precision != "float32"):
                    autocast_net(spatial_t, global_t, mask_full=True)
                torch.cuda.synchronize()

            requests = [request] * batch
            arrays = search_batch(spatial, global_features)
            rates = [timed_rate(lambda e=evaluators[g]: e.runner(spatial, global_features, None, True), batch, seconds)
                     for g in (True, False)]
            rates.append(timed_rate(lambda: evaluators[True].evaluate_batch(arrays), batch, seconds))
            rates.append(timed_rate(lambda: evaluators[True].evaluate_uncached(requests), batch, seconds))
            rates.append(timed_rate(eager_autocast, batch, seconds))
            print(f"{precision:>9} {batch:>6} {rates[0]:>9.0f} {rates[1]:>17.0f} {rates[2]:>10.0f} {rates[3]:>9.0f} "
                  f"{rates[4]:>15.0f}", flush=True)


def bench_compiled(net: torch.nn.Module, device: torch.device, dtype: torch.dtype, batches, seconds: float,
                   mode: str = "default") -> None:
    """The net eager and under torch.compile (inductor, static shapes) on device tensors of ``dtype``,
    channels-last, evals/s per batch size; the compile itself is timed apart."""
    print(f"\ntorch.compile (mode {mode}) on {device} ({dtype}, channels-last, device tensors in; evals/s)")
    print(f"{'batch':>6} {'eager':>9} {'compiled':>9} {'ratio':>6} {'compile s':>10}")
    compiled = torch.compile(net, dynamic=False, mode=None if mode == "default" else mode)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    for batch in batches:
        spatial = torch.zeros((batch, 22, BOARD, BOARD), dtype=dtype, device=device)
        spatial[:, 0] = 1.0
        spatial = spatial.contiguous(memory_format=torch.channels_last)
        global_features = torch.zeros((batch, 19), dtype=dtype, device=device)

        def call(fn):
            def run():
                with torch.inference_mode():
                    fn(spatial, global_features, None, mask_full=True)
                sync()
            return run

        start = time.perf_counter()
        call(compiled)()   # compiles for this shape
        compile_seconds = time.perf_counter() - start
        eager, fast = timed_rate(call(net), batch, seconds), timed_rate(call(compiled), batch, seconds)
        print(f"{batch:>6} {eager:>9.0f} {fast:>9.0f} {fast / eager:>6.2f} {compile_seconds:>10.1f}", flush=True)


def search_batch(spatial: np.ndarray, global_features: np.ndarray) -> NNBatch:
    """The arrays a search hands the evaluator for these positions (Black to move, all legal, no cache)."""
    n = spatial.shape[0]
    return NNBatch(spatial=spatial, global_features=global_features,
                   legal_mask=np.ones((n, BOARD * BOARD + 1), bool), board_x=BOARD, board_y=BOARD,
                   white_to_move=np.zeros(n, bool), policy_optimism=np.zeros(n), include_ownership=np.zeros(n, bool))


def bench_cuda_compiled(seconds: float, config: str = CUDA_CONFIG) -> None:
    """The device runner as the search runs it on a GPU by default for big nets (float16, CUDA graphs,
    cudaUseTorchCompile = auto: compiled, batch dimension dynamic) against the same without the compile:
    the first call compiles (timed apart), each batch size then records its graph (untimed)."""
    model = KataGoModel.from_config(config, seed=0)
    print(f"\nthe device runner with torch.compile (cudaUseTorchCompile), {config}, float16, CUDA graphs; evals/s")
    runners = {flag: NNEvaluator(model, device="cuda", precision="float16", channels_last=True,
                                 cache_size_power_of_two=None, compile_net=flag,
                                 max_batch_size=max(CUDA_BATCHES)).runner for flag in (False, True)}
    start = time.perf_counter()
    runners[True](*blank_inputs(CUDA_BATCHES[0]), None, True)
    print(f"first call (compile and graph): {time.perf_counter() - start:.1f} s; {runners[True].describe()}")
    print(f"{'batch':>6} {'runner':>9} {'compiled':>9} {'ratio':>6}")
    for batch in CUDA_BATCHES:
        spatial, global_features = blank_inputs(batch)
        plain, fast = (timed_rate(lambda r=runners[flag]: r(spatial, global_features, None, True), batch, seconds)
                       for flag in (False, True))
        print(f"{batch:>6} {plain:>9.0f} {fast:>9.0f} {fast / plain:>6.2f}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--seconds", type=float, default=2.0, help="measuring time per setting")
    parser.add_argument("--threads", type=int, default=None,
                        help="torch CPU threads for every row (default: torch's count on this machine)")
    parser.add_argument("--cpu-precision", choices=("float32", "bfloat16"), default="float32")
    parser.add_argument("--skip-cpu", action="store_true")
    parser.add_argument("--cuda-config", default=CUDA_CONFIG, help="architecture of the random GPU net")
    parser.add_argument("--skip-cuda", action="store_true")
    parser.add_argument("--compile-batches", default="",
                        help="comma-separated batch sizes to time torch.compile at (default: none)")
    parser.add_argument("--compile-mode", default="default",
                        help="torch.compile mode of the --compile-batches rows, e.g. max-autotune-no-cudagraphs "
                             "(inductor times its own convolution and matmul kernels against cuDNN's: minutes)")
    parser.add_argument("--compiled-only", action="store_true",
                        help="CUDA: only the runner with and without torch.compile (not the precision table)")
    args = parser.parse_args()
    compile_batches = [int(b) for b in args.compile_batches.split(",") if b.strip()]
    # Every row on the same thread count: an evaluator left to its default runs one intra-op thread an
    # evaluation (search threads evaluate side by side), so the default here is torch's own count, set explicitly.
    set_cpu_threads(args.threads or torch.get_num_threads())
    if not args.skip_cpu:
        if not args.model.exists():
            raise SystemExit(f"model not found: {args.model} (pass --model)")
        bench_cpu(load_model(args.model), args.seconds, args.cpu_precision)
    if torch.cuda.is_available() and not args.skip_cuda:
        if not args.compiled_only:
            bench_cuda(args.seconds, args.cuda_config)
        bench_cuda_compiled(args.seconds, args.cuda_config)
        if compile_batches:   # the runner's own float16 net: half weights, channels-last
            net = NNEvaluator(KataGoModel.from_config(args.cuda_config, seed=0), device="cuda", precision="float16",
                              channels_last=True, cache_size_power_of_two=None, cuda_graphs=False,
                              compile_net=False).runner.net
            bench_compiled(net, torch.device("cuda"), torch.float16, compile_batches, args.seconds, args.compile_mode)
    else:
        if not args.skip_cuda:
            print("\nCUDA not available: skipping the GPU benchmark")
        if compile_batches and not args.skip_cpu:
            net = NNEvaluator(load_model(args.model), device="cpu", channels_last=True, trace=False,
                              cache_size_power_of_two=None, compile_net=False).runner.net
            bench_compiled(net, torch.device("cpu"), torch.float32, compile_batches, args.seconds, args.compile_mode)


if __name__ == "__main__":
    main()
