"""Suite-wide set-up.

Child processes (`python -m katacli.cli ...`, torchrun, the examples) must import the same
katacli as the test process. Python puts the working directory first on sys.path for `-m`
and `-c`, so a child started in a source checkout would pick up the uncompiled source tree
instead of the installed package; PYTHONSAFEPATH turns that off, and PYTHONPATH points at
wherever this process found katacli (site-packages, or the checkout in an in-place build).
"""
import os
from pathlib import Path

import katacli

_PACKAGE_ROOT = str(Path(katacli.__file__).resolve().parents[1])
os.environ["PYTHONSAFEPATH"] = "1"
os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_ROOT, os.environ.get("PYTHONPATH", "")) if p)


def pytest_configure(config):
    # Every marker is part of the default run (CI runs everything). They select subsets: the fast
    # subset while working is `bash scripts/test.sh -m "not slow and not subprocess"` (see README).
    # slow: the 100,000-line fuzz runs (about half a minute), run on their own before each release
    # with `bash scripts/test.sh -m slow`.
    config.addinivalue_line("markers", "slow: long release checks (the 100,000-line fuzz runs); select with -m slow")
    config.addinivalue_line("markers", "subprocess: starts kata (or torchrun, an example script) as a separate "
                                       "process; the slowest part of the suite")
    config.addinivalue_line("markers", "needs_shared: reads networks or KataGo reference outputs from the shared/ "
                                       "folder beside the checkout (skipped, naming the file, when it is absent)")
    config.addinivalue_line("markers", "cuda: needs a CUDA GPU (skipped without one; the GPU check in "
                                       "../shared/gpu runs them on a lent GPU machine)")


def pytest_collection_modifyitems(config, items):
    import pytest
    import torch

    if torch.cuda.is_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (torch.cuda.is_available() is false)")
    for item in items:
        if "cuda" in item.keywords:
            item.add_marker(skip)
