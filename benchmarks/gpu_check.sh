#!/usr/bin/env bash
# katacli's GPU check, run on a GPU machine from the project root (the device machines lent to
# development sessions: Python with a CUDA torch, no internet). Prepare here first:
#
#   bash ../shared/gpu/prepare.sh                       # the core as C, sgfmill, a copy of shared/
#   bash benchmarks/prepare_katago_cuda.sh KATAGO_SRC .gpu-katago   # optional: KataGo's CUDA build beside
#
# then on the GPU machine:  STEPS="build parity tests nn search" bash benchmarks/gpu_check.sh
# (device call: carry [".gpu-carry", ".gpu-katago"]). Steps, in the order they run: build parity nn search
# katago profile selfplay train analysis testgpuerror tests; "build" always runs. Each has its own time
# limit; the log is also written to $OUT/gpu-check.txt. What the steps took on an H100 (2026-11-27, the
# machine's start ~30 s not included; a second call on the still-warm machine skips the build): build 54 s,
# parity 110 s, nn 74 s, search 128 s, katago 74 s on 11-26 (its build runs in the background from the
# start, on the CPUs the search steps measure: leave it out of a call that times kata's search), profile
# 29 s with PROFILE_B18_THREADS=256 PROFILE_SKIP_PIPELINE=1, selfplay 105 s with SELFPLAY_GAMES=512
# SELFPLAY_SECONDS=15, train 130 s, analysis 40 s (now five runs, each recording its CUDA graphs first: perhaps 3 minutes, unmeasured), testgpuerror 8 s, tests 48 s. The 15 minutes a session
# gets held, on 11-27, three calls back to back (the machine kept warm between them):
#   STEPS="build search profile analysis" PROFILE_B18_THREADS=256 PROFILE_SKIP_PIPELINE=1   (252 s)
#   STEPS="build selfplay tests train" SELFPLAY_GAMES=512 SELFPLAY_SECONDS=15                (294 s)
#   STEPS="build parity nn testgpuerror"                                                     (205 s)
# A third run the same day (three calls, 343 + 221 + 101 s): STEPS="build analysis nn search train" with
# ANALYSIS_SHORT=1 SEARCH_SHORT=1 TRAIN_ARGS="--only b18c384nbt:bf16 --default-compile"; then, with the
# network compiled (cudaUseTorchCompile), STEPS="build nn search analysis tests" NN_ARGS=--compiled-only
# NN_COMPILE_BATCHES= SEARCH_B18_ONLY=1 SEARCH_B18_THREADS=128,256,512 ANALYSIS_SHORT=1
# CUDA_TESTS=tests/test_nn_device.py; then STEPS="build train" on the still-warm machine. For the next
# session: STEPS="build katago search" (KataGo's CUDA build beside g170's search in one call: is the 0.85x
# real, does pipelining at 256 threads close it? BENCH="kata benchmark -v 12800 -n 3" makes each count's
# run ~2 s instead of ~0.5), the analysis step in full (settings of more leaves a
# query, e.g. ANALYSIS_SETTINGS=64x1,64x4,16x8: 64 x 4 reached about 80% of a lone 256-leaf search on
# a simulated GPU, 64 x 1 about half; bench_analysis.py's docstring says why), NN_ARGS="--compiled-only --compile-mode
# max-autotune-no-cudagraphs" (does inductor's own kernel search beat the default compile's 16,341?), and the selfplay step with the compiled net.
# Since then (2026-11-27, sessions 14-15, all CPU-side and unmeasured on a GPU): the shared ladder table, the
# node layout and the vectorized policy softmax (the search thread's postprocessing of every batch in a
# pipelined search, 1.9 -> 1.0 us a row): the katago step first. Session 19 (11-28): the shipped self-play
# configs search a graph now (useGraphSearch = true, as KataGo's): the selfplay step's batch and rows/s
# figures above were made without it, so rerun it (on the CPU graph search was 1.1x faster, 9x9 g170).
case "${1:-}" in -h|--help) sed -n '2,/^[^#]/p' "$0" | sed -n 's/^# \{0,1\}//p'; exit 0;; esac
# A GPU machine only: elsewhere it would rebuild the core in place and run its CPU fallbacks for minutes.
if ! command -v nvidia-smi > /dev/null || ! nvidia-smi -L > /dev/null 2>&1; then
  echo "error: no NVIDIA GPU here (nvidia-smi finds none): run this on a GPU machine" >&2; exit 1
