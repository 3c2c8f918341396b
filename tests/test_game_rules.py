"""katacli.game.rules against KataGo 1.17.2's rules.cpp / gtp.cpp behaviour."""
import json

import pytest

from katacli.game.rules import (
    KGS_RULES,
    PRESET_ALIASES,
    PRESETS,
    KoRule,
    Rules,
    RulesError,
    ScoringRule,
    TaxRule,
    WhiteHandicapBonus,
    format_komi,
    parse_kgs_rules,
    parse_komi,
)

from support.paths import reference_path

TT_JSON = (
    '{"friendlyPassOk":false,"hasButton":false,"ko":"POSITIONAL","scoring":"AREA",'
    '"suicide":true,"tax":"NONE","whiteHandicapBonus":"0"}'
)

# (canonical preset, kata-get-rules answer, default komi, compact string, nice name)
PRESET_CASES = [
    ("tromp-taylor", TT_JSON, 7.5, "koPOSITIONALscoreAREAtaxNONEsui1", "TrompTaylor"),
    ("chinese",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"SIMPLE","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N"}', 7.5, "koSIMPLEscoreAREAtaxNONEsui0whbNfpok1", "Chinese"),
    ("chinese-ogs",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"POSITIONAL","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N"}', 7.5, "koPOSITIONALscoreAREAtaxNONEsui0whbNfpok1", "Chinese-OGS"),
    ("chinese-kgs",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"POSITIONAL","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N"}', 7.5, "koPOSITIONALscoreAREAtaxNONEsui0whbNfpok1", "Chinese-OGS"),
    ("japanese",
     '{"friendlyPassOk":false,"hasButton":false,"ko":"SIMPLE","scoring":"TERRITORY","suicide":false,"tax":"SEKI",'
     '"whiteHandicapBonus":"0"}', 6.5, "koSIMPLEscoreTERRITORYtaxSEKIsui0", "Japanese"),
    ("korean",
     '{"friendlyPassOk":false,"hasButton":false,"ko":"SIMPLE","scoring":"TERRITORY","suicide":false,"tax":"SEKI",'
     '"whiteHandicapBonus":"0"}', 6.5, "koSIMPLEscoreTERRITORYtaxSEKIsui0", "Japanese"),
    ("stone-scoring",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"SIMPLE","scoring":"AREA","suicide":false,"tax":"ALL",'
     '"whiteHandicapBonus":"0"}', 7.5, "koSIMPLEscoreAREAtaxALLsui0fpok1", "StoneScoring"),
    ("ancient-territory",
     '{"friendlyPassOk":false,"hasButton":false,"ko":"SIMPLE","scoring":"TERRITORY","suicide":false,"tax":"ALL",'
     '"whiteHandicapBonus":"0"}', 6.5, "koSIMPLEscoreTERRITORYtaxALLsui0", "koSIMPLEscoreTERRITORYtaxALLsui0"),
    ("aga",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"SITUATIONAL","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N-1"}', 7.5, "koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1", "AGA"),
    ("bga",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"SITUATIONAL","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N-1"}', 7.5, "koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1", "AGA"),
    ("french",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"SITUATIONAL","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N-1"}', 7.5, "koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1", "AGA"),
    ("aga-button",
     '{"friendlyPassOk":true,"hasButton":true,"ko":"SITUATIONAL","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N-1"}', 7.0, "koSITUATIONALscoreAREAtaxNONEsui0button1whbN-1fpok1",
     "koSITUATIONALscoreAREAtaxNONEsui0button1whbN-1fpok1"),
    ("new-zealand",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"SITUATIONAL","scoring":"AREA","suicide":true,"tax":"NONE",'
     '"whiteHandicapBonus":"0"}', 7.0, "koSITUATIONALscoreAREAtaxNONEsui1fpok1", "NewZealand"),
    ("goe",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"POSITIONAL","scoring":"AREA","suicide":true,"tax":"NONE",'
     '"whiteHandicapBonus":"0"}', 7.5, "koPOSITIONALscoreAREAtaxNONEsui1fpok1", "koPOSITIONALscoreAREAtaxNONEsui1fpok1"),
    ("ing",
     '{"friendlyPassOk":true,"hasButton":false,"ko":"POSITIONAL","scoring":"AREA","suicide":true,"tax":"NONE",'
     '"whiteHandicapBonus":"0"}', 7.5, "koPOSITIONALscoreAREAtaxNONEsui1fpok1", "koPOSITIONALscoreAREAtaxNONEsui1fpok1"),
]

