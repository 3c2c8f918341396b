"""How many CPU cores this process may use: what thread counts are sized by (leaf helpers, postprocessing)."""
from __future__ import annotations

import os


def usable_cpu_count() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
