# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""KataGo-style MCTS over C structs (see search_tree.pxd for the vocabulary).

Python drives it one batch at a time through the SearchTree class:
prepare_root_eval / collect (descents, nogil) -> evaluate the batch -> apply
(store evals and back up, nogil). Every per-node step (selection, expansion,
backup, virtual loss) happens here without the GIL.
"""
from libc.stdint cimport int64_t, int16_t, int32_t, uint64_t, uint16_t
from libc.stdlib cimport malloc, calloc, realloc, free, qsort
from libc.string cimport memset, memcpy
from libc.math cimport sqrt, log, pow, fabs, exp

import numpy as np

from cython_ext.board cimport (
    Board, Loc, Color, Hash128, C_EMPTY, C_BLACK, C_WHITE, C_WALL, MAX_ARR_SIZE, MAX_PLAY_SIZE, NULL_LOC,
    PASS_LOC, loc_of, loc_x, loc_y, opp_of, hash_xor, board_num_liberties, board_would_be_capture,
)
from cython_ext.rules cimport KO_SIMPLE, SCORING_AREA, SCORING_TERRITORY
from cython_ext.history cimport (
    History, GameState, history_copy, history_free, history_is_legal, history_is_legal_tolerant,
    history_make_move_assume_legal, history_pass_would_end_phase, history_pass_would_end_game,
    history_should_suppress_end_game_from_friendly_pass, history_situation_ko_hash, history_recent_board,
    history_white_komi_adjustment_for_draws, history_suicide_legal_for_pass_alive,
)
from cython_ext.features cimport (
    FeatureParams, NUM_SPATIAL_FEATURES_V7, NUM_GLOBAL_FEATURES_V7, default_feature_params,
    fill_features_v7, fill_legal_mask,
)
from cython_ext.area cimport area_calculate, area_is_non_pass_alive_self_connection
from cython_ext.search_values cimport (
    SearchConfig, result_utility, score_utility, utility_radius, eval_weight, terminal_weight, t3_cdf,
    score_utility_diff,
)
from cython_ext.playout cimport Rng, rng_seed, rng_next, rng_uniform, rng_gaussian, playout_area_score
from cython_ext.nogo cimport nogo_is_legal, nogo_legal_moves, nogo_has_legal_move, nogo_rollout


# ---- constants -----------------------------------------------------------------------
# Tiny constant in the PUCT numerator so that exploration works before any visit (KataGo's).
cdef double TOTAL_CHILD_WEIGHT_PUCT_OFFSET = 0.01
cdef double POLICY_ILLEGAL_SELECTION_VALUE = -1e50
cdef double FUTILE_VISITS_PRUNE_VALUE = -1e40
cdef double FORCED_EXPLORE_SELECTION_VALUE = 1e20
# Virtual losses weigh at least as much as this much child weight in the blend.
cdef double MIN_CHILD_WEIGHT_FOR_VIRTUAL_LOSS = 0.25
# Value weighting: a child's stdev estimate from its weight, KataGo's constants.
cdef double VALUE_WEIGHT_PRECISION_SCALE = 1.5
cdef double VALUE_WEIGHT_MIN_VARIANCE = 0.00000001
cdef double VALUE_WEIGHT_MIN_PROB = 0.0001
# Noise pruning: a child may take this multiple of its policy share before being trimmed.
cdef double NOISE_PRUNE_LENIENCY = 2.0
# Root subtract/prune are capped at this fraction of the heaviest child.
cdef double ROOT_PRUNE_MAX_FRACTION = 1.0 / 64.0
# Subtree value bias entries below this weight are ignored.
cdef double SVB_MIN_WEIGHT = 0.001
# Ending-bonus ownership thresholds (getEndingWhiteScoreBonus).
cdef double OWNERSHIP_EXTREME = 0.95
cdef double OWNERSHIP_TAIL = 0.05
cdef double TERRITORY_PASS_BONUS_FRACTION = 2.0 / 3.0
cdef double BUTTON_PASS_BONUS_FRACTION = 0.5
# Number of leading moves fed as history features (cache key must cover them).
cdef int FEATURE_HISTORY_MOVES = 5
# Local pattern used by the subtree value bias table: 5x5 around the move.
cdef int SVB_PATTERN_RADIUS = 2
cdef int SVB_PATTERN_LEN = 5
cdef int SVB_INITIAL_INDEX_SIZE = 1024
cdef uint64_t SVB_ZOBRIST_SEED = 0x5eed5eed12345678ULL
cdef uint64_t CACHE_KEY_SEED = 0xc0ffee1234abcdefULL


# ---- Zobrist tables for the subtree value bias and the NN cache key ----------------------
cdef Hash128 _svb_move_locs[MAX_ARR_SIZE][2]
cdef Hash128 _svb_ko_ban[MAX_ARR_SIZE]
cdef Hash128 _svb_pattern[3][25]
cdef Hash128 _svb_atari[25]
cdef Hash128 _svb_pla[3]
cdef Hash128 _key_move[6][MAX_ARR_SIZE][3]
cdef Hash128 _key_flags[16]

cdef inline Hash128 _rand_hash(Rng* r) noexcept nogil:
    cdef Hash128 h
    h.h0 = rng_next(r)
    h.h1 = rng_next(r)
    return h

cdef void _init_zobrist() noexcept nogil:
    cdef Rng r
    cdef int i, j, k
    rng_seed(&r, SVB_ZOBRIST_SEED)
    for i in range(MAX_ARR_SIZE):
        _svb_move_locs[i][0] = _rand_hash(&r)
        _svb_move_locs[i][1] = _rand_hash(&r)
        _svb_ko_ban[i] = _rand_hash(&r)
    for i in range(3):
        _svb_pla[i] = _rand_hash(&r)
        for j in range(25):
            _svb_pattern[i][j] = _rand_hash(&r)
    for j in range(25):
        _svb_atari[j] = _rand_hash(&r)
    rng_seed(&r, CACHE_KEY_SEED)
    for i in range(6):
        for j in range(MAX_ARR_SIZE):
            for k in range(3):
                _key_move[i][j][k] = _rand_hash(&r)
    for i in range(16):
        _key_flags[i] = _rand_hash(&r)

_init_zobrist()


# ---- nodes -------------------------------------------------------------------------------
cdef Node* node_new(Color next_pla) noexcept nogil:
    cdef Node* n = <Node*>calloc(1, sizeof(Node))
    n.next_pla = next_pla
    n.svb_entry = -1
    n.age = -1
    return n


cdef void svb_release(TreeCore* t, Node* n) noexcept nogil:
    """Take back most of a dying node's contribution to its table entry (KataGo's removeSubtreeValueBias)."""
    cdef SvbEntry* e
    if n.svb_entry < 0:
        return
    e = &t.svb_entries[n.svb_entry]
    e.delta_utility_sum -= n.svb_last_delta_sum * t.cfg.subtree_value_bias_free_prop
    e.weight_sum -= n.svb_last_weight * t.cfg.subtree_value_bias_free_prop
    e.refs -= 1
    n.svb_entry = -1


cdef void node_free_tree(TreeCore* t, Node* n) noexcept nogil:
    cdef int i
    if n == NULL:
        return
    for i in range(n.num_children):
        node_free_tree(t, n.children[i].node)
    svb_release(t, n)
    free(n.edges)
    free(n.children)
    free(n.ownership)
    free(n.human_priors)
    free(n)


cdef int node_add_child(Node* n, int edge, Node* child) noexcept nogil:
    cdef int slot
    if n.num_children == n.children_capacity:
        n.children_capacity = 4 if n.children_capacity == 0 else n.children_capacity * 2
        n.children = <ChildSlot*>realloc(n.children, n.children_capacity * sizeof(ChildSlot))
    slot = n.num_children
    n.children[slot].node = child
    n.children[slot].edge_visits = 0
    n.children[slot].move = n.edges[edge].move
    n.children[slot].edge = <int16_t>edge
    n.edges[edge].slot = <int16_t>slot
    n.num_children += 1
    return slot


cdef int _edge_cmp(const void* a, const void* b) noexcept nogil:
    cdef const Edge* ea = <const Edge*>a
    cdef const Edge* eb = <const Edge*>b
    cdef int ka, kb
    if ea.prior > eb.prior:
        return -1
    if ea.prior < eb.prior:
        return 1
    # Ties in board order with pass last, as KataGo scans policy positions.
    ka = 100000 if ea.move == PASS_LOC else ea.move
    kb = 100000 if eb.move == PASS_LOC else eb.move
    return ka - kb


cdef void node_set_edges(Node* n, const Loc* moves, const float* priors, int count) noexcept nogil:
    """Install the move list (sorted by prior), keeping existing children attached to their moves."""
    cdef int i, e, slot
    cdef int16_t edge_of_loc[MAX_ARR_SIZE]
    free(n.edges)
    free(n.human_priors)   # aligned with the old edges; store_human_priors sets them again
    n.human_priors = NULL
    n.edges = <Edge*>malloc((count if count > 0 else 1) * sizeof(Edge))
    for i in range(count):
        n.edges[i].move = moves[i]
        n.edges[i].prior = priors[i]
        n.edges[i].slot = -1
    qsort(n.edges, count, sizeof(Edge), _edge_cmp)
    n.num_edges = count
    n.next_new_edge = 0
    for i in range(MAX_ARR_SIZE):
        edge_of_loc[i] = -1
    for e in range(count):
        edge_of_loc[n.edges[e].move] = <int16_t>e
    for slot in range(n.num_children):
        e = edge_of_loc[n.children[slot].move]
        n.children[slot].edge = <int16_t>e
        if e >= 0:
            n.edges[e].slot = <int16_t>slot


# ---- subtree value bias table -------------------------------------------------------------
cdef Hash128 _svb_pattern_hash(const Board* b, Loc loc, Color pla) noexcept nogil:
    cdef Hash128 h = _svb_pla[pla]
    cdef int x, y, dx, dy, dx_min, dx_max, dy_min, dy_max, cell
    cdef Loc l2
    cdef Color c
    if loc == PASS_LOC or loc == NULL_LOC:
        return h
    x = loc_x(loc, b.x_size)
    y = loc_y(loc, b.x_size)
    dx_min = -SVB_PATTERN_RADIUS if x >= SVB_PATTERN_RADIUS else -x
    dx_max = SVB_PATTERN_RADIUS if x < b.x_size - SVB_PATTERN_RADIUS else b.x_size - 1 - x
    dy_min = -SVB_PATTERN_RADIUS if y >= SVB_PATTERN_RADIUS else -y
    dy_max = SVB_PATTERN_RADIUS if y < b.y_size - SVB_PATTERN_RADIUS else b.y_size - 1 - y
    for dy in range(dy_min, dy_max + 1):
        for dx in range(dx_min, dx_max + 1):
            l2 = <Loc>(loc + dx + dy * (b.x_size + 1))
            cell = (dy + SVB_PATTERN_RADIUS) * SVB_PATTERN_LEN + dx + SVB_PATTERN_RADIUS
            c = b.colors[l2]
            h = hash_xor(h, _svb_pattern[c][cell])
            if (c == C_BLACK or c == C_WHITE) and board_num_liberties(b, l2) == 1:
                h = hash_xor(h, _svb_atari[cell])
    return h


cdef void _svb_rebuild_index(TreeCore* t, int size) noexcept nogil:
    cdef int i, pos, mask = size - 1
    free(t.svb_index)
    t.svb_index = <int32_t*>calloc(size, sizeof(int32_t))
    t.svb_index_size = size
    for i in range(t.svb_count):
        pos = <int>(t.svb_entries[i].key.h0 & <uint64_t>mask)
        while t.svb_index[pos] != 0:
            pos = (pos + 1) & mask
        t.svb_index[pos] = i + 1


cdef int svb_get(TreeCore* t, Hash128 key) noexcept nogil:
    cdef int mask, pos, idx
    if t.svb_index == NULL or (t.svb_count + 1) * 2 > t.svb_index_size:
        _svb_rebuild_index(t, SVB_INITIAL_INDEX_SIZE if t.svb_index_size == 0 else t.svb_index_size * 2)
    mask = t.svb_index_size - 1
    pos = <int>(key.h0 & <uint64_t>mask)
    while t.svb_index[pos] != 0:
        idx = t.svb_index[pos] - 1
        if t.svb_entries[idx].key.h0 == key.h0 and t.svb_entries[idx].key.h1 == key.h1:
            t.svb_entries[idx].refs += 1
            return idx
        pos = (pos + 1) & mask
    if t.svb_count == t.svb_capacity:
        t.svb_capacity = 1024 if t.svb_capacity == 0 else t.svb_capacity * 2
        t.svb_entries = <SvbEntry*>realloc(t.svb_entries, t.svb_capacity * sizeof(SvbEntry))
    idx = t.svb_count
    t.svb_count += 1
    t.svb_entries[idx].key = key
    t.svb_entries[idx].delta_utility_sum = 0.0
    t.svb_entries[idx].weight_sum = 0.0
    t.svb_entries[idx].refs = 1
    t.svb_index[pos] = idx + 1
    return idx


cdef void svb_reset(TreeCore* t) noexcept nogil:
    free(t.svb_entries)
    free(t.svb_index)
    t.svb_entries = NULL
    t.svb_index = NULL
    t.svb_count = t.svb_capacity = t.svb_index_size = 0


cdef void svb_clear_unused(TreeCore* t) noexcept nogil:
    """Entries no node refers to start again from zero (KataGo drops them)."""
    cdef int i
    for i in range(t.svb_count):
        if t.svb_entries[i].refs <= 0:
            t.svb_entries[i].delta_utility_sum = 0.0
            t.svb_entries[i].weight_sum = 0.0
            t.svb_entries[i].refs = 0


# ---- values --------------------------------------------------------------------------------
cdef double node_direct_utility(const TreeCore* t, const Node* n) noexcept nogil:
    return (result_utility(&t.cfg, n.eval.win - n.eval.loss, n.eval.no_result)
            + score_utility(&t.cfg, n.eval.score_mean, n.eval.score_mean_sq))


cdef inline double svb_bias(const TreeCore* t, const Node* n) noexcept nogil:
    cdef const SvbEntry* e
    if t.cfg.subtree_value_bias_factor == 0.0 or n.svb_entry < 0:
        return 0.0
    e = &t.svb_entries[n.svb_entry]
    if e.weight_sum > SVB_MIN_WEIGHT:
        return t.cfg.subtree_value_bias_factor * e.delta_utility_sum / e.weight_sum
    return 0.0


cdef void add_leaf_value(TreeCore* t, Node* n, double win_loss, double no_result, double score_mean,
                         double score_mean_sq, double lead, double weight, bint is_terminal,
                         bint assume_no_existing_weight) noexcept nogil:
    cdef NodeStats* s = &n.stats
    cdef double utility = result_utility(&t.cfg, win_loss, no_result) + score_utility(&t.cfg, score_mean, score_mean_sq)
    cdef double old_w, new_w
    if not is_terminal:
        utility += svb_bias(t, n)
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


cdef inline double direct_weight(const TreeCore* t, const Node* n) noexcept nogil:
    # Recomputed on use, as KataGo does: it depends on the current dynamic score centre.
    return eval_weight(&t.cfg, n.eval.score_mean, n.eval.st_wl_error, n.eval.st_score_error)


cdef void add_direct_eval_as_leaf(TreeCore* t, Node* n, bint assume_no_existing_weight) noexcept nogil:
    add_leaf_value(t, n, n.eval.win - n.eval.loss, n.eval.no_result, n.eval.score_mean, n.eval.score_mean_sq,
                   n.eval.lead, direct_weight(t, n), False, assume_no_existing_weight)


cdef void add_terminal_value(TreeCore* t, Node* n) noexcept nogil:
    add_leaf_value(t, n, n.term_win_loss, n.term_no_result, n.term_score, n.term_score_sq, n.term_score,
                   terminal_weight(&t.cfg), True, False)


cdef double child_weight(const ChildSlot* s) noexcept nogil:
    cdef int64_t v = s.node.stats.visits
    return s.node.stats.weight_sum * (<double>s.edge_visits / <double>(v if v > 1 else 1))


cdef inline double child_weight_sq(const ChildSlot* s) noexcept nogil:
    cdef int64_t v = s.node.stats.visits
    return s.node.stats.weight_sq_sum * (<double>s.edge_visits / <double>(v if v > 1 else 1))


cdef double root_prior(const TreeCore* t, const Node* n, int edge) noexcept nogil:
    if n == t.root and t.root_priors != NULL:
        return t.root_priors[edge]
    return n.edges[edge].prior


cdef double ending_bonus(const TreeCore* t, const Node* parent, Loc move) noexcept nogil:
    if parent != t.root or move == NULL_LOC:
        return 0.0
    return t.root_ending_bonus[move]


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
    if t.cfg.value_weight_exponent == 0.0:
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
        priors[num] = root_prior(t, n, s.edge)
        if priors[num] < 1e-30:
            priors[num] = 1e-30
        visits_buf[num] = cs.visits
        slot_of[num] = <int16_t>i
        orig_total += weights[num]
        num += 1
    total = orig_total
    if t.cfg.use_noise_pruning and num > 0:
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
        if e.weight_sum > SVB_MIN_WEIGHT:
            utility += t.cfg.subtree_value_bias_factor * e.delta_utility_sum / e.weight_sum
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
    st.utility = ut / wsum
    st.utility_sq = utsq / wsum
    st.weight_sq_sum = wsq
    st.weight_sum = wsum
    st.visits += visits_to_add


cdef void recompute_tree(TreeCore* t, Node* n, bint is_root) noexcept nogil:
    """Post-order refresh of every utility (after the dynamic score centre moved)."""
    cdef int i
    cdef double u
    for i in range(n.num_children):
        recompute_tree(t, n.children[i].node, False)
    if n.num_children > 0 and n.state == NODE_EXPANDED:
        recompute_stats(t, n, is_root, 0)
    elif n.stats.weight_sum > 0.0:
        u = result_utility(&t.cfg, n.stats.win_loss, n.stats.no_result) + score_utility(&t.cfg, n.stats.score_mean,
                                                                                       n.stats.score_mean_sq)
        n.stats.utility = u
        n.stats.utility_sq = u * u


# ---- selection -------------------------------------------------------------------------------
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


cdef inline bint _avoided(const TreeCore* t, Color pla, Loc move, int depth) noexcept nogil:
    return t.has_avoid[pla - 1] and depth < t.avoid_until[pla - 1][move]


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
    cdef bint has_pass_child = False, has_non_pass_child = False
    cdef bint scan_all = is_root or t.has_avoid[pla - 1]
    # With a human-SL net, some visits pick by the human policy; weightless ones count no edge visit
    # and so weigh children by their own weight instead of their edge's (KataGo).
    cdef int human = human_pick(t, n, is_root)
    cdef bint weightless = human == 2
    cdef bint root_hacks
    out_count_edge[0] = not weightless
    out_count_playout[0] = True
    root_hacks = is_root and not weightless
    if human:
        scan_all = True   # unexplored edges are ordered by the main priors, not the human ones
    depth = h.num_moves - t.root_hist.num_moves

    for i in range(n.num_children):
        s = &n.children[i]
        p = selection_prior(t, n, s.edge, human)
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
        p = selection_prior(t, n, s.edge, human)
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
            if t.cfg.wide_root_noise > 0.0 and p >= 0.0:
                _wide_root_noise(t, &u, &p, pla)
        value = explore_selection_value(scaling, p, w, u, pla)
        if value > best_value:
            best_value = value
            best_slot = i
            best_edge = s.edge

    # The best unexplored move: the highest prior (the first unexplored edge unless the root
    # or avoided moves make the order or eligibility differ).
    if scan_all:
        for e in range(n.num_edges):
            if n.edges[e].slot >= 0:
                continue
            if is_root and not t.root_allowed[n.edges[e].move]:
                continue
            if _avoided(t, pla, n.edges[e].move, depth):
                continue
            p = selection_prior(t, n, e, human)
            if p > best_new_prior:
                best_new_prior = p
                best_new_edge = e
    else:
        while n.next_new_edge < n.num_edges and n.edges[n.next_new_edge].slot >= 0:
            n.next_new_edge += 1
        if n.next_new_edge < n.num_edges:
            best_new_edge = n.next_new_edge
            best_new_prior = n.edges[best_new_edge].prior
    if best_new_edge >= 0:
        u = fpu
        p = best_new_prior
        value = POLICY_ILLEGAL_SELECTION_VALUE
        if root_hacks and t.cfg.futile_visits_threshold > 0.0 and (
                t.upper_bound_visits_left < t.cfg.futile_visits_threshold * max_w / parent_weight_per_visit):
            value = FUTILE_VISITS_PRUNE_VALUE
        else:
            if root_hacks and t.cfg.wide_root_noise > 0.0:
                _wide_root_noise(t, &u, &p, pla)
            value = explore_selection_value(scaling, p, 0.0, u, pla)
        if value > best_value:
            best_value = value
            best_slot = -1
            best_edge = best_new_edge

    # Passing hack: when a pass would end the phase, make sure both pass and a non-pass move get looked at.
    if (total_edge_visits >= 2 and t.cfg.enable_more_passing_hacks and not t.nogo
            and not t.has_avoid[pla - 1] and best_edge >= 0
            and history_pass_would_end_phase(h, pla)):
        if not has_pass_child and n.edges[best_edge].move != PASS_LOC:
            for e in range(n.num_edges):
                if n.edges[e].move == PASS_LOC and n.edges[e].slot < 0:
                    best_slot = -1
                    best_edge = e
                    out_count_edge[0] = False
                    out_count_playout[0] = False
                    break
        elif (not has_non_pass_child and n.edges[best_edge].move == PASS_LOC and best_new_edge >= 0
              and n.edges[best_new_edge].move != PASS_LOC):
            best_slot = -1
            best_edge = best_new_edge
            out_count_edge[0] = False
            out_count_playout[0] = False

    if best_edge < 0:
        return False
    out_slot[0] = best_slot
    out_edge[0] = best_edge
    return True


# ---- descents ---------------------------------------------------------------------------------
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


cdef void backup(TreeCore* t, LeafSlot* ls) noexcept nogil:
    """The leaf (path end) has its new value: count edge visits up the path and refresh each parent."""
    cdef int i
    cdef bint update = True
    cdef Node* parent
    for i in range(ls.depth - 1, -1, -1):
        parent = ls.path[i]
        if update:
            if ls.counted[i]:
                parent.children[ls.slots[i]].edge_visits += 1
                recompute_stats(t, parent, i == 0, 1)
            else:
                update = False
        ls.path[i + 1].virtual_losses -= 1


cdef void undo_virtual_losses(LeafSlot* ls) noexcept nogil:
    cdef int i
    for i in range(ls.depth):
        ls.path[i + 1].virtual_losses -= 1


cdef void set_terminal_result(TreeCore* t, Node* n, const History* h) noexcept nogil:
    cdef double dew = t.cfg.draw_equivalent_wins_for_white
    cdef double score, lower, upper
    if h.is_no_result:
        n.term_win_loss = 0.0
        n.term_no_result = 1.0
        n.term_score = 0.0
        n.term_score_sq = 0.0
        return
    if h.winner == C_WHITE:
        n.term_win_loss = 1.0
    elif h.winner == C_BLACK:
        n.term_win_loss = -1.0
    else:
        n.term_win_loss = 2.0 * dew - 1.0
    n.term_no_result = 0.0
    score = h.final_white_minus_black_score
    n.term_score = score + history_white_komi_adjustment_for_draws(h, dew)
    if <double>(<int>score) == score:
        lower = score - 0.5
        upper = score + 0.5
        n.term_score_sq = lower * lower + (upper * upper - lower * lower) * dew
    else:
        n.term_score_sq = score * score


cdef void set_nogo_terminal(Node* n, Color winner) noexcept nogil:
    n.is_terminal = True
    n.term_win_loss = 1.0 if winner == C_WHITE else -1.0
    n.term_no_result = 0.0
    n.term_score = 0.0
    n.term_score_sq = 0.0


cdef Node* create_child(TreeCore* t, Node* n, int edge, bint is_root, History* h) noexcept nogil:
    """Play the edge's move on h and attach a new child node for the resulting position."""
    cdef Color pla = n.next_pla
    cdef Loc move = n.edges[edge].move
    cdef bint friendly_pass_suppression = False, force_non_terminal
    cdef Node* child
    cdef Loc parent_prev
    cdef Hash128 key
    if move == PASS_LOC and not t.nogo:
        friendly_pass_suppression = history_should_suppress_end_game_from_friendly_pass(h, pla)
    history_make_move_assume_legal(h, move, pla, False)
    child = node_new(opp_of(pla))
    if t.nogo:
        if not nogo_has_legal_move(&h.board, opp_of(pla)):
            set_nogo_terminal(child, pla)
    else:
        force_non_terminal = move == PASS_LOC and h.is_game_finished and (
            (t.cfg.conservative_pass and is_root) or friendly_pass_suppression)
        child.force_non_terminal = force_non_terminal
        if h.is_game_finished and not force_non_terminal:
            child.is_terminal = True
            set_terminal_result(t, child, h)
    if t.cfg.subtree_value_bias_factor != 0.0 and h.num_moves >= 2 and move != PASS_LOC:
        parent_prev = h.moves[h.num_moves - 2].loc
        if parent_prev != NULL_LOC:
            key = hash_xor(_svb_move_locs[parent_prev][0], _svb_move_locs[move][1])
            key = hash_xor(key, _svb_pattern_hash(history_recent_board(h, 1), move, pla))
            if history_recent_board(h, 1).ko_loc != NULL_LOC:
                key = hash_xor(key, _svb_ko_ban[history_recent_board(h, 1).ko_loc])
            child.svb_entry = svb_get(t, key)
    node_add_child(n, edge, child)
    return child


