# cython: language_level=3
"""Contract: the atomic operations the core's threads share data through (GCC and Clang builtins), declared once.

Declarations only (no module of its own): cimport what a module needs.
- ``atomic_load`` / ``atomic_store`` / ``atomic_add`` / ``atomic_cas``: sequentially consistent, on 64-bit
  counters (the leaf helpers' batch hand-off: ``leaf_workers``).
- ``atomic_add_acq_rel``: acquire-release, for reference counts (``policy_rows``).
- ``seq_load`` / ``seq_store`` / ``seq_cas`` and the two fences: a seqlock's sequence number (the tree's
  ladder table: ``ladder``).
"""
from libc.stdint cimport int64_t, uint32_t

cdef extern from *:
    """
    #include <stdint.h>
    static inline int64_t katacli_atomic_load(int64_t* p) { return __atomic_load_n(p, __ATOMIC_SEQ_CST); }
    static inline void katacli_atomic_store(int64_t* p, int64_t v) { __atomic_store_n(p, v, __ATOMIC_SEQ_CST); }
    static inline int64_t katacli_atomic_add(int64_t* p, int64_t v) {
        return __atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
    }
    static inline int katacli_atomic_cas(int64_t* p, int64_t expected, int64_t desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
    }
    static inline int64_t katacli_atomic_add_acq_rel(int64_t* p, int64_t v) {
        return __atomic_add_fetch(p, v, __ATOMIC_ACQ_REL);
    }
    static inline uint32_t katacli_seq_load(uint32_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void katacli_seq_store(uint32_t* p, uint32_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int katacli_seq_cas(uint32_t* p, uint32_t expected, uint32_t desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
    static inline void katacli_fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
    static inline void katacli_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
    """
    int64_t atomic_load "katacli_atomic_load"(int64_t* p) noexcept nogil
    void atomic_store "katacli_atomic_store"(int64_t* p, int64_t v) noexcept nogil
    int64_t atomic_add "katacli_atomic_add"(int64_t* p, int64_t v) noexcept nogil
    bint atomic_cas "katacli_atomic_cas"(int64_t* p, int64_t expected, int64_t desired) noexcept nogil
    int64_t atomic_add_acq_rel "katacli_atomic_add_acq_rel"(int64_t* p, int64_t v) noexcept nogil
    uint32_t seq_load "katacli_seq_load"(uint32_t* p) noexcept nogil
    void seq_store "katacli_seq_store"(uint32_t* p, uint32_t v) noexcept nogil
    bint seq_cas "katacli_seq_cas"(uint32_t* p, uint32_t expected, uint32_t desired) noexcept nogil
    void fence_acquire "katacli_fence_acquire"() noexcept nogil
    void fence_release "katacli_fence_release"() noexcept nogil
