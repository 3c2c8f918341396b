"""The worker pool behind self-play's and match's worker processes: what counts as a worker failing."""
from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from katacli.worker_processes import WorkerPool

pytestmark = pytest.mark.subprocess   # starts processes


def _sleep_with_default_handlers(seconds: float) -> None:   # a worker still starting: no stop handler yet
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    time.sleep(seconds)


def _exit_with(status: int) -> None:
    sys.exit(status)


def _fail_when_stopped(ready, status: int) -> None:   # a started worker whose stop handling fails
    signal.signal(signal.SIGTERM, lambda *_: os._exit(status))
    ready.set()
    time.sleep(30)


def _killed_by_sigterm() -> None:   # a SIGTERM nobody in the run sent
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGTERM)
    time.sleep(30)


def _run(target, args, stop: bool, ready=None, pool=None) -> WorkerPool:
    """``ready``: an event the worker sets once started; the stop waits for it."""
    pool = pool or WorkerPool("test-worker")

    def tick() -> None:
        if stop and all(p.is_alive() for p in pool.procs) and (ready is None or ready.is_set()):
            pool.stop_workers()

    pool.run(target, [(0, args)], absorb=lambda *event: None, on_signal=lambda *a: None,
             on_worker_died=lambda: None, on_tick=tick, handle_signals=False)
    return pool


def test_a_worker_the_stop_kills_while_it_starts_has_not_failed():
    """Ctrl-C right after `kata selfplay` started its workers: one still importing dies by the stop's SIGTERM
    (its handler comes with its first line); it had no games, so the run stops cleanly, not with an error."""
    pool = _run(_sleep_with_default_handlers, (30,), stop=True)
    assert pool.procs[0].exitcode == -signal.SIGTERM
    assert pool.failed() == []


def test_a_worker_killed_by_sigterm_without_a_stop_or_exiting_with_an_error_has_failed():
    pool = _run(_killed_by_sigterm, (), stop=False)
    assert [p.exitcode for p in pool.failed()] == [-signal.SIGTERM]
    pool = _run(_exit_with, (3,), stop=False)
    assert [p.exitcode for p in pool.failed()] == [3]
    pool = WorkerPool("test-worker")
    ready = pool.ctx.Event()
    pool = _run(_fail_when_stopped, (ready, 3), stop=True, ready=ready, pool=pool)   # an error stays one
    assert [p.exitcode for p in pool.failed()] == [3]
