"""Wire-level pieces of KataGo's JSON analysis protocol: serialisation, rounding, error shapes.

KataGo writes every object with nlohmann::json, whose objects are ordered maps:
keys come out sorted, without spaces, and non-finite numbers become ``null``.
Floats are printed in their shortest round-trip form, as Python's ``repr`` does,
so :func:`dumps` reproduces KataGo's lines byte for byte given the same values.

Errors and warnings have three shapes::

    {"error": MESSAGE}                                   (no usable id)
    {"error": MESSAGE, "field": FIELD, "id": ID}         (a bad query field)
    {"field": FIELD, "id": ID, "warning": MESSAGE}       (the query still runs)
"""
from __future__ import annotations

import json
import math
from typing import Any, Optional

import numpy as np

from katacli._core.rounding import round_dynamic_many as _round_dynamic_many

# KataGo rounds most reported numbers to this many digits after the leading one.
OUTPUT_PRECISION = 8
# Ownership values are rounded to a fixed 1e-6 grid instead.
OWNERSHIP_ROUNDING_SCALE = 1_000_000.0
# Values this close to zero are printed as they are (KataGo's roundDynamic).
ROUNDING_ZERO_THRESHOLD = 1e-60
# Integers of up to this many digits are far inside a double's range (checked only past it).
MAX_EXACT_INT_DIGITS = 300


class QueryError(Exception):
    """A query field KataGo would refuse; becomes {"error", "field", "id"}."""

    def __init__(self, field: str, message: str):
        super().__init__(message)
        self.field = field
        self.message = message


def _finite_or_none(value: Any) -> Any:
    """nlohmann::json writes NaN and infinities as null; Python would write NaN."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite_or_none(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_or_none(v) for v in value]
    return value


def dumps(obj: Any) -> str:
    """One JSON line the way KataGo prints it: sorted keys, no spaces, null for non-finite numbers."""
    try:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    except ValueError:
        return json.dumps(_finite_or_none(obj), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _reject_constant(name: str):
    raise ValueError(f"invalid literal '{name}'")


class NumberOverflowError(ValueError):
    """A JSON number beyond a double's range: KataGo's parser refuses the whole line (Python reads inf)."""

    def __init__(self, text: str):
        super().__init__(f"number overflow parsing '{text}'")


def _checked_float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise NumberOverflowError(text)
    return value


def _checked_int(text: str) -> int:
    # KataGo holds integers past 64 bits as doubles; float() reads any length (int() stops at 4,300 digits)
    if len(text) > MAX_EXACT_INT_DIGITS and math.isinf(float(text)):
        raise NumberOverflowError(text)
    return int(text)


# A byte order mark, which KataGo's JSON parser skips at the start of a line (Windows tools write one).
BYTE_ORDER_MARK = "\ufeff"
HIGH_SURROGATES = range(0xD800, 0xDC00)
LOW_SURROGATES = range(0xDC00, 0xE000)


class SurrogateError(ValueError):
    """A \\u escape of half a UTF-16 pair without its other half: KataGo's parser refuses it (Python's
    would give a string that cannot be written back as UTF-8)."""

    def __init__(self, column: int, problem: str, last_read: str):
        super().__init__(problem)
        self.column, self.problem, self.last_read = column, problem, last_read   # column: 1-based


def _check_surrogate_pairs(line: str) -> None:
    """Raise SurrogateError at the first unpaired surrogate escape of a (valid JSON) line, with the
    column and the text read that nlohmann::json reports."""
    in_string, start, i = False, 0, 0
    while i < len(line):
        char = line[i]
        if char == '"':
            in_string, start = not in_string, i
        elif char == "\\" and in_string:
            if line[i + 1] != "u":
                i += 2
                continue
            code = int(line[i + 2:i + 6], 16)
            if code in LOW_SURROGATES:
                last = i + 5
                raise SurrogateError(last + 1, "surrogate U+DC00..U+DFFF must follow U+D800..U+DBFF", line[start:last + 1])
            if code in HIGH_SURROGATES:
                follow = line[i + 6:i + 12]
                if follow[:2] == "\\u" and int(follow[2:], 16) in LOW_SURROGATES:
                    i += 12
                    continue
                last = i + 11 if follow[:2] == "\\u" else i + 7 if follow[:1] == "\\" else i + 6
                raise SurrogateError(last + 1, "surrogate U+D800..U+DBFF must be followed by U+DC00..U+DFFF",
                                     line[start:last + 1])
            i += 6
            continue
        i += 1


def loads(line: str) -> Any:
    """Parse a query line as strict JSON (NaN / Infinity are not JSON, nor half a surrogate pair, as for
    KataGo); a leading byte order mark is skipped."""
    if line.startswith(BYTE_ORDER_MARK):
        line = line[len(BYTE_ORDER_MARK):]
    value = json.loads(line, parse_constant=_reject_constant, parse_float=_checked_float, parse_int=_checked_int)
    if "\\u" in line:
        _check_surrogate_pairs(line)
    return value


def parse_error_message(line: str, exc: Exception) -> str:
    """The general error for a line that is not JSON, in the shape of KataGo's message."""
    if isinstance(exc, NumberOverflowError):
        return f"[json.exception.out_of_range.406] {exc} - could not parse input line as json request: {line}"
    if isinstance(exc, SurrogateError):
        detail = (f"parse error at line 1, column {exc.column}: syntax error while parsing value - invalid string: "
                  f"{exc.problem}; last read: '{exc.last_read}'")
    elif isinstance(exc, json.JSONDecodeError):
        detail = f"parse error at line {exc.lineno}, column {exc.colno}: {exc.msg}"
    else:
        detail = f"parse error: {exc}"
    return f"[json.exception.parse_error.101] {detail} - could not parse input line as json request: {line}"


