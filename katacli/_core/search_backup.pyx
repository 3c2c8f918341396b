# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Backup: leaf values into node stats, recomputing parents from their children (contract: search_backup.pxd)."""
from libc.stdint cimport int64_t, int16_t
from libc.math cimport sqrt, pow, exp

from katacli._core.board cimport C_WHITE, C_EMPTY
from katacli._core.search_values cimport result_utility, score_utility, terminal_weight, t3_cdf
from katacli._core.search_nodes cimport (
    TreeCore, Node, ChildSlot, NodeStats, SvbEntry, LeafSlot, MAX_EDGES, NODE_EXPANDED, child_weight, child_prior,
    node_direct_utility, direct_weight, svb_bias, eval_cache_applies, pattern_bonus,
)
from katacli._core.search_evalcache cimport EvalCacheEntry
from katacli._core.search_graph cimport begin_walk


# Value weighting: a child's stdev estimate from its weight, KataGo's constants.
cdef double VALUE_WEIGHT_PRECISION_SCALE = 1.5
cdef double VALUE_WEIGHT_MIN_VARIANCE = 0.00000001
cdef double VALUE_WEIGHT_MIN_PROB = 0.0001
# Noise pruning: a child may take this multiple of its policy share before being trimmed.
cdef double NOISE_PRUNE_LENIENCY = 2.0
# Root subtract/prune are capped at this fraction of the heaviest child.
cdef double ROOT_PRUNE_MAX_FRACTION = 1.0 / 64.0


# Eval cache blending (KataGo's adjustEvalsFromCacheHelper): an entry heavier than evalCacheMinVisits
# counts as sqrt(min * weight), since entries below it in the graph apply their own blending; the
# cached share falls from 1 as the node's own visits grow past the entry's weight.
cdef double EVAL_CACHE_LINEAR_COEFF = 3.0
cdef double EVAL_CACHE_CUBIC_COEFF = 2.0


cdef void eval_cache_adjust(const TreeCore* t, const EvalCacheEntry* e, int64_t node_visits, double* win_loss,
                            double* no_result, double* score_mean, double* score_mean_sq, double* lead,
                            double* utility) noexcept nogil:
    """Blend a node's averages towards its eval cache entry's; utility may be NULL (recomputed by the caller)."""
    cdef double weight = e.weight, ratio, frac, old_score_mean, cache_utility, variance
    if weight <= 0.0:
        return   # the entry holds first explore evals only
    if weight > t.eval_cache_min_visits:
        weight = sqrt(t.eval_cache_min_visits * weight)
    ratio = node_visits / weight
    frac = 1.0 / (1.0 + EVAL_CACHE_LINEAR_COEFF * ratio * (1.0 + EVAL_CACHE_CUBIC_COEFF * ratio * ratio))
    win_loss[0] += frac * (e.win_loss - win_loss[0])
    no_result[0] += frac * (e.no_result - no_result[0])
    old_score_mean = score_mean[0]
    score_mean[0] += frac * (e.score_mean - score_mean[0])
    score_mean_sq[0] = score_mean_sq[0] - old_score_mean * old_score_mean + score_mean[0] * score_mean[0]
    if score_mean_sq[0] < 0.0:
        score_mean_sq[0] = 0.0
    lead[0] += frac * (e.lead - lead[0])
    if utility != NULL:
        variance = score_mean_sq[0] - score_mean[0] * score_mean[0] + <double>e.score_mean * e.score_mean
        cache_utility = (result_utility(&t.cfg, e.win_loss, e.no_result)
                         + score_utility(&t.cfg, e.score_mean, variance if variance > 0.0 else 0.0))
        utility[0] += frac * (cache_utility - utility[0])