# Every spelling KataGo's parser accepts -> the preset it means.
ALIAS_CASES = [
    ("tromp-taylor", "tromp-taylor"), ("tromp_taylor", "tromp-taylor"), ("tromp taylor", "tromp-taylor"),
    ("tromptaylor", "tromp-taylor"), ("TrompTaylor", "tromp-taylor"),
    ("chinese", "chinese"), ("Chinese", "chinese"), ("CHINESE", "chinese"),
    ("chineseogs", "chinese-ogs"), ("chinese_ogs", "chinese-ogs"), ("chinese-ogs", "chinese-ogs"),
    ("Chinese-OGS", "chinese-ogs"),
    ("chinesekgs", "chinese-kgs"), ("chinese_kgs", "chinese-kgs"), ("chinese-kgs", "chinese-kgs"),
    ("japanese", "japanese"), ("Japanese", "japanese"), ("korean", "korean"), ("KOREAN", "korean"),
    ("ancientarea", "stone-scoring"), ("ancient-area", "stone-scoring"), ("ancient_area", "stone-scoring"),
    ("ancient area", "stone-scoring"), ("stonescoring", "stone-scoring"), ("stone-scoring", "stone-scoring"),
    ("stone_scoring", "stone-scoring"), ("stone scoring", "stone-scoring"), ("StoneScoring", "stone-scoring"),
    ("ancientterritory", "ancient-territory"), ("ancient-territory", "ancient-territory"),
    ("ancient_territory", "ancient-territory"), ("ancient territory", "ancient-territory"),
    ("agabutton", "aga-button"), ("aga-button", "aga-button"), ("aga_button", "aga-button"),
    ("aga button", "aga-button"),
    ("aga", "aga"), ("AGA", "aga"), ("bga", "bga"), ("french", "french"),
    ("nz", "new-zealand"), ("NZ", "new-zealand"), ("newzealand", "new-zealand"), ("new zealand", "new-zealand"),
    ("new-zealand", "new-zealand"), ("new_zealand", "new-zealand"), ("NewZealand", "new-zealand"),
    ("goe", "goe"), ("ing", "ing"),
    ("  japanese \t", "japanese"),  # trimmed
]


@pytest.mark.parametrize("name,expected_json,default_komi,compact,nice", PRESET_CASES)
def test_preset_fields_and_printing(name, expected_json, default_komi, compact, nice):
    rules = Rules.parse(name)
    assert rules == PRESETS[name]
    assert rules.to_json_string() == expected_json
    assert rules.komi == default_komi
    assert rules.to_string_no_komi() == compact
    assert rules.to_string() == compact + "komi" + format_komi(default_komi)
    assert rules.nice_name() == nice
    # The compact form reads back to the same rules (komi defaults may differ: the compact form has no name).
    assert Rules.parse(rules.to_string()) == rules
    assert Rules.parse(compact).equals_ignoring_komi(rules)


def test_every_preset_and_alias_is_covered():
    assert {case[0] for case in PRESET_CASES} == set(PRESETS)
    assert {alias for alias, _ in ALIAS_CASES if alias == alias.strip().lower()} == set(PRESET_ALIASES)


@pytest.mark.parametrize("alias,canonical", ALIAS_CASES)
def test_alias(alias, canonical):
    assert Rules.parse(alias) == PRESETS[canonical]
    assert Rules.preset(alias) == PRESETS[canonical]
    assert Rules.parse_without_komi(alias, 3.0) == PRESETS[canonical].with_komi(3.0)


@pytest.mark.needs_shared
def test_reference_presets_match_katago_output():
    path = reference_path("kata-raw-nn.jsonl")
    checked = set()
    with open(path) as f:
        for line in f:
            case = json.loads(line)
            for command in case["commands"]:
                if command.startswith("kata-set-rules "):
                    name = command[len("kata-set-rules "):]
                    rules = Rules.parse_without_komi(name, 7.5)
                    assert rules.to_json_dict() == case["rules"], name
                    assert rules.to_json_string() == json.dumps(case["rules"], sort_keys=True, separators=(",", ":"))
                    checked.add(name)
    assert checked, "no kata-set-rules commands in the reference file"


