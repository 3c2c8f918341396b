# cython: language_level=3
"""Contract: descents (KataGo's playoutDescend) and batch collection.

Owns one descent from the root (selection at each node, creating the child for a new edge with
its terminal status and subtree-value-bias entry, virtual losses along the path) and collecting
a batch of leaves for evaluation (see the DESCENT_* outcomes in search_nodes.pxd), their network inputs
filled on this thread or, with leaf_workers, by helper threads while this one descends again.

In graph search a new edge may lead to a node another move order made (search_graph's table); a
step onto a child with more visits than its edge only counts the edge visit (KataGo's catch-up),
a step back onto the descent's own path (a cycle) counts the edge and ends the playout, and a move
the shared node offers that this path's history forbids (superko, encore) sends the node back for
evaluation from this history (LEAF_REINIT), counting the edge into it.
"""
from katacli._core.history cimport History
from katacli._core.search_nodes cimport TreeCore, Node, LeafSlot
from katacli._core.leaf_workers cimport LeafWorkers, LeafRing

cdef void leaf_slot_start(LeafSlot* ls, Node* root) noexcept nogil
cdef void leaf_slot_push(LeafSlot* ls, Node* n, int slot, bint counted) noexcept nogil
cdef Node* create_child(TreeCore* t, Node* n, int edge, bint is_root, History* h) noexcept nogil
cdef int descend(TreeCore* t, History* h, LeafSlot* ls) noexcept nogil
# workers, ring: helper threads that fill the leaves' inputs while this thread descends, and t's histories
# for them (either NULL, or the helpers busy with another tree's batch: this thread fills them).
cdef int collect_batch(TreeCore* t, int max_leaves, int max_playouts, int max_descents,
                       int* playouts_done, LeafWorkers* workers, LeafRing* ring) noexcept nogil