# ---- leaf values -----------------------------------------------------------------------------
cdef void add_leaf_value(TreeCore* t, Node* n, double win_loss, double no_result, double score_mean,
                         double score_mean_sq, double lead, double weight, bint is_terminal,
                         bint assume_no_existing_weight) noexcept nogil:
    cdef NodeStats* s = &n.stats
    cdef double utility = result_utility(&t.cfg, win_loss, no_result) + score_utility(&t.cfg, score_mean, score_mean_sq)
    cdef double old_w, new_w
    if not is_terminal:
        utility += svb_bias(t, n)
    utility += pattern_bonus(t, n)
    if assume_no_existing_weight:
        s.win_loss = win_loss
        s.no_result = no_result
        s.score_mean = score_mean
        s.score_mean_sq = score_mean_sq
        s.lead = lead
        s.utility = utility
        s.utility_sq = utility * utility
        s.weight_sq_sum = weight * weight
        s.weight_sum = weight
        s.visits += 1
        return
    old_w = s.weight_sum
    new_w = old_w + weight
    s.win_loss = (s.win_loss * old_w + win_loss * weight) / new_w
    s.no_result = (s.no_result * old_w + no_result * weight) / new_w
    s.score_mean = (s.score_mean * old_w + score_mean * weight) / new_w
    s.score_mean_sq = (s.score_mean_sq * old_w + score_mean_sq * weight) / new_w
    s.lead = (s.lead * old_w + lead * weight) / new_w
    s.utility = (s.utility * old_w + utility * weight) / new_w
    s.utility_sq = (s.utility_sq * old_w + utility * utility * weight) / new_w
    s.weight_sq_sum += weight * weight
    s.weight_sum = new_w
    s.visits += 1


cdef void add_direct_eval_as_leaf(TreeCore* t, Node* n, bint assume_no_existing_weight) noexcept nogil:
    cdef double win_loss = n.eval.win - n.eval.loss, no_result = n.eval.no_result, score_mean = n.eval.score_mean
    cdef double score_mean_sq = n.eval.score_mean_sq, lead = n.eval.lead
    if n != t.root and eval_cache_applies(t, n):
        # A repeated evaluation is still one visit's worth of information (KataGo).
        eval_cache_adjust(t, n.eval_cache_entry, 1, &win_loss, &no_result, &score_mean, &score_mean_sq, &lead, NULL)
    add_leaf_value(t, n, win_loss, no_result, score_mean, score_mean_sq, lead, direct_weight(t, n), False,
                   assume_no_existing_weight)


cdef void add_terminal_value(TreeCore* t, Node* n) noexcept nogil:
    add_leaf_value(t, n, n.term_win_loss, n.term_no_result, n.term_score, n.term_score_sq, n.term_score,
                   terminal_weight(&t.cfg), True, False)


# ---- child weighting (shared by backup and results) -------------------------------------------
cdef double prune_noise_weight(const TreeCore* t, int num, double* weights, const double* self_utilities,
                               const double* priors, double total) noexcept nogil:
    """Trim children that took far more than their policy share yet look worse (KataGo's pruneNoiseWeight)."""
    cdef double utility_sum = 0.0, weight_sum = 0.0, prior_sum = 0.0
    cdef double gap, share, excess, cut, new_w
    cdef int i
    if num <= 1 or total <= 0.00001:
        return total
    for i in range(num):
        new_w = weights[i]
        if weight_sum > 0.0 and prior_sum > 0.0:
            gap = utility_sum / weight_sum - self_utilities[i]
            if gap > 0.0:
                share = NOISE_PRUNE_LENIENCY * weight_sum * priors[i] / prior_sum
                if weights[i] > share:
                    excess = weights[i] - share
                    cut = excess * (1.0 - exp(-gap / t.cfg.noise_prune_utility_scale))
                    if cut > t.cfg.noise_pruning_cap:
                        cut = t.cfg.noise_pruning_cap
                    new_w = weights[i] - cut
                    weights[i] = new_w
        utility_sum += self_utilities[i] * new_w
        weight_sum += new_w
        prior_sum += priors[i]
    return weight_sum


