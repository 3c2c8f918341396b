# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Helper threads that build a batch's leaf inputs while the search thread descends (contract:
leaf_workers.pxd)."""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport calloc, free
from libc.string cimport memset

from katacli._core.history cimport History, history_copy, history_free, history_restore
from katacli._core.ladder cimport LadderCache, ladder_cache_release, ladder_cache_prepare, ladder_cache_borrow
from katacli._core.search_nodes cimport TreeCore
from katacli._core.search_leaf cimport fill_leaf_features
from katacli._core.atomics cimport atomic_load, atomic_store, atomic_add, atomic_cas

from katacli._core.pthreads cimport (
    pthread_create, pthread_join, pthread_mutex_init, pthread_mutex_destroy, pthread_mutex_lock, pthread_mutex_unlock,
    pthread_cond_init, pthread_cond_destroy, pthread_cond_wait, pthread_cond_broadcast,
)

cdef extern from "<sched.h>" nogil:
    int sched_yield()

cdef extern from "<unistd.h>" nogil:
    long getpid()

# The spin-wait hint.
cdef extern from *:
    """
    #if defined(__x86_64__) || defined(__i386__)
    static inline void katacli_spin_pause(void) { __builtin_ia32_pause(); }
    #elif defined(__aarch64__)
    static inline void katacli_spin_pause(void) { __asm__ __volatile__("yield"); }
    #else
    static inline void katacli_spin_pause(void) { }
    #endif
    """
    void spin_pause "katacli_spin_pause"() noexcept nogil

cdef enum:
    # Histories in the ring per thread (helpers and the search thread): enough that the search thread
    # rarely finds the next one busy, few enough (40 KB each) to stay in the caches.
    HISTORIES_PER_THREAD = 16
    # Empty polls a thread spins through before it yields its core on each further one: about 20 us,
    # longer than a descent, so a helper waiting for the next leaf keeps its core on an idle machine
    # but gives it up where threads outnumber cores.
    SPIN_POLLS_BEFORE_YIELD = 2000


cdef inline int _idle(int polls) noexcept nogil:
    """One empty poll of a spin-wait: a pause, or after SPIN_POLLS_BEFORE_YIELD of them the core given up
    (the thread awaited may be waiting for it). Returns the polls so far."""
    if polls >= SPIN_POLLS_BEFORE_YIELD:
        sched_yield()
    else:
        spin_pause()
    return polls + 1


cdef struct _HelperArg:
    LeafWorkers* w
    int index


cdef void _fill_slot(LeafWorkers* w, int slot, LadderCache* cache) noexcept nogil:
    # w.t and w.ring were set before the batch published its first leaf, so after a claim they are this
    # batch's even for a helper that went on polling from the batch before.
    cdef LeafRing* ring = w.ring
    cdef int entry = slot % ring.num_hists
    cdef History* h = &ring.hists[entry]
    cdef LadderCache shared
    # Every thread filling this tree's leaves looks ladders up in the tree's table (a leaf's previous
    # boards were scanned by whichever thread filled its parent), each with its own workspace.
    ladder_cache_borrow(&shared, &w.t.ladder_cache, cache)
    fill_leaf_features(w.t, slot, h, &shared)
    history_restore(h, &w.t.root_hist)
    atomic_store(&ring.busy[entry], 0)


cdef bint _claim_and_fill(LeafWorkers* w, LadderCache* cache, bint helper) noexcept nogil:
    """Fill one published leaf nobody has taken; False if there is none just now."""
    cdef int64_t c = atomic_load(&w.claimed.value)
    if c >= atomic_load(&w.published.value) or not atomic_cas(&w.claimed.value, c, c + 1):
        return False
    # Leaf c is this batch's: the batch cannot end (and the next move `first`) before c is done.
    _fill_slot(w, <int>(c - atomic_load(&w.first.value)), cache)
    if helper:
        atomic_add(&w.by_helpers.value, 1)
    atomic_add(&w.done.value, 1)
    return True


cdef void* _helper_main(void* arg) noexcept nogil:
    cdef _HelperArg* a = <_HelperArg*>arg
    cdef LeafWorkers* w = a.w
    cdef LadderCache* cache = &w.caches[a.index]
    cdef int seen = 0, polls
    free(a)
    while True:
        pthread_mutex_lock(&w.mutex)
        while w.generation == seen and not w.shutdown:
            pthread_cond_wait(&w.wake, &w.mutex)
        seen = w.generation
        if w.shutdown:
            pthread_mutex_unlock(&w.mutex)
            return NULL
        pthread_mutex_unlock(&w.mutex)
        # A batch is on: take leaves as they come until the search thread closes it.
        polls = 0
        while True:
            if _claim_and_fill(w, cache, True):
                polls = 0
                continue
            if atomic_load(&w.closed.value) >= seen:
                break
            polls = _idle(polls)


cdef LeafWorkers* leaf_workers_new(int num_threads) noexcept nogil:
    cdef LeafWorkers* w
    cdef _HelperArg* a
    cdef int i
    if num_threads <= 0:
        return NULL
    w = <LeafWorkers*>calloc(1, sizeof(LeafWorkers))
    if w == NULL:
        return NULL
    w.owner_pid = getpid()
    w.caches = <LadderCache*>calloc(num_threads, sizeof(LadderCache))
    w.threads = <pthread_t*>calloc(num_threads, sizeof(pthread_t))
    if w.caches == NULL or w.threads == NULL:
        leaf_workers_free(w)
        return NULL
    pthread_mutex_init(&w.mutex, NULL)
    pthread_cond_init(&w.wake, NULL)
    for i in range(num_threads):
        a = <_HelperArg*>calloc(1, sizeof(_HelperArg))
        if a == NULL:
            break
        a.w = w
        a.index = i
        if pthread_create(&w.threads[i], NULL, _helper_main, a) != 0:
            free(a)
            break
        w.num_threads += 1
    if w.num_threads == 0:
        leaf_workers_free(w)
        return NULL
    return w


cdef void leaf_workers_free(LeafWorkers* w) noexcept nogil:
    cdef int i
    if w == NULL:
        return
    # A forked child has none of the helpers, and must not touch the mutex and condition variable they
    # were using at the fork (destroying a condition variable waits for its waiters: forever there).
    if w.threads != NULL and w.num_threads > 0 and w.owner_pid == getpid():
        pthread_mutex_lock(&w.mutex)
        w.shutdown = True
        pthread_cond_broadcast(&w.wake)
        pthread_mutex_unlock(&w.mutex)
        for i in range(w.num_threads):
            pthread_join(w.threads[i], NULL)
        pthread_cond_destroy(&w.wake)
        pthread_mutex_destroy(&w.mutex)
    if w.caches != NULL:
        for i in range(w.num_threads):
            ladder_cache_release(&w.caches[i])
    free(w.caches)
    free(w.threads)
    free(w)


cdef LeafRing* leaf_ring_new(int max_batch, int num_threads) noexcept nogil:
    cdef LeafRing* ring = <LeafRing*>calloc(1, sizeof(LeafRing))
    if ring == NULL:
        return NULL
    ring.num_hists = min(max_batch, HISTORIES_PER_THREAD * (num_threads + 1))
    ring.hists = <History*>calloc(ring.num_hists, sizeof(History))
    ring.hist_version = <uint64_t*>calloc(ring.num_hists, sizeof(uint64_t))
    ring.busy = <int64_t*>calloc(ring.num_hists, sizeof(int64_t))
    if ring.hists == NULL or ring.hist_version == NULL or ring.busy == NULL:
        leaf_ring_free(ring)
        return NULL
    return ring


cdef void leaf_ring_free(LeafRing* ring) noexcept nogil:
    cdef int i
    if ring == NULL:
        return
    if ring.hists != NULL and ring.hist_version != NULL:
        for i in range(ring.num_hists):
            if ring.hist_version[i] != 0:
                history_free(&ring.hists[i])
    free(ring.hists)
    free(ring.hist_version)
    free(ring.busy)
    free(ring)


cdef bint leaf_workers_begin(LeafWorkers* w, TreeCore* t, LeafRing* ring) noexcept nogil:
    cdef int i
    if w == NULL or ring == NULL or w.owner_pid != getpid() or not t.has_root_hist:
        return False
    if not atomic_cas(&w.in_use.value, 0, 1):
        return False   # another tree's batch has them (trees stepped from several threads)
    for i in range(ring.num_hists):   # none is busy: the last batch on this ring finished them all
        if ring.hist_version[i] != t.root_version:
            if ring.hist_version[i] != 0:
                history_free(&ring.hists[i])
            history_copy(&ring.hists[i], &t.root_hist)
            ring.hist_version[i] = t.root_version
    ladder_cache_prepare(&t.ladder_cache)   # before the helpers borrow it
    w.t = t
    w.ring = ring
    # Every leaf so far is done (finish waited for it): this batch's slot 0 is the next leaf.
    atomic_store(&w.first.value, atomic_load(&w.published.value))
    pthread_mutex_lock(&w.mutex)
    w.generation += 1
    pthread_cond_broadcast(&w.wake)
    pthread_mutex_unlock(&w.mutex)
    return True


cdef History* leaf_workers_history(LeafWorkers* w, int slot) noexcept nogil:
    cdef LeafRing* ring = w.ring
    cdef int entry = slot % ring.num_hists, polls = 0
    while atomic_load(&ring.busy[entry]):
        if not _claim_and_fill(w, &w.t.ladder_cache, False):
            polls = _idle(polls)   # a helper is finishing it
    return &ring.hists[entry]


cdef void leaf_workers_publish(LeafWorkers* w, int slot) noexcept nogil:
    atomic_store(&w.ring.busy[slot % w.ring.num_hists], 1)
    atomic_store(&w.published.value, w.first.value + slot + 1)


cdef void leaf_workers_finish(LeafWorkers* w) noexcept nogil:
    cdef int64_t total = atomic_load(&w.published.value)
    cdef int polls = 0
    atomic_store(&w.closed.value, w.generation)
    while _claim_and_fill(w, &w.t.ladder_cache, False):
        pass
    while atomic_load(&w.done.value) < total:
        polls = _idle(polls)
    atomic_store(&w.in_use.value, 0)


cdef class LeafHelpers:
    """Helper threads that fill leaf inputs for the trees given them (SearchTree.set_leaf_helpers), one
    batch at a time; they stop when the last tree holding them lets go."""

    def __cinit__(self, int threads):
        if threads <= 0:
            raise ValueError("a set of leaf helpers needs at least one thread")
        with nogil:
            self.w = leaf_workers_new(threads)

    def __dealloc__(self):
        with nogil:
            leaf_workers_free(self.w)
        self.w = NULL

    @property
    def threads(self):
        """Helper threads running (0 if none could start)."""
        return self.w.num_threads if self.w != NULL else 0

    @property
    def leaves_filled(self):
        """Leaves whose inputs the helpers filled since they started."""
        return self.w.by_helpers.value if self.w != NULL else 0
