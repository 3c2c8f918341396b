#!/usr/bin/env python3
"""Search speed on the GPU, side by side: `katago benchmark` (KataGo's CUDA build) and `kata benchmark`.

    python3 benchmarks/compare_katago_gpu.py --katago /path/to/katago --model NET.bin.gz \\
        [--threads 16,64,128] [--visits 3200] [--positions 5] [--config configs/gtp_example.cfg]
        [--kata-override-config "cudaUseGraphs=false"]

Both benchmarks search the same network with the same numSearchThreads values and visits per search,
one after the other in this call, on their bundled 19x19 game (-boardsize picks another size); the
visits/s of each thread count is read from their output (KataGo's result line, which kata prints
too). Printed: the GPU's name, where each engine says its network runs, then visits/s per thread
count for both and kata's ratio to KataGo. KataGo's CUDA build needs cuDNN on LD_LIBRARY_PATH (see
build_katago_cuda.sh). With --json the table is printed as JSON.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from compare_katago_contention import run, visits_per_second  # noqa: E402
from kata_env import KATA_COMMAND, REPO  # noqa: E402

# KataGo's CUDA backend names the device as it starts ("... Found GPU NVIDIA H100 80GB HBM3 memory ...").
KATAGO_GPU_LINE = re.compile(r"Found GPU (.+?) memory")
KATAGO_FP16_LINE = re.compile(r"useFP16 = (true|false)")
KATA_DEVICE_LINE = re.compile(r"The network runs on: (.+)")
# kata's second looks at its best count (katacli.tuning.setting_checks): another setting's speed, its verdict.
KATA_SECOND_LOOK_LINE = re.compile(r"^(?:\w+ at numSearchThreads = \d+:|Recommended:|Your config's|\w+ = \S+ is within).*$",
                                   re.MULTILINE)


def katago_device(output: str) -> str:
    gpu = KATAGO_GPU_LINE.search(output)
    fp16 = KATAGO_FP16_LINE.search(output)
    if gpu is None:
        return "unknown (no 'Found GPU' line: not a CUDA build?)"
    return gpu.group(1).strip() + (f", useFP16 = {fp16.group(1)}" if fp16 else "")


def kata_device(output: str) -> str:
    match = KATA_DEVICE_LINE.search(output)
    return match.group(1).strip() if match else "unknown"


def gpu_name() -> str:
    """The first GPU's name from nvidia-smi (or torch), for the table's title."""
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30)
        if done.returncode == 0 and done.stdout.strip():
            return done.stdout.strip().splitlines()[0]
    except (OSError, subprocess.TimeoutExpired):
        pass
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_name()
    except ImportError:
        pass
    return "no GPU found"


def side_by_side(kata: dict[int, float], katago: dict[int, float]) -> list[dict]:
    """One row per thread count either engine reported: both visits/s and kata's ratio (None where one is missing)."""
    rows = []
    for threads in sorted(set(kata) | set(katago)):
        mine, theirs = kata.get(threads), katago.get(threads)
        ratio = mine / theirs if mine is not None and theirs else None
        rows.append({"threads": threads, "kata": mine, "katago": theirs, "ratio": ratio})
    return rows


def format_table(rows: list[dict], gpu: str) -> str:
    def cell(value, width, fmt):
        return f"{'-':>{width}}" if value is None else f"{value:>{width}{fmt}}"

    lines = [f"GPU: {gpu}", f"{'threads':>8}{'kata v/s':>12}{'KataGo v/s':>13}{'kata/KataGo':>13}"]
    for row in rows:
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}x"
        lines.append(f"{row['threads']:>8}{cell(row['kata'], 12, '.1f')}{cell(row['katago'], 13, '.1f')}{ratio:>13}")
    return "\n".join(lines)


def commands(args) -> dict[str, list[str]]:
    common = ["-model", args.model, "-config", args.config, "-t", args.threads, "-v", str(args.visits),
              "-n", str(args.positions)]
    if args.boardsize:
        common += ["-boardsize", str(args.boardsize)]
    return {
        "katago": [args.katago, "benchmark", *common, "-override-config", "logToStderr=false"],
        "kata": [*KATA_COMMAND, "benchmark", *common,
                 *(["-override-config", args.kata_override_config] if args.kata_override_config else [])],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", default=os.environ.get("KATAGO_BINARY"),
                        help="KataGo binary built with the CUDA backend ($KATAGO_BINARY)")
    parser.add_argument("--model", required=True)
    parser.add_argument("--config", default=str(REPO / "configs" / "gtp_example.cfg"))
    parser.add_argument("--threads", default="16,64,128", help="numSearchThreads values, comma-separated")
    parser.add_argument("--visits", type=int, default=3200)
    parser.add_argument("--positions", type=int, default=5, help="positions searched per thread count")
    parser.add_argument("--boardsize", type=int, default=None)
    parser.add_argument("--kata-override-config", default=None, metavar="KEY=VALUE,...",
                        help="config overrides for kata only (e.g. cudaUseGraphs=false), not for KataGo")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if not args.katago:
        parser.error("give --katago (or set KATAGO_BINARY)")
    results, devices, second_looks = {}, {}, []
    try:
        for name, command in commands(args).items():
            output = run(command)
            results[name] = visits_per_second(output)
            devices[name] = katago_device(output) if name == "katago" else kata_device(output)
            if name == "kata":
                second_looks = KATA_SECOND_LOOK_LINE.findall(output)
            if not results[name]:
                raise RuntimeError(f"{name} printed no result lines; its output ends: {output.strip()[-300:]}")
            print(f"{name} ({devices[name]}): {results[name]}", file=sys.stderr, flush=True)
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    rows = side_by_side(results["kata"], results["katago"])
    gpu = gpu_name()
    if args.json:
        print(json.dumps({"gpu": gpu, "devices": devices, "visits": args.visits, "rows": rows,
                          "kata_second_looks": second_looks}, indent=1))
        return 0
    print(f"kata runs on: {devices['kata']}\nKataGo runs on: {devices['katago']}")
    print(format_table(rows, gpu))
    for line in second_looks:   # kata's own settings searched at its best count (on a GPU)
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
