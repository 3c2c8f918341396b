"""The GTP wire format: cleaning input lines, splitting commands, writing responses.

What KataGo does to every input line, reproduced here:

* Surrounding whitespace is trimmed and every character outside printable
  ASCII (32..126) is dropped, except tabs, which become spaces. That takes
  care of CR LF line ends and of stray control or non-ASCII bytes.
* Everything from ``#`` on is a comment.
* A line that is empty after this is ignored (no response at all).
* A leading run of digits is the command id, echoed back as ``=ID`` / ``?ID``.

Responses are ``=ID text`` or ``?ID text`` followed by a blank line; an empty
response is ``= `` (with the space), as in KataGo. Unlike KataGo, which splits
on single spaces and so sees ``play b  D4`` as having an empty argument,
arguments here are separated by any run of whitespace, as the GTP standard asks.
``known_command`` alone answers from KataGo's single-space split (``kata_args``), so that a
controller probing it gets KataGo's exact answer.
"""
from __future__ import annotations

import errno
import sys
import threading
from dataclasses import dataclass, field
from typing import TextIO

FIRST_PRINTABLE = 32
LAST_PRINTABLE = 126
COMMENT_CHAR = "#"
EMPTY_COMMAND_MESSAGE = "empty command"
# KataGo's ids: ASCII digits, at most 9 of them (so they fit its 32-bit int).
ASCII_DIGITS = frozenset("0123456789")
MAX_ID_DIGITS = 9


def clean_line(raw: str) -> str:
    """One raw input line as KataGo sees it: printable ASCII only, no comment, tabs as spaces, trimmed."""
    kept = "".join(c for c in raw if FIRST_PRINTABLE <= ord(c) <= LAST_PRINTABLE or c == "\t")
    comment = kept.find(COMMENT_CHAR)
    if comment >= 0:
        kept = kept[:comment]
    return kept.replace("\t", " ").strip()


@dataclass(frozen=True)
class Command:
    """A parsed command line: optional numeric id, the command name, its arguments."""

    name: str
    args: list[str] = field(default_factory=list)
    id: int | None = None
    # The arguments split on single spaces, as KataGo splits them ("a  b" has an empty middle argument);
    # None for a command built in code, where they are ``args``.
    single_space_args: list[str] | None = field(default=None, compare=False)

    @property
    def arg_text(self) -> str:
        """The arguments joined by single spaces, as KataGo quotes them in error messages."""
        return " ".join(self.args)

    @property
    def kata_args(self) -> list[str]:
        """The arguments as KataGo sees them (see ``single_space_args``)."""
        return self.args if self.single_space_args is None else self.single_space_args


class EmptyCommand(ValueError):
    """A line with no command to run, answered with ``? message``: only an id (``12``, ``? empty
    command``), or an id too large for KataGo's 32-bit ids."""

    def __init__(self, command_id: int | None, message: str = EMPTY_COMMAND_MESSAGE):
        super().__init__(message)
        self.command_id = command_id


def parse_command(line: str) -> Command:
    """A cleaned, non-empty line to a Command; raises EmptyCommand if nothing follows the id."""
    digits = 0
    while digits < len(line) and line[digits] in ASCII_DIGITS:  # str.isdigit() takes other scripts' digits
        digits += 1
    command_id = int(line[:digits]) if 0 < digits <= MAX_ID_DIGITS else None
    if digits > MAX_ID_DIGITS:
        raise EmptyCommand(None, f"GTP id could not be parsed: Could not parse digits, overflow: {line[:digits]}")
    rest = line[digits:].strip()
    pieces = rest.split()
    if not pieces:
        raise EmptyCommand(command_id)
    kata_pieces = [piece.strip() for piece in rest.split(" ")]
    return Command(name=pieces[0], args=pieces[1:], id=command_id,
                   single_space_args=kata_pieces[1:])


def format_response(command_id: int | None, text: str, is_error: bool = False) -> str:
    """``=ID text`` / ``?ID text`` plus the blank line that ends every GTP response."""
    marker = "?" if is_error else "="
    head = f"{marker}{command_id}" if command_id is not None else marker
    return f"{head} {text}\n\n"


def format_header(command_id: int | None) -> str:
    """The ``=ID`` line that streaming commands (analysis) print before their ``info`` lines."""
    return f"={command_id}\n" if command_id is not None else "=\n"


class ResponseWriter:
    """Thread-safe, flushing writer for stdout: analysis threads and the command loop share it.

    Nothing but GTP responses goes through here; logs go to stderr or a log file.
    A closed or broken stdout (the controller went away) is remembered and later
    writes are dropped instead of raising in some background thread; a pipe whose reader has gone
    (EPIPE) also calls ``on_closed()`` once, e.g. to end the process as SIGPIPE ends KataGo.
    """

    def __init__(self, stream: TextIO | None = None, on_write=None, on_closed=None):
        self._stream = stream if stream is not None else sys.stdout
        self._lock = threading.Lock()
        self.on_write = on_write  # e.g. a logger for logAllGTPCommunication
        self.on_closed = on_closed
        self.broken = False

    @property
    def lock(self) -> threading.Lock:
        """Hold this to write several pieces without another thread's output in between."""
        return self._lock

    def write(self, text: str) -> None:
        with self._lock:
            self.write_locked(text)

    def write_locked(self, text: str) -> None:
        """Write while already holding :attr:`lock`."""
        if self.broken or not text:
            return
        try:
            self._stream.write(text)
            self._stream.flush()
        except (BrokenPipeError, ValueError, OSError) as exc:
            self.broken = True
            # (Windows reports a closed pipe as EINVAL: there the writer only falls silent.)
            if self.on_closed is not None and getattr(exc, "errno", None) == errno.EPIPE:
                self.on_closed()
            return
        if self.on_write is not None:
            self.on_write(text)

    def response(self, command_id: int | None, text: str, is_error: bool = False) -> None:
        self.write(format_response(command_id, text, is_error))
