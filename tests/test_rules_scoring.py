"""Final scores under every ruleset family: area vs territory, seki and group tax,
dead stones, handicap bonus, the button and komi.

Diagrams: 'X' black, 'O' white, '.' empty; the first row is the top (y = 0),
points are (x, y). Two sources of expected numbers:

* hand counts from the rules (each table row's comment shows the count), and
* KataGo 1.17.2's own rule tests (cpp/tests/testrules.cpp), re-expressed as
  move sequences with the score KataGo reports if the game ended after each step.

Score conventions (KataGo's): white minus black, komi included. Area scoring
counts stones plus empty regions reached by one colour only. Territory scoring
counts territory plus prisoners; the core does it as "area minus stones played",
so set-up stones count as moves already made.
"""
import numpy as np
import pytest

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli.game.rules import KoRule, Rules, ScoringRule, TaxRule, WhiteHandicapBonus

B, W = 1, 2
SCORE = "score"                 # marker in a move sequence: check the score if the game ended here
MAX_PASSES_TO_END = 6           # territory scoring: main phase and two encore phases, two passes each

AREA_PRESETS = ("tromp-taylor", "chinese", "chinese-ogs", "chinese-kgs", "aga", "bga", "french", "goe", "ing")


def preset_rules(name, komi=None):
    rules = Rules.preset(name)
    return (rules if komi is None else rules.with_komi(komi)).to_core_tuple()


def custom_rules(ko=KoRule.POSITIONAL, scoring=ScoringRule.AREA, tax=TaxRule.NONE, suicide=False,
                 button=False, whb=WhiteHandicapBonus.ZERO, komi=0.5):
    return Rules(ko, scoring, tax, suicide, button, whb, False, komi).to_core_tuple()


def state_from(diagram, rules, next_player=B):
    return GameState(board=GoBoard.from_diagram(diagram), rules=rules, next_player=next_player)


def pass_until_finished(state):
    """Pass for whoever is to move until the game ends; returns the number of passes."""
    passes = 0
    while not state.is_game_finished:
        assert passes < MAX_PASSES_TO_END, "passing did not end the game"
        state.play(None, state.next_player)
        passes += 1
    return passes


def score_if_game_ended_now(state):
    """Final score after both sides pass out, checked against scoring the position directly."""
    by_passing = state.copy()
    pass_until_finished(by_passing)
    directly = state.copy()
    directly.end_and_score_now()
    assert directly.final_white_minus_black_score == by_passing.final_white_minus_black_score
    assert by_passing.is_scored and not by_passing.is_no_result
    return by_passing.final_white_minus_black_score


def replay_and_score(state, steps):
    """Play steps (moves and SCORE markers) and return the scores taken at the markers."""
    scores = []
    for step in steps:
        if step == SCORE:
            scores.append(score_if_game_ended_now(state))
        else:
            player, xy = step
            assert state.is_legal(xy, player), f"{step} should be legal"
            state.play(xy, player)
    return scores


def expected_winner(score):
    return W if score > 0 else B if score < 0 else 0


# ---- hand-counted finished positions under each preset -------------------------------

# Black: two separate two-eyed groups (6 stones + 2 eyes each). White: one group of 9
# stones owning the 10 points on the right. No dame, no seki, nothing in atari.
#   area      W 9+10 = 19, B 2*(6+2) = 16            -> +3
#   territory W 10, B 2*2 = 4                        -> +6
#   group tax (TAX_ALL) 2 points per living group: B pays 4, W pays 2 -> +2 more
TWO_BLACK_GROUPS = """
    .X.XO..
    XXXXO..
    OOOOO..
    XXXXO..
    .X.XO..
"""

# A dead white stone at (3, 0) inside black's pass-alive two-point eye. Black (7 stones)
# is pass-alive; white's big chain owns the 17 empty points of the open area.
#   area      W 8+17 = 25, B 7+3 = 10 (the dead stone counts as black area) -> +15
#   territory W 17, B (0,0),(2,0),(3,0) + 1 prisoner = 4                    -> +13
DEAD_STONE_IN_PASS_ALIVE_EYE = """
    .X.OXO.
    XXXXXO.
    OOOOOO.
    .......
    .......
"""

