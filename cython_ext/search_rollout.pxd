# cython: language_level=3
"""Contract: a small PRNG and random-playout ("rollout") evaluation of Go positions, all nogil.

Rollouts are how the search evaluates leaves when there is no network: from
the leaf's board, both sides play uniformly random legal moves, never filling
their own simple eyes, until both pass in a row (or a move cap is hit; the
moves come from cython_ext.playout's playout_random). The
final position is scored by area: stones plus empty regions bordered by one
colour only. Simple ko and suicide follow the board rules; superko is ignored
(rollouts are noise anyway).
"""
from libc.stdint cimport uint64_t
from cython_ext.board cimport Board, Loc, Color

cdef struct Rng:
    uint64_t s0
    uint64_t s1

cdef void rng_seed(Rng* r, uint64_t seed) noexcept nogil
cdef uint64_t rng_next(Rng* r) noexcept nogil
cdef double rng_uniform(Rng* r) noexcept nogil              # [0, 1)
cdef int rng_below(Rng* r, int n) noexcept nogil            # [0, n), n > 0
cdef double rng_gaussian(Rng* r) noexcept nogil             # standard normal

# Plays a random game to the end on b (modified in place), pla to move.
# Returns the area score White minus Black (no komi) and writes each point's owner into area
# (C_BLACK / C_WHITE / C_EMPTY, indexed by Loc, MAX_ARR_SIZE entries).
cdef int rollout_go(Board* b, Color pla, bint multi_stone_suicide_legal, Rng* rng, Color* area) noexcept nogil

# Area owners of a board as it stands (stones, and empty regions touching one colour only).
cdef int area_score_white_minus_black(const Board* b, Color* area) noexcept nogil
