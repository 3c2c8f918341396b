"""`kata analysis` query validation: every field's errors and warnings, with KataGo's messages and shapes.

Bad queries produce exactly one {"error","field","id"} line and no analysis; the engine keeps serving.
"""
from __future__ import annotations

import json

import pytest

from support.analysis import query_line, running_engine, send

BOARD_MESSAGE = "Must provide an integer from 2 to 19"
MOVES_SHAPE = 'Must be an array of pairs of the form: ["b" or "w", GTP board vertex]'
AVOID_SHAPE = "Must be a list of dicts with subfields 'player', 'moves', 'untilDepth'"
RULES_MESSAGE = ('Must specify rules string, such as "chinese" or "tromp-taylor", '
                 "or a JSON object with detailed rules parameters.")
KOMI_MESSAGE = "Must be a integer or half-integer from -400.0 to 400.0"
REPORT_MESSAGE = "Must be number of seconds from 0.001 to 1000000.0"

DROP = object()  # a field value meaning "leave the field out"

# (changes to the base query, field named by the error, message)
FIELD_ERRORS = [
    ({"boardXSize": DROP}, "boardXSize", BOARD_MESSAGE),
    ({"boardYSize": DROP}, "boardYSize", BOARD_MESSAGE),
    ({"boardXSize": 20}, "boardXSize", BOARD_MESSAGE),
    ({"boardXSize": 1}, "boardXSize", BOARD_MESSAGE),
    ({"boardYSize": 9.0}, "boardYSize", BOARD_MESSAGE),
    ({"boardYSize": "9"}, "boardYSize", BOARD_MESSAGE),
    ({"moves": DROP}, "moves", "Must specify an array of [player,location] pairs"),
    ({"moves": "B C3"}, "moves", MOVES_SHAPE),
    ({"moves": [["B", "C3", "x"]]}, "moves", MOVES_SHAPE),
    ({"moves": [["B", 3]]}, "moves", MOVES_SHAPE),
    ({"moves": [["R", "C3"]]}, "moves", "Could not parse player: R"),
    ({"moves": [["B", "Z3"]]}, "moves", "Could not parse board location: Z3"),
    ({"moves": [["B", "C6"]]}, "moves", "Could not parse board location: C6"),
    ({"moves": [["B", "C3"], ["W", "C3"]]}, "moves", "Illegal move 1: C3"),
    ({"initialStones": [["B", "pass"]]}, "initialStones", "Could not parse board location: pass"),
    ({"initialStones": {"B": "C3"}}, "initialStones", MOVES_SHAPE),
    ({"initialPlayer": "red"}, "initialPlayer", 'Must be "b" or "w"'),
    ({"initialPlayer": 1}, "initialPlayer", 'Must be "b" or "w"'),
    ({"analyzeTurns": [1]}, "analyzeTurns", "Invalid turn number: 1"),
    ({"analyzeTurns": [-1]}, "analyzeTurns", "Invalid turn number: -1"),
    ({"analyzeTurns": "0"}, "analyzeTurns", "Must specify an array of integers indicating turns to analyze"),
    ({"analyzeTurns": ["a"]}, "analyzeTurns", "Must specify an array of integers indicating turns to analyze"),
    ({"priorities": [1]}, "priorities", "Can only specify when also specifying analyzeTurns"),
    ({"priorities": "x", "analyzeTurns": [0]}, "priorities", "Must specify an array of integers indicating priorities"),
    ({"priorities": [1, 2], "analyzeTurns": [0]}, "priorities", "Must be of matching length to analyzeTurns"),
    ({"priorities": [2 ** 63 - 1], "analyzeTurns": [0]}, "priorities", f"Invalid priority: {2 ** 63 - 1}"),
    ({"rules": DROP}, "rules", RULES_MESSAGE),
    ({"rules": 5}, "rules", RULES_MESSAGE),
    ({"rules": "nonsense"}, "rules", "Could not parse rules: nonsense"),
    ({"rules": {"ko": "BAD"}}, "rules", 'Could not parse rules: {"ko":"BAD"}'),
    ({"komi": 7.3}, "komi", KOMI_MESSAGE),
    ({"komi": 401}, "komi", KOMI_MESSAGE),
    ({"komi": "7.5"}, "komi", KOMI_MESSAGE),
    ({"whiteHandicapBonus": 1}, "whiteHandicapBonus", "Must be a string"),
    ({"whiteHandicapBonus": "M"}, "whiteHandicapBonus",
     "Rules::parseWhiteHandicapBonusRule: Invalid whiteHandicapBonus rule: M"),
    ({"overrideSettings": []}, "overrideSettings", "Must be an object"),
    ({"maxVisits": 0}, "maxVisits", "Must be an integer from 1 to 2^50"),
    ({"maxVisits": 10.5}, "maxVisits", "Must be an integer from 1 to 2^50"),
    ({"analysisPVLen": 0}, "analysisPVLen", "Must be an integer from 1 to 1000"),
    ({"rootFpuReductionMax": 3}, "rootFpuReductionMax", "Must be a number from 0.0 to 2.0"),
    ({"rootPolicyTemperature": 0}, "rootPolicyTemperature", "Must be a number from 0.01 to 100.0"),
    ({"includeOwnership": 1}, "includeOwnership", "Must be a boolean"),
    ({"includeOwnershipStdev": "yes"}, "includeOwnershipStdev", "Must be a boolean"),
    ({"includeMovesOwnership": None}, "includeMovesOwnership", "Must be a boolean"),
    ({"includeMovesOwnershipStdev": 0}, "includeMovesOwnershipStdev", "Must be a boolean"),
    ({"includePolicy": "true"}, "includePolicy", "Must be a boolean"),
    ({"includePVVisits": 1}, "includePVVisits", "Must be a boolean"),
    ({"includeNoResultValue": 1}, "includeNoResultValue", "Must be a boolean"),
    ({"reportDuringSearchEvery": 0}, "reportDuringSearchEvery", REPORT_MESSAGE),
    ({"firstReportDuringSearchAfter": -1}, "firstReportDuringSearchAfter", REPORT_MESSAGE),
    ({"priority": 1.5}, "priority", "Must be a number between -2^62 and 2^62"),
    ({"priority": 2 ** 62}, "priority", "Must be a number between -2^62 and 2^62"),
    ({"priority": 1, "priorities": [1], "analyzeTurns": [0]}, "priority", "Cannot specify both priority and priorities"),
    ({"avoidMoves": [], "allowMoves": []}, "allowMoves", "Cannot specify both allowMoves and avoidMoves"),
    ({"avoidMoves": {"player": "B"}}, "avoidMoves", AVOID_SHAPE),
    ({"avoidMoves": [{"player": "B", "moves": ["C3"]}]}, "avoidMoves", AVOID_SHAPE),
    ({"avoidMoves": ["C3"]}, "avoidMoves", AVOID_SHAPE),
    ({"avoidMoves": [{"player": "X", "moves": ["C3"], "untilDepth": 1}]}, "player", 'Must be "b" or "w"'),
    ({"avoidMoves": [{"player": "B", "moves": "C3", "untilDepth": 1}]}, "moves",
     "Must be an array of GTP board vertices"),
    ({"avoidMoves": [{"player": "B", "moves": ["Q16"], "untilDepth": 1}]}, "moves",
     "Could not parse board location: Q16"),
    ({"avoidMoves": [{"player": "B", "moves": ["C3"], "untilDepth": 0}]}, "untilDepth", "Must be a positive integer"),
    ({"allowMoves": [{"player": "B", "moves": ["C3"], "untilDepth": 1}] * 3}, "allowMoves",
     "Currently allowMoves only allows at most one entry per player"),
    ({"allowMoves": [{"player": "B", "moves": ["C3"], "untilDepth": 1}] * 2}, "allowMoves",
     "Cannot specify allowMoves more than once for the same player"),
]


