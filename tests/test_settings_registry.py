"""Every settings class reads its keys one way: fields declared with ``config_field`` and built from the
key registry (``katacli.config_keys.fields``).

* each key a settings class reads is a registered key, read by one field, whose dataclass default (if
  any) is the registry's: a default is written once;
* a bad value gives the registry's one-line error through each class's real entry point;
* built from an (almost) empty config, each class has the values it had before the classes moved to
  the registry (written down from the code as it was then).
"""
from __future__ import annotations

import dataclasses
import doctest

import pytest

from katacli import config_keys
from katacli.config_keys import fields as fields_module
from katacli.config import Config, ConfigError, Enabled
from katacli.config_keys import ValueKind
from katacli.config_keys.fields import (
    CONVERT_METADATA,
    DEFAULT_MODE_METADATA,
    KEY_METADATA,
    config_fields,
    keys_read_by,
)
from katacli.config_keys.train_keys import TRAIN_KEYS
from katacli.game.rules import KoRule, ScoringRule, TaxRule
from katacli.gtp.runtime_params import GtpRuntimeParams
from katacli.match.settings import MatchSettings
from katacli.search.params import SearchParams
from katacli.selfplay.position_pools import StartPositionSettings
from katacli.selfplay.settings import GameSetupSettings, PlaySettings, RunnerSettings, SelfplaySettings
from katacli.setup.engine_settings import AnalysisSettings, GtpSettings, LoggingSettings, NNSettings, load_rules
from katacli.train.settings import TrainSettings, settings_from_config

# The least a self-play config and a match config need; everything else takes its default.
SELFPLAY_MINIMAL = {"bSizes": "19", "bSizeRelProbs": "1", "komiMean": "7.5", "maxVisits": "10"}
MATCH_MINIMAL = {"numBots": "1", "botName": "a", "nnModelFile": "rollouts", "extraPairs": "0-0",
                 "numGamesTotal": "2", "bSizes": "19", "bSizeRelProbs": "1", "komiMean": "7.5"}


def _selfplay(values: dict) -> SelfplaySettings:
    return SelfplaySettings.from_config(Config({**SELFPLAY_MINIMAL, **values}, mode="selfplay"))


# Each settings class: the mode its fields are read in, and its real entry point from config values.
BUILDERS = {
    SearchParams: ("gtp", lambda v: SearchParams.from_config(Config(v, mode="gtp"), "gtp", has_human_model=True)),
    LoggingSettings: ("gtp", lambda v: LoggingSettings.from_config(Config(v, mode="gtp"), "gtp")),
    NNSettings: ("analysis", lambda v: NNSettings.from_config(Config(v, mode="analysis"), "analysis")),
    GtpSettings: ("gtp", lambda v: GtpSettings.from_config(Config(v, mode="gtp"))),
    AnalysisSettings: ("analysis", lambda v: AnalysisSettings.from_config(Config(v, mode="analysis"))),
    GtpRuntimeParams: ("gtp", lambda v: GtpRuntimeParams.from_config(Config(v, mode="gtp"), has_human_model=True)),
    RunnerSettings: ("selfplay", _selfplay),
    GameSetupSettings: ("selfplay", _selfplay),
    PlaySettings: ("selfplay", _selfplay),
    StartPositionSettings: ("selfplay", _selfplay),
    # KataGo's match reads the self-play runner keys, with their defaults.
    MatchSettings: ("selfplay", lambda v: MatchSettings.from_config(Config({**MATCH_MINIMAL, **v}, mode="gtp"))),
    TrainSettings: (None, lambda v: settings_from_config(Config(v))),
}
SETTINGS_CLASSES = list(BUILDERS)

# A value each kind of key refuses (None: any text is accepted).
_BAD_VALUES = {
    ValueKind.INT: "12x", ValueKind.FLOAT: "1.5x", ValueKind.BOOL: "maybe", ValueKind.ENABLED: "sometimes",
    ValueKind.PLAYER: "nobody", ValueKind.LIST_INT: "1,x", ValueKind.LIST_FLOAT: "0.5,x",
    ValueKind.LIST_BOOL: "true,maybe", ValueKind.INT_PAIRS: "9",
}


