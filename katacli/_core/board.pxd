# cython: language_level=3
"""Contract of the Go board core: a plain C struct and nogil functions over it.

Glossary (KataGo's vocabulary, used throughout katacli):
  Loc      an index into the padded board arrays: loc = (x+1) + (y+1)*(x_size+1),
           x from the left, y from the TOP row. 0 is NULL_LOC, 1 is PASS_LOC.
           Every on-board point has wall (or off-board) neighbours in the padding,
           so neighbour loops never bounds-check.
  Color    C_EMPTY, C_BLACK, C_WHITE or C_WALL; a "player" is C_BLACK or C_WHITE.
  chain    a maximal group of connected stones. chain_head[loc] names the chain,
           next_in_chain links its stones in a circle, chain_data[head] holds
           its owner, stone count and liberty count.
  ko_loc   the point made illegal by a simple-ko capture on the last move
           (NULL_LOC when none); it is not part of pos_hash.
  pos_hash 128-bit Zobrist hash of stones and board size only.

Rules live in history.pxd; this layer knows only stones, captures, simple ko
and suicide. Nothing here validates input: callers (katacli.game and the
history module) check bounds, colours and legality before calling.
"""
from libc.stdint cimport uint64_t, int8_t, int16_t

ctypedef int8_t Color
ctypedef int16_t Loc

cdef enum:
    C_EMPTY = 0
    C_BLACK = 1
    C_WHITE = 2
    C_WALL = 3

cdef enum:
    MAX_LEN = 19                  # largest board edge supported
    MAX_PLAY_SIZE = 361           # MAX_LEN * MAX_LEN
    MAX_ARR_SIZE = 421            # (MAX_LEN + 1) * (MAX_LEN + 2) + 1
    NUM_SYMMETRIES = 8            # rotations and reflections of a square board (4 keep a non-square one)
    NULL_LOC = 0
    PASS_LOC = 1

cdef struct Hash128:
    uint64_t h0
    uint64_t h1

cdef struct ChainData:
    Color owner
    int16_t num_locs
    int16_t num_liberties

cdef struct Board:
    int x_size
    int y_size
    Color colors[MAX_ARR_SIZE]
    ChainData chain_data[MAX_ARR_SIZE]   # valid at chain heads only
    Loc chain_head[MAX_ARR_SIZE]         # valid on stones only
    Loc next_in_chain[MAX_ARR_SIZE]      # valid on stones only
    Loc ko_loc
    Hash128 pos_hash
    int num_black_captures               # black stones captured so far (incl. suicides)
    int num_white_captures
    int adj_offsets[8]                   # 0..3 orthogonal (up, left, right, down), 4..7 diagonal
    # Empty points, for O(1) random move choice in playouts.
    int num_empty
    Loc empty_list[MAX_PLAY_SIZE]
    int16_t empty_index[MAX_ARR_SIZE]


# ---- coordinates --------------------------------------------------------------
cdef inline Loc loc_of(int x, int y, int x_size) noexcept nogil:
    return <Loc>((x + 1) + (y + 1) * (x_size + 1))

cdef inline int loc_x(Loc loc, int x_size) noexcept nogil:
    return (loc % (x_size + 1)) - 1

