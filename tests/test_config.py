"""The .cfg parser, typed access, overrides and warnings (katacli.config)."""
from __future__ import annotations

import gzip
import os
import io
import re

import pytest

from katacli.config import Config, ConfigError, Enabled, check_config_file, parse_config_text, parse_override_string

# --------------------------------------------------------------------------- line syntax

GOOD_LINES = [
    # (line, expected key, expected value)
    ("maxVisits = 500", "maxVisits", "500"),
    ("maxVisits=500", "maxVisits", "500"),
    ("   maxVisits\t=\t500   ", "maxVisits", "500"),
    ("maxVisits = 500  # trailing comment", "maxVisits", "500"),
    ("maxVisits = 500# no space before comment", "maxVisits", "500"),
    ("logDir = my logs", "logDir", "my logs"),
    ('logDir = "a # b"', "logDir", "a # b"),
    ('logDir = "  padded  "  # comment after quotes', "logDir", "  padded  "),
    (r'logDir = "say \"hi\" \\ back"', "logDir", 'say "hi" \\ back'),
    ("cuda-key_2 = x", "cuda-key_2", "x"),
    ("bSizes = 9, 13,19", "bSizes", "9, 13,19"),
    ("rules = tromp-taylor\r", "rules", "tromp-taylor"),
]


@pytest.mark.parametrize("line,key,value", GOOD_LINES)
def test_good_lines(line, key, value):
    assert parse_config_text(line, "t.cfg") == [(key, value, 1)]


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment", "   # indented comment", "\t\n#x = 1\n"])
def test_lines_without_settings(text):
    assert parse_config_text(text, "t.cfg") == []


BAD_LINES = [
    # (line, fragment of the error message)
    ("maxVisits 500", "expected '=' after key 'maxVisits'"),
    ("maxVisits", "expected '=' after key 'maxVisits'"),
    ("maxVisits # comment", "expected '=' after key 'maxVisits'"),
    ("max.Visits = 5", "character '.' is not allowed in a key"),
    ("= 5", "expected a key"),
    ("maxVisits =", "empty value"),
    ("maxVisits =   # nothing", "empty value"),
    ('logDir = ""', "empty value"),
    ('logDir = "unterminated', "no closing"),
    ('logDir = "a" b', "only a comment may follow a quoted value"),
    ('logDir = "ends with backslash\\', "backslash at the end"),
    ("@define x", "unsupported @ directive '@define'"),
    ("@include", "unsupported @ directive"),
    ("@include   # nothing", "unsupported @ directive"),
]


@pytest.mark.parametrize("line,message", BAD_LINES)
def test_bad_lines_name_file_and_line(line, message):
    text = "# header\nnumSearchThreads = 4\n" + line + "\n"
    with pytest.raises(ConfigError) as info:
        parse_config_text(text, "bad.cfg")
    assert "bad.cfg, line 3" in str(info.value)
    assert message in str(info.value)


def test_lines_end_at_newlines_only_as_katago_reads_them():
    """A Unicode line separator (or a form feed) inside a comment does not start a new setting line; a
    carriage return before the newline is whitespace."""
    text = "# a tip from a forum:\u2028 keep visits low\x0c too\nmaxVisits = 5\r\n# last\u0085 line\n"
    assert parse_config_text(text, "t.cfg") == [("maxVisits", "5", 2)]


def test_duplicate_key_is_an_error_naming_both_lines():
    with pytest.raises(ConfigError, match=r"dup.cfg, line 4: key 'maxVisits' was already set on line 1"):
        parse_config_text("maxVisits = 1\nmaxTime = 2\n\nmaxVisits = 3\n", "dup.cfg")


def test_keys_are_case_sensitive():
    entries = parse_config_text("maxVisits = 1\nmaxvisits = 2\n", "t.cfg")
    assert [key for key, _, _ in entries] == ["maxVisits", "maxvisits"]


