"""Unit tests for the GTP layer's pure parts: wire format, C-style argument parsing, number formatting,
analysis lines, per-move policies and dead-stone judgement."""
from __future__ import annotations

import dataclasses
import numpy as np
import pytest

from katacli.game.rules import Rules
from katacli.gtp.analyze_args import AnalyzeArgsError, parse_analyze_args
from katacli.gtp.analyze_info_lines import InfoLineFormatter, AnalyzeOptions, round_half_away
from katacli.gtp.arguments import parse_bool, parse_double, parse_int, parse_int64
from katacli.gtp.clock import canadian_or_absolute, describe, quick_game
from katacli.gtp.identity import abbreviated_model_name, version_text
from katacli.gtp.play_policy import dynamic_pda_for_white, search_factor
from katacli.gtp.protocol import EmptyCommand, clean_line, format_header, format_response, parse_command
from katacli.gtp.scoring import alive_by_ownership
from support.gtp_transcript import match_output, parse_transcript
from katacli.search.results import MoveInfo, RootInfo, SearchAnalysis

BLACK, WHITE = 1, 2


# --------------------------------------------------------------------------- wire format


@pytest.mark.parametrize("raw, cleaned", [
    ("name\n", "name"), ("  name \r\n", "name"), ("\tplay\tb\tD4\t", "play b D4"), ("# only a comment", ""),
    ("genmove b # why not", "genmove b"), ("na\x00me\x1b", "name"), ("caf\u00e9", "caf"), ("\r\n", ""),
    ("1 boardsize 9 #9x9\r", "1 boardsize 9"),
])
def test_clean_line(raw, cleaned):
    assert clean_line(raw) == cleaned


def test_parse_command_ids_and_arguments():
    assert parse_command("12 play  b   D4") == parse_command("12play b D4")
    command = parse_command("12 play  b   D4")
    assert (command.id, command.name, command.args, command.arg_text) == (12, "play", ["b", "D4"], "b D4")
    assert command.kata_args == ["", "b", "", "", "D4"]  # KataGo's single-space split, for known_command
    assert parse_command("007 name").id == 7
    assert parse_command("name").id is None
    with pytest.raises(EmptyCommand) as info:
        parse_command("99")
    assert info.value.command_id == 99



@pytest.mark.parametrize("line", ["1234567890 name", "0000000000 name", "9" * 1_000_000 + " name"])
def test_ids_of_more_than_nine_digits_are_an_error_not_a_crash(line):
    with pytest.raises(EmptyCommand) as info:
        parse_command(line)
    assert info.value.command_id is None and str(info.value).startswith("GTP id could not be parsed")
    assert parse_command("999999999 name").id == 999999999


def test_only_ascii_digits_make_an_id():
    command = parse_command("\u0663\u00b2name x")  # an Arabic-Indic three and a superscript two
    assert command.id is None and command.name == "\u0663\u00b2name"


def test_response_bytes():
    assert format_response(None, "") == "= \n\n"
    assert format_response(5, "D4") == "=5 D4\n\n"
    assert format_response(None, "illegal move", is_error=True) == "? illegal move\n\n"
    assert format_response(0, "x", is_error=True) == "?0 x\n\n"
    assert format_header(None) == "=\n" and format_header(3) == "=3\n"


# --------------------------------------------------------------------------- C++-style numbers


@pytest.mark.parametrize("text, value", [
    ("5", 5), (" -3 ", -3), ("+7", 7), ("2147483647", 2147483647), ("2147483648", None), ("1.0", None),
    ("1e3", None), ("0x10", None), ("", None), ("5 6", None), ("٣", None),
])
def test_parse_int(text, value):
    assert parse_int(text) == value


def test_parse_int64_and_bool():
    assert parse_int64("9223372036854775807") == 9223372036854775807
    assert parse_int64("9223372036854775808") is None
    assert [parse_bool(t) for t in ("true", "FALSE", " True ", "1", "yes")] == [True, False, True, None, None]


@pytest.mark.parametrize("text, value", [
    ("1", 1.0), ("1.5", 1.5), (".5", 0.5), ("5.", 5.0), ("-2e3", -2000.0), ("1e400", None), ("nan", None),
    ("inf", None), ("0x1p3", None), ("1_000", None), ("", None), ("1,5", None),
])
def test_parse_double(text, value):
    assert parse_double(text) == value


def test_round_half_away_from_zero_like_c():
    assert [round_half_away(v) for v in (0.5, 1.5, 2.5, -0.5, -2.5, 2.4999)] == [1, 2, 3, -1, -3, 2]
    assert "%g" % round_half_away(-0.2) == "-0"  # C++ prints negative zero too


# --------------------------------------------------------------------------- analysis lines


