"""Positions self-play games may start from: KataGo's Sgf::PositionSample and its JSON lines.

A sample is a board, the player to move, a few moves to replay on it (recent history,
so ko and the network's history inputs are right), the turn number of the board, and
optionally a hint move worth studying. ``weight`` is its relative chance to be drawn,
``training_weight`` scales the rows of games started from it.

One sample per line of ``*.startposes.txt`` / ``*.hintposes.txt`` / ``*.bookposes.txt``
files, in KataGo's format (keys sorted, no spaces), e.g.::

  {"board":"X../.O./.../","hintLoc":"null","initialTurnNumber":2,"moveLocs":["A1"],
   "movePlas":["B"],"nextPla":"B","weight":1.0,"xSize":3,"ySize":3}

``board`` lists rows top to bottom, each ended by ``/``; ``X`` black, ``O`` white, ``.`` empty.
``weight``, ``metadata`` and ``trainingWeight`` may be left out (1.0, "", 1.0).
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from typing import Optional

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli.game.coords import (
    BLACK,
    WHITE,
    CoordError,
    Point,
    format_color,
    format_vertex,
    opponent,
    parse_color,
    parse_vertex,
)
from katacli.game.sgf import MAX_BOARD_LEN

EMPTY = 0
MIN_BOARD_LEN = 2
_STONE_CHARS = {EMPTY: ".", BLACK: "X", WHITE: "O"}
# What KataGo's Board::parseBoard reads as empty, black and white points.
_EMPTY_CHARS, _BLACK_CHARS, _WHITE_CHARS = ".*,` ", "xX", "oO"
ROW_DELIMITER = "/"
# hintLoc spellings KataGo reads as "no hint" (compared lowercased and trimmed).
_NO_HINT_SPELLINGS = ("", "''", '""', "null", "'null'", '"null"')
NO_HINT_TEXT = "null"
# KataGo stops a game whose training weight is outside (0, this).
MAX_TRAINING_WEIGHT = 5.0

Move = tuple[int, Optional[Point]]


class PositionLineError(ValueError):
    """A line that is not a readable position sample."""


@dataclass(frozen=True)
class PositionSample:
    x_size: int
    y_size: int
    stones: tuple[tuple[int, ...], ...]     # rows top to bottom: EMPTY, BLACK or WHITE
    next_player: int                        # to move on `stones` (before `moves`)
    moves: tuple[Move, ...]                 # (player, point or None for pass), replayed before the game
    initial_turn_number: int                # turn number of `stones`
    has_hint: bool = False
    hint_move: Optional[Point] = None       # the hinted move after `moves` (None: pass), if has_hint
    weight: float = 1.0                     # relative chance to be drawn
    metadata: str = ""
    training_weight: float = 1.0            # scales the training rows of games from this sample

    @property
    def current_turn_number(self) -> int:
        """Turn number after the moves (KataGo's getCurrentTurnNumber)."""
        return max(0, self.initial_turn_number + len(self.moves))

    def board(self) -> GoBoard:
        diagram = "\n".join("".join(_STONE_CHARS[c] for c in row) for row in self.stones)
        return GoBoard.from_diagram(diagram)

    def color_flipped(self) -> "PositionSample":
        """Black and White exchanged, on the board and in the moves."""
        swap = {EMPTY: EMPTY, BLACK: WHITE, WHITE: BLACK}
        return replace(self, stones=tuple(tuple(swap[c] for c in row) for row in self.stones),
                       next_player=opponent(self.next_player),
                       moves=tuple((opponent(pla), xy) for pla, xy in self.moves))

    def game_state(self, rules_tuple: tuple) -> tuple[GameState, bool]:
        """The position after the sample's moves under `rules_tuple`, and whether the hint still applies.

        As KataGo, replay stops at the first move these rules forbid (a superko or suicide rule
        the source did not have) or once the game is over; the hint then no longer fits."""
        state = GameState(self.x_size, self.y_size, rules_tuple, self.next_player, board=self.board())
        for pla, xy in self.moves:
            if state.is_game_finished or not state.is_legal(xy, pla):
                return state, False
            state.play(xy, pla)
        return state, self.has_hint

    # ---- KataGo's JSON line
    def to_json_line(self) -> str:
        data = {
            "xSize": self.x_size,
            "ySize": self.y_size,
            "board": "".join("".join(_STONE_CHARS[c] for c in row) + ROW_DELIMITER for row in self.stones),
            "nextPla": format_color(self.next_player),
            "moveLocs": [format_vertex(xy, self.x_size, self.y_size) for _, xy in self.moves],
            "movePlas": [format_color(pla) for pla, _ in self.moves],
            "initialTurnNumber": self.initial_turn_number,
            "hintLoc": format_vertex(self.hint_move, self.x_size, self.y_size) if self.has_hint else NO_HINT_TEXT,
            "weight": float(self.weight),
        }
        if self.metadata:
            data["metadata"] = self.metadata
        if self.training_weight != 1.0:
            data["trainingWeight"] = float(self.training_weight)
        return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json_line(cls, line: str) -> "PositionSample":
        """Parse one line; PositionLineError says what is wrong."""
        try:
            data = json.loads(line)
        except ValueError as e:
            raise PositionLineError(f"not JSON: {e}") from None
        if not isinstance(data, dict):
            raise PositionLineError("not a JSON object")
        try:
            return _sample_of(data)
        except (KeyError, TypeError) as e:
            raise PositionLineError(f"missing or mistyped field {e}") from None
        except CoordError as e:
            raise PositionLineError(str(e)) from None


def _field(data: dict, key: str, kind: type):
    value = data[key]
    if kind is float and isinstance(value, int) and not isinstance(value, bool):
        value = float(value)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise TypeError(f"'{key}' (expected {kind.__name__})")
    return value


def _parse_stones(text: str, x_size: int, y_size: int) -> tuple[tuple[int, ...], ...]:
    """Board::parseBoard: rows split by '/', an optional column-label row, row numbers in front,
    stones one per character or separated by one space."""
    lines = text.strip().split(ROW_DELIMITER)
    if lines and lines[-1] == "":
        lines.pop()
    if len(lines) == y_size + 1 and lines[0].startswith("A"):
        lines.pop(0)
    if len(lines) != y_size:
        raise PositionLineError(f"board has {len(lines)} rows, ySize is {y_size}")
    rows = []
    for line in lines:
        line = line.strip().lstrip("0123456789").strip()
        if len(line) not in (x_size, 2 * x_size - 1):
            raise PositionLineError(f"board row '{line}' does not fit xSize {x_size}")
        step = 1 if len(line) == x_size else 2
        row = []
        for ch in line[::step]:
            if ch in _BLACK_CHARS:
                row.append(BLACK)
            elif ch in _WHITE_CHARS:
                row.append(WHITE)
            elif ch in _EMPTY_CHARS:
                row.append(EMPTY)
            else:
                raise PositionLineError(f"board has the character '{ch}'")
        rows.append(tuple(row))
    return tuple(rows)


def _sample_of(data: dict) -> PositionSample:
    x_size, y_size = _field(data, "xSize", int), _field(data, "ySize", int)
    if not (MIN_BOARD_LEN <= x_size <= MAX_BOARD_LEN and MIN_BOARD_LEN <= y_size <= MAX_BOARD_LEN):
        raise PositionLineError(f"board size {x_size}x{y_size} is not supported "
                                f"({MIN_BOARD_LEN}..{MAX_BOARD_LEN} per side)")
    stones = _parse_stones(_field(data, "board", str), x_size, y_size)
    locs, plas = _field(data, "moveLocs", list), _field(data, "movePlas", list)
    if len(locs) != len(plas):
        raise PositionLineError(f"{len(locs)} moveLocs but {len(plas)} movePlas")
    if not all(isinstance(v, str) for v in locs + plas):
        raise TypeError("'moveLocs'/'movePlas' (expected strings)")
    moves = tuple((parse_color(pla), parse_vertex(loc, x_size, y_size)) for loc, pla in zip(locs, plas))
    hint_text = _field(data, "hintLoc", str)
    has_hint = hint_text.strip().lower() not in _NO_HINT_SPELLINGS
    hint_move = parse_vertex(hint_text, x_size, y_size) if has_hint else None
    weight = _field(data, "weight", float) if "weight" in data else 1.0
    training_weight = _field(data, "trainingWeight", float) if "trainingWeight" in data else 1.0
    if not (math.isfinite(weight) and weight >= 0.0):
        raise PositionLineError(f"weight {weight} must be a finite number >= 0")
    if not (0.0 < training_weight < MAX_TRAINING_WEIGHT):
        raise PositionLineError(f"trainingWeight {training_weight} must be above 0 and below {MAX_TRAINING_WEIGHT:g}")
    sample = PositionSample(
        x_size=x_size, y_size=y_size, stones=stones, next_player=parse_color(_field(data, "nextPla", str)),
        moves=moves, initial_turn_number=_field(data, "initialTurnNumber", int), has_hint=has_hint,
        hint_move=hint_move, weight=weight, metadata=_field(data, "metadata", str) if "metadata" in data else "",
        training_weight=training_weight,
    )
    try:
        sample.board()
    except ValueError as e:  # a group without liberties
        raise PositionLineError(f"board: {e}") from None
    return sample