def _bad_value(spec) -> str | None:
    if spec.choices is not None:
        return "no-such-choice"
    return _BAD_VALUES.get(spec.kind)


def _bad_value_cases():
    for cls in SETTINGS_CLASSES:
        for key in keys_read_by(cls):
            if _bad_value(config_keys.get_spec(key)) is not None:
                yield pytest.param(cls, key, id=f"{cls.__name__}-{key}")


# --------------------------------------------------------------------------- one registry, one default


def test_the_helpers_example_runs():
    result = doctest.testmod(fields_module)
    assert result.attempted and result.failed == 0


@pytest.mark.parametrize("cls", SETTINGS_CLASSES, ids=lambda c: c.__name__)
def test_every_key_a_settings_class_reads_is_registered_with_one_default(cls):
    keys = keys_read_by(cls)
    assert keys and len(set(keys)) == len(keys), "one field per key"
    for f in config_fields(cls):
        key = f.metadata[KEY_METADATA]
        assert key in config_keys.REGISTRY, f"{cls.__name__}.{f.name}: {key!r} is not a registered key"
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
            continue
        # A dataclass default is the registry's, never one written beside it.
        default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        expected = config_keys.default_value(key, f.metadata[DEFAULT_MODE_METADATA])
        convert = f.metadata.get(CONVERT_METADATA)
        assert default == (convert(expected) if convert and expected is not None else expected), (cls, key)


def test_train_keys_are_registered_and_each_is_one_training_field():
    names = [spec.name for spec in TRAIN_KEYS]
    assert all(config_keys.REGISTRY[name] is spec for name, spec in zip(names, TRAIN_KEYS))
    assert sorted(keys_read_by(TrainSettings)) == sorted(names)


# --------------------------------------------------------------------------- bad values


def _registry_error(key: str, value: str, mode: str | None) -> str:
    with pytest.raises(ConfigError) as caught:
        Config({key: value}, mode=mode).get(key, mode)
    return str(caught.value)


@pytest.mark.parametrize("cls,key", list(_bad_value_cases()))
def test_a_bad_value_gives_the_registrys_one_line_error(cls, key):
    mode, build = BUILDERS[cls]
    bad = _bad_value(config_keys.get_spec(key))
    expected = _registry_error(key, bad, mode)
    with pytest.raises(ConfigError) as caught:
        build({key: bad})
    message = str(caught.value)
    assert message == expected
    assert message.startswith(f"Invalid value for '{key}'") and "\n" not in message


def test_every_settings_class_has_a_key_with_a_refusable_value():
    tested = {case.values[0] for case in _bad_value_cases()}
    assert tested == set(SETTINGS_CLASSES)


# --------------------------------------------------------------------------- values from an empty config
# Written down by printing each class built from these configs before the refactor.

LOGGING_GTP = {
    "log_file": None,
    "log_dir": None,
    "log_dir_dated": None,
    "log_to_stderr": False,
    "log_to_stdout": False,
    "log_time_stamp": True,
    "log_config_contents": True,
}

LOGGING_ANALYSIS = {
    "log_file": None,
    "log_dir": None,
    "log_dir_dated": None,
    "log_to_stderr": True,
    "log_to_stdout": False,
    "log_time_stamp": True,
    "log_config_contents": True,
}

NN_GTP = {
    "max_batch_size": 8,
    "cache_size_power_of_two": 20,
    "mutex_pool_size_power_of_two": 16,
    "num_server_threads": 1,
    "randomize": True,
    "rand_seed": None,
    "forced_symmetry": None,
    "max_board_x_size": None,
    "max_board_y_size": None,
    "require_max_board_size": True,
    "use_fp16": Enabled.AUTO,
    "use_nhwc": Enabled.AUTO,
    "use_tf32": False,
    "cuda_graphs": True,
    "use_torch_compile": Enabled.AUTO,
    "device_per_server_thread": (None,),
    "home_data_dir": None,
    "debug_skip_neural_net": False,
    "cpu_threads": None,
    "numpy_until_torch": True,
}