cdef void fill_leaf_features(TreeCore* t, int slot, const History* h, bint is_root) noexcept nogil:
    cdef FeatureParams fp = t.feature_params
    cdef Color pla = h.presumed_next_pla
    cdef Color pda_pla
    cdef int plane = t.area
    cdef Hash128 key
    cdef int i, shown, idx
    cdef Loc mv
    fp.conservative_pass_and_is_root = t.cfg.conservative_pass and is_root
    if t.playout_doubling_advantage != 0.0:
        pda_pla = t.playout_doubling_advantage_pla if t.playout_doubling_advantage_pla != C_EMPTY else t.pla_search_is_for
        fp.playout_doubling_advantage = -t.playout_doubling_advantage if opp_of(pla) == pda_pla else t.playout_doubling_advantage
    if t.ignore_all_history:
        fp.max_history = 0
    elif t.ignore_pre_root_history:
        fp.max_history = 0 if is_root else h.num_moves - t.root_hist.num_moves
    fill_features_v7(h, pla, &fp, t.x_size, t.y_size,
                     t.spatial + slot * NUM_SPATIAL_FEATURES_V7 * plane,
                     t.global_features + slot * NUM_GLOBAL_FEATURES_V7)
    fill_legal_mask(h, pla, t.x_size, t.y_size, t.legal + slot * (plane + 1))
    # Cache key: the situation plus whatever else the features show (recent moves, pass state, flags).
    key = history_situation_ko_hash(h, pla)
    shown = FEATURE_HISTORY_MOVES if FEATURE_HISTORY_MOVES < fp.max_history else fp.max_history
    if shown > h.num_approx_valid_turns_this_phase:
        shown = h.num_approx_valid_turns_this_phase
    for i in range(shown):
        idx = h.num_moves - 1 - i
        if idx < 0:
            break
        mv = h.moves[idx].loc
        key = hash_xor(key, _key_move[i][mv][h.moves[idx].pla])
    key = hash_xor(key, _key_flags[h.consecutive_ending_passes if h.consecutive_ending_passes < 4 else 3])
    if fp.conservative_pass_and_is_root:
        key = hash_xor(key, _key_flags[4])
    if h.is_game_finished:
        key = hash_xor(key, _key_flags[5])
    if h.is_past_normal_phase_end:
        key = hash_xor(key, _key_flags[6])
    if fp.max_history == 0:
        key = hash_xor(key, _key_flags[7])
    if fp.playout_doubling_advantage != 0.0:
        key.h0 ^= <uint64_t>(<int64_t>(fp.playout_doubling_advantage * 1000.0)) * 0x9E3779B97F4A7C15ULL
    t.cache_keys[2 * slot] = key.h0
    t.cache_keys[2 * slot + 1] = key.h1
    t.leaf_is_root[slot] = is_root
    t.leaf_white[slot] = pla == C_WHITE