def _query(changes: dict, query_id: str = "bad") -> str:
    query = json.loads(query_line(query_id))
    for key, value in changes.items():
        if value is DROP:
            query.pop(key, None)
        else:
            query[key] = value
    return json.dumps(query)


def test_every_bad_field_gets_katago_error_and_the_engine_keeps_serving():
    with running_engine() as (engine, out):
        for index, (changes, field, message) in enumerate(FIELD_ERRORS):
            send(engine, _query(changes, f"bad{index}"))
        send(engine, query_line("good", maxVisits=5))
        out.wait_finals(1, "good")
    errors = [o for o in out.objects if "error" in o]
    expected = [{"error": message, "field": field, "id": f"bad{index}"}
                for index, (_, field, message) in enumerate(FIELD_ERRORS)]
    assert errors == expected
    assert [o["id"] for o in out.objects if "error" not in o] == ["good"]


# initialStones as KataGo's analysis engine places them (Board::setStone): (stones, rules, KataGo 1.17.2's
# rootInfo thisHash and currentPlayer for the position, 9x9, komi 6.5).
SETUP_STONES = [
    ([["W", "B1"], ["W", "A2"], ["B", "A1"]], "japanese", "0A0E734030A8290DD00D2B2EF74DD345", "B"),   # lone suicide: skipped
    ([["B", "A1"], ["W", "B1"], ["W", "A2"]], "japanese", "0A0E734030A8290DD00D2B2EF74DD345", "B"),   # captures A1
    ([["W", "D4"], ["B", "D4"], ["B", "E5"]], "japanese", "2EBFCB8E754DEFDB958CC68DE48C83C0", "W"),   # replaced: 2 handicap
    ([["B", "A2"], ["B", "B1"], ["W", "A1"], ["B", "B2"], ["W", "C1"], ["W", "C2"], ["W", "A3"], ["W", "B3"]],
     "chinese", "39947783455AE86808CBB93330927406", "B"),                                           # captures a group
    ([["B", "E5"], ["W", "D5"], ["W", "F5"], ["W", "E4"], ["W", "E6"], ["B", "D6"], ["B", "C5"], ["B", "D4"], ["B", "E5"]],
     "chinese", "3942240AE2B3C4433634363581DB4E43", "B"),                                           # no ko left behind
]