cdef inline double _subtract_and_prune(double* weights, int i, double current_total, double amount_to_subtract,
                                       double amount_to_prune) noexcept nogil:
    cdef double new_w
    if weights[i] < amount_to_prune:
        current_total -= weights[i]
        weights[i] = 0.0
        return current_total
    new_w = weights[i] - amount_to_subtract
    if new_w <= 0.0:
        current_total -= weights[i]
        weights[i] = 0.0
    else:
        current_total -= amount_to_subtract
        weights[i] = new_w
    return current_total


cdef void downweight_bad_children(const TreeCore* t, int num, double current_total, double desired_total,
                                  double amount_to_subtract, double amount_to_prune, double* weights,
                                  const double* self_utilities, const int64_t* visits) noexcept nogil:
    """Scale children's weights by how likely their value is as good as the average (KataGo's
    downweightBadChildrenAndNormalizeWeight), after the root's subtract/prune, to sum to desired_total."""
    cdef int i
    cdef double simple_sum = 0.0, simple_value, z, p, factor, total_new = 0.0, precision
    cdef double* stdevs
    if num <= 0 or current_total <= 0.0:
        return
    if t.cfg.value_weight_exponent == 0.0 or t.mirroring_pla != C_EMPTY:   # KataGo: none against a mirror
        for i in range(num):
            current_total = _subtract_and_prune(weights, i, current_total, amount_to_subtract, amount_to_prune)
        if current_total != desired_total and current_total > 0.0:
            factor = desired_total / current_total
            for i in range(num):
                weights[i] *= factor
        return
    stdevs = t.scratch + 4 * MAX_EDGES
    for i in range(num):
        if visits[i] == 0:
            continue
        precision = VALUE_WEIGHT_PRECISION_SCALE * sqrt(weights[i])
        stdevs[i] = sqrt(VALUE_WEIGHT_MIN_VARIANCE + 1.0 / precision)
        simple_sum += self_utilities[i] * weights[i]
    simple_value = simple_sum / current_total
    for i in range(num):
        if visits[i] == 0:
            continue
        if weights[i] < amount_to_prune:
            current_total = _subtract_and_prune(weights, i, current_total, amount_to_subtract, amount_to_prune)
            continue
        current_total = _subtract_and_prune(weights, i, current_total, amount_to_subtract, amount_to_prune)
        z = (self_utilities[i] - simple_value) / stdevs[i]
        p = t3_cdf(z) + VALUE_WEIGHT_MIN_PROB
        weights[i] *= pow(p, t.cfg.value_weight_exponent)
        total_new += weights[i]
    if total_new <= 0.0:
        return
    factor = desired_total / total_new
    for i in range(num):
        weights[i] *= factor


