"""The controller side of GTP: run an engine as a process and talk to it (match runners, tests).

::

    with GtpClient(["kata", "gtp", "-model", "net.bin.gz"]) as engine:
        engine.command("boardsize 9")
        move = engine.command("genmove b")      # "D4"; GtpCommandError on "? ..."

Responses are read by a thread into a queue, so every read has a timeout and a
silent or dead engine is reported instead of blocking forever.
"""
from __future__ import annotations

import collections
import queue
import subprocess
import threading
from typing import Sequence

DEFAULT_TIMEOUT_SECONDS = 60.0
QUIT_TIMEOUT_SECONDS = 10.0
# Lines of an engine's stderr kept to say why it stopped, and how long to wait for its exit status then.
STDERR_TAIL_LINES = 20
EXIT_WAIT_SECONDS = 2.0


class GtpClientError(RuntimeError):
    """The engine died, went silent, or answered something that is not GTP."""


class GtpCommandError(GtpClientError):
    """The engine answered ``? message``."""


class GtpClient:
    def __init__(self, argv: Sequence[str], name: str | None = None, stderr=None,
                 cwd: str | None = None, env: dict | None = None):
        """``stderr``: where the engine's stderr goes (a file, subprocess.DEVNULL); None keeps its last lines
        to say why the engine stopped, in the error raised then."""
        self.name = name or " ".join(argv)
        self._stderr_tail: collections.deque[str] = collections.deque(maxlen=STDERR_TAIL_LINES)
        self.process = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE if stderr is None else stderr,
                                        cwd=cwd, env=env, text=True, encoding="latin-1", bufsize=1)
        self._lines: queue.Queue = queue.Queue()
        threading.Thread(target=self._read, name=f"gtp-reader {self.name}", daemon=True).start()
        if stderr is None:
            threading.Thread(target=self._read_stderr, name=f"gtp-stderr {self.name}", daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self._lines.put(line.rstrip("\r\n"))
        self._lines.put(None)  # end of output

    def _read_stderr(self) -> None:
        for line in self.process.stderr:   # drained, so a chatty engine never blocks on a full pipe
            self._stderr_tail.append(line.rstrip("\r\n"))

    def _exit_text(self) -> str:
        """The engine's exit status (waited for briefly: its output closes just before it exits) and the
        last line it wrote to stderr."""
        try:
            status = self.process.wait(timeout=EXIT_WAIT_SECONDS)
        except subprocess.TimeoutExpired:
            status = None
        last = next((line for line in reversed(self._stderr_tail) if line.strip()), "")
        return f"exit status {status}" + (f"; it said: {last}" if last else "")

    # ------------------------------------------------------------------ raw access
    def send_line(self, line: str) -> None:
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
        except (BrokenPipeError, ValueError, OSError):
            raise GtpClientError(f"{self.name}: engine is not accepting input ({self._exit_text()})") from None

    def read_line(self, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> str:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise GtpClientError(f"{self.name}: no output for {timeout} s") from None
        if line is None:
            self._lines.put(None)
            raise GtpClientError(f"{self.name}: engine exited ({self._exit_text()})")
        return line

    def read_response(self, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> tuple[bool, int | None, str]:
        """(success, id, text) of the next response; text is everything after ``=ID `` up to the blank line."""
        first = self.read_line(timeout)
        while first == "":  # tolerate stray blank lines between responses
            first = self.read_line(timeout)
        if first[:1] not in ("=", "?"):
            raise GtpClientError(f"{self.name}: not a GTP response: {first!r}")
        head, _, rest = first[1:].partition(" ")
        command_id = int(head) if head.isdigit() else None
        lines = [rest]
        while True:
            line = self.read_line(timeout)
            if line == "":
                break
            lines.append(line)
        return first[0] == "=", command_id, "\n".join(lines)

    # ------------------------------------------------------------------ commands
    def command(self, line: str, timeout: float = DEFAULT_TIMEOUT_SECONDS) -> str:
        """Send one command and return its answer text; GtpCommandError for ``? message``."""
        self.send_line(line)
        ok, _, text = self.read_response(timeout)
        if not ok:
            raise GtpCommandError(f"{self.name}: '{line}' failed: {text}")
        return text

    def close(self, timeout: float = QUIT_TIMEOUT_SECONDS) -> int:
        """Send quit (if the engine still runs) and wait for the process; its exit status."""
        if self.process.poll() is None:
            try:
                self.command("quit", timeout)
            except GtpClientError:
                pass
            try:
                self.process.stdin.close()
            except OSError:
                pass
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        return self.process.returncode

    def __enter__(self) -> "GtpClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
