# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Descents: walking from the root to a leaf, expanding a child, and collecting a batch
(contract: search_descent.pxd)."""
from libc.stdint cimport int16_t, int64_t
from libc.stdlib cimport realloc

from katacli._core.board cimport Loc, Color, Hash128, NULL_LOC, PASS_LOC, C_EMPTY, opp_of
from katacli._core.history cimport (
    History, history_copy, history_free, history_restore, history_make_move_assume_legal, history_is_legal, history_recent_board,
    history_should_suppress_end_game_from_friendly_pass,
)
from katacli._core.playout cimport rng_uniform
from katacli._core.nogo cimport nogo_has_legal_move
from katacli._core.search_nodes cimport (
    TreeCore, Node, LeafSlot, NODE_UNEVALUATED, NODE_PENDING, LEAF_NEW, LEAF_REINIT, DESCENT_LEAF, DESCENT_DONE,
    DESCENT_DONE_UNCOUNTED, DESCENT_BLOCKED, node_new, node_add_child, node_drop_edgeless_children, svb_get,
    svb_move_key,
)
from katacli._core.search_graph cimport graph_hash_after_move, graph_find_or_new
from katacli._core.search_select cimport select_child
from katacli._core.search_backup cimport add_direct_eval_as_leaf, add_terminal_value, backup, undo_virtual_losses
from katacli._core.search_leaf cimport (
    set_terminal_result, set_nogo_terminal, draw_leaf_symmetry, fill_leaf_features, rollout_evaluate,
)
from katacli._core.leaf_workers cimport (
    LeafWorkers, LeafRing, leaf_workers_begin, leaf_workers_history, leaf_workers_publish, leaf_workers_finish,
)
from katacli._core.search_mirror cimport mirror_eval_difficult
from katacli._core.search_patterns cimport pattern_hash


cdef void leaf_slot_push(LeafSlot* ls, Node* n, int slot, bint counted) noexcept nogil:
    if ls.depth + 2 > ls.capacity:
        ls.capacity = 64 if ls.capacity == 0 else ls.capacity * 2
        ls.path = <Node**>realloc(ls.path, ls.capacity * sizeof(Node*))
        ls.slots = <int16_t*>realloc(ls.slots, ls.capacity * sizeof(int16_t))
        ls.counted = <unsigned char*>realloc(ls.counted, ls.capacity * sizeof(unsigned char))
    ls.slots[ls.depth] = <int16_t>slot
    ls.counted[ls.depth] = counted
    ls.depth += 1
    ls.path[ls.depth] = n


cdef void leaf_slot_start(LeafSlot* ls, Node* root) noexcept nogil:
    if ls.capacity < 2:
        ls.capacity = 64
        ls.path = <Node**>realloc(ls.path, ls.capacity * sizeof(Node*))
        ls.slots = <int16_t*>realloc(ls.slots, ls.capacity * sizeof(int16_t))
        ls.counted = <unsigned char*>realloc(ls.counted, ls.capacity * sizeof(unsigned char))
    ls.depth = 0
    ls.path[0] = root
    ls.kind = LEAF_NEW
    ls.stops_below_root = False


cdef Node* create_child(TreeCore* t, Node* n, int edge, bint is_root, History* h) noexcept nogil:
    """Play the edge's move on h and attach a new child node for the resulting position."""
    cdef Color pla = n.next_pla
    cdef Loc move = t.edge_loc[edge]
    cdef bint friendly_pass_suppression = False, force_non_terminal
    cdef Node* child
    cdef Loc parent_prev
    cdef bint created = True
    cdef Hash128 graph_hash
    if move == PASS_LOC and not t.nogo:
        friendly_pass_suppression = history_should_suppress_end_game_from_friendly_pass(h, pla)
    history_make_move_assume_legal(h, move, pla, False)
    force_non_terminal = not t.nogo and move == PASS_LOC and h.is_game_finished and (
        (t.cfg.conservative_pass and is_root) or friendly_pass_suppression)
    if t.graph_search:
        # A transposition finds the node another move order made; it is already set up.
        graph_hash = graph_hash_after_move(n.graph_hash, h, opp_of(pla), t.graph_rep_bound)
        child = graph_find_or_new(t, graph_hash, force_non_terminal, opp_of(pla), &created)
        if not created:
            node_add_child(t, n, edge, child)
            return child
    else:
        child = node_new(opp_of(pla))
    if t.nogo:
        if not nogo_has_legal_move(&h.board, opp_of(pla)):
            set_nogo_terminal(child, pla)
    else:
        child.force_non_terminal = force_non_terminal
        if h.is_game_finished and not force_non_terminal:
            child.is_terminal = True
            set_terminal_result(t, child, h)
    # No subtree value bias against a mirroring opponent (KataGo keeps no table then).
    if t.cfg.subtree_value_bias_factor != 0.0 and h.num_moves >= 2 and move != PASS_LOC and t.mirroring_pla == C_EMPTY:
        parent_prev = h.moves[h.num_moves - 2].loc
        if parent_prev != NULL_LOC:
            child.svb_entry = svb_get(t, svb_move_key(h, parent_prev, move, pla))
    if t.pattern_table != NULL:
        child.pattern_hash = pattern_hash(history_recent_board(h, 1), move, pla)   # the board before the move
    node_add_child(t, n, edge, child)
    return child