# --------------------------------------------------------------------------- files


def test_from_file_records_origins(tmp_path):
    path = tmp_path / "gtp.cfg"
    path.write_text("# c\nmaxVisits = 500\n\nnumSearchThreads = 4\n")
    cfg = Config.from_file(path, mode="gtp")
    assert cfg.as_dict() == {"maxVisits": "500", "numSearchThreads": "4"}
    assert cfg.origin("numSearchThreads") == f"{path}, line 4"


def test_later_files_override_earlier_ones(tmp_path):
    base, extra = tmp_path / "base.cfg", tmp_path / "extra.cfg"
    base.write_text("maxVisits = 500\nnumSearchThreads = 4\n")
    extra.write_text("maxVisits = 50\n")
    cfg = Config.from_files([base, extra])
    assert cfg.get_int("maxVisits") == 50
    assert cfg.get_int("numSearchThreads") == 4
    assert cfg.origin("maxVisits") == f"{extra}, line 1"


@pytest.mark.parametrize("make_path,message", [
    (lambda d: d / "missing.cfg", "Config file not found"),
    (lambda d: d, "is a directory"),
    (lambda d: "", "Config file not found: the -config value is empty"),   # a GUI's empty config field
])
def test_unreadable_files(tmp_path, make_path, message):
    with pytest.raises(ConfigError, match=message):
        Config.from_file(make_path(tmp_path))


def test_non_utf8_bytes_pass_in_comments_and_file_names_only(tmp_path):
    path = tmp_path / "latin1.cfg"
    path.write_bytes(b"# r\xe9glages de caf\xe9\nmaxVisits = 10  # caf\xe9\n")   # KataGo reads bytes: comments pass
    assert Config.from_file(path, mode="gtp").get("maxVisits") == 10
    # A file or folder name (a Windows user's Notepad-saved config): the system gets the same bytes, as from KataGo.
    path.write_bytes(b"logDir = caf\xe9\n")
    log_dir = Config.from_file(path, mode="gtp").get("logDir")
    if os.name != "nt":
        assert os.fsencode(log_dir) == b"caf\xe9"
    path.write_bytes(b"botName = caf\xe9\n")   # text that is shown or written into SGFs must be UTF-8
    with pytest.raises(ConfigError, match=r"latin1\.cfg, line 1: the value of 'botName' is not valid UTF-8"):
        Config.from_file(path)


def test_a_byte_order_mark_before_the_first_key_is_read_past(tmp_path):
    # Notepad's "UTF-8 with BOM": the first key read as "\ufeffmaxVisits" and the file was refused.
    path = tmp_path / "notepad.cfg"
    path.write_bytes(b"\xef\xbb\xbfmaxVisits = 10\nbotName = caf\xc3\xa9\n")
    config = Config.from_file(path, mode="gtp")
    assert config.get("maxVisits") == 10 and config.as_dict()["botName"] == "café"


@pytest.mark.parametrize("text, mode", [
    ("debugSkipNeuralNet = true", "gtp"),          # KataGo: a random network
    ("requireMaxBoardSize = true", "analysis"),    # KataGo: refuses queries on smaller boards
])
def test_keys_katacli_cannot_act_on_are_warned_about(text, mode):
    cfg = Config.from_text(text, source="x.cfg", mode=mode)
    stream = io.StringIO()
    assert cfg.check_unsupported_keys(stream) == [text.split()[0]] and "has no effect" in stream.getvalue()


@pytest.mark.parametrize("content", [gzip.compress(b"maxVisits = 10\n"), b"maxVisits = 10\n\x00\x01\x02\n"])
def test_binary_file_is_refused_in_one_line(tmp_path, content):
    path = tmp_path / "model.cfg"
    path.write_bytes(content)
    with pytest.raises(ConfigError, match="is a binary file, not a text config") as caught:
        check_config_file(path)
    assert "\n" not in str(caught.value)


