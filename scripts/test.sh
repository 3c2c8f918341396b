#!/usr/bin/env bash
# Sets up .venv (CPU torch 2.13.0, katacli installed non-editable with its Cython core) and runs the
# whole test suite against the installed package.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
# Lint first (pyflakes rules, configured in pyproject.toml): a stray name fails in seconds, not minutes.
.venv/bin/ruff check .
# Run from tests/ with the plain `pytest` launcher so the source tree is not on sys.path:
# the suite exercises the installed package, compiled extensions included.
cd tests
exec ../.venv/bin/pytest -q -p no:cacheprovider "$@"