def test_initial_stones_are_placed_as_katago_places_them():
    """A stone that leaves stones without liberties captures them, a lone suicide is skipped, a stone
    replaces one of the other colour; the side to move follows the board that results (before, such
    set-ups -- tsumego, edited positions -- were refused)."""
    with running_engine() as (engine, out):
        for index, (stones, rules, _, _) in enumerate(SETUP_STONES):
            send(engine, query_line(f"s{index}", initialStones=stones, rules=rules, komi=6.5, boardXSize=9,
                                    boardYSize=9, maxVisits=2))
        out.wait_finals(len(SETUP_STONES))
    roots = {o["id"]: o["rootInfo"] for o in out.objects if "rootInfo" in o}
    assert [(roots[f"s{i}"]["thisHash"], roots[f"s{i}"]["currentPlayer"]) for i in range(len(SETUP_STONES))] == [
        (katago_hash, player) for _, _, katago_hash, player in SETUP_STONES]


def test_general_errors_for_lines_without_a_usable_id():
    with running_engine() as (engine, out):
        send(engine, "{not json", "[1,2]", '"text"', '{"id": 5}', '{"moves": []}', "   ", "")
    objs = out.objects
    assert len(objs) == 5
    assert objs[0]["error"].endswith("could not parse input line as json request: {not json")
    assert objs[0]["error"].startswith("[json.exception.parse_error.101] parse error at line 1, column")
    assert objs[1] == {"error": "Request line was valid json but was not an object, ignoring: [1,2]"}
    assert objs[2] == {"error": 'Request line was valid json but was not an object, ignoring: "text"'}
    assert objs[3] == objs[4] == {"error": 'Request must have a string "id" field'}
    assert all(set(o) == {"error"} for o in objs)


