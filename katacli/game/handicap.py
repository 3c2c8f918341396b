"""KataGo's fixed handicap placement (PlayUtils::placeFixedHandicap): where `fixed_handicap` puts the stones,
and where a Fox SGF's handicap stones are (the server writes HA without the stones)."""
from __future__ import annotations

from katacli.game.coords import Point

MIN_FIXED_HANDICAP = 2
MAX_FIXED_HANDICAP = 9
# Boards up to this size put the corner stones on the third line, larger ones on the fourth.
SMALL_BOARD_HANDICAP_LIMIT = 12
# (column index, row index) into the edge / far-edge / centre lines: two opposite corners first, then the
# others, the sides, the centre.
_ORDER = {
    2: [(0, 1), (1, 0)],
    3: [(0, 1), (1, 0), (0, 0)],
    4: [(0, 1), (1, 0), (0, 0), (1, 1)],
    5: [(0, 1), (1, 0), (0, 0), (1, 1), (2, 2)],
    6: [(0, 1), (1, 0), (0, 0), (1, 1), (0, 2), (1, 2)],
    7: [(0, 1), (1, 0), (0, 0), (1, 1), (0, 2), (1, 2), (2, 2)],
    8: [(0, 1), (1, 0), (0, 0), (1, 1), (0, 2), (1, 2), (2, 0), (2, 1)],
    9: [(0, 1), (1, 0), (0, 0), (1, 1), (0, 2), (1, 2), (2, 0), (2, 1), (2, 2)],
}


def handicap_stones_counting_first_moves(state) -> int:
    """A game's handicap as KataGo counts it for an SGF's HA[] and for resigning: Black's set-up stones and
    its moves before White's first, whatever the game itself assumed
    (setAssumeMultipleStartingBlackMovesAreHandicap). ``state``: a GameState, left as it is."""
    probe = state.copy()
    probe.set_assume_multiple_starting_black_moves_are_handicap(True)
    return probe.num_handicap_stones()


class HandicapError(ValueError):
    """A fixed handicap the board does not allow (KataGo's messages)."""


def fixed_handicap_points(x_size: int, y_size: int, count: int) -> list[Point]:
    """KataGo's fixed handicap points for this board size, or HandicapError."""
    if x_size < 7 or y_size < 7:
        raise HandicapError("Board is too small for fixed handicap")
    if (x_size % 2 == 0 or y_size % 2 == 0) and count > 4:
        raise HandicapError("Fixed handicap > 4 is not allowed on boards with even dimensions")
    if (x_size <= 7 or y_size <= 7) and count > 4:
        raise HandicapError("Fixed handicap > 4 is not allowed on boards with size 7")
    if count < MIN_FIXED_HANDICAP:
        raise HandicapError("Fixed handicap < 2 is not allowed")
    if count > MAX_FIXED_HANDICAP:
        raise HandicapError("Fixed handicap > 9 is not allowed")

    def line_coords(size: int) -> tuple[int, int, int]:
        edge = 2 if size <= SMALL_BOARD_HANDICAP_LIMIT else 3
        return edge, size - 1 - edge, size // 2

    xs, ys = line_coords(x_size), line_coords(y_size)
    return [(xs[i], ys[j]) for i, j in _ORDER[count]]
