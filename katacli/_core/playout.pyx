# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Random playouts and a Tromp-Taylor count on the Board struct (see playout.pxd).

Move choice is O(1) expected: a few rejection-sampling draws straight from the
board's empty list, then (late in a playout, when most empty points are eyes or
illegal) a swap-remove scan over a private copy of that list. Both are uniform
over the acceptable moves.

The Python functions at the bottom are for tests and benchmarks; the timed
loops run without the GIL.
"""
from libc.string cimport memcpy, memset
from libc.stdint cimport uint64_t
from cpython.mem cimport PyMem_Malloc, PyMem_Free

from katacli._core.board cimport (
    Board, Loc, Color, GoBoard, C_EMPTY, C_BLACK, C_WHITE, C_WALL, MAX_ARR_SIZE, MAX_PLAY_SIZE, PASS_LOC,
    loc_of, opp_of, board_init, board_is_legal, board_is_simple_eye, board_play_assume_legal, board_play,
)

cdef enum:
    REJECTION_DRAWS = 8          # direct draws from the empty list before falling back to the scan
    ENDING_PASSES = 2            # both players pass in a row
    REACHES_BLACK = 1            # bit flags for the regions of area_score_simple
    REACHES_WHITE = 2


cdef inline bint _acceptable(const Board* b, Loc loc, Color pla, bint multi_stone_suicide_legal) noexcept nogil:
    return not board_is_simple_eye(b, loc, pla) and board_is_legal(b, loc, pla, multi_stone_suicide_legal)

cdef int playout_choose_move(const Board* b, Color pla, Rng* rng, bint multi_stone_suicide_legal) noexcept nogil:
    cdef int n = b.num_empty, i, k
    cdef Loc loc
    cdef Loc candidates[MAX_PLAY_SIZE]
    if n == 0:
        return PASS_LOC
    for k in range(REJECTION_DRAWS):
        loc = b.empty_list[rng_below(rng, <unsigned int>n)]
        if _acceptable(b, loc, pla, multi_stone_suicide_legal):
            return loc
    # Most points are bad: draw without replacement so every point is tried at most once.
    memcpy(candidates, b.empty_list, n * sizeof(Loc))
    while n > 0:
        i = rng_below(rng, <unsigned int>n)
        loc = candidates[i]
        if _acceptable(b, loc, pla, multi_stone_suicide_legal):
            return loc
        n -= 1
        candidates[i] = candidates[n]
    return PASS_LOC

cdef int playout_random(Board* b, Color first, int max_moves, Rng* rng, bint multi_stone_suicide_legal) noexcept nogil:
    cdef Color pla = first
    cdef int stones = 0, passes = 0
    cdef Loc loc
    if max_moves < 0:
        max_moves = PLAYOUT_MAX_MOVES_PER_POINT * b.x_size * b.y_size
    while stones < max_moves and passes < ENDING_PASSES:
        loc = <Loc>playout_choose_move(b, pla, rng, multi_stone_suicide_legal)
        board_play_assume_legal(b, loc, pla)
        if loc == PASS_LOC:
            passes += 1
        else:
            passes = 0
            stones += 1
        pla = opp_of(pla)
    return stones

cdef int area_score_simple(const Board* b, Color* area) noexcept nogil:
    cdef unsigned char seen[MAX_ARR_SIZE]
    cdef Loc stack[MAX_PLAY_SIZE]
    cdef Loc region[MAX_PLAY_SIZE]
    cdef int score = 0, x, y, i, k, top, size, reaches
    cdef Loc loc, cur, adj
    cdef Color c, owner
    memset(seen, 0, MAX_ARR_SIZE)
    if area != NULL:
        memset(area, C_EMPTY, MAX_ARR_SIZE * sizeof(Color))
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            c = b.colors[loc]
            if c == C_WHITE or c == C_BLACK:
                score += 1 if c == C_WHITE else -1
                if area != NULL:
                    area[loc] = c
            elif not seen[loc]:
                # Flood the empty region and note which colours border it.
                seen[loc] = 1
                stack[0] = loc
                top = 1
                size = 0
                reaches = 0
                while top > 0:
                    top -= 1
                    cur = stack[top]
                    region[size] = cur
                    size += 1
                    for i in range(4):
                        adj = cur + b.adj_offsets[i]
                        c = b.colors[adj]
                        if c == C_EMPTY:
                            if not seen[adj]:
                                seen[adj] = 1
                                stack[top] = adj
                                top += 1
                        elif c == C_BLACK:
                            reaches |= REACHES_BLACK
                        elif c == C_WHITE:
                            reaches |= REACHES_WHITE
                if reaches == REACHES_WHITE or reaches == REACHES_BLACK:
                    owner = C_WHITE if reaches == REACHES_WHITE else C_BLACK
                    score += size if owner == C_WHITE else -size
                    if area != NULL:
                        for k in range(size):
                            area[region[k]] = owner
    return score


cdef int playout_area_score(Board* b, Color first, bint multi_stone_suicide_legal, Rng* rng, Color* area) noexcept nogil:
    playout_random(b, first, -1, rng, multi_stone_suicide_legal)
    return area_score_simple(b, area)


# ---- Python wrappers (tests, benchmarks) --------------------------------------------------

def _check_player(int pla):
    if pla != C_BLACK and pla != C_WHITE:
        raise ValueError(f"player must be 1 (black) or 2 (white), not {pla}")

def random_playout(GoBoard board, int first=C_BLACK, int max_moves=-1, uint64_t seed=0,
                   bint multi_stone_suicide_legal=False):
    """Play a random playout on board in place; returns the number of stones played."""
    _check_player(first)
    cdef Rng rng
    cdef int stones
    rng_seed(&rng, seed)
    with nogil:
        stones = playout_random(&board.b, <Color>first, max_moves, &rng, multi_stone_suicide_legal)
    return stones

def choose_move(GoBoard board, int pla, uint64_t seed=0, bint multi_stone_suicide_legal=False):
    """The playout's move choice for pla: (x, y), or None for pass."""
    _check_player(pla)
    cdef Rng rng
    rng_seed(&rng, seed)
    cdef Loc loc = <Loc>playout_choose_move(&board.b, <Color>pla, &rng, multi_stone_suicide_legal)
    if loc == PASS_LOC:
        return None
    return (loc % (board.b.x_size + 1) - 1, loc // (board.b.x_size + 1) - 1)

def tromp_taylor_score(GoBoard board):
    """area_score_simple: white minus black, no komi."""
    return area_score_simple(&board.b, NULL)

def rng_sequence(uint64_t seed, int count, unsigned int below=0):
    """The first count outputs of Rng(seed): raw 64-bit words, or rng_below(below) if below > 0."""
    cdef Rng rng
    rng_seed(&rng, seed)
    if below > 0:
        return [rng_below(&rng, below) for _ in range(count)]
    return [rng_next(&rng) for _ in range(count)]

def run_playouts(int x_size, int y_size, int num_playouts, uint64_t seed=1, bint multi_stone_suicide_legal=False):
    """num_playouts playouts from the empty board without the GIL: (stones played, sum of scores)."""
    if not (2 <= x_size <= 19 and 2 <= y_size <= 19):
        raise ValueError(f"board size {x_size}x{y_size} is not supported")
    cdef Board empty, b
    cdef Rng rng
    cdef long long stones = 0, score_sum = 0
    cdef int i
    board_init(&empty, x_size, y_size)
    rng_seed(&rng, seed)
    with nogil:
        for i in range(num_playouts):
            memcpy(&b, &empty, sizeof(Board))
            stones += playout_random(&b, C_BLACK, -1, &rng, multi_stone_suicide_legal)
            score_sum += area_score_simple(&b, NULL)
    return stones, score_sum

def record_playout(int x_size, int y_size, uint64_t seed=1):
    """The moves of one playout from the empty board, as (Loc, player) pairs (passes excluded)."""
    cdef Board b
    cdef Rng rng
    cdef Color pla = C_BLACK
    cdef Loc loc
    cdef int passes = 0
    board_init(&b, x_size, y_size)
    rng_seed(&rng, seed)
    moves = []
    while passes < ENDING_PASSES and len(moves) < PLAYOUT_MAX_MOVES_PER_POINT * x_size * y_size:
        loc = <Loc>playout_choose_move(&b, pla, &rng, False)
        board_play_assume_legal(&b, loc, pla)
        if loc == PASS_LOC:
            passes += 1
        else:
            passes = 0
            moves.append((loc, pla))
        pla = opp_of(pla)
    return moves

def replay_moves(int x_size, int y_size, list moves, int repeats, bint check_legality):
    """Replay a recorded playout repeats times, with board_play (legality checked) or
    board_play_assume_legal. Returns the number of moves that were refused (0 expected)."""
    cdef int n = len(moves), i, r, refused = 0
    cdef Loc* locs
    cdef Color* plas
    cdef Board empty, b
    locs = <Loc*>PyMem_Malloc(max(n, 1) * sizeof(Loc))
    plas = <Color*>PyMem_Malloc(max(n, 1) * sizeof(Color))
    if locs == NULL or plas == NULL:
        PyMem_Free(locs)
        PyMem_Free(plas)
        raise MemoryError()
    for i in range(n):
        locs[i] = moves[i][0]
        plas[i] = moves[i][1]
    board_init(&empty, x_size, y_size)
    with nogil:
        for r in range(repeats):
            memcpy(&b, &empty, sizeof(Board))
            if check_legality:
                for i in range(n):
                    if not board_play(&b, locs[i], plas[i], False):
                        refused += 1
            else:
                for i in range(n):
                    board_play_assume_legal(&b, locs[i], plas[i])
    PyMem_Free(locs)
    PyMem_Free(plas)
    return refused
