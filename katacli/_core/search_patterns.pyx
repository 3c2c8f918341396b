# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Local pattern hashes and the pattern bonus table (contract: search_patterns.pxd)."""
from libc.stdint cimport uint64_t, int64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from katacli._core.board cimport (
    Board, GoBoard, Loc, Color, Hash128, C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE, MAX_LEN, NULL_LOC, PASS_LOC,
    loc_of, loc_x, loc_y, opp_of, hash_xor, board_num_liberties, board_would_be_ko_capture,
)
from katacli._core.history cimport (
    History, history_init, history_free, history_play_tolerant, history_recent_board,
)
from katacli._core.game_state cimport GameState
from katacli._core.playout cimport Rng, rng_seed, rng_next

cdef int PATTERN_AREA = PATTERN_LEN * PATTERN_LEN
cdef int PATTERN_RADIUS = PATTERN_LEN // 2
cdef int NUM_COLORS = 4
cdef int64_t INITIAL_CAPACITY = 1024
# Fixed seed: hashes must agree between processes (saved moves are re-hashed on load, never stored).
cdef uint64_t PATTERN_ZOBRIST_SEED = 0x9a77e2b0b5ac7ab1ULL

cdef Hash128 _zob_pattern[4][PATTERN_LEN * PATTERN_LEN]
cdef Hash128 _zob_atari[PATTERN_LEN * PATTERN_LEN]
cdef Hash128 _zob_pla[4]
cdef Hash128 _zob_move_loc[MAX_ARR_SIZE]
cdef Hash128 _zob_size_x[MAX_LEN + 1]
cdef Hash128 _zob_size_y[MAX_LEN + 1]


cdef Hash128 _rand_hash(Rng* r) noexcept nogil:
    cdef Hash128 h
    h.h0 = rng_next(r)
    h.h1 = rng_next(r)
    return h


cdef void _init_zobrist() noexcept nogil:
    cdef Rng r
    cdef int i, j
    rng_seed(&r, PATTERN_ZOBRIST_SEED)
    for i in range(NUM_COLORS):
        for j in range(PATTERN_AREA):
            _zob_pattern[i][j] = _rand_hash(&r)
    for i in range(NUM_COLORS):
        _zob_pla[i] = _rand_hash(&r)
    for j in range(PATTERN_AREA):
        _zob_atari[j] = _rand_hash(&r)
    for i in range(MAX_ARR_SIZE):
        _zob_move_loc[i] = _rand_hash(&r)
    for i in range(MAX_LEN + 1):
        _zob_size_x[i] = _rand_hash(&r)
        _zob_size_y[i] = _rand_hash(&r)

_init_zobrist()


# ---- hashes ------------------------------------------------------------------------------------
cdef Hash128 pattern_hash(const Board* b, Loc loc, Color pla) noexcept nogil:
    return pattern_hash_sym(b, loc, pla, 0, False)


