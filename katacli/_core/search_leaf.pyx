# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Leaf evaluation plumbing: terminal scores, network inputs and cache keys, storing evaluations,
rollouts (contract: search_leaf.pxd)."""
from libc.stdint cimport int64_t, uint64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memcpy

from katacli._core.board cimport (
    Board, Loc, Color, Hash128, C_EMPTY, C_BLACK, C_WHITE, MAX_ARR_SIZE, PASS_LOC, loc_of, loc_x, loc_y, opp_of,
    hash_xor,
)
from katacli._core.history cimport (
    History, history_is_legal, history_situation_ko_hash, history_white_komi_adjustment_for_draws,
    history_pass_would_end_phase, history_should_suppress_end_game_from_friendly_pass,
)
from katacli._core.features cimport (
    FeatureParams, NUM_SPATIAL_FEATURES_V7, NUM_GLOBAL_FEATURES_V7, fill_features_v7, fill_legal_mask,
)
from katacli._core.search_values cimport eval_weight
from katacli._core.playout cimport playout_area_score, rng_next
from katacli._core.nogo cimport nogo_legal_moves, nogo_rollout
from katacli._core.search_nodes cimport (
    TreeCore, Node, DirectEval, MAX_EDGES, NODE_EXPANDED, node_set_policy,
)
from katacli._core.policy_rows cimport PolicyRows, policy_rows_new, policy_rows_release
from katacli._core.ladder cimport LadderCache
from katacli._core.katago_hash cimport (
    basic_lcong, basic_lcong2, split_mix64, rrmxmx, pass_alive_under_suicide_hash, pass_ends_phase_hash,
    conservative_pass_hash, friendly_pass_hash, passing_hacks_hash, game_is_over_hash, zero_history_hash,
    playout_doublings_hash, nn_policy_temp_hash, policy_optimism_hash,
)


# ---- terminal nodes --------------------------------------------------------------------------
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


# ---- network inputs ---------------------------------------------------------------------------
cdef Hash128 _nn_cache_key(const TreeCore* t, const History* h, Color pla, const FeatureParams* fp,
                           bint is_root) noexcept nogil:
    """KataGo's NNInputs::getHash, bit for bit: the situation (stones, player, ko bans, encore, komi, rules)
    and what changes the network's inputs or answer, but NOT the recent moves (KataGo knowingly shares an
    evaluation between transpositions with different histories). Equal keys also mean equal slots in the
    two engines' direct-mapped caches, so both evict the same entries."""
    cdef Hash128 key = history_situation_ko_hash(h, pla, fp.draw_equivalent_wins_for_white)
    cdef int64_t steps
    cdef double optimism = t.cfg.root_policy_optimism if is_root else t.cfg.policy_optimism
    cdef bint pass_alive_under_suicide = (fp.pass_alive_suicide_override > 0 if fp.pass_alive_suicide_override >= 0
                                          else h.always_pass_alive_under_suicide_rules)
    if pass_alive_under_suicide and not h.rules.multi_stone_suicide_legal:
        key = hash_xor(key, pass_alive_under_suicide_hash())
    if history_pass_would_end_phase(h, pla):
        key = hash_xor(key, pass_ends_phase_hash())
        if fp.conservative_pass_and_is_root:
            key = hash_xor(key, conservative_pass_hash())
        if history_should_suppress_end_game_from_friendly_pass(h, pla):
            key = hash_xor(key, friendly_pass_hash())
        if fp.enable_passing_hacks:
            key = hash_xor(key, passing_hacks_hash())
    if h.is_game_finished or h.is_past_normal_phase_end:
        key = hash_xor(key, game_is_over_hash())
    if fp.max_history <= 0:
        key.h0 += zero_history_hash().h0
        key.h1 += zero_history_hash().h1
    if fp.playout_doubling_advantage != 0.0:
        steps = <int64_t>(fp.playout_doubling_advantage * <double>(<float>256.0))
        key.h0 += split_mix64(<uint64_t>steps)
        key.h1 += basic_lcong(<uint64_t>steps)
        key = hash_xor(key, playout_doublings_hash())
    if t.cfg.nn_policy_temperature != <float>1.0:
        steps = <int64_t>(t.cfg.nn_policy_temperature * <float>2048.0)
        key.h0 ^= basic_lcong2(<uint64_t>steps)
        key.h1 = split_mix64(key.h1 + <uint64_t>steps)
        key.h0 += key.h1
        key = hash_xor(key, nn_policy_temp_hash())
    if optimism > 0.0:
        key = hash_xor(key, policy_optimism_hash())
        steps = <int64_t>(optimism * 1024.0)
        key.h0 = rrmxmx(split_mix64(key.h0) + <uint64_t>steps)
        key.h1 = rrmxmx(key.h1 + key.h0 + <uint64_t>steps)
    return key