NN_ANALYSIS = {
    "max_batch_size": None,
    "cache_size_power_of_two": 23,
    "mutex_pool_size_power_of_two": 17,
    "num_server_threads": 1,
    "randomize": True,
    "rand_seed": None,
    "forced_symmetry": None,
    "max_board_x_size": 19,
    "max_board_y_size": 19,
    "require_max_board_size": False,
    "use_fp16": Enabled.AUTO,
    "use_nhwc": Enabled.AUTO,
    "use_tf32": False,
    "cuda_graphs": True,
    "use_torch_compile": Enabled.AUTO,
    "device_per_server_thread": (None,),
    "home_data_dir": None,
    "debug_skip_neural_net": False,
    "cpu_threads": None,
    "numpy_until_torch": True,
}

NN_SELFPLAY = {
    "max_batch_size": None,
    "cache_size_power_of_two": 20,
    "mutex_pool_size_power_of_two": 16,
    "num_server_threads": 1,
    "randomize": True,
    "rand_seed": None,
    "forced_symmetry": None,
    "max_board_x_size": None,
    "max_board_y_size": None,
    "require_max_board_size": None,
    "use_fp16": Enabled.AUTO,
    "use_nhwc": Enabled.AUTO,
    "use_tf32": False,
    "cuda_graphs": True,
    "use_torch_compile": Enabled.AUTO,
    "device_per_server_thread": (None,),
    "home_data_dir": None,
    "debug_skip_neural_net": False,
    "cpu_threads": None,
    "numpy_until_torch": True,
}

GTP = {
    "forced_komi": None,
    "default_board_size": None,
    "log_all_gtp_communication": False,
    "log_search_info": False,
    "log_search_info_for_chosen_move": False,
    "startup_print_message_to_stderr": True,
    "ogs_chat_to_stderr": False,
    "report_winrates_as": None,
    "analysis_pv_len": 13,
    "pondering_enabled": False,
    "allow_resignation": False,
    "resign_threshold": -1.0,
    "resign_consec_turns": 3,
    "resign_min_score_difference": -10000000000.0,
    "resign_min_moves_per_board_area": 0.0,
    "cleanup_before_pass": Enabled.AUTO,
    "friendly_pass": Enabled.AUTO,
    "search_factor_when_winning": 1.0,
    "search_factor_when_winning_threshold": 1.0,
    "assume_multiple_starting_black_moves_are_handicap": True,
    "prevent_cleanup_phase": True,
    "dynamic_pda_cap_per_opp_lead": 0.045,
    "static_pda_takes_precedence": False,
    "handicap_avoid_repeated_pattern_utility": 0.005,
    "delay_move_scale": 0.0,
    "delay_move_max": 1000000.0,
    "gtp_force_max_nn_size": False,
    "search_rand_seed": None,
    "for_deterministic_testing": False,
    "has_search_limit": False,
    "sgf_patterns": (),  # pattern avoidance, new since the refactor: off unless configured
    "auto_avoid": None,
}

ANALYSIS = {
    "num_analysis_threads": 1,
    "report_winrates_as": None,
    "analysis_pv_len": 15,
    "log_all_requests": False,
    "log_all_responses": False,
    "log_errors_and_warnings": True,
    "log_search_info": False,
    "warn_unused_fields": True,
    "assume_multiple_starting_black_moves_are_handicap": True,
    "prevent_cleanup_phase": True,
    "for_deterministic_testing": False,
    "sgf_patterns": (),
}

RUNNER = {
    "num_game_threads": 1,
    "data_board_len": 19,
    "max_data_queue_size": 2000,
    "max_rows_per_train_file": 10000,
    "first_file_rand_min_prop": 0.15,
    "log_games_every": 10,
    "switch_nets_mid_game": True,
    "log_moves": False,
    "log_search_info": False,
    "max_moves_per_game": 1600,
    "clear_bot_before_search": False,
}