# Clean split with one dame at (2, 4) touching both sides.
#   area             B 7+4 = 11, W 6+7 = 13          -> +2
#   territory        W 7, B 4                        -> +3
#   tax SEKI/ALL: an area touching dame is treated as seki and scores no territory:
#   area             B 7 stones, W 6 stones          -> -1
#   territory        nothing                         ->  0
ONE_DAME = """
    .XO..
    .XO..
    XXOO.
    .XXO.
    .X.O.
"""

# A seki: white's inner group (9 stones, eye at (3,0)) and black's inner group (9 stones,
# eye at (7,0)) share the liberty (5,1); whoever fills it gets captured. The outer
# walls (black 4 stones, eyes (0,0) (0,2); white 7 stones, eyes (11,0) (11,2)) are pass-alive.
#   area TAX_NONE    B 13+3 = 16, W 16+3 = 19        -> +3 (seki eyes count)
#   area TAX_SEKI    B 13+2 = 15, W 16+2 = 18        -> +3 (seki eyes (3,0), (7,0) do not)
#   territory NONE   B 3, W 3                        ->  0
#   territory SEKI   B 2, W 2                        ->  0
SEKI_WITH_EYES = """
    .XO.OOX.XOO.
    XXOOO.XXXOOO
    .XOOOXXXXOO.
"""
SEKI_EYES = {(3, 0): W, (7, 0): B}
SEKI_SHARED_LIBERTY = (5, 1)

PRESET_SCORE_CASES = (
    # (position, preset, expected final score: board score + komi)
    [(TWO_BLACK_GROUPS, name, 3 + 7.5) for name in AREA_PRESETS]
    + [
        (TWO_BLACK_GROUPS, "new-zealand", 3 + 7.0),
        (TWO_BLACK_GROUPS, "aga-button", 3 + 7.0 - 0.5),   # black passes first and takes the button
        (TWO_BLACK_GROUPS, "stone-scoring", 3 + 2 + 7.5),
        (TWO_BLACK_GROUPS, "japanese", 6 + 6.5),
        (TWO_BLACK_GROUPS, "korean", 6 + 6.5),
        (TWO_BLACK_GROUPS, "ancient-territory", 6 + 2 + 6.5),
    ]
    + [(DEAD_STONE_IN_PASS_ALIVE_EYE, name, 15 + 7.5) for name in AREA_PRESETS + ("stone-scoring",)]
    + [
        (DEAD_STONE_IN_PASS_ALIVE_EYE, "new-zealand", 15 + 7.0),
        (DEAD_STONE_IN_PASS_ALIVE_EYE, "japanese", 13 + 6.5),
        (DEAD_STONE_IN_PASS_ALIVE_EYE, "ancient-territory", 13 + 6.5),
    ]
    + [(ONE_DAME, name, 2 + 7.5) for name in AREA_PRESETS]
    + [
        (ONE_DAME, "stone-scoring", -1 + 7.5),
        (ONE_DAME, "japanese", 0 + 6.5),
        (ONE_DAME, "ancient-territory", 0 + 6.5),
    ]
    + [(SEKI_WITH_EYES, name, 3 + 7.5) for name in AREA_PRESETS + ("stone-scoring",)]
    + [
        (SEKI_WITH_EYES, "japanese", 0 + 6.5),
        (SEKI_WITH_EYES, "ancient-territory", 0 + 6.5),
    ]
)

POSITION_NAMES = {TWO_BLACK_GROUPS: "two-black-groups", DEAD_STONE_IN_PASS_ALIVE_EYE: "dead-stone",
                  ONE_DAME: "one-dame", SEKI_WITH_EYES: "seki"}


@pytest.mark.parametrize("position,preset,expected", PRESET_SCORE_CASES,
                         ids=[f"{POSITION_NAMES[p]}-{n}" for p, n, _ in PRESET_SCORE_CASES])
