"""SearchParams (katacli.search.params) and the kata-*-param support
(katacli.gtp.runtime_params)."""
from __future__ import annotations

import dataclasses
import json

import pytest

from katacli import config_keys
from katacli.config import Config, ConfigError, Enabled
from katacli.gtp.runtime_params import (
    FIXED_AFTER_STARTUP,
    GTP_ENGINE_PARAMS,
    REPORTED_SEARCH_PARAMS,
    GtpRuntimeParams,
    ParamError,
    apply_param_updates,
    get_param_text,
    get_params_json,
    list_params,
    parse_set_param_args,
    parse_set_params_json,
)
from katacli.search.params import (
    SEARCH_PARAM_CONFIG_KEYS,
    SearchParams,
    config_key_of,
    field_of_key,
    gtp_search_params,
)

from support.paths import CONFIGS as CONFIG_DIR

# --------------------------------------------------------------------------- single source of defaults


@pytest.mark.parametrize("f", [f for f in dataclasses.fields(SearchParams) if f.metadata["from_config"]],
                         ids=lambda f: f.name)
def test_dataclass_defaults_come_from_the_registry(f):
    key = f.metadata["config_key"]
    assert config_keys.is_known(key)
    assert f.default == config_keys.default_value(key, "gtp")


@pytest.mark.parametrize("mode", config_keys.MODES)
def test_defaults_per_mode_match_the_registry(mode):
    params = SearchParams.defaults(mode)
    for key in SEARCH_PARAM_CONFIG_KEYS:
        assert params.get_by_key(key) == config_keys.default_value(key, mode), key


def test_bare_dataclass_is_gtp_defaults():
    assert SearchParams() == SearchParams.defaults("gtp")


@pytest.mark.parametrize("field_name,key", [
    ("cpuct_exploration", "cpuctExploration"),
    ("min_visit_prop_for_lcb", "minVisitPropForLCB"),
    ("human_sl_profile", "humanSLProfile"),
    ("num_search_threads", "numSearchThreads"),
    ("nn_policy_temperature", "nnPolicyTemperature"),
    ("subtree_value_bias_table_num_shards", "subtreeValueBiasTableNumShards"),
])
def test_name_mapping(field_name, key):
    assert config_key_of(field_name) == key and field_of_key(key) == field_name


def test_every_field_name_is_the_snake_case_of_its_key():
    import re

    for f in dataclasses.fields(SearchParams):
        key = f.metadata["config_key"]
        snake = re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", key).lower()
        assert f.name == snake, (f.name, key)


# --------------------------------------------------------------------------- per-mode values (KataGo setup.cpp)

MODE_TABLE = [
    # (field, gtp, analysis, selfplay, benchmark mode)
    ("min_playouts_per_thread", 8.0, 8.0, 0.0, 0.0),
    ("cpuct_utility_stdev_scale", 0.85, 0.85, 0.0, 0.85),
    ("policy_optimism", 1.0, 1.0, 0.0, 1.0),
    ("root_policy_optimism", 0.2, 0.2, 0.0, 0.2),
    ("use_noise_pruning", True, True, False, True),
    ("use_uncertainty", True, True, False, True),
    ("use_non_buggy_lcb", True, True, False, True),
    ("root_symmetry_pruning", True, True, False, False),
    ("wide_root_noise", 0.0, 0.04, 0.0, 0.0),
    ("ignore_pre_root_history", False, True, False, False),
    ("enable_passing_hacks", True, True, False, False),
    ("enable_more_passing_hacks", True, True, False, False),
    ("conservative_pass", True, True, False, False),
    ("fill_dame_before_pass", True, False, False, False),
    ("use_graph_search", True, True, True, True),
    ("fpu_parent_weight_by_visited_policy", True, True, True, True),
]


@pytest.mark.parametrize("field_name,gtp,analysis,selfplay,bench", MODE_TABLE)
def test_mode_table(field_name, gtp, analysis, selfplay, bench):
    for mode, expected in zip(("gtp", "analysis", "selfplay", "benchmark"), (gtp, analysis, selfplay, bench)):
        assert getattr(SearchParams.defaults(mode), field_name) == expected, mode


# --------------------------------------------------------------------------- from_config


def test_from_config_reads_values_and_derived_defaults():
    cfg = Config.from_text(
        "numSearchThreads = 8\nmaxVisits = 200\nrootNoiseEnabled = true\nrootPolicyTemperature = 1.1\n"
        "playoutDoublingAdvantagePla = white\nalwaysComputePassAliveUnderSuicideRules = true\n", mode="gtp")
    params = SearchParams.from_config(cfg)
    assert params.num_search_threads == 8 and params.max_visits == 200
    assert params.root_fpu_reduction_max == 0.0
    assert params.root_policy_temperature_early == 1.1
    assert params.playout_doubling_advantage_pla == "W"
    assert params.always_compute_pass_alive_under_suicide_rules is Enabled.TRUE
    assert cfg.unused_keys() == []


