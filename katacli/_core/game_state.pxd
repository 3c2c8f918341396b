# cython: language_level=3
"""Contract: GameState, Python's handle on a History (history.pxd).

The engine protocols, the API and the tests reach the rules through it: it validates points (x, y)
and players, raises ValueError / IllegalMoveError for bad input and never leaves a History half-changed.
Core modules that take a GameState (the search tree's set_root) read its History directly.
"""
from katacli._core.board cimport Loc
from katacli._core.history cimport History


cdef class GameState:
    """Among its Python methods, suicide_legal_for_pass_alive() and white_komi_adjustment_for_draws(dew)
    expose history.pxd's functions of the same names (self-play's final targets use them)."""
    cdef History h
    cdef bint _initialised
    cdef Loc _loc(self, xy) except? -1
    cdef _xy(self, Loc loc)
