"""avoid / allow move lists (lz-analyze, kata-analyze, the analysis engine's avoidMoves / allowMoves).

``avoid PLAYER MOVES UNTIL_DEPTH`` forbids those moves to PLAYER for the first
UNTIL_DEPTH plies below the root (depth 0 is the root move itself);
``allow PLAYER MOVES UNTIL_DEPTH`` forbids every *other* move (pass included).
As in KataGo, one command may not mix avoid and allow for a player, and may
hold at most one allow per player. A later avoid for the same point overrides
an earlier one.

Points are ``(x, y)`` with y = 0 the top row, or ``None`` for pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Optional

from katacli._core.search_tree import MAX_ARR_SIZE_PY as MAX_ARR_SIZE
from katacli._core.constants import BLACK, WHITE, PASS_LOC  # noqa: F401  (the core's numbers, defined once)



class RestrictionError(ValueError):
    """Inconsistent avoid / allow lists."""


def loc_of(point, x_size: int) -> int:
    """The core's board index of (x, y), or of pass for None."""
    if point is None:
        return PASS_LOC
    x, y = point
    return (x + 1) + (y + 1) * (x_size + 1)


@dataclass
class MoveRestrictions:
    """Per-player 'until depth' arrays for the search, built from avoid / allow requests."""

    x_size: int
    y_size: int
    _until: dict = field(default_factory=dict)      # player -> list[int] by board index
    _kind: dict = field(default_factory=dict)       # player -> "avoid" | "allow"

    def _check(self, player: int, points: Iterable, until_depth: int) -> list:
        if player not in (BLACK, WHITE):
            raise RestrictionError(f"player must be 1 (black) or 2 (white), not {player}")
        if until_depth < 1:
            raise RestrictionError("untilDepth must be at least 1")
        points = list(points)
        for p in points:
            if p is not None and not (0 <= p[0] < self.x_size and 0 <= p[1] < self.y_size):
                raise RestrictionError(f"point {p} is off the board")
        return points

    def avoid(self, player: int, points: Iterable, until_depth: int) -> "MoveRestrictions":
        points = self._check(player, points, until_depth)
        if self._kind.get(player) == "allow":
            raise RestrictionError("cannot combine avoid and allow for the same player")
        until = self._until.setdefault(player, [0] * MAX_ARR_SIZE)
        for p in points:
            until[loc_of(p, self.x_size)] = until_depth
        self._kind[player] = "avoid"
        return self

    def allow(self, player: int, points: Iterable, until_depth: int) -> "MoveRestrictions":
        points = self._check(player, points, until_depth)
        if player in self._kind:
            raise RestrictionError("allow can be given once per player and not together with avoid")
        until = [until_depth] * MAX_ARR_SIZE
        for p in points:
            until[loc_of(p, self.x_size)] = 0
        self._until[player] = until
        self._kind[player] = "allow"
        return self

    def until_by_loc(self, player: int) -> Optional[list]:
        """The array the search takes for player, or None when nothing is restricted."""
        return self._until.get(player)

    def is_empty(self) -> bool:
        return not self._until
