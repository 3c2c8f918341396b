# cython: language_level=3
"""KataGo's 64-bit mixers (core/hash.cpp) and the fixed 128-bit constants it folds into its situation and
network-cache hashes (rules, pass and game-end flags, input settings), so that katacli's hashes are
KataGo's bit for bit: the same position lands in the same slot of the direct-mapped NN cache.
Each Hash128 constant is (hash0, hash1) as KataGo writes Hash128(hash0, hash1)."""
from libc.stdint cimport uint64_t
from katacli._core.board cimport Hash128


cdef inline uint64_t basic_lcong(uint64_t x) noexcept nogil:
    return 2862933555777941757ULL * x + 3037000493ULL

cdef inline uint64_t basic_lcong2(uint64_t x) noexcept nogil:
    return 6364136223846793005ULL * x + 1442695040888963407ULL

cdef inline uint64_t murmur_mix(uint64_t x) noexcept nogil:
    x ^= x >> 33
    x *= 0xff51afd7ed558ccdULL
    x ^= x >> 33
    x *= 0xc4ceb9fe1a85ec53ULL
    x ^= x >> 33
    return x

cdef inline uint64_t split_mix64(uint64_t x) noexcept nogil:
    x = x + 0x9e3779b97f4a7c15ULL
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL
    return x ^ (x >> 31)

cdef inline uint64_t _rotate_right(uint64_t x, int r) noexcept nogil:
    return (x >> r) | (x << (64 - r))

cdef inline uint64_t rrmxmx(uint64_t x) noexcept nogil:
    x ^= _rotate_right(x, 49) ^ _rotate_right(x, 24)
    x *= 0x9fb21c651e98df25ULL
    x ^= x >> 28
    x *= 0x9fb21c651e98df25ULL
    return x ^ (x >> 28)

cdef inline Hash128 hash128(uint64_t h0, uint64_t h1) noexcept nogil:
    cdef Hash128 h
    h.h0 = h0
    h.h1 = h1
    return h

# Rules (game/rules.cpp), indexed by katacli's rule codes, which are KataGo's.
cdef inline Hash128 ko_rule_hash(int ko_rule) noexcept nogil:
    if ko_rule == 0:
        return hash128(0x3cc7e0bf846820f6ULL, 0x1fb7fbde5fc6ba4eULL)
    if ko_rule == 1:
        return hash128(0xcc18f5d47188554aULL, 0x3a63152c23e4128dULL)
    if ko_rule == 2:
        return hash128(0x3bc55e42b23b35bfULL, 0xc75fa1e615621dcdULL)
    return hash128(0x5b2096e48241d21bULL, 0x23cc18d4e85cd67fULL)

cdef inline Hash128 scoring_rule_hash(int scoring_rule) noexcept nogil:
    if scoring_rule == 0:
        return hash128(0x8b3ed7598f901494ULL ^ 0x72eeccc72c82a5e7ULL, 0x1dfd47ac77bce5f8ULL ^ 0x0d1265e413623e2bULL)
    return hash128(0x381345dc357ec982ULL ^ 0x125bfe48a41042d5ULL, 0x03ba55c026026b56ULL ^ 0x061866b5f2b98a79ULL)

cdef inline Hash128 tax_rule_hash(int tax_rule) noexcept nogil:
    if tax_rule == 0:
        return hash128(0x72eeccc72c82a5e7ULL, 0x0d1265e413623e2bULL)
    if tax_rule == 1:
        return hash128(0x125bfe48a41042d5ULL, 0x061866b5f2b98a79ULL)
    return hash128(0xa384ece9d8ee713cULL, 0xfdc9f3b5d1f3732bULL)

cdef inline Hash128 multi_stone_suicide_hash() noexcept nogil:
    return hash128(0xf9b475b3bbf35e37ULL, 0xefa19d8b1e5b3e5aULL)

cdef inline Hash128 button_hash() noexcept nogil:
    return hash128(0xb8b914c9234ece84ULL, 0x3d759cddebe29c14ULL)

cdef inline Hash128 friendly_pass_ok_hash() noexcept nogil:
    return hash128(0x0113655998ef0a25ULL, 0x99c9d04ecd964874ULL)

cdef inline Hash128 pass_alive_under_suicide_hash() noexcept nogil:
    return hash128(0x3094018861134017ULL, 0x706330a293e266aaULL)

# Board (game/board.cpp) and MiscNNInputParams (neuralnet/nninputs.cpp).
cdef inline Hash128 pass_ends_phase_hash() noexcept nogil:
    return hash128(0x853E097C279EBF4EULL, 0xE3153DEF9E14A62CULL)

cdef inline Hash128 game_is_over_hash() noexcept nogil:
    return hash128(0xb6f9e465597a77eeULL, 0xf1d583d960a4ce7fULL)

cdef inline Hash128 conservative_pass_hash() noexcept nogil:
    return hash128(0x0c2b96f4b8ae2da9ULL, 0x5a14dee208fec0edULL)

cdef inline Hash128 friendly_pass_hash() noexcept nogil:
    return hash128(0xe750505a66f7c5c2ULL, 0x7a83139bf632d6c4ULL)

cdef inline Hash128 passing_hacks_hash() noexcept nogil:
    return hash128(0x9c89f4fd3ce5a92cULL, 0x268c9aff79c64d00ULL)

cdef inline Hash128 playout_doublings_hash() noexcept nogil:
    return hash128(0xa5e6114d380bfc1dULL, 0x4160557f1222f4adULL)

cdef inline Hash128 nn_policy_temp_hash() noexcept nogil:
    return hash128(0xebcbdfeec6f4334bULL, 0xb85e43ee243b5ad2ULL)

cdef inline Hash128 policy_optimism_hash() noexcept nogil:
    return hash128(0x88415c85c2801955ULL, 0x39bdf76b2aaa5eb1ULL)

cdef inline Hash128 zero_history_hash() noexcept nogil:
    return hash128(0x78f02afdd1aa4910ULL, 0xda78d550486fe978ULL)
