# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Random playouts for the network-free engine (see search_rollout.pxd)."""
from libc.stdint cimport uint64_t
from libc.math cimport sqrt, log, cos, M_PI
from libc.string cimport memset

from cython_ext.board cimport (
    Board, Loc, Color, C_EMPTY, C_BLACK, C_WHITE, C_WALL, MAX_ARR_SIZE, PASS_LOC, loc_of,
)
from cython_ext.playout cimport Rng as PlayoutRng, rng_seed as playout_rng_seed, playout_random

# playout_random's default move cap (PLAYOUT_MAX_MOVES_PER_POINT per board point).
cdef int DEFAULT_MAX_MOVES = -1


# ---- PRNG: xoroshiro128+ seeded through splitmix64 -------------------------------------
cdef inline uint64_t _splitmix(uint64_t* x) noexcept nogil:
    x[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = x[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    cdef uint64_t x = seed
    r.s0 = _splitmix(&x)
    r.s1 = _splitmix(&x)
    if r.s0 == 0 and r.s1 == 0:
        r.s1 = 1

cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))

cdef uint64_t rng_next(Rng* r) noexcept nogil:
    cdef uint64_t s0 = r.s0, s1 = r.s1
    cdef uint64_t result = s0 + s1
    s1 ^= s0
    r.s0 = _rotl(s0, 24) ^ s1 ^ (s1 << 16)
    r.s1 = _rotl(s1, 37)
    return result

cdef double rng_uniform(Rng* r) noexcept nogil:
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)

cdef int rng_below(Rng* r, int n) noexcept nogil:
    return <int>((rng_next(r) >> 33) % <uint64_t>n)

cdef double rng_gaussian(Rng* r) noexcept nogil:
    cdef double u1 = rng_uniform(r), u2 = rng_uniform(r)
    if u1 < 1e-300:
        u1 = 1e-300
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2)


# ---- area scoring ----------------------------------------------------------------------
cdef int area_score_white_minus_black(const Board* b, Color* area) noexcept nogil:
    """Stones count for their colour; an empty region counts for the one colour it touches, if only one."""
    cdef Loc stack[MAX_ARR_SIZE]
    cdef Loc region[MAX_ARR_SIZE]
    cdef unsigned char seen[MAX_ARR_SIZE]
    cdef int x, y, i, k, top, n_region, score = 0
    cdef Loc loc, cur, adj
    cdef bint touches_black, touches_white
    cdef Color owner, c
    memset(area, C_EMPTY, MAX_ARR_SIZE * sizeof(Color))
    memset(seen, 0, MAX_ARR_SIZE)
    for y in range(b.y_size):
        for x in range(b.x_size):
            loc = loc_of(x, y, b.x_size)
            c = b.colors[loc]
            if c == C_BLACK or c == C_WHITE:
                area[loc] = c
                score += 1 if c == C_WHITE else -1
            elif not seen[loc]:
                touches_black = False
                touches_white = False
                n_region = 0
                top = 0
                stack[top] = loc
                top += 1
                seen[loc] = 1
                while top > 0:
                    top -= 1
                    cur = stack[top]
                    region[n_region] = cur
                    n_region += 1
                    for i in range(4):
                        adj = cur + b.adj_offsets[i]
                        c = b.colors[adj]
                        if c == C_EMPTY:
                            if not seen[adj]:
                                seen[adj] = 1
                                stack[top] = adj
                                top += 1
                        elif c == C_BLACK:
                            touches_black = True
                        elif c == C_WHITE:
                            touches_white = True
                if touches_black != touches_white:
                    owner = C_BLACK if touches_black else C_WHITE
                    for k in range(n_region):
                        area[region[k]] = owner
                    score += n_region if owner == C_WHITE else -n_region
    return score


# ---- Go rollout ------------------------------------------------------------------------
cdef int rollout_go(Board* b, Color pla, bint multi_stone_suicide_legal, Rng* rng, Color* area) noexcept nogil:
    # The shared playout engine keeps its own generator state; derive it from ours so runs stay reproducible.
    cdef PlayoutRng prng
    playout_rng_seed(&prng, rng_next(rng))
    playout_random(b, pla, DEFAULT_MAX_MOVES, &prng, multi_stone_suicide_legal)
    return area_score_white_minus_black(b, area)
