"""Engine settings built from configs (katacli.setup.engine_settings) and the CLI helpers
that load configs (katacli.cli_support)."""
from __future__ import annotations


import pytest

from katacli.cli_support import load_config
from katacli.config import Config, ConfigError, Enabled
from katacli.game.rules import KoRule, Rules, ScoringRule, TaxRule, WhiteHandicapBonus
from katacli.setup.engine_settings import AnalysisSettings, GtpSettings, LoggingSettings, NNSettings, load_default_board_size, load_rules

from support.paths import CONFIGS as CONFIG_DIR
GTP_MINIMUM = "numSearchThreads = 2\nlogAllGTPCommunication = false\nlogSearchInfo = false\n"


def gtp_config(text: str = "rules = tromp-taylor\n") -> Config:
    return Config.from_text(GTP_MINIMUM + text, source="g.cfg", mode="gtp")


# --------------------------------------------------------------------------- rules

RULES_CASES = [
    ("rules = chinese", Rules.preset("chinese")),
    ("rules = japanese", Rules.preset("japanese")),
    ("koRule = SIMPLE\nscoringRule = AREA\nmultiStoneSuicideLegal = false",
     Rules(ko=KoRule.SIMPLE, scoring=ScoringRule.AREA, tax=TaxRule.NONE, multi_stone_suicide_legal=False)),
    ("koRule = POSITIONAL\nscoringRule = TERRITORY\nmultiStoneSuicideLegal = false",
     Rules(ko=KoRule.POSITIONAL, scoring=ScoringRule.TERRITORY, tax=TaxRule.SEKI, multi_stone_suicide_legal=False,
           komi=6.5)),
    ("koRule = SIMPLE\nscoringRule = AREA\nmultiStoneSuicideLegal = true\nhasButton = true",
     Rules(ko=KoRule.SIMPLE, has_button=True, komi=7.0)),
    ("koRule = SIMPLE\nscoringRule = AREA\nmultiStoneSuicideLegal = true\ntaxRule = ALL\nwhiteHandicapBonus = N-1"
     "\nfriendlyPassOk = true",
     Rules(ko=KoRule.SIMPLE, tax=TaxRule.ALL, white_handicap_bonus=WhiteHandicapBonus.N_MINUS_ONE,
           friendly_pass_ok=True)),
    ("koRule = SIMPLE\nscoringRule = AREA\nmultiStoneSuicideLegal = true\nwhiteBonusPerHandicapStone = 1",
     Rules(ko=KoRule.SIMPLE, white_handicap_bonus=WhiteHandicapBonus.N)),
]


@pytest.mark.parametrize("text,expected", RULES_CASES)
def test_load_rules(text, expected):
    assert load_rules(gtp_config(text + "\n")) == expected


RULES_ERRORS = [
    ("rules = chinese\nkoRule = SIMPLE",
     "cannot specify both 'rules' (g.cfg, line 4) and individual rules like 'koRule' (g.cfg, line 5)"),
    ("rules = nonsense", "Invalid value for 'rules' (g.cfg, line 4)"),
    ("koRule = SIMPLE\nscoringRule = AREA", "Missing key 'multiStoneSuicideLegal'"),
    ("", "Missing key 'koRule'"),
    ("koRule = simple\nscoringRule = AREA\nmultiStoneSuicideLegal = true", "'simple' is not one of SIMPLE"),
    ("koRule = SIMPLE\nscoringRule = TERRITORY\nmultiStoneSuicideLegal = true\nhasButton = true",
     "hasButton = true needs area scoring"),
    ("koRule = SIMPLE\nscoringRule = AREA\nmultiStoneSuicideLegal = true\nwhiteHandicapBonus = N\n"
     "whiteBonusPerHandicapStone = 1", "only one of whiteBonusPerHandicapStone and whiteHandicapBonus"),
]


@pytest.mark.parametrize("text,message", RULES_ERRORS)
def test_load_rules_errors(text, message):
    with pytest.raises(ConfigError) as info:
        load_rules(gtp_config(text + "\n"))
    assert message in str(info.value)


def test_rules_default_without_a_config_file():
    assert load_rules(Config(mode="gtp")) == Rules()


