# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Selection: which child a descent takes, by PUCT with KataGo's adjustments (contract: search_select.pxd)."""
from libc.stdint cimport int64_t
from libc.math cimport sqrt, log, pow, fabs

from katacli._core.board cimport Loc, Color, C_WHITE, PASS_LOC, NULL_LOC
from katacli._core.history cimport History, history_pass_would_end_phase
from katacli._core.search_values cimport score_utility_diff, utility_radius, result_utility, score_utility
from katacli._core.playout cimport rng_uniform, rng_gaussian
from katacli._core.search_nodes cimport (
    TreeCore, Node, ChildSlot, NodeStats, HUMAN_AT_ROOT, HUMAN_AT_ROOT_PLAYER, HUMAN_AT_OPPONENT,
    node_direct_utility, child_weight, root_prior, child_prior, ending_bonus, eval_cache_applies, edge_of_move,
    edge_explored,
    edge_before, node_next_new_edge,
)
from katacli._core.search_evalcache cimport EvalCacheEntry
from katacli._core.search_mirror cimport anti_mirror_active, anti_mirror_target, anti_mirror_policy, anti_mirror_forced_explore


# Tiny constant in the PUCT numerator so that exploration works before any visit (KataGo's).
cdef double TOTAL_CHILD_WEIGHT_PUCT_OFFSET = 0.01
cdef double POLICY_ILLEGAL_SELECTION_VALUE = -1e50
cdef double FUTILE_VISITS_PRUNE_VALUE = -1e40
cdef double FORCED_EXPLORE_SELECTION_VALUE = 1e20
# Virtual losses weigh at least as much as this much child weight in the blend.
cdef double MIN_CHILD_WEIGHT_FOR_VIRTUAL_LOSS = 0.25


cdef double fpu_value(const TreeCore* t, const Node* n, Color pla, bint is_root, double policy_mass_visited,
                      double* parent_utility, double* parent_weight_per_visit, double* stdev_factor) noexcept nogil:
    """First-play urgency: the value assumed for unvisited children (KataGo's getFpuValueForChildrenAssumeVisited)."""
    cdef const NodeStats* s = &n.stats
    cdef double variance_prior = t.cfg.cpuct_utility_stdev_prior * t.cfg.cpuct_utility_stdev_prior
    cdef double prior_weight = t.cfg.cpuct_utility_stdev_prior_weight
    cdef double stdev, utility_sq, utility_sq_avg, for_fpu, avg_weight, reduction, fpu, loss_value, radius
    cdef double reduction_max, loss_prop, v
    parent_weight_per_visit[0] = s.weight_sum / s.visits if s.visits > 0 else 1.0
    parent_utility[0] = s.utility
    if s.visits <= 0 or s.weight_sum <= 1.0:
        stdev = t.cfg.cpuct_utility_stdev_prior
    else:
        utility_sq = s.utility * s.utility
        utility_sq_avg = s.utility_sq if s.utility_sq > utility_sq else utility_sq
        v = ((utility_sq + variance_prior) * prior_weight + utility_sq_avg * s.weight_sum) / (
            prior_weight + s.weight_sum - 1.0) - utility_sq
        stdev = sqrt(v) if v > 0.0 else 0.0
    stdev_factor[0] = 1.0 + t.cfg.cpuct_utility_stdev_scale * (stdev / t.cfg.cpuct_utility_stdev_prior - 1.0)

    for_fpu = s.utility
    if t.cfg.fpu_parent_weight_by_visited_policy:
        avg_weight = pow(policy_mass_visited, t.cfg.fpu_parent_weight_by_visited_policy_pow)
        if avg_weight > 1.0:
            avg_weight = 1.0
        for_fpu = avg_weight * s.utility + (1.0 - avg_weight) * node_direct_utility(t, n)
    elif t.cfg.fpu_parent_weight > 0.0:
        for_fpu = t.cfg.fpu_parent_weight * node_direct_utility(t, n) + (1.0 - t.cfg.fpu_parent_weight) * s.utility

    reduction_max = t.cfg.root_fpu_reduction_max if is_root else t.cfg.fpu_reduction_max
    loss_prop = t.cfg.root_fpu_loss_prop if is_root else t.cfg.fpu_loss_prop
    radius = utility_radius(&t.cfg)
    reduction = reduction_max * sqrt(policy_mass_visited)
    fpu = for_fpu - reduction if pla == C_WHITE else for_fpu + reduction
    loss_value = -radius if pla == C_WHITE else radius
    return fpu + (loss_value - fpu) * loss_prop