GAME = {
    "ko_rules": (KoRule.POSITIONAL,),
    "scoring_rules": (ScoringRule.AREA,),
    "tax_rules": (TaxRule.NONE,),
    "multi_stone_suicide_legals": (True,),
    "has_buttons": (False,),
    "board_sizes": ((19, 19),),
    "board_size_weights": (1.0,),
    "komi_mean": 7.5,
    "komi_auto": False,
    "komi_stdev": 0.0,
    "komi_big_stdev_prob": 0.0,
    "komi_big_stdev": 10.0,
    "komi_bigger_stdev_prob": 0.0,
    "komi_bigger_stdev": 30.0,
    "komi_allow_integer_prob": 1.0,
    "handicap_prob": 0.0,
    "handicap_compensate_komi_prob": 0.0,
    "fork_compensate_komi_prob": 0.0,
    "handicap_komi_interp_zero_prob": 0.0,
    "no_result_stdev": 0.0,
    "draw_rand_radius": 0.0,
    "num_extra_black_fixed": 0,
    "sgf_compensate_komi_prob": 0.0,
    "sgf_komi_interp_zero_prob": 0.0,
}

PLAY = {
    "init_games_with_policy": False,
    "policy_init_area_prop": 0.04,
    "compensate_after_policy_init_prob": 0.0,
    "policy_init_gamma_shape": 1.0,
    "policy_init_area_temperature": 1.0,
    "handicap_temperature": 1.0,
    "side_position_prob": 0.0,
    "compensate_komi_visits": 20,
    "flip_komi_prob_when_no_compensate": 0.0,
    "estimate_lead_visits": 6,
    "estimate_lead_prob": 0.0,
    "fancy_komi_varying": False,
    "early_fork_game_prob": 0.0,
    "early_fork_game_expected_move_prop": 0.0,
    "fork_game_prob": 0.0,
    "fork_game_min_choices": 1,
    "early_fork_game_max_choices": 1,
    "fork_game_max_choices": 1,
    "seki_fork_hack_prob": 0.0,
    "cheap_search_prob": 0.0,
    "cheap_search_visits": 0,
    "cheap_search_target_weight": 0.0,
    "reduce_visits": False,
    "reduce_visits_threshold": 100.0,
    "reduce_visits_threshold_lookback": 1,
    "reduced_visits_min": 0,
    "reduced_visits_weight": 1.0,
    "policy_surprise_data_weight": 0.0,
    "value_surprise_data_weight": 0.0,
    "use_search_value_surprise": False,
    "scale_data_weight": 1.0,
    "handicap_asymmetric_playout_prob": 0.0,
    "normal_asymmetric_playout_prob": 0.0,
    "max_asymmetric_ratio": 2.0,
    "min_asymmetric_compensate_komi_prob": 0.0,
    "start_poses_policy_init_area_prop": 0.0,
}

START_POSITIONS = {
    "sgf_dirs": None,
    "sgf_excludes": (),
    "start_poses_prob": 0.0,
    "load_prob": 1.0,
    "turn_weight_lambda": 0.0,
    "hint_dirs": None,
    "hint_poses_prob": 0.0,
}

TRAIN = {
    "data_dir": "",
    "output_dir": "",
    "export_dir": "",
    "export_prefix": "",
    "model_kind": "b6c96",
    "init_model": "",
    "max_samples": 0,
    "batch_size": 256,
    "samples_per_epoch": 1000000,
    "window_min_rows": 250000,
    "window_max_rows": 0,
    "window_expand_per_row": 0.4,
    "window_taper_exponent": 0.675,
    "validation_fraction": 0.0,      # (added since: off, as training was before)
    "max_validation_samples": 10000,
    "random_symmetries": True,
    "history_dropout": True,
    "max_train_samples_per_new_row": 0.0,
    "max_train_bucket_samples": 0,
    "data_poll_seconds": 10.0,
    "optimizer": "sgd",
    "lr_scale": 1.0,
    "lr_schedule": "",
    "lr_warmup_samples": 2000000,
    "head_lr_factor": 0.5,
    "noreg_lr_factor": 1.0,
    "gnorm_clip_scale": 1.0,
    "lookahead_k": 6,
    "lookahead_alpha": 0.5,
    "swa_scale": 8.0,
    "swa_period_samples": 0,
    "soft_policy_weight_scale": 8.0,
    "value_loss_scale": 0.6,
    "td_value_loss_scales": (0.6, 0.6, 0.6),
    "seki_loss_scale": 1.0,
    "variance_time_loss_scale": 1.0,
    "disable_optimistic_policy": False,
    "checkpoint_every_samples": 0,
    "export_every_samples": 0,
    "metrics_every_samples": 25600,
    "seed": -1,
    "device": "auto",
    "mixed_precision": "auto",
    "compile": Enabled.AUTO,
    "num_cpu_threads": 0,
    "lr_points": [],
    "model_kind_given": False,
}

