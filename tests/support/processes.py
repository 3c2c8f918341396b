"""Child processes in tests: starting them so that Ctrl-C reaches them, finding a command's worker
processes, and waiting until they are gone (Linux /proc).

A process started in the background by a non-interactive shell (``cmd &`` in a script, some CI
runners) has SIGINT ignored, and an ignored signal stays ignored across exec: an engine started
from such a test run never sees the Ctrl-C a test sends it, and Python (like KataGo's gtp and
analysis commands) rightly leaves an inherited SIG_IGN alone. Tests that send SIGINT start their
child inside :func:`sigint_reaches_children`, so the child begins as it would from a terminal.
"""
from __future__ import annotations

import signal
import subprocess
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

HAS_PROC = Path("/proc/self/stat").exists()


@contextmanager
def sigint_reaches_children() -> Iterator[None]:
    """While open, processes started by this one begin with SIGINT's default action."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.SIG_IGN:
        yield  # a handled or default SIGINT becomes the default one in an exec'd child
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _stat_fields(pid: int) -> list[str]:
    """/proc/<pid>/stat after the command name: [state, ppid, ...]; [] once the process is gone."""
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return []


def children(pid: int) -> list[int]:
    """Processes whose parent is pid."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = _stat_fields(int(entry.name))
            if fields and int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def worker_pids(proc: subprocess.Popen) -> list[int]:
    """The multiprocessing workers (spawned children) of a katacli command."""
    pids = []
    for pid in children(proc.pid):
        try:
            if "spawn_main" in (Path("/proc") / str(pid) / "cmdline").read_text():
                pids.append(pid)
        except OSError:
            continue
    return pids


def wait_until_gone(pids: Iterable[int], timeout: float = 30.0) -> None:
    """Wait until none of pids runs any more (gone, or a zombie waiting to be reaped)."""
    pids = list(pids)
    deadline = time.monotonic() + timeout
    while any(_stat_fields(pid) and _stat_fields(pid)[0] != "Z" for pid in pids):
        assert time.monotonic() < deadline, f"processes {pids} outlived their parent"
        time.sleep(0.05)