cdef double explore_scaling(const TreeCore* t, double total_child_weight, double stdev_factor) noexcept nogil:
    cdef double cpuct = t.cfg.cpuct_exploration + t.cfg.cpuct_exploration_log * log(
        (total_child_weight + t.cfg.cpuct_exploration_base) / t.cfg.cpuct_exploration_base)
    return cpuct * sqrt(total_child_weight + TOTAL_CHILD_WEIGHT_PUCT_OFFSET) * stdev_factor


cdef inline double human_explore_scaling(const TreeCore* t, double total_child_weight) noexcept nogil:
    """Exploration scaling when a playout follows the human policy (no utility-stdev factor, as KataGo)."""
    cdef double cpuct = t.cfg.human_cpuct_exploration + t.cfg.human_cpuct_permanent * sqrt(total_child_weight)
    return cpuct * sqrt(total_child_weight + TOTAL_CHILD_WEIGHT_PUCT_OFFSET)


cdef inline int human_pick(TreeCore* t, const Node* n, bint is_root) noexcept nogil:
    """Whether this visit of n follows the human policy: 0 no, 1 weightful, 2 weightless (KataGo's draw)."""
    cdef int where
    cdef double weightless, weightful, r
    if n.human_priors == NULL:
        return 0
    if is_root:
        where = HUMAN_AT_ROOT
    elif n.next_pla == t.root.next_pla:
        where = HUMAN_AT_ROOT_PLAYER
    else:
        where = HUMAN_AT_OPPONENT
    weightless = t.cfg.human_explore_weightless[where]
    weightful = t.cfg.human_explore_weightful[where]
    if weightless + weightful <= 0.0:
        return 0
    r = rng_uniform(&t.rng)
    if r < weightless:
        return 2
    if r < weightless + weightful:
        return 1
    return 0


cdef inline double selection_prior(const TreeCore* t, const Node* n, int edge, bint human) noexcept nogil:
    return n.human_priors[edge] if human else root_prior(t, n, edge)


cdef inline double slot_selection_prior(const TreeCore* t, const Node* n, const ChildSlot* s, bint human) noexcept nogil:
    return n.human_priors[s.edge] if human else child_prior(t, n, s)


cdef double explore_selection_value(double scaling, double prior, double child_weight, double child_utility,
                                    Color pla) noexcept nogil:
    if prior < 0.0:
        return POLICY_ILLEGAL_SELECTION_VALUE
    return scaling * prior / (1.0 + child_weight) + (child_utility if pla == C_WHITE else -child_utility)


cdef inline void _wide_root_noise(TreeCore* t, double* utility, double* prior, Color pla) noexcept nogil:
    cdef double bonus
    prior[0] = pow(prior[0], 1.0 / (4.0 * t.cfg.wide_root_noise + 1.0))
    if rng_uniform(&t.rng) < 0.5:
        bonus = t.cfg.wide_root_noise * fabs(rng_gaussian(&t.rng))
        if pla == C_WHITE:
            utility[0] += bonus
        else:
            utility[0] -= bonus


# ---- root hint (self-play hint positions; KataGo's "hack for hintloc") -----------------------------
# Hint share: the hinted move is forced whenever its weight plus one visit's worth stays below this
# share of some other child's weight.
cdef double ROOT_HINT_WEIGHT_SHARE = 0.8


cdef bint root_hint_needs_visit(const Node* n, double hint_weight, int64_t hint_visits,
                                double parent_weight_per_visit) noexcept nogil:
    """Whether the root's hinted child (weight hint_weight, virtual losses included) must be searched now."""
    cdef double per_visit = (hint_weight + parent_weight_per_visit) / (hint_visits + 1.0)
    cdef int j
    for j in range(n.num_children):
        if hint_weight + per_visit < child_weight(&n.children[j]) * ROOT_HINT_WEIGHT_SHARE:
            return True
    return False


cdef inline bint _avoided(const TreeCore* t, Color pla, Loc move, int depth) noexcept nogil:
    return t.has_avoid[pla - 1] and depth < t.avoid_until[pla - 1][move]


cdef inline double _new_edge_selection_value(TreeCore* t, bint root_hacks, double scaling, double prior,
                                             double utility, double max_w, double parent_weight_per_visit,
                                             Color pla) noexcept nogil:
    """Selection value of a move without a child yet (KataGo's getNewExploreSelectionValue)."""
    if root_hacks and t.cfg.futile_visits_threshold > 0.0 and (
            t.upper_bound_visits_left < t.cfg.futile_visits_threshold * max_w / parent_weight_per_visit):
        return FUTILE_VISITS_PRUNE_VALUE
    if root_hacks and t.cfg.wide_root_noise > 0.0:
        _wide_root_noise(t, &utility, &prior, pla)
    return explore_selection_value(scaling, prior, 0.0, utility, pla)