def test_check_config_file_returns_the_entries(tmp_path):
    path = tmp_path / "ok.cfg"
    path.write_text("# comment\nmaxVisits = 10\n")
    assert check_config_file(path) == [("maxVisits", "10", f"{path}, line 2")]


def test_include_reads_the_named_file_in_place_as_katago_does(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "search.cfg").write_text('numSearchThreads = 2\nmaxVisits = 20\n@include = "more.cfg"\n')
    (tmp_path / "sub" / "more.cfg").write_text("ponderingEnabled = true\n")
    main = tmp_path / "main.cfg"
    main.write_text("maxVisits = 10\n@include sub/search.cfg   # relative to this file\nlagBuffer = 2\n")
    cfg = Config.from_file(main, mode="gtp")
    assert cfg.get("maxVisits") == 20 and cfg.origin("maxVisits") == f"{tmp_path / 'sub' / 'search.cfg'}, line 2"
    assert cfg.get("numSearchThreads") == 2 and cfg.get("ponderingEnabled") is True   # nested, relative
    assert cfg.get("lagBuffer") == 2.0 and cfg.origin("lagBuffer") == f"{main}, line 3"
    for text, message in [("@include /etc/other.cfg\n", "relative to this file"),
                          ("@include nothere.cfg\n", "nothere.cfg is not a file"),
                          ("@include main.cfg\n", "included twice (or includes itself)")]:
        main.write_text(text)
        with pytest.raises(ConfigError, match=re.escape(message)):
            Config.from_file(main)
    with pytest.raises(ConfigError, match="@include needs a config file"):
        Config.from_text("@include x.cfg\n")


def test_a_long_bad_line_is_quoted_short(tmp_path):
    path = tmp_path / "long.cfg"
    path.write_text("x" * 5000 + "\n")
    with pytest.raises(ConfigError) as caught:
        check_config_file(path)
    assert len(str(caught.value)) < 400


# --------------------------------------------------------------------------- typed access


def cfg_of(**values: str) -> Config:
    return Config(values, source="t.cfg")


TYPED_OK = [
    # (getter, raw text, kwargs, expected)
    ("get_int", "42", {}, 42),
    ("get_int", " +7 ", {}, 7),
    ("get_int", "-3", {"minimum": -5, "maximum": 5}, -3),
    ("get_float", "0.25", {}, 0.25),
    ("get_float", "1e20", {}, 1e20),
    ("get_float", ".5", {}, 0.5),
    ("get_float", "3.", {}, 3.0),
    ("get_float", "-2", {"minimum": -3.0}, -2.0),
    ("get_bool", "true", {}, True),
    ("get_bool", "FALSE", {}, False),
    ("get_bool", "True", {}, True),
    ("get_enabled", "auto", {}, Enabled.AUTO),
    ("get_enabled", "Yes", {}, Enabled.TRUE),
    ("get_enabled", "0", {}, Enabled.FALSE),
    ("get_player", "white", {}, "W"),
    ("get_player", "B", {}, "B"),
    ("get_str", "AREA", {"choices": ["AREA", "TERRITORY"]}, "AREA"),
    ("get_str", "sidetomove", {"choices": ["BLACK", "SIDETOMOVE"], "ignore_case": True}, "SIDETOMOVE"),
    ("get_list_of_ints", "7, 9,19", {"minimum": 2, "maximum": 19}, [7, 9, 19]),
    ("get_list_of_floats", "1,2.5, 35", {}, [1.0, 2.5, 35.0]),
    ("get_list_of_strings", "a, b ,,c", {}, ["a", "b", "c"]),
    ("get_list_of_strings", "SIMPLE,POSITIONAL", {"choices": ["SIMPLE", "POSITIONAL"]}, ["SIMPLE", "POSITIONAL"]),
    ("get_list_of_bools", "false, true", {}, [False, True]),
    ("get_int_pairs", "9-9, 13-19", {"minimum": 2, "maximum": 19}, [(9, 9), (13, 19)]),
]