@pytest.mark.parametrize("rules,core", [
    (PRESETS["tromp-taylor"], (1, 0, 0, True, False, 0, False, 7.5)),
    (PRESETS["japanese"], (0, 1, 1, False, False, 0, False, 6.5)),
    # whiteHandicapBonus codes are the core's (N-1 = 1, N = 2), not rules.h's (N = 1, N-1 = 2).
    (PRESETS["chinese"], (0, 0, 0, False, False, 2, True, 7.5)),
    (PRESETS["aga-button"], (2, 0, 0, False, True, 1, True, 7.0)),
    (PRESETS["stone-scoring"], (0, 0, 2, False, False, 0, True, 7.5)),
    (Rules(ko=KoRule.SPIGHT), (3, 0, 0, True, False, 0, False, 7.5)),
])
def test_core_tuple_codes(rules, core):
    assert rules.to_core_tuple() == core


# ---- JSON form -------------------------------------------------------------------

JSON_CASES = [
    # (input, expected kata-get-rules, expected komi from parse)
    ("{}", TT_JSON, 7.5),
    ('{"ko":"SIMPLE"}', TT_JSON.replace("POSITIONAL", "SIMPLE"), 7.5),
    # Territory without a tax picks SEKI and komi 6.5.
    ('{"scoring":"TERRITORY"}',
     '{"friendlyPassOk":false,"hasButton":false,"ko":"POSITIONAL","scoring":"TERRITORY","suicide":true,'
     '"tax":"SEKI","whiteHandicapBonus":"0"}', 6.5),
    ('{"score":"TERRITORY","tax":"NONE"}',
     '{"friendlyPassOk":false,"hasButton":false,"ko":"POSITIONAL","scoring":"TERRITORY","suicide":true,'
     '"tax":"NONE","whiteHandicapBonus":"0"}', 6.5),
    ('{"hasButton":true}', TT_JSON.replace('"hasButton":false', '"hasButton":true'), 7.0),
    ('{"komi":5.5,"hasButton":true}', TT_JSON.replace('"hasButton":false', '"hasButton":true'), 5.5),
    # "scoring" is applied after "score" (sorted key order).
    ('{"scoring":"AREA","score":"TERRITORY"}', TT_JSON, 7.5),
    ('{"hasButton":false,"ko":"SITUATIONAL","scoring":"AREA","suicide":false,"tax":"NONE",'
     '"whiteHandicapBonus":"N-1","friendlyPassOk":true}', PRESETS["aga"].to_json_string(), 7.5),
    ('{"ko":"SPIGHT","whiteHandicapBonus":"N"}',
     '{"friendlyPassOk":false,"hasButton":false,"ko":"SPIGHT","scoring":"AREA","suicide":true,"tax":"NONE",'
     '"whiteHandicapBonus":"N"}', 7.5),
]


@pytest.mark.parametrize("text,expected_json,komi", JSON_CASES)
def test_json_form(text, expected_json, komi):
    rules = Rules.parse(text)
    assert rules.to_json_string() == expected_json
    assert rules.komi == komi


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("include_komi", [False, True])
def test_json_round_trip(name, include_komi):
    rules = PRESETS[name]
    text = rules.to_json_string(include_komi=include_komi)
    back = Rules.parse(text) if include_komi else Rules.parse_without_komi(text, rules.komi)
    assert back == rules


def test_json_with_komi_and_omitted_defaults():
    rules = PRESETS["aga-button"].with_komi(-3.0)
    assert rules.to_json_string(include_komi=True) == (
        '{"friendlyPassOk":true,"hasButton":true,"ko":"SITUATIONAL","komi":-3.0,"scoring":"AREA",'
        '"suicide":false,"tax":"NONE","whiteHandicapBonus":"N-1"}'
    )
    assert PRESETS["tromp-taylor"].to_json_string(omit_defaults=True) == (
        '{"ko":"POSITIONAL","scoring":"AREA","suicide":true,"tax":"NONE"}'
    )


