#!/usr/bin/env bash
# Creates .venv (Python 3.11+), installs the CPU build of torch 2.13.0 and katacli (compiling its
# Cython core). Safe to run again: it only installs what changed.
# GPU users: before running this, install a CUDA build of torch 2.13.0 into .venv, e.g.
#   python3 -m venv .venv && .venv/bin/pip install torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  # The CPU wheel: from PyTorch's CPU index where reachable, else the plain registry pin.
  .venv/bin/pip install -q torch==2.13.0
fi
.venv/bin/pip install -q ".[test]"