cdef void rollout_evaluate(TreeCore* t, Node* n, const History* h, bint want_ownership) noexcept nogil:
    """Evaluate a node with random playouts: uniform priors over legal moves, values from final area counts."""
    cdef Color pla = n.next_pla
    cdef Loc moves[MAX_EDGES]
    cdef float priors[MAX_EDGES]
    cdef Color area[MAX_ARR_SIZE]
    cdef Board b
    cdef int count = 0, x, y, k, runs = t.rollouts_per_leaf if t.rollouts_per_leaf > 0 else 1
    cdef Loc loc
    cdef double wl = 0.0, sm = 0.0, smsq = 0.0, final, bonus, dew = t.cfg.draw_equivalent_wins_for_white
    cdef Color winner
    if t.nogo:
        count = nogo_legal_moves(&h.board, pla, moves)
    else:
        for y in range(t.y_size):
            for x in range(t.x_size):
                loc = loc_of(x, y, t.x_size)
                if history_is_legal(h, loc, pla):
                    moves[count] = loc
                    count += 1
        moves[count] = PASS_LOC
        count += 1
    for k in range(count):
        priors[k] = <float>(1.0 / count)
    node_set_edges(n, moves, priors, count)
    if want_ownership and n.ownership == NULL:
        n.ownership = <float*>calloc(t.area, sizeof(float))
    elif n.ownership != NULL:
        memset(n.ownership, 0, t.area * sizeof(float))
    bonus = h.white_bonus_score + h.white_handicap_bonus_score + h.rules.komi
    for k in range(runs):
        memcpy(&b, &h.board, sizeof(Board))
        if t.nogo:
            winner = nogo_rollout(&b, pla, &t.rng)
            wl += 1.0 if winner == C_WHITE else -1.0
        else:
            final = playout_area_score(&b, pla, False, &t.rng, area) + bonus
            if final > 0:
                wl += 1.0
            elif final < 0:
                wl -= 1.0
            else:
                wl += 2.0 * dew - 1.0
            sm += final
            smsq += final * final
            if n.ownership != NULL:
                for y in range(t.y_size):
                    for x in range(t.x_size):
                        loc = loc_of(x, y, t.x_size)
                        if area[loc] == C_WHITE:
                            n.ownership[y * t.x_size + x] += 1.0
                        elif area[loc] == C_BLACK:
                            n.ownership[y * t.x_size + x] -= 1.0
    if n.ownership != NULL:
        for k in range(t.area):
            n.ownership[k] /= runs
    wl /= runs
    n.eval.win = 0.5 * (1.0 + wl)
    n.eval.loss = 0.5 * (1.0 - wl)
    n.eval.no_result = 0.0
    n.eval.score_mean = sm / runs
    n.eval.score_mean_sq = smsq / runs
    n.eval.lead = sm / runs
    n.eval.var_time_left = -1.0
    n.eval.st_wl_error = -1.0
    n.eval.st_score_error = -1.0
    n.eval.weight = 1.0
    n.state = NODE_EXPANDED
    n.age = t.search_age


