# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Storing a batch of network answers (arrays, one row per leaf) and backing the leaves up (see the .pxd)."""
from katacli._core.search_nodes cimport (
    TreeCore, Node, DirectEval, LeafSlot, LEAF_NEW, LEAF_REINIT, node_drop_edgeless_children,
)
from katacli._core.search_backup cimport add_direct_eval_as_leaf, backup, backup_batch, mark_batch_backup
from katacli._core.search_leaf cimport store_eval, store_human_priors
from katacli._core.search_mirror cimport mirror_hack_eval
from katacli._core.policy_rows cimport PolicyRows


cdef void apply_leaf_rows(TreeCore* t, const double* values, const float* policy, PolicyRows* policy_block,
                          const float* ownership, const unsigned char* own_rows, const float* human_policy,
                          const float* human_pass, const unsigned char* human_rows) noexcept nogil:
    cdef int i, n = t.num_leaves, area = t.area
    cdef int centre = (t.y_size // 2) * t.x_size + t.x_size // 2
    cdef LeafSlot* ls
    cdef Node* node
    cdef DirectEval ev
    cdef const double* v
    cdef const float* own
    cdef bint keep
    # Each node the batch's paths refresh is refreshed once, at the last leaf through it (backup_batch).
    if not t.leaf_by_leaf_backup:
        for i in range(n):
            if t.leaves[i].kind == LEAF_NEW or t.leaves[i].kind == LEAF_REINIT:
                mark_batch_backup(&t.leaves[i], i)
    for i in range(n):
        ls = &t.leaves[i]
        node = ls.path[ls.depth]
        v = values + i * NUM_VALUE_COLUMNS
        ev.win = v[0]
        ev.loss = v[1]
        ev.no_result = v[2]
        ev.score_mean = v[3]
        ev.score_mean_sq = v[4]
        ev.lead = v[5]
        ev.var_time_left = v[6]
        ev.st_wl_error = v[7]
        ev.st_score_error = v[8]
        own = NULL
        if ownership != NULL and own_rows[i]:
            own = ownership + i * area
        if t.leaf_mirror_hack[i] and own != NULL:
            # The centre point decides a mirrored game: shift win/loss by who owns it (KataGo).
            mirror_hack_eval(t, &ev, own[centre])
        keep = node == t.root or t.keep_ownership
        store_eval(t, node, &ev, policy + i * (area + 1), policy_block, t.legal + i * (area + 1),
                   own if keep else NULL, keep)
        if human_policy != NULL and human_rows[i]:
            store_human_priors(t, node, human_policy + i * area, human_pass[i])
        if ls.kind == LEAF_NEW:
            add_direct_eval_as_leaf(t, node, True)
        elif ls.kind == LEAF_REINIT:
            node_drop_edgeless_children(node)   # their moves are illegal on this path
        if ls.kind == LEAF_NEW or ls.kind == LEAF_REINIT:
            if t.leaf_by_leaf_backup:
                backup(t, ls)
            else:
                backup_batch(t, ls, i)
            if ls.stops_below_root:
                t.playouts_below_root += 1
    t.num_leaves = 0