cdef void draw_leaf_symmetry(TreeCore* t, int slot, bint is_root) noexcept nogil:
    """The leaf's orientation (with leaf symmetries on; -1 canonical), drawn in leaf order so that the
    rows do not depend on which thread fills them."""
    cdef signed char symmetry = -1
    if t.sym_pos_maps != NULL and not is_root:
        symmetry = <signed char>(rng_next(&t.sym_rng) >> 61)   # uniform over the 8 symmetries
    t.leaf_symmetry[slot] = symmetry
    t.leaf_is_root[slot] = is_root


cdef void fill_leaf_features(TreeCore* t, int slot, const History* h, LadderCache* ladder_cache) noexcept nogil:
    cdef FeatureParams fp = t.feature_params
    cdef Color pla = h.presumed_next_pla
    cdef Color pda_pla
    cdef int plane = t.area
    cdef bint is_root = t.leaf_is_root[slot]
    cdef int symmetry = t.leaf_symmetry[slot]
    cdef Hash128 key
    fp.conservative_pass_and_is_root = t.cfg.conservative_pass and is_root
    if t.playout_doubling_advantage != 0.0:
        pda_pla = t.playout_doubling_advantage_pla if t.playout_doubling_advantage_pla != C_EMPTY else t.pla_search_is_for
        fp.playout_doubling_advantage = -t.playout_doubling_advantage if opp_of(pla) == pda_pla else t.playout_doubling_advantage
    if t.ignore_all_history:
        fp.max_history = 0
    elif t.ignore_pre_root_history:
        fp.max_history = 0 if is_root else h.num_moves - t.root_hist.num_moves
    if symmetry >= 0:
        fp.pos_map = t.sym_pos_maps + symmetry * plane
    fill_features_v7(h, pla, &fp, t.x_size, t.y_size,
                     t.spatial + slot * NUM_SPATIAL_FEATURES_V7 * plane,
                     t.global_features + slot * NUM_GLOBAL_FEATURES_V7, ladder_cache)
    fill_legal_mask(h, pla, t.x_size, t.y_size, t.legal + slot * (plane + 1))
    key = _nn_cache_key(t, h, pla, &fp, is_root)
    t.cache_keys[2 * slot] = key.h0
    t.cache_keys[2 * slot + 1] = key.h1
    t.leaf_white[slot] = pla == C_WHITE


# ---- storing evaluations -----------------------------------------------------------------------
cdef inline bint _prior_counts(const TreeCore* t, const unsigned char* legal, int pos) noexcept nogil:
    return legal[pos] and not (pos == t.area and t.nogo)


cdef void store_eval(TreeCore* t, Node* n, const DirectEval* ev, const float* policy, PolicyRows* policy_block,
                     const unsigned char* legal, const float* ownership, bint keep_ownership) noexcept nogil:
    # policy: area + 1 priors (pass last) in policy_block, which n keeps a reference to instead of a copy.
    # legal: the leaf's legal mask [area + 1]. A prior counts only on a legal move: where an evaluator
    # left one on an illegal move (a test fake, a custom net) or on passing in NoGo, n gets a masked copy.
    cdef int pos
    cdef bint masked = False
    cdef PolicyRows* own_copy
    for pos in range(t.num_positions):
        if policy[pos] >= 0.0 and not _prior_counts(t, legal, pos):
            masked = True
            break
    if masked:
        own_copy = policy_rows_new(1, t.num_positions)
        for pos in range(t.num_positions):
            own_copy.data[pos] = policy[pos] if (policy[pos] >= 0.0 and _prior_counts(t, legal, pos)) else -1.0
        node_set_policy(t, n, own_copy.data, own_copy)
        policy_rows_release(own_copy)
    else:
        node_set_policy(t, n, policy, policy_block)
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
    """The human-SL net's policy per policy position of n (read for n's edges only); -1 where it has none."""
    if n.human_priors == NULL:
        n.human_priors = <float*>malloc(t.num_positions * sizeof(float))
    memcpy(n.human_priors, policy, t.area * sizeof(float))
    n.human_priors[t.area] = policy_pass


# ---- rollouts ----------------------------------------------------------------------------------
cdef void rollout_evaluate(TreeCore* t, Node* n, const History* h, bint want_ownership) noexcept nogil:
    """Evaluate a node with random playouts: uniform priors over legal moves, values from final area counts."""
    cdef Color pla = n.next_pla
    cdef Loc moves[MAX_EDGES]
    cdef PolicyRows* uniform
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
    uniform = policy_rows_new(1, t.num_positions)
    for k in range(t.num_positions):
        uniform.data[k] = -1.0
    for k in range(count):
        uniform.data[t.loc_edge[moves[k]]] = <float>(1.0 / count)
    node_set_policy(t, n, uniform.data, uniform)
    policy_rows_release(uniform)
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