def test_from_config_errors():
    with pytest.raises(ConfigError, match="Missing key 'numSearchThreads'"):
        SearchParams.from_config(Config.from_text("maxVisits = 5", mode="gtp"))
    with pytest.raises(ConfigError, match=r"'cpuctExploration' \(s.cfg, line 2\): 11 is out of range"):
        SearchParams.from_config(Config.from_text("numSearchThreads = 1\ncpuctExploration = 11\n", source="s.cfg"),
                                 "gtp")
    human = Config.from_text("numSearchThreads = 1\nhumanSLChosenMoveProp = 1.0\n", source="h.cfg")
    with pytest.raises(ConfigError, match="'humanSLChosenMoveProp' .* only works with a human SL model"):
        SearchParams.from_config(human, "gtp")
    assert SearchParams.from_config(human, "gtp", has_human_model=True).human_sl_chosen_move_prop == 1.0


def test_analysis_alias_for_threads():
    cfg = Config.from_text("numSearchThreadsPerAnalysisThread = 16\n", mode="analysis")
    assert SearchParams.from_config(cfg).num_search_threads == 16


@pytest.mark.parametrize("name,mode,expected", [
    ("gtp_example.cfg", "gtp", {"max_visits": 500, "num_search_threads": 6, "lag_buffer": 1.0,
                                "max_time_pondering": 60.0, "search_factor_after_two_pass": 0.25}),
    ("analysis_example.cfg", "analysis", {"max_visits": 500, "num_search_threads": 16, "wide_root_noise": 0.04}),
    ("selfplay_example.cfg", "selfplay", {"max_visits": 600, "root_noise_enabled": True,
                                          "root_desired_per_child_visits_coeff": 2.0, "cpuct_exploration": 1.1,
                                          "root_num_symmetries_to_sample": 4, "use_uncertainty": False}),
])
def test_shipped_configs(name, mode, expected):
    params = SearchParams.from_config(Config.from_file(CONFIG_DIR / name, mode=mode))
    for field_name, value in expected.items():
        assert getattr(params, field_name) == value, field_name


@pytest.mark.parametrize("text,genmove_anti_mirror,analysis_anti_mirror", [
    ("", True, False),
    ("antiMirror = false", False, False),
    ("antiMirror = true", True, True),
    ("genmoveAntiMirror = false\nantiMirror = true", False, True),
])
def test_gtp_parameter_sets(text, genmove_anti_mirror, analysis_anti_mirror):
    cfg = Config.from_text("numSearchThreads = 4\nwideRootNoise = 0.01\n" + text, mode="gtp")
    genmove, analysis = gtp_search_params(cfg)
    assert (genmove.anti_mirror, analysis.anti_mirror) == (genmove_anti_mirror, analysis_anti_mirror)
    assert (genmove.wide_root_noise, analysis.wide_root_noise) == (0.01, 0.04)
    assert (genmove.ignore_pre_root_history, analysis.ignore_pre_root_history) == (False, True)


# --------------------------------------------------------------------------- kata-*-param

# KataGo 1.17.2's SearchParams::changeableParametersToJson keys, checked by hand.
KATAGO_REPORTED = """
winLossUtilityFactor staticScoreUtilityFactor dynamicScoreUtilityFactor dynamicScoreCenterZeroWeight
dynamicScoreCenterScale noResultUtilityForWhite drawEquivalentWinsForWhite cpuctExploration cpuctExplorationLog
cpuctExplorationBase cpuctUtilityStdevPrior cpuctUtilityStdevPriorWeight cpuctUtilityStdevScale fpuReductionMax
fpuLossProp fpuParentWeightByVisitedPolicy fpuParentWeightByVisitedPolicyPow fpuParentWeight policyOptimism
valueWeightExponent useNoisePruning noisePruneUtilityScale noisePruningCap useUncertainty uncertaintyCoeff
uncertaintyExponent uncertaintyMaxWeight useGraphSearch graphSearchRepBound graphSearchCatchUpLeakProb
rootNoiseEnabled rootDirichletNoiseTotalConcentration rootDirichletNoiseWeight rootPolicyTemperature
rootPolicyTemperatureEarly rootFpuReductionMax rootFpuLossProp rootNumSymmetriesToSample rootSymmetryPruning
rootDesiredPerChildVisitsCoeff rootPolicyOptimism chosenMoveTemperature chosenMoveTemperatureEarly
chosenMoveTemperatureHalflife chosenMoveTemperatureOnlyBelowProb chosenMoveSubtract chosenMovePrune
useLcbForSelection lcbStdevs minVisitPropForLCB useNonBuggyLcb rootEndingBonusPoints rootPruneUselessMoves
conservativePass fillDameBeforePass wideRootNoise enablePassingHacks enableMorePassingHacks
alwaysComputePassAliveUnderSuicideRules playoutDoublingAdvantage playoutDoublingAdvantagePla nnPolicyTemperature
ignorePreRootHistory ignoreAllHistory subtreeValueBiasFactor subtreeValueBiasTableNumShards subtreeValueBiasFreeProp
subtreeValueBiasWeightExponent numVirtualLossesPerThread numSearchThreads minPlayoutsPerThread maxVisits
maxPlayouts maxTime maxVisitsPondering maxPlayoutsPondering maxTimePondering lagBuffer searchFactorAfterOnePass
searchFactorAfterTwoPass treeReuseCarryOverTimeFactor overallocateTimeFactor midgameTimeFactor
midgameTurnPeakTime endgameTurnTimeDecay obviousMovesTimeFactor obviousMovesPolicyEntropyTolerance
obviousMovesPolicySurpriseTolerance futileVisitsThreshold humanSLCpuctExploration humanSLCpuctPermanent
humanSLRootExploreProbWeightless humanSLRootExploreProbWeightful humanSLPlaExploreProbWeightless
humanSLPlaExploreProbWeightful humanSLOppExploreProbWeightless humanSLOppExploreProbWeightful
humanSLChosenMoveProp humanSLChosenMoveIgnorePass humanSLChosenMovePiklLambda
""".split()


