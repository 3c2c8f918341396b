# cython: language_level=3
"""Contract: NoGo, the Go variant where capturing and suicide are both illegal.

A move is legal when the point is empty, the new stone's chain keeps at least
one liberty, and no opponent chain loses its last liberty. There is no pass:
a player with no legal move on their turn loses. Since nothing is ever
captured there is no ko either, and the board only fills up, so every game ends.
"""
from katacli._core.board cimport Board, Loc, Color
from katacli._core.playout cimport Rng

cdef bint nogo_is_legal(const Board* b, Loc loc, Color pla) noexcept nogil
cdef int nogo_legal_moves(const Board* b, Color pla, Loc* out) noexcept nogil   # returns the count
cdef bint nogo_has_legal_move(const Board* b, Color pla) noexcept nogil
# Random legal moves on b (modified in place) from pla's turn until someone cannot move; returns the winner.
cdef Color nogo_rollout(Board* b, Color pla, Rng* rng) noexcept nogil
