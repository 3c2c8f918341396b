"""GTP vertices and colours, parsed and printed as KataGo does.

Internal coordinates are KataGo's: ``(x, y)`` with x the column from the left
and y the row from the TOP (y = 0 is the top row). The GTP row number is
``y_size - y``, so "A1" on a 19x19 board is ``(0, 18)``.

Columns are letters A..Z without I (25 of them). Wider boards use two letters,
first letter naming the block of 25: column 25 is "AA", 26 is "AB", 50 is "BA".
Boards wider than 25*25 print the machine form ``(x,y)``, which is also
accepted as input.

Every coordinate system in katacli, and where to convert:

=====================  =====================================  =========================================
system                 A1 on 19x19 / pass                     conversion
=====================  =====================================  =========================================
GTP vertex             ``"A1"`` / ``"pass"``                  :func:`parse_vertex`, :func:`format_vertex`
point ``(x, y)``       ``(0, 18)`` / ``None``                 the Python layers' own form
flat (policy) index    ``18 * 19 + 0 = 342`` / ``361``        :func:`flat_index`, :func:`point_of_flat`
                       (row-major from the top, pass last;
                       on a padded grid use its row length)
core ``Loc``           ``(y + 1) * (x_size + 1) + x + 1`` /   inside katacli._core only (board.pxd);
                       ``PASS_LOC`` = 1                       Python never sees a Loc
=====================  =====================================  =========================================
"""
from __future__ import annotations

import re
from katacli._core.constants import BLACK, WHITE  # noqa: F401  (the core's numbers, defined once)


# GTP column letters: the alphabet without I.
COLUMN_LETTERS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
NUM_COLUMN_LETTERS = len(COLUMN_LETTERS)
# Widest board whose columns still fit in two letters; wider ones print "(x,y)".
MAX_LETTER_BOARD_WIDTH = NUM_COLUMN_LETTERS * NUM_COLUMN_LETTERS

PASS_SPELLINGS = ("pass", "pss")  # KataGo also takes the odd "pss"

_WHITESPACE = " \t\r\n\v\f"
_INT_RE = re.compile(r"[+-]?\d+")

Point = tuple[int, int]


class CoordError(ValueError):
    """A vertex or colour that cannot be parsed or is not on the board."""


class OffBoardError(CoordError):
    """A well-formed machine vertex ``(x,y)`` outside the board.

    KataGo parses these and then rejects the move as illegal, so a GTP layer
    that wants its exact replies answers "illegal move" for this subclass and
    "Could not parse vertex" for a plain CoordError.
    """


def _column_index(letter: str) -> int | None:
    index = COLUMN_LETTERS.find(letter.upper())
    return None if index < 0 or not letter.isascii() else index


def _parse_int(text: str) -> int | None:
    text = text.strip(_WHITESPACE)
    return int(text) if _INT_RE.fullmatch(text) else None


def is_on_board(xy: Point, x_size: int, y_size: int) -> bool:
    x, y = xy
    return 0 <= x < x_size and 0 <= y < y_size


def parse_vertex(text: str, x_size: int, y_size: int) -> Point | None:
    """A GTP vertex to (x, y) with y from the top, or None for pass. Raises CoordError."""
    s = text.strip(_WHITESPACE)
    if s.lower() in PASS_SPELLINGS:
        return None
    if len(s) < 2:
        raise CoordError(f"Could not parse vertex: '{text}'")
    if s[0] == "(":
        return _parse_machine_vertex(text, s, x_size, y_size)

    x = _column_index(s[0])
    if x is None:
        raise CoordError(f"Could not parse vertex: '{text}'")
    row_text = s[1:]
    if s[1].isascii() and s[1].isalpha():
        second = _column_index(s[1])
        if second is None:
            raise CoordError(f"Could not parse vertex: '{text}'")
        x = (x + 1) * NUM_COLUMN_LETTERS + second
        row_text = s[2:]
    row = _parse_int(row_text)
    if row is None:
        raise CoordError(f"Could not parse vertex: '{text}'")
    y = y_size - row
    if not is_on_board((x, y), x_size, y_size):
        raise CoordError(f"Vertex '{text}' is off the {x_size}x{y_size} board")
    return (x, y)


def _parse_machine_vertex(text: str, s: str, x_size: int, y_size: int) -> Point:
    if not s.endswith(")"):
        raise CoordError(f"Could not parse vertex: '{text}'")
    pieces = s[1:-1].split(",")
    coords = [_parse_int(p) for p in pieces]
    if len(coords) != 2 or None in coords:
        raise CoordError(f"Could not parse vertex: '{text}'")
    xy = (coords[0], coords[1])
    if not is_on_board(xy, x_size, y_size):
        raise OffBoardError(f"Vertex '{text}' is off the {x_size}x{y_size} board")
    return xy


def format_vertex(xy: Point | None, x_size: int, y_size: int) -> str:
    """(x, y) or None (pass) as KataGo prints it; off-board points print in the machine form."""
    if xy is None:
        return "pass"
    x, y = xy
    if x_size > MAX_LETTER_BOARD_WIDTH or not is_on_board(xy, x_size, y_size):
        return f"({x},{y})"
    row = y_size - y
    if x < NUM_COLUMN_LETTERS:
        return f"{COLUMN_LETTERS[x]}{row}"
    block, column = divmod(x, NUM_COLUMN_LETTERS)
    return f"{COLUMN_LETTERS[block - 1]}{COLUMN_LETTERS[column]}{row}"


def flat_index(xy: Point | None, x_size: int, y_size: int) -> int:
    """The flat policy index of a point (row-major from the top row), or x_size * y_size for a pass."""
    return x_size * y_size if xy is None else xy[1] * x_size + xy[0]


def point_of_flat(index: int, x_size: int, y_size: int) -> Point | None:
    """The point of a flat policy index, None for the pass index (x_size * y_size)."""
    if index == x_size * y_size:
        return None
    return (index % x_size, index // x_size)


def parse_color(text: str) -> int:
    """b/black -> 1, w/white -> 2, any case (KataGo's PlayerIO::tryParsePlayer)."""
    lowered = text.lower()
    if lowered in ("b", "black"):
        return BLACK
    if lowered in ("w", "white"):
        return WHITE
    raise CoordError(f"Could not parse color: '{text}'")


def format_color(color: int, long: bool = False) -> str:
    """1 -> "B" / "Black", 2 -> "W" / "White"."""
    if color == BLACK:
        return "Black" if long else "B"
    if color == WHITE:
        return "White" if long else "W"
    raise CoordError(f"Not a player colour: {color!r}")


def opponent(color: int) -> int:
    if color not in (BLACK, WHITE):
        raise CoordError(f"Not a player colour: {color!r}")
    return BLACK + WHITE - color