def test_reported_params_match_katago():
    assert sorted(KATAGO_REPORTED) == list(REPORTED_SEARCH_PARAMS)
    assert list_params()[:len(GTP_ENGINE_PARAMS)] == list(GTP_ENGINE_PARAMS)
    assert list_params()[len(GTP_ENGINE_PARAMS):] == sorted(KATAGO_REPORTED)


@pytest.fixture
def gtp_state():
    cfg = Config.from_file(CONFIG_DIR / "gtp_example.cfg", mode="gtp")
    return cfg, GtpRuntimeParams.from_config(cfg)


@pytest.mark.parametrize("name,text", [
    ("maxVisits", "500"),
    ("maxTime", "1e+20"),
    ("maxPlayouts", "1125899906842624"),
    ("cpuctExplorationLog", "0.45"),
    ("noisePruningCap", "1e+50"),
    ("nnPolicyTemperature", "1.0"),
    ("useLcbForSelection", "true"),
    ("alwaysComputePassAliveUnderSuicideRules", '"auto"'),
    ("playoutDoublingAdvantagePla", '"E"'),
    ("numSearchThreads", "6"),
    ("analysisWideRootNoise", "0.04"),
    ("analysisIgnorePreRootHistory", "true"),
    ("genmoveAntiMirror", "true"),
    ("antiMirror", "false"),
    ("humanSLProfile", ""),
    ("allowResignation", "true"),
    ("ponderingEnabled", "false"),
    ("delayMoveScale", "0"),
    ("delayMoveMax", "1e+06"),
])
def test_get_param_text(gtp_state, name, text):
    assert get_param_text(name, gtp_state[1]) == text


def test_get_param_unknown(gtp_state):
    with pytest.raises(ParamError, match="^Invalid parameter: useEvalCache$"):
        get_param_text("useEvalCache", gtp_state[1])


def test_get_params_json(gtp_state):
    report = json.loads(get_params_json(gtp_state[1]))
    assert set(report) == set(list_params())
    assert report["maxVisits"] == 500 and report["analysisWideRootNoise"] == "0.04"
    assert report["allowResignation"] == "true" and report["alwaysComputePassAliveUnderSuicideRules"] == "auto"


@pytest.mark.parametrize("args,expected", [
    (["maxVisits", "100"], {"maxVisits": "100"}),
    (["maxVisits"], {"maxVisits": ""}),
])
def test_parse_set_param_args(args, expected):
    assert parse_set_param_args(args) == expected


@pytest.mark.parametrize("args", [[], ["a", "b", "c"]])
def test_parse_set_param_args_errors(args):
    with pytest.raises(ParamError, match="Expected one or two arguments for kata-set-param"):
        parse_set_param_args(args)


def test_parse_set_params_json():
    assert parse_set_params_json('{"maxVisits": 5, "antiMirror": true, "humanSLProfile": "rank_1d", "x": 0.5}') == {
        "maxVisits": "5", "antiMirror": "true", "humanSLProfile": "rank_1d", "x": "0.5"}
    hostile = ("[" * 10_000 + "]" * 10_000, '{"a":' * 10_000 + "1" + "}" * 10_000, '{"maxVisits":' + "9" * 10_000 + "}")
    for bad in ("[1, 2]", "{not json", "", *hostile):  # nested too deep, numbers too long: errors too
        with pytest.raises(ParamError):
            parse_set_params_json(bad)


