"""Telling a real speed difference from a busy machine, for `kata benchmark` and `kata genconfig`.

Every thread count searches the same positions, so the speeds of one count and of the baseline can be
compared position by position: on a quiet machine the ratios agree with each other (a count is
uniformly faster or slower); when other programs take the processor now and then, they scatter. Their
spread (interquartile range over median) says how far a figure can be trusted. A noisy count is
searched again, and the recommendation prefers fewer threads unless more are better by more than the
noise (see :func:`katacli.tuning.recommend.recommend`).
"""
from __future__ import annotations

import os
import statistics
from typing import Optional, Sequence

# A count whose per-position speed ratios to the baseline spread by more than this is measured again.
NOISY_SPREAD = 0.25
MAX_REMEASURES = 2
# Fewer positions than this give no quartiles; the full range is used instead.
MIN_POSITIONS_FOR_QUARTILES = 4
# The machine counts as busy before a run when the 1-minute load average is at least this share of its cores.
BUSY_LOAD_PER_CORE = 0.5


def relative_spread(speeds: Sequence[float], baseline_speeds: Sequence[float]) -> float:
    """How much the per-position speed ratios to the baseline scatter: (Q3 - Q1) / median, or the full
    range over the median for a few positions; 0 when there is nothing to compare."""
    ratios = [s / b for s, b in zip(speeds, baseline_speeds) if b > 0]
    if len(ratios) < 2:
        return 0.0
    middle = statistics.median(ratios)
    if middle <= 0:
        return 0.0
    if len(ratios) < MIN_POSITIONS_FOR_QUARTILES:
        return (max(ratios) - min(ratios)) / middle
    q1, _, q3 = statistics.quantiles(ratios, n=4)
    return (q3 - q1) / middle


def busy_machine_warning(load_average: Optional[float] = None, cores: Optional[int] = None) -> Optional[str]:
    """A warning when other programs already keep the processor busy (None when quiet or unknown)."""
    if load_average is None:
        try:
            load_average = os.getloadavg()[0]
        except (AttributeError, OSError):  # not reported on this system (Windows)
            return None
    cores = cores or os.cpu_count() or 1   # the load average is the whole machine's: all its cores
    if load_average < BUSY_LOAD_PER_CORE * cores:
        return None
    return (f"WARNING: this machine is busy (load average {load_average:.1f} on {cores} cores) before the benchmark "
            "starts: the figures will be low and noisy. Close other programs, or expect noisy figures to be "
            "measured twice.")
