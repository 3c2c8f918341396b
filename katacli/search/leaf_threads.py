"""How many helper threads a search runs to fill its leaves' network inputs (numLeafFeatureThreads).

The helpers themselves are the core's (katacli/_core/leaf_workers); this is the policy: what the key's
auto value means for a search, given its batch size, the cores the process may use and whether the
search runs alone or as one of many. Searches stepped together from one thread (a SearchGroup: the
analysis engine's workers, self-play's drivers) share the group's helper instead of having their own.
"""
from __future__ import annotations

from typing import Optional

from katacli._core.leaf_workers import LeafHelpers
from katacli.cpu_cores import usable_cpu_count
from katacli.config_keys.search_keys import AUTO_LEAF_FEATURE_THREADS, AUTO_LEAF_FEATURE_THREADS_MIN_LEAVES
from katacli.search.params import SearchParams

# Cores a process needs before its SearchGroups get a helper thread each (group_leaf_helpers).
GROUP_HELPER_MIN_CORES = 4
# A search alone with batches this big, on this many cores, gets a second helper: on an H100's 16-core
# Xeon host (2026-11-27, zero-cost search, 19x19, 6,400 visits, medians of two) one -> two helpers gave
# 256 leaves 15.3k -> 18.6k visits/s (ranges 14.7-16.0k, 16.8-20.4k), 64 leaves 14.1k -> 15.9k (ranges
# overlapping), 16 leaves nothing (13.3k / 13.2k); there the search thread is g170-b6c96's bottleneck.
SECOND_HELPER_MIN_LEAVES = 128
SECOND_HELPER_MIN_CORES = 8


def leaf_feature_threads(params: SearchParams, leaves_per_batch: int, solo: bool = True) -> int:
    """Helper threads a search runs to fill leaf inputs: numLeafFeatureThreads, its auto value resolved
    (one helper when batches hold several leaves, a second core is there and the search runs alone, not
    as one of many; two for batches of SECOND_HELPER_MIN_LEAVES+ on SECOND_HELPER_MIN_CORES+ cores),
    none for one-leaf batches."""
    wanted = params.num_leaf_feature_threads
    if leaves_per_batch <= 1:
        return 0
    if wanted != AUTO_LEAF_FEATURE_THREADS:
        return wanted
    if not solo or leaves_per_batch < AUTO_LEAF_FEATURE_THREADS_MIN_LEAVES:
        return 0
    cores = usable_cpu_count()
    if cores >= SECOND_HELPER_MIN_CORES and leaves_per_batch >= SECOND_HELPER_MIN_LEAVES:
        return 2
    return 1 if cores >= 2 else 0


def group_leaf_helpers() -> Optional[LeafHelpers]:
    """The helper a SearchGroup's searches share (one batch at a time is collected from the group's
    thread, so one helper keeps up with it), where the process has cores to spare; else None. Groups come
    several to a process (an analysis worker each, a few self-play drivers) beside the network's server
    threads: on 2 cores (a simulated GPU, 4 workers of 8 leaves) their helpers were 0-4% slower."""
    return LeafHelpers(1) if usable_cpu_count() >= GROUP_HELPER_MIN_CORES else None
