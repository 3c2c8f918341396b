"""Giving the C heap's free pages back to the system during and after searches (glibc; elsewhere a no-op).

A search keeps many small long-lived blocks (nodes, policy rows, NN cache entries) while the network
allocates and frees large temporaries (activations of 100-300 KB per call on 19x19) on the same heap:
glibc raises its mmap threshold to the size of any large block that is freed, so those temporaries come
from the heap too, and the holes they leave between long-lived blocks stay resident. A `kata gtp` on
19x19 (g170-b6c96, 10,000 visits) grew by ~50 MB resident for ~15 MB in use. glibc's malloc_trim gives
the free pages inside the heap back (madvise), in a few milliseconds: after it the same search held
~5-9 MB more than before it. A fixed mmap threshold would prevent the holes instead, but mapping and
zeroing every temporary made the search ~1.7x slower per CPU second.
"""
from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Optional

# At most one trim per this many seconds in the whole process (each costs milliseconds: it walks the
# heap's free chunks), so that many short searches (self-play) pay nothing noticeable.
TRIM_PERIOD_SECONDS = 10.0
# A search at least this long always trims when it ends (trim_heap_after_search): a trim's few ms are
# then under 1% of it, and what it left free would otherwise stay resident until the next search's
# periodic trim (a GTP engine between moves, the start of a pondering run).
ALWAYS_TRIM_AFTER_SECONDS = 1.0

_lock = threading.Lock()
_trim: Optional[Callable[[int], int]] = None
_looked_up = False
_last_trim = -TRIM_PERIOD_SECONDS


def _malloc_trim() -> Optional[Callable[[int], int]]:
    global _trim, _looked_up
    with _lock:
        if not _looked_up:
            _looked_up = True
            if sys.platform.startswith("linux"):
                import ctypes

                try:
                    _trim = ctypes.CDLL(None).malloc_trim   # the call releases the GIL
                    _trim.argtypes = (ctypes.c_size_t,)
                    _trim.restype = ctypes.c_int
                except (OSError, AttributeError):   # a C library without malloc_trim (musl)
                    _trim = None
        return _trim


def trim_heap() -> bool:
    """Return the heap's free pages to the system; False where the C library cannot."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


def maybe_trim_heap(force: bool = False) -> bool:
    """trim_heap() unless the process trimmed less than TRIM_PERIOD_SECONDS ago (or ``force``); whether
    it trimmed."""
    global _last_trim
    now = time.monotonic()
    if not force and now - _last_trim < TRIM_PERIOD_SECONDS:   # the usual answer, without the lock
        return False
    with _lock:
        if not force and now - _last_trim < TRIM_PERIOD_SECONDS:
            return False
        _last_trim = now
    return trim_heap()


def trim_heap_after_search(search_seconds: float) -> bool:
    """At the end of a search: a long one (ALWAYS_TRIM_AFTER_SECONDS) trims now, short ones (self-play's
    many) at most once per period; whether it trimmed."""
    return maybe_trim_heap(force=search_seconds >= ALWAYS_TRIM_AFTER_SECONDS)
