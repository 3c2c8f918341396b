"""Which katacli the benchmark scripts run: the installed one, or else this checkout (built in place).

``KATA_ENV`` is the environment for the ``kata`` processes a script starts: unchanged when katacli is
installed, with the checkout first on PYTHONPATH when it is not (a checkout without an in-place build
has no compiled core, so an installed katacli must not be shadowed by it). Importing this module also
makes ``import katacli`` work in the script itself. ``cpu_model()`` names the processor, printed beside
every figure (hosts differ: the same comparison reads differently on Intel and AMD).
"""
from __future__ import annotations

import importlib.util
import os
import platform
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

if importlib.util.find_spec("katacli") is not None:
    KATA_ENV = dict(os.environ)
else:
    sys.path.insert(0, str(REPO))
    KATA_ENV = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")])))


# The kata command line the scripts start: -P keeps a checkout in the current directory (whose core is
# not built in place) from shadowing the installed katacli; PYTHONPATH (KATA_ENV) still applies.
KATA_COMMAND = (sys.executable, "-P", "-m", "katacli.cli")


def cpu_model() -> str:
    """The processor's model name (Linux /proc/cpuinfo), else what the platform module knows."""
    try:
        with open("/proc/cpuinfo") as cpuinfo:
            for line in cpuinfo:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def require_katago(path: str) -> str:
    """``path`` if it names a program that can run, else one ``error:`` line and exit status 2 (before any
    timing: a wrong path found after kata's runs wasted them)."""
    import shutil

    found = shutil.which(path) if os.sep not in path else (path if os.access(path, os.X_OK) else None)
    if found is None or os.path.isdir(found):
        sys.exit(f"error: --katago {path}: not an executable program (build one with benchmarks/build_katago_eigen.sh)")
    return path