cdef int descend(TreeCore* t, History* h, LeafSlot* ls) noexcept nogil:
    """One descent from the root (h must be a fresh copy of the root history); see the DESCENT_* outcomes."""
    cdef Node* n = t.root
    cdef Node* child
    cdef int slot, edge
    cdef bint is_root, count_edge, count_playout, counted_playout = True
    leaf_slot_start(ls, n)
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
        if not count_playout:
            counted_playout = False
        elif not count_edge:
            ls.stops_below_root = True
        if slot < 0:
            child = create_child(t, n, edge, is_root, h)
            slot = n.edges[edge].slot
        else:
            child = n.children[slot].node
            history_make_move_assume_legal(h, n.children[slot].move, n.next_pla, False)
        child.virtual_losses += 1
        leaf_slot_push(ls, child, slot, count_edge)
        n = child


cdef int collect_batch(TreeCore* t, int max_leaves, int max_playouts, int max_descents, int* playouts_done) noexcept nogil:
    """Descend until max_leaves leaves wait for evaluation, max_playouts playouts finished, or max_descents tried."""
    cdef History h
    cdef int descents = 0, outcome, leaf_index
    cdef LeafSlot* ls
    playouts_done[0] = 0
    t.num_leaves = 0
    history_copy(&h, &t.root_hist)
    while t.num_leaves < max_leaves and playouts_done[0] + t.num_leaves < max_playouts and descents < max_descents:
        descents += 1
        ls = &t.leaves[t.num_leaves]
        outcome = descend(t, &h, ls)
        if outcome == DESCENT_LEAF:
            fill_leaf_features(t, t.num_leaves, &h, ls.path[ls.depth] == t.root)
            t.num_leaves += 1
        elif outcome == DESCENT_DONE:
            playouts_done[0] += 1
            if ls.stops_below_root:
                t.playouts_below_root += 1
        history_free(&h)
        history_copy(&h, &t.root_hist)
    history_free(&h)
    return t.num_leaves


