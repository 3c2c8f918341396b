"""Argument parsing shared by the GTP command handlers, with KataGo's acceptance rules and messages.

KataGo reads numbers with C++ streams (``istringstream >> int``): an optional
sign, digits, nothing after them, and a value that fits the type. Doubles
accept ``1``, ``1.5``, ``.5``, ``1e3`` but not ``inf``, ``nan`` or hex.
"""
from __future__ import annotations

import math
import re

from katacli.gtp.errors import GtpError

INT32_MIN = -(1 << 31)
INT32_MAX = (1 << 31) - 1
INT64_MIN = -(1 << 63)
INT64_MAX = (1 << 63) - 1
MAX_INT_DIGITS = len(str(INT64_MAX))  # no C++ integer has more

# TimeControls::MAX_USER_INPUT_TIME: the largest time a controller may give.
MAX_USER_INPUT_TIME = 1e25
# time_left tolerates a slightly negative clock (a controller's rounding).
MIN_TIME_LEFT = -10.0
MAX_TIME_LEFT_STONES = 100000
MAX_OVERTIME_STONES_OR_PERIODS = 1000000

_WHITESPACE = " \t\r\n\v\f"
_INT_RE = re.compile(r"[+-]?[0-9]+")  # ASCII digits only, as C++ reads them
_DOUBLE_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def parse_int(text: str, minimum: int = INT32_MIN, maximum: int = INT32_MAX) -> int | None:
    """A C++ ``int`` (32-bit unless told otherwise), or None."""
    stripped = text.strip(_WHITESPACE)
    if not _INT_RE.fullmatch(stripped):
        return None
    digits = stripped.lstrip("+-").lstrip("0") or "0"
    if len(digits) > MAX_INT_DIGITS:  # out of range, and int() refuses huge texts
        return None
    value = int(stripped[0] + digits if stripped[0] in "+-" else digits)
    return value if minimum <= value <= maximum else None


def parse_int64(text: str) -> int | None:
    return parse_int(text, INT64_MIN, INT64_MAX)


def parse_double(text: str) -> float | None:
    """A C++ ``double``, or None (overflow to infinity fails as in C++)."""
    stripped = text.strip(_WHITESPACE)
    if not _DOUBLE_RE.fullmatch(stripped):
        return None
    value = float(stripped)
    return None if math.isinf(value) else value


def parse_bool(text: str) -> bool | None:
    """``true`` / ``false`` in any case, or None."""
    lowered = text.strip(_WHITESPACE).lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    return None


def format_cpp_double(value: float) -> str:
    """A double as a default C++ ostream prints it (``%g``: 6 significant digits)."""
    return "%g" % value


# --------------------------------------------------------------------------- time arguments


def _time_is_valid(value: float, allow_negative: bool) -> bool:
    low = -MAX_USER_INPUT_TIME if allow_negative else 0.0
    return not math.isnan(value) and low <= value <= MAX_USER_INPUT_TIME


def parse_time(args: list[str], index: int, description: str, allow_negative: bool = False) -> float:
    """A time argument of time_settings / kgs-time_settings / kata-time_settings."""
    value = parse_double(args[index]) if index < len(args) else None
    if value is None:
        raise GtpError(f"Expected float for {description} as argument {index}")
    if not _time_is_valid(value, allow_negative):
        raise GtpError(f"{description} is an invalid value: {args[index]}")
    return value


def parse_overtime_count(args: list[str], index: int, what: str) -> int:
    """Byo-yomi stones or periods (``what`` is "stones" or "periods")."""
    value = parse_int(args[index]) if index < len(args) else None
    if value is None:
        raise GtpError(f"Expected int for byo-yomi overtime {what} as argument {index}")
    if not 0 <= value <= MAX_OVERTIME_STONES_OR_PERIODS:
        raise GtpError(f"byo-yomi overtime {what} is an invalid value: {args[index]}")
    return value
