# cython: language_level=3
"""Contract: helper threads that build a batch's leaf inputs while the search thread descends.

A batch's leaves cost two kinds of work: the descent (selection, moves, virtual losses: it changes the
tree, so one thread does it) and the leaf's network inputs (ladders, pass-alive areas, feature planes,
legal mask, NN cache key: they read only the leaf's own history). With helpers, the search thread
descends on one of a small ring of histories (copies of the root's, brought back to it after use) and
publishes the leaf; a helper claims it, fills its rows and restores the history for a later leaf. When
the next history is still in use the search thread fills waiting leaves itself, and at the end of the
batch it claims what is left and waits for the rest. A ring rather than a history per slot: a 256-leaf
batch would otherwise walk 10 MB of histories, out of the caches.

The helpers (LeafWorkers, owned by a LeafHelpers object) are separate from the ring (LeafRing, one per
tree): several trees stepped from one thread (the analysis engine's groups, self-play's drivers) share
one set of helpers, each batch pointing them at its tree and ring. One batch at a time per set: a
collect that finds the helpers busy with another tree's batch fills its own leaves.

The search thread draws the leaf's symmetry and mirror mark before publishing, in the same order as
without helpers, and every thread keeps its own ladder cache (a memo keyed by the position, board size
included), so the batch's rows and the tree are exactly those of a search without helpers.

Helpers sleep between batches and spin (yielding after a while) inside one. Built on POSIX threads;
helpers started before fork() are not used in the child (the child collects on its own thread).
"""
from libc.stdint cimport int64_t, uint64_t
from katacli._core.history cimport History
from katacli._core.ladder cimport LadderCache
from katacli._core.search_nodes cimport TreeCore

from katacli._core.pthreads cimport pthread_t, pthread_mutex_t, pthread_cond_t


cdef struct WorkerCounter:
    # Each counter on a cache line of its own: the search thread writes published, helpers claimed/done.
    int64_t value
    char pad[56]


cdef struct LeafRing:
    # A tree's histories (leaf slot s uses entry s % num_hists): copies of t.root_hist at version
    # hist_version[i] (t.root_version), busy[i] from the leaf's publication until its history is restored.
    History* hists
    uint64_t* hist_version           # 0: not yet copied
    int64_t* busy                    # atomics
    int num_hists


cdef struct LeafWorkers:
    int num_threads
    pthread_t* threads
    LadderCache* caches              # [num_threads]: each helper's ladder workspace (the table is the tree's)
    long owner_pid                   # the process that started the helpers (a forked child does not use them)
    # The batch in progress (set by leaf_workers_begin, read by a helper after it claims a leaf)
    TreeCore* t
    LeafRing* ring
    # Waking helpers for a batch
    pthread_mutex_t mutex
    pthread_cond_t wake
    int generation                   # +1 per batch (under mutex)
    bint shutdown
    # Progress, counted in leaves since the helpers started (atomics), so that a count never repeats: a
    # helper's claim on leaf c can only succeed in the batch that published c.
    WorkerCounter published          # leaves ready for their inputs
    WorkerCounter claimed            # leaves taken by a thread
    WorkerCounter done               # leaves finished
    WorkerCounter first              # the current batch's first leaf (its slot 0)
    WorkerCounter closed             # the generation of the last batch that publishes no more
    WorkerCounter by_helpers         # leaves the helpers filled (the rest: the search threads)
    WorkerCounter in_use             # 1 while a batch holds the helpers


# Python's handle on a set of helpers: trees share it (SearchTree.set_leaf_helpers); the helpers stop
# when the last holder lets go.
cdef class LeafHelpers:
    cdef LeafWorkers* w


# num_threads helpers, or NULL if no thread could start.
cdef LeafWorkers* leaf_workers_new(int num_threads) noexcept nogil
cdef void leaf_workers_free(LeafWorkers* w) noexcept nogil   # stops and joins the helpers; NULL is fine
# A tree's ring for batches of up to max_batch leaves with num_threads helpers (NULL if out of memory).
cdef LeafRing* leaf_ring_new(int max_batch, int num_threads) noexcept nogil
cdef void leaf_ring_free(LeafRing* ring) noexcept nogil
# Start a batch of t's on the helpers: ring's histories brought up to the root's version, helpers woken.
# False: do not use them for this batch (w or ring NULL, a forked child, another batch holding them);
# nothing was started.
cdef bint leaf_workers_begin(LeafWorkers* w, TreeCore* t, LeafRing* ring) noexcept nogil
# The history to descend on for leaf slot `slot` (equal to the root's; waits, filling leaves, while busy).
cdef History* leaf_workers_history(LeafWorkers* w, int slot) noexcept nogil
# Slot `slot` (the next in order) holds a leaf: its is_root, symmetry and mirror mark are set.
cdef void leaf_workers_publish(LeafWorkers* w, int slot) noexcept nogil
# No more leaves this batch: fill what no helper took, wait for the rest, let the helpers go; every
# history of the ring is restored.
cdef void leaf_workers_finish(LeafWorkers* w) noexcept nogil