def test_numbers_beyond_a_double_refuse_the_whole_line_as_katago():
    """KataGo's JSON parser refuses 1e400 (or a 400-digit integer) as the line's parse error, without an id;
    Python's json read it as inf, and the query failed on a field with an error text holding 'Infinity'."""
    big_int = "1" + "0" * 5000   # past Python's 4,300-digit limit for int() too
    lines = ['{"id":"big","moves":[],"rules":{"komi":1e400},"boardXSize":9,"boardYSize":9,"maxVisits":5}',
             '{"id":"b","action":"query_version","n":' + big_int + "}"]
    with running_engine() as (engine, out):
        send(engine, *lines, '{"id":"ok","action":"query_version","n":' + "9" * 300 + ",\"f\":1e300}")
    objs = out.objects
    assert [o["error"] for o in objs[:2]] == [
        f"[json.exception.out_of_range.406] number overflow parsing '{text}' - could not parse input line as json "
        f"request: {line}" for text, line in zip(["1e400", big_int], lines)]
    assert objs[2]["id"] == "ok" and "error" not in objs[2]


# KataGo 1.17.2's answers to query lines with half a UTF-16 surrogate pair (nlohmann::json refuses them;
# Python's json would accept them and the echoed text could not be written as UTF-8).
SURROGATE_LINES = [
    ('{"id":"x","action":"query_version","note":"\\ud800"}',
     'column 50: syntax error while parsing value - invalid string: surrogate U+D800..U+DBFF must be followed by '
     'U+DC00..U+DFFF; last read: \'"\\ud800"\''),
    ('{"id":"x","action":"query_version","note":"ab\\udc00cd"}',
     'column 51: syntax error while parsing value - invalid string: surrogate U+DC00..U+DFFF must follow '
     'U+D800..U+DBFF; last read: \'"ab\\udc00\''),
    ('{"id":"x","action":"query_version","note":"\\ud800\\u0041"}',
     'column 55: syntax error while parsing value - invalid string: surrogate U+D800..U+DBFF must be followed by '
     'U+DC00..U+DFFF; last read: \'"\\ud800\\u0041\''),
]


def test_half_surrogate_pairs_are_parse_errors_and_the_engine_keeps_answering():
    with running_engine() as (engine, out):
        send(engine, *[line for line, _ in SURROGATE_LINES])
        # an escaped backslash is no escape, a whole pair is a character, a byte order mark is skipped
        send(engine, '{"id":"a","action":"query_version","note":"\\\\ud800"}',
             '{"id":"b","action":"query_version","note":"\\ud83d\\ude00"}', '\ufeff{"id":"c","action":"query_version"}')
    objs = out.objects
    assert [o["error"] for o in objs[:3]] == [
        f"[json.exception.parse_error.101] parse error at line 1, {detail} - could not parse input line as json "
        f"request: {line}" for line, detail in SURROGATE_LINES]
    assert [(o["id"], o.get("note")) for o in objs[3:]] == [("a", "\\ud800"), ("b", "\U0001f600"), ("c", None)]


def test_text_the_output_cannot_encode_is_escaped_and_writing_goes_on():
    import io

    from katacli.analysis.output import JsonLineWriter

    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    writer = JsonLineWriter(stream)
    writer.write({"id": "\ud800"})
    writer.write({"id": "next"})
    assert raw.getvalue().decode("utf-8").splitlines() == ['{"id":"\\ud800"}', '{"id":"next"}']
    assert not writer.silenced


def test_unknown_fields_and_override_keys_warn_but_the_query_runs():
    line = query_line("w", maxVists=30, overrideSettings={"cpuctExploration": 1.5, "notAParam": 1, "alsoNot": "x"})
    with running_engine() as (engine, out):
        send(engine, line)
        out.wait_finals(1, "w")
    assert out.objects[0] == {"field": "overrideSettings", "id": "w", "warning": "Unknown config params: alsoNot,notAParam"}
    assert out.objects[1] == {"field": "maxVists", "id": "w", "warning": (
        "Unexpected or unused field, do you have a typo? "
        "(set warnUnusedFields=false in the config to disable this warning)")}
    assert out.objects[2]["id"] == "w" and out.objects[2]["isDuringSearch"] is False


