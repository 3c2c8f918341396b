# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Root policy: ending bonus, symmetry pruning, allowed moves, pruning root children after a change
(contract: search_root.pxd)."""
from libc.stdint cimport int64_t, int16_t
from libc.string cimport memset
from libc.math cimport sqrt

from katacli._core.board cimport (
    Board, Loc, Color, C_BLACK, C_WHITE, MAX_ARR_SIZE, NULL_LOC, PASS_LOC, NUM_SYMMETRIES, loc_of, loc_x, loc_y, opp_of,
    board_would_be_capture, sym_loc,
)
from katacli._core.rules cimport SCORING_AREA
from katacli._core.history cimport (
    History, history_is_legal, history_suicide_legal_for_pass_alive, history_superko_banned,
)
from katacli._core.area cimport area_calculate, area_is_non_pass_alive_self_connection
from katacli._core.search_values cimport SearchConfig
from katacli._core.nogo cimport nogo_is_legal
from katacli._core.search_nodes cimport (
    TreeCore, Node, NODE_EXPANDED, node_free_tree, node_free_one, svb_clear_unused, node_mark_children, edge_exists,
)
from katacli._core.search_graph cimport graph_copy_as_root, graph_sweep_unreachable, free_all_nodes
from katacli._core.search_backup cimport recompute_stats, recompute_tree


# Ending-bonus ownership thresholds (getEndingWhiteScoreBonus).
cdef double OWNERSHIP_EXTREME = 0.95
cdef double OWNERSHIP_TAIL = 0.05
cdef double TERRITORY_PASS_BONUS_FRACTION = 2.0 / 3.0
cdef double BUTTON_PASS_BONUS_FRACTION = 0.5


cdef bint _is_adjacent_to(const Board* b, Loc loc, Color c) noexcept nogil:
    cdef int i
    for i in range(4):
        if b.colors[loc + b.adj_offsets[i]] == c:
            return True
    return False


cdef double compute_ending_bonus(TreeCore* t, Loc move) noexcept nogil:
    """White's score bonus for playing move at the root: discourage pointless moves near the end (KataGo's)."""
    cdef const History* h = &t.root_hist
    cdef const Board* b = &h.board
    cdef Color pla = h.presumed_next_pla
    cdef const float* own = t.root.ownership
    cdef bint area_ish = h.rules.scoring_rule == SCORING_AREA or h.encore_phase >= 2
    cdef double extra = 0.0, pla_own, pts = t.cfg.root_ending_bonus_points
    cdef int pos
    if own == NULL:
        return 0.0
    if move != PASS_LOC and b.ko_loc == NULL_LOC:
        pos = loc_y(move, t.x_size) * t.x_size + loc_x(move, t.x_size)
        pla_own = own[pos] if pla == C_WHITE else -own[pos]
        if pla_own <= -OWNERSHIP_EXTREME:
            if not area_ish or not board_would_be_capture(b, move, pla):
                extra -= pts * ((-OWNERSHIP_EXTREME - pla_own) / OWNERSHIP_TAIL)
        elif pla_own >= OWNERSHIP_EXTREME:
            if (not _is_adjacent_to(b, move, opp_of(pla))
                    and not area_is_non_pass_alive_self_connection(b, move, pla, t.root_safe_area)):
                extra -= pts * ((pla_own - OWNERSHIP_EXTREME) / OWNERSHIP_TAIL)
    if move == PASS_LOC:
        if area_ish:
            if h.has_button:
                extra -= pts * BUTTON_PASS_BONUS_FRACTION
        else:
            extra -= pts * TERRITORY_PASS_BONUS_FRACTION
    return extra if pla == C_WHITE else -extra


cdef int root_board_symmetries(const TreeCore* t, int* out) noexcept nogil:
    """Symmetries (including 0) mapping the root position onto itself, none if a ko ban breaks symmetry."""
    cdef const History* h = &t.root_hist
    cdef const Board* b = &h.board
    cdef int n = 1, s, x, y, upper = NUM_SYMMETRIES if t.x_size == t.y_size else NUM_SYMMETRIES // 2
    cdef Loc loc, sl
    cdef bint same
    cdef const unsigned char* banned = history_superko_banned(h)
    out[0] = 0
    if b.ko_loc != NULL_LOC:
        return 1
    for y in range(t.y_size):
        for x in range(t.x_size):
            if banned[loc_of(x, y, t.x_size)]:
                return 1
    for s in range(1, upper):
        same = True
        for y in range(t.y_size):
            for x in range(t.x_size):
                loc = loc_of(x, y, t.x_size)
                sl = sym_loc(x, y, t.x_size, t.y_size, s)
                if b.colors[loc] != b.colors[sl]:
                    same = False
                elif h.encore_phase > 0 and h.ko_recap_blocked[loc] != h.ko_recap_blocked[sl]:
                    same = False
                elif h.encore_phase == 2 and h.second_encore_start_colors[loc] != h.second_encore_start_colors[sl]:
                    same = False
                if not same:
                    break
            if not same:
                break
        if same:
            out[n] = s
            n += 1
    return n


cdef void mark_root_symmetry_duplicates(TreeCore* t, unsigned char* dup, int* syms, int num_syms) noexcept nogil:
    cdef const History* h = &t.root_hist
    cdef Color pla = h.presumed_next_pla
    cdef int i, j, k, x, y
    cdef Loc loc, sl
    memset(dup, 0, MAX_ARR_SIZE)
    # Black scans from the right, White from the left, so natural openings come out as in SGFs.
    for i in range(t.x_size):
        x = t.x_size - 1 - i if pla == C_BLACK else i
        for j in range(t.y_size):
            y = j if pla == C_BLACK else t.y_size - 1 - j
            loc = loc_of(x, y, t.x_size)
            if t.has_avoid[pla - 1] and t.avoid_until[pla - 1][loc] > 0:
                continue
            for k in range(1, num_syms):
                sl = sym_loc(x, y, t.x_size, t.y_size, syms[k])
                if not dup[loc] and loc != sl:
                    dup[sl] = 1


cdef void compute_root_allowed(TreeCore* t, unsigned char* sym_dup) noexcept nogil:
    cdef const History* h = &t.root_hist
    cdef Color pla = h.presumed_next_pla, opp = opp_of(pla)
    cdef int last = h.num_moves - 1, i
    cdef bint prune_useless = False
    if t.cfg.root_prune_useless_moves and last >= 6:
        prune_useless = True
        for i in range(4):
            if h.moves[last - 2 * i].loc != PASS_LOC or h.moves[last - 2 * i].pla != opp:
                prune_useless = False
    for i in range(MAX_ARR_SIZE):
        t.root_allowed[i] = True
        if i == PASS_LOC:
            continue
        if prune_useless and (t.root_safe_area[i] == opp or t.root_safe_area[i] == pla):
            t.root_allowed[i] = False
        if t.cfg.root_symmetry_pruning and sym_dup[i]:
            t.root_allowed[i] = False


cdef void filter_root_children(TreeCore* t) noexcept nogil:
    """Drop root children that are illegal or not allowed at the root now (tree reuse, new settings)."""
    cdef Node* r = t.root
    cdef int i, kept = 0
    cdef bint any_removed = False
    cdef int64_t visits = 1
    cdef Loc mv
    for i in range(r.num_children):
        mv = r.children[i].move
        if r.children[i].edge >= 0 and t.root_allowed[mv] and (
                nogo_is_legal(&t.root_hist.board, mv, r.next_pla) if t.nogo
                else history_is_legal(&t.root_hist, mv, r.next_pla)):
            r.children[kept] = r.children[i]
            visits += r.children[kept].edge_visits
            kept += 1
        else:
            if not t.graph_search:
                node_free_tree(t, r.children[i].node)
            any_removed = True
    r.num_children = kept
    node_mark_children(t, r)
    if any_removed and r.state == NODE_EXPANDED:
        r.stats.visits = visits
        recompute_stats(t, r, True, 0)
    if any_removed and t.graph_search:
        graph_sweep_unreachable(t)   # a dropped child may still be reachable another way


cdef int begin_search_root(TreeCore* t, int* syms, bint has_center, double center) noexcept nogil:
    """Per-search root setup (KataGo's beginSearch / computeRootValues) on an evaluated root.

    Sets the dynamic score centre (from ``center`` when has_center: a fresh root's plain evaluation, else
    from the root's values), the root's safe area, allowed moves and ending bonuses, drops root children
    no longer allowed and refreshes utilities that depend on the score centre.
    Writes the root position's symmetries (at least the identity) to syms[NUM_SYMMETRIES]; returns their number.
    """
    cdef int num_syms, i
    cdef unsigned char dup[MAX_ARR_SIZE]
    cdef double expected, cap
    cdef Node* r = t.root
    cdef SearchConfig* c = &t.cfg
    area_calculate(&t.root_hist.board, t.root_safe_area, False, False, False,
                   history_suicide_legal_for_pass_alive(&t.root_hist))
    if has_center:
        expected = center
    else:
        expected = r.stats.score_mean if r.stats.visits > 0 and r.stats.weight_sum > 0 else r.eval.score_mean
    c.recent_score_center = expected * (1.0 - c.dynamic_score_center_zero_weight)
    cap = sqrt(<double>t.area) * c.dynamic_score_center_scale
    if c.recent_score_center > expected + cap:
        c.recent_score_center = expected + cap
    if c.recent_score_center < expected - cap:
        c.recent_score_center = expected - cap
    memset(dup, 0, MAX_ARR_SIZE)
    num_syms = 1
    syms[0] = 0
    if c.root_symmetry_pruning and not t.nogo:
        num_syms = root_board_symmetries(t, syms)
        mark_root_symmetry_duplicates(t, dup, syms, num_syms)
    compute_root_allowed(t, dup)
    for i in range(MAX_ARR_SIZE):
        t.root_ending_bonus[i] = 0.0
    if c.root_ending_bonus_points != 0.0 and not t.nogo:
        for i in range(t.num_positions):
            if edge_exists(r, i):
                t.root_ending_bonus[t.edge_loc[i]] = compute_ending_bonus(t, t.edge_loc[i])
    filter_root_children(t)
    r.pattern_hash.h0 = r.pattern_hash.h1 = 0   # the root's own move never counts (KataGo)
    if c.dynamic_score_utility_factor != 0.0 or c.subtree_value_bias_factor != 0.0 or t.pattern_table != NULL:
        recompute_tree(t, r, True)
    svb_clear_unused(t)
    return num_syms


cdef Node* root_take_child_subtree(TreeCore* t, Loc move) noexcept nogil:
    """Tree reuse once move is played at the root: free the old root with every other subtree and
    return move's child, detached, if it was expanded (else NULL). t.root is NULL afterwards.

    Graph search keeps the root out of the node table (no path can come back to it): the child is
    copied out as the new root and whatever the copy cannot reach is swept, the original included
    unless a cycle still leads to it (KataGo does the same)."""
    cdef Node* old = t.root
    cdef Node* child = NULL
    cdef int i
    if old == NULL:
        return NULL
    for i in range(old.num_children):
        if old.children[i].move == move:
            child = old.children[i].node
            if child.state != NODE_EXPANDED:
                child = NULL
            elif not t.graph_search:
                old.children[i].node = NULL
            break
    if t.graph_search:
        if child == NULL:
            free_all_nodes(t)
            return NULL
        child = graph_copy_as_root(t, child)
        node_free_one(t, old)
        t.root = child
        graph_sweep_unreachable(t)
        t.root = NULL
        return child
    t.root = NULL
    for i in range(old.num_children):
        if old.children[i].node != NULL:
            node_free_tree(t, old.children[i].node)
    old.num_children = 0
    node_free_tree(t, old)
    return child
