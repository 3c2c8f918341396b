#!/usr/bin/env bash
# Creates .venv (Python 3.11+), installs the CPU build of torch 2.13.0 and katacli (compiling its
# Cython core). Safe to run again: it only installs what changed.
# GPU users: before running this, install a CUDA build of torch 2.13.0 into .venv (see README);
# an existing torch is kept.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
  # The CPU build of torch: a wheel already provided locally (pip's find-links) if there is one;
  # otherwise from KATACLI_TORCH_INDEX_URL (PyTorch's own CPU wheel index, see README), otherwise
  # from pip's configured index (on Linux PyPI's torch brings several GB of CUDA libraries).
  if .venv/bin/pip install -q --no-index --no-deps torch==2.13.0 2>/dev/null; then
    .venv/bin/pip install -q torch==2.13.0  # its dependencies, from the registry
  elif [ -n "${KATACLI_TORCH_INDEX_URL:-}" ]; then
    # Its +cpu wheel sorts above PyPI's plain 2.13.0, so pip takes it; the dependencies come from PyPI.
    .venv/bin/pip install -q torch==2.13.0 --extra-index-url "$KATACLI_TORCH_INDEX_URL"
  else
    echo "note: installing torch 2.13.0 from pip's configured index; set KATACLI_TORCH_INDEX_URL to PyTorch's" \
         "CPU wheel index to avoid the CUDA build" >&2
    .venv/bin/pip install -q torch==2.13.0
  fi
fi
# setuptools copies Python files into build/lib* without removing ones deleted or renamed since, and
# the wheel would ship those stale copies: drop them (the compiled core there is kept, and reused).
rm -rf build/lib.*/katacli
.venv/bin/pip install -q ".[test]"