fi
exec > >(tee "${OUT:-/tmp}/gpu-check.txt") 2>&1
export PYTHONUNBUFFERED=1 PYTHONWARNINGS=ignore
ROOT="$(pwd)"; C="$ROOT/.gpu-carry"; S="$C/shared"
STEPS=" ${STEPS:-build parity nn search katago selfplay train analysis testgpuerror tests profile} "
want() { [[ "$STEPS" == *" $1 "* ]]; }
step() { echo; echo "=== $(date +%T) $*"; }
step machine; nvidia-smi -L; python3 --version; echo "cores $(nproc)"; grep -m1 "model name" /proc/cpuinfo
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$C"/whl/*.whl
[ -e ../shared ] || cp -r "$S" ../shared          # where the tests look for it
KATAGO_DIR="$ROOT/.gpu-katago/katago"
if want katago && [ -d "$KATAGO_DIR" ]; then      # KataGo builds on the CPUs while kata's first steps use the GPU
  (bash benchmarks/build_katago_cuda.sh "$KATAGO_DIR" > /tmp/katago-build.log 2>&1; echo "exit $?" >> /tmp/katago-build.log) &
  KATAGO_BUILD=$!
fi
# A warm machine keeps the last call's build outputs: build again only when the generated C changed.
STAMP="$(cat "$C"/csrc/*.c | md5sum | cut -c1-32)"
if [ "$(cat /tmp/gpu-build-stamp 2>/dev/null)" != "$STAMP" ] || ! ls katacli/_core/board*.so > /dev/null 2>&1; then
  cp "$C"/csrc/*.c katacli/_core/ && touch katacli/_core/*.c
  step build; python3 setup.py -q build_ext --inplace -j "$(nproc)" > /tmp/build.log 2>&1 || { tail -30 /tmp/build.log; exit 1; }
  echo "$STAMP" > /tmp/gpu-build-stamp
else
  step "build (kept from the last call on this machine)"
fi
export PYTHONPATH="$ROOT:/tmp/site"
mkdir -p /tmp/bin && printf '#!/bin/sh\nexec python3 -m katacli.cli "$@"\n' > /tmp/bin/kata && chmod +x /tmp/bin/kata
export PATH="/tmp/bin:$PATH"
kata version; python3 -c "import torch; print('torch', torch.__version__, torch.cuda.get_device_name())"
G170="$S/models/g170-b6c96-s175395328-d26788732.bin.gz"
python3 -c "from katacli.nn.configs import random_description as r; from katacli.nn.export import write_model_file as w; w(r('b18c384nbt', seed=1), '/tmp/b18.bin.gz')"
if want parity; then
  step "parity, useFP16=false (float32: KataGo's float32 tolerances apply)"
  timeout 90 python3 "$S/gpu/parity.py" --kata kata --override useFP16=false
  step "parity, default settings (useFP16=auto: FP16 on this GPU)"
  timeout 90 python3 "$S/gpu/parity.py" --kata kata ${PARITY_LIMIT:+--limit $PARITY_LIMIT}
fi
# The nn step also times torch.compile of the float16 net at NN_COMPILE_BATCHES (default 256; empty: not),
# the lever left for the network-throughput goal; its compile takes a minute or two (not yet run on a GPU).
# NN_ARGS="--compiled-only": just the runner with and without cudaUseTorchCompile.
if want nn; then step "network throughput"; timeout 240 python3 benchmarks/bench_nn.py --skip-cpu --seconds 1 \
  --compile-batches "${NN_COMPILE_BATCHES-256}" ${NN_ARGS:-}; fi
# kata benchmark on a GPU also searches its best count with searchPipelining the other way and with one more
# leaf helper (katacli.tuning.setting_checks): the "... at numSearchThreads = N" lines below answer both
# questions per net (g170-b6c96: does pipelining or a third helper close the gap to KataGo?).
BENCH="${BENCH:-kata benchmark -v 3200 -n 3}"
if want search; then
  step "search b18c384nbt (random weights)"; timeout 100 $BENCH -model /tmp/b18.bin.gz -t ${SEARCH_B18_THREADS:-64,128,256,512} 2>&1 | grep -E "runs on|numSearchThreads = *[0-9]+:|Peak|at numSearchThreads =|Recommended:|keep"
  [ -n "${SEARCH_B18_ONLY:-}" ] ||   # SEARCH_B18_ONLY=1: the b18c384nbt run above, nothing more
  { step "search g170-b6c96"; timeout 80 $BENCH -model "$G170" -t 16,64,128,256 2>&1 | grep -E "runs on|numSearchThreads = *[0-9]+:|Peak|at numSearchThreads =|Recommended:|keep"; }
  if [ -z "${SEARCH_B18_ONLY:-}" ]; then
  # Two batches in flight (searchPipelining, katacli.search.pipeline): on an H100 on 2026-11-26 (a worker
  # thread evaluating one lane) it lost below 128 leaves and tied above; since then a CUDA net's batches
  # are launched from the search thread itself. The same settings side by side say whether that pays.
  step "search, pipelined (searchPipelining=true)"
  for spec in "/tmp/b18.bin.gz:128,256,512" "$G170:64,128,256"; do
    timeout 80 $BENCH -model "${spec%%:*}" -t "${spec##*:}" -override-config searchPipelining=true 2>&1 | grep -E "numSearchThreads = *[0-9]+:"
  done
  if [ -z "${SEARCH_SHORT:-}" ]; then   # SEARCH_SHORT=1: the default and pipelined runs above only
  # The leaf helper thread (numLeafFeatureThreads, on by default since 2026-11-27): the runs above have it;
  # g170's search is CPU-bound, so the same counts without it say what it buys on this machine, and the
  # zero-cost search (no network) with 0, 1 and 2 helpers bounds every figure here.
  step "search g170-b6c96 without the leaf helper (numLeafFeatureThreads=0)"
  timeout 80 $BENCH -model "$G170" -t 16,64,128,256 -override-config numLeafFeatureThreads=0 2>&1 | grep -E "numSearchThreads = *[0-9]+:"
  step "zero-cost search (benchmarks/bench_search_overhead.py), 0 / 1 / 2 leaf helpers"
  timeout 90 python3 benchmarks/bench_search_overhead.py --sizes 19 --threads 16,64,256 --visits 6400 --repeat 2 \
    --leaf-threads 0,1,2 2>&1 | tail -10
  # On the H100's host two helpers beat one at 256 leaves (15.3k -> 18.6k) and the trend had not flattened:
  # do three or four take g170 past 20,000 (numLeafFeatureThreads' auto value stops at two)?
  # (on the positions kata benchmark searches: a real game's, where leaves cost more in pass-alive areas and
  # less in ladders than in the random game's)
  step "zero-cost search, 2 / 3 / 4 leaf helpers at 256 and 512 leaves, the benchmark's positions"
  timeout 90 python3 benchmarks/bench_search_overhead.py --sizes 19 --threads 256,512 --visits 6400 --repeat 2 \
    --positions 10 --game benchmark --leaf-threads 2,3,4 2>&1 | tail -7
  step "search g170-b6c96 with 3 and 4 leaf helpers"
  for helpers in 3 4; do timeout 60 $BENCH -model "$G170" -t 256,512 -override-config numLeafFeatureThreads=$helpers \
    2>&1 | grep -E "numSearchThreads = *[0-9]+:"; done
  fi
  fi
fi
if want katago && [ -n "${KATAGO_BUILD:-}" ]; then
  step "KataGo CUDA build"; wait "$KATAGO_BUILD"; tail -3 /tmp/katago-build.log
  if [ -x "$KATAGO_DIR/cpp/build-cuda/katago" ]; then
    step "side by side with KataGo's CUDA backend"
    for spec in "$G170:16,64,128" "/tmp/b18.bin.gz:64,128,256"; do
      timeout 120 python3 benchmarks/compare_katago_gpu.py --katago "$KATAGO_DIR/cpp/build-cuda/katago" \
        --model "${spec%%:*}" --threads "${spec##*:}" --visits 3200 2>&1 | tail -12
    done
  fi
fi
if want profile; then
  step "where a search's time goes, stage by stage (benchmarks/profile_search_stages.py)"
  timeout 90 python3 benchmarks/profile_search_stages.py --model "$G170" --threads ${PROFILE_G170_THREADS:-16,64,128} --visits 3200
  timeout 90 python3 benchmarks/profile_search_stages.py --model /tmp/b18.bin.gz --threads ${PROFILE_B18_THREADS:-128,256} --visits 3200
  [ -n "${PROFILE_SKIP_PIPELINE:-}" ] ||
  # Pipelined, the batch launched from the search thread against a worker thread evaluating it.
  timeout 120 python3 benchmarks/profile_search_stages.py --model "$G170" --threads 64,128 --visits 3200 \
    --pipeline launch,worker 2>&1 | grep -E "numSearchThreads|device call|descents"
fi
if want selfplay; then
  step "self-play 9x9, g170-b6c96, 100 visits, the GPU config"; mkdir -p /tmp/spm && cp "$G170" /tmp/spm/
  timeout 90 kata selfplay -config configs/selfplay_gpu_example.cfg -models-dir /tmp/spm -output-dir /tmp/sp -max-games-total 256 --quiet \
    -override-config "bSizes=9,bSizeRelProbs=1,maxVisits=100,cheapSearchVisits=20,reducedVisitsMin=20,maxAsymmetricRatio=1" 2>&1 | tail -6
  # Steady-state windows (bench_selfplay_gpu.py: 5 s warm-up, 20 s measured) of the shipped config and of 128
  # games a process: on an H100 (before search drivers) the short run above gave batches of 54 / 90 at
  # 576 / 378 moves/s. The last row: the shipped config with each game thread searching itself (no drivers).
  for games in ${SELFPLAY_GAMES:-512 1024}; do
    timeout 75 python3 benchmarks/bench_selfplay_gpu.py --mode cuda --cuda-runs config --warmup 5 --seconds ${SELFPLAY_SECONDS:-20} \
      --override "numGameThreads=$games,nnMaxBatchSize=$games" 2>&1 | tail -4
  done
  timeout 75 python3 benchmarks/bench_selfplay_gpu.py --mode cuda --cuda-runs config --warmup 5 --seconds ${SELFPLAY_SECONDS:-20} \
    --search-drivers 0 2>&1 | tail -2
fi
if want train; then
  # --compile adds a torch.compile row of the last case (b18c384nbt bf16): its compile takes a minute or two.
  # TRAIN_ARGS="--only b18c384nbt:bf16 --default-compile": just what `kata train` does by default there.
  step "training throughput"; timeout 240 python3 benchmarks/bench_train.py --cuda-only --seconds 3 ${TRAIN_ARGS:---compile}
fi
if want analysis; then
  step "analysis engine: 64 concurrent 100-visit queries, b18c384nbt (random weights)"
  timeout 120 python3 benchmarks/bench_analysis.py --model /tmp/b18.bin.gz --moves 192 --visits 100 --settings ${ANALYSIS_SETTINGS:-64x1,32x2} --compare-search 3200 2>&1 | grep -E "recorded|device|search threads| x |lone search"
  if [ -z "${ANALYSIS_SHORT:-}" ]; then   # ANALYSIS_SHORT=1: the run above only
  # Each analysis worker's searches share one leaf helper thread (4+ cores); the same 64x1 without it.
  timeout 90 python3 benchmarks/bench_analysis.py --model /tmp/b18.bin.gz --moves 192 --visits 100 --settings 64x1 \
    --leaf-threads 0 2>&1 | grep helpers
  # "net busy" low with the workers waiting: is the server thread, back from the GPU, waiting for the GIL?
  timeout 90 python3 benchmarks/bench_analysis.py --model /tmp/b18.bin.gz --moves 192 --visits 100 --settings 64x1 \
    --switch-interval-ms 0.5 2>&1 | grep -E "interval| x "
  # Two network server threads (numNNServerThreadsPerModel = 2), one device lane each: one's host work
  # (joining the workers' batches, postprocessing) beside the other's GPU call.
  timeout 90 python3 benchmarks/bench_analysis.py --model /tmp/b18.bin.gz --moves 192 --visits 100 --settings 64x1 \
    --server-threads 2 2>&1 | grep " x "
  # Two workers of 32 searches instead of four of 16 (fewer threads taking turns at the GIL).
  timeout 90 python3 benchmarks/bench_analysis.py --model /tmp/b18.bin.gz --moves 192 --visits 100 --settings 64x1 \
    --searches-per-driver 32 2>&1 | grep " x "
  fi
fi
if want testgpuerror; then step "kata testgpuerror, g170-b6c96"; timeout 60 kata testgpuerror -model "$G170" -quick 2>&1 | tail -25; fi
if want tests; then step "tests marked cuda"; timeout 240 python3 -m pytest -q -p no:cacheprovider -m cuda ${CUDA_TESTS:-tests} 2>&1 | tail -15; fi
step done
