# cython: language_level=3
"""Contract: the eval cache -- search results remembered across searches (KataGo's useEvalCache, evalcache.cpp).

After each search (useEvalCache with useGraphSearch), every node of the graph with at least
evalCacheMinVisits visits (not a forced non-terminal one) is recorded under its graph hash xor a
hash of all search parameters: its averaged win-loss, no-result, score mean and lead with its
visits as the entry's weight, and for each of its children with at least evalCacheMinVisits
visits that child's win-loss and score mean ("first explore evals", weight = the child's visits).
A record with fewer than 3/4 of the weight already stored is dropped; otherwise it replaces the
entry, keeping earlier first explore evals of moves not seen this time. The root keeps its old
averages when passing has an eighth of its edge visits or is within 0.05 utility of its best move.

A node created later (or the root of a new tree) with that key holds the entry found at creation
as an immutable, reference-counted snapshot: later updates replace the table's entry, not the
snapshot. search_backup blends the snapshot's averages into the node's values, search_select lets
unexplored moves with a first explore eval compete with that value instead of FPU.

The table lives outside any tree (a Python EvalCache object) so that GTP keeps it across games and
the analysis engine shares it between queries; it grows without bound, as KataGo's does (only nodes
with evalCacheMinVisits visits enter it), until cleared (clear_cache). All functions are thread-safe.
"""
from libc.stdint cimport int64_t
from katacli._core.board cimport Loc, Hash128

cdef struct FirstExploreEval:
    Loc move
    float win_loss              # the child's averages, White's view
    float score_mean
    float weight                # the child's visits when recorded

cdef struct EvalCacheEntry:
    float win_loss              # the node's averages, White's view
    float no_result
    float score_mean
    float lead
    float weight                # the node's visits when recorded; 0: averages never recorded
    int num_first
    FirstExploreEval* first     # sorted by move
    int64_t refs                # the table's reference plus one per node holding it

cdef struct EvalCacheSlot:
    Hash128 key
    EvalCacheEntry* entry       # NULL: empty slot

cdef struct EvalCacheTable:
    EvalCacheSlot* slots        # open addressing on key.h0
    int64_t size                # power of two (0: none yet)
    int64_t count

# An entry with a reference for the caller, or NULL.
cdef EvalCacheEntry* evalcache_find(EvalCacheTable* table, Hash128 key) noexcept nogil
cdef EvalCacheEntry* evalcache_retain(EvalCacheEntry* e) noexcept nogil
cdef void evalcache_release(EvalCacheEntry* e) noexcept nogil   # e may be NULL
# Record a node: its visits, whether its averages are to be stored, and its children with enough visits.
cdef void evalcache_update(EvalCacheTable* table, Hash128 key, double node_visits, bint record_averages,
                           double win_loss, double no_result, double score_mean, double lead,
                           const FirstExploreEval* children, int num_children) noexcept nogil
cdef void evalcache_clear(EvalCacheTable* table) noexcept nogil


cdef class EvalCache:
    cdef EvalCacheTable table