cdef void store_eval(TreeCore* t, Node* n, const DirectEval* ev, const float* policy, float policy_pass,
                     const unsigned char* legal, const float* ownership, bint keep_ownership) noexcept nogil:
    # legal: the leaf's legal mask [area + 1]. A prior counts only on a legal move: an evaluator that
    # does not mask illegal moves (a test fake, a custom net) must not create children on occupied points.
    cdef Loc moves[MAX_EDGES]
    cdef float priors[MAX_EDGES]
    cdef int count = 0, x, y, pos
    for y in range(t.y_size):
        for x in range(t.x_size):
            pos = y * t.x_size + x
            if policy[pos] >= 0.0 and legal[pos]:
                moves[count] = loc_of(x, y, t.x_size)
                priors[count] = policy[pos]
                count += 1
    if policy_pass >= 0.0 and legal[t.area] and not t.nogo:
        moves[count] = PASS_LOC
        priors[count] = policy_pass
        count += 1
    node_set_edges(n, moves, priors, count)
    n.eval = ev[0]
    n.eval.weight = eval_weight(&t.cfg, ev.score_mean, ev.st_wl_error, ev.st_score_error)
    if n == t.root:
        # Children whose move lost its edge are dropped by filter_root_children (begin_search).
        free(t.root_priors)
        t.root_priors = NULL
    if keep_ownership and ownership != NULL:
        if n.ownership == NULL:
            n.ownership = <float*>malloc(t.area * sizeof(float))
        memcpy(n.ownership, ownership, t.area * sizeof(float))
    n.state = NODE_EXPANDED
    n.age = t.search_age


cdef void store_human_priors(TreeCore* t, Node* n, const float* policy, float policy_pass) noexcept nogil:
    """The human-SL net's policy for n's edges (n must be expanded); -1 where it has none."""
    cdef int e, pos
    cdef Loc move
    if n.human_priors == NULL:
        n.human_priors = <float*>malloc((n.num_edges if n.num_edges > 0 else 1) * sizeof(float))
    for e in range(n.num_edges):
        move = n.edges[e].move
        if move == PASS_LOC:
            n.human_priors[e] = policy_pass
        else:
            pos = loc_y(move, t.x_size) * t.x_size + loc_x(move, t.x_size)
            n.human_priors[e] = policy[pos]


# ---- root bookkeeping ------------------------------------------------------------------------
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


cdef int sym_loc(int x, int y, int x_size, int y_size, int symmetry) noexcept nogil:
    """KataGo's symmetry of a point: flip y (bit 1), flip x (bit 2), then transpose (bit 4)."""
    cdef int tmp
    if symmetry & 2:
        x = x_size - x - 1
    if symmetry & 1:
        y = y_size - y - 1
    if symmetry & 4:
        tmp = x
        x = y
        y = tmp
        return loc_of(x, y, y_size)
    return loc_of(x, y, x_size)


cdef int root_board_symmetries(const TreeCore* t, int* out) noexcept nogil:
    """Symmetries (including 0) mapping the root position onto itself, none if a ko ban breaks symmetry."""
    cdef const History* h = &t.root_hist
    cdef const Board* b = &h.board
    cdef int n = 1, s, x, y, upper = 8 if t.x_size == t.y_size else 4
    cdef Loc loc, sl
    cdef bint same
    out[0] = 0
    if b.ko_loc != NULL_LOC:
        return 1
    for y in range(t.y_size):
        for x in range(t.x_size):
            if h.super_ko_banned[loc_of(x, y, t.x_size)]:
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
            r.edges[r.children[kept].edge].slot = <int16_t>kept
            visits += r.children[kept].edge_visits
            kept += 1
        else:
            if r.children[i].edge >= 0:
                r.edges[r.children[i].edge].slot = -1
            node_free_tree(t, r.children[i].node)
            any_removed = True
    r.num_children = kept
    r.next_new_edge = 0
    if any_removed and r.state == NODE_EXPANDED:
        r.stats.visits = visits
        recompute_stats(t, r, True, 0)


