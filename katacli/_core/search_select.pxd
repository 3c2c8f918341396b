# cython: language_level=3
"""Contract: selection -- which child a descent takes (KataGo's searchexplorehelpers).

Owns first-play urgency (fpu_value), the PUCT exploration scaling and selection value, the
human-SL picks (a visit may follow the human policy, weightful or weightless), the root's
selection hacks (futile-visit pruning, forced exploration, wide root noise), avoided moves and
the passing hack. search_results reuses fpu_value / explore_scaling / explore_selection_value to
rank children the way selection does.
"""
from katacli._core.board cimport Color
from katacli._core.history cimport History
from katacli._core.search_nodes cimport TreeCore, Node

cdef double fpu_value(const TreeCore* t, const Node* n, Color pla, bint is_root, double policy_mass_visited,
                      double* parent_utility, double* parent_weight_per_visit, double* stdev_factor) noexcept nogil
cdef double explore_scaling(const TreeCore* t, double total_child_weight, double stdev_factor) noexcept nogil
cdef double explore_selection_value(double scaling, double prior, double child_weight, double child_utility,
                                    Color pla) noexcept nogil
# Pick the child to descend into: out_slot >= 0 for an existing child, else out_edge is a new one.
# out_count_edge: the step counts an edge visit; out_count_playout: the playout counts toward limits.
# False when nothing may be explored.
cdef bint select_child(TreeCore* t, Node* n, bint is_root, const History* h, int* out_slot, int* out_edge,
                       bint* out_count_edge, bint* out_count_playout) noexcept nogil