def test_finished_position_scores_under_preset(position, preset, expected):
    state = state_from(position, preset_rules(preset))
    passes = pass_until_finished(state)
    territory = Rules.preset(preset).scoring == ScoringRule.TERRITORY
    assert passes == (MAX_PASSES_TO_END if territory else 2 + Rules.preset(preset).has_button)
    assert state.is_scored
    assert state.final_white_minus_black_score == expected
    assert state.winner == expected_winner(expected)
    assert score_if_game_ended_now(state_from(position, preset_rules(preset))) == expected


# The same positions under every scoring x tax combination (komi 0, board score only).
SCORING_TAX_CASES = [
    # position, scoring, {tax: expected board score}
    (TWO_BLACK_GROUPS, ScoringRule.AREA, {TaxRule.NONE: 3, TaxRule.SEKI: 3, TaxRule.ALL: 5}),
    (TWO_BLACK_GROUPS, ScoringRule.TERRITORY, {TaxRule.NONE: 6, TaxRule.SEKI: 6, TaxRule.ALL: 8}),
    (DEAD_STONE_IN_PASS_ALIVE_EYE, ScoringRule.AREA, {TaxRule.NONE: 15, TaxRule.SEKI: 15, TaxRule.ALL: 15}),
    (DEAD_STONE_IN_PASS_ALIVE_EYE, ScoringRule.TERRITORY, {TaxRule.NONE: 13, TaxRule.SEKI: 13, TaxRule.ALL: 13}),
    (ONE_DAME, ScoringRule.AREA, {TaxRule.NONE: 2, TaxRule.SEKI: -1, TaxRule.ALL: -1}),
    (ONE_DAME, ScoringRule.TERRITORY, {TaxRule.NONE: 3, TaxRule.SEKI: 0, TaxRule.ALL: 0}),
    (SEKI_WITH_EYES, ScoringRule.AREA, {TaxRule.NONE: 3, TaxRule.SEKI: 3, TaxRule.ALL: 3}),
    (SEKI_WITH_EYES, ScoringRule.TERRITORY, {TaxRule.NONE: 0, TaxRule.SEKI: 0, TaxRule.ALL: 0}),
]


@pytest.mark.parametrize("suicide", [False, True])
@pytest.mark.parametrize("position,scoring,by_tax", SCORING_TAX_CASES,
                         ids=[f"{POSITION_NAMES[p]}-{s.name}" for p, s, _ in SCORING_TAX_CASES])
def test_board_score_by_scoring_and_tax(position, scoring, by_tax, suicide):
    for tax, expected in by_tax.items():
        state = state_from(position, custom_rules(scoring=scoring, tax=tax, suicide=suicide, komi=0))
        _, board_score = state.area_now()
        # area_now's board score is before the set-up-stones-as-moves bonus of territory scoring.
        assert board_score + state.white_bonus_score == expected, tax.name
        assert score_if_game_ended_now(state) == expected, tax.name


@pytest.mark.parametrize("scoring", [ScoringRule.AREA, ScoringRule.TERRITORY])
def test_seki_eyes_belong_to_nobody_under_seki_tax(scoring):
    for tax in TaxRule:
        state = state_from(SEKI_WITH_EYES, custom_rules(scoring=scoring, tax=tax))
        area, _ = state.area_now()
        for (x, y), owner in SEKI_EYES.items():
            assert area[y][x] == (owner if tax == TaxRule.NONE else 0), (tax.name, (x, y))
        x, y = SEKI_SHARED_LIBERTY
        assert area[y][x] == 0
        # The walls' eyes are never in doubt.
        assert area[0][0] == B and area[0][11] == W


def test_dead_stones_outside_pass_alive_territory_count_as_alive_under_area_scoring():
    # Tromp-Taylor: nothing is removed at the end. The white stone at (1,1) sits in a big
    # black area that is not pass-alive territory, so it counts as white and turns the 8
    # empty points around it into dame.
    #   B: 7 stones; W: 1 + 9 stones and the 11 empty points right and bottom  -> +14
    position = """
        ...XO.
        .O.XO.
        ...XO.
        XXXXO.
        OOOOO.
        ......
    """
    state = state_from(position, preset_rules("tromp-taylor", 0))
    area, board_score = state.area_now()
    assert board_score == (1 + 9 + 11) - 7
    assert area[0][0] == 0 and area[1][1] == W
    assert score_if_game_ended_now(state) == 14


