#!/usr/bin/env bash
# Sets up .venv (CPU torch 2.13.0, katacli installed non-editable with its Cython core) and runs the
# whole test suite against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/pip install -q torch==2.13.0
.venv/bin/pip install -q ".[test]"
# Run from tests/ with the plain `pytest` launcher so the source tree is not on sys.path:
# the suite exercises the installed package, compiled extensions included.
cd tests
exec ../.venv/bin/pytest -q -p no:cacheprovider "$@"