def test_load_rules_with_komi():
    cfg = gtp_config("rules = japanese\nkomi = 0.5\n")
    assert load_rules(cfg, load_komi=True).komi == 0.5
    assert load_rules(cfg).komi == 6.5
    with pytest.raises(ConfigError, match="Missing key 'komi'"):
        load_rules(gtp_config(), load_komi=True)
    with pytest.raises(ConfigError, match="'komi'"):
        load_rules(gtp_config("rules = chinese\nkomi = 0.3\n"), load_komi=True)


@pytest.mark.parametrize("text,expected", [
    ("", None),
    ("defaultBoardSize = 13", (13, 13)),
    ("defaultBoardXSize = 9\ndefaultBoardYSize = 13", (9, 13)),
    ("defaultBoardSize = 13\ndefaultBoardXSize = 9", (9, 13)),
    ("defaultBoardXSize = 9", None),
])
def test_default_board_size(text, expected):
    assert load_default_board_size(Config.from_text(text, mode="gtp")) == expected


# --------------------------------------------------------------------------- logging, NN


def test_logging_destinations_are_exclusive():
    with pytest.raises(ConfigError, match="set only one of logFile, logDir, logDirDated"):
        LoggingSettings.from_config(Config({"logDir": "a", "logFile": "b"}), "gtp")
    settings = LoggingSettings.from_config(Config({"logFile": "x.log"}), "gtp")
    assert settings.log_file == "x.log" and settings.log_dir is None and settings.log_time_stamp


@pytest.mark.parametrize("settings,thread_devices", [
    ({}, (None,)),
    ({"cudaDeviceToUse": "1"}, (1,)),
    ({"numNNServerThreadsPerModel": "2", "deviceToUse": "3", "cudaDeviceToUseThread1": "1"}, (3, 1)),
    ({"numNNServerThreadsPerModel": "2", "gpuToUseThread0": "5", "cudaGpuToUseModel0": "4"}, (4, 4)),
    ({"numNNServerThreadsPerModel": "2", "cudaDeviceToUseModel0Thread1": "7", "cudaDeviceToUseModel0": "6"}, (6, 7)),
])
def test_device_lookup_order(settings, thread_devices):
    assert NNSettings.from_config(Config(settings), "gtp").device_per_server_thread == thread_devices


def test_nn_settings_variants():
    nn = NNSettings.from_config(Config({"useFP16": "false", "cudaUseFP16": "true", "maxBoardSizeForNNBuffer": "13",
                                        "maxBoardYSizeForNNBuffer": "9"}), "gtp")
    assert nn.use_fp16 is Enabled.TRUE
    assert (nn.max_board_x_size, nn.max_board_y_size) == (13, 9)
    analysis = NNSettings.from_config(Config({"nnMaxBatchSize": "64"}), "analysis")
    assert (analysis.max_batch_size, analysis.cache_size_power_of_two, analysis.max_board_x_size) == (64, 23, 19)
    assert analysis.require_max_board_size is False


def test_other_backend_keys_are_marked_used():
    cfg = Config({"openclTunerFile": "x", "trtDeviceToUse": "1"})
    NNSettings.from_config(cfg, "gtp")
    assert cfg.unused_keys() == []


# --------------------------------------------------------------------------- engines


def test_gtp_settings_from_shipped_config():
    cfg = Config.from_file(CONFIG_DIR / "gtp_example.cfg", mode="gtp")
    settings = GtpSettings.from_config(cfg)
    assert settings.rules == Rules.preset("tromp-taylor")
    assert settings.allow_resignation and settings.resign_threshold == -0.9 and settings.resign_consec_turns == 3
    assert settings.report_winrates_as is None
    assert settings.analysis_pv_len == 13
    assert settings.has_search_limit
    assert settings.nn.max_batch_size == 8
    assert settings.logging.log_dir == "gtp_logs"
    assert settings.search_factor_when_winning == 0.4
    assert settings.cleanup_before_pass is Enabled.AUTO
    assert settings.handicap_avoid_repeated_pattern_utility == 0.005
    assert not settings.static_pda_takes_precedence


def test_gtp_settings_details():
    settings = GtpSettings.from_config(gtp_config(
        "rules = chinese\nignoreGTPAndForceKomi = 5.5\nreportAnalysisWinratesAs = white\nplayoutDoublingAdvantage = 1\n"
        "avoidRepeatedPatternUtility = 0.01\n"))
    assert settings.rules.komi == 5.5 and settings.forced_komi == 5.5
    assert settings.report_winrates_as == "W"
    assert settings.static_pda_takes_precedence
    assert settings.handicap_avoid_repeated_pattern_utility == 0.01
    assert not settings.has_search_limit


