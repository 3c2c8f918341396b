#!/usr/bin/env bash
# The main job, end to end: install, self-check, then a short 9x9 match between two `kata gtp`
# engines (with the network you pass, else katacli's built-in default network) and an analysis of
# its first game by `kata analysis`.
#
#   bash scripts/demo.sh                      # katacli's default network (shipped in the package)
#   bash scripts/demo.sh path/to/net.bin.gz   # any KataGo network
#   bash scripts/demo.sh rollouts             # the rollout engine, no network
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
KATA=.venv/bin/kata
MODEL=${1:-}
OUT=${DEMO_DIR:-demo_output}
mkdir -p "$OUT"

echo "== kata runtests"
"$KATA" runtests

MODEL_LOWER=$(printf '%s' "$MODEL" | tr '[:upper:]' '[:lower:]')
if [ "$MODEL_LOWER" = rollouts ]; then  # random playouts are cheap: many more visits
  STRONG="$KATA gtp -model rollouts -override-config maxVisits=1000"
  WEAK="$KATA gtp -model rollouts -override-config maxVisits=50"
  ANALYSIS_MODEL=(-model rollouts)
else
  if [ -n "$MODEL" ]; then
    [ -f "$MODEL" ] || { echo "error: model file not found: $MODEL" >&2; exit 1; }
    MODEL_ARGS="-model $(printf %q "$MODEL")"   # one shell word, spaces and all (gtp_match.py splits it with shlex)
    ANALYSIS_MODEL=(-model "$(printf %q "$MODEL")")   # (analyze_sgf_blunders.py splits --engine with shlex too)
  else  # no -model: kata gtp and kata analysis use the default network
    MODEL_ARGS=""
    ANALYSIS_MODEL=()
  fi
  STRONG="$KATA gtp $MODEL_ARGS -override-config maxVisits=64"
  WEAK="$KATA gtp $MODEL_ARGS -override-config maxVisits=8"
fi

echo "== a 2-game 9x9 match: '$STRONG' against '$WEAK'"
.venv/bin/python examples/gtp_match.py --black "$STRONG" --white "$WEAK" --games 2 --size 9 \
  --rules chinese --sgf-dir "$OUT"

FIRST_GAME=$(ls "$OUT"/*.sgf | head -n 1)
echo "== the biggest mistakes in $FIRST_GAME, by kata analysis"
.venv/bin/python examples/analyze_sgf_blunders.py "$FIRST_GAME" --engine "$KATA analysis ${ANALYSIS_MODEL[*]}" \
  --visits 100 --top 5
