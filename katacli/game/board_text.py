"""``showboard``: the board diagram and game summary in KataGo's layout.

::

    MoveNum: 3 HASH: 5C1E...
       A B C D E F G H J
     9 . . . . . . . . .
     ...
     5 . . . . X1. . . .
    Next player: White
    Rules: {"friendlyPassOk":false,...,"komi":7.5,...}
    B stones captured: 0
    W stones captured: 0

The last three moves are marked 1 (oldest) to 3 (newest) right after their
stone. The hash is KataGo's for the same position (katacli draws KataGo's Zobrist numbers).
"""
from __future__ import annotations

from katacli.game.coords import COLUMN_LETTERS, format_color

EMPTY = 0
STONE_CHARS = {EMPTY: ".", 1: "X", 2: "O"}
MARK_CHAR = "@"
MARKED_RECENT_MOVES = 3
MAX_LEN_WITH_COORDS = 50
HEX_DIGITS_PER_HALF = 16
HALF_MASK = (1 << 64) - 1


def format_hash(value: int) -> str:
    """A 128-bit hash as KataGo prints it: high then low 64 bits, 32 upper-case hex digits."""
    return f"{(value >> 64) & HALF_MASK:0{HEX_DIGITS_PER_HALF}X}{value & HALF_MASK:0{HEX_DIGITS_PER_HALF}X}"


def _column_label(x: int) -> str:
    if x < len(COLUMN_LETTERS):
        return " " + COLUMN_LETTERS[x]
    return "A" + COLUMN_LETTERS[x - len(COLUMN_LETTERS)]


def board_diagram(colors: list[list[int]], moves: list, pos_hash: int, mark: tuple | None = None) -> list[str]:
    """KataGo's printBoard lines (without the trailing blank line). ``moves``: (player, point) history;
    ``mark``: an empty point drawn as '@' (the genmove log's chosen move)."""
    y_size = len(colors)
    x_size = len(colors[0]) if colors else 0
    recent = [xy for _, xy in moves[-MARKED_RECENT_MOVES:]]
    lines = [f"MoveNum: {len(moves)} HASH: {format_hash(pos_hash)}"]
    show_coords = x_size <= MAX_LEN_WITH_COORDS and y_size <= MAX_LEN_WITH_COORDS
    if show_coords:
        lines.append("  " + "".join(_column_label(x) for x in range(x_size)))
    for y in range(y_size):
        row = f"{y_size - y:2d} " if show_coords else ""
        for x in range(x_size):
            row += MARK_CHAR if mark == (x, y) and colors[y][x] == EMPTY else STONE_CHARS.get(colors[y][x], "#")
            recent_index = next((i for i, xy in enumerate(recent) if xy == (x, y)), None)
            if recent_index is not None:
                row += str(recent_index + 1)
            elif x < x_size - 1:
                row += " "
        lines.append(row)
    return lines


def showboard_text(state, rules_json_with_komi: str) -> str:
    """The whole showboard response for a GameState."""
    board = state.board()
    lines = board_diagram(state.colors(), state.moves, board.pos_hash)
    lines.append(f"Next player: {format_color(state.next_player, long=True)}")
    if state.encore_phase > 0:
        lines.append(f"Game phase: {state.encore_phase}")
    lines.append(f"Rules: {rules_json_with_komi}")
    if state.white_handicap_bonus_score != 0:
        lines.append(f"Handicap bonus score: {state.white_handicap_bonus_score:g}")
    black_captured, white_captured = board.captures
    lines.append(f"B stones captured: {black_captured}")
    lines.append(f"W stones captured: {white_captured}")
    return "\n".join(lines)
