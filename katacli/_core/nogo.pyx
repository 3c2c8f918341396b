# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""NoGo move generation and random playouts (see nogo.pxd)."""
from katacli._core.board cimport (
    Board, GoBoard, Loc, Color, C_EMPTY, C_BLACK, C_WHITE, PASS_LOC, MAX_PLAY_SIZE,
    opp_of, loc_of, loc_x, loc_y, board_num_liberties, board_play_assume_legal,
)
from katacli._core.playout cimport Rng, rng_seed, rng_below


cdef bint nogo_is_legal(const Board* b, Loc loc, Color pla) noexcept nogil:
    cdef int i
    cdef Loc adj
    cdef Color c, opp = opp_of(pla)
    cdef bint has_liberty = False
    if loc == PASS_LOC or b.colors[loc] != C_EMPTY:
        return False
    for i in range(4):
        adj = loc + b.adj_offsets[i]
        c = b.colors[adj]
        if c == C_EMPTY:
            has_liberty = True
        elif c == opp:
            if board_num_liberties(b, adj) == 1:
                return False          # would capture
        elif c == pla:
            if board_num_liberties(b, adj) > 1:
                has_liberty = True    # the friendly chain keeps another liberty
    return has_liberty


cdef int nogo_legal_moves(const Board* b, Color pla, Loc* out) noexcept nogil:
    cdef int x, y, n = 0
    cdef Loc loc
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            if nogo_is_legal(b, loc, pla):
                out[n] = loc
                n += 1
    return n


cdef bint nogo_has_legal_move(const Board* b, Color pla) noexcept nogil:
    cdef int k
    for k in range(b.num_empty):
        if nogo_is_legal(b, b.empty_list[k], pla):
            return True
    return False


cdef Color nogo_rollout(Board* b, Color pla, Rng* rng) noexcept nogil:
    cdef int n, start, k
    cdef Loc loc, chosen
    while True:
        n = b.num_empty
        chosen = PASS_LOC
        if n > 0:
            start = rng_below(rng, n)
            for k in range(n):
                loc = b.empty_list[(start + k) % n]
                if nogo_is_legal(b, loc, pla):
                    chosen = loc
                    break
        if chosen == PASS_LOC:
            return opp_of(pla)
        board_play_assume_legal(b, chosen, pla)
        pla = opp_of(pla)


# ---- Python access ------------------------------------------------------------------------
def legal_moves(GoBoard board, int pla):
    """NoGo-legal points for pla on board: list of (x, y)."""
    cdef Loc locs[MAX_PLAY_SIZE]
    cdef int n, i
    if pla != C_BLACK and pla != C_WHITE:
        raise ValueError("player must be 1 (black) or 2 (white)")
    n = nogo_legal_moves(&board.b, <Color>pla, locs)
    return [(loc_x(locs[i], board.b.x_size), loc_y(locs[i], board.b.x_size)) for i in range(n)]


def is_legal(GoBoard board, xy, int pla):
    x, y = xy
    if not (0 <= x < board.b.x_size and 0 <= y < board.b.y_size):
        raise ValueError(f"point {xy} is off the board")
    return nogo_is_legal(&board.b, loc_of(x, y, board.b.x_size), <Color>pla)


def random_game(GoBoard board, int pla, unsigned long long seed=1):
    """Play a random NoGo game on a copy of board; returns (winner, final GoBoard)."""
    cdef GoBoard out = GoBoard.__new__(GoBoard)
    cdef Rng rng
    cdef Color winner
    out.b = board.b
    rng_seed(&rng, seed)
    with nogil:
        winner = nogo_rollout(&out.b, <Color>pla, &rng)
    return winner, out