def _analysis(pla: int) -> SearchAnalysis:
    move = MoveInfo(move=(1, 1), order=0, visits=100, edge_visits=101, weight=99.5, edge_weight=99.5, winrate=0.7,
                    lcb=0.65, utility=0.4, utility_lcb=0.3, score_lead=3.25, score_selfplay=3.0, score_stdev=12.0,
                    no_result=0.0, prior=0.123456789, play_selection_value=100.0, pv=[(1, 1), None, (0, 1)],
                    pv_visits=[100, 40, 7], pv_edge_visits=[101, 40, 7], is_symmetry_of=(0, 0),
                    ownership=np.array([0.1234567, -1.0, 0.0, 0.5]), ownership_stdev=np.array([0.1, 0.2, 0.3, 0.4]))
    root = RootInfo(visits=101, weight=100.0, winrate=0.69, score_lead=3.0, score_selfplay=2.5, score_stdev=12.5,
                    utility=0.39, current_player="B" if pla == BLACK else "W")
    return SearchAnalysis(root=root, moves=[move], root_player=pla, x_size=2, y_size=2,
                          ownership=np.array([1.0, -0.25, 0.0, 0.5]), ownership_stdev=np.array([0.0, 0.1, 0.2, 0.3]))


def test_kata_analyze_line_for_black_flips_values_and_keeps_key_order():
    options = AnalyzeOptions(kata=True, root_info=True, ownership=True, moves_ownership=True, pv_visits=True)
    line = InfoLineFormatter(options, 2, 2, None).format(_analysis(BLACK))
    assert line == (
        "info move B1 visits 100 edgeVisits 101 utility -0.4 winrate 0.3 scoreMean -3.25 scoreStdev 12"
        " scoreLead -3.25 scoreSelfplay -3 prior 0.123457 lcb 0.35 utilityLcb -0.3 weight 99.5 isSymmetryOf A2"
        " order 0 pv B1 pass A1 pvVisits 100 40 7 movesOwnership -0.123457 1 -0 -0.5"
        " rootInfo visits 101 utility -0.39 winrate 0.31 scoreMean -3 scoreStdev 12.5 scoreLead -3"
        " scoreSelfplay -2.5 weight 100 ownership -1 0.25 -0 -0.5")


def test_fixed_white_perspective_and_sabaki_decimal_points():
    line = InfoLineFormatter(AnalyzeOptions(), 2, 2, "W").format(_analysis(BLACK))
    assert line.startswith("info move B1 visits 100 edgeVisits 101 utility 0.400000 winrate 0.700000 "
                           "scoreMean 3.25000 scoreStdev 12.0000")


def test_lz_analyze_integers_and_pv_cut_at_the_phase_end():
    line = InfoLineFormatter(AnalyzeOptions(lz=True, pv_edge_visits=True), 2, 2, None, pv_cutoff=lambda pv: 2
                             ).format(_analysis(WHITE))
    assert line == "info move B1 visits 100 winrate 7000 prior 1235 lcb 6500 order 0 pv B1 pass pvEdgeVisits 101 40"


def test_nothing_to_report_gives_no_line():
    empty = SearchAnalysis(root=None, moves=[], root_player=BLACK, x_size=2, y_size=2)
    assert InfoLineFormatter(AnalyzeOptions(kata=True), 2, 2, None).format(empty) is None


def test_analyze_args_player_interval_and_allow_table():
    pla, options = parse_analyze_args("kata-analyze", ["w", "25", "allow", "b", "A1,pass", "2"], BLACK, 2, 2)
    assert pla == WHITE and options.interval_seconds == 0.25 and options.kata
    assert options.avoid == {BLACK: {(1, 1): 2, (0, 0): 2, (1, 0): 2}}  # every point but A1 (and pass)
    with pytest.raises(AnalyzeArgsError):
        parse_analyze_args("lz-analyze", ["rootInfo", "true"], BLACK, 2, 2)  # kata-only key


# --------------------------------------------------------------------------- clocks, policies, scoring


def test_clock_conventions():
    # KataGo 1.17.2's kata-debug-print-tc lines for these clocks on a 9x9 board (lagBuffer 1).
    assert describe(canadian_or_absolute(300, 30, 5), 81, 0, 1.0) == (
        "originalMainTime 300 originalNumPeriods 1 numStonesPerPeriod 5 perPeriodTime 30 mainTimeLeft 300 "
        "inOvertime 0 numPeriodsLeftIncludingCurrent 1 minRecMax 0 10.8812 66.5 rrec0 10.8812 rreclimit 10.8812 "
        "rreclimit2 10.8812")
    assert canadian_or_absolute(10, 5, 0).is_effectively_unlimited()
    assert describe(canadian_or_absolute(10, 0, 0), 81, 2, 1.0) == (   # two stones on the board
        "originalMainTime 10 mainTimeLeft 10 inOvertime 0 minRecMax 0 0.0947867 0.9 rrec0 0.0947867 "
        "rreclimit 0.0947867 rreclimit2 0.0947867")
    assert describe(quick_game(), 81, 0, 1.0).startswith(
        "originalMainTime 1 originalNumPeriods 5 numStonesPerPeriod 1 perPeriodTime 5 mainTimeLeft 1 inOvertime 0 "
        "numPeriodsLeftIncludingCurrent 5 minRecMax ")