cdef inline int loc_y(Loc loc, int x_size) noexcept nogil:
    return (loc // (x_size + 1)) - 1

cdef inline Color opp_of(Color c) noexcept nogil:
    return c ^ 3

cdef inline Loc sym_loc(int x, int y, int x_size, int y_size, int symmetry) noexcept nogil:
    """KataGo's symmetry of a point (x, y): flip y (bit 1), flip x (bit 2), then transpose (bit 4); the Loc on the
    board in that symmetry (y_size x x_size when transposed)."""
    cdef int tmp
    if symmetry & 2:
        x = x_size - x - 1
    if symmetry & 1:
        y = y_size - y - 1
    if symmetry & 4:
        tmp = x
        x = y
        y = tmp
        return loc_of(x, y, y_size)
    return loc_of(x, y, x_size)

cdef inline bint hash_eq(Hash128 a, Hash128 b) noexcept nogil:
    return a.h0 == b.h0 and a.h1 == b.h1

cdef inline Hash128 hash_xor(Hash128 a, Hash128 b) noexcept nogil:
    cdef Hash128 r
    r.h0 = a.h0 ^ b.h0
    r.h1 = a.h1 ^ b.h1
    return r

# ---- Zobrist tables (read-only after module import) ---------------------------
cdef Hash128 zobrist_stone(Loc loc, Color c) noexcept nogil
cdef Hash128 zobrist_player(Color pla) noexcept nogil
cdef Hash128 zobrist_ko(Loc loc) noexcept nogil
cdef Hash128 zobrist_encore(int phase) noexcept nogil                 # KataGo's ZOBRIST_ENCORE_HASH
cdef Hash128 zobrist_ko_mark(Loc loc, Color c) noexcept nogil         # ZOBRIST_KO_MARK_HASH
cdef Hash128 zobrist_second_encore(Loc loc, Color c) noexcept nogil   # ZOBRIST_SECOND_ENCORE_START_HASH
cdef Hash128 zobrist_aux(int index, Loc loc, Color c) noexcept nogil   # katacli's own tables (index 0: the history's ko-recapture marks)

# ---- construction -------------------------------------------------------------
cdef void board_init(Board* b, int x_size, int y_size) noexcept nogil
cdef void board_regen_chains(Board* b) noexcept nogil          # rebuild chains/hash/empties from colors

# ---- queries ------------------------------------------------------------------
cdef bint board_is_on_board(const Board* b, Loc loc) noexcept nogil
cdef inline int board_num_liberties(const Board* b, Loc loc) noexcept nogil:   # of the chain at loc (a stone)
    # Inline: leaf features and ladder scans ask it for every stone (a call across modules is indirect).
    return b.chain_data[b.chain_head[loc]].num_liberties
cdef int board_chain_size(const Board* b, Loc loc) noexcept nogil
cdef int board_num_immediate_liberties(const Board* b, Loc loc) noexcept nogil
# Inline, as board_num_liberties: superko bans and legality ask them for every empty point of a leaf.
cdef inline bint board_is_illegal_suicide(const Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil:
    cdef int i
    cdef Loc adj
    cdef Color c, opp = opp_of(pla)
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        c = b.colors[adj]
        if c == C_EMPTY:
            return False
        if c == pla:
            # Joining a friendly chain makes it multi-stone suicide at worst.
            if multi_stone_suicide_legal or b.chain_data[b.chain_head[adj]].num_liberties > 1:
                return False
        elif c == opp:
            if b.chain_data[b.chain_head[adj]].num_liberties == 1:
                return False
    return True

cdef inline bint board_is_suicide(const Board* b, Loc loc, Color pla) noexcept nogil:
    # Any suicide, single- or multi-stone: the illegal kind when multi-stone suicide is forbidden.
    return loc != PASS_LOC and board_is_illegal_suicide(b, loc, pla, False)
cdef bint board_is_legal(const Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil
cdef bint board_is_legal_ignoring_ko(const Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil
cdef bint board_would_be_capture(const Board* b, Loc loc, Color pla) noexcept nogil
cdef bint board_would_be_ko_capture(const Board* b, Loc loc, Color pla) noexcept nogil
cdef Loc board_ko_capture_loc(const Board* b, Loc loc, Color pla) noexcept nogil
cdef bint board_is_simple_eye(const Board* b, Loc loc, Color pla) noexcept nogil
cdef bint board_is_adjacent_to_chain(const Board* b, Loc loc, Loc head) noexcept nogil
cdef int board_num_liberties_after_play(const Board* b, Loc loc, Color pla, int cap) noexcept nogil
cdef void board_bound_liberties_after_play(const Board* b, Loc loc, Color pla, int* lower, int* upper) noexcept nogil
cdef int board_heuristic_connection_liberties_x2(const Board* b, Loc loc, Color pla) noexcept nogil
cdef Hash128 board_pos_hash_after_move(const Board* b, Loc loc, Color pla) noexcept nogil
cdef int board_find_liberties(const Board* b, Loc loc, Loc* out, int max_out) noexcept nogil   # distinct liberties of the chain
cdef int board_num_stones(const Board* b) noexcept nogil
# KataGo's getSitHashWithSimpleKo of the board seen in symmetry sym (its getSymBoard: bit 4 transposes, bit 2
# flips x, bit 1 flips y), without building that board: the analysis engine's thisHash (sym 0) and symHash.
cdef Hash128 board_sym_sit_hash_with_simple_ko(const Board* b, int sym, Color pla) noexcept nogil

# ---- mutation -----------------------------------------------------------------
# Plays a legal move (PASS_LOC allowed): captures, merges, updates ko_loc,
# removes a suicided chain. Behaviour on an illegal move is undefined.
cdef void board_play_assume_legal(Board* b, Loc loc, Color pla) noexcept nogil
# Checks legality (simple ko and suicide) first; returns False and leaves the board unchanged if illegal.
cdef bint board_play(Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil
# Setup placement (handicap, AB/AW/AE): sets one point without capturing anything.
# Returns False (board unchanged) if that would leave any chain without liberties.
cdef bint board_set_stone(Board* b, Loc loc, Color color) noexcept nogil


cdef class GoBoard:
    """Python view of a Board (tests, tools, the game layer). Hot code uses the struct."""
    cdef Board b
    cdef Loc _loc(self, xy) except? -1
