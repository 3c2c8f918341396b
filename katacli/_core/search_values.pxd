# cython: language_level=3
"""Contract: the numbers MCTS works with -- search settings as a C struct and KataGo's utility shapes.

Everything is from White's point of view (positive = good for White), as in KataGo.

  utility        winLossUtilityFactor * (win - loss) + noResultUtilityForWhite * noResult
                 + staticScoreUtilityFactor * E[sv(score; centre 0, scale 2)]
                 + dynamicScoreUtilityFactor * E[sv(score; centre recent_score_center, scale dynamicScoreCenterScale)]
  sv(s; c, k)    2/pi * atan((s - c) / (k * sqrt(board area))), averaged over a normal
                 distribution of the final score with the node's mean and stdev
                 (a precomputed table, KataGo's ScoreValue::expectedWhiteScoreValue).
  value weights  children's weights are scaled by cdf_t3(z)^valueWeightExponent where cdf_t3
                 is Student's t (3 degrees of freedom) and z how far a child's value lies
                 below the parent's average (KataGo's downweightBadChildren).

SearchConfig is filled from katacli.search.params.SearchParams by search_tree.pyx;
nothing here reads global settings.
"""

cdef struct SearchConfig:
    # Utility
    double win_loss_utility_factor
    double static_score_utility_factor
    double dynamic_score_utility_factor
    double dynamic_score_center_zero_weight
    double dynamic_score_center_scale
    double no_result_utility_for_white
    double draw_equivalent_wins_for_white
    # Exploration
    double cpuct_exploration
    double cpuct_exploration_log
    double cpuct_exploration_base
    double cpuct_utility_stdev_prior
    double cpuct_utility_stdev_prior_weight
    double cpuct_utility_stdev_scale
    double fpu_reduction_max
    double fpu_loss_prop
    double root_fpu_reduction_max
    double root_fpu_loss_prop
    bint fpu_parent_weight_by_visited_policy
    double fpu_parent_weight_by_visited_policy_pow
    double fpu_parent_weight
    # Human SL: a second, human-style policy per node (KataGo's humanSL* parameters). Indexed by
    # HUMAN_AT_ROOT / HUMAN_AT_ROOT_PLAYER / HUMAN_AT_OPPONENT (search_nodes.pxd): the chance that a
    # playout picks its move there by the human policy, without (weightless) or with (weightful)
    # the playout counting in the parent's value.
    double human_cpuct_exploration
    double human_cpuct_permanent
    double human_explore_weightless[3]
    double human_explore_weightful[3]
    double human_chosen_move_prop        # share of the final move choice taken from the human policy
    bint human_chosen_move_ignore_pass   # keep KataGo's own passing share
    double human_chosen_move_pikl_lambda # human policy shifted by exp(utility gap / lambda)
    # Aggregation
    double value_weight_exponent
    bint use_noise_pruning
    double noise_prune_utility_scale
    double noise_pruning_cap
    bint use_uncertainty
    double uncertainty_coeff
    double uncertainty_exponent
    double uncertainty_max_weight
    double subtree_value_bias_factor
    double subtree_value_bias_free_prop
    double subtree_value_bias_weight_exponent
    # Root
    bint root_noise_enabled
    double root_desired_per_child_visits_coeff
    double wide_root_noise
    double chosen_move_subtract
    double chosen_move_prune
    bint use_lcb_for_selection
    double lcb_stdevs
    double min_visit_prop_for_lcb
    bint use_non_buggy_lcb
    # Self-play hint (KataGo's Search::setRootHintLoc): a root move searched almost as often as the
    # most searched one. A Loc, 0 (NULL_LOC) for none; set by SearchTree.set_root_hint, not from params.
    int root_hint_loc
    double root_ending_bonus_points
    bint root_prune_useless_moves
    bint root_symmetry_pruning
    bint conservative_pass
    bint fill_dame_before_pass
    bint enable_passing_hacks
    bint enable_more_passing_hacks
    double futile_visits_threshold
    # Network input settings that only enter the NN cache key here (the evaluator applies them).
    double policy_optimism
    double root_policy_optimism
    float nn_policy_temperature
    # Threads
    double num_virtual_losses_per_thread
    # Set per search, not from the parameters
    double recent_score_center
    double sqrt_board_area
    bint nn_has_shortterm_error        # the evaluator reports short-term errors (uncertainty weighting)


# ---- score value ------------------------------------------------------------------
cdef void sv_init_tables() noexcept nogil            # idempotent; search_values does it at import
cdef double expected_white_score_value(double mean, double stdev, double center, double scale,
                                       double sqrt_board_area) noexcept nogil
cdef double score_stdev(double score_mean, double score_mean_sq) noexcept nogil
cdef double score_value_derivative(double score, double center, double scale, double sqrt_board_area) noexcept nogil

# ---- utility ----------------------------------------------------------------------
cdef double result_utility(const SearchConfig* c, double win_loss, double no_result) noexcept nogil
cdef double score_utility(const SearchConfig* c, double score_mean, double score_mean_sq) noexcept nogil
cdef double score_utility_diff(const SearchConfig* c, double score_mean, double score_mean_sq, double delta) noexcept nogil
cdef double approx_score_utility_derivative(const SearchConfig* c, double score_mean) noexcept nogil
cdef double utility_radius(const SearchConfig* c) noexcept nogil     # max |utility|
# Weight of one direct evaluation (KataGo's computeWeightFromNNOutput): 1 unless uncertainty weighting applies.
cdef double eval_weight(const SearchConfig* c, double score_mean, double st_wl_error, double st_score_error) noexcept nogil
cdef double terminal_weight(const SearchConfig* c) noexcept nogil

# ---- value weighting --------------------------------------------------------------
cdef double t3_cdf(double z) noexcept nogil           # tabulated like KataGo's valueWeightDistribution
