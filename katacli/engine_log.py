"""The GTP engine's log: a file and/or stderr, never stdout (stdout belongs to the protocol).

KataGo's keys: logFile (one file), logDir / logDirDated (a new file per run in
that directory), logToStderr, logTimeStamp. ``logToStdout`` is ignored for GTP
with a warning, since log lines on stdout would corrupt the protocol stream.
"""
from __future__ import annotations

import datetime
import os
import secrets
import sys
import threading
from typing import TextIO

from katacli.setup.engine_settings import LoggingSettings

# Random bytes in a log file's name (8 hex digits, as KataGo's).
LOG_NAME_RANDOM_BYTES = 4


class EngineLog:
    def __init__(self, settings: LoggingSettings | None = None, stderr: TextIO | None = None):
        self._lock = threading.Lock()
        self._stderr = stderr if stderr is not None else sys.stderr
        self._file: TextIO | None = None
        self.to_stderr = bool(settings and settings.log_to_stderr)
        self.time_stamp = settings.log_time_stamp if settings else True
        if settings is not None:
            path = self._log_path(settings)
            if path is not None:
                try:
                    directory = os.path.dirname(path)
                    if directory:
                        os.makedirs(directory, exist_ok=True)
                    self._file = open(path, "a", encoding="utf-8")
                except OSError as exc:
                    self.warn(f"could not open log file {path}: {exc.strerror or exc}")
            if settings.log_to_stdout:
                self.warn("logToStdout is ignored by `kata gtp`: stdout carries the GTP protocol")

    @staticmethod
    def _log_path(settings: LoggingSettings) -> str | None:
        if settings.log_file:
            return settings.log_file
        now = datetime.datetime.now()
        # A random suffix, as KataGo's: engines started in the same second in containers sharing a log folder
        # all have process id 1, and their logs interleaved in one file.
        when, random_hex = now.strftime("%Y%m%d-%H%M%S"), secrets.token_hex(LOG_NAME_RANDOM_BYTES).upper()
        if settings.log_dir:
            return os.path.join(settings.log_dir, f"{when}-{random_hex}.log")
        if settings.log_dir_dated:   # KataGo's layout: a folder for the start time, a random name in it
            return os.path.join(settings.log_dir_dated, when, f"{random_hex}.log")
        return None

    def write(self, message: str) -> None:
        """A log line (or lines) to the log file, and to stderr when logToStderr is set."""
        self._write(message, self.to_stderr)

    def file_only(self, message: str) -> None:
        """A line already shown on stderr before the log was open (config warnings): the file too."""
        self._write(message, False)

    def _write(self, message: str, to_stderr: bool) -> None:
        prefix = datetime.datetime.now().strftime("%Y-%m-%d %H:%M:%S") + ": " if self.time_stamp else ""
        text = "".join(prefix + line + "\n" for line in message.rstrip("\n").split("\n"))
        with self._lock:
            if self._file is not None:
                try:
                    self._file.write(text)
                    self._file.flush()
                except (OSError, ValueError):
                    pass
            if to_stderr:
                self._write_stderr(text)

    def info(self, message: str) -> None:
        """Log, and also tell the user on stderr when the log does not already go there."""
        self.write(message)
        if not self.to_stderr:
            with self._lock:
                self._write_stderr(message.rstrip("\n") + "\n")

    def warn(self, message: str) -> None:
        self.info(f"WARNING: {message}")

    def _write_stderr(self, text: str) -> None:
        try:
            self._stderr.write(text)
            self._stderr.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                try:
                    self._file.close()
                except (OSError, ValueError):   # a full disk fails the last flush too: the log is best effort
                    pass
                self._file = None