# ---- KataGo's scoring sequences (testrules.cpp) --------------------------------------

# "Area/Territory scoring in the main phase", "... in encore 1/2": the same 7x7 game
# scored after each move under each tax rule.
KATAGO_SEQUENCE_BOARD = """
    OX.OOO.
    OXXXXXX
    OOOOOOO
    .XOXX..
    OOOX...
    X.OXXXX
    .XOX...
"""
FIRST_MOVES = [SCORE, (B, (5, 3)), SCORE, (W, (6, 3)), SCORE, (B, (6, 4)), SCORE]
LAST_MOVES = [(W, (5, 4)), SCORE, (B, (4, 4)), SCORE, (W, (0, 3)), SCORE, (B, (6, 6)), SCORE]
TWO_PASSES = [(W, None), (B, None)]

KATAGO_SEQUENCE_CASES = [
    # name, scoring, moves, {tax: scores}
    ("area main phase", ScoringRule.AREA, FIRST_MOVES + LAST_MOVES, {
        TaxRule.NONE: [-3.5, -4.5, -3.5, -6.5, -6.5, -6.5, -3.5, -3.5],
        TaxRule.SEKI: [0.5, -0.5, 0.5, -5.5, -5.5, -5.5, -3.5, -3.5],
        TaxRule.ALL: [0.5, -0.5, 0.5, -3.5, -3.5, -3.5, -1.5, -1.5]}),
    ("territory main phase", ScoringRule.TERRITORY, FIRST_MOVES + LAST_MOVES, {
        TaxRule.NONE: [-3.5, -3.5, -3.5, -5.5, -6.5, -5.5, -3.5, -2.5],
        TaxRule.SEKI: [0.5, 0.5, 0.5, -4.5, -5.5, -4.5, -3.5, -2.5],
        TaxRule.ALL: [0.5, 0.5, 0.5, -2.5, -3.5, -2.5, -1.5, -0.5]}),
    # Moves in encore 1 still cost a point each, exactly as in the main phase.
    ("territory encore 1", ScoringRule.TERRITORY, FIRST_MOVES + TWO_PASSES + LAST_MOVES, {
        TaxRule.NONE: [-3.5, -3.5, -3.5, -5.5, -6.5, -5.5, -3.5, -2.5],
        TaxRule.SEKI: [0.5, 0.5, 0.5, -4.5, -5.5, -4.5, -3.5, -2.5],
        TaxRule.ALL: [0.5, 0.5, 0.5, -2.5, -3.5, -2.5, -1.5, -0.5]}),
    # In encore 2 moves are free and stones count by their colour when the phase began.
    ("territory encore 2", ScoringRule.TERRITORY, FIRST_MOVES + TWO_PASSES * 2 + LAST_MOVES, {
        TaxRule.NONE: [-3.5, -3.5, -3.5, -5.5, -5.5, -5.5, -3.5, -3.5],
        TaxRule.SEKI: [0.5, 0.5, 0.5, -4.5, -4.5, -4.5, -3.5, -3.5],
        TaxRule.ALL: [0.5, 0.5, 0.5, -2.5, -2.5, -2.5, -1.5, -1.5]}),
]


@pytest.mark.parametrize("name,scoring,moves,by_tax", KATAGO_SEQUENCE_CASES, ids=[c[0] for c in KATAGO_SEQUENCE_CASES])
def test_katago_scoring_sequences(name, scoring, moves, by_tax):
    for tax, expected in by_tax.items():
        state = state_from(KATAGO_SEQUENCE_BOARD, custom_rules(scoring=scoring, tax=tax, komi=0.5))
        assert replay_and_score(state, moves) == expected, tax.name


