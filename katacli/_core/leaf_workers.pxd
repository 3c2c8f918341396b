# cython: language_level=3
"""Contract: helper threads that build a batch's leaf inputs while the search thread descends.

A batch's leaves cost two kinds of work: the descent (selection, moves, virtual losses: it changes the
tree, so one thread does it) and the leaf's network inputs (ladders, pass-alive areas, feature planes,
legal mask, NN cache key: they read only the leaf's own history). With helpers, the search thread
descends on one of a small ring of histories (copies of the root's, brought back to it after use) and
publishes the leaf; a helper claims it, fills its rows and restores the history for a later leaf. When
the next history is still in use the search thread fills waiting leaves itself, and at the end of the
batch it claims what is left and waits for the rest. A ring rather than a history per slot: a 256-leaf
batch would otherwise walk 10 MB of histories, out of the caches. The search thread draws the leaf's symmetry and mirror mark before publishing, in the same
order as without helpers, and every thread keeps its own ladder cache (a memo), so the batch's rows and
the tree are exactly those of a search without helpers.

Helpers sleep between batches and spin (yielding after a while) inside one. Built on POSIX threads;
a pool made before fork() is not used in the child (the child collects on its own thread).
"""
from libc.stdint cimport int64_t, uint64_t
from katacli._core.history cimport History
from katacli._core.ladder cimport LadderCache
from katacli._core.search_nodes cimport TreeCore

cdef extern from "<pthread.h>" nogil:
    ctypedef struct pthread_t:
        pass
    ctypedef struct pthread_mutex_t:
        pass
    ctypedef struct pthread_cond_t:
        pass


cdef struct WorkerCounter:
    # Each counter on a cache line of its own: the search thread writes published, helpers claimed/done.
    int64_t value
    char pad[56]


cdef struct LeafWorkers:
    TreeCore* t
    int num_threads
    pthread_t* threads
    LadderCache* caches              # [num_threads]: each helper's ladder cache
    long owner_pid                   # the process that made the pool (a forked child does not use it)
    # The ring of histories (leaf slot s uses entry s % num_hists): copies of t.root_hist at version
    # hist_version[i] (t.root_version), busy[i] from the leaf's publication until its history is restored.
    History* hists
    uint64_t* hist_version           # 0: not yet copied
    int64_t* busy                    # atomics
    int num_hists
    # Waking helpers for a batch
    pthread_mutex_t mutex
    pthread_cond_t wake
    int generation                   # +1 per batch (under mutex)
    bint shutdown
    # Progress, counted in leaves since the pool started (atomics), so that a count never repeats: a
    # helper's claim on leaf c can only succeed in the batch that published c.
    WorkerCounter published          # leaves ready for their inputs
    WorkerCounter claimed            # leaves taken by a thread
    WorkerCounter done               # leaves finished
    WorkerCounter first              # the current batch's first leaf (its slot 0)
    WorkerCounter closed             # the generation of the last batch that publishes no more
    WorkerCounter by_helpers         # leaves the helpers filled (the rest: the search thread)


# A pool of num_threads helpers for t's batches (max_batch slots), or NULL if threads cannot start.
cdef LeafWorkers* leaf_workers_new(TreeCore* t, int num_threads) noexcept nogil
cdef void leaf_workers_free(LeafWorkers* w) noexcept nogil   # stops and joins the helpers; NULL is fine
# Start a batch: the histories brought up to the root's version, helpers woken. False: do not use the
# pool for this batch (a forked child); nothing was started.
cdef bint leaf_workers_begin(LeafWorkers* w) noexcept nogil
# The history to descend on for leaf slot `slot` (equal to the root's; waits, filling leaves, while busy).
cdef History* leaf_workers_history(LeafWorkers* w, int slot) noexcept nogil
# Slot `slot` (the next in order) holds a leaf: its is_root, symmetry and mirror mark are set.
cdef void leaf_workers_publish(LeafWorkers* w, int slot) noexcept nogil
# No more leaves this batch: fill what no helper took, wait for the rest; every slot history is restored.
cdef void leaf_workers_finish(LeafWorkers* w) noexcept nogil
