# cython: language_level=3
"""Contract: the parts of search_results other result readers build on (search_diagnostics):
play selection values, children's weight factors, finding a node by its moves, moves as (x, y)."""
from katacli._core.board cimport Loc
from katacli._core.search_nodes cimport TreeCore, Node

# KataGo's getPlaySelectionValues for node n; returns the number of entries (0 = none).
cdef int play_selection_values(TreeCore* t, Node* n, bint allow_direct_policy, bint always_compute_lcb,
                               bint never_use_lcb, double scale_max_to_at_least, Loc* locs, double* values,
                               double* lcbs, double* radii, int* slots) noexcept nogil
# Each child's weight after noise pruning and downweighting of bad children (printTree's WF).
cdef void child_weight_factors(const TreeCore* t, const Node* n, double fpu, double* out) noexcept nogil
# The node reached from the root by the moves in path ((x, y) or None); NULL if the tree does not hold it.
cdef Node* node_along(const TreeCore* t, path) except? NULL
# A move as (x, y), None for pass.
cdef object xy_of(const TreeCore* t, Loc loc)
