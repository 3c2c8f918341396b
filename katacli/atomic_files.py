"""Crash-safe file writes, the one helper for them.

A file is written to a hidden temporary name beside its final path, flushed and fsync'ed, then
renamed into place (and the directory fsync'ed): a reader never sees half a file, and a crash or a
full disk leaves the old file (or none). A leftover temporary file is recognisable by its name
(:func:`is_partial_file`, tagged with the writer's pid) and removed by :func:`remove_stale_partials`.
"""
from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path
from typing import Iterator

PARTIAL_MARKER = ".partial"


def partial_name(final_path: Path) -> Path:
    """Hidden temporary name next to ``final_path``, tagged with our pid for stale-file cleanup."""
    return final_path.with_name(f".{final_path.name}.{os.getpid()}{PARTIAL_MARKER}")


def is_partial_file(path: Path) -> bool:
    return path.name.startswith(".") and path.name.endswith(PARTIAL_MARKER)


def _pid_alive(pid: int) -> bool:
    """Whether process ``pid`` could still write. A zombie cannot: a killed writer whose parent died
    too is re-parented to the init process, and some (container inits) never reap it, so its pid
    answers signals forever."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not _is_zombie(pid)


def _is_zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # no /proc (macOS, Windows): trust the signal check
        return False
    # The state letter follows the command name, which is in parentheses and may hold spaces.
    return stat.rsplit(")", 1)[-1].split()[:1] in (["Z"], ["X"])


def remove_stale_partials(directory: Path) -> list[Path]:
    """Delete temporary files left by writers that no longer run (e.g. after SIGKILL)."""
    removed = []
    if not directory.is_dir():
        return removed
    for path in directory.iterdir():
        if not is_partial_file(path):
            continue
        try:
            pid = int(path.name[: -len(PARTIAL_MARKER)].rsplit(".", 1)[1])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not _pid_alive(pid):
            with contextlib.suppress(OSError):
                path.unlink()
                removed.append(path)
    return removed


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _keep_mode(final_path: Path, temp: Path) -> None:
    """Give ``temp`` the permission bits of the file it replaces (a new file keeps the umask's)."""
    try:
        mode = stat.S_IMODE(os.stat(final_path).st_mode)
    except OSError:
        return
    with contextlib.suppress(OSError):
        os.chmod(temp, mode)


@contextlib.contextmanager
def atomic_output(final_path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path to write; on success it is fsync'ed and renamed to ``final_path``.
    On failure the temporary file is removed; an OSError (disk full, ...) is raised again as a
    plain one naming ``final_path`` (libraries such as HDF5 put pages of detail in theirs).
    A symbolic link is written through (its target replaced, the link kept), and a file replaced keeps
    its permission bits, as an in-place write would leave them."""
    final_path = Path(final_path)
    if final_path.is_symlink():
        final_path = Path(os.path.realpath(final_path))
    temp = partial_name(final_path)
    try:
        yield temp
        _keep_mode(final_path, temp)
        _fsync_path(temp)
        os.replace(temp, final_path)
        _fsync_path(final_path.parent)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            temp.unlink()
        if isinstance(exc, OSError) and exc.errno:
            raise OSError(exc.errno, os.strerror(exc.errno), str(final_path)) from exc
        raise


def append_whole(fd: int, data: bytes, name: str | os.PathLike) -> None:
    """Append ``data`` to the file ``name`` open (O_APPEND) on ``fd`` with one write, so that a killed
    process leaves whole records only; when the write fails or comes up short (disk full), the file
    is cut back to its previous length and an OSError naming the file raised: no half record stays."""
    size_before = os.fstat(fd).st_size
    try:
        written = os.write(fd, data)
        if written != len(data):  # only a full disk cuts a regular file's write short
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, size_before)
        raise OSError(exc.errno, exc.strerror, str(name)) from None


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_output`). An OSError names ``path``."""
    with atomic_output(path) as temp:
        with open(temp, "wb") as f:
            f.write(data)


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_output`)."""
    atomic_write_bytes(path, text.encode("utf-8"))
