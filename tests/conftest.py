"""Suite-wide set-up.

Child processes (`python -m katacli.cli ...`, torchrun, the examples) must import the same
katacli as the test process. Python puts the working directory first on sys.path for `-m`
and `-c`, so a child started in a source checkout would pick up the uncompiled source tree
instead of the installed package; PYTHONSAFEPATH turns that off, and PYTHONPATH points at
wherever this process found katacli (site-packages, or the checkout in an in-place build).
"""
import os
from pathlib import Path

import pytest

import katacli

_PACKAGE_ROOT = str(Path(katacli.__file__).resolve().parents[1])
os.environ["PYTHONSAFEPATH"] = "1"
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")) if p)


# Tests marked `slow` (the 100,000-line release fuzz runs) are left out unless asked for with
# `-m slow` (`bash scripts/test.sh -m slow`): run them before each release.
SLOW_HINT = "slow release test: run with `bash scripts/test.sh -m slow` (README: Tests)"


def pytest_configure(config):
    config.addinivalue_line("markers", f"slow: long runs left out by default; {SLOW_HINT}")


def pytest_collection_modifyitems(config, items):
    if "slow" in (config.getoption("markexpr") or ""):
        return
    skip_slow = pytest.mark.skip(reason=SLOW_HINT)
    for item in items:
        if "slow" in item.keywords:
            item.add_marker(skip_slow)
