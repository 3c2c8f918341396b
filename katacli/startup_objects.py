"""Keeping Python's cyclic garbage collector off the objects start-up made.

A loaded engine holds ~170,000 objects the collector tracks (torch's modules, functions and types, the
network's), and every full collection walks them all: 70-100 ms with the GIL held (AMD EPYC, 2026-11-27),
a pause in the middle of a search whenever the objects it keeps (NN cache entries, results) add up to a
quarter of them. They live as long as the process, so once a network is loaded they are collected once
and then frozen (``gc.freeze``): later full collections walk only what came after (~1 ms in the same
search).
"""
from __future__ import annotations

import gc
import threading

_lock = threading.Lock()


def freeze_startup_objects() -> int:
    """Collect what start-up left as garbage, then exempt every object alive now from later collections;
    returns how many objects are frozen in all. Call once the network is loaded (again after another
    load: each call freezes what came since)."""
    with _lock:
        gc.collect()
        gc.freeze()
        return gc.get_freeze_count()