# ---- Python boundary ------------------------------------------------------------------------
cdef class SearchTree:
    """One search tree with its batch buffers. Not thread-safe: one caller at a time (the Searcher locks).

    Typical cycle: set_root(state) -> prepare_root_eval() / evaluate / apply() when the root
    needs it -> begin_search() -> repeat collect() / evaluate / apply() -> results (search_results).
    """

    def __cinit__(self, int x_size, int y_size, int max_batch=16):
        cdef int i
        memset(&self.t, 0, sizeof(TreeCore))
        if not (2 <= x_size <= 19 and 2 <= y_size <= 19):
            raise ValueError("board size must be 2..19 per side")
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self.t.x_size = x_size
        self.t.y_size = y_size
        self.t.area = x_size * y_size
        self.t.max_batch = max_batch
        self.t.rollouts_per_leaf = 1
        self.t.leaves = <LeafSlot*>calloc(max_batch, sizeof(LeafSlot))
        self.t.scratch = <double*>malloc(5 * MAX_EDGES * sizeof(double))
        self._spatial = np.zeros((max_batch, NUM_SPATIAL_FEATURES_V7, y_size, x_size), np.float32)
        self._global = np.zeros((max_batch, NUM_GLOBAL_FEATURES_V7), np.float32)
        self._legal = np.zeros((max_batch, x_size * y_size + 1), np.uint8)
        self._keys = np.zeros((max_batch, 2), np.uint64)
        self._is_root = np.zeros(max_batch, np.uint8)
        self._white = np.zeros(max_batch, np.uint8)
        cdef float[:, :, :, ::1] spatial_view = self._spatial
        cdef float[:, ::1] global_view = self._global
        cdef unsigned char[:, ::1] legal_view = self._legal
        cdef uint64_t[:, ::1] keys_view = self._keys
        cdef unsigned char[::1] is_root_view = self._is_root
        cdef unsigned char[::1] white_view = self._white
        self.t.spatial = &spatial_view[0, 0, 0, 0]
        self.t.global_features = &global_view[0, 0]
        self.t.legal = &legal_view[0, 0]
        self.t.cache_keys = &keys_view[0, 0]
        self.t.leaf_is_root = &is_root_view[0]
        self.t.leaf_white = &white_view[0]
        default_feature_params(&self.t.feature_params)
        rng_seed(&self.t.rng, 0x1234567)
        self.t.search_age = 0

    def __dealloc__(self):
        cdef int i
        node_free_tree(&self.t, self.t.root)
        self.t.root = NULL
        if self.t.has_root_hist:
            history_free(&self.t.root_hist)
        for i in range(self.t.max_batch):
            free(self.t.leaves[i].path)
            free(self.t.leaves[i].slots)
            free(self.t.leaves[i].counted)
        free(self.t.leaves)
        free(self.t.scratch)
        free(self.t.root_priors)
        svb_reset(&self.t)

    # -- configuration --------------------------------------------------------------------------
    def configure(self, params, int pass_alive_suicide_override=-1, bint nn_has_shortterm_error=False):
        """Copy the search parameters the core uses from a SearchParams (or any object with its fields)."""
        cdef SearchConfig* c = &self.t.cfg
        cdef double old_svb = c.subtree_value_bias_factor
        c.win_loss_utility_factor = params.win_loss_utility_factor
        c.static_score_utility_factor = params.static_score_utility_factor
        c.dynamic_score_utility_factor = params.dynamic_score_utility_factor
        c.dynamic_score_center_zero_weight = params.dynamic_score_center_zero_weight
        c.dynamic_score_center_scale = params.dynamic_score_center_scale
        c.no_result_utility_for_white = params.no_result_utility_for_white
        c.draw_equivalent_wins_for_white = params.draw_equivalent_wins_for_white
        c.cpuct_exploration = params.cpuct_exploration
        c.cpuct_exploration_log = params.cpuct_exploration_log
        c.cpuct_exploration_base = params.cpuct_exploration_base
        c.cpuct_utility_stdev_prior = params.cpuct_utility_stdev_prior
        c.cpuct_utility_stdev_prior_weight = params.cpuct_utility_stdev_prior_weight
        c.cpuct_utility_stdev_scale = params.cpuct_utility_stdev_scale
        c.fpu_reduction_max = params.fpu_reduction_max
        c.fpu_loss_prop = params.fpu_loss_prop
        c.root_fpu_reduction_max = params.root_fpu_reduction_max
        c.root_fpu_loss_prop = params.root_fpu_loss_prop
        c.fpu_parent_weight_by_visited_policy = params.fpu_parent_weight_by_visited_policy
        c.fpu_parent_weight_by_visited_policy_pow = params.fpu_parent_weight_by_visited_policy_pow
        c.fpu_parent_weight = params.fpu_parent_weight
        c.value_weight_exponent = params.value_weight_exponent
        c.use_noise_pruning = params.use_noise_pruning
        c.noise_prune_utility_scale = params.noise_prune_utility_scale
        c.noise_pruning_cap = params.noise_pruning_cap
        c.use_uncertainty = params.use_uncertainty
        c.uncertainty_coeff = params.uncertainty_coeff
        c.uncertainty_exponent = params.uncertainty_exponent
        c.uncertainty_max_weight = params.uncertainty_max_weight
        c.subtree_value_bias_factor = params.subtree_value_bias_factor
        c.subtree_value_bias_free_prop = params.subtree_value_bias_free_prop
        c.subtree_value_bias_weight_exponent = params.subtree_value_bias_weight_exponent
        c.root_noise_enabled = params.root_noise_enabled
        c.root_desired_per_child_visits_coeff = params.root_desired_per_child_visits_coeff
        c.wide_root_noise = params.wide_root_noise
        c.chosen_move_subtract = params.chosen_move_subtract
        c.chosen_move_prune = params.chosen_move_prune
        c.use_lcb_for_selection = params.use_lcb_for_selection
        c.lcb_stdevs = params.lcb_stdevs
        c.min_visit_prop_for_lcb = params.min_visit_prop_for_lcb
        c.use_non_buggy_lcb = params.use_non_buggy_lcb
        c.root_ending_bonus_points = params.root_ending_bonus_points
        c.root_prune_useless_moves = params.root_prune_useless_moves
        c.root_symmetry_pruning = params.root_symmetry_pruning
        c.conservative_pass = params.conservative_pass
        c.fill_dame_before_pass = params.fill_dame_before_pass
        c.enable_passing_hacks = params.enable_passing_hacks
        c.enable_more_passing_hacks = params.enable_more_passing_hacks
        c.futile_visits_threshold = params.futile_visits_threshold
        c.num_virtual_losses_per_thread = params.num_virtual_losses_per_thread
        c.human_cpuct_exploration = params.human_sl_cpuct_exploration
        c.human_cpuct_permanent = params.human_sl_cpuct_permanent
        c.human_explore_weightless[HUMAN_AT_ROOT] = params.human_sl_root_explore_prob_weightless
        c.human_explore_weightful[HUMAN_AT_ROOT] = params.human_sl_root_explore_prob_weightful
        c.human_explore_weightless[HUMAN_AT_ROOT_PLAYER] = params.human_sl_pla_explore_prob_weightless
        c.human_explore_weightful[HUMAN_AT_ROOT_PLAYER] = params.human_sl_pla_explore_prob_weightful
        c.human_explore_weightless[HUMAN_AT_OPPONENT] = params.human_sl_opp_explore_prob_weightless
        c.human_explore_weightful[HUMAN_AT_OPPONENT] = params.human_sl_opp_explore_prob_weightful
        c.human_chosen_move_prop = params.human_sl_chosen_move_prop
        c.human_chosen_move_ignore_pass = params.human_sl_chosen_move_ignore_pass
        c.human_chosen_move_pikl_lambda = params.human_sl_chosen_move_pikl_lambda
        c.nn_has_shortterm_error = nn_has_shortterm_error
        c.sqrt_board_area = sqrt(<double>self.t.area)
        self.t.feature_params.draw_equivalent_wins_for_white = params.draw_equivalent_wins_for_white
        self.t.feature_params.enable_passing_hacks = params.enable_passing_hacks
        self.t.feature_params.pass_alive_suicide_override = pass_alive_suicide_override
        self.t.ignore_pre_root_history = params.ignore_pre_root_history
        self.t.ignore_all_history = params.ignore_all_history
        self.t.playout_doubling_advantage = params.playout_doubling_advantage
        pda_pla = params.playout_doubling_advantage_pla
        self.t.playout_doubling_advantage_pla = _color_of(pda_pla)
        if old_svb != c.subtree_value_bias_factor:
            self.clear()

    def set_mode(self, bint nogo=False, bint rollouts=False, int rollouts_per_leaf=1, bint keep_ownership=False):
        if nogo and not rollouts:
            raise ValueError("NoGo is only searched with rollouts (no network plays NoGo)")
        if nogo != self.t.nogo or rollouts != self.t.rollouts:
            self.clear()
        self.t.nogo = nogo
        self.t.rollouts = rollouts
        self.t.rollouts_per_leaf = max(1, rollouts_per_leaf)
        self.t.keep_ownership = keep_ownership

    def seed(self, unsigned long long seed):
        rng_seed(&self.t.rng, seed)

    def set_search_for(self, int pla):
        """The player the search is for (playout doubling advantage), KataGo's plaThatSearchIsFor."""
        self.t.pla_search_is_for = <Color>pla

    def set_nn_has_shortterm_error(self, bint value):
        """The network reports short-term errors, so uncertainty weighting applies (terminal weights too)."""
        self.t.cfg.nn_has_shortterm_error = value

    @property
    def max_batch_capacity(self):
        return self.t.max_batch

    @property
    def root_turn_number(self):
        """Moves played before the root (KataGo's turn number for early-game interpolation)."""
        return self.t.root_hist.num_moves if self.t.has_root_hist else 0

    def has_legal_move(self):
        """Whether the player to move at the root has any legal move (NoGo: any NoGo move; Go: always)."""
        cdef Color pla = self.t.root_hist.presumed_next_pla
        if not self.t.nogo:
            return True
        return nogo_has_legal_move(&self.t.root_hist.board, pla)

    def set_upper_bound_visits_left(self, double visits):
        self.t.upper_bound_visits_left = visits

    def set_avoid(self, int pla, until_by_loc):
        """Ban moves for pla while the depth below the root is < until (array of MAX_ARR_SIZE ints), or None."""
        cdef int i
        if pla != C_BLACK and pla != C_WHITE:
            raise ValueError("player must be 1 or 2")
        if until_by_loc is None:
            self.t.has_avoid[pla - 1] = False
            memset(self.t.avoid_until[pla - 1], 0, sizeof(self.t.avoid_until[pla - 1]))
            return
        if len(until_by_loc) != MAX_ARR_SIZE:
            raise ValueError(f"avoid array must have {MAX_ARR_SIZE} entries")
        self.t.has_avoid[pla - 1] = False
        for i in range(MAX_ARR_SIZE):
            v = int(until_by_loc[i])
            self.t.avoid_until[pla - 1][i] = <uint16_t>max(0, min(65535, v))
            if v > 0:
                self.t.has_avoid[pla - 1] = True

    # -- position ---------------------------------------------------------------------------------
    def set_root(self, GameState state, bint nogo_rules=False):
        """Search from state (copied); the tree is cleared."""
        self.clear()
        if self.t.has_root_hist:
            history_free(&self.t.root_hist)
        history_copy(&self.t.root_hist, &state.h)
        self.t.has_root_hist = True
        if state.h.board.x_size != self.t.x_size or state.h.board.y_size != self.t.y_size:
            raise ValueError("state board size differs from the tree's")
        if self.t.nogo:
            # NoGo has no captures, hence no ko; skip superko bookkeeping in the tree.
            self.t.root_hist.rules.ko_rule = KO_SIMPLE
        self.t.pla_search_is_for = state.h.presumed_next_pla

    def root_state(self):
        cdef GameState g = GameState.__new__(GameState)
        history_copy(&g.h, &self.t.root_hist)
        g._initialised = True
        return g

    def clear(self):
        node_free_tree(&self.t, self.t.root)
        self.t.root = NULL
        free(self.t.root_priors)
        self.t.root_priors = NULL
        svb_reset(&self.t)

    def advance(self, xy, int pla, bint prevent_encore=True):
        """Play a move at the root, keeping the chosen child's subtree when there is one.

        Returns True when the subtree was kept. Raises ValueError if the move is impossible.
        """
        cdef Loc loc
        cdef Node* child = NULL
        cdef Node* old
        cdef int i
        cdef float old_bonus
        if not self.t.has_root_hist:
            raise ValueError("no root position")
        loc = self._loc(xy)
        if self.t.nogo:
            if not nogo_is_legal(&self.t.root_hist.board, loc, <Color>pla):
                raise ValueError("illegal NoGo move")
        elif not history_is_legal_tolerant(&self.t.root_hist, loc, <Color>pla):
            raise ValueError("illegal move")
        if pla != self.t.root_hist.presumed_next_pla:
            raise ValueError("advance() plays the player to move only; use set_root for other changes")
        old_bonus = self.t.root_hist.white_handicap_bonus_score
        history_make_move_assume_legal(&self.t.root_hist, loc, <Color>pla, prevent_encore and not self.t.nogo)
        free(self.t.root_priors)
        self.t.root_priors = NULL
        old = self.t.root
        if old != NULL:
            for i in range(old.num_children):
                if old.children[i].move == loc:
                    child = old.children[i].node
                    if child.state != NODE_EXPANDED:
                        child = NULL
                    else:
                        old.children[i].node = NULL
                    break
            self.t.root = NULL
            for i in range(old.num_children):
                if old.children[i].node != NULL:
                    node_free_tree(&self.t, old.children[i].node)
            old.num_children = 0
            node_free_tree(&self.t, old)
        if child != NULL:
            child.force_non_terminal = self.t.root_hist.is_game_finished
            child.is_terminal = False
            svb_release(&self.t, child)
            self.t.root = child
        kept = child != NULL
        if self.t.root_hist.white_handicap_bonus_score != old_bonus:
            self.clear()
            kept = False
        elif not self.t.nogo:
            if self.t.cfg.conservative_pass and history_pass_would_end_game(&self.t.root_hist, self.t.root_hist.presumed_next_pla):
                self.clear()
                kept = False
            elif prevent_encore and history_pass_would_end_phase(&self.t.root_hist, self.t.root_hist.presumed_next_pla):
                self.clear()
                kept = False
        return kept

    cdef Loc _loc(self, xy) except? -1:
        if xy is None:
            return PASS_LOC
        x, y = xy
        if not (0 <= x < self.t.x_size and 0 <= y < self.t.y_size):
            raise ValueError(f"point {xy} is off the board")
        return loc_of(x, y, self.t.x_size)

    # -- search steps -----------------------------------------------------------------------------
    @property
    def x_size(self):
        return self.t.x_size

    @property
    def y_size(self):
        return self.t.y_size

    @property
    def root_pla(self):
        return self.t.root_hist.presumed_next_pla

    @property
    def root_visits(self):
        return 0 if self.t.root == NULL else self.t.root.stats.visits

    @property
    def root_evaluated(self):
        return self.t.root != NULL and self.t.root.state == NODE_EXPANDED

    @property
    def root_eval_is_current(self):
        """Whether the root was (re)evaluated during the current search (KataGo's node age check)."""
        return self.t.root != NULL and self.t.root.age == self.t.search_age

    @property
    def root_has_ownership(self):
        return self.t.root != NULL and self.t.root.ownership != NULL

    @property
    def root_pass_would_end_game(self):
        return not self.t.nogo and history_pass_would_end_game(&self.t.root_hist, self.t.root_hist.presumed_next_pla)

    @property
    def num_leaves(self):
        return self.t.num_leaves

    @property
    def spatial(self):
        return self._spatial

    @property
    def global_features(self):
        return self._global

    @property
    def legal(self):
        return self._legal

    def leaf_info(self, int i):
        """(cache key as int, is_root, white_to_move) of batch leaf i."""
        if not 0 <= i < self.t.num_leaves:
            raise IndexError(i)
        key = (int(self.t.cache_keys[2 * i + 1]) << 64) | int(self.t.cache_keys[2 * i])
        return key, bool(self.t.leaf_is_root[i]), bool(self.t.leaf_white[i])

    def prepare_root_eval(self):
        """Put the root alone into the batch (first evaluation, or a re-evaluation with root settings).

        Returns the number of leaves (1), or 0 in rollout mode, where the root is evaluated at once.
        """
        cdef History h
        cdef LeafSlot* ls = &self.t.leaves[0]
        if not self.t.has_root_hist:
            raise ValueError("no root position")
        if self.t.root == NULL:
            self.t.root = node_new(self.t.root_hist.presumed_next_pla)
            self.t.root.force_non_terminal = self.t.root_hist.is_game_finished
        self.t.num_leaves = 0
        if self.t.rollouts:
            with nogil:
                history_copy(&h, &self.t.root_hist)
                if self.t.root.state != NODE_EXPANDED:
                    rollout_evaluate(&self.t, self.t.root, &h, True)
                    add_direct_eval_as_leaf(&self.t, self.t.root, True)
                self.t.root.age = self.t.search_age
                history_free(&h)
            return 0
        leaf_slot_start(ls, self.t.root)
        ls.kind = LEAF_NEW if self.t.root.state != NODE_EXPANDED else LEAF_ROOT_REINIT
        if self.t.root.state != NODE_EXPANDED:
            self.t.root.state = NODE_PENDING
        with nogil:
            fill_leaf_features(&self.t, 0, &self.t.root_hist, True)
        self.t.num_leaves = 1
        return 1

    def begin_search(self):
        """Per-search root setup (KataGo's beginSearch / computeRootValues); call once the root is evaluated."""
        cdef int syms[8]
        cdef int num_syms, i
        cdef unsigned char dup[MAX_ARR_SIZE]
        cdef double expected, cap
        cdef Node* r = self.t.root
        cdef SearchConfig* c = &self.t.cfg
        if r == NULL or r.state != NODE_EXPANDED:
            raise ValueError("the root must be evaluated before a search begins")
        with nogil:
            area_calculate(&self.t.root_hist.board, self.t.root_safe_area, False, False, False,
                           history_suicide_legal_for_pass_alive(&self.t.root_hist))
            expected = r.stats.score_mean if r.stats.visits > 0 and r.stats.weight_sum > 0 else r.eval.score_mean
            c.recent_score_center = expected * (1.0 - c.dynamic_score_center_zero_weight)
            cap = sqrt(<double>self.t.area) * c.dynamic_score_center_scale
            if c.recent_score_center > expected + cap:
                c.recent_score_center = expected + cap
            if c.recent_score_center < expected - cap:
                c.recent_score_center = expected - cap
            memset(dup, 0, MAX_ARR_SIZE)
            num_syms = 1
            syms[0] = 0
            if c.root_symmetry_pruning and not self.t.nogo:
                num_syms = root_board_symmetries(&self.t, syms)
                mark_root_symmetry_duplicates(&self.t, dup, syms, num_syms)
            compute_root_allowed(&self.t, dup)
            for i in range(MAX_ARR_SIZE):
                self.t.root_ending_bonus[i] = 0.0
            if c.root_ending_bonus_points != 0.0 and not self.t.nogo:
                for i in range(r.num_edges):
                    self.t.root_ending_bonus[r.edges[i].move] = compute_ending_bonus(&self.t, r.edges[i].move)
            filter_root_children(&self.t)
            if c.dynamic_score_utility_factor != 0.0 or c.subtree_value_bias_factor != 0.0:
                recompute_tree(&self.t, r, True)
            svb_clear_unused(&self.t)
        self._root_symmetries = [syms[i] for i in range(num_syms)]
        return self._root_symmetries

    def next_search_age(self):
        """Start a new search 'age': the root counts as stale until re-evaluated or re-noised."""
        self.t.search_age += 1

    def mark_root_current(self):
        if self.t.root != NULL:
            self.t.root.age = self.t.search_age

    def collect(self, int max_leaves, int max_playouts, int max_descents=-1):
        """Run descents; returns (leaves waiting for evaluation, playouts finished)."""
        cdef int done = 0, n
        if self.t.root == NULL or self.t.root.state != NODE_EXPANDED:
            raise ValueError("evaluate the root first (prepare_root_eval / apply)")
        if max_leaves > self.t.max_batch:
            max_leaves = self.t.max_batch
        if max_descents < 0:
            max_descents = 4 * max_leaves + 8 if not self.t.rollouts else max_playouts
        with nogil:
            n = collect_batch(&self.t, max_leaves, max_playouts, max_descents, &done)
        return n, done

    def apply(self, outputs, human_outputs=None):
        """Store one evaluation per waiting leaf (NNOutput-like objects, White's view) and back them up.

        human_outputs: None, or per leaf the human-SL net's output (its policy is kept as the node's
        human priors) or None. Everything is read and checked before the tree changes, so a bad
        output raises with the batch still pending (abandon() then cleans up).
        """
        cdef int i, n = self.t.num_leaves
        cdef LeafSlot* ls
        cdef Node* node
        cdef DirectEval ev
        cdef const float[::1] policy
        cdef const float[::1] ownership
        cdef const float* own_ptr
        cdef bint keep
        cdef float pass_prior
        cdef const float[::1] human_policy
        if len(outputs) != n:
            raise ValueError(f"expected {n} evaluations, got {len(outputs)}")
        if human_outputs is not None and len(human_outputs) != n:
            raise ValueError(f"expected {n} human evaluations, got {len(human_outputs)}")
        humans = [self._human_policy(h) for h in human_outputs] if human_outputs is not None else [None] * n
        prepared = []
        for i in range(n):
            o = outputs[i]
            values = (float(o.white_win), float(o.white_loss), float(o.no_result), float(o.white_score_mean),
                      float(o.white_score_mean_sq), float(o.white_lead), float(o.var_time_left),
                      float(o.shortterm_winloss_error), float(o.shortterm_score_error))
            policy_array = np.ascontiguousarray(o.policy, dtype=np.float32)
            if policy_array.shape != (self.t.area,):
                raise ValueError(f"policy has shape {policy_array.shape}, expected ({self.t.area},)")
            own = getattr(o, "white_ownership", None)
            own_array = None
            if own is not None:
                own_array = np.ascontiguousarray(own, dtype=np.float32)
                if own_array.shape != (self.t.area,):
                    raise ValueError(f"ownership has shape {own_array.shape}, expected ({self.t.area},)")
            prepared.append((values, policy_array, float(o.policy_pass), own_array))
        for i in range(n):
            values, policy_array, policy_pass, own_array = prepared[i]
            ls = &self.t.leaves[i]
            node = ls.path[ls.depth]
            (ev.win, ev.loss, ev.no_result, ev.score_mean, ev.score_mean_sq, ev.lead, ev.var_time_left,
             ev.st_wl_error, ev.st_score_error) = values
            policy = policy_array
            pass_prior = policy_pass
            keep = node == self.t.root or self.t.keep_ownership
            own_ptr = NULL
            if own_array is not None and keep:
                ownership = own_array
                own_ptr = &ownership[0]
            with nogil:
                store_eval(&self.t, node, &ev, &policy[0], pass_prior, self.t.legal + i * (self.t.area + 1),
                           own_ptr, keep)
            if humans[i] is not None:
                human_policy = humans[i][0]
                pass_prior = humans[i][1]
                store_human_priors(&self.t, node, &human_policy[0], pass_prior)
            with nogil:
                if ls.kind == LEAF_NEW:
                    add_direct_eval_as_leaf(&self.t, node, True)
                    backup(&self.t, ls)
                    if ls.stops_below_root:
                        self.t.playouts_below_root += 1
        self.t.num_leaves = 0

    def _human_policy(self, output):
        """(policy array, pass prior) of a human-SL output, checked; None for None."""
        if output is None:
            return None
        policy_array = np.ascontiguousarray(output.policy, dtype=np.float32)
        if policy_array.shape != (self.t.area,):
            raise ValueError(f"human policy has shape {policy_array.shape}, expected ({self.t.area},)")
        return policy_array, float(output.policy_pass)

    def set_root_human_policy(self, output):
        """Give the (expanded) root the human-SL net's policy from ``output`` (NNOutput-like)."""
        cdef const float[::1] policy
        human = self._human_policy(output)
        if self.t.root == NULL or self.t.root.state != NODE_EXPANDED:
            raise ValueError("the root must be evaluated first")
        policy = human[0]
        store_human_priors(&self.t, self.t.root, &policy[0], human[1])

    @property
    def playouts_below_root(self):
        """Counted playouts so far whose value stopped at a weightless (human-SL) step below the root:
        they count toward the search's limits without adding a root visit."""
        return self.t.playouts_below_root

    @property
    def root_has_human_policy(self):
        return self.t.root != NULL and self.t.root.state == NODE_EXPANDED and self.t.root.human_priors != NULL

    def abandon(self):
        """Give up the waiting leaves (evaluation failed): undo virtual losses and pending marks."""
        cdef int i
        cdef LeafSlot* ls
        for i in range(self.t.num_leaves):
            ls = &self.t.leaves[i]
            if ls.path[ls.depth].state == NODE_PENDING:
                ls.path[ls.depth].state = NODE_UNEVALUATED
            undo_virtual_losses(ls)
        self.t.num_leaves = 0

    # -- root priors (noise / temperature applied in Python) ------------------------------------------
    def root_edges(self):
        """(moves as (x, y) or None, raw priors) of the root's legal moves, highest prior first."""
        cdef Node* r = self.t.root
        cdef int i
        if r == NULL or r.state != NODE_EXPANDED:
            return [], np.zeros(0, np.float32)
        moves = [self._xy(r.edges[i].move) for i in range(r.num_edges)]
        priors = np.array([r.edges[i].prior for i in range(r.num_edges)], np.float32)
        return moves, priors

    def set_root_priors(self, priors):
        """Priors to search the root with, aligned with root_edges(); None restores the raw ones."""
        cdef Node* r = self.t.root
        cdef int i
        free(self.t.root_priors)
        self.t.root_priors = NULL
        if priors is None or r == NULL:
            return
        if len(priors) != r.num_edges:
            raise ValueError("priors must align with root_edges()")
        self.t.root_priors = <float*>malloc((r.num_edges if r.num_edges > 0 else 1) * sizeof(float))
        for i in range(r.num_edges):
            self.t.root_priors[i] = priors[i]

    def _xy(self, int loc):
        if loc == PASS_LOC:
            return None
        return (loc_x(<Loc>loc, self.t.x_size), loc_y(<Loc>loc, self.t.x_size))

    # -- debugging / tests ----------------------------------------------------------------------------
    def total_virtual_losses(self):
        """Sum of virtual losses over the whole tree (0 between batches)."""
        return _sum_virtual_losses(self.t.root)

    def node_count(self):
        return _count_nodes(self.t.root)

    def check_invariants(self):
        """Visits of each expanded node = 1 + its children's edge visits, allowing for uncounted and extra leaf visits."""
        return _check_node(self.t.root)