def test_override_keys_katago_does_not_read_per_query_warn_as_katago():
    """numSearchThreadsPerAnalysisThread is the config's name for the search threads; per query KataGo reads
    numSearchThreads only, so the config's name is an unknown param there (kata refused the whole query: both
    names set). An empty reportAnalysisWinratesAs keeps the engine's perspective (it switched to side to move)."""
    with running_engine({"numSearchThreadsPerAnalysisThread": 2, "reportAnalysisWinratesAs": "WHITE"}) as (engine, out):
        send(engine, query_line("e", maxVisits=10, overrideSettings={"numSearchThreadsPerAnalysisThread": ""}),
             query_line("t", maxVisits=10, overrideSettings={"numSearchThreadsPerAnalysisThread": 4}),
             # Black to move, White sure to win by komi: White's view says ~1, the side to move's ~0.
             query_line("p", komi=100, maxVisits=10, overrideSettings={"reportAnalysisWinratesAs": ""}))
        out.wait_finals(3)
    warnings = [o for o in out.objects if "warning" in o]   # none for the empty value, which sets nothing
    assert warnings == [{"field": "overrideSettings", "id": "t",
                         "warning": "Unknown config params: numSearchThreadsPerAnalysisThread"}]
    finals = {o["id"]: o for o in out.objects if "rootInfo" in o}
    assert set(finals) == {"e", "t", "p"}
    assert finals["p"]["rootInfo"]["winrate"] > 0.9


def test_unused_field_warnings_can_be_turned_off():
    with running_engine({"warnUnusedFields": "false"}) as (engine, out):
        send(engine, query_line("w", typo=1))
        out.wait_finals(1, "w")
    assert not any("warning" in o for o in out.objects)


@pytest.mark.parametrize("settings, message", [
    ({"cpuctExploration": "abc"}, "Could not set settings: "),
    ({"reportAnalysisWinratesAs": "PURPLE"}, "Could not set settings: "),
    ({"humanSLProfile": "rank_3d"}, "Could not set settings: WARNING: humanSLProfile is specified as config param"),
    ({"nodeTableShardsPowerOfTwo": 9}, "Could not set settings: Cannot change nodeTableShardsPowerOfTwo after"),
])
def test_bad_override_settings_are_field_errors(settings, message):
    with running_engine() as (engine, out):
        send(engine, query_line("o", overrideSettings=settings))
    assert len(out.objects) == 1
    obj = out.objects[0]
    assert obj["field"] == "overrideSettings" and obj["id"] == "o" and obj["error"].startswith(message)


def test_action_errors():
    with running_engine() as (engine, out):
        send(engine,
             '{"id":"a","action":"explode"}',
             '{"id":"t","action":"terminate"}',
             '{"id":"t2","action":"terminate","terminateId":5}',
             '{"id":"t3","action":"terminate","terminateId":"x","turnNumbers":"1"}',
             '{"id":"t4","action":"terminate_all","turnNumbers":[1,"a"]}')
    assert out.objects == [
        {"error": "'action' field must be 'query_version' or 'query_models' or 'clear_cache' or 'terminate' "
                  "or 'terminate_all'"},
        {"error": 'Requests for a terminate action must have a string "terminateId" field', "field": "terminateId",
         "id": "t"},
        {"error": 'Requests for a terminate action must have a string "terminateId" field', "field": "terminateId",
         "id": "t2"},
        {"error": "If provided, must be an array of integers indicating turns to terminate", "field": "turnNumbers",
         "id": "t3"},
        {"error": "If provided, must be an array of integers indicating turns to terminate", "field": "turnNumbers",
         "id": "t4"},
    ]


def test_rules_as_json_object_komi_and_handicap_bonus_are_accepted():
    rules = {"ko": "SIMPLE", "scoring": "TERRITORY", "tax": "SEKI", "suicide": False, "hasButton": False,
             "whiteHandicapBonus": "0", "friendlyPassOk": True}
    with running_engine() as (engine, out):
        send(engine, query_line("r1", rules=rules, komi=6),
             query_line("r2", rules="japanese", whiteHandicapBonus="N-1", komi=-3.5),
             query_line("r3", rules="koSIMPLEscoreAREAtaxNONEsui0", komi=0))
        finals = out.wait_finals(3)
    assert sorted(f["id"] for f in finals) == ["r1", "r2", "r3"]
    assert not any("error" in o or "warning" in o for o in out.objects)
