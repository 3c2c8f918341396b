"""Reading KataGo ``.cfg`` files.

The format, as KataGo's ConfigParser accepts it::

    # a comment
    maxVisits = 500          # trailing comments are fine
    logDir = "my logs #1"    # double quotes keep '#' and spaces; backslash escapes

Keys are letters, digits, ``_`` and ``-``. A key may appear only once per
file. Values are text until typed access parses them: numbers the way C++
streams read them, booleans as ``true``/``false`` in any case, lists as
comma-separated items. ``@include other.cfg`` reads another file at that point
(its path relative to the including file's folder, as KataGo resolves it); a key
set again after an include replaces the included value.

Every user mistake raises :class:`ConfigError` with a message that names the
file (and line, or ``-override-config``), the key and the offending value.
``Config.get`` parses a key through the registry in :mod:`katacli.config_keys`
(type, range, per-mode default); the ``get_int``/``get_float``/... methods
parse any key with explicit bounds. Keys read either way are remembered, and
keys the registry does not know can be reported as warnings.
"""
from __future__ import annotations

import locale
import os
import re
import struct
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence, TextIO

from katacli import config_keys
from katacli.config_keys import Enabled, KeySpec, ValueKind

__all__ = ["Config", "ConfigError", "Enabled", "check_config_file", "parse_config_text", "parse_override_string"]

OVERRIDE_ORIGIN = "-override-config"
# parse_config_text's entry for an "@include FILE" line (no key can start with "@").
INCLUDE_KEY = "@include"
NO_FILE_SOURCE = "(no config file)"
# Characters KataGo treats as whitespace when trimming.
_WHITESPACE = " \t\r\n\v\f"
_KEY_CHAR = re.compile(r"[A-Za-z0-9_-]")
# Bytes of a config file that were not UTF-8 (decoded as surrogate escapes by _read_config_file).
_NOT_UTF8 = re.compile("[\udc80-\udcff]")
# Keys that name files or folders: their values may hold such bytes, as the system's file names can.
_PATH_KEY = re.compile(r"(Dir|Dirs|DirDated|File|Files|Path)$")
_INT_TEXT = re.compile(r"[+-]?[0-9]+")
# What a C++ stream accepts as a floating point number (no inf/nan, no hex).
_FLOAT_TEXT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")
_TRUE_TEXT, _FALSE_TEXT = "true", "false"
_ENABLED_SPELLINGS = {
    **dict.fromkeys(("1", "t", "true", "enabled", "y", "yes"), Enabled.TRUE),
    **dict.fromkeys(("0", "f", "false", "disabled", "n", "no"), Enabled.FALSE),
    "auto": Enabled.AUTO,
}
_PLAYER_SPELLINGS = {"black": "B", "b": "B", "white": "W", "w": "W"}
_MISSING: Any = object()
# Error messages quote at most this much of a bad line (a binary file may have no line breaks).
MAX_QUOTED_LINE_CHARS = 120
# No integer setting has more digits than a 64-bit integer.
MAX_INT_DIGITS = 19
# A NUL byte never occurs in a text config; gzip's magic starts a compressed model file.
_NUL_BYTE = b"\x00"
_GZIP_MAGIC = b"\x1f\x8b"


class ConfigError(ValueError):
    """A problem with a config file or override, phrased for the user. A ValueError, as every error of a
    bad value the Python API raises is (``except ValueError`` catches ``search_params(maxVisits="lots")``)."""


# --------------------------------------------------------------------------- parsing text


def _shorten(text: str) -> str:
    return text if len(text) <= MAX_QUOTED_LINE_CHARS else text[:MAX_QUOTED_LINE_CHARS] + "..."


