# cython: language_level=3
"""Contract: SearchTree, the Python-facing MCTS tree -- a thin wrapper over the search_* modules.

It owns one TreeCore (search_nodes.pxd has the structs and the vocabulary) with its batch
buffers as numpy arrays, and drives a search one batch at a time: collect leaves
(search_descent), evaluate them in Python, apply the results (search_leaf, search_backup);
root settings come from search_root. search_results reads results out of it.
The struct types are re-exported here for code that cimported them from search_tree.
"""
from katacli._core.board cimport Loc
from katacli._core.leaf_workers cimport LeafHelpers, LeafRing
from katacli._core.search_nodes cimport (
    TreeCore, Node, ChildSlot, NodeStats, DirectEval, SvbEntry, LeafSlot, MAX_EDGES,
    NODE_UNEVALUATED, NODE_PENDING, NODE_EXPANDED,
)


# Leaf batches a tree can have in flight at once (Searcher's pipelining uses two).
cdef enum:
    MAX_LANES = 2


cdef class SearchTree:
    cdef TreeCore t
    cdef object _spatial
    cdef object _global
    cdef object _legal
    cdef object _keys
    cdef object _is_root
    cdef object _white
    cdef object _mirror_hack
    cdef object _leaf_symmetry
    cdef object _sym_pos_maps           # int32 [8, area] while the tree draws leaf symmetries, else None
    cdef LeafSlot* _all_leaves          # num_lanes * t.max_batch slots; t.leaves points at the current lane's
    cdef int _num_lanes
    cdef int _lane                      # the lane t's batch pointers and t.num_leaves belong to
    cdef int _lane_leaves[MAX_LANES]    # waiting leaves of each lane while another is current
    cdef public object _root_symmetries
    cdef object _eval_cache             # the EvalCache whose table t.eval_cache points into, kept alive here
    cdef object _pattern_table          # the PatternBonusTable t.pattern_table points into, kept alive here
    cdef LeafHelpers _helpers           # helper threads filling leaf inputs, maybe shared (set_leaf_helpers)
    cdef LeafRing* _ring                # this tree's histories for them; NULL without helpers
    cdef dict _batch_views              # (lane, n) -> batch_arrays' tuple of views, made once each
    cdef Loc _loc(self, xy) except? -1
    cdef void _point_at_lane(self, int lane)