@pytest.mark.parametrize("getter,text,kwargs,expected", TYPED_OK)
def test_typed_getters(getter, text, kwargs, expected):
    cfg = cfg_of(k=text)
    assert getattr(cfg, getter)("k", **kwargs) == expected
    assert "k" in cfg.used_keys()


TYPED_BAD = [
    # (getter, raw text, kwargs, message fragment)
    ("get_int", "1.5", {}, "'1.5' is not an integer"),
    ("get_int", "0x10", {}, "is not an integer"),
    ("get_int", "1e3", {}, "is not an integer"),
    ("get_int", "0", {"minimum": 1, "maximum": 10}, "0 is out of range, must be between 1 and 10"),
    ("get_int", "11", {"maximum": 10}, "must be at most 10"),
    ("get_float", "abc", {}, "'abc' is not a number"),
    ("get_float", "nan", {}, "is not a number"),
    ("get_float", "inf", {}, "is not a number"),
    ("get_float", "1_000", {}, "is not a number"),
    ("get_float", "-0.5", {"minimum": 0.0, "maximum": 1.0}, "-0.5 is out of range, must be between 0 and 1"),
    ("get_bool", "yes", {}, "'yes' is not a boolean (use true or false)"),
    ("get_bool", "1", {}, "is not a boolean"),
    ("get_enabled", "maybe", {}, "is not true, false or auto"),
    ("get_player", "red", {}, "is not a player"),
    ("get_str", "area", {"choices": ["AREA", "TERRITORY"]}, "'area' is not one of AREA, TERRITORY"),
    ("get_list_of_ints", "9,,13", {}, "'' is not an integer"),
    ("get_list_of_ints", "9,20", {"maximum": 19}, "20 is out of range"),
    ("get_list_of_bools", "true,nope", {}, "'nope' is not a boolean"),
    ("get_int_pairs", "9x9", {}, "'9x9' is not a pair"),
]


@pytest.mark.parametrize("getter,text,kwargs,message", TYPED_BAD)
def test_typed_getter_errors_name_key_origin_and_value(getter, text, kwargs, message):
    cfg = cfg_of(someKey=text)
    with pytest.raises(ConfigError) as info:
        getattr(cfg, getter)("someKey", **kwargs)
    text_of_error = str(info.value)
    assert text_of_error.startswith("Invalid value for 'someKey' (t.cfg): ")
    assert message in text_of_error


def test_missing_key_with_and_without_default():
    cfg = cfg_of()
    assert cfg.get_int("maxVisits", 5) == 5
    assert cfg.get_str("logDir", None) is None
    with pytest.raises(ConfigError, match="Missing key 'maxVisits' in t.cfg"):
        cfg.get_int("maxVisits")


# --------------------------------------------------------------------------- registry-driven access


def test_get_uses_registry_type_range_and_default():
    cfg = Config({"maxVisits": "500", "rootNoiseEnabled": "true"}, mode="gtp")
    assert cfg.get("maxVisits") == 500
    assert cfg.get("rootNoiseEnabled") is True
    assert cfg.get("lcbStdevs") == 5.0
    # derived from another key's value
    assert cfg.get("rootFpuReductionMax") == 0.0
    with pytest.raises(KeyError):
        cfg.get("notARealKey")


def test_get_range_error_comes_from_registry():
    cfg = Config({"lcbStdevs": "20"}, source="gtp.cfg", mode="gtp")
    with pytest.raises(ConfigError, match=r"'lcbStdevs' \(gtp.cfg\): 20 is out of range, must be between 1 and 12"):
        cfg.get("lcbStdevs")


def test_per_mode_bounds():
    cfg = Config({"analysisPVLen": "500"})
    assert cfg.get("analysisPVLen", "gtp") == 500
    with pytest.raises(ConfigError, match="between 1 and 100"):
        cfg.get("analysisPVLen", "analysis")