RUNTIME = {
    "allow_resignation": False, "pondering_enabled": False, "delay_move_scale": 0.0, "delay_move_max": 1000000.0,
}

MATCH = {
    "pairings": ((0, 0), (0, 0)),
    "num_games_total": 2,
    "num_game_threads": 1,
    "max_moves_per_game": 1600,
    "log_games_every": 10,
    "log_search_info": False,
    "log_moves": False,
    "clear_bot_before_search": False,
    "compensate_komi_visits": 100,
    "ignored_keys": (),
    "policy_openings": None,
}

MATCH_RESIGN = {
    "allow_resignation": False,
    "resign_threshold": -1.0,
    "resign_consec_turns": 3,
    "resign_min_score_difference": -10000000000.0,
    "resign_min_moves_per_board_area": 0.0,
}


def _values(obj, skip=()) -> dict:
    """The fields of ``obj`` that are not settings objects themselves (those are checked on their own)."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)
            if f.name not in skip and not dataclasses.is_dataclass(getattr(obj, f.name))}


def _selfplay_minimal() -> SelfplaySettings:
    return _selfplay({})


@pytest.mark.parametrize("build,expected", [
    (lambda: LoggingSettings.from_config(Config(mode="gtp"), "gtp"), LOGGING_GTP),
    (lambda: LoggingSettings.from_config(Config(mode="analysis"), "analysis"), LOGGING_ANALYSIS),
    (lambda: NNSettings.from_config(Config(mode="gtp"), "gtp"), NN_GTP),
    (lambda: NNSettings.from_config(Config(mode="analysis"), "analysis"), NN_ANALYSIS),
    (lambda: NNSettings.from_config(Config(mode="selfplay"), "selfplay"), NN_SELFPLAY),
    (lambda: GtpSettings.from_config(Config(mode="gtp")), GTP),
    (lambda: AnalysisSettings.from_config(Config(mode="analysis")), ANALYSIS),
    (lambda: _selfplay_minimal().runner, RUNNER),
    (lambda: _selfplay_minimal().game, GAME),
    (lambda: _selfplay_minimal().play, PLAY),
    (lambda: _selfplay_minimal().start_positions, START_POSITIONS),
    (lambda: settings_from_config(Config()), TRAIN),
    (lambda: TrainSettings(), TRAIN),
    (lambda: GtpRuntimeParams.from_config(Config(mode="gtp")), RUNTIME),
    (lambda: MatchSettings.from_config(Config(MATCH_MINIMAL, mode="gtp")), MATCH),
    (lambda: MatchSettings.from_config(Config(MATCH_MINIMAL, mode="gtp")).resign, MATCH_RESIGN),
], ids=["logging-gtp", "logging-analysis", "nn-gtp", "nn-analysis", "nn-selfplay", "gtp", "analysis", "runner",
        "game", "play", "start-positions", "train", "train-dataclass", "gtp-runtime", "match", "match-resign"])
def test_defaults_are_the_values_before_the_registry_refactor(build, expected):
    got = _values(build(), skip=("rules", "genmove", "analysis", "bots", "positions"))
    assert got == expected


def test_nested_engine_settings_are_built_from_the_same_config():
    gtp = GtpSettings.from_config(Config(mode="gtp"))
    assert _values(gtp.logging) == LOGGING_GTP and _values(gtp.nn) == NN_GTP
    assert gtp.rules == load_rules(Config(mode="gtp"))
    analysis = AnalysisSettings.from_config(Config(mode="analysis"))
    assert _values(analysis.logging) == LOGGING_ANALYSIS and _values(analysis.nn) == NN_ANALYSIS