def test_gtp_requires_its_keys():
    with pytest.raises(ConfigError, match="Missing key 'logAllGTPCommunication'"):
        GtpSettings.from_config(Config.from_text("rules = chinese\nnumSearchThreads = 2\n", mode="gtp"))
    with pytest.raises(ConfigError, match="'resignThreshold'"):
        GtpSettings.from_config(gtp_config("rules = chinese\nallowResignation = false\n"))


def test_analysis_settings():
    cfg = Config.from_file(CONFIG_DIR / "analysis_example.cfg", mode="analysis")
    settings = AnalysisSettings.from_config(cfg)
    assert settings.num_analysis_threads == 2
    assert settings.report_winrates_as == "B"
    assert settings.analysis_pv_len == 15
    assert settings.logging.log_to_stderr
    assert settings.nn.max_batch_size == 64
    with pytest.raises(ConfigError, match="do not also give -analysis-threads"):
        AnalysisSettings.from_config(cfg, analysis_threads_from_command_line=4)
    without = Config.from_text("nnMaxBatchSize = 8\nnumSearchThreads = 1\n", mode="analysis")
    assert AnalysisSettings.from_config(without, analysis_threads_from_command_line=4).num_analysis_threads == 4
    with pytest.raises(ConfigError, match="Missing key 'numAnalysisThreads'"):
        AnalysisSettings.from_config(without)


# --------------------------------------------------------------------------- cli_support.load_config


def test_load_config_layers_files_and_overrides(tmp_path, capsys):
    base, extra = tmp_path / "a.cfg", tmp_path / "b.cfg"
    base.write_text("maxVisits = 500\nnumSearchThreadsPerAnalysisThread = 4\nmystery = 1\n")
    extra.write_text("maxVisits = 100\n")
    cfg = load_config([str(base), str(extra)], ["maxTime=5", "maxVisits=7"], "analysis")
    assert cfg.get("maxVisits") == 7 and cfg.get("maxTime") == 5.0
    assert cfg.get("numSearchThreads") == 4  # alias applied
    assert capsys.readouterr().err == f"WARNING: Unknown config key 'mystery' in {base}, line 3; it is ignored\n"


def test_load_config_without_file_uses_defaults():
    cfg = load_config(None, "maxVisits=3", "gtp")
    assert cfg.get("maxVisits") == 3 and cfg.get("numSearchThreads") == 1


@pytest.mark.parametrize("content,override,message", [
    (None, None, "error: Config file not found: "),
    ("maxVisits 5\n", None, "line 1: expected '=' after key 'maxVisits'"),
    ("maxVisits = 5\n", "maxVisits", "error: -override-config: expected key=value but got 'maxVisits'"),
])
def test_load_config_errors_exit_cleanly(tmp_path, capsys, content, override, message):
    path = tmp_path / "x.cfg"
    if content is not None:
        path.write_text(content)
    with pytest.raises(SystemExit) as info:
        load_config(str(path), override, "gtp")
    assert info.value.code == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and "Traceback" not in err


def test_log_files_in_a_log_dir_get_a_random_name_suffix():
    """As KataGo's: two engines started in the same second with the same process id (containers sharing a
    mounted log folder) must not append to one file."""
    import re

    from katacli.engine_log import EngineLog

    settings = LoggingSettings.from_config(Config({"logDir": "logs"}), "gtp")
    names = {EngineLog._log_path(settings) for _ in range(20)}
    assert len(names) == 20
    assert all(re.fullmatch(r"logs/[0-9]{8}-[0-9]{6}-[0-9A-F]{8}\.log", name) for name in names), names


def test_log_dir_dated_has_katagos_layout():
    # A folder named for the start time, a random name in it (scripts that collect KataGo's logs find kata's).
    import re

    from katacli.engine_log import EngineLog

    settings = LoggingSettings.from_config(Config({"logDirDated": "dd"}), "gtp")
    name = EngineLog._log_path(settings)
    assert re.fullmatch(r"dd/[0-9]{8}-[0-9]{6}/[0-9A-F]{8}\.log", name), name