cdef int64_t _sum_virtual_losses(Node* n):
    cdef int64_t total = 0
    cdef int i
    if n == NULL:
        return 0
    total = n.virtual_losses
    for i in range(n.num_children):
        total += _sum_virtual_losses(n.children[i].node)
    return total


cdef int64_t _count_nodes(Node* n):
    cdef int64_t total = 1
    cdef int i
    if n == NULL:
        return 0
    for i in range(n.num_children):
        total += _count_nodes(n.children[i].node)
    return total


cdef bint _check_node(Node* n):
    cdef int64_t edge_sum = 0
    cdef int i
    if n == NULL:
        return True
    for i in range(n.num_children):
        edge_sum += n.children[i].edge_visits
        if n.children[i].edge_visits > n.children[i].node.stats.visits:
            return False
        if not _check_node(n.children[i].node):
            return False
    if n.state == NODE_EXPANDED and n.num_children > 0 and n.stats.visits < 1 + edge_sum:
        return False
    return True


cdef Color _color_of(value) except? 99:
    if value is None:
        return C_EMPTY
    if isinstance(value, int):
        return <Color>value
    text = str(value).strip().upper()
    if text in ("B", "BLACK"):
        return C_BLACK
    if text in ("W", "WHITE"):
        return C_WHITE
    return C_EMPTY


# Board-index array length the avoid lists use (katacli.search.restrictions).
MAX_ARR_SIZE_PY = MAX_ARR_SIZE
