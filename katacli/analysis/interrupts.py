"""Ctrl-C in the analysis engine's main loop, taken only where it is safe to stop.

Python raises KeyboardInterrupt in the main thread between any two bytecodes. Raised while a query
is being queued, it can land between a lock's acquisition and the ``try`` that releases it, and the
engine then hangs on the next use of that lock while quitting. While :func:`deferred_interrupts` is
open (the main thread, with Python's own SIGINT handler in place), SIGINT only marks the request,
and raises KeyboardInterrupt where the loop allows it (:meth:`DeferredInterrupt.allowed`: while it
waits for the next line), or when the loop next reaches that point.
"""
from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class DeferredInterrupt:
    """Whether Ctrl-C was pressed, and where it may interrupt."""

    def __init__(self) -> None:
        self.requested = False
        self._allowed = False
        self._quitting = False

    def handle_signal(self, signum, frame) -> None:
        if self._quitting:   # a second Ctrl-C while the engine stops: end the process now, as Ctrl-C does
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
            return
        self.requested = True
        if self._allowed:
            raise KeyboardInterrupt

    def quitting(self) -> None:
        """The engine is stopping after a Ctrl-C (it may wait a few seconds for its threads): another
        Ctrl-C ends the process at once."""
        self._quitting = True

    @contextmanager
    def allowed(self) -> Iterator[None]:
        """A stretch (a blocking read) that Ctrl-C may interrupt; raises at once if it was pressed before."""
        if self.requested:
            raise KeyboardInterrupt
        self._allowed = True
        try:
            yield
        finally:
            self._allowed = False


@contextmanager
def deferred_interrupts() -> Iterator[DeferredInterrupt]:
    """SIGINT deferred to the allowed stretches while open. Elsewhere than in the main thread, or when
    SIGINT has a handler of its own (ignored, or an embedding program's), nothing is changed."""
    state = DeferredInterrupt()
    install = (threading.current_thread() is threading.main_thread()
               and signal.getsignal(signal.SIGINT) is signal.default_int_handler)
    previous = signal.signal(signal.SIGINT, state.handle_signal) if install else None
    try:
        yield state
    finally:
        if install:
            signal.signal(signal.SIGINT, previous)