# "Fill seki liberties in main phase / in encore 2": white to move, komi -0.5.
SEKI_LIBERTIES_BOARD = """
    ...OXX.
    OOOOX.X
    XXXXOXX
    O.XOOOO
    .OXOX.O
    OXXO.X.
    O.XOO.X
"""
SEKI_FILL_MOVES = [SCORE, (W, (6, 5)), SCORE, (B, (5, 6)), SCORE, (W, (0, 4)), SCORE, (B, (6, 0)), SCORE,
                   (W, (1, 0)), SCORE, (B, (4, 5)), SCORE, (W, (5, 4)), SCORE]
FOUR_PASSES_FROM_WHITE = [(W, None), (B, None), (W, None), (B, None)]

SEKI_FILL_CASES = [
    ("main phase", [], {
        TaxRule.NONE: [1.5, 1.5, 1.5, 0.5, 1.5, 0.5, 0.5, 10.5],
        TaxRule.SEKI: [0.5, 0.5, 0.5, 0.5, 2.5, 1.5, 1.5, 11.5],
        TaxRule.ALL: [0.5, 0.5, 0.5, 0.5, 0.5, -0.5, -0.5, 7.5]}),
    ("encore 2", FOUR_PASSES_FROM_WHITE, {
        TaxRule.NONE: [1.5, 1.5, 1.5, 0.5, 1.5, 1.5, 1.5, 11.5],
        TaxRule.SEKI: [0.5, 0.5, 0.5, 0.5, 2.5, 2.5, 2.5, 12.5],
        TaxRule.ALL: [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 8.5]}),
]


@pytest.mark.parametrize("name,prefix,by_tax", SEKI_FILL_CASES, ids=[c[0] for c in SEKI_FILL_CASES])
def test_katago_filling_seki_liberties(name, prefix, by_tax):
    for tax, expected in by_tax.items():
        rules = custom_rules(scoring=ScoringRule.TERRITORY, tax=tax, komi=-0.5)
        state = state_from(SEKI_LIBERTIES_BOARD, rules, next_player=W)
        assert replay_and_score(state, prefix + SEKI_FILL_MOVES) == expected, tax.name


# "GroupTaxSekiScoring" 1 and 2: 9x9 positions with sekis, passed out at once.
GROUP_TAX_BOARD_1 = """
    .X.XO.O.X
    ...XOOOX.
    .XXXXXXOO
    XOOOOOXO.
    XO.O.OXOO
    XOOOOOXXX
    XXXO...OO
    .XXXOOOO.
    .X.XO.O.O
"""
GROUP_TAX_BOARD_2 = """
    .X.XO.O.X
    ...XOOOX.
    .XXXXXXOO
    XOOOOOXO.
    XO.O.OXOO
    XOOOOOXXX
    XXXOXXXOO
    .XXXOOOO.
    .X.XO.O.O
"""
GROUP_TAX_CASES = [
    # board, scoring, {tax: final score with komi 0.5}
    (GROUP_TAX_BOARD_1, ScoringRule.AREA, {TaxRule.NONE: 4.5, TaxRule.SEKI: 6.5, TaxRule.ALL: 6.5}),
    (GROUP_TAX_BOARD_1, ScoringRule.TERRITORY, {TaxRule.NONE: -1.5, TaxRule.SEKI: 0.5, TaxRule.ALL: 0.5}),
    (GROUP_TAX_BOARD_2, ScoringRule.AREA, {TaxRule.NONE: 1.5, TaxRule.SEKI: -0.5, TaxRule.ALL: -2.5}),
    (GROUP_TAX_BOARD_2, ScoringRule.TERRITORY, {TaxRule.NONE: -1.5, TaxRule.SEKI: -3.5, TaxRule.ALL: -5.5}),
]


@pytest.mark.parametrize("board,scoring,by_tax", GROUP_TAX_CASES,
                         ids=["board1-area", "board1-territory", "board2-area", "board2-territory"])
def test_katago_group_tax_seki_scoring(board, scoring, by_tax):
    for tax, expected in by_tax.items():
        state = state_from(board, custom_rules(scoring=scoring, tax=tax, komi=0.5))
        passes = pass_until_finished(state)
        assert passes == (2 if scoring == ScoringRule.AREA else MAX_PASSES_TO_END)
        assert state.final_white_minus_black_score == expected, tax.name
        assert state.winner == expected_winner(expected)


