# cython: language_level=3
"""Contract: graph search -- transpositions share one node (KataGo's useGraphSearch, graphhash and
searchnodetable).

Owns the graph hash of a position (the situation with its ko and superko bans, rules and komi,
whether a pass ends the phase, whether the game is over, the consecutive ending passes) chained
with the previous node's hash unless the last move cannot be part of a repetition cycle of at most
graphSearchRepBound stones and empty points, so that positions that could cycle back are told
apart by their recent history; the node table (every node but the root, keyed by that hash, xor a
marker for forced non-terminal nodes); freeing by mark-and-sweep from the root; and walks over the
whole graph that visit each node once and survive cycles (the checks the tests use).

Cycles met by a descent and catching up edge visits are handled in search_descent; recomputing a
node's stats from its children's edge visits is search_backup's, the same in both modes.
"""
from libc.stdint cimport int64_t
from katacli._core.board cimport Board, Loc, Color, Hash128
from katacli._core.history cimport History
from katacli._core.search_nodes cimport TreeCore, Node

cdef Hash128 graph_state_hash(const History* h, Color next_pla) noexcept nogil
# Whether any cycle through loc's last move needs more than bound stones and empty points (no chaining needed).
cdef bint repetition_bound_gt(const Board* b, Loc loc, int bound) noexcept nogil
# After a move was made on h: the new node's graph hash from its parent's.
cdef Hash128 graph_hash_after_move(Hash128 prev, const History* h, Color next_pla, int rep_bound) noexcept nogil

# The table's node for graph_hash (created, unevaluated, when there is none; created[0] tells which).
cdef Node* graph_find_or_new(TreeCore* t, Hash128 graph_hash, bint force_non_terminal, Color next_pla,
                             bint* created) noexcept nogil
cdef Node* graph_copy_as_root(TreeCore* t, const Node* n) noexcept nogil   # outside the table, no SVB entry
cdef void graph_sweep_unreachable(TreeCore* t) noexcept nogil   # free table nodes the root cannot reach
cdef void graph_free_all(TreeCore* t) noexcept nogil            # root and table
cdef void free_all_nodes(TreeCore* t) noexcept nogil            # either mode; t.root is NULL afterwards

# Eval cache (useEvalCache): after a search, record every node with evalCacheMinVisits visits (search_evalcache).
cdef void graph_record_eval_cache(TreeCore* t) noexcept nogil

# Whole-graph walks: each call starts a new walk epoch.
cdef int64_t begin_walk(TreeCore* t) noexcept nogil
# Checks for tests: virtual losses (0 between batches), node count, and visits of each expanded node
# >= 1 + its children's edge visits (tree search: also edge visits never above the child's visits), with the
# priors kept in child slots and next_new_prior equal to the node's policy row.
cdef int64_t graph_virtual_losses(TreeCore* t) noexcept nogil
cdef int64_t graph_node_count(TreeCore* t) noexcept nogil
cdef bint graph_visits_consistent(TreeCore* t) noexcept nogil
