"""Worker processes that share one run: self-play and `kata match` on a CPU.

One Python process runs Python on one core at a time (the GIL), and self-play and match games
have a lot of Python per move, so on N cores N processes get through far more games than any
number of threads in one. This module holds what both runs need around their own work:

* worker side: :func:`die_with_parent` (a worker ends when the parent is killed, even by SIGKILL,
  so only whole files are left, as in one process) and :func:`open_worker_log`;
* parent side: :class:`WorkerPool`, which starts the workers with the parent's katacli, passes a
  stop on as SIGTERM, drains their event queue and restores the parent's signal handlers.
Workers ignore SIGINT themselves (the terminal sends it to the whole process group): the
parent's SIGTERM is the only stop they obey.
"""
from __future__ import annotations

import contextlib
import ctypes
import logging
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional, Sequence

from katacli.cpu_cores import usable_cpu_count

EXIT_INTERRUPTED = 130
# A stop signal this soon after the first is the same stop delivered twice (`timeout` signals the command
# and then its process group; a group kill reaches workers the parent also signals), not a person's
# second Ctrl-C asking to leave at once, seconds.
REPEATED_SIGNAL_SECONDS = 0.1
# How often a worker without PR_SET_PDEATHSIG checks that its parent still lives, seconds.
PARENT_CHECK_SECONDS = 1.0
PR_SET_PDEATHSIG = 1
# How long the parent waits for events before it checks its workers again, seconds.
POLL_SECONDS = 0.25


class StopSignals:
    """The stop signals (SIGINT, SIGTERM) a run got: the first asks for a clean stop; a later one,
    REPEATED_SIGNAL_SECONDS or more after it, is a person's second Ctrl-C asking to leave at once (a sooner
    one is the same stop delivered twice)."""

    def __init__(self) -> None:
        self.first_at: Optional[float] = None   # time.monotonic() of the first

    def is_second(self) -> bool:
        """Count a signal; whether it asks to leave at once."""
        now = time.monotonic()
        if self.first_at is None:
            self.first_at = now
            return False
        return now - self.first_at >= REPEATED_SIGNAL_SECONDS


def default_num_processes(num_game_threads: int, device: str) -> int:
    """One worker per CPU core this process may use (never more than games); one with a GPU."""
    if device.startswith("cuda"):
        return 1
    return max(1, min(usable_cpu_count(), num_game_threads))


def split_threads(num_game_threads: int, num_processes: int) -> list[int]:
    """numGameThreads shared out as evenly as possible."""
    base, extra = divmod(num_game_threads, num_processes)
    return [base + (1 if i < extra else 0) for i in range(num_processes)]


# ---------------------------------------------------------------------------- worker side


def die_with_parent(parent_pid: int) -> None:
    """End this process when the parent dies (PR_SET_PDEATHSIG on Linux, a parent-pid check elsewhere)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent_pid:  # the parent died before prctl took effect
                    os._exit(EXIT_INTERRUPTED)
                return

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(EXIT_INTERRUPTED)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def open_worker_log(logger_name: str, log_path: Optional[str], index: int) -> Optional[logging.FileHandler]:
    """Send the worker's ``logger_name`` log to ``log_path`` (appended: the workers share it), or
    nowhere without one. A line that cannot be written (a full disk) is dropped quietly."""
    logger = logging.getLogger(logger_name)
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logging.raiseExceptions = False
    if not log_path:
        return None
    handler = logging.FileHandler(log_path, encoding="utf-8")
    handler.setFormatter(logging.Formatter(f"%(asctime)s [worker {index}] %(levelname)s %(message)s"))
    logger.addHandler(handler)
    return handler


# A parent's log record that repeats a line its worker already wrote to the shared log file (it is for
# the console): the parent's file handler drops it (keep_out_worker_records).
WORKER_RECORD = "from_worker"


def keep_out_worker_records(handler: logging.Handler) -> logging.Handler:
    """Make ``handler`` (the parent's log file) skip records marked WORKER_RECORD; returns it."""
    handler.addFilter(lambda record: not getattr(record, WORKER_RECORD, False))
    return handler


def close_worker_log(handler: Optional[logging.Handler]) -> None:
    """Flush and close a worker's log; its last flush may meet the same full disk."""
    if handler is not None:
        with contextlib.suppress(OSError):
            handler.close()


# ---------------------------------------------------------------------------- parent side


class WorkerPool:
    """Starts worker processes and supervises them until they are all done.

    The workers put ``(kind, worker index, payload)`` events on :attr:`events`; :meth:`run`
    hands each to the caller's ``absorb``.
    """

    def __init__(self, name_prefix: str):
        self.ctx = mp.get_context("spawn")  # a clean interpreter: no inherited torch threads or locks
        self.events = self.ctx.Queue()
        self.procs: list = []
        self._name_prefix = name_prefix
        self._stop_sent = False

    def stop_workers(self) -> None:
        """Ask every live worker to stop (SIGTERM): it finishes writing its completed games."""
        self._stop_sent = True
        for proc in self.procs:
            if proc.is_alive() and proc.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)

    def failed(self) -> list:
        """The workers that exited with an error status. One that the stop's SIGTERM killed outright did not
        fail: it was still starting (a worker takes the signal as a clean stop from its first line on), so it
        had no games to lose."""
        stopped_while_starting = -signal.SIGTERM if self._stop_sent else None
        return [p for p in self.procs if p.exitcode not in (0, None, stopped_while_starting)]

    def failure_text(self) -> str:
        return ", ".join(f"{p.name} exited with status {p.exitcode}" for p in self.failed())

    def _drain(self, absorb: Callable, timeout: float) -> None:
        try:
            absorb(*self.events.get(timeout=timeout))
            while True:
                absorb(*self.events.get_nowait())
        except queue.Empty:
            pass

    def run(self, target: Callable, worker_args: Sequence[tuple[int, tuple]], absorb: Callable,
            on_signal: Callable, on_worker_died: Callable[[], None],
            on_tick: Optional[Callable[[], None]] = None, handle_signals: bool = True) -> None:
        """Run ``target(*args)`` in one process per ``(index, args)`` until all have exited.

        ``on_signal`` becomes the parent's SIGINT / SIGTERM handler while they run (only on the
        main thread, and only with ``handle_signals``); ``on_worker_died()`` is called on each
        check while a worker has exited with an error; ``on_tick()`` after each check.
        """
        in_main = handle_signals and threading.current_thread() is threading.main_thread()
        previous = {}
        if in_main:  # workers start with SIGINT ignored (inherited); the parent's handlers come after
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
            previous[signal.SIGTERM] = signal.getsignal(signal.SIGTERM)
        # Workers get this process's sys.path: put the directory katacli was imported from first, so
        # that they load the same (compiled) package even when a source checkout is on the path too.
        package_root = str(Path(__file__).resolve().parents[1])
        saved_path = list(sys.path)
        sys.path.insert(0, package_root)
        try:
            for index, args in worker_args:
                proc = self.ctx.Process(target=target, args=args, name=f"{self._name_prefix}-{index}")
                proc.start()
                self.procs.append(proc)
            sys.path[:] = saved_path
            if in_main:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, on_signal)
            while any(p.is_alive() for p in self.procs):
                self._drain(absorb, POLL_SECONDS)
                if self.failed():
                    on_worker_died()
                if on_tick is not None:
                    on_tick()
            for proc in self.procs:
                proc.join()
            self._drain(absorb, 0.0)
        finally:
            sys.path[:] = saved_path
            for proc in self.procs:
                if proc.is_alive():
                    proc.kill()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