cdef inline bint _catch_up_edge(TreeCore* t, Node* n, int slot) noexcept nogil:
    """Graph search: a child that already has more visits than this edge (reached by another
    parent) takes an edge visit without a descent (KataGo's maybeCatchUpEdgeVisits)."""
    cdef int64_t edge_visits = n.children[slot].edge_visits
    cdef int64_t child_visits = n.children[slot].node.stats.visits
    if edge_visits >= child_visits:
        return False
    if t.graph_catch_up_leak_prob > 0.0 and rng_uniform(&t.rng) < t.graph_catch_up_leak_prob:
        return False
    return True


cdef int _reinit_illegal_on_the_spot(TreeCore* t, Node* n, History* h, LeafSlot* ls, bint counted_playout) noexcept nogil:
    """Rollout mode: re-evaluate a shared node whose chosen move is illegal on this path, then count the edge."""
    rollout_evaluate(t, n, h, t.keep_ownership)
    node_drop_edgeless_children(n)
    backup(t, ls)
    return DESCENT_DONE if counted_playout else DESCENT_DONE_UNCOUNTED


cdef int descend(TreeCore* t, History* h, LeafSlot* ls) noexcept nogil:
    """One descent from the root (h must equal the root history: a copy, or restored to it); see the DESCENT_* outcomes."""
    cdef Node* n = t.root
    cdef Node* child
    cdef int slot, edge
    cdef bint is_root, count_edge, count_playout, counted_playout = True
    leaf_slot_start(ls, n)
    t.descent_epoch += 1
    n.path_mark = t.descent_epoch
    while True:
        is_root = n == t.root
        if n.is_terminal and not is_root:
            add_terminal_value(t, n)
            backup(t, ls)
            return DESCENT_DONE if counted_playout else DESCENT_DONE_UNCOUNTED
        if n.state == NODE_PENDING:
            undo_virtual_losses(ls)
            return DESCENT_BLOCKED
        if n.state == NODE_UNEVALUATED:
            if t.rollouts:
                rollout_evaluate(t, n, h, is_root or t.keep_ownership)
                add_direct_eval_as_leaf(t, n, True)
                backup(t, ls)
                return DESCENT_DONE if counted_playout else DESCENT_DONE_UNCOUNTED
            n.state = NODE_PENDING
            ls.stops_below_root = ls.stops_below_root and counted_playout
            return DESCENT_LEAF
        if not select_child(t, n, is_root, h, &slot, &edge, &count_edge, &count_playout):
            # Nothing may be explored here: count the node's own evaluation again.
            add_direct_eval_as_leaf(t, n, False)
            backup(t, ls)
            return DESCENT_DONE if counted_playout else DESCENT_DONE_UNCOUNTED
        if t.graph_search and not is_root and not t.nogo and not history_is_legal(h, t.edge_loc[edge], n.next_pla):
            # A node shared with another move order whose history bans this move here (superko,
            # encore): evaluate it again from this path's history; the edge into it still counts.
            if t.rollouts:
                return _reinit_illegal_on_the_spot(t, n, h, ls, counted_playout)
            n.state = NODE_PENDING
            ls.kind = LEAF_REINIT
            ls.stops_below_root = ls.stops_below_root and counted_playout
            return DESCENT_LEAF
        if not count_playout:
            counted_playout = False
        elif not count_edge:
            ls.stops_below_root = True
        if slot < 0:
            child = create_child(t, n, edge, is_root, h)
            slot = n.num_children - 1   # the new child's slot
        else:
            child = n.children[slot].node
            history_make_move_assume_legal(h, n.children[slot].move, n.next_pla, False)
        child.virtual_losses += 1
        leaf_slot_push(ls, child, slot, count_edge)
        if t.graph_search and (child.path_mark == t.descent_epoch or (count_edge and _catch_up_edge(t, n, slot))):
            # A cycle back onto this descent's path, or a transposition ahead of this edge: count the
            # edge visit and back up from here without going deeper (a weightless step counts nothing).
            backup(t, ls)
            return DESCENT_DONE if counted_playout else DESCENT_DONE_UNCOUNTED
        child.path_mark = t.descent_epoch
        n = child


