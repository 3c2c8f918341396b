# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Storing a batch of network answers (arrays, one row per leaf) and backing the leaves up (see the .pxd)."""
import numpy as np

from katacli._core.buffers cimport HeldBuffers, hold, release_held, ITEM_FLOAT64
from katacli._core.search_nodes cimport (
    TreeCore, Node, DirectEval, LeafSlot, LEAF_NEW, LEAF_REINIT, node_drop_edgeless_children,
)
from katacli._core.search_backup cimport add_direct_eval_as_leaf, backup, backup_batch, mark_batch_backup
from katacli._core.search_leaf cimport store_eval, store_human_priors
from katacli._core.search_mirror cimport mirror_hack_eval
from katacli._core.policy_rows cimport PolicyRows, shared_policy_rows
from katacli._core.policy_rows import shared_policy


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


cdef int apply_batch_arrays(TreeCore* t, values, policy, policy_pass, ownership, ownership_rows, human_policy,
                            human_pass, human_rows) except -1:
    cdef int n = t.num_leaves, area = t.area
    cdef HeldBuffers held
    cdef const double* values_ptr
    if n == 0:
        raise ValueError("no leaves are waiting for an evaluation")
    held.count = 0
    try:
        values_ptr = _held_values(&held, values, n)
        _apply_rows(t, n, area, values_ptr, policy, policy_pass, ownership, ownership_rows, human_policy, human_pass,
                    human_rows)
    finally:
        release_held(&held)
    return 0


cdef object _apply_rows(TreeCore* t, int n, int area, const double* values_ptr, policy, policy_pass, ownership,
                        ownership_rows, human_policy, human_pass, human_rows):
    """apply_batch_arrays once the values are held."""
    cdef PolicyRows* policy_block
    cdef float* policy_first = NULL
    cdef const float[:, ::1] own_view
    cdef const unsigned char[::1] own_rows_view
    cdef const float[:, ::1] human_view
    cdef const float[::1] human_pass_view
    cdef const unsigned char[::1] human_rows_view
    cdef const float* own_ptr = NULL
    cdef const unsigned char* own_rows_ptr = NULL
    cdef const float* human_ptr = NULL
    cdef const float* human_pass_ptr = NULL
    cdef const unsigned char* human_rows_ptr = NULL
    # The nodes keep the policy rows the NN cache holds (an NNEvaluator's answers); other arrays
    # (cache hits merged into a batch, other evaluators) are copied into a block of their own.
    policy_block = shared_policy_rows(policy, policy_pass, area, &policy_first)
    if policy_block == NULL or len(policy) != n:
        policy, policy_pass = shared_policy(_rows(policy, np.float32, (n, area), "policy"),
                                            _rows(policy_pass, np.float32, (n,), "policy_pass"))
        policy_block = shared_policy_rows(policy, policy_pass, area, &policy_first)
    if ownership is not None:
        own_view = _rows(ownership, np.float32, (n, area), "ownership")
        own_ptr = &own_view[0, 0]
        if ownership_rows is None:
            ownership_rows = np.ones(n, np.uint8)
        own_rows_view = _rows(ownership_rows, np.uint8, (n,), "ownership_rows")
        own_rows_ptr = &own_rows_view[0]
    if human_policy is not None:
        human_view = _rows(human_policy, np.float32, (n, area), "human policy")
        human_pass_view = _rows(human_pass, np.float32, (n,), "human pass")
        if human_rows is None:
            human_rows = np.ones(n, np.uint8)
        human_rows_view = _rows(human_rows, np.uint8, (n,), "human_rows")
        human_ptr = &human_view[0, 0]
        human_pass_ptr = &human_pass_view[0]
        human_rows_ptr = &human_rows_view[0]
    with nogil:
        apply_leaf_rows(t, values_ptr, policy_first, policy_block, own_ptr, own_rows_ptr,
                        human_ptr, human_pass_ptr, human_rows_ptr)


cdef const double* _held_values(HeldBuffers* held, values, int n) except NULL:
    """A batch's value rows [n, NUM_VALUE_COLUMNS] float64, held as they are when they are such an array (an
    NNEvaluator's answers), else converted first."""
    cdef Py_buffer* view
    try:
        view = hold(held, values, ITEM_FLOAT64, 2, "values")
    except (ValueError, TypeError, BufferError):
        view = hold(held, _rows(values, np.float64, (n, NUM_VALUE_COLUMNS), "values"), ITEM_FLOAT64, 2, "values")
    if view.shape[0] != n or view.shape[1] != NUM_VALUE_COLUMNS:
        raise ValueError(f"values has shape ({view.shape[0]}, {view.shape[1]}), expected ({n}, {NUM_VALUE_COLUMNS})")
    return <const double*>view.buf


def _rows(array, dtype, shape, what):
    """array as a C-contiguous array of dtype, checked to have shape (a ValueError names it otherwise)."""
    rows = np.ascontiguousarray(array, dtype=dtype)
    if rows.shape != shape:
        raise ValueError(f"{what} has shape {rows.shape}, expected {shape}")
    return rows
