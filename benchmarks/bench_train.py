#!/usr/bin/env python3
"""Training speed: samples per second of full training steps (batch assembly excluded and included).

Each case builds a real :class:`~katacli.train.trainer.Trainer` on synthetic rows and times
``train_step`` (forward, KataGo loss, backward, clipping, SGD + lookahead, SWA bookkeeping)
and, separately, the data stream (row gathering, unpacking, symmetries, history dropout).

CPU: b2c16 and b6c96 on 9x9, b6c96 on 19x19. CUDA (when available): b6c96 and b18c384nbt
on 19x19, float32 and bf16 autocast (and torch.compile with --compile). Each row says where the
net really ran (its parameters' device after set-up) and on which processor or GPU.

    python3 benchmarks/bench_train.py [--seconds 5] [--threads N] [--cuda-only] [--compile]
                                      [--only b18c384nbt:bf16] [--default-compile]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import cpu_model  # noqa: E402  (also makes katacli importable from a checkout)

from katacli.config_keys.spec import Enabled  # noqa: E402
from katacli.train.distributed import DistributedContext, setup_distributed
from katacli.train.settings import TrainSettings
from katacli.train.synthetic import write_synthetic_files
from katacli.train.trainer import Trainer

WARMUP_STEPS = 3
DATA_ROWS = 512


@dataclass
class Case:
    model_kind: str
    board: int
    batch: int
    device: str = "cpu"
    precision: str = "off"


CPU_CASES = (Case("b2c16", 9, 64), Case("b6c96", 9, 64), Case("b6c96", 19, 32))
CUDA_CASES = (
    Case("b6c96", 19, 256, "cuda", "off"),
    Case("b6c96", 19, 256, "cuda", "bf16"),
    Case("b18c384nbt", 19, 256, "cuda", "off"),
    Case("b18c384nbt", 19, 256, "cuda", "bf16"),
)


def make_trainer(case: Case, data_dir: str, out_dir: str, compile_net: Enabled) -> Trainer:
    settings = TrainSettings(
        data_dir=data_dir, output_dir=out_dir, model_kind=case.model_kind, batch_size=case.batch, seed=1,
        lr_warmup_samples=0, samples_per_epoch=10**12, window_min_rows=10**9, device=case.device,
        mixed_precision=case.precision, compile=compile_net,
    )
    # The trainer trains on its context's device (the CPU by default), not on settings.device.
    ctx = setup_distributed(case.device) if case.device != "cpu" else DistributedContext()
    trainer = Trainer(settings, ctx, log=lambda _m: None)
    trainer._setup()
    return trainer


def ran_on(trainer: Trainer) -> str:
    """Where the net's parameters are: the device the row was measured on, with its model name."""
    device = next(trainer.net.parameters()).device
    if device.type == "cuda":
        return f"cuda ({torch.cuda.get_device_name(device)})"
    return f"{device.type} ({cpu_model()}, {torch.get_num_threads()} threads)"


def time_steps(trainer: Trainer, seconds: float) -> tuple[float, float]:
    """(training samples/s without batch assembly, data-stream samples/s)."""
    batch = trainer.stream.next_batch(0)
    if trainer.ctx.device.type == "cuda" and hasattr(batch, "staged_for_gpu"):
        batch = batch.staged_for_gpu()  # as the training loop's prefetch thread hands it over
    for _ in range(WARMUP_STEPS):
        trainer.train_step(batch)
    sync = torch.cuda.synchronize if trainer.ctx.device.type == "cuda" else (lambda: None)
    sync()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        trainer.train_step(batch)
        steps += 1
    sync()
    train_rate = steps * len(batch) / (time.perf_counter() - start)
    batches, start = 0, time.perf_counter()
    while time.perf_counter() - start < min(seconds, 2.0):
        trainer.stream.next_batch(0)
        batches += 1
    data_rate = batches * len(batch) / (time.perf_counter() - start)
    return train_rate, data_rate


def _selected(case: Case, only: str) -> bool:
    """Whether ``--only NET[:PRECISION]`` keeps this case (an empty filter keeps all)."""
    if not only:
        return True
    net, _, precision = only.partition(":")
    return case.model_kind == net and (not precision or case.precision == precision)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=5.0, help="timing per case")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (default: torch's choice)")
    parser.add_argument("--cuda-only", action="store_true")
    parser.add_argument("--compile", action="store_true", help="also time torch.compile on CUDA")
    parser.add_argument("--only", default="", metavar="NET[:PRECISION]",
                        help="time only the CUDA cases of this net (and precision), e.g. b18c384nbt:bf16")
    parser.add_argument("--default-compile", action="store_true",
                        help="leave `compile` at the training config's default (auto: compiled on CUDA) in every "
                             "case instead of off; the rows then time what `kata train` does by default")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.cuda_only and not torch.cuda.is_available():
        sys.exit("error: --cuda-only: CUDA is not available here")
    cases = [] if args.cuda_only else list(CPU_CASES)
    if torch.cuda.is_available():
        cases += [case for case in CUDA_CASES if _selected(case, args.only)]
        if args.compile:
            cases += [Case("b18c384nbt", 19, 256, "cuda", "bf16")]
    print(f"torch {torch.__version__}, {torch.get_num_threads()} CPU threads"
          + (f", {torch.cuda.get_device_name()}" if torch.cuda.is_available() else ", no CUDA"))
    print(f"{'net':<12}{'board':>6}{'batch':>6}  {'device':<7}{'precision':<17}{'train samples/s':>16}"
          f"{'data samples/s':>16}  ran on")
    data_dirs: dict[int, str] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for index, case in enumerate(cases):
            if case.board not in data_dirs:
                data_dirs[case.board] = f"{tmp}/data{case.board}"
                write_synthetic_files(data_dirs[case.board], DATA_ROWS, case.board, seed=case.board)
            compile_last = args.compile and index == len(cases) - 1 and case.device == "cuda"
            compile_net = (Enabled.TRUE if compile_last else Enabled.AUTO if args.default_compile
                           else Enabled.FALSE)
            trainer = make_trainer(case, data_dirs[case.board], f"{tmp}/run{index}", compile_net)
            train_rate, data_rate = time_steps(trainer, args.seconds)
            label = case.precision + {Enabled.TRUE: "+compile", Enabled.AUTO: "+compile=auto"}.get(compile_net, "")
            print(f"{case.model_kind:<12}{case.board:>6}{case.batch:>6}  {case.device:<7}{label:<17}"
                  f"{train_rate:>16.0f}{data_rate:>16.0f}  {ran_on(trainer)}", flush=True)


if __name__ == "__main__":
    main()