def round_dynamic(value: float, precision: int = OUTPUT_PRECISION) -> float:
    """KataGo's Global::roundDynamic: keep about ``precision`` digits after the leading one."""
    value = float(value)
    magnitude = abs(value)
    # (NaN fails both comparisons.) A response rounds ~1,200 numbers, so round_half_away is inlined:
    # C's round() of value * scale is copysign(floor(|value| * scale + 0.5), value), scale being positive.
    if not ROUNDING_ZERO_THRESHOLD < magnitude < math.inf:
        return value
    rounding_magnitude = math.floor(math.log10(magnitude)) - precision
    if rounding_magnitude >= 0:
        return math.copysign(math.floor(magnitude + 0.5), value)
    scale = 10.0 ** (-rounding_magnitude)
    return math.copysign(math.floor(magnitude * scale + 0.5), value) / scale


def round_dynamic_many(values, precision: int = OUTPUT_PRECISION) -> list:
    """[round_dynamic(v, precision) for v in values] (a sequence, nested sequences or an array, flattened),
    computed in C (katacli/_core/rounding: the same steps, the same C library)."""
    return _round_dynamic_many(values, precision, ROUNDING_ZERO_THRESHOLD)


def round_static(values, scale: float = OWNERSHIP_ROUNDING_SCALE) -> list:
    """KataGo's Global::roundStatic over a sequence (ownership arrays): round(x * scale) / scale."""
    # C's round() element-wise, in float64 as round_half_away computes it (NaN and infinities pass through).
    scaled = np.asarray(values, dtype=np.float64) * scale
    return (np.copysign(np.floor(np.abs(scaled) + 0.5), scaled) / scale).tolist()


def error(message: str) -> dict:
    return {"error": message}


def field_error(query_id: str, field: str, message: str) -> dict:
    return {"error": message, "field": field, "id": query_id}


def field_warning(query_id: str, field: str, message: str) -> dict:
    return {"field": field, "id": query_id, "warning": message}


def id_of(query: Any) -> Optional[str]:
    """The query's id when it is a string (KataGo requires that), else None."""
    if isinstance(query, dict) and isinstance(query.get("id"), str):
        return query["id"]
    return None
