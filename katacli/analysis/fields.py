"""Typed readers for query fields, with KataGo's error messages.

Each reader takes the JSON object and a field name, and returns the value or
raises :class:`~katacli.analysis.protocol.QueryError` naming that field.
JSON types are checked as strictly as KataGo's nlohmann::json checks them:
an "integer" must be written without a fraction or exponent, booleans are
never numbers, and a "number" must be finite.
"""
from __future__ import annotations

import math
from typing import Any, Optional

from katacli.analysis.protocol import QueryError
from katacli.game.coords import BLACK, WHITE, CoordError, parse_vertex

Point = Optional[tuple]

PLAYER_MESSAGE = 'Must be "b" or "w"'
MOVES_MESSAGE = 'Must be an array of pairs of the form: ["b" or "w", GTP board vertex]'
LOCS_MESSAGE = "Must be an array of GTP board vertices"
BOOLEAN_MESSAGE = "Must be a boolean"


def is_integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def read_int(obj: dict, field: str, minimum: int, maximum: int, message: str) -> int:
    value = obj.get(field)
    if not is_integer(value) or not minimum <= value <= maximum:
        raise QueryError(field, message)
    return value


def read_number(obj: dict, field: str, minimum: float, maximum: float, message: str) -> float:
    value = obj.get(field)
    if not is_number(value):
        raise QueryError(field, message)
    value = float(value) if not isinstance(value, float) else value
    if not math.isfinite(value) or not minimum <= value <= maximum:
        raise QueryError(field, message)
    return value


def read_bool(obj: dict, field: str) -> bool:
    value = obj.get(field)
    if not isinstance(value, bool):
        raise QueryError(field, BOOLEAN_MESSAGE)
    return value


def parse_player(text: Any) -> Optional[int]:
    """"b" / "black" / "w" / "white" in any case (KataGo's PlayerIO::tryParsePlayer), else None."""
    if not isinstance(text, str):
        return None
    lowered = text.lower()
    if lowered in ("b", "black"):
        return BLACK
    if lowered in ("w", "white"):
        return WHITE
    return None


def read_player(obj: dict, field: str) -> int:
    player = parse_player(obj.get(field))
    if player is None:
        raise QueryError(field, PLAYER_MESSAGE)
    return player


def parse_location(text: str, x_size: int, y_size: int, allow_pass: bool) -> Point:
    """A GTP vertex ("D4", "AA1", "(3,15)", "pass") as (x, y) / None; QueryError-free, raises CoordError."""
    point = parse_vertex(text, x_size, y_size)
    if point is None and not allow_pass:
        raise CoordError(f"pass is not allowed here: {text}")
    return point


def read_locations(obj: dict, field: str, x_size: int, y_size: int, allow_pass: bool = True) -> list:
    """An array of vertices (avoidMoves / allowMoves ``moves``)."""
    values = obj.get(field)
    if not isinstance(values, list):
        raise QueryError(field, LOCS_MESSAGE)
    points = []
    for element in values:
        if not isinstance(element, str):
            raise QueryError(field, LOCS_MESSAGE)
        try:
            points.append(parse_location(element, x_size, y_size, allow_pass))
        except CoordError:
            raise QueryError(field, f"Could not parse board location: {element}") from None
    return points


def read_moves(obj: dict, field: str, x_size: int, y_size: int, allow_pass: bool) -> list:
    """An array of [player, vertex] pairs (``moves``, ``initialStones``) as (player, point) tuples."""
    values = obj.get(field)
    if not isinstance(values, list):
        raise QueryError(field, MOVES_MESSAGE)
    moves = []
    for element in values:
        if not isinstance(element, list) or len(element) != 2:
            raise QueryError(field, MOVES_MESSAGE)
        player_text, vertex_text = element
        if not isinstance(player_text, str) or not isinstance(vertex_text, str):
            raise QueryError(field, MOVES_MESSAGE)
        player = parse_player(player_text)
        if player is None:
            raise QueryError(field, f"Could not parse player: {player_text}")
        try:
            point = parse_location(vertex_text, x_size, y_size, allow_pass)
        except CoordError:
            raise QueryError(field, f"Could not parse board location: {vertex_text}") from None
        moves.append((player, point))
    return moves


def read_int_list(obj: dict, field: str, message: str) -> list:
    """An array of whole numbers (analyzeTurns, priorities, turnNumbers); fractions are truncated as C++ does."""
    values = obj.get(field)
    if not isinstance(values, list) or not all(is_number(v) and math.isfinite(v) for v in values):
        raise QueryError(field, message)
    return [int(v) for v in values]