def test_search_factor_when_winning():
    # Winning for three moves in a row: think less, the more so the further past the threshold.
    assert search_factor(0.5, 0.25, 1.0, [0.9, 0.95, 1.0], WHITE) == pytest.approx(0.4)
    assert search_factor(0.5, 0.25, 1.0, [0.9, 0.95], WHITE) == 1.0
    assert search_factor(0.5, 0.25, 1.0, [-1.0, -1.0, -0.75], BLACK) == pytest.approx(0.625)


def test_dynamic_pda_in_handicap_games():
    rules = Rules.preset("chinese")
    # A 4-stone handicap on 19x19: White (disadvantaged) starts at the cap, then follows its winrate.
    start = dynamic_pda_for_white(0.0, 0.045, rules, 4, 19, 19, [], no_white_stones=True)
    assert start > 0 and start % 0.125 == 0
    assert dynamic_pda_for_white(start, 0.045, rules, 4, 19, 19, [-0.2], False) == start - 0.125
    assert dynamic_pda_for_white(0.0, 0.045, rules, 0, 19, 19, [], True) == 0.0  # even game
    assert dynamic_pda_for_white(0.0, 0.0, rules, 4, 19, 19, [], True) == 0.0  # switched off


def test_dynamic_pda_cap_rounds_half_steps_up_as_katago():
    # 2 stones, komi 5.5, no handicap bonus (stone scoring): Black 16.5 points ahead, 12.5 past the 19x19
    # threshold; 0.045 * 12.5 = 0.5625 is 4.5 steps of 0.125, which C's round() takes to 5 (Python's to 4).
    rules = dataclasses.replace(Rules.preset("stone-scoring"), komi=5.5)
    assert dynamic_pda_for_white(0.0, 0.045, rules, 2, 19, 19, [], no_white_stones=True) == 0.625


def test_dead_stones_from_ownership():
    colors = [[1, 1, 0],
              [2, 0, 0],
              [0, 0, 2]]
    white_ownership = [-0.9, -0.3, 0.0,
                       0.9, 0.0, 0.0,
                       0.0, 0.0, -0.8]
    # Black's chain averages 0.6 for Black: alive. White's corner stone is Black's: dead.
    assert alive_by_ownership(colors, white_ownership) == {(0, 0), (1, 0), (0, 1)}


# --------------------------------------------------------------------------- transcripts


def test_transcript_matching_wildcards_and_patterns():
    transcript = parse_transcript("#! model: x\n> a\n= 1\n\n> b\n=\n...\n~play [A-T]\\d+\n\n")
    assert transcript.directives == {"model": "x"}
    assert [e.send for e in transcript.exchanges] == ["a", "b"]
    assert match_output(transcript.expected_lines, "= 1\n\n=\ninfo 1\ninfo 2\nplay D4\n\n") is None
    assert match_output(transcript.expected_lines, "= 1\n\n=\nplay pass\n\n") is not None


def test_huge_numbers_are_out_of_range_not_a_crash():
    """int() refuses texts of more than 4300 digits; a 1 MB number must still be a plain "no"."""
    huge = "9" * 1_000_000
    assert parse_int(huge) is None and parse_int64("-" + huge) is None and parse_int("0" * 5000 + "7") == 7


@pytest.mark.parametrize("name, abbreviated", [
    ("g170-b6c96-s175395328-d26788732", "g170-b6c96-s175M"),
    ("kata1-b18c384nbt-s9996604416-d4316597426", "b18c384nbt-s9996M"),   # KataGo's M even past ten billion
    ("b10c128-s20000-d100", "b10c128-s20K"),
    ("b10c128-s9999-d100", "b10c128-s9999"),
    ("test-b3c48nbt-humanmeta", "test-b3c48nbt-humanmeta"),
    ("net-s-d-s1x-dx", "net-s-d-s1x-dx"),   # not step pieces: kept
])
def test_version_names_networks_as_katago_abbreviates_them(name, abbreviated):
    assert abbreviated_model_name(name) == abbreviated
    assert version_text([name]) == f"1.17.2+{abbreviated}" and version_text([]) == "1.17.2"