cdef bint select_child(TreeCore* t, Node* n, bint is_root, const History* h, int* out_slot, int* out_edge,
                       bint* out_count_edge, bint* out_count_playout) noexcept nogil:
    """Pick the child to descend into by PUCT; out_slot >= 0 for an existing child, else out_edge is a new one.

    out_count_edge: whether the step counts an edge visit (the parent's value takes the playout in);
    out_count_playout: whether the playout counts toward the search's limits.
    """
    cdef Color pla = n.next_pla
    cdef int i, e, best_slot = -1, best_edge = -1, best_new_edge = -1, depth
    cdef double mass = 0.0, total_w = 0.0, max_w = 0.0, p, w, u, value, best_value = POLICY_ILLEGAL_SELECTION_VALUE
    cdef double parent_utility, parent_weight_per_visit, stdev_factor, fpu, scaling, vl_w, vl_util, frac
    cdef double best_new_prior = -1.0, bonus, avg_vpw, required, est_visits
    cdef int64_t total_edge_visits = 0
    cdef ChildSlot* s
    cdef Node* c
    cdef const EvalCacheEntry* cache
    cdef bint has_pass_child = False, has_non_pass_child = False
    cdef bint scan_all = is_root or t.has_avoid[pla - 1]
    # With a human-SL net, some visits pick by the human policy; weightless ones count no edge visit
    # and so weigh children by their own weight instead of their edge's (KataGo).
    cdef int human = human_pick(t, n, is_root)
    cdef bint weightless = human == 2
    cdef bint root_hacks
    # Against a mirroring opponent, while this line still mirrors: KataGo's anti-mirror nudges.
    cdef bint anti = anti_mirror_active(t, h)
    cdef Loc mirror_target = anti_mirror_target(t, n, h) if anti else NULL_LOC
    out_count_edge[0] = not weightless
    out_count_playout[0] = True
    root_hacks = is_root and not weightless
    if human or anti:
        scan_all = True   # unexplored edges are ordered by the main priors, not the human or anti-mirror ones
    depth = h.num_moves - t.root_hist.num_moves

    for i in range(n.num_children):
        s = &n.children[i]
        p = slot_selection_prior(t, n, s, human)
        if p < 0.0:
            continue
        mass += p
        if weightless:
            w = s.node.stats.weight_sum
        else:
            w = child_weight(s) if s.node.stats.visits > 0 else 0.0
        total_w += w
        if w > max_w:
            max_w = w
        total_edge_visits += s.edge_visits
        if s.move == PASS_LOC:
            has_pass_child = True
        else:
            has_non_pass_child = True

    fpu = fpu_value(t, n, pla, is_root, mass, &parent_utility, &parent_weight_per_visit, &stdev_factor)
    if human:
        scaling = human_explore_scaling(t, total_w)
    else:
        scaling = explore_scaling(t, total_w, stdev_factor)

    for i in range(n.num_children):
        s = &n.children[i]
        c = s.node
        p = slot_selection_prior(t, n, s, human)
        if weightless:
            w = c.stats.weight_sum
        else:
            w = child_weight(s) if c.stats.visits > 0 else 0.0
        if c.stats.visits <= 0 or w <= 0.0:
            u = fpu
        else:
            u = c.stats.utility
            bonus = ending_bonus(t, n, s.move)
            if bonus != 0.0:
                u += score_utility_diff(&t.cfg, c.stats.score_mean, c.stats.score_mean_sq, bonus)
        if c.virtual_losses > 0:
            vl_w = c.virtual_losses * t.cfg.num_virtual_losses_per_thread
            vl_util = -utility_radius(&t.cfg) if pla == C_WHITE else utility_radius(&t.cfg)
            frac = vl_w / (vl_w + (w if w > MIN_CHILD_WEIGHT_FOR_VIRTUAL_LOSS else MIN_CHILD_WEIGHT_FOR_VIRTUAL_LOSS))
            u = u + (vl_util - u) * frac
            w += vl_w
        if root_hacks:
            if t.cfg.futile_visits_threshold > 0.0:
                required = t.cfg.futile_visits_threshold * max_w
                avg_vpw = (s.edge_visits + 1.0) / (w + parent_weight_per_visit)
                if c.stats.visits + t.upper_bound_visits_left < required * avg_vpw:
                    if FUTILE_VISITS_PRUNE_VALUE > best_value:
                        best_value = FUTILE_VISITS_PRUNE_VALUE
                        best_slot = i
                        best_edge = s.edge
                    continue
            if t.cfg.root_desired_per_child_visits_coeff > 0.0:
                if p > 0.0 and w < sqrt(p * total_w * t.cfg.root_desired_per_child_visits_coeff):
                    value = FORCED_EXPLORE_SELECTION_VALUE
                    if value > best_value:
                        best_value = value
                        best_slot = i
                        best_edge = s.edge
                    continue
            if t.cfg.root_hint_loc != NULL_LOC and s.move == t.cfg.root_hint_loc and \
                    root_hint_needs_visit(n, w, c.stats.visits, parent_weight_per_visit):
                value = FORCED_EXPLORE_SELECTION_VALUE
                if value > best_value:
                    best_value = value
                    best_slot = i
                    best_edge = s.edge
                continue
            if t.cfg.wide_root_noise > 0.0 and p >= 0.0:
                _wide_root_noise(t, &u, &p, pla)
        if anti and not weightless and p >= 0.0:
            p = anti_mirror_policy(t, p, s.move, pla, mirror_target, h)
            u = anti_mirror_forced_explore(t, u, parent_utility, s.move, pla, mirror_target, w, total_w, h, is_root)
        value = explore_selection_value(scaling, p, w, u, pla)
        if value > best_value:
            best_value = value
            best_slot = i
            best_edge = s.edge

    # Unexplored moves the eval cache saw searched from this position compete with their cached value
    # instead of FPU, in move order (KataGo: possibly out of policy order).
    if eval_cache_applies(t, n):
        cache = n.eval_cache_entry
        for i in range(cache.num_first):
            e = edge_of_move(t, n, cache.first[i].move)
            if e < 0 or edge_explored(n, e):
                continue
            if is_root and not t.root_allowed[t.edge_loc[e]]:
                continue
            if _avoided(t, pla, t.edge_loc[e], depth):
                continue
            p = selection_prior(t, n, e, human)
            if p < 0.0:
                continue
            u = (result_utility(&t.cfg, cache.first[i].win_loss, 0.0)
                 + score_utility(&t.cfg, cache.first[i].score_mean,
                                 <double>cache.first[i].score_mean * cache.first[i].score_mean))
            value = _new_edge_selection_value(t, root_hacks, scaling, p, u, max_w, parent_weight_per_visit, pla)
            if value > best_value:
                best_value = value
                best_slot = -1
                best_edge = e

    # The best unexplored move: the highest prior (the first unexplored edge unless the root
    # or avoided moves make the order or eligibility differ).
    if scan_all:
        for e in range(t.num_positions):
            if n.policy[e] < 0.0 or edge_explored(n, e):
                continue
            if is_root and not t.root_allowed[t.edge_loc[e]]:
                continue
            if _avoided(t, pla, t.edge_loc[e], depth):
                continue
            p = selection_prior(t, n, e, human)
            if anti and p >= 0.0:
                p = anti_mirror_policy(t, p, t.edge_loc[e], pla, mirror_target, h)
            # Equal values: the edge first in prior order wins.
            if p > best_new_prior or (p == best_new_prior and best_new_edge >= 0 and edge_before(n, e, best_new_edge)):
                best_new_prior = p
                best_new_edge = e
    else:
        best_new_edge = node_next_new_edge(t, n)
        if best_new_edge >= 0:
            best_new_prior = n.next_new_prior
    if best_new_edge >= 0:
        value = _new_edge_selection_value(t, root_hacks, scaling, best_new_prior, fpu, max_w, parent_weight_per_visit,
                                          pla)
        if value > best_value:
            best_value = value
            best_slot = -1
            best_edge = best_new_edge

    # Passing hack: when a pass would end the phase, make sure both pass and a non-pass move get looked at.
    if (total_edge_visits >= 2 and t.cfg.enable_more_passing_hacks and not t.nogo
            and not t.has_avoid[pla - 1] and best_edge >= 0
            and history_pass_would_end_phase(h, pla)):
        e = edge_of_move(t, n, PASS_LOC)
        if not has_pass_child and t.edge_loc[best_edge] != PASS_LOC:
            if e >= 0 and not edge_explored(n, e):
                best_slot = -1
                best_edge = e
                out_count_edge[0] = False
                out_count_playout[0] = False
        elif (not has_non_pass_child and t.edge_loc[best_edge] == PASS_LOC and best_new_edge >= 0
              and t.edge_loc[best_new_edge] != PASS_LOC):
            best_slot = -1
            best_edge = best_new_edge
            out_count_edge[0] = False
            out_count_playout[0] = False

    if best_edge < 0:
        return False
    out_slot[0] = best_slot
    out_edge[0] = best_edge
    return True
