# cython: language_level=3
"""Contract: pattern avoidance (KataGo's LocalPatternHasher + PatternBonusTable), nogil.

A move's local pattern hash describes the 9x9 window around the move on the board BEFORE the
move (clipped at the edges, so a move near an edge differs from the same shape in the centre):
each point's colour, which stones are in atari, the player moving, the move's own location and
the board size. Passes, NULL_LOC and simple-ko captures have no pattern (the zero hash), so a
ko fight repeating one shape is never penalised.

A table maps pattern hashes to a utility bonus for White (KataGo's convention: a penalty for
Black is a positive bonus, for White a negative one). It is filled with every symmetry and both
colourings of each remembered move (`pattern_hash_sym`), and looked up with the plain hash of
the move the search considers (`pattern_hash`): pattern_hash_sym(b, loc, pla, s, flip) equals
pattern_hash of the board transformed by symmetry s (and colours swapped when flip), at the
transformed loc, for the (swapped when flip) player.

The search (search_nodes / search_backup / search_descent) keeps each new node's pattern hash
(Node.pattern_hash: the move that led to it) and adds the table's bonus to that node's utility
when the move was made by the player the search is for (KataGo's getPatternBonus).
"""
from libc.stdint cimport uint64_t, int64_t
from katacli._core.board cimport Board, Loc, Color, Hash128
from katacli._core.history cimport History

cdef enum:
    PATTERN_LEN = 9          # side of the window around the move (odd)

# Open addressing on key.h0; a zero key marks an empty slot (the zero hash never gets a bonus).
cdef struct PatternTable:
    Hash128* keys
    double* bonus
    int64_t count
    int64_t capacity         # power of two, 0 when nothing was allocated

cdef Hash128 pattern_hash(const Board* b, Loc loc, Color pla) noexcept nogil
cdef Hash128 pattern_hash_sym(const Board* b, Loc loc, Color pla, int symmetry, bint flip_colors) noexcept nogil

cdef void pattern_table_free(PatternTable* t) noexcept nogil
cdef void pattern_table_copy(PatternTable* dst, const PatternTable* src) noexcept nogil   # dst freed or empty
cdef void pattern_table_add(PatternTable* t, Hash128 key, double bonus) noexcept nogil   # ignores the zero hash
cdef bint pattern_table_contains(const PatternTable* t, Hash128 key) noexcept nogil
# Adds the move under all 8 symmetries and both colourings, each distinct hash once per `seen` (which
# it updates; KataGo's hashesThisGame). signed_by_player: the bonus is -bonus where the (colour-swapped)
# mover is White (SGF and saved-move avoidance); otherwise the same bonus for all (repeats in one game).
cdef void pattern_table_add_move(PatternTable* t, PatternTable* seen, const Board* before, Loc loc, Color pla,
                                 double bonus, bint signed_by_player) noexcept nogil
# Every move of h's game by only_pla (C_EMPTY: both), replayed tolerantly from its initial board.
cdef void pattern_table_add_game_moves(PatternTable* t, const History* h, double bonus, Color only_pla) noexcept nogil


cdef inline double pattern_table_get(const PatternTable* t, Hash128 key) noexcept nogil:
    cdef uint64_t mask, pos
    if t.capacity == 0 or (key.h0 == 0 and key.h1 == 0):
        return 0.0
    mask = <uint64_t>(t.capacity - 1)
    pos = key.h0 & mask
    while t.keys[pos].h0 != 0 or t.keys[pos].h1 != 0:
        if t.keys[pos].h0 == key.h0 and t.keys[pos].h1 == key.h1:
            return t.bonus[pos]
        pos = (pos + 1) & mask
    return 0.0


cdef class PatternBonusTable:
    """Python handle on a PatternTable (built by katacli.search.pattern_avoidance, used by SearchTree)."""
    cdef PatternTable table
