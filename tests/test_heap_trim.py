"""katacli.heap_trim: the C heap's free pages go back to the system, at most once per period."""
import sys

import pytest

from katacli import heap_trim


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc_trim")
def test_trim_heap_calls_the_c_library():
    assert heap_trim.trim_heap()


def test_maybe_trim_heap_trims_at_most_once_per_period(monkeypatch):
    calls = []
    monkeypatch.setattr(heap_trim, "trim_heap", lambda: calls.append(1) or True)
    monkeypatch.setattr(heap_trim, "_last_trim", -heap_trim.TRIM_PERIOD_SECONDS)
    clock = [1000.0]
    monkeypatch.setattr(heap_trim.time, "monotonic", lambda: clock[0])
    assert heap_trim.maybe_trim_heap()
    clock[0] += heap_trim.TRIM_PERIOD_SECONDS / 2
    assert not heap_trim.maybe_trim_heap()
    clock[0] += heap_trim.TRIM_PERIOD_SECONDS
    assert heap_trim.maybe_trim_heap()
    assert len(calls) == 2


def test_a_long_search_always_trims_when_it_ends(monkeypatch):
    calls, clock = [], [100.0]
    monkeypatch.setattr(heap_trim, "trim_heap", lambda: calls.append(1) or True)
    monkeypatch.setattr(heap_trim.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(heap_trim, "_last_trim", clock[0])   # a periodic trim just happened
    assert not heap_trim.trim_heap_after_search(heap_trim.ALWAYS_TRIM_AFTER_SECONDS / 10)   # self-play's
    assert heap_trim.trim_heap_after_search(heap_trim.ALWAYS_TRIM_AFTER_SECONDS)
    assert len(calls) == 1