SET_OK = [
    # (updates, check on the new state)
    ({"maxVisits": "100"}, lambda s: s.genmove.max_visits == 100 and s.analysis.max_visits == 100),
    ({"maxVisits": ""}, lambda s: s.genmove.max_visits == 1 << 50),
    ({"numSearchThreads": "12"}, lambda s: s.genmove.num_search_threads == 12),
    ({"analysisWideRootNoise": "0.2"}, lambda s: s.analysis.wide_root_noise == 0.2 and s.genmove.wide_root_noise == 0),
    ({"genmoveAntiMirror": "false"}, lambda s: not s.genmove.anti_mirror),
    ({"antiMirror": "true"}, lambda s: s.analysis.anti_mirror and s.genmove.anti_mirror),
    ({"allowResignation": "false", "ponderingEnabled": "true"}, lambda s: not s.allow_resignation and s.pondering_enabled),
    ({"delayMoveScale": "2", "delayMoveMax": "5"}, lambda s: (s.delay_move_scale, s.delay_move_max) == (2.0, 5.0)),
    ({"playoutDoublingAdvantagePla": "black"}, lambda s: s.genmove.playout_doubling_advantage_pla == "B"),
    ({"useEvalCache": "false"}, lambda s: not s.genmove.use_eval_cache),
    ({"fpuParentWeight": "0.5", "fpuParentWeightByVisitedPolicy": "false"}, lambda s: s.genmove.fpu_parent_weight == 0.5),
]


@pytest.mark.parametrize("updates,check", SET_OK)
def test_set_params(gtp_state, updates, check):
    cfg, state = gtp_state
    new_state = apply_param_updates(cfg, state, updates)
    assert check(new_state)
    for key, value in updates.items():
        assert cfg.as_dict().get(key, "") == value


SET_ERRORS = [
    ({"maxVisits": "0"}, "Could not set params: Invalid value for 'maxVisits' (kata-set-param): 0 is out of range"),
    ({"maxVisits": "lots"}, "is not an integer"),
    ({"notAParam": "1"}, "Could not set params: Unrecognized or non-overridable parameter in kata-set-params: notAParam"),
    ({"rules": "japanese"}, "Unrecognized or non-overridable parameter in kata-set-params: rules"),
    ({"dynamicPlayoutDoublingAdvantageCapPerOppLead": "0.1"},
     "Cannot be overridden in kata-set-param: dynamicPlayoutDoublingAdvantageCapPerOppLead"),
    ({"avoidRepeatedPatternUtility": "0.1"}, "Cannot be overridden in kata-set-param: avoidRepeatedPatternUtility"),
    ({"useEvalCache": "true"}, "Could not set params: Cannot change useEvalCache after initialization"),
    ({"nodeTableShardsPowerOfTwo": "10"}, "Cannot change nodeTableShardsPowerOfTwo after initialization"),
    ({"humanSLCpuctExploration": "2"}, "only works with a human SL model"),
    ({"allowResignation": "sometimes"}, "'sometimes' is not a boolean"),
    ({"delayMoveMax": "-1"}, "out of range"),
]


@pytest.mark.parametrize("updates,message", SET_ERRORS)
def test_set_param_errors_leave_everything_unchanged(gtp_state, updates, message):
    cfg, state = gtp_state
    before = cfg.as_dict()
    with pytest.raises(ParamError) as info:
        apply_param_updates(cfg, state, updates)
    assert message in str(info.value)
    assert cfg.as_dict() == before


def test_fixed_after_startup_keys_are_settable_keys():
    for key in FIXED_AFTER_STARTUP:
        assert config_keys.is_known(key)


def test_the_fpu_blend_setting_katago_does_not_read_keeps_its_default_and_is_warned_unused():
    # KataGo reads fpuParentWeight only with fpuParentWeightByVisitedPolicy off, the power only with it on.
    from katacli.config import Config
    from katacli.search.params import SearchParams

    cfg = Config({"fpuParentWeight": "0.5"}, mode="gtp")
    params = SearchParams.from_config(cfg, "gtp")
    assert params.fpu_parent_weight == 0.0 and params.fpu_parent_weight_by_visited_policy_pow == 2.0
    assert cfg.unused_keys() == ["fpuParentWeight"]
    cfg = Config({"fpuParentWeight": "0.5", "fpuParentWeightByVisitedPolicy": "false",
                  "fpuParentWeightByVisitedPolicyPow": "3"}, mode="gtp")
    params = SearchParams.from_config(cfg, "gtp")
    assert params.fpu_parent_weight == 0.5 and params.fpu_parent_weight_by_visited_policy_pow == 1.0
    assert cfg.unused_keys() == ["fpuParentWeightByVisitedPolicyPow"]
