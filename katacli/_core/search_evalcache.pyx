# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""The eval cache table and its entries (contract: search_evalcache.pxd)."""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memcpy
from cpython.pythread cimport (
    PyThread_type_lock, PyThread_allocate_lock, PyThread_acquire_lock, PyThread_release_lock, WAIT_LOCK,
)

from katacli._core.board cimport Loc, Hash128

# A record with less than this share of the stored entry's weight is dropped (KataGo's).
cdef float REPLACE_MIN_WEIGHT_SHARE = 0.75
cdef int64_t TABLE_INITIAL_SIZE = 1024

# One lock for every table and every entry's reference count: entries outlive a clear() while trees
# still hold them, and lookups are rare (one per new node) next to the search itself.
cdef PyThread_type_lock _lock = PyThread_allocate_lock()


cdef inline void _acquire() noexcept nogil:
    PyThread_acquire_lock(_lock, WAIT_LOCK)


cdef inline void _release() noexcept nogil:
    PyThread_release_lock(_lock)


cdef inline void _unref_locked(EvalCacheEntry* e) noexcept nogil:
    if e == NULL:
        return
    e.refs -= 1
    if e.refs <= 0:
        free(e.first)
        free(e)


cdef int64_t _find_slot(const EvalCacheTable* table, Hash128 key) noexcept nogil:
    """The slot holding key, or the empty slot where it would go (the table must have room)."""
    cdef int64_t mask = table.size - 1
    cdef int64_t pos = <int64_t>(key.h0 & <uint64_t>mask)
    while table.slots[pos].entry != NULL:
        if table.slots[pos].key.h0 == key.h0 and table.slots[pos].key.h1 == key.h1:
            return pos
        pos = (pos + 1) & mask
    return pos


cdef void _grow_locked(EvalCacheTable* table) noexcept nogil:
    cdef int64_t old_size = table.size, i, pos
    cdef EvalCacheSlot* old = table.slots
    table.size = TABLE_INITIAL_SIZE if old_size == 0 else old_size * 2
    table.slots = <EvalCacheSlot*>calloc(table.size, sizeof(EvalCacheSlot))
    for i in range(old_size):
        if old[i].entry != NULL:
            pos = _find_slot(table, old[i].key)
            table.slots[pos] = old[i]
    free(old)


cdef EvalCacheEntry* evalcache_find(EvalCacheTable* table, Hash128 key) noexcept nogil:
    cdef EvalCacheEntry* e = NULL
    cdef int64_t pos
    _acquire()
    if table.size > 0:
        pos = _find_slot(table, key)
        e = table.slots[pos].entry
        if e != NULL:
            e.refs += 1
    _release()
    return e


cdef EvalCacheEntry* evalcache_retain(EvalCacheEntry* e) noexcept nogil:
    if e != NULL:
        _acquire()
        e.refs += 1
        _release()
    return e


cdef void evalcache_release(EvalCacheEntry* e) noexcept nogil:
    if e == NULL:
        return
    _acquire()
    _unref_locked(e)
    _release()


cdef int _first_index(const FirstExploreEval* first, int count, Loc move) noexcept nogil:
    cdef int i
    for i in range(count):
        if first[i].move == move:
            return i
    return -1


cdef void _sort_by_move(FirstExploreEval* first, int count) noexcept nogil:
    """Insertion sort: a handful of moves per entry."""
    cdef int i, j
    cdef FirstExploreEval x
    for i in range(1, count):
        x = first[i]
        j = i - 1
        while j >= 0 and first[j].move > x.move:
            first[j + 1] = first[j]
            j -= 1
        first[j + 1] = x


cdef void evalcache_update(EvalCacheTable* table, Hash128 key, double node_visits, bint record_averages,
                           double win_loss, double no_result, double score_mean, double lead,
                           const FirstExploreEval* children, int num_children) noexcept nogil:
    cdef int64_t pos
    cdef EvalCacheEntry* old
    cdef EvalCacheEntry* e
    cdef float new_weight = <float>node_visits
    cdef int i, j, capacity
    _acquire()
    if (table.count + 1) * 2 > table.size:
        _grow_locked(table)
    pos = _find_slot(table, key)
    old = table.slots[pos].entry
    if old != NULL and new_weight < old.weight * REPLACE_MIN_WEIGHT_SHARE:
        _release()
        return
    # A new entry (copied from the old one): nodes holding the old one keep it unchanged.
    e = <EvalCacheEntry*>calloc(1, sizeof(EvalCacheEntry))
    capacity = num_children + (old.num_first if old != NULL else 0)
    e.first = <FirstExploreEval*>malloc((capacity if capacity > 0 else 1) * sizeof(FirstExploreEval))
    if old != NULL:
        e.win_loss = old.win_loss
        e.no_result = old.no_result
        e.score_mean = old.score_mean
        e.lead = old.lead
        e.weight = old.weight
        memcpy(e.first, old.first, old.num_first * sizeof(FirstExploreEval))
        e.num_first = old.num_first
    for i in range(num_children):
        j = _first_index(e.first, e.num_first, children[i].move)
        if j < 0:
            e.first[e.num_first] = children[i]
            e.num_first += 1
        elif children[i].weight >= e.first[j].weight:
            e.first[j] = children[i]
    _sort_by_move(e.first, e.num_first)
    if record_averages:
        e.weight = new_weight
        e.win_loss = <float>win_loss
        e.no_result = <float>no_result
        e.score_mean = <float>score_mean
        e.lead = <float>lead
    e.refs = 1
    if old == NULL:
        table.slots[pos].key = key
        table.count += 1
    else:
        _unref_locked(old)
    table.slots[pos].entry = e
    _release()


cdef void evalcache_clear(EvalCacheTable* table) noexcept nogil:
    cdef int64_t i
    _acquire()
    for i in range(table.size):
        _unref_locked(table.slots[i].entry)
    free(table.slots)
    table.slots = NULL
    table.size = 0
    table.count = 0
    _release()


cdef class EvalCache:
    """KataGo's eval cache: one per GTP engine (kept across games) or analysis engine (shared by its
    queries); searches with useEvalCache and useGraphSearch record into it and read from it."""

    def __dealloc__(self):
        evalcache_clear(&self.table)

    def clear(self):
        """Forget every entry (GTP clear_cache, analysis clear_cache); trees keep the snapshots they hold."""
        with nogil:
            evalcache_clear(&self.table)

    def __len__(self):
        return self.table.count

    def entry(self, key):
        """The entry under key (an int of 128 bits, see SearchTree.eval_cache_key) as a dict, or None."""
        cdef Hash128 k
        cdef EvalCacheEntry* e
        cdef int i
        k.h0 = <uint64_t>(key & 0xFFFFFFFFFFFFFFFF)
        k.h1 = <uint64_t>((key >> 64) & 0xFFFFFFFFFFFFFFFF)
        e = evalcache_find(&self.table, k)
        if e == NULL:
            return None
        result = {
            "win_loss": e.win_loss, "no_result": e.no_result, "score_mean": e.score_mean, "lead": e.lead,
            "weight": e.weight,
            "first_explore": {int(e.first[i].move): (e.first[i].win_loss, e.first[i].score_mean, e.first[i].weight)
                              for i in range(e.num_first)},
        }
        evalcache_release(e)
        return result
