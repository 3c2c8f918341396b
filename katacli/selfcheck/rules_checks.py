"""Self-checks of the Go rules in the Cython core: captures, ko, suicide, scoring.

Diagrams: 'X' black, 'O' white, '.' empty, first row at the top; points are (x, y) with y from the top.
Every expected number is counted by hand in the comment next to it.
"""
from __future__ import annotations

from katacli.selfcheck.framework import check, expect, expect_close

BLACK, WHITE, EMPTY = 1, 2, 0

CAPTURES = """
.XXOO..
XO.XX..
.X.....
.......
"""

# Black to retake at (2, 1) after White captured there: a simple ko.
KO = """
.XO..
X.XO.
.XO..
.....
"""

# White playing (0, 0) has no liberty and captures nothing: a 2-stone suicide; (3, 0) would be a lone-stone one.
SUICIDE = """
.OX.X
XX.XX
.....
"""

# Black owns column 0 (5 points), White columns 3-4 (10 points), no dame.
#   area:      W 5 stones + 10 = 15, B 5 + 5 = 10 -> W+5, plus komi
#   territory: W 10, B 5                          -> W+5, plus komi
SPLIT_BOARD = """
.XO..
.XO..
.XO..
.XO..
.XO..
"""
SPLIT_BOARD_WHITE_LEAD = 5


def _state(diagram: str, rules_name: str, next_player: int = BLACK, komi: float | None = None):
    from katacli._core.board import GoBoard
    from katacli._core.game_state import GameState
    from katacli.game.rules import Rules

    rules = Rules.preset(rules_name)
    if komi is not None:
        rules = rules.with_komi(komi)
    return GameState(board=GoBoard.from_diagram(diagram), rules=rules.to_core_tuple(), next_player=next_player)


@check("rules.captures", "stones and groups without liberties are captured")
def captures() -> str:
    state = _state(CAPTURES, "tromp-taylor")
    state.play((2, 1), BLACK)  # takes the last liberty of the lone white stone at (1, 1)
    expect(state.color_at((1, 1)) == EMPTY, "a white stone with no liberties stayed on the board")
    state.play((6, 3), WHITE)
    state.play((5, 0), BLACK)  # and of the white pair at (3, 0), (4, 0)
    expect(state.color_at((3, 0)) == EMPTY and state.color_at((4, 0)) == EMPTY,
           "a white group with no liberties stayed on the board")
    expect(state.captures == (0, 3), f"captured stones counted as {state.captures}, expected (0, 3)")
    return "1 stone and a 2-stone group captured"


@check("rules.ko", "an immediate ko recapture is illegal, a later one legal")
def ko() -> str:
    state = _state(KO, "japanese", next_player=WHITE)
    state.play((1, 1), WHITE)  # captures the black stone at (2, 1)
    expect(state.color_at((2, 1)) == EMPTY, "the ko capture did not remove the stone")
    expect(not state.is_legal((2, 1), BLACK), "Black may retake the ko at once")
    state.play((4, 3), BLACK)  # a ko threat elsewhere
    state.play((3, 3), WHITE)
    expect(state.is_legal((2, 1), BLACK), "Black still may not retake the ko after an exchange elsewhere")
    return "simple ko ban and its release"


@check("rules.suicide", "suicide: a lone stone never, a group only where the rules allow it")
def suicide() -> str:
    for rules_name, group_suicide_legal in (("tromp-taylor", True), ("new-zealand", True), ("japanese", False),
                                            ("chinese", False)):
        state = _state(SUICIDE, rules_name, next_player=WHITE)
        expect(not state.is_legal((3, 0), WHITE), f"{rules_name}: a lone white stone may commit suicide")
        expect(state.is_legal((0, 0), WHITE) == group_suicide_legal,
               f"{rules_name}: 2-stone suicide is {'illegal' if group_suicide_legal else 'legal'}, "
               f"expected {'legal' if group_suicide_legal else 'illegal'}")
        if group_suicide_legal:
            state.play((0, 0), WHITE)
            expect(state.color_at((1, 0)) == EMPTY, f"{rules_name}: the suicided group is still on the board")
    return "tromp-taylor, new-zealand, japanese, chinese"


@check("rules.scoring", "area and territory scoring with komi")
def scoring() -> str:
    for rules_name, komi in (("tromp-taylor", 7.5), ("chinese", 7.5), ("japanese", 6.5), ("korean", 6.5)):
        state = _state(SPLIT_BOARD, rules_name, komi=komi)
        state.end_and_score_now()
        expect(state.is_scored, f"{rules_name}: the game was not scored")
        expect_close(f"{rules_name} final score (White minus Black)", state.final_white_minus_black_score,
                     SPLIT_BOARD_WHITE_LEAD + komi, 1e-9)
        expect(state.winner == WHITE, f"{rules_name}: winner {state.winner}, expected White")
    return "W+12.5 under area rules, W+11.5 under territory rules"