def test_required_keys_only_enforced_for_real_configs():
    assert Config(mode="gtp").get("numSearchThreads") == 1
    with pytest.raises(ConfigError, match="Missing key 'numSearchThreads' in g.cfg; the gtp command needs it"):
        Config.from_text("maxVisits = 5", source="g.cfg", mode="gtp").get("numSearchThreads")
    # not required by benchmark
    assert Config.from_text("maxVisits = 5", mode="benchmark").get("numSearchThreads") == 1


def test_float32_keys_are_rounded():
    cfg = Config({"nnPolicyTemperature": "0.9"})
    assert cfg.get("nnPolicyTemperature") == pytest.approx(0.9, abs=1e-7)
    assert cfg.get("nnPolicyTemperature") != 0.9


def test_family_keys_parse_with_their_template():
    cfg = Config({"cudaDeviceToUseThread1": "2", "avoidSgf2PatternUtility": "0.001", "useFP16-0": "false"})
    assert cfg.get("cudaDeviceToUseThread1") == 2
    assert cfg.get("avoidSgf2PatternUtility") == 0.001
    assert cfg.get("useFP16-0") is Enabled.FALSE


# --------------------------------------------------------------------------- overrides

OVERRIDE_PARSING = [
    ("maxVisits=5", {"maxVisits": "5"}),
    (" maxVisits = 5 , numSearchThreads=8 ", {"maxVisits": "5", "numSearchThreads": "8"}),
    ("maxVisits=5,,", {"maxVisits": "5"}),
    ("", {}),
    ("logDir=a=b", {"logDir": "a=b"}),
    ("maxVisits=5,maxVisits=6", {"maxVisits": "6"}),
    ("maxTime=", {"maxTime": ""}),
]


@pytest.mark.parametrize("text,expected", OVERRIDE_PARSING)
def test_parse_override_string(text, expected):
    assert parse_override_string(text) == expected


@pytest.mark.parametrize("text,message", [
    ("maxVisits", "expected key=value but got 'maxVisits'"),
    ("maxVisits=5, oops", "expected key=value but got 'oops'"),
    ("=5", "missing key"),
    ("lrSchedule=(0,1.0),(128,0.5)", r"got '1.0\)' \(values are split at commas here, as in KataGo: a value with "
                                     r"commas, such as lrSchedule's, goes in a config file\)"),
])
def test_bad_override_strings(text, message):
    with pytest.raises(ConfigError, match=message):
        parse_override_string(text)


def test_overrides_replace_add_and_remove():
    cfg = Config.from_text("maxVisits = 500\nmaxTime = 10\n", source="g.cfg")
    cfg.apply_overrides("maxVisits=50, numSearchThreads=8, maxTime=")
    assert cfg.as_dict() == {"maxVisits": "50", "numSearchThreads": "8"}
    assert cfg.origin("maxVisits") == "-override-config"

    bad = Config.from_text("maxVisits = 5", source="g.cfg")
    bad.apply_overrides("maxVisits=zero")
    with pytest.raises(ConfigError, match=r"'maxVisits' \(-override-config\): 'zero' is not an integer"):
        bad.get("maxVisits")


@pytest.mark.parametrize("config_text,override,remaining", [
    ("rules = japanese\n", "koRule=SIMPLE", {"koRule"}),
    ("koRule = SIMPLE\nscoringRule = AREA\nmaxVisits = 5\n", "rules=chinese", {"rules", "maxVisits"}),
    ("rules = japanese\n", "maxVisits=5", {"rules", "maxVisits"}),
])
def test_rules_overrides_drop_the_other_style(config_text, override, remaining):
    cfg = Config.from_text(config_text)
    cfg.apply_overrides(override)
    assert set(cfg.keys()) == remaining