cdef Hash128 pattern_hash_sym(const Board* b, Loc loc, Color pla, int symmetry, bint flip_colors) noexcept nogil:
    cdef Hash128 h
    cdef int x, y, dx, dy, dx_min, dx_max, dy_min, dy_max, sx, sy, tmp, idx, sym_x_size
    cdef Loc loc2
    cdef Color c
    cdef bint transpose = (symmetry & 4) != 0
    cdef bint flip_x = (symmetry & 2) != 0
    cdef bint flip_y = (symmetry & 1) != 0
    h.h0 = 0
    h.h1 = 0
    if loc == NULL_LOC or loc == PASS_LOC or board_would_be_ko_capture(b, loc, pla):
        return h   # no pattern: passes, and ko fights repeating one shape
    h = _zob_pla[opp_of(pla) if flip_colors else pla]
    x = loc_x(loc, b.x_size)
    y = loc_y(loc, b.x_size)
    # The window is clipped at the board's edges: the same shape by an edge hashes differently.
    dx_min = -x if x < PATTERN_RADIUS else -PATTERN_RADIUS
    dx_max = b.x_size - 1 - x if x >= b.x_size - PATTERN_RADIUS else PATTERN_RADIUS
    dy_min = -y if y < PATTERN_RADIUS else -PATTERN_RADIUS
    dy_max = b.y_size - 1 - y if y >= b.y_size - PATTERN_RADIUS else PATTERN_RADIUS
    for dy in range(dy_min, dy_max + 1):
        for dx in range(dx_min, dx_max + 1):
            loc2 = <Loc>(loc + dx + dy * (b.x_size + 1))
            sx = dx + PATTERN_RADIUS
            sy = dy + PATTERN_RADIUS
            if flip_x:
                sx = PATTERN_LEN - 1 - sx
            if flip_y:
                sy = PATTERN_LEN - 1 - sy
            if transpose:
                tmp = sx
                sx = sy
                sy = tmp
            idx = sy * PATTERN_LEN + sx
            c = b.colors[loc2]
            if c == C_BLACK or c == C_WHITE:
                h = hash_xor(h, _zob_pattern[opp_of(c) if flip_colors else c][idx])
                if board_num_liberties(b, loc2) == 1:
                    h = hash_xor(h, _zob_atari[idx])
            else:
                h = hash_xor(h, _zob_pattern[c][idx])
    # The move's own place on the (transformed) board, and the board's (transformed) size.
    sx = b.x_size - 1 - x if flip_x else x
    sy = b.y_size - 1 - y if flip_y else y
    sym_x_size = b.x_size
    if transpose:
        tmp = sx
        sx = sy
        sy = tmp
        sym_x_size = b.y_size
        h = hash_xor(h, _zob_size_x[b.y_size])
        h = hash_xor(h, _zob_size_y[b.x_size])
    else:
        h = hash_xor(h, _zob_size_x[b.x_size])
        h = hash_xor(h, _zob_size_y[b.y_size])
    h = hash_xor(h, _zob_move_loc[loc_of(sx, sy, sym_x_size)])
    return h


# ---- the table ---------------------------------------------------------------------------------
cdef void pattern_table_free(PatternTable* t) noexcept nogil:
    free(t.keys)
    free(t.bonus)
    t.keys = NULL
    t.bonus = NULL
    t.count = 0
    t.capacity = 0


cdef void pattern_table_copy(PatternTable* dst, const PatternTable* src) noexcept nogil:
    dst.count = src.count
    dst.capacity = src.capacity
    dst.keys = NULL
    dst.bonus = NULL
    if src.capacity > 0:
        dst.keys = <Hash128*>malloc(src.capacity * sizeof(Hash128))
        dst.bonus = <double*>malloc(src.capacity * sizeof(double))
        memcpy(dst.keys, src.keys, src.capacity * sizeof(Hash128))
        memcpy(dst.bonus, src.bonus, src.capacity * sizeof(double))


cdef int64_t _slot(const PatternTable* t, Hash128 key) noexcept nogil:
    """The key's slot, or the empty slot where it would go."""
    cdef uint64_t mask = <uint64_t>(t.capacity - 1)
    cdef uint64_t pos = key.h0 & mask
    while t.keys[pos].h0 != 0 or t.keys[pos].h1 != 0:
        if t.keys[pos].h0 == key.h0 and t.keys[pos].h1 == key.h1:
            break
        pos = (pos + 1) & mask
    return <int64_t>pos


cdef void _grow(PatternTable* t) noexcept nogil:
    cdef PatternTable old = t[0]
    cdef int64_t i, pos
    t.capacity = INITIAL_CAPACITY if old.capacity == 0 else old.capacity * 2
    t.keys = <Hash128*>calloc(t.capacity, sizeof(Hash128))
    t.bonus = <double*>calloc(t.capacity, sizeof(double))
    for i in range(old.capacity):
        if old.keys[i].h0 != 0 or old.keys[i].h1 != 0:
            pos = _slot(t, old.keys[i])
            t.keys[pos] = old.keys[i]
            t.bonus[pos] = old.bonus[i]
    free(old.keys)
    free(old.bonus)


cdef void pattern_table_add(PatternTable* t, Hash128 key, double bonus) noexcept nogil:
    cdef int64_t pos
    if key.h0 == 0 and key.h1 == 0:
        return
    if (t.count + 1) * 2 > t.capacity:
        _grow(t)
    pos = _slot(t, key)
    if t.keys[pos].h0 == 0 and t.keys[pos].h1 == 0:
        t.keys[pos] = key
        t.bonus[pos] = 0.0
        t.count += 1
    t.bonus[pos] += bonus