def _parse_line(line: str, where: str) -> tuple[str, str] | None:
    """``(key, value)`` for a ``key = value`` line, None for blank/comment lines."""
    text = line.strip(_WHITESPACE)
    if not text or text.startswith("#"):
        return None
    if text.startswith("@"):
        return INCLUDE_KEY, _include_target(text, where)

    def fail(reason: str) -> ConfigError:
        return ConfigError(f"{where}: {reason}: {_shorten(text)}")

    i = 0
    while i < len(text) and _KEY_CHAR.match(text[i]):
        i += 1
    key = text[:i]
    if not key:
        raise fail("expected a key made of letters, digits, '_' or '-'")
    after_key = text[i:]
    rest = after_key.lstrip(_WHITESPACE)
    if not rest.startswith("="):
        if rest and rest[0] != "#" and len(rest) == len(after_key):
            raise fail(f"character {rest[0]!r} is not allowed in a key")
        raise fail(f"expected '=' after key '{_shorten(key)}'")
    rest = rest[1:].lstrip(_WHITESPACE)

    if rest.startswith('"'):
        value, remainder = _parse_quoted(rest, fail)
        remainder = remainder.strip(_WHITESPACE)
        if remainder and not remainder.startswith("#"):
            raise fail("only a comment may follow a quoted value")
    else:
        value = rest.split("#", 1)[0].strip(_WHITESPACE)
    if value == "":
        raise fail(f"key {key!r} has an empty value")
    if _NOT_UTF8.search(value):
        if not _PATH_KEY.search(key):
            raise ConfigError(f"{where}: the value of {key!r} is not valid UTF-8 text (save the file as UTF-8)")
        value = _path_from_bytes(value)
    return key, value


def _path_from_bytes(value: str) -> str:
    """A file or folder name with bytes that are not UTF-8 (a config saved in Latin-1 / Windows' ANSI code
    page), named to the system as KataGo names it, by those bytes: kept as surrogate escapes, which Python's
    file functions turn back into the same bytes; on Windows, read in the ANSI code page KataGo's narrow
    paths use."""
    if os.name != "nt":
        return value
    return value.encode("utf-8", errors="surrogateescape").decode(locale.getpreferredencoding(False),
                                                                  errors="replace")


def _include_target(text: str, where: str) -> str:
    """The file an ``@include`` line names (KataGo's readStreamContent: '=' or blanks after the directive,
    a trailing comment, and quotes around the name allowed)."""
    line = text.split("#", 1)[0].strip(_WHITESPACE)
    match = re.match(r"@([^\s=]*)[\s=]+(.*)$", line)
    if match is None or match.group(1) != "include":
        directive = line.split()[0] if line.split() else line
        raise ConfigError(f"{where}: unsupported @ directive '{_shorten(directive)}' (only @include FILE is)")
    target = match.group(2).strip(_WHITESPACE).strip("'").strip('"')
    if not target:
        raise ConfigError(f"{where}: @include names no file")
    return target


def _parse_quoted(text: str, fail) -> tuple[str, str]:
    """Read a double-quoted value; returns (value, text after the closing quote)."""
    chars: list[str] = []
    i = 1
    while i < len(text):
        c = text[i]
        if c == "\\":
            if i + 1 >= len(text):
                raise fail("backslash at the end of a quoted value")
            chars.append(text[i + 1])
            i += 2
        elif c == '"':
            return "".join(chars), text[i + 1:]
        else:
            chars.append(c)
            i += 1
    raise fail("quoted value has no closing '\"'")


def parse_config_text(text: str, source: str) -> list[tuple[str, str, int]]:
    """Parse a whole config; returns ``(key, value, line_number)`` in file order.

    Raises ConfigError for a malformed line or a key given twice.
    """
    entries: list[tuple[str, str, int]] = []
    first_line_of: dict[str, int] = {}
    # Lines end at "\n" only (a "\r" before it is stripped with the other whitespace), as KataGo reads
    # them: splitlines() would also break a comment at a Unicode line separator.
    for line_number, line in enumerate(text.split("\n"), start=1):
        parsed = _parse_line(line, f"{source}, line {line_number}")
        if parsed is None:
            continue
        key, value = parsed
        if key == INCLUDE_KEY:   # kept in place: check_config_file reads the file it names
            entries.append((key, value, line_number))
            continue
        if key in first_line_of:
            raise ConfigError(
                f"{source}, line {line_number}: key '{key}' was already set on line {first_line_of[key]}; "
                "delete one of them"
            )
        first_line_of[key] = line_number
        entries.append((key, value, line_number))
    return entries