BAD_RULES_CASES = [
    ("", "Could not parse rules: "),
    ("   ", "Could not parse rules:    "),  # KataGo echoes the untrimmed text
    ("foo", "Could not parse rules: foo"),
    ("chinese-ing", "Could not parse rules: chinese-ing"),
    ("{", "Could not parse rules: {"),
    ('{"ko":"simple"}', "Rules::parseKoRule: Invalid ko rule: simple"),
    ('{"scoring":"AREAS"}', "Rules::parseScoringRule: Invalid scoring rule: AREAS"),
    ('{"tax":"SOME"}', "Rules::parseTaxRule: Invalid tax rule: SOME"),
    ('{"whiteHandicapBonus":"N+1"}', "Rules::parseWhiteHandicapBonusRule: Invalid whiteHandicapBonus rule: N+1"),
    ('{"ko":1}', 'Could not parse rules: {"ko":1}'),
    ('{"suicide":"true"}', 'Could not parse rules: {"suicide":"true"}'),
    ('{"button":true}', "Unknown rules option: button"),
    ('{"komi":7.25}', "Komi value is not a half-integer or is too extreme"),
    ('{"komi":400.5}', "Komi value is not a half-integer or is too extreme"),
    ('{"komi":NaN}', 'Could not parse rules: {"komi":NaN}'),
    ("koSIMPLEscoreAREAtaxMAYBE", "Could not parse rules: koSIMPLEscoreAREAtaxMAYBE"),
    ("kosimple", "Could not parse rules: kosimple"),
]


@pytest.mark.parametrize("text,message", BAD_RULES_CASES)
def test_bad_rules(text, message):
    with pytest.raises(RulesError) as err:
        Rules.parse(text)
    assert str(err.value) == message


def test_komi_not_allowed_in_kata_set_rules():
    with pytest.raises(RulesError, match="Unknown rules option: komi"):
        Rules.parse_without_komi('{"komi":7.5}', 7.5)
    with pytest.raises(RulesError, match="Could not parse rules"):
        Rules.parse_without_komi("koSIMPLEkomi7.5", 7.5)


# ---- compact (legacy) form ---------------------------------------------------------

COMPACT_CASES = [
    ("koSIMPLE", Rules(ko=KoRule.SIMPLE)),
    ("koSIMPLEscoreTERRITORY", Rules(ko=KoRule.SIMPLE, scoring=ScoringRule.TERRITORY, tax=TaxRule.SEKI, komi=6.5)),
    ("ko SIMPLE scoring TERRITORY tax NONE", Rules(ko=KoRule.SIMPLE, scoring=ScoringRule.TERRITORY,
                                                  tax=TaxRule.NONE, komi=6.5)),
    ("koPOSITIONALscoreAREAtaxNONEsui1komi7.5", Rules()),
    ("komi-2koSITUATIONAL", Rules(ko=KoRule.SITUATIONAL, komi=-2.0)),
    ("button1", Rules(has_button=True, komi=7.0)),
    ("whbN-1", Rules(white_handicap_bonus=WhiteHandicapBonus.N_MINUS_ONE)),
    ("whbN", Rules(white_handicap_bonus=WhiteHandicapBonus.N)),
    ("whb0fpok1sui0", Rules(friendly_pass_ok=True, multi_stone_suicide_legal=False)),
    ("koSPIGHT", Rules(ko=KoRule.SPIGHT)),
]


@pytest.mark.parametrize("text,expected", COMPACT_CASES)
def test_compact_form(text, expected):
    assert Rules.parse(text) == expected


# ---- kata-set-rule ----------------------------------------------------------------

SET_RULE_CASES = [
    ("ko", "SIMPLE", "ko", KoRule.SIMPLE),
    ("ko", "situational", "ko", KoRule.SITUATIONAL),  # values are upper-cased
    ("ko", "spight", "ko", KoRule.SPIGHT),
    ("score", "TERRITORY", "scoring", ScoringRule.TERRITORY),
    ("scoring", "territory", "scoring", ScoringRule.TERRITORY),
    ("tax", "all", "tax", TaxRule.ALL),
    ("suicide", "false", "multi_stone_suicide_legal", False),
    ("suicide", "FALSE", "multi_stone_suicide_legal", False),
    ("hasButton", "true", "has_button", True),
    ("whiteHandicapBonus", "n-1", "white_handicap_bonus", WhiteHandicapBonus.N_MINUS_ONE),
    ("whiteHandicapBonus", "N", "white_handicap_bonus", WhiteHandicapBonus.N),
    ("friendlyPassOk", "True", "friendly_pass_ok", True),
]


@pytest.mark.parametrize("key,value,field_name,expected", SET_RULE_CASES)
def test_kata_set_rule(key, value, field_name, expected):
    before = PRESETS["tromp-taylor"].with_komi(6.0)
    after = before.updated(key, value)
    assert getattr(after, field_name) == expected
    assert after.komi == before.komi  # kata-set-rule never touches komi...
    if field_name != "tax":
        assert after.tax == before.tax  # ...nor re-derives tax from scoring