# ---- button --------------------------------------------------------------------------

# KataGo's "Area scoring with button": komi 2.5, simple ko, with and without the button.
BUTTON_BOARD = """
    ..X.XO.
    ..XXOO.
    ...XO..
    ..XXO..
    ..X.O..
    ..XXO..
    ...XO..
"""
BUTTON_MOVES = [SCORE, (B, (3, 4)), SCORE, (W, (3, 0)), SCORE, (B, (1, 2)), SCORE, (W, (4, 0)), SCORE,
                (B, None), SCORE, (W, (6, 2)), SCORE, (B, None), SCORE, (W, None), SCORE]


@pytest.mark.parametrize("has_button,expected", [
    (False, [-5.5, -6.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5, -2.5]),
    # Whoever can pass first gets half a point; after black's pass at move 5 it is black's.
    (True, [-6, -6, -3, -2, -3, -3, -3, -3, -3]),
])
def test_katago_area_scoring_with_button(has_button, expected):
    rules = custom_rules(ko=KoRule.SIMPLE, button=has_button, komi=2.5)
    state = state_from(BUTTON_BOARD, rules)
    assert replay_and_score(state, BUTTON_MOVES) == expected
    assert state.is_game_finished


@pytest.mark.parametrize("first_passer,button_half_point", [(B, -0.5), (W, +0.5)])
def test_button_half_point_goes_to_first_passer(first_passer, button_half_point):
    state = state_from(ONE_DAME, preset_rules("aga-button"), next_player=first_passer)
    assert state.has_button
    state.play(None, first_passer)
    assert not state.has_button
    assert state.white_bonus_score == button_half_point
    assert not state.is_game_finished          # the button pass does not count towards ending
    state.play(None, 3 - first_passer)
    assert not state.is_game_finished
    state.play(None, first_passer)
    assert state.is_game_finished
    assert state.final_white_minus_black_score == 2 + 7.0 + button_half_point


def test_unclaimed_button_goes_to_player_to_move_when_scored_directly():
    state = state_from(ONE_DAME, preset_rules("aga-button"), next_player=W)
    state.end_and_score_now()
    assert state.final_white_minus_black_score == 2 + 7.0 + 0.5
    assert not state.has_button


# ---- handicap bonus ------------------------------------------------------------------

HANDICAP_POINTS = [(2, 2), (6, 6), (2, 6), (6, 2)]   # four stones on 9x9, no white stones
NUM_HANDICAP = len(HANDICAP_POINTS)
ALL_BLACK_9x9 = -81                                   # black owns every point


def handicap_board():
    board = GoBoard(9)
    for xy in HANDICAP_POINTS:
        board.set_stone(xy, B)
    return board


@pytest.mark.parametrize("preset,bonus", [
    ("tromp-taylor", 0), ("new-zealand", 0), ("goe", 0), ("japanese", 0), ("stone-scoring", 0),
    ("chinese", NUM_HANDICAP), ("chinese-ogs", NUM_HANDICAP), ("chinese-kgs", NUM_HANDICAP),
    ("aga", NUM_HANDICAP - 1), ("bga", NUM_HANDICAP - 1), ("french", NUM_HANDICAP - 1),
])
def test_white_handicap_bonus_in_final_score(preset, bonus):
    state = GameState(board=handicap_board(), rules=preset_rules(preset, 0.5), next_player=W)
    assert state.num_handicap_stones() == NUM_HANDICAP
    assert state.white_handicap_bonus_score == bonus
    pass_until_finished(state)
    # Territory scoring counts the set-up stones as moves, so black's stones are not points.
    stones_not_counted = NUM_HANDICAP if Rules.preset(preset).scoring == ScoringRule.TERRITORY else 0
    # Group tax: black's single independent area pays 2 points, white has none.
    group_tax = 2 if Rules.preset(preset).tax == TaxRule.ALL else 0
    assert state.final_white_minus_black_score == ALL_BLACK_9x9 + stones_not_counted + group_tax + bonus + 0.5