# ---- backup ------------------------------------------------------------------------------
cdef void recompute_stats(TreeCore* t, Node* n, bint is_root, int visits_to_add) noexcept nogil:
    """Rebuild n's averages from its children plus its own evaluation (KataGo's recomputeNodeStats)."""
    cdef double* weights = t.scratch
    cdef double* self_utilities = t.scratch + MAX_EDGES
    cdef double* priors = t.scratch + 2 * MAX_EDGES
    cdef int64_t visits_buf[MAX_EDGES]
    cdef int64_t this_node_visits = 1   # own visit plus the counted children's edge visits
    cdef int16_t slot_of[MAX_EDGES]
    cdef int i, num = 0
    cdef const ChildSlot* s
    cdef const NodeStats* cs
    cdef double orig_total = 0.0, total, max_w, subtract = 0.0, prune = 0.0
    cdef double wl = 0.0, nr = 0.0, sm = 0.0, smsq = 0.0, ld = 0.0, ut = 0.0, utsq = 0.0, wsq = 0.0, wsum
    cdef double w, scaling, utility, self_weight, children_utility, svb_weight, svb_delta
    cdef SvbEntry* e
    cdef NodeStats* st = &n.stats
    for i in range(n.num_children):
        s = &n.children[i]
        cs = &s.node.stats
        if cs.visits <= 0 or cs.weight_sum <= 0.0 or s.edge_visits <= 0:
            continue
        weights[num] = child_weight(s)
        self_utilities[num] = cs.utility if n.next_pla == C_WHITE else -cs.utility
        priors[num] = child_prior(t, n, s)
        if priors[num] < 1e-30:
            priors[num] = 1e-30
        visits_buf[num] = cs.visits
        slot_of[num] = <int16_t>i
        orig_total += weights[num]
        this_node_visits += s.edge_visits
        num += 1
    total = orig_total
    if t.cfg.use_noise_pruning and num > 0 and t.mirroring_pla == C_EMPTY:   # not against a mirror (KataGo)
        total = prune_noise_weight(t, num, weights, self_utilities, priors, total)
    if is_root and t.cfg.root_noise_enabled and not t.cfg.use_noise_pruning:
        max_w = 0.0
        for i in range(num):
            if weights[i] > max_w:
                max_w = weights[i]
        subtract = t.cfg.chosen_move_subtract if t.cfg.chosen_move_subtract < max_w * ROOT_PRUNE_MAX_FRACTION else max_w * ROOT_PRUNE_MAX_FRACTION
        prune = t.cfg.chosen_move_prune if t.cfg.chosen_move_prune < max_w * ROOT_PRUNE_MAX_FRACTION else max_w * ROOT_PRUNE_MAX_FRACTION
    downweight_bad_children(t, num, total, total, subtract, prune, weights, self_utilities, visits_buf)

    wsum = total
    for i in range(num):
        cs = &n.children[slot_of[i]].node.stats
        w = weights[i]
        scaling = w / cs.weight_sum
        wl += w * cs.win_loss
        nr += w * cs.no_result
        sm += w * cs.score_mean
        smsq += w * cs.score_mean_sq
        ld += w * cs.lead
        ut += w * cs.utility
        utsq += w * cs.utility_sq
        wsq += scaling * scaling * cs.weight_sq_sum

    # The node's own evaluation, with the subtree value bias learned from similar situations.
    utility = node_direct_utility(t, n)
    if t.cfg.subtree_value_bias_factor != 0.0 and n.svb_entry >= 0:
        e = &t.svb_entries[n.svb_entry]
        if total > 1e-10:
            children_utility = ut / total
            svb_weight = pow(orig_total, t.cfg.subtree_value_bias_weight_exponent)
            svb_delta = (children_utility - utility) * svb_weight
            e.delta_utility_sum += svb_delta - n.svb_last_delta_sum
            e.weight_sum += svb_weight - n.svb_last_weight
            n.svb_last_delta_sum = svb_delta
            n.svb_last_weight = svb_weight
        utility += svb_bias(t, n)   # from the entry as just updated
    self_weight = direct_weight(t, n)
    wl += (n.eval.win - n.eval.loss) * self_weight
    nr += n.eval.no_result * self_weight
    sm += n.eval.score_mean * self_weight
    smsq += n.eval.score_mean_sq * self_weight
    ld += n.eval.lead * self_weight
    ut += utility * self_weight
    utsq += utility * utility * self_weight
    wsq += self_weight * self_weight
    wsum += self_weight

    st.win_loss = wl / wsum
    st.no_result = nr / wsum
    st.score_mean = sm / wsum
    st.score_mean_sq = smsq / wsum
    st.lead = ld / wsum
    st.utility = ut / wsum + pattern_bonus(t, n)   # on the average, not the square (KataGo)
    st.utility_sq = utsq / wsum
    if n != t.root and eval_cache_applies(t, n):
        utility = st.utility
        eval_cache_adjust(t, n.eval_cache_entry, this_node_visits, &st.win_loss, &st.no_result, &st.score_mean,
                          &st.score_mean_sq, &st.lead, &st.utility)
        st.utility_sq += st.utility * st.utility - utility * utility
    st.weight_sq_sum = wsq
    st.weight_sum = wsum
    st.visits += visits_to_add