@pytest.mark.parametrize("key,value,message", [
    ("ko", "SUPER", "Rules::parseKoRule: Invalid ko rule: SUPER"),
    ("suicide", "yes", "could not parse bool: YES"),
    ("komi", "7.5", "Unknown rules option: komi"),
    ("hasbutton", "true", "Unknown rules option: hasbutton"),  # keys are case-sensitive
    ("whiteHandicapBonus", "1", "Rules::parseWhiteHandicapBonusRule: Invalid whiteHandicapBonus rule: 1"),
])
def test_kata_set_rule_errors(key, value, message):
    with pytest.raises(RulesError) as err:
        Rules().updated(key, value)
    assert str(err.value) == message


# ---- kgs-rules ----------------------------------------------------------------------

@pytest.mark.parametrize("kgs_name,preset", [
    ("chinese", "chinese-kgs"), ("CHINESE", "chinese-kgs"), ("aga", "aga"),
    ("japanese", "japanese"), ("new_zealand", "new-zealand"),
])
def test_kgs_rules(kgs_name, preset):
    assert parse_kgs_rules(kgs_name, 0.5) == PRESETS[preset].with_komi(0.5)
    assert KGS_RULES[kgs_name.lower()] == preset


@pytest.mark.parametrize("kgs_name", ["korean", "new-zealand", "tromp-taylor"])
def test_kgs_rules_unknown(kgs_name):
    with pytest.raises(RulesError, match="Unknown rules"):
        parse_kgs_rules(kgs_name, 7.5)


# ---- komi ----------------------------------------------------------------------------

@pytest.mark.parametrize("text,komi", [
    ("7.5", 7.5), ("7", 7.0), ("-400", -400.0), ("400", 400.0), ("0", 0.0), ("+6.5", 6.5), ("6.", 6.0),
    (".5", 0.5), ("7.50000001", 7.5), ("1e2", 100.0), (" 5.5 ", 5.5),
])
def test_parse_komi(text, komi):
    assert parse_komi(text) == komi


@pytest.mark.parametrize("text,message", [
    ("abc", "Expected single float argument for komi but got 'abc'"),
    ("7_5", "Expected single float argument for komi but got '7_5'"),
    ("nan", "Expected single float argument for komi but got 'nan'"),
    ("inf", "Expected single float argument for komi but got 'inf'"),
    ("1e39", "Expected single float argument for komi but got '1e39'"),
    ("1e400", "Expected single float argument for komi but got '1e400'"),   # beyond a double too
    ("", "Expected single float argument for komi but got ''"),
    ("400.5", "unacceptable komi"),
    ("-401", "unacceptable komi"),
    ("7.25", "komi must be an integer or half-integer"),
    ("0.1", "komi must be an integer or half-integer"),
])
def test_bad_komi(text, message):
    with pytest.raises(RulesError) as err:
        parse_komi(text)
    assert str(err.value) == message


@pytest.mark.parametrize("komi", [7.25, 400.5, -1000.0, float("nan"), float("inf")])
def test_rules_refuse_bad_komi(komi):
    with pytest.raises(RulesError, match="Komi value"):
        Rules(komi=komi)


@pytest.mark.parametrize("komi,text", [(7.5, "7.5"), (7.0, "7"), (-0.5, "-0.5"), (0.0, "0"), (-400.0, "-400")])
def test_format_komi(komi, text):
    assert format_komi(komi) == text


@pytest.mark.parametrize("rules,is_integer", [
    (Rules(komi=7.5), False), (Rules(komi=7.0), True),
    (Rules(komi=7.0, has_button=True), False), (Rules(komi=7.5, has_button=True), True),
])
def test_game_result_will_be_integer(rules, is_integer):
    assert rules.game_result_will_be_integer() == is_integer


def test_matching_presets():
    assert PRESETS["aga"].matching_presets() == ["aga", "bga", "french"]
    assert Rules(ko=KoRule.SPIGHT).matching_presets() == []


@pytest.mark.parametrize("kwargs", [{"ko": 7}, {"tax": -1}, {"has_button": 1}, {"friendly_pass_ok": "yes"}])
def test_rules_refuse_bad_fields(kwargs):
    with pytest.raises(RulesError):
        Rules(**kwargs)


@pytest.mark.parametrize("text", ["[" * 10_000 + "]" * 10_000, '{"a":' * 10_000 + "1" + "}" * 10_000,
                                  '{"komi":' + "9" * 1_000_000 + "}"])
def test_hostile_json_rules_are_refused_cleanly(text):
    with pytest.raises(RulesError, match="Could not parse rules"):
        Rules.parse(text)
