"""Search parameters: KataGo's SearchParams as a dataclass.

Field names are the snake_case form of KataGo's config key names
(``cpuctExploration`` -> ``cpuct_exploration``, ``minVisitPropForLCB`` ->
``min_visit_prop_for_lcb``, ``humanSLProfile`` -> ``human_sl_profile``). KataGo's
struct member ``numThreads`` is configured as ``numSearchThreads`` and is
``num_search_threads`` here. :func:`config_key_of` and :func:`field_of_key`
convert between the two; each field's metadata also carries its key.

Defaults are not written here: every config-backed field takes its default
from :mod:`katacli.config_keys`. The dataclass defaults are the GTP-mode
defaults; :meth:`SearchParams.from_config` applies the defaults of the mode
it is asked for (gtp, analysis, selfplay, benchmark), as KataGo does.

Fields katacli may not act on (``anti_mirror``, ...) are
still parsed and validated so that KataGo configs behave the same.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from katacli import config_keys
from katacli.config import Config, ConfigError, Enabled
from katacli.config_keys.fields import (
    KEY_METADATA,
    config_field,
    fields_by_key,
    fixed_field,
    keys_read_by,
    read_config_fields,
)
from katacli.nn.human_profile import HumanProfile, HumanProfileError, parse_human_profile

# The mode whose defaults the bare dataclass uses.
DATACLASS_DEFAULT_MODE = "gtp"
# KataGo's fixed shard count for the subtree value bias table (not configurable).
SUBTREE_VALUE_BIAS_TABLE_NUM_SHARDS = 65536
def _param(key: str) -> Any:
    """A field whose default and config key come from the registry."""
    return config_field(key, default_mode=DATACLASS_DEFAULT_MODE)


def _fixed(key: str, value: Any) -> Any:
    """A field KataGo reports under ``key`` but never reads from a config."""
    return fixed_field(key, value)


# KataGo's SearchParams defaults of the FPU blend setting it does not read (see below).
KATAGO_UNREAD_FPU_PARENT_WEIGHT = 0.0
KATAGO_UNREAD_FPU_VISITED_POLICY_POW = 1.0


def _without_unread_fpu_weight(params: "SearchParams", cfg: Config) -> "SearchParams":
    """KataGo reads fpuParentWeightByVisitedPolicyPow only with fpuParentWeightByVisitedPolicy on and
    fpuParentWeight only with it off: the other keeps its struct default (what kata-get-params reports) and,
    when a config sets it, is warned about as unused. The search uses the one read either way."""
    if params.fpu_parent_weight_by_visited_policy:
        cfg.unmark_used("fpuParentWeight")
        return dataclasses.replace(params, fpu_parent_weight=KATAGO_UNREAD_FPU_PARENT_WEIGHT)
    cfg.unmark_used("fpuParentWeightByVisitedPolicyPow")
    return dataclasses.replace(params, fpu_parent_weight_by_visited_policy_pow=KATAGO_UNREAD_FPU_VISITED_POLICY_POW)


@dataclass(slots=True)
class SearchParams:
    # Utility
    win_loss_utility_factor: float = _param("winLossUtilityFactor")
    static_score_utility_factor: float = _param("staticScoreUtilityFactor")
    dynamic_score_utility_factor: float = _param("dynamicScoreUtilityFactor")
    dynamic_score_center_zero_weight: float = _param("dynamicScoreCenterZeroWeight")
    dynamic_score_center_scale: float = _param("dynamicScoreCenterScale")
    no_result_utility_for_white: float = _param("noResultUtilityForWhite")
    draw_equivalent_wins_for_white: float = _param("drawEquivalentWinsForWhite")

    # Exploration
    cpuct_exploration: float = _param("cpuctExploration")
    cpuct_exploration_log: float = _param("cpuctExplorationLog")
    cpuct_exploration_base: float = _param("cpuctExplorationBase")
    cpuct_utility_stdev_prior: float = _param("cpuctUtilityStdevPrior")
    cpuct_utility_stdev_prior_weight: float = _param("cpuctUtilityStdevPriorWeight")
    cpuct_utility_stdev_scale: float = _param("cpuctUtilityStdevScale")
    fpu_reduction_max: float = _param("fpuReductionMax")
    fpu_loss_prop: float = _param("fpuLossProp")
    fpu_parent_weight_by_visited_policy: bool = _param("fpuParentWeightByVisitedPolicy")
    fpu_parent_weight_by_visited_policy_pow: float = _param("fpuParentWeightByVisitedPolicyPow")
    fpu_parent_weight: float = _param("fpuParentWeight")
    policy_optimism: float = _param("policyOptimism")

    # Value aggregation
    value_weight_exponent: float = _param("valueWeightExponent")
    use_noise_pruning: bool = _param("useNoisePruning")
    noise_prune_utility_scale: float = _param("noisePruneUtilityScale")
    noise_pruning_cap: float = _param("noisePruningCap")
    use_uncertainty: bool = _param("useUncertainty")
    uncertainty_coeff: float = _param("uncertaintyCoeff")
    uncertainty_exponent: float = _param("uncertaintyExponent")
    uncertainty_max_weight: float = _param("uncertaintyMaxWeight")

    # Graph search
    use_graph_search: bool = _param("useGraphSearch")
    graph_search_rep_bound: int = _param("graphSearchRepBound")
    graph_search_catch_up_leak_prob: float = _param("graphSearchCatchUpLeakProb")

    # Root
    root_noise_enabled: bool = _param("rootNoiseEnabled")
    root_dirichlet_noise_total_concentration: float = _param("rootDirichletNoiseTotalConcentration")
    root_dirichlet_noise_weight: float = _param("rootDirichletNoiseWeight")
    root_policy_temperature: float = _param("rootPolicyTemperature")
    root_policy_temperature_early: float = _param("rootPolicyTemperatureEarly")
    root_fpu_reduction_max: float = _param("rootFpuReductionMax")
    root_fpu_loss_prop: float = _param("rootFpuLossProp")
    root_num_symmetries_to_sample: int = _param("rootNumSymmetriesToSample")
    root_symmetry_pruning: bool = _param("rootSymmetryPruning")
    root_desired_per_child_visits_coeff: float = _param("rootDesiredPerChildVisitsCoeff")
    root_policy_optimism: float = _param("rootPolicyOptimism")

    # Choosing the move to play
    chosen_move_temperature: float = _param("chosenMoveTemperature")
    chosen_move_temperature_early: float = _param("chosenMoveTemperatureEarly")
    chosen_move_temperature_halflife: float = _param("chosenMoveTemperatureHalflife")
    chosen_move_temperature_only_below_prob: float = _param("chosenMoveTemperatureOnlyBelowProb")
    chosen_move_subtract: float = _param("chosenMoveSubtract")
    chosen_move_prune: float = _param("chosenMovePrune")
    use_lcb_for_selection: bool = _param("useLcbForSelection")
    lcb_stdevs: float = _param("lcbStdevs")
    min_visit_prop_for_lcb: float = _param("minVisitPropForLCB")
    use_non_buggy_lcb: bool = _param("useNonBuggyLcb")

    # Passing and play style
    root_ending_bonus_points: float = _param("rootEndingBonusPoints")
    root_prune_useless_moves: bool = _param("rootPruneUselessMoves")
    conservative_pass: bool = _param("conservativePass")
    fill_dame_before_pass: bool = _param("fillDameBeforePass")
    # Set by the GTP engine for some opponents, never by a config: "B", "W" or None.
    avoid_myt_dagger_hack_pla: str | None = _fixed("avoidMYTDaggerHackPla", None)
    wide_root_noise: float = _param("wideRootNoise")
    enable_passing_hacks: bool = _param("enablePassingHacks")
    enable_more_passing_hacks: bool = _param("enableMorePassingHacks")
    always_compute_pass_alive_under_suicide_rules: Enabled = _param("alwaysComputePassAliveUnderSuicideRules")
    playout_doubling_advantage: float = _param("playoutDoublingAdvantage")
    playout_doubling_advantage_pla: str | None = _param("playoutDoublingAdvantagePla")
    avoid_repeated_pattern_utility: float = _param("avoidRepeatedPatternUtility")
    nn_policy_temperature: float = _param("nnPolicyTemperature")
    anti_mirror: bool = _param("antiMirror")
    ignore_pre_root_history: bool = _param("ignorePreRootHistory")
    ignore_all_history: bool = _param("ignoreAllHistory")

    # Subtree value bias and eval cache
    subtree_value_bias_factor: float = _param("subtreeValueBiasFactor")
    subtree_value_bias_table_num_shards: int = _fixed("subtreeValueBiasTableNumShards",
                                                      SUBTREE_VALUE_BIAS_TABLE_NUM_SHARDS)
    subtree_value_bias_free_prop: float = _param("subtreeValueBiasFreeProp")
    subtree_value_bias_weight_exponent: float = _param("subtreeValueBiasWeightExponent")
    use_eval_cache: bool = _param("useEvalCache")
    eval_cache_min_visits: int = _param("evalCacheMinVisits")

    # Threads
    node_table_shards_power_of_two: int = _param("nodeTableShardsPowerOfTwo")
    num_virtual_losses_per_thread: float = _param("numVirtualLossesPerThread")
    num_search_threads: int = _param("numSearchThreads")
    min_playouts_per_thread: float = _param("minPlayoutsPerThread")
    search_pipelining: Enabled = _param("searchPipelining")
    num_leaf_feature_threads: int = _param("numLeafFeatureThreads")

    # Limits
    max_visits: int = _param("maxVisits")
    max_playouts: int = _param("maxPlayouts")
    max_time: float = _param("maxTime")
    max_visits_pondering: int = _param("maxVisitsPondering")
    max_playouts_pondering: int = _param("maxPlayoutsPondering")
    max_time_pondering: float = _param("maxTimePondering")
    lag_buffer: float = _param("lagBuffer")
    search_factor_after_one_pass: float = _param("searchFactorAfterOnePass")
    search_factor_after_two_pass: float = _param("searchFactorAfterTwoPass")

    # Time control
    tree_reuse_carry_over_time_factor: float = _param("treeReuseCarryOverTimeFactor")
    overallocate_time_factor: float = _param("overallocateTimeFactor")
    midgame_time_factor: float = _param("midgameTimeFactor")
    midgame_turn_peak_time: float = _param("midgameTurnPeakTime")
    endgame_turn_time_decay: float = _param("endgameTurnTimeDecay")
    obvious_moves_time_factor: float = _param("obviousMovesTimeFactor")
    obvious_moves_policy_entropy_tolerance: float = _param("obviousMovesPolicyEntropyTolerance")
    obvious_moves_policy_surprise_tolerance: float = _param("obviousMovesPolicySurpriseTolerance")
    futile_visits_threshold: float = _param("futileVisitsThreshold")

    # Human SL model
    human_sl_profile: str = _param("humanSLProfile")
    human_sl_cpuct_exploration: float = _param("humanSLCpuctExploration")
    human_sl_cpuct_permanent: float = _param("humanSLCpuctPermanent")
    human_sl_root_explore_prob_weightless: float = _param("humanSLRootExploreProbWeightless")
    human_sl_root_explore_prob_weightful: float = _param("humanSLRootExploreProbWeightful")
    human_sl_pla_explore_prob_weightless: float = _param("humanSLPlaExploreProbWeightless")
    human_sl_pla_explore_prob_weightful: float = _param("humanSLPlaExploreProbWeightful")
    human_sl_opp_explore_prob_weightless: float = _param("humanSLOppExploreProbWeightless")
    human_sl_opp_explore_prob_weightful: float = _param("humanSLOppExploreProbWeightful")
    human_sl_chosen_move_prop: float = _param("humanSLChosenMoveProp")
    human_sl_chosen_move_ignore_pass: bool = _param("humanSLChosenMoveIgnorePass")
    human_sl_chosen_move_pikl_lambda: float = _param("humanSLChosenMovePiklLambda")

    # ------------------------------------------------------------------ construction

    @classmethod
    def defaults(cls, mode: str = DATACLASS_DEFAULT_MODE) -> "SearchParams":
        """KataGo's defaults for ``mode`` when the config sets nothing."""
        return cls.from_config(Config(mode=mode), mode)

    @classmethod
    def from_config(cls, cfg: Config, mode: str | None = None, *, has_human_model: bool = False) -> "SearchParams":
        """Read every search key of ``cfg`` with ``mode``'s defaults.

        ``mode`` defaults to the config's own mode, then to gtp. The GTP engine
        should use :func:`gtp_search_params`, which derives its genmove and
        analysis sets from this. Raises ConfigError for bad values, for missing
        keys the mode requires, and for human SL keys given without a human
        model.
        """
        mode = mode or cfg.mode or DATACLASS_DEFAULT_MODE
        config_keys.check_mode(mode)
        cfg.apply_mode_aliases(mode)
        if not has_human_model:
            for key in config_keys.HUMAN_MODEL_ONLY_KEYS:
                if key in cfg:
                    raise ConfigError(
                        f"'{key}' ({cfg.origin(key)}) only works with a human SL model; "
                        "pass one with -human-model (e.g. b18c384nbt-humanv0.bin.gz)"
                    )
        params = cls(**read_config_fields(cls, cfg, mode))
        params = _without_unread_fpu_weight(params, cfg)
        try:
            parse_human_profile(params.human_sl_profile)
        except HumanProfileError as exc:
            raise ConfigError(str(exc)) from None
        return params

    @property
    def human_profile(self) -> HumanProfile:
        """``humanSLProfile`` parsed (checked when the parameters were read)."""
        return parse_human_profile(self.human_sl_profile)

    def replace(self, **changes: Any) -> "SearchParams":
        return dataclasses.replace(self, **changes)

    # ------------------------------------------------------------------ KataGo names

    def get_by_key(self, key: str) -> Any:
        """Value of the field KataGo calls ``key`` (e.g. "cpuctExploration")."""
        return getattr(self, field_of_key(key))

    def to_key_dict(self) -> dict[str, Any]:
        """All fields keyed by their KataGo names."""
        return {f.metadata[KEY_METADATA]: getattr(self, f.name) for f in dataclasses.fields(self)}


