#!/usr/bin/env bash
# Self-play on a lent GPU machine (see ../shared/gpu/README.md): after `bash ../shared/gpu/prepare.sh` here,
# one device call "bash benchmarks/selfplay_gpu_check.sh" (carry .gpu-carry) builds the core, runs the
# self-play CUDA test and bench_selfplay_gpu.py: the GPU config, the baseline (the example config in one
# process), the GPU config with more processes. The log comes back as selfplay-gpu.txt (~6 minutes).
case "${1:-}" in -h|--help) sed -n '2,/^[^#]/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0;; esac
# A GPU machine only: elsewhere it would rebuild the core in place and run its CPU fallbacks for minutes.
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "error: no NVIDIA GPU here (nvidia-smi finds none): run this on a GPU machine" >&2; exit 1
fi
exec > >(tee "${OUT:-/tmp}/selfplay-gpu.txt") 2>&1
export PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
ROOT="$(pwd)"; C="$ROOT/.gpu-carry"; S="$C/shared"
step() { echo; echo "=== $(date +%T) $*"; }
step machine; nvidia-smi -L; echo "cores $(nproc)"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$C"/whl/*.whl
[ -e ../shared ] || cp -r "$S" ../shared          # where the tests and benchmarks look for it
cp "$C"/csrc/*.c katacli/_core/ && touch katacli/_core/*.c
step build; python3 setup.py -q build_ext --inplace -j "$(nproc)" > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
export PYTHONPATH="$ROOT:/tmp/site"
BENCH="python3 benchmarks/bench_selfplay_gpu.py --mode cuda --warmup 5 --seconds 20"
step "cuda test"; (cd tests && timeout 80 python3 -m pytest -q -p no:cacheprovider -m cuda test_selfplay_gpu.py 2>&1 | tail -4)
step "GPU config"; timeout 90 $BENCH --cuda-runs config
step "baseline"; timeout 100 $BENCH --cuda-runs baseline
step "GPU config, 14 processes"; timeout 90 $BENCH --cuda-runs config --override numSelfplayProcesses=14,numGameThreads=896
step done