cdef void recompute_tree(TreeCore* t, Node* n, bint is_root) noexcept nogil:
    """Post-order refresh of every utility (after the dynamic score centre moved), each node once."""
    _recompute_walk(t, n, is_root, begin_walk(t))


cdef void _recompute_walk(TreeCore* t, Node* n, bint is_root, int64_t epoch) noexcept nogil:
    cdef int i
    cdef double u
    if n.walk_mark == epoch or n.on_path > 0:
        return   # done already, or a cycle back onto the walk's path: taken as done (KataGo too)
    n.on_path += 1
    for i in range(n.num_children):
        _recompute_walk(t, n.children[i].node, False, epoch)
    n.on_path -= 1
    n.walk_mark = epoch
    if n.num_children > 0 and n.state == NODE_EXPANDED:
        recompute_stats(t, n, is_root, 0)
    elif n.stats.weight_sum > 0.0:
        u = result_utility(&t.cfg, n.stats.win_loss, n.stats.no_result) + score_utility(&t.cfg, n.stats.score_mean,
                                                                                       n.stats.score_mean_sq)
        u += pattern_bonus(t, n)
        n.stats.utility = u
        n.stats.utility_sq = u * u


cdef void backup(TreeCore* t, LeafSlot* ls) noexcept nogil:
    """The leaf (path end) has its new value: count edge visits up the path and refresh each parent."""
    _backup_path(t, ls, -1)


cdef void mark_batch_backup(LeafSlot* ls, int leaf_index) noexcept nogil:
    """Before a batch's backups: note on each node this leaf's counted path refreshes that it does, so
    that backup_batch refreshes each node once, at the last leaf through it."""
    cdef int i
    cdef Node* parent
    for i in range(ls.depth - 1, -1, -1):
        if not ls.counted[i]:
            return
        parent = ls.path[i]
        parent.batch_last_plus_one = <int16_t>(leaf_index + 1)
        parent.batch_visits += 1


cdef void backup_batch(TreeCore* t, LeafSlot* ls, int leaf_index) noexcept nogil:
    """backup() for leaf leaf_index of a batch marked with mark_batch_backup: edge visits counted and virtual
    losses undone as backup() does, but each parent refreshed only at the batch's last leaf through it,
    with all the batch's playouts through it at once. Its children are final then (a later leaf through
    one would pass through it too), so in a tree the result is backup()'s, leaf after leaf, bit for bit;
    with graph search, a node shared by several paths may see a shared child's earlier state (as a
    parent refreshed before that child's last refresh does in backup())."""
    _backup_path(t, ls, leaf_index)


cdef void _backup_path(TreeCore* t, LeafSlot* ls, int leaf_index) noexcept nogil:
    """Up the leaf's path: edge visits counted, virtual losses undone, parents refreshed -- every one with
    this playout (leaf_index < 0), or each at its batch's last leaf with the batch's playouts."""
    cdef int i
    cdef bint update = True
    cdef Node* parent
    for i in range(ls.depth - 1, -1, -1):
        parent = ls.path[i]
        if update:
            if ls.counted[i]:
                parent.children[ls.slots[i]].edge_visits += 1
                if leaf_index < 0:
                    recompute_stats(t, parent, i == 0, 1)
                elif parent.batch_last_plus_one == leaf_index + 1:
                    recompute_stats(t, parent, i == 0, parent.batch_visits)
                    parent.batch_last_plus_one = 0
                    parent.batch_visits = 0
            else:
                update = False
        ls.path[i + 1].virtual_losses -= 1


cdef void undo_virtual_losses(LeafSlot* ls) noexcept nogil:
    cdef int i
    for i in range(ls.depth):
        ls.path[i + 1].virtual_losses -= 1