def test_alias_for_analysis_threads():
    cfg = Config({"numSearchThreadsPerAnalysisThread": "16"}, mode="analysis")
    cfg.apply_mode_aliases()
    assert cfg.get("numSearchThreads") == 16
    both = Config({"numSearchThreadsPerAnalysisThread": "16", "numSearchThreads": "2"}, source="a.cfg")
    with pytest.raises(ConfigError, match="cannot set both"):
        both.apply_mode_aliases("analysis")


# --------------------------------------------------------------------------- warnings and usage


def test_unknown_keys_warn_once_each_with_suggestion(capsys):
    cfg = Config.from_text("maxVisit = 5\nnumSearchThreads = 2\nfrobnicate = 1\n", source="g.cfg")
    assert cfg.warn_unknown_keys() == ["maxVisit", "frobnicate"]
    err_lines = capsys.readouterr().err.splitlines()
    assert err_lines == [
        "WARNING: Unknown config key 'maxVisit' in g.cfg, line 1 (did you mean 'maxVisits'?); it is ignored",
        "WARNING: Unknown config key 'frobnicate' in g.cfg, line 3; it is ignored",
    ]


def test_known_keys_and_other_backend_keys_do_not_warn():
    text = "maxVisits = 5\ncudaUseFP16 = auto\nopenclTunerFile = x\ntrtDeviceToUseThread0 = 1\nmetalUseFP16 = true\n"
    stream = io.StringIO()
    assert Config.from_text(text).warn_unknown_keys(stream) == []
    assert stream.getvalue() == ""


def test_used_and_unused_keys():
    cfg = Config.from_text("maxVisits = 5\nmaxTime = 3\nlogDir = x\n")
    cfg.get("maxVisits")
    cfg.mark_used("logDir")
    assert cfg.unused_keys() == ["maxTime"]
    cfg.mark_used_with_prefix("max")
    assert cfg.unused_keys() == []


def test_copy_is_independent():
    cfg = Config.from_text("maxVisits = 5\n")
    clone = cfg.copy()
    clone.apply_overrides("maxVisits=6")
    assert cfg.get_int("maxVisits") == 5 and clone.get_int("maxVisits") == 6


def test_a_huge_integer_is_out_of_range_not_a_crash():
    cfg = Config({"maxVisits": "9" * 5000, "numSearchThreads": "0" * 5000 + "4"}, mode="gtp")
    with pytest.raises(ConfigError, match="out of range, must be between 1 and"):
        cfg.get("maxVisits")
    with pytest.raises(ConfigError, match="out of range$"):
        cfg.get_int("maxVisits")
    assert cfg.get("numSearchThreads") == 4


def test_unused_keys_are_warned_as_katago_does():
    # KataGo's warnUnusedKeys: a known key the command never read (another command's); unknown keys have
    # their own warning, and read keys none.
    cfg = Config.from_text("maxVisits = 10\nnumGameThreads = 4\nmaxVisitz = 3\n", source="my.cfg")
    cfg.get("maxVisits", int)
    assert cfg.unused_key_warnings("kata gtp") == [
        "WARNING: Unused key 'numGameThreads' in my.cfg, line 2: kata gtp does not use it here"]


def test_gtp_warns_about_another_commands_keys():
    from support.gtp import make_engine

    _, _, err = make_engine(override="numGameThreads=4,numAnalysisThreads=2,maxVisits=5")
    warned = [line for line in err.getvalue().splitlines() if "Unused key" in line]
    assert len(warned) == 2 and "'numAnalysisThreads'" in warned[0] and "'numGameThreads'" in warned[1]


def test_every_example_config_ships_with_the_package():
    # `kata selfplay` without -config reads selfplay_example.cfg: an installed katacli carries the examples.
    from katacli.example_configs import example_config
    from support.paths import REPO

    for path in sorted((REPO / "configs").glob("*.cfg")):
        found = example_config(path.name)
        assert found is not None and found.read_text() == path.read_text(), path.name
    assert example_config("no_such_example.cfg") is None
