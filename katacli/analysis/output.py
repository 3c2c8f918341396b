"""The engine's stdout: whole JSON objects, one per line, written under a lock and flushed at once.

Several threads answer at the same time (the reader thread for errors and
actions, every analysis worker for results), so each line is written and
flushed while holding the lock: a client never sees two responses interleaved.
After :meth:`JsonLineWriter.silence` (quitting without waiting) nothing more is
written. A closed pipe (the client went away) silences the writer too, and tells ``on_closed``.
"""
from __future__ import annotations

import errno
import threading
from typing import Callable, Optional, TextIO

from katacli.analysis.protocol import dumps


class JsonLineWriter:
    def __init__(self, stream: TextIO, on_line: Optional[Callable[[str], None]] = None,
                 on_closed: Optional[Callable[[], None]] = None):
        """``on_line(text)`` sees every line written (logAllResponses); ``on_closed()`` runs once when the
        reader has gone away (a broken pipe: `kata analysis ... | head -1`)."""
        self._stream = stream
        self._lock = threading.Lock()
        self._silenced = False
        self.on_line = on_line
        self.on_closed = on_closed
        self.lines_written = 0

    def write(self, obj: dict) -> None:
        line = dumps(obj)
        with self._lock:
            if self._silenced:
                return
            try:
                try:
                    self._stream.write(line + "\n")
                except UnicodeEncodeError:   # text the stream cannot encode is escaped, not a closed pipe
                    self._stream.write(line.encode("utf-8", "backslashreplace").decode("utf-8") + "\n")
                self._stream.flush()
            except (BrokenPipeError, ValueError, OSError) as exc:
                self._silenced = True
                closed = isinstance(exc, BrokenPipeError) or getattr(exc, "errno", None) == errno.EPIPE
            else:
                closed = None
                self.lines_written += 1
        if closed is not None:
            if closed and self.on_closed is not None:   # once: the writer is silenced from here on
                self.on_closed()
            return
        if self.on_line is not None:
            self.on_line(line)

    def silence(self) -> None:
        """Drop everything written from now on. Without the lock: a writer may hold it, blocked on a pipe
        nobody reads (quitting on Ctrl-C must not wait for it)."""
        self._silenced = True

    @property
    def silenced(self) -> bool:
        return self._silenced
