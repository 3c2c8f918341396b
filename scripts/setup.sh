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
  # The CPU build of torch: a wheel already provided locally (pip's find-links) if there is one,
  # otherwise PyTorch's CPU index (PyPI's Linux wheel would pull several GB of CUDA libraries).
  if .venv/bin/pip install -q --no-index --no-deps torch==2.13.0 2>/dev/null; then
    .venv/bin/pip install -q torch==2.13.0  # its dependencies, from the registry
  else
    .venv/bin/pip install -q torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
      --extra-index-url https://pypi.org/simple
  fi
fi
.venv/bin/pip install -q ".[test]"