def parse_override_string(text: str) -> dict[str, str]:
    """Parse ``-override-config`` text: ``"k1=v1, k2=v2"``.

    Like KataGo: split on commas, trim each piece, skip empty pieces, split each
    at its first '='; an empty value means "remove this key". Values therefore
    cannot contain commas. Later pieces win over earlier ones.
    """
    result: dict[str, str] = {}
    last_key = None
    for piece in text.split(","):
        piece = piece.strip(_WHITESPACE)
        if not piece:
            continue
        if "=" not in piece:
            hint = ""
            if last_key is not None:   # e.g. lrSchedule=(0,1.0),(...): the comma cut a value in two
                hint = (f" (values are split at commas here, as in KataGo: a value with commas, such as "
                        f"{last_key}'s, goes in a config file)")
            raise ConfigError(f"{OVERRIDE_ORIGIN}: expected key=value but got '{piece}'{hint}")
        key, value = piece.split("=", 1)
        last_key = key.strip(_WHITESPACE)
        key = key.strip(_WHITESPACE)
        if not key:
            raise ConfigError(f"{OVERRIDE_ORIGIN}: missing key before '=' in '{piece}'")
        result[key] = value.strip(_WHITESPACE)
    return result


# --------------------------------------------------------------------------- values


def _to_float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def _format_number(x: float) -> str:
    if isinstance(x, int) or (x.is_integer() and abs(x) < 1e16):
        return str(int(x))
    return repr(x)


def _format_range(minimum: float | None, maximum: float | None) -> str:
    if minimum is not None and maximum is not None:
        return f"between {_format_number(minimum)} and {_format_number(maximum)}"
    if minimum is not None:
        return f"at least {_format_number(minimum)}"
    return f"at most {_format_number(maximum)}"


class _ConfigResolver:
    """Lets derived defaults look at the rest of a config."""

    def __init__(self, config: "Config", mode: str | None):
        self.config, self.mode = config, mode

    def is_set(self, key: str) -> bool:
        return key in self.config

    def value(self, key: str) -> Any:
        return self.config.get(key, mode=self.mode)


