# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Reading results out of a SearchTree: KataGo's searchresults.cpp semantics.

play selection values  how much each root move deserves to be played: its child weight,
                       trimmed at the root for visits spent in retrospect unwisely, boosted
                       for the best lower confidence bound (LCB), minus chosenMoveSubtract /
                       chosenMovePrune. Temperature selection and ordering start from these.
analysis data          per root move: visits, weights, values, LCB, prior, PV (principal
                       variation: repeatedly the best play selection value below the move).
pruned root values     the root's values re-averaged with play selection values as weights,
                       so that exploration noise does not drag the reported values.
tree ownership         ownership averaged over the tree with weights favouring heavy children.

All values are White's point of view; katacli.search.results converts perspective.
Call these only between batches (the Searcher holds its lock).
"""
from libc.stdint cimport int64_t, int16_t
from libc.math cimport sqrt, ceil, pow, exp
from libc.stdlib cimport malloc, free

import numpy as np

from katacli._core.board cimport (
    Board, Loc, Color, C_EMPTY, C_BLACK, C_WHITE, C_WALL, MAX_ARR_SIZE, NULL_LOC, PASS_LOC,
    loc_of, loc_x, loc_y, opp_of,
)
from katacli._core.rules cimport SCORING_TERRITORY
from katacli._core.history cimport history_is_legal
from katacli._core.nogo cimport nogo_is_legal
from katacli._core.search_values cimport (
    result_utility, score_utility, score_utility_diff, utility_radius, score_stdev, eval_weight,
)
from katacli._core.search_nodes cimport (
    TreeCore, Node, ChildSlot, NodeStats, MAX_EDGES, NODE_EXPANDED, child_weight, root_prior, ending_bonus,
    edge_of_move, node_edges_in_prior_order,
)
from katacli._core.search_select cimport fpu_value, explore_scaling, explore_selection_value
from katacli._core.search_backup cimport prune_noise_weight, downweight_bad_children
from katacli._core.search_tree cimport SearchTree

cdef double POLICY_ILLEGAL_SELECTION_VALUE = -1e50
# Raw policy gets this weight against child weight when picking the most stably explored child.
cdef double NON_LCB_BEST_POLICY_WEIGHT = 2.0
# LCB bonus: the radius factor's denominator keeps at least this share of the excess (gain capped at 5x).
cdef double LCB_RADIUS_EXCESS_SHARE = 0.20
cdef double LCB_MIN_VARIANCE = 1e-8
cdef double MIN_MAX_VALUE = 1e-50
cdef double ROOT_PRUNE_MAX_FRACTION = 1.0 / 64.0
# fillDameBeforePass: a non-pass move counts as nearly as good as pass within these margins.
cdef double SUPPRESS_PASS_UTILITY_MARGIN = 0.1
cdef double SUPPRESS_PASS_SCORE_MARGIN = 0.5
cdef double SUPPRESS_PASS_MAX_VISITS = 500
cdef double OWNERSHIP_EXTREME = 0.95
# Tree-ownership averaging stops deepening at this share of the total, scaled by visits^-0.75.
cdef double OWNERSHIP_MIN_PROP_SCALE = 0.5
cdef double OWNERSHIP_MIN_PROP_EXPONENT = 0.75
cdef double OWNERSHIP_PRUNE_FACTOR = 0.01


# ---- helpers ----------------------------------------------------------------------------
cdef inline int pos_of(const TreeCore* t, Loc loc) noexcept nogil:
    if loc == PASS_LOC:
        return t.area
    return loc_y(loc, t.x_size) * t.x_size + loc_x(loc, t.x_size)


cdef double child_utility_with_bonus(const TreeCore* t, const Node* parent, const ChildSlot* s) noexcept nogil:
    cdef double u = s.node.stats.utility
    cdef double bonus = ending_bonus(t, parent, s.move)
    if bonus != 0.0:
        u += score_utility_diff(&t.cfg, s.node.stats.score_mean, s.node.stats.score_mean_sq, bonus)
    return u


cdef bint should_suppress_pass(const TreeCore* t, const Node* n) noexcept nogil:
    """fillDameBeforePass: under territory scoring, do not pass while a harmless non-pass move is as good."""
    cdef const Node* pass_node = NULL
    cdef const ChildSlot* pass_slot = NULL
    cdef const ChildSlot* s
    cdef const float* own
    cdef Color root_pla
    cdef int i, j, pos, apos
    cdef double pass_w, w, pla_own, adj_own
    cdef bint opp_owned, adj_to_pla_owned
    cdef Loc adj
    cdef const Board* b = &t.root_hist.board
    if not t.cfg.fill_dame_before_pass or n != t.root or t.nogo:
        return False
    if t.root_hist.rules.scoring_rule != SCORING_TERRITORY or t.root_hist.encore_phase > 0:
        return False
    own = n.ownership
    if own == NULL:
        return False
    root_pla = n.next_pla
    for i in range(n.num_children):
        if n.children[i].move == PASS_LOC:
            pass_slot = &n.children[i]
            break
    if pass_slot == NULL:
        return False
    pass_w = child_weight(pass_slot)
    if pass_slot.node.stats.visits <= 0 or pass_w <= 1e-10:
        return False
    for i in range(n.num_children):
        s = &n.children[i]
        if s.move == PASS_LOC:
            continue
        pos = pos_of(t, s.move)
        pla_own = own[pos] if root_pla == C_WHITE else -own[pos]
        opp_owned = pla_own < -OWNERSHIP_EXTREME
        adj_to_pla_owned = False
        for j in range(4):
            adj = <Loc>(s.move + b.adj_offsets[j])
            if b.colors[adj] != C_WALL:
                apos = pos_of(t, adj)
                adj_own = own[apos] if root_pla == C_WHITE else -own[apos]
                if adj_own > OWNERSHIP_EXTREME:
                    adj_to_pla_owned = True
                    break
        if opp_owned and not adj_to_pla_owned:
            continue
        w = child_weight(s)
        if (s.edge_visits <= SUPPRESS_PASS_MAX_VISITS and w <= 2.0 * sqrt(pass_w)) or w <= 1e-10:
            continue
        if (root_pla == C_WHITE and s.node.stats.utility > pass_slot.node.stats.utility - SUPPRESS_PASS_UTILITY_MARGIN
                and s.node.stats.score_mean > pass_slot.node.stats.score_mean - SUPPRESS_PASS_SCORE_MARGIN
                and s.node.stats.lead > pass_slot.node.stats.lead - SUPPRESS_PASS_SCORE_MARGIN):
            return True
        if (root_pla == C_BLACK and s.node.stats.utility < pass_slot.node.stats.utility + SUPPRESS_PASS_UTILITY_MARGIN
                and s.node.stats.score_mean < pass_slot.node.stats.score_mean + SUPPRESS_PASS_SCORE_MARGIN
                and s.node.stats.lead < pass_slot.node.stats.lead + SUPPRESS_PASS_SCORE_MARGIN):
            return True
    return False


cdef void self_utility_lcb(const TreeCore* t, const Node* parent, const ChildSlot* s, double* lcb,
                           double* radius) noexcept nogil:
    """Lower confidence bound of a child's utility from the mover's view (KataGo's getSelfUtilityLCBAndRadius)."""
    cdef const NodeStats* st = &s.node.stats
    cdef double range_radius = utility_radius(&t.cfg)
    cdef double w = child_weight(s)
    cdef int64_t v = st.visits
    cdef double wsq = st.weight_sq_sum * (<double>s.edge_visits / <double>(v if v > 1 else 1))
    cdef double ess, prior_weight, usq, u_with_bonus, self_u, variance
    radius[0] = 2.0 * range_radius * t.cfg.lcb_stdevs
    lcb[0] = -radius[0]
    if v <= 0 or w <= 0.0 or wsq <= 0.0:
        return
    ess = w * w / wsq
    # A small prior that the variance is as large as it can be keeps tiny samples honest.
    prior_weight = w / (ess * ess * ess)
    usq = st.utility_sq
    if usq < st.utility * st.utility + LCB_MIN_VARIANCE:
        usq = st.utility * st.utility + LCB_MIN_VARIANCE
    usq = (usq * w + (usq + range_radius * range_radius) * prior_weight) / (w + prior_weight)
    w += prior_weight
    wsq += prior_weight * prior_weight
    ess = w * w / wsq
    u_with_bonus = child_utility_with_bonus(t, parent, s)
    self_u = u_with_bonus if parent.next_pla == C_WHITE else -u_with_bonus
    variance = usq - st.utility * st.utility
    radius[0] = sqrt(variance / ess) * t.cfg.lcb_stdevs
    lcb[0] = self_u - radius[0]


cdef double reduced_play_weight(const TreeCore* t, const Node* parent, const ChildSlot* s, double scaling,
                                double best_value) noexcept nogil:
    """The weight this child would have if search had stopped exploring it once it fell behind the best."""
    cdef double prior = root_prior(t, parent, s.edge)
    cdef double w = child_weight(s)
    cdef double u, value_part, explore_part, wanted
    if s.node.stats.visits <= 0 or w <= 0.0:
        return 0.0
    u = child_utility_with_bonus(t, parent, s)
    if prior < 0.0:
        return 0.0
    value_part = u if parent.next_pla == C_WHITE else -u
    explore_part = best_value - value_part
    if explore_part <= 0.0:
        wanted = 1e100
    else:
        wanted = scaling * prior / explore_part - 1.0
        if wanted < 0.0:
            wanted = 0.0
    return wanted if w > wanted else w


cdef bint root_move_ok(const TreeCore* t, Loc loc, bint obey_allowed) noexcept nogil:
    cdef Color pla = t.root.next_pla
    if t.nogo:
        if not nogo_is_legal(&t.root_hist.board, loc, pla):
            return False
    elif not history_is_legal(&t.root_hist, loc, pla):
        return False
    if obey_allowed and not t.root_allowed[loc]:
        return False
    if t.has_avoid[pla - 1] and t.avoid_until[pla - 1][loc] > 0:
        return False
    return True


cdef int play_selection_values(TreeCore* t, Node* n, bint allow_direct_policy, bint always_compute_lcb,
                               bint never_use_lcb, double scale_max_to_at_least, Loc* locs, double* values,
                               double* lcbs, double* radii, int* slots) noexcept nogil:
    """KataGo's getPlaySelectionValues for node n; returns the number of entries (0 = none).

    Entries for explored children come first in slot order (slots[i] = slot); direct policy
    moves (root without children) have slots[i] = -1.
    """
    cdef bint is_root = n == t.root
    cdef bint suppress = should_suppress_pass(t, n)
    cdef int num = 0, i, best_idx = 0, best_lcb_idx = -1, k, e
    cdef double total_w = 0.0, w, ev, p, g, max_goodness = -1e30, best_weight = -1e30
    cdef double parent_utility, parent_wpv, stdev_factor, scaling, best_value, u, vl_w
    cdef double best_lcb = -1e10, adjusted, excess, factor, bound, max_value, subtract, prune
    cdef bint obey_allowed
    cdef int16_t order[MAX_EDGES]
    cdef int num_order, j
    cdef Loc mv
    cdef const ChildSlot* s
    if n == NULL or n.state != NODE_EXPANDED:
        return 0
    for i in range(n.num_children):
        s = &n.children[i]
        w = child_weight(s) if s.node.stats.visits > 0 else 0.0
        locs[num] = s.move
        slots[num] = i
        total_w += w
        if (suppress and s.move == PASS_LOC) or root_prior(t, n, s.edge) < 0.0:
            values[num] = 0.0
        else:
            values[num] = w
        num += 1

    # The most stably explored child: weight discounted by one visit, plus a little raw policy.
    for i in range(num):
        s = &n.children[slots[i]]
        ev = <double>s.edge_visits
        p = root_prior(t, n, s.edge)
        g = values[i] * (ev - 1.0 if ev > 1.0 else 0.0) / (ev if ev > 1.0 else 1.0) + NON_LCB_BEST_POLICY_WEIGHT * p
        if g > max_goodness:
            max_goodness = g
            best_weight = values[i]
            best_idx = i

    # At the root, take back weight that in retrospect exploration spent on moves that fell behind.
    if is_root and num > 0:
        fpu_value(t, n, n.next_pla, True, 1.0, &parent_utility, &parent_wpv, &stdev_factor)
        scaling = explore_scaling(t, total_w, stdev_factor)
        s = &n.children[slots[best_idx]]
        w = child_weight(s) if s.node.stats.visits > 0 else 0.0
        u = child_utility_with_bonus(t, n, s) if (s.node.stats.visits > 0 and w > 0.0) else parent_utility
        if s.node.virtual_losses > 0:
            vl_w = s.node.virtual_losses * t.cfg.num_virtual_losses_per_thread
            u = u + ((-utility_radius(&t.cfg) if n.next_pla == C_WHITE else utility_radius(&t.cfg)) - u) * (
                vl_w / (vl_w + (w if w > 0.25 else 0.25)))
            w += vl_w
        best_value = explore_selection_value(scaling, root_prior(t, n, s.edge), w, u, n.next_pla)
        for i in range(num):
            s = &n.children[slots[i]]
            if suppress and s.move == PASS_LOC:
                values[i] = 0.0
                continue
            if i != best_idx:
                values[i] = ceil(reduced_play_weight(t, n, s, scaling, best_value))

    if not never_use_lcb and (always_compute_lcb or (t.cfg.use_lcb_for_selection and num > 0)):
        for i in range(num):
            s = &n.children[slots[i]]
            self_utility_lcb(t, n, s, &lcbs[i], &radii[i])
            if values[i] > 0.0 and values[i] >= t.cfg.min_visit_prop_for_lcb * best_weight:
                if lcbs[i] > best_lcb:
                    best_lcb = lcbs[i]
                    best_lcb_idx = i
        if t.cfg.use_lcb_for_selection and num > 0 and (
                best_lcb_idx >= 0 if t.cfg.use_non_buggy_lcb else best_lcb_idx > 0):
            adjusted = values[best_lcb_idx]
            for i in range(num):
                if i == best_lcb_idx:
                    continue
                excess = best_lcb - lcbs[i]
                if excess < 0.0:
                    continue
                factor = (radii[i] + excess) / (radii[i] + LCB_RADIUS_EXCESS_SHARE * excess)
                bound = factor * factor * values[i]
                if bound > adjusted:
                    adjusted = bound
            values[best_lcb_idx] = adjusted

    # No children: fall back on the raw policy at the root.
    if num == 0:
        if not is_root or not allow_direct_policy:
            return 0
        obey_allowed = True
        num_order = node_edges_in_prior_order(t, n, order)
        while True:
            for j in range(num_order):
                e = order[j]
                mv = t.edge_loc[e]
                p = root_prior(t, n, e)
                if p < 0.0 or not root_move_ok(t, mv, obey_allowed):
                    continue
                locs[num] = mv
                values[num] = 0.0 if (suppress and mv == PASS_LOC) else p
                slots[num] = -1
                num += 1
            if num == 0 and obey_allowed:
                obey_allowed = False
                continue
            break
    if num == 0:
        return 0

    max_value = 0.0
    for i in range(num):
        if values[i] > max_value:
            max_value = values[i]
    if max_value <= MIN_MAX_VALUE:
        # Children exist but none has weight yet: weigh them by policy.
        for i in range(num):
            if slots[i] >= 0:
                p = root_prior(t, n, n.children[slots[i]].edge)
            else:
                e = edge_of_move(t, n, locs[i])
                p = root_prior(t, n, e) if e >= 0 else 0.0
            values[i] = p if p > 0.0 else 0.0
            if values[i] > max_value:
                max_value = values[i]
        if max_value <= MIN_MAX_VALUE:
            return 0

    subtract = t.cfg.chosen_move_subtract if t.cfg.chosen_move_subtract < max_value * ROOT_PRUNE_MAX_FRACTION else max_value * ROOT_PRUNE_MAX_FRACTION
    prune = t.cfg.chosen_move_prune if t.cfg.chosen_move_prune < max_value * ROOT_PRUNE_MAX_FRACTION else max_value * ROOT_PRUNE_MAX_FRACTION
    for i in range(num):
        if values[i] < prune:
            values[i] = 0.0
        else:
            values[i] -= subtract
            if values[i] <= 0.0:
                values[i] = 0.0

    if t.cfg.human_chosen_move_prop > 0.0 and n.human_priors != NULL:
        num = blend_human_policy(t, n, allow_direct_policy, suppress, num, locs, values, slots)

    max_value = 0.0
    for i in range(num):
        if values[i] > max_value:
            max_value = values[i]
    if max_value <= 0.0:
        return 0
    if max_value < scale_max_to_at_least:
        for i in range(num):
            values[i] *= scale_max_to_at_least / max_value
    return num


cdef int blend_human_policy(TreeCore* t, Node* n, bint allow_direct_policy, bint suppress, int num, Loc* locs,
                            double* values, int* slots) noexcept nogil:
    """Move part of the play selection values towards the human policy (humanSLChosenMoveProp).

    The human policy is first shifted towards moves the search values (exp of the utility gap to the
    best child over humanSLChosenMovePiklLambda), renormalised, scaled to the values' sum and mixed
    in. At the root, legal moves without a child take part too. Returns the new number of entries.
    """
    cdef int16_t order[MAX_EDGES]
    cdef int num_order, j
    cdef Loc mv
    cdef double shifted[MAX_EDGES]
    cdef double self_util[MAX_EDGES]
    cdef int i, e, k, num_children_seen = 0
    cdef double sign = 1.0 if n.next_pla == C_WHITE else -1.0
    cdef double util_max = -1e10, util_sum = 0.0, util_avg, shifted_sum = 0.0
    cdef double value_sum = 0.0, value_non_pass_sum = 0.0, shifted_non_pass_sum = 0.0, prob
    cdef bint present
    if n == t.root and allow_direct_policy:
        num_order = node_edges_in_prior_order(t, n, order)
        for j in range(num_order):
            e = order[j]
            mv = t.edge_loc[e]
            if n.human_priors[e] < 0.0 or not root_move_ok(t, mv, True):
                continue
            present = False
            for k in range(num):
                if locs[k] == mv:
                    present = True
                    break
            if not present:
                locs[num] = mv
                values[num] = 0.0
                slots[num] = -1
                num += 1
    for i in range(num):
        e = edge_of_move(t, n, locs[i])
        prob = n.human_priors[e] if e >= 0 else 0.0
        shifted[i] = 0.0 if ((suppress and locs[i] == PASS_LOC) or prob < 0.0) else prob
        if slots[i] >= 0:
            self_util[i] = sign * n.children[slots[i]].node.stats.utility
            if self_util[i] > util_max:
                util_max = self_util[i]
            util_sum += self_util[i]
            num_children_seen += 1
    # Moves without a child get the children's plain average utility.
    util_avg = util_sum / (num_children_seen if num_children_seen > 0 else 1)
    if util_avg > util_max:
        util_max = util_avg
    for i in range(num):
        if slots[i] < 0:
            self_util[i] = util_avg
        shifted[i] *= exp((self_util[i] - util_max) / t.cfg.human_chosen_move_pikl_lambda)
        shifted_sum += shifted[i]
    if shifted_sum <= 0.0:
        return num
    for i in range(num):
        shifted[i] /= shifted_sum
        value_sum += values[i]
        if locs[i] != PASS_LOC:
            value_non_pass_sum += values[i]
            shifted_non_pass_sum += shifted[i]
    if t.cfg.human_chosen_move_ignore_pass and shifted_non_pass_sum > 0.0 and value_sum > 0.0:
        # Keep the search's own passing share; the human policy only spreads the rest.
        for i in range(num):
            if locs[i] != PASS_LOC:
                shifted[i] = shifted[i] / shifted_non_pass_sum * value_non_pass_sum / value_sum
            else:
                shifted[i] = (value_sum - value_non_pass_sum) / value_sum
    for i in range(num):
        values[i] += t.cfg.human_chosen_move_prop * (value_sum * shifted[i] - values[i])
    return num


# ---- principal variation ---------------------------------------------------------------
cdef int append_pv(TreeCore* t, Node* n, Loc first_move, int max_depth, Loc* pv, int64_t* pv_visits,
                   int64_t* pv_edge_visits, int start) noexcept nogil:
    """Follow the best play selection value from n (after first_move at depth 0 if given); returns the new length."""
    cdef Loc locs[MAX_EDGES]
    cdef double values[MAX_EDGES]
    cdef double lcbs[MAX_EDGES]
    cdef double radii[MAX_EDGES]
    cdef int slots[MAX_EDGES]
    cdef int depth, num, i, best
    cdef double best_value
    cdef int length = start
    for depth in range(max_depth):
        if n == NULL:
            break
        num = play_selection_values(t, n, True, False, False, 1.0, locs, values, lcbs, radii, slots)
        if num == 0:
            break
        best = -1
        best_value = POLICY_ILLEGAL_SELECTION_VALUE
        for i in range(num):
            if depth == 0 and first_move != NULL_LOC and locs[i] == first_move:
                best = i
                break
            if values[i] > best_value:
                best_value = values[i]
                best = i
        if best < 0 or (depth == 0 and first_move != NULL_LOC and locs[best] != first_move):
            break
        pv[length] = locs[best]
        if slots[best] < 0:
            pv_visits[length] = 0
            pv_edge_visits[length] = 0
            length += 1
            break
        pv_visits[length] = n.children[slots[best]].node.stats.visits
        pv_edge_visits[length] = n.children[slots[best]].edge_visits
        length += 1
        n = n.children[slots[best]].node
    return length


# ---- Python API --------------------------------------------------------------------------
cdef object xy_of(const TreeCore* t, Loc loc):
    if loc == PASS_LOC:
        return None
    return (loc_x(loc, t.x_size), loc_y(loc, t.x_size))


cdef Loc _loc_ofxy_of(const TreeCore* t, xy) except? -1:
    if xy is None:
        return PASS_LOC
    x, y = xy
    return loc_of(x, y, t.x_size)


def play_selection(SearchTree tree, double scale_max_to_at_least=0.0):
    """Root moves and their play selection values (what the chosen move is drawn from), or ([], [])."""
    cdef TreeCore* t = &tree.t
    cdef Loc locs[MAX_EDGES]
    cdef double values[MAX_EDGES]
    cdef double lcbs[MAX_EDGES]
    cdef double radii[MAX_EDGES]
    cdef int slots[MAX_EDGES]
    cdef int num, i
    if t.root == NULL:
        return [], []
    with nogil:
        num = play_selection_values(t, t.root, True, False, False, scale_max_to_at_least, locs, values, lcbs, radii, slots)
    return [xy_of(t, locs[i]) for i in range(num)], [values[i] for i in range(num)]


def principal_variation(SearchTree tree, int max_depth, move=False):
    """(moves, visits, edge visits) of the best line from the root, or after root move `move` if given."""
    cdef TreeCore* t = &tree.t
    cdef Loc* pv
    cdef int64_t* pv_visits
    cdef int64_t* pv_edge
    cdef int length, i
    cdef Loc first = NULL_LOC if move is False else _loc_ofxy_of(t, move)
    if t.root == NULL or max_depth <= 0:
        return [], [], []
    pv = <Loc*>malloc(max_depth * sizeof(Loc))
    pv_visits = <int64_t*>malloc(max_depth * sizeof(int64_t))
    pv_edge = <int64_t*>malloc(max_depth * sizeof(int64_t))
    with nogil:
        length = append_pv(t, t.root, first, max_depth, pv, pv_visits, pv_edge, 0)
    result = ([xy_of(t, pv[i]) for i in range(length)], [pv_visits[i] for i in range(length)],
              [pv_edge[i] for i in range(length)])
    free(pv)
    free(pv_visits)
    free(pv_edge)
    return result


cdef dict _values_dict(double wl, double nr, double sm, double smsq, double lead, double utility, double weight,
                       int64_t visits):
    if wl < -1.0:
        wl = -1.0
    if wl > 1.0:
        wl = 1.0
    if nr < 0.0:
        nr = 0.0
    if nr > 1.0 - abs(wl):
        nr = 1.0 - abs(wl)
    win = min(1.0, max(0.0, 0.5 * (wl + (1.0 - nr))))
    loss = min(1.0, max(0.0, 0.5 * (-wl + (1.0 - nr))))
    return {
        "win_loss": wl, "win": win, "loss": loss, "no_result": nr, "score_mean": sm,
        "score_stdev": score_stdev(sm, smsq), "lead": lead, "utility": utility, "weight": weight, "visits": visits,
    }


def root_values(SearchTree tree, bint pruned=True):
    """The root's search values (White's view): dict of win_loss, win, loss, no_result, score_mean,
    score_stdev, lead, utility, weight, visits. pruned: KataGo's getPrunedRootValues. None before any visit."""
    cdef TreeCore* t = &tree.t
    cdef Node* r = t.root
    cdef Loc locs[MAX_EDGES]
    cdef double values[MAX_EDGES]
    cdef int slots[MAX_EDGES]
    cdef int num = 0, i
    cdef double wl = 0, nr = 0, sm = 0, smsq = 0, ld = 0, ut = 0, wsum = 0, w
    cdef const NodeStats* st
    if r == NULL or r.stats.weight_sum <= 0.0:
        return None
    if pruned and r.state == NODE_EXPANDED:
        num = play_selection_values(t, r, False, False, True, 1.0, locs, values, NULL, NULL, slots)
    if num == 0:
        st = &r.stats
        return _values_dict(st.win_loss, st.no_result, st.score_mean, st.score_mean_sq, st.lead, st.utility,
                            st.weight_sum, st.visits)
    for i in range(num):
        st = &r.children[slots[i]].node.stats
        if st.visits <= 0 or st.weight_sum <= 0.0 or r.children[slots[i]].edge_visits <= 0:
            continue
        w = values[i]
        wl += w * st.win_loss
        nr += w * st.no_result
        sm += w * st.score_mean
        smsq += w * st.score_mean_sq
        ld += w * st.lead
        ut += w * st.utility
        wsum += w
    w = eval_weight(&t.cfg, r.eval.score_mean, r.eval.st_wl_error, r.eval.st_score_error)
    wl += (r.eval.win - r.eval.loss) * w
    nr += r.eval.no_result * w
    sm += r.eval.score_mean * w
    smsq += r.eval.score_mean_sq * w
    ld += r.eval.lead * w
    ut += (result_utility(&t.cfg, r.eval.win - r.eval.loss, r.eval.no_result)
           + score_utility(&t.cfg, r.eval.score_mean, r.eval.score_mean_sq)) * w
    wsum += w
    return _values_dict(wl / wsum, nr / wsum, sm / wsum, smsq / wsum, ld / wsum, ut / wsum, r.stats.weight_sum,
                        r.stats.visits)


def root_raw_values(SearchTree tree):
    """The root's direct evaluation (White's view), or None if not evaluated."""
    cdef Node* r = tree.t.root
    if r == NULL or r.state != NODE_EXPANDED:
        return None
    return {
        "win": r.eval.win, "loss": r.eval.loss, "no_result": r.eval.no_result, "score_mean": r.eval.score_mean,
        "score_mean_sq": r.eval.score_mean_sq, "lead": r.eval.lead, "var_time_left": r.eval.var_time_left,
        "st_wl_error": r.eval.st_wl_error, "st_score_error": r.eval.st_score_error,
    }


def root_raw_ownership(SearchTree tree):
    """The root's own network ownership (White's view, float32, board points row-major: what KataGo's evalsgf
    -print-ownership prints), or None before the root is evaluated or without an ownership head."""
    cdef Node* r = tree.t.root
    cdef int k
    if r == NULL or r.state != NODE_EXPANDED or r.ownership == NULL:
        return None
    out = np.empty(tree.t.area, np.float32)
    for k in range(tree.t.area):
        out[k] = r.ownership[k]
    return out


def root_policy(SearchTree tree, bint maybe_noised=False):
    """Raw policy of the root, row-major board points then pass, -1 for illegal moves; None if unevaluated.

    maybe_noised: the priors the search used instead, with root policy temperature and Dirichlet
    noise when those are on (KataGo's getPolicyProbsMaybeNoised, which self-play's policy surprise
    and policy entropy targets are measured against).
    """
    cdef TreeCore* t = &tree.t
    cdef Node* r = t.root
    cdef int e
    if r == NULL or r.state != NODE_EXPANDED:
        return None
    out = np.full(t.area + 1, -1.0, np.float32)
    for e in range(t.num_positions):
        if r.policy[e] >= 0.0:
            out[e] = root_prior(t, r, e) if maybe_noised else r.policy[e]
    return out


cdef Node* node_along(const TreeCore* t, path) except? NULL:
    """The node reached from the root by the moves in `path` ((x, y) or None for pass); NULL if the tree
    does not hold that line."""
    cdef Node* n = t.root
    cdef Loc loc
    cdef int i
    for xy in path:
        if n == NULL or n.state != NODE_EXPANDED:
            return NULL
        loc = _loc_ofxy_of(t, xy)
        for i in range(n.num_children):
            if n.children[i].move == loc:
                n = n.children[i].node
                break
        else:
            return NULL
    return n


cdef void child_weight_factors(const TreeCore* t, const Node* n, double fpu, double* out) noexcept nogil:
    """KataGo's weight factor of each child (children order): its weight after noise pruning and
    downweighting of bad children, as getAnalysisData reports it for printTree's WF."""
    cdef double self_utilities[MAX_EDGES]
    cdef double priors[MAX_EDGES]
    cdef int64_t visits[MAX_EDGES]
    cdef double total = 0.0, utility
    cdef int i
    cdef const ChildSlot* s
    for i in range(n.num_children):
        s = &n.children[i]
        out[i] = child_weight(s)
        total += out[i]
        utility = s.node.stats.utility if s.node.stats.visits > 0 and s.node.stats.weight_sum > 1e-30 else fpu
        self_utilities[i] = utility if n.next_pla == C_WHITE else -utility
        priors[i] = root_prior(t, n, s.edge)
        if priors[i] < 1e-30:
            priors[i] = 1e-30
        visits[i] = s.node.stats.visits
    if t.cfg.use_noise_pruning:
        total = prune_noise_weight(t, n.num_children, out, self_utilities, priors, total)
    downweight_bad_children(t, n.num_children, total, total, 0.0, 0.0, out, self_utilities, visits)


def node_identity(SearchTree tree, path=()):
    """An id of the node reached from the root by the moves in `path` (None if the tree does not hold
    that line): two lines share a node (a transposition, in graph search) exactly when their ids match."""
    cdef Node* n = node_along(&tree.t, path)
    return None if n == NULL else <size_t>n


def node_stats(SearchTree tree, path=()):
    """A node's own averages (White's view), reached from the root by the moves in `path`: visits, utility,
    result_utility, score_utility, score_mean, lead; None if the tree does not hold it or it has no weight."""
    cdef TreeCore* t = &tree.t
    cdef Node* n = node_along(t, path)
    cdef const NodeStats* st
    if n == NULL or n.stats.weight_sum <= 1e-30:
        return None
    st = &n.stats
    return {"visits": int(st.visits), "utility": st.utility,
            "result_utility": result_utility(&t.cfg, st.win_loss, st.no_result),
            "score_utility": score_utility(&t.cfg, st.score_mean, st.score_mean_sq),
            "score_mean": st.score_mean, "lead": st.lead}


def analysis_data(SearchTree tree, int max_pv_len, int min_moves=0, path=(), bint weight_factors=False):
    """Per move analysis (KataGo's getAnalysisData) at the root, or at the node reached by the moves in
    `path` (None if the tree does not hold that line), sorted as KataGo orders moves.

    Each entry: move, visits (child), edge_visits, weight (child weight sum), edge_weight, utility,
    win_loss, no_result, score_mean, score_stdev, lead, prior, lcb (utility LCB, White's view),
    radius, play_selection_value, pv, pv_visits, pv_edge_visits; with `weight_factors` also
    weight_factor (printTree's WF). White's point of view throughout.
    """
    cdef TreeCore* t = &tree.t
    cdef Node* r = node_along(t, path)
    cdef double factors[MAX_EDGES]
    cdef Loc locs[MAX_EDGES]
    cdef double values[MAX_EDGES]
    cdef double lcbs[MAX_EDGES]
    cdef double radii[MAX_EDGES]
    cdef int slots[MAX_EDGES]
    cdef int16_t order_buf[MAX_EDGES]
    cdef Loc* pv
    cdef int64_t* pv_visits
    cdef int64_t* pv_edge
    cdef int num, i, e, pv_len, j, num_order
    cdef double mass = 0.0, parent_utility, parent_wpv, stdev_factor, fpu, radius0, lcb0
    cdef double parent_wl, parent_sm, parent_sd, parent_lead, p
    cdef const ChildSlot* s
    cdef const NodeStats* st
    cdef int64_t child_visits
    if r == NULL:
        return None if path else []
    if r.state != NODE_EXPANDED or r.stats.weight_sum <= 0.0:
        return []
    num = r.num_children
    if num > 0:
        if play_selection_values(t, r, False, True, False, 1.0, locs, values, lcbs, radii, slots) == 0:
            radius0 = 2.0 * utility_radius(&t.cfg) * t.cfg.lcb_stdevs
            for i in range(num):
                locs[i] = r.children[i].move
                slots[i] = i
                values[i] = 0.0
                lcbs[i] = -radius0
                radii[i] = radius0
    for i in range(num):
        p = root_prior(t, r, r.children[i].edge)
        mass += p if p > 0.0 else 0.0
    parent_wl = r.stats.win_loss
    parent_sm = r.stats.score_mean
    parent_sd = score_stdev(r.stats.score_mean, r.stats.score_mean_sq)
    parent_lead = r.stats.lead
    fpu = fpu_value(t, r, r.next_pla, True, mass, &parent_utility, &parent_wpv, &stdev_factor)
    if weight_factors:
        child_weight_factors(t, r, fpu, factors)

    pv = <Loc*>malloc((max_pv_len + 1) * sizeof(Loc))
    pv_visits = <int64_t*>malloc((max_pv_len + 1) * sizeof(int64_t))
    pv_edge = <int64_t*>malloc((max_pv_len + 1) * sizeof(int64_t))
    out = []
    seen = set()
    try:
        for i in range(num):
            s = &r.children[slots[i]]
            st = &s.node.stats
            child_visits = st.visits
            entry = {"move": xy_of(t, s.move), "edge_visits": int(s.edge_visits), "visits": int(child_visits),
                     "prior": root_prior(t, r, s.edge), "play_selection_value": values[i],
                     "lcb": lcbs[i] if r.next_pla == C_WHITE else -lcbs[i], "radius": radii[i]}
            if child_visits <= 0 or st.weight_sum <= 1e-30:
                entry.update(_unvisited_values(t, fpu, parent_utility, parent_wl, parent_sm, parent_sd, parent_lead))
            else:
                entry.update({
                    "utility": st.utility, "win_loss": st.win_loss, "no_result": st.no_result,
                    "score_mean": st.score_mean, "score_stdev": score_stdev(st.score_mean, st.score_mean_sq),
                    "lead": st.lead, "weight": st.weight_sum, "edge_weight": child_weight(s),
                    "result_utility": result_utility(&t.cfg, st.win_loss, st.no_result),
                    "score_utility": score_utility(&t.cfg, st.score_mean, st.score_mean_sq),
                })
            if weight_factors:
                entry["weight_factor"] = factors[slots[i]]
            pv[0] = s.move
            pv_visits[0] = child_visits
            pv_edge[0] = s.edge_visits
            pv_len = 1
            if max_pv_len > 1:
                pv_len = append_pv(t, s.node, NULL_LOC, max_pv_len - 1, pv, pv_visits, pv_edge, 1)
            entry["pv"] = [xy_of(t, pv[j]) for j in range(pv_len)]
            entry["pv_visits"] = [int(pv_visits[j]) for j in range(pv_len)]
            entry["pv_edge_visits"] = [int(pv_edge[j]) for j in range(pv_len)]
            out.append(entry)
            seen.add(s.move)
        # Fill up to min_moves from the policy, highest first.
        if len(out) < min_moves:
            num_order = node_edges_in_prior_order(t, r, order_buf)
            # Highest prior first (the search's priors), ties in raw prior order.
            order = sorted(((root_prior(t, r, order_buf[j]), -j) for j in range(num_order)
                            if t.edge_loc[order_buf[j]] not in seen), reverse=True)
            for p_value, neg_rank in order[:min_moves - len(out)]:
                e = order_buf[-neg_rank]
                entry = {"move": xy_of(t, t.edge_loc[e]), "edge_visits": 0, "visits": 0, "prior": p_value,
                         "play_selection_value": 0.0, "lcb": 0.0, "radius": 0.0,
                         "pv": [xy_of(t, t.edge_loc[e])], "pv_visits": [0], "pv_edge_visits": [0]}
                entry.update(_unvisited_values(t, fpu, parent_utility, parent_wl, parent_sm, parent_sd, parent_lead))
                radius0 = 2.0 * utility_radius(&t.cfg) * t.cfg.lcb_stdevs
                entry["lcb"] = -radius0 if r.next_pla == C_WHITE else radius0
                entry["radius"] = radius0
                out.append(entry)
    finally:
        free(pv)
        free(pv_visits)
        free(pv_edge)
    # 0-visit moves last, then play selection value, visits, prior (a stable sort, as KataGo's).
    out.sort(key=lambda d: (d["edge_visits"] == 0, -d["play_selection_value"], -d["edge_visits"], -d["prior"]))
    return out


cdef dict _unvisited_values(const TreeCore* t, double fpu, double parent_utility, double parent_wl, double parent_sm,
                            double parent_sd, double parent_lead):
    cdef double wl = parent_wl + (fpu - parent_utility) if t.cfg.win_loss_utility_factor == 1.0 else 0.0
    wl = max(-1.0, min(1.0, wl))
    return {"utility": fpu, "win_loss": wl, "no_result": 0.0, "score_mean": parent_sm, "score_stdev": parent_sd,
            "lead": parent_lead, "weight": 0.0, "edge_weight": 0.0}


# ---- ownership ---------------------------------------------------------------------------
cdef bint _own_traverse(const TreeCore* t, const Node* n, double min_prop, double prune_prop, double desired,
                        double* avg, double* sq) noexcept nogil:
    """Add desired * ownership over n's subtree; False when n has no ownership to give."""
    cdef int i, k
    cdef double child_ws = 0.0, rel_sum = 0.0, w, parent_w, from_children, self_prop, from_child
    cdef double* weights
    if n == NULL or n.state != NODE_EXPANDED or n.ownership == NULL:
        return False
    # A cycle back onto this walk's path (graph search) counts as a leaf, as KataGo does.
    if desired >= min_prop and n.num_children > 0 and n.on_path == 0:
        (<Node*>n).on_path += 1
        weights = <double*>malloc(n.num_children * sizeof(double))
        for i in range(n.num_children):
            weights[i] = child_weight(&n.children[i]) if n.children[i].node.stats.visits > 0 else 0.0
            child_ws += weights[i]
            rel_sum += weights[i] * weights[i]
        parent_w = eval_weight(&t.cfg, n.eval.score_mean, n.eval.st_wl_error, n.eval.st_score_error)
        if parent_w < 1e-10:
            parent_w = 1e-10
        from_children = desired * child_ws / (child_ws + parent_w)
        self_prop = desired * parent_w / (child_ws + parent_w)
        if from_children <= 0.0 or rel_sum <= 0.0:
            self_prop += from_children
        else:
            for i in range(n.num_children):
                from_child = weights[i] * weights[i] / rel_sum * from_children
                if from_child < prune_prop:
                    self_prop += from_child
                elif not _own_traverse(t, n.children[i].node, min_prop, prune_prop, from_child, avg, sq):
                    self_prop += from_child
        free(weights)
        (<Node*>n).on_path -= 1
    else:
        self_prop = desired
    for k in range(t.area):
        avg[k] += self_prop * n.ownership[k]
        sq[k] += self_prop * n.ownership[k] * n.ownership[k]
    return True


def tree_ownership(SearchTree tree, move=False):
    """(mean, stdev) ownership averaged over the tree below the root, or below root move `move` if given.

    White's view, float64 arrays of board points, row-major. None when ownership is unavailable
    (the tree keeps per-node ownership only in keep_ownership mode; the root always has it).
    """
    cdef TreeCore* t = &tree.t
    cdef const Node* n = t.root
    cdef Loc loc
    cdef int i
    cdef double min_prop
    cdef double[::1] avg_view
    cdef double[::1] sq_view
    if n == NULL:
        return None
    if move is not False:
        loc = _loc_ofxy_of(t, move)
        n = NULL
        for i in range(t.root.num_children):
            if t.root.children[i].move == loc:
                n = t.root.children[i].node
        if n == NULL:
            return None
    if n.ownership == NULL:
        return None
    avg = np.zeros(t.area, np.float64)
    sq = np.zeros(t.area, np.float64)
    avg_view = avg
    sq_view = sq
    min_prop = OWNERSHIP_MIN_PROP_SCALE / pow(max(1.0, <double>n.stats.visits), OWNERSHIP_MIN_PROP_EXPONENT)
    with nogil:
        _own_traverse(t, n, min_prop, min_prop * OWNERSHIP_PRUNE_FACTOR, 1.0, &avg_view[0], &sq_view[0])
    stdev = np.sqrt(np.maximum(sq - avg * avg, 0.0))
    return avg, stdev


def root_child_stats(SearchTree tree):
    """Raw per-child numbers for tests and debugging: list of dicts (move, edge_visits, visits, weight, utility)."""
    cdef Node* r = tree.t.root
    cdef int i
    if r == NULL:
        return []
    return [{"move": xy_of(&tree.t, r.children[i].move), "edge_visits": int(r.children[i].edge_visits),
             "visits": int(r.children[i].node.stats.visits), "weight": r.children[i].node.stats.weight_sum,
             "utility": r.children[i].node.stats.utility, "virtual_losses": r.children[i].node.virtual_losses,
             "terminal": bool(r.children[i].node.is_terminal)}
            for i in range(r.num_children)]