_FIELD_BY_KEY = fields_by_key(SearchParams)
_KEY_BY_FIELD = {name: key for key, name in _FIELD_BY_KEY.items()}

# Config keys that SearchParams reads, plus the GTP-only keys gtp_search_params reads.
SEARCH_PARAM_CONFIG_KEYS: tuple[str, ...] = keys_read_by(SearchParams)
GTP_SEARCH_CONFIG_KEYS: tuple[str, ...] = ("analysisWideRootNoise", "analysisIgnorePreRootHistory", "genmoveAntiMirror")


def field_of_key(key: str) -> str:
    """Dataclass field name for a KataGo parameter name."""
    try:
        return _FIELD_BY_KEY[key]
    except KeyError:
        raise KeyError(f"{key!r} is not a search parameter") from None


def config_key_of(field_name: str) -> str:
    """KataGo parameter name for a dataclass field name."""
    try:
        return _KEY_BY_FIELD[field_name]
    except KeyError:
        raise KeyError(f"{field_name!r} is not a SearchParams field") from None


def gtp_search_params(cfg: Config, *, has_human_model: bool = False) -> tuple[SearchParams, SearchParams]:
    """The GTP engine's two parameter sets: (genmove, analysis).

    As in KataGo, they are the same except that analysis commands use
    analysisWideRootNoise and analysisIgnorePreRootHistory, and genmove uses
    genmoveAntiMirror (default: antiMirror if set, else true) while analysis
    uses antiMirror itself.
    """
    configured = SearchParams.from_config(cfg, "gtp", has_human_model=has_human_model)
    genmove = configured.replace(anti_mirror=cfg.get("genmoveAntiMirror", "gtp"))
    analysis = configured.replace(
        wide_root_noise=cfg.get("analysisWideRootNoise", "gtp"),
        ignore_pre_root_history=cfg.get("analysisIgnorePreRootHistory", "gtp"),
    )
    return genmove, analysis