cdef inline void _mark_leaf(TreeCore* t, LeafSlot* ls, const History* h) noexcept nogil:
    """The leaf's marks drawn on the search thread, in leaf order: root or not, orientation, mirror hack."""
    draw_leaf_symmetry(t, t.num_leaves, ls.path[ls.depth] == t.root)
    t.leaf_mirror_hack[t.num_leaves] = mirror_eval_difficult(t, h)


cdef inline bint _count_outcome(TreeCore* t, LeafSlot* ls, int outcome, int* playouts_done) noexcept nogil:
    """Count a descent that ended without a leaf; False if it found one."""
    if outcome == DESCENT_LEAF:
        return False
    if outcome == DESCENT_DONE:
        playouts_done[0] += 1
        if ls.stops_below_root:
            t.playouts_below_root += 1
    return True


cdef int collect_batch(TreeCore* t, int max_leaves, int max_playouts, int max_descents, int* playouts_done,
                       LeafWorkers* workers, LeafRing* ring) noexcept nogil:
    """Descend until max_leaves leaves wait for evaluation, max_playouts playouts finished, or max_descents tried."""
    cdef History own
    cdef History* h = &own
    cdef int descents = 0, outcome
    cdef LeafSlot* ls
    # With helpers each leaf descends on a history of their ring and is handed to them as it is found;
    # without, on this thread's own copy of the root, filled here.
    cdef bint helped = max_leaves > 1 and leaf_workers_begin(workers, t, ring)
    playouts_done[0] = 0
    t.num_leaves = 0
    if not helped:
        history_copy(&own, &t.root_hist)
    while t.num_leaves < max_leaves and playouts_done[0] + t.num_leaves < max_playouts and descents < max_descents:
        descents += 1
        ls = &t.leaves[t.num_leaves]
        if helped:
            h = leaf_workers_history(workers, t.num_leaves)
        outcome = descend(t, h, ls)
        if _count_outcome(t, ls, outcome, playouts_done):
            history_restore(h, &t.root_hist)
            continue
        _mark_leaf(t, ls, h)
        if helped:
            leaf_workers_publish(workers, t.num_leaves)   # the helper restores h once it is filled
        else:
            fill_leaf_features(t, t.num_leaves, h, &t.ladder_cache)
            history_restore(h, &t.root_hist)
        t.num_leaves += 1
    if helped:
        leaf_workers_finish(workers)
    else:
        history_free(&own)
    return t.num_leaves