class Config:
    """Key/value pairs from a config file plus overrides, with typed access.

    ``mode`` (gtp, analysis, selfplay, benchmark) picks the registry defaults
    ``get`` falls back to. Configs read from files enforce the keys KataGo
    requires in that mode (``require_keys``); a Config built in code from a
    dict does not, so ``Config(mode="gtp")`` is "all defaults".
    """

    def __init__(
        self,
        values: Mapping[str, str] | None = None,
        *,
        source: str = NO_FILE_SOURCE,
        mode: str | None = None,
        require_keys: bool = False,
    ):
        config_keys.check_mode(mode)
        self.source = source
        self.mode = mode
        # When True, keys the registry marks as required in `mode` must be set.
        self.require_keys = require_keys
        self._values: dict[str, str] = {}
        self._origins: dict[str, str] = {}
        self._used: set[str] = set()
        self._lock = threading.Lock()
        for key, value in (values or {}).items():
            self._values[key] = str(value)
            self._origins[key] = source

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_text(cls, text: str, *, source: str = "<config text>", mode: str | None = None) -> "Config":
        config = cls(source=source, mode=mode, require_keys=True)
        entries = parse_config_text(text, source)
        for key, _, line_number in entries:
            if key == INCLUDE_KEY:
                raise ConfigError(f"{source}, line {line_number}: @include needs a config file to be relative to")
        config._add_entries((key, value, f"{source}, line {n}") for key, value, n in entries)
        return config

    @classmethod
    def from_file(cls, path: str | Path, *, mode: str | None = None) -> "Config":
        return cls.from_files([path], mode=mode)

    @classmethod
    def from_files(cls, paths: Sequence[str | Path], *, mode: str | None = None) -> "Config":
        """Read several configs; keys in later files replace earlier ones (like repeated -config)."""
        if not paths:
            raise ConfigError("no config file given")
        config = cls(source=" + ".join(str(p) for p in paths), mode=mode, require_keys=True)
        for path in paths:
            config._add_entries(check_config_file(path))
        return config

    def _add_entries(self, entries: Iterable[tuple[str, str, str]]) -> None:
        for key, value, origin in entries:
            self._values[key] = value
            self._origins[key] = origin

    def copy(self) -> "Config":
        clone = Config(source=self.source, mode=self.mode, require_keys=self.require_keys)
        clone._values = dict(self._values)
        clone._origins = dict(self._origins)
        clone._used = set(self._used)
        return clone

    # ------------------------------------------------------------------ changing keys

    def apply_overrides(self, overrides: str | Mapping[str, str], *, origin: str = OVERRIDE_ORIGIN) -> None:
        """Apply ``-override-config`` text or a mapping; empty values remove keys.

        Setting `rules` drops per-rule keys (koRule, ...) from the config and vice
        versa, so an override of either style wins cleanly, as in KataGo.
        """
        new_values = parse_override_string(overrides) if isinstance(overrides, str) else dict(overrides)
        for group_a, group_b in config_keys.OVERRIDE_EXCLUSIVE_GROUPS:
            for mine, other in ((group_a, group_b), (group_b, group_a)):
                if mine & new_values.keys():
                    for key in other:
                        self._remove(key)
        for key, value in new_values.items():
            value = str(value).strip(_WHITESPACE)
            if value == "":
                self._remove(key)
            else:
                self._values[key] = value
                self._origins[key] = origin

    def set(self, key: str, value: Any, *, origin: str = "set by program") -> None:
        self._values[key] = str(value)
        self._origins[key] = origin

    def remove(self, key: str) -> None:
        """Drop one key (and only it: unlike an override, the other rules style's keys stay)."""
        self._remove(key)

    def _remove(self, key: str) -> None:
        self._values.pop(key, None)
        self._origins.pop(key, None)

    def apply_alias(self, alias: str, canonical: str) -> None:
        """Rename ``alias`` to ``canonical``; both being set is an error."""
        if alias not in self._values:
            return
        if canonical in self._values:
            raise ConfigError(f"{self.source}: cannot set both '{alias}' and '{canonical}'; they mean the same thing")
        self._values[canonical] = self._values.pop(alias)
        self._origins[canonical] = self._origins.pop(alias)
        with self._lock:
            if alias in self._used:
                self._used.discard(alias)
                self._used.add(canonical)

    def apply_mode_aliases(self, mode: str | None = None) -> None:
        for alias, canonical in config_keys.MODE_ALIASES.get(mode or self.mode or "", ()):
            self.apply_alias(alias, canonical)

    # ------------------------------------------------------------------ inspection

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def __len__(self) -> int:
        return len(self._values)

    def contains(self, key: str) -> bool:
        return key in self._values

    def keys(self) -> list[str]:
        return list(self._values)

    def as_dict(self) -> dict[str, str]:
        """Raw text of every key (does not mark anything as used)."""
        return dict(self._values)

    def origin(self, key: str) -> str:
        """Where a key's value came from, e.g. ``gtp.cfg, line 12``."""
        return self._origins.get(key, self.source)

    def mark_used(self, key: str) -> None:
        with self._lock:
            self._used.add(key)

    def unmark_used(self, key: str) -> None:
        """A key read but then found to have no effect (KataGo does not read it in that case): warned about
        as unused."""
        with self._lock:
            self._used.discard(key)

    def mark_used_with_prefix(self, prefix: str) -> None:
        with self._lock:
            self._used.update(k for k in self._values if k.startswith(prefix))

    def forget_used(self) -> None:
        """No key counts as read (a copy that records what one reader reads)."""
        with self._lock:
            self._used.clear()

    def used_keys(self) -> set[str]:
        with self._lock:
            return set(self._used)

    def unused_keys(self) -> list[str]:
        with self._lock:
            return sorted(k for k in self._values if k not in self._used)

    def unused_key_warnings(self, command: str, known: Callable[[str], bool] = config_keys.is_known) -> list[str]:
        """KataGo's warnUnusedKeys, once a command has read its settings: one ``WARNING:`` line per key it set
        that the command never read (a key of another command, or one that only counts with another key).
        Keys ``known`` does not know (the registry's, or a command's own, e.g. match's maxVisits1) are left out:
        :meth:`unknown_key_warnings` names them."""
        return [f"WARNING: Unused key '{key}' in {self.origin(key)}: {command} does not use it here"
                for key in self.unused_keys() if known(key)]

    def warn_unused_keys(self, command: str, stream: TextIO | None = None,
                         known: Callable[[str], bool] = config_keys.is_known) -> None:
        """Print :meth:`unused_key_warnings` (to stderr by default), as :meth:`warn_unknown_keys` prints its own."""
        stream = sys.stderr if stream is None else stream
        for line in self.unused_key_warnings(command, known):
            print(line, file=stream)

    def unknown_keys(self) -> list[str]:
        """Keys the registry does not know, in file order."""
        return [key for key in self._values if not config_keys.is_known(key)]

    def unknown_key_warnings(self) -> list[str]:
        """One ``WARNING:`` line per key the registry does not know (commands log them once open)."""
        lines = []
        for key in self.unknown_keys():
            hint = config_keys.suggest_key(key)
            hint_text = f" (did you mean '{hint}'?)" if hint else ""
            lines.append(f"WARNING: Unknown config key '{key}' in {self.origin(key)}{hint_text}; it is ignored")
        return lines

    def warn_unknown_keys(self, stream: TextIO | None = None) -> list[str]:
        """Print one warning line per unknown key (to stderr by default)."""
        stream = sys.stderr if stream is None else stream
        for line in self.unknown_key_warnings():
            print(line, file=stream)
        return self.unknown_keys()

    def check_unsupported_keys(self, stream: TextIO | None = None) -> list[str]:
        """Keys set to a value katacli cannot act on (their spec's ``unsupported``): raise ConfigError for
        the first one katacli refuses, else print one warning line each (to stderr by default) and return
        them. Nothing a config asks for is silently ignored."""
        stream = sys.stderr if stream is None else stream
        warned = []
        for key in list(self._values):
            spec = config_keys.lookup(key)
            if spec is None or spec.unsupported is None:
                continue
            value = self._get_with_spec(spec, self.mode)
            if not spec.unsupported.applies_to(value, self.mode):
                continue
            shown = self._values[key]
            if spec.unsupported.refuse:
                raise ConfigError(f"'{key} = {shown}' ({self.origin(key)}) is not supported: "
                                  f"{spec.unsupported.reason}; remove it")
            print(f"WARNING: config key '{key} = {shown}' in {self.origin(key)} has no effect: "
                  f"{spec.unsupported.reason}", file=stream)
            warned.append(key)
        return warned

    # ------------------------------------------------------------------ typed access

    def _error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"Invalid value for '{key}' ({self.origin(key)}): {problem}")

    def _raw(self, key: str, default: Any) -> str | Any:
        if key not in self._values:
            if default is _MISSING:
                raise ConfigError(f"Missing key '{key}' in {self.source}")
            return _MISSING
        self.mark_used(key)
        return self._values[key]

    def get_str(self, key: str, default: Any = _MISSING, *, choices: Iterable[str] | None = None,
                ignore_case: bool = False) -> str:
        text = self._raw(key, default)
        if text is _MISSING:
            return default
        return self._check_choice(key, text, choices, ignore_case)

    def _check_choice(self, key: str, text: str, choices: Iterable[str] | None, ignore_case: bool) -> str:
        if choices is None:
            return text
        choices = tuple(choices)
        for choice in choices:
            if text == choice or (ignore_case and text.lower() == choice.lower()):
                return choice
        raise self._error(key, f"'{text}' is not one of {', '.join(choices)}")

    def _check_range(self, key: str, x: float, minimum: float | None, maximum: float | None) -> None:
        if (minimum is not None and x < minimum) or (maximum is not None and x > maximum):
            raise self._error(key, f"{_format_number(x)} is out of range, must be {_format_range(minimum, maximum)}")

    def _int(self, key: str, text: str, minimum: float | None, maximum: float | None) -> int:
        text = text.strip(_WHITESPACE)
        if not _INT_TEXT.fullmatch(text):
            raise self._error(key, f"'{_shorten(text)}' is not an integer")
        digits = text.lstrip("+-").lstrip("0") or "0"
        if len(digits) > MAX_INT_DIGITS:  # int() refuses texts this long
            bounds = "" if minimum is None and maximum is None else f", must be {_format_range(minimum, maximum)}"
            raise self._error(key, f"{_shorten(text)} is out of range{bounds}")
        x = int(text[0] + digits if text[0] in "+-" else digits)
        self._check_range(key, x, minimum, maximum)
        return x

    def _float(self, key: str, text: str, minimum: float | None, maximum: float | None) -> float:
        text = text.strip(_WHITESPACE)
        if not _FLOAT_TEXT.fullmatch(text):
            raise self._error(key, f"'{text}' is not a number")
        x = float(text)
        self._check_range(key, x, minimum, maximum)
        return x

    def _bool(self, key: str, text: str) -> bool:
        lowered = text.strip(_WHITESPACE).lower()
        if lowered in (_TRUE_TEXT, _FALSE_TEXT):
            return lowered == _TRUE_TEXT
        raise self._error(key, f"'{text}' is not a boolean (use true or false)")

    def get_int(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
                maximum: float | None = None) -> int:
        text = self._raw(key, default)
        return default if text is _MISSING else self._int(key, text, minimum, maximum)

    def get_float(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
                  maximum: float | None = None) -> float:
        text = self._raw(key, default)
        return default if text is _MISSING else self._float(key, text, minimum, maximum)

    def get_bool(self, key: str, default: Any = _MISSING) -> bool:
        text = self._raw(key, default)
        return default if text is _MISSING else self._bool(key, text)

    def get_enabled(self, key: str, default: Any = _MISSING) -> Enabled:
        """A true/false/auto switch (also accepts yes/no/1/0/enabled/disabled)."""
        text = self._raw(key, default)
        if text is _MISSING:
            return default
        lowered = text.strip(_WHITESPACE).lower()
        if lowered not in _ENABLED_SPELLINGS:
            raise self._error(key, f"'{text}' is not true, false or auto")
        return _ENABLED_SPELLINGS[lowered]

    def get_player(self, key: str, default: Any = _MISSING) -> str:
        """BLACK/WHITE/B/W in any case, returned as "B" or "W"."""
        text = self._raw(key, default)
        if text is _MISSING:
            return default
        lowered = text.strip(_WHITESPACE).lower()
        if lowered not in _PLAYER_SPELLINGS:
            raise self._error(key, f"'{text}' is not a player (use BLACK or WHITE)")
        return _PLAYER_SPELLINGS[lowered]

    def _items(self, key: str, default: Any, keep_empty: bool) -> list[str] | Any:
        text = self._raw(key, default)
        if text is _MISSING:
            return _MISSING
        items = [item.strip(_WHITESPACE) for item in text.split(",")]
        if keep_empty:
            return items
        return [item for item in items if item]

    def get_list_of_strings(self, key: str, default: Any = _MISSING, *, choices: Iterable[str] | None = None,
                            ignore_case: bool = False) -> list[str]:
        """Comma-separated strings, each trimmed; empty items are dropped."""
        items = self._items(key, default, keep_empty=False)
        if items is _MISSING:
            return default
        return [self._check_choice(key, item, choices, ignore_case) for item in items]

    def get_list_of_ints(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
                         maximum: float | None = None) -> list[int]:
        items = self._items(key, default, keep_empty=True)
        if items is _MISSING:
            return default
        return [self._int(key, item, minimum, maximum) for item in items]

    def get_list_of_floats(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
                           maximum: float | None = None) -> list[float]:
        items = self._items(key, default, keep_empty=True)
        if items is _MISSING:
            return default
        return [self._float(key, item, minimum, maximum) for item in items]

    def get_list_of_bools(self, key: str, default: Any = _MISSING) -> list[bool]:
        items = self._items(key, default, keep_empty=True)
        if items is _MISSING:
            return default
        return [self._bool(key, item) for item in items]

    def get_int_pairs(self, key: str, default: Any = _MISSING, *, minimum: float | None = None,
                      maximum: float | None = None) -> list[tuple[int, int]]:
        """Comma-separated ``A-B`` pairs such as ``bSizesXY = 9-9, 13-19``."""
        items = self._items(key, default, keep_empty=False)
        if items is _MISSING:
            return default
        pairs = []
        for item in items:
            halves = item.split("-")
            if len(halves) != 2:
                raise self._error(key, f"'{item}' is not a pair of integers like 9-13")
            pairs.append((self._int(key, halves[0], minimum, maximum), self._int(key, halves[1], minimum, maximum)))
        return pairs

    # ------------------------------------------------------------------ registry access

    def is_set(self, key: str) -> bool:
        return key in self._values

    def get(self, key: str, mode: str | None = None) -> Any:
        """Value of a registered key: parsed and range-checked by its spec, or
        its default for ``mode`` (default: this config's mode) when unset."""
        spec = config_keys.get_spec(key)
        mode = self.mode if mode is None else mode
        if key in self._values:
            return self._get_with_spec(spec, mode)
        if self.require_keys and spec.is_required(mode):
            # Named after the command running (a match reads self-play's game keys in their mode).
            raise ConfigError(f"Missing key '{key}' in {self.source}; the {self.mode or mode} command needs it")
        return self.default(key, mode)

    def default(self, key: str, mode: str | None = None) -> Any:
        """Registry default of ``key`` in ``mode``, with derived defaults computed
        from this config's other keys; ignores whether ``key`` itself is set."""
        mode = self.mode if mode is None else mode
        return config_keys.resolve_default(config_keys.get_spec(key), mode, _ConfigResolver(self, mode))

    def _get_with_spec(self, spec: KeySpec, mode: str | None) -> Any:
        key = spec.name
        lo, hi = spec.bounds_for(mode)
        kind = spec.kind
        if kind is ValueKind.INT:
            return self.get_int(key, minimum=lo, maximum=hi)
        if kind is ValueKind.FLOAT:
            x = self.get_float(key, minimum=lo, maximum=hi)
            return _to_float32(x) if spec.float32 else x
        if kind is ValueKind.BOOL:
            return self.get_bool(key)
        if kind is ValueKind.STR:
            return self.get_str(key, choices=spec.choices, ignore_case=spec.choices_ignore_case)
        if kind is ValueKind.ENABLED:
            return self.get_enabled(key)
        if kind is ValueKind.PLAYER:
            return self.get_player(key)
        if kind is ValueKind.LIST_INT:
            return self.get_list_of_ints(key, minimum=lo, maximum=hi)
        if kind is ValueKind.LIST_FLOAT:
            return self.get_list_of_floats(key, minimum=lo, maximum=hi)
        if kind is ValueKind.LIST_STR:
            return self.get_list_of_strings(key, choices=spec.choices, ignore_case=spec.choices_ignore_case)
        if kind is ValueKind.LIST_BOOL:
            return self.get_list_of_bools(key)
        if kind is ValueKind.INT_PAIRS:
            return self.get_int_pairs(key, minimum=lo, maximum=hi)
        raise AssertionError(f"unhandled value kind {kind}")

    def __repr__(self) -> str:
        return f"Config(source={self.source!r}, mode={self.mode!r}, keys={len(self._values)})"