@pytest.mark.parametrize("whb,bonus", [
    (WhiteHandicapBonus.ZERO, 0), (WhiteHandicapBonus.N_MINUS_ONE, NUM_HANDICAP - 1), (WhiteHandicapBonus.N, NUM_HANDICAP),
])
@pytest.mark.parametrize("scoring", [ScoringRule.AREA, ScoringRule.TERRITORY])
def test_handicap_bonus_is_independent_of_scoring(scoring, whb, bonus):
    state = GameState(board=handicap_board(), rules=custom_rules(scoring=scoring, whb=whb, komi=0), next_player=W)
    state.end_and_score_now()
    stones_not_counted = NUM_HANDICAP if scoring == ScoringRule.TERRITORY else 0
    assert state.final_white_minus_black_score == ALL_BLACK_9x9 + stones_not_counted + bonus


def test_aga_button_handicap_game():
    # White passes first in a handicap game: N-1 bonus plus the button's half point.
    state = GameState(board=handicap_board(), rules=preset_rules("aga-button", 0.5), next_player=W)
    pass_until_finished(state)
    assert state.final_white_minus_black_score == ALL_BLACK_9x9 + (NUM_HANDICAP - 1) + 0.5 + 0.5


@pytest.mark.parametrize("stones,expected", [
    ([], 0),
    ([(4, 4)], 0),              # one black stone is an ordinary first move, not a handicap
    ([(2, 2), (6, 6)], 2),
])
def test_number_of_handicap_stones(stones, expected):
    board = GoBoard(9)
    for xy in stones:
        board.set_stone(xy, B)
    state = GameState(board=board, rules=preset_rules("chinese"), next_player=W)
    assert state.num_handicap_stones() == expected
    assert state.white_handicap_bonus_score == expected


def test_a_white_stone_on_the_initial_board_means_no_handicap():
    board = handicap_board()
    board.set_stone((4, 4), W)
    state = GameState(board=board, rules=preset_rules("chinese"), next_player=W)
    assert state.num_handicap_stones() == 0
    assert state.white_handicap_bonus_score == 0


def test_free_placement_handicap_from_consecutive_black_moves():
    state = GameState(9, rules=preset_rules("chinese"))
    state.set_assume_multiple_starting_black_moves_are_handicap(True)
    for xy in HANDICAP_POINTS[:3]:
        state.play(xy, B)
        state.play(None, W)      # single white passes between black stones keep it a handicap
    assert state.num_handicap_stones() == 3
    assert state.white_handicap_bonus_score == 3
    state.play((4, 4), B)
    state.play((0, 0), W)        # a real white move ends the placement phase
    state.play((8, 8), B)
    assert state.num_handicap_stones() == NUM_HANDICAP
    aga = GameState(9, rules=preset_rules("aga"))
    aga.set_assume_multiple_starting_black_moves_are_handicap(True)
    for xy in HANDICAP_POINTS:
        aga.play(xy, B)
    assert aga.white_handicap_bonus_score == NUM_HANDICAP - 1


def test_consecutive_black_moves_are_not_handicap_without_the_flag():
    state = GameState(9, rules=preset_rules("chinese"))
    for xy in HANDICAP_POINTS:
        state.play(xy, B)
    assert state.num_handicap_stones() == 0


# ---- komi ----------------------------------------------------------------------------

def test_katago_various_komis():
    # A 7x6 board split evenly; the result is komi alone. Changing komi after the game
    # ended and replaying the end gives a draw at 0 and a black win at -0.5.
    board = """
        .......
        .......
        OOOOOOO
        XXXXXXX
        .......
        .......
    """
    state = state_from(board, custom_rules(ko=KoRule.SIMPLE, komi=0.5))
    for player in (B, W, B, W):
        state.play(None, player)
    assert state.is_game_finished
    assert (state.winner, state.final_white_minus_black_score) == (W, 0.5)
    for komi, winner in [(0.0, 0), (-0.5, B)]:
        state.set_komi(komi)
        state.play(None, B)
        state.play(None, W)
        assert state.is_game_finished and not state.is_no_result
        assert (state.winner, state.final_white_minus_black_score) == (winner, komi)


