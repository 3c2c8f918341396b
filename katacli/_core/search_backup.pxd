# cython: language_level=3
"""Contract: backup -- values into node stats (KataGo's searchupdatehelpers / recomputeNodeStats).

Owns adding a leaf's value (direct eval or terminal result) to its node, recomputing a node's
stats from its children plus its own eval (with the subtree value bias update), the child
weighting shared with search_results (noise pruning, the root's subtract/prune and
downweighting of bad children by value weighting), and walking a descent's path back up:
edge visits, parent refresh, virtual losses.
"""
from libc.stdint cimport int64_t
from katacli._core.search_nodes cimport TreeCore, Node, LeafSlot

cdef void add_leaf_value(TreeCore* t, Node* n, double win_loss, double no_result, double score_mean,
                         double score_mean_sq, double lead, double weight, bint is_terminal,
                         bint assume_no_existing_weight) noexcept nogil
cdef void add_direct_eval_as_leaf(TreeCore* t, Node* n, bint assume_no_existing_weight) noexcept nogil
cdef void add_terminal_value(TreeCore* t, Node* n) noexcept nogil

# Child weighting: weights/self_utilities/priors per visited child, in place.
cdef double prune_noise_weight(const TreeCore* t, int num, double* weights, const double* self_utilities,
                               const double* priors, double total) noexcept nogil
cdef void downweight_bad_children(const TreeCore* t, int num, double current_total, double desired_total,
                                  double amount_to_subtract, double amount_to_prune, double* weights,
                                  const double* self_utilities, const int64_t* visits) noexcept nogil

cdef void recompute_stats(TreeCore* t, Node* n, bint is_root, int visits_to_add) noexcept nogil
cdef void recompute_tree(TreeCore* t, Node* n, bint is_root) noexcept nogil   # whole subtree, post-order

# A finished descent's path: count edge visits and refresh parents up to the root (or the first
# weightless step), removing the path's virtual losses; or only remove them (abandoned descent).
cdef void backup(TreeCore* t, LeafSlot* ls) noexcept nogil
# A batch's backups (search_apply): mark every leaf first, then backup_batch each in order -- each node
# on their paths is refreshed once, at the last leaf through it (backup()'s result in a tree).
cdef void mark_batch_backup(LeafSlot* ls, int leaf_index) noexcept nogil
cdef void backup_batch(TreeCore* t, LeafSlot* ls, int leaf_index) noexcept nogil
cdef void undo_virtual_losses(LeafSlot* ls) noexcept nogil