def check_config_file(path: str | Path) -> list[tuple[str, str, str]]:
    """Read and parse one config file and the files it includes: its ``(key, value, origin)`` entries in the
    order they apply (origin: ``file, line N``), or ConfigError with a one-line message for a file that is
    missing, unreadable, binary or malformed, or an include that is absolute or repeated. Commands call it
    (through load_config) before they start serving, so a bad file is reported at once."""
    if not str(path):   # (Path("") would be the current directory) a GUI's empty config field
        raise ConfigError("Config file not found: the -config value is empty")
    return _entries_with_includes(Path(path), str(path), [Path(path).resolve()])


def _entries_with_includes(path: Path, shown: str, included: list[Path]) -> list[tuple[str, str, str]]:
    entries: list[tuple[str, str, str]] = []
    for key, value, line_number in parse_config_text(_read_config_file(path), shown):
        where = f"{shown}, line {line_number}"
        if key != INCLUDE_KEY:
            entries.append((key, value, where))
            continue
        if Path(value).is_absolute():   # as KataGo: includes are relative to the including file
            raise ConfigError(f"{where}: @include takes a path relative to this file, not {value}")
        target = path.parent / value
        if target.resolve() in included:
            raise ConfigError(f"{where}: {value} is included twice (or includes itself)")
        included.append(target.resolve())
        if not target.is_file():
            raise ConfigError(f"{where}: @include {value}: {target} is not a file")
        entries.extend(_entries_with_includes(target, str(target), included))
    return entries


