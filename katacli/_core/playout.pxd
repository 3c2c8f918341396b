# cython: language_level=3
"""Contract of fast random playouts on the Board struct (benchmarks, future rollouts).

A playout plays uniformly random moves for alternating players until both pass
in a row (or max_moves stones were played). A player only passes when it has no
legal move except filling one of its own simple eyes (board_is_simple_eye).
Legality is the board's: occupancy, the simple-ko point and suicide (single
stones never, multi-stone chains if the rule allows). There is no superko, so
a cycle can only be ended by max_moves.

Rng is xoshiro256** (Blackman and Vigna), seeded through splitmix64, so the
same seed gives the same playout on every machine. Everything is nogil and
allocation-free; one Rng per thread.
"""
from libc.stdint cimport uint64_t, uint32_t
from libc.math cimport sqrt, log, cos, M_PI
from katacli._core.board cimport Board, Color

cdef enum:
    PLAYOUT_MAX_MOVES_PER_POINT = 3   # default cap: this many stones per board point


cdef struct Rng:
    uint64_t s[4]


cdef inline uint64_t _rotl(uint64_t x, int k) noexcept nogil:
    return (x << k) | (x >> (64 - k))

cdef inline uint64_t _splitmix64(uint64_t* state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef inline void rng_seed(Rng* r, uint64_t seed) noexcept nogil:
    # splitmix64 never yields four zero words, which xoshiro must avoid.
    cdef uint64_t sm = seed
    r.s[0] = _splitmix64(&sm)
    r.s[1] = _splitmix64(&sm)
    r.s[2] = _splitmix64(&sm)
    r.s[3] = _splitmix64(&sm)

cdef inline uint64_t rng_next(Rng* r) noexcept nogil:
    cdef uint64_t result = _rotl(r.s[1] * 5, 7) * 9
    cdef uint64_t t = r.s[1] << 17
    r.s[2] ^= r.s[0]
    r.s[3] ^= r.s[1]
    r.s[1] ^= r.s[2]
    r.s[0] ^= r.s[3]
    r.s[2] ^= t
    r.s[3] = _rotl(r.s[3], 45)
    return result

cdef inline uint32_t rng_below(Rng* r, uint32_t n) noexcept nogil:
    # Lemire's multiply-shift: uniform in [0, n) up to a bias of n / 2**32, no division.
    return <uint32_t>(((rng_next(r) >> 32) * <uint64_t>n) >> 32)

cdef inline double rng_uniform(Rng* r) noexcept nogil:
    # The top 53 bits as a double in [0, 1).
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)

cdef inline double rng_gaussian(Rng* r) noexcept nogil:
    # Box-Muller; u1 is kept away from 0 so log stays finite.
    cdef double u1 = rng_uniform(r), u2 = rng_uniform(r)
    if u1 < 1e-300:
        u1 = 1e-300
    return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2)


# Plays from the position as it stands (b.ko_loc is respected), first to move first.
# Returns the number of stones played (passes not counted). max_moves < 0 means
# PLAYOUT_MAX_MOVES_PER_POINT * board points.
cdef int playout_random(Board* b, Color first, int max_moves, Rng* rng, bint multi_stone_suicide_legal) noexcept nogil

# A uniformly random legal move for pla that does not fill pla's own simple eye, or PASS_LOC.
cdef int playout_choose_move(const Board* b, Color pla, Rng* rng, bint multi_stone_suicide_legal) noexcept nogil

# Tromp-Taylor count, white minus black: stones, plus each empty region that
# reaches stones of one colour only (no komi, nothing removed as dead).
# If area is not NULL, each point's owner (C_BLACK / C_WHITE / C_EMPTY) is written
# into it, indexed by Loc (MAX_ARR_SIZE entries, fully overwritten).
cdef int area_score_simple(const Board* b, Color* area) noexcept nogil

# A playout from the position as it stands (default move cap), then its Tromp-Taylor count:
# the network-free engine's leaf evaluation. Writes the owners into area as area_score_simple.
cdef int playout_area_score(Board* b, Color first, bint multi_stone_suicide_legal, Rng* rng, Color* area) noexcept nogil