def test_set_komi_rescores_a_finished_game():
    state = state_from(TWO_BLACK_GROUPS, preset_rules("chinese", 7.5))
    pass_until_finished(state)
    assert state.final_white_minus_black_score == 10.5
    state.set_komi(-3.5)
    assert state.final_white_minus_black_score == -0.5
    assert state.winner == B


@pytest.mark.parametrize("komi", [-7.5, 0, 0.5, 6.5, 150])
@pytest.mark.parametrize("preset", ["tromp-taylor", "japanese", "stone-scoring"])
def test_komi_adds_to_board_score(preset, komi):
    base = score_if_game_ended_now(state_from(TWO_BLACK_GROUPS, preset_rules(preset, 0)))
    assert score_if_game_ended_now(state_from(TWO_BLACK_GROUPS, preset_rules(preset, komi))) == base + komi


@pytest.mark.parametrize("komi,button,integer", [(7.5, False, False), (7.0, False, True),
                                                 (7.0, True, False), (7.5, True, True)])
def test_whether_results_are_integers(komi, button, integer):
    rules = Rules.preset("aga-button" if button else "aga").with_komi(komi)
    assert rules.game_result_will_be_integer() == integer
    state = state_from(ONE_DAME, rules.to_core_tuple())
    final = score_if_game_ended_now(state)
    assert (final == int(final)) == integer


@pytest.mark.parametrize("komi,button,dew,adjustment", [
    (7.5, False, 0.7, 0.0),          # half-point result: no draws, nothing to fold in
    (7.0, True, 0.7, 0.0),           # integer komi plus the button's half point: no draws either
    (7.0, False, 0.7, 0.7 - 0.5),    # draws possible: a draw is worth dew wins, so the score shifts by dew - 0.5
    (7.5, True, 0.7, 0.7 - 0.5),
    (7.0, False, 0.5, 0.0),          # draws as half a win: no shift
    (7.0, False, 0.0, -0.5),
    (7.0, False, 1.0, 0.5),
    (-3.0, False, 0.25, 0.25 - 0.5),
])
def test_white_komi_adjustment_for_draws(komi, button, dew, adjustment):
    rules = Rules.preset("aga-button" if button else "aga").with_komi(komi)
    state = state_from(ONE_DAME, rules.to_core_tuple())
    # KataGo's whiteKomiAdjustmentForDraws is a float: the same float32 here.
    assert state.white_komi_adjustment_for_draws(dew) == float(np.float32(adjustment))
    # The network's komi input (self komi) folds in the same amount.
    assert state.self_komi(W, dew) - state.self_komi(W, 0.5) == pytest.approx(adjustment, abs=1e-6)


PASS_ALIVE_ONLY_UNDER_SUICIDE = """
    X.OOOOOO.
    OOX..XX.O
    O...XOX.O
    O...X.X.O
    OXXX.XX.O
    OX..X...O
    O.XOX...O
    O.XXX...O
    .OOOOOOO.
"""   # test_area.py's "suicide rule changes vitality": White's wall is pass-alive only without suicide


@pytest.mark.parametrize("suicide_legal,always_mode,expected", [
    (False, False, False),
    (True, False, True),
    (False, True, True),     # newer nets' mode: pass-alive as if multi-stone suicide were legal
    (True, True, True),
])
def test_suicide_legal_for_pass_alive(suicide_legal, always_mode, expected):
    state = state_from(PASS_ALIVE_ONLY_UNDER_SUICIDE, custom_rules(suicide=suicide_legal))
    state.set_always_pass_alive_under_suicide_rules(always_mode)
    assert state.always_pass_alive_under_suicide_rules == always_mode
    assert state.suicide_legal_for_pass_alive() == expected
    # The mode belongs to the game: copies and a reset history keep it.
    assert state.copy().suicide_legal_for_pass_alive() == expected
    state.reset_history_keep_board(W)
    assert state.suicide_legal_for_pass_alive() == expected