def shipped_copy_hint(path: str | Path) -> str:
    """Where katacli's own copy of a missing example config is (the help's examples name configs/*.cfg, which
    only a source checkout has beside it), or ''."""
    from katacli.example_configs import example_config

    shipped = example_config(Path(path).name)
    return f" (katacli's copy of {Path(path).name} is {shipped})" if shipped is not None else ""


_UTF8_BOM = b"\xef\xbb\xbf"


def _read_config_file(path: str | Path) -> str:
    try:
        data = Path(path).read_bytes()
        if _NUL_BYTE in data or data.startswith(_GZIP_MAGIC):
            raise ConfigError(f"Config file {path} is a binary file, not a text config (is it a model file?)")
        # KataGo reads a config as bytes: a comment in Latin-1 (an editor's é) is no error. The bytes that are
        # not UTF-8 become surrogate escapes, which _parse_line refuses only inside a value. A byte-order mark
        # (Windows Notepad's "UTF-8 with BOM") is read past; KataGo took it for part of the first key.
        return data.removeprefix(_UTF8_BOM).decode("utf-8", errors="surrogateescape")
    except FileNotFoundError:
        raise ConfigError(f"Config file not found: {path}{shipped_copy_hint(path)}") from None
    except IsADirectoryError:
        raise ConfigError(f"Config path is a directory, not a file: {path}") from None
    except OSError as exc:
        raise ConfigError(f"Could not read config file {path}: {exc.strerror or exc}") from None