cdef bint pattern_table_contains(const PatternTable* t, Hash128 key) noexcept nogil:
    cdef int64_t pos
    if t.capacity == 0:
        return False
    pos = _slot(t, key)
    return t.keys[pos].h0 == key.h0 and t.keys[pos].h1 == key.h1 and (key.h0 != 0 or key.h1 != 0)


cdef void pattern_table_add_move(PatternTable* t, PatternTable* seen, const Board* before, Loc loc, Color pla,
                                 double bonus, bint signed_by_player) noexcept nogil:
    cdef int flip, symmetry
    cdef Hash128 key
    cdef Color sym_pla
    if loc == NULL_LOC or loc == PASS_LOC or board_would_be_ko_capture(before, loc, pla):
        return
    for flip in range(2):
        sym_pla = opp_of(pla) if flip else pla
        for symmetry in range(8):
            key = pattern_hash_sym(before, loc, pla, symmetry, flip != 0)
            if pattern_table_contains(seen, key):
                continue
            pattern_table_add(seen, key, 0.0)
            if signed_by_player and sym_pla == C_WHITE:
                pattern_table_add(t, key, -bonus)
            else:
                pattern_table_add(t, key, bonus)


cdef void pattern_table_add_game_moves(PatternTable* t, const History* h, double bonus, Color only_pla) noexcept nogil:
    cdef History replay
    cdef PatternTable seen
    cdef int i
    cdef Loc loc
    cdef Color pla
    seen.keys = NULL
    seen.bonus = NULL
    seen.count = seen.capacity = 0
    history_init(&replay, &h.initial_board, h.initial_pla, &h.rules, h.initial_encore_phase)
    for i in range(h.num_moves):
        loc = h.moves[i].loc
        pla = h.moves[i].pla
        if not history_play_tolerant(&replay, loc, pla, False):
            break
        if only_pla == C_EMPTY or only_pla == pla:
            # The board before the move: the same shape may capture differently after it.
            pattern_table_add_move(t, &seen, history_recent_board(&replay, 1), loc, pla, bonus, False)
    history_free(&replay)
    pattern_table_free(&seen)


# ---- Python handle ---------------------------------------------------------------------------
cdef class PatternBonusTable:
    """Pattern hash -> utility bonus for White. Build with add_move / add_game_moves; a search
    takes a copy (SearchTree.set_pattern_table)."""

    def __dealloc__(self):
        pattern_table_free(&self.table)

    def __len__(self):
        return self.table.count

    def copy(self):
        cdef PatternBonusTable other = PatternBonusTable.__new__(PatternBonusTable)
        pattern_table_copy(&other.table, &self.table)
        return other

    def add_move(self, GoBoard before, xy, int pla, double bonus, PatternBonusTable seen, bint signed_by_player):
        """Remember pla's move at xy on `before` under every symmetry and colouring (see the .pxd)."""
        cdef Loc loc = before._loc(xy)
        GoBoard._check_player(pla)
        pattern_table_add_move(&self.table, &seen.table, &before.b, loc, <Color>pla, bonus, signed_by_player)

    def add_game_moves(self, GameState state, double bonus, int only_pla=C_EMPTY):
        """Every move of state's game (by only_pla, 0 = both) with the same bonus."""
        with nogil:
            pattern_table_add_game_moves(&self.table, &state.h, bonus, <Color>only_pla)

    def get(self, GoBoard before, xy, int pla):
        """White's utility bonus for pla playing xy on `before` (0 when nothing matches)."""
        GoBoard._check_player(pla)
        return pattern_table_get(&self.table, pattern_hash(&before.b, before._loc(xy), <Color>pla))


def move_pattern_hash(GoBoard before, xy, int pla, int symmetry=0, bint flip_colors=False):
    """The 128-bit pattern hash of pla playing xy on `before` as (h0, h1); (0, 0) for no pattern."""
    cdef Hash128 h
    GoBoard._check_player(pla)
    if not 0 <= symmetry < 8:
        raise ValueError("symmetry must be 0..7")
    h = pattern_hash_sym(&before.b, before._loc(xy), <Color>pla, symmetry, flip_colors)
    return (h.h0, h.h1)
