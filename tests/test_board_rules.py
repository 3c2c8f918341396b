"""Table-driven rule tests for the Cython board and history (captures, ko, suicide, superko).

Diagrams: 'X' black, 'O' white, '.' empty; the first row is the top (y = 0).
Moves are written as (x, y) with the same orientation.
"""
import pytest

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState, IllegalMoveError
from katacli.game.rules import Rules

B, W = 1, 2


def board_from(diagram):
    return GoBoard.from_diagram(diagram)


def rows(diagram):
    return [r.replace(" ", "") for r in diagram.strip().splitlines() if r.strip()]


def assert_board(board, diagram):
    expected = rows(diagram)
    assert str(board).splitlines() == expected


CAPTURE_CASES = [
    # name, start, player, move, expected board, stones captured (by colour)
    ("single stone in the middle", """
        .X.
        XO.
        .X.
     """, B, (2, 1), """
        .X.
        X.X
        .X.
     """, (0, 1)),
    ("corner stone", """
        OX.
        ...
        ...
     """, B, (0, 1), """
        .X.
        X..
        ...
     """, (0, 1)),
    ("two groups at once", """
        .X.X.
        XO.OX
        .X.X.
     """, B, (2, 1), """
        .X.X.
        X.X.X
        .X.X.
     """, (0, 2)),
    ("multi-stone chain", """
        XXX..
        OOO.X
        XXX..
        .....
     """, B, (3, 1), """
        XXX..
        ...XX
        XXX..
        .....
     """, (0, 3)),
    ("filling own last liberty is legal when it captures", """
        .OX..
        OX...
        X....
        .....
     """, B, (0, 0), """
        X.X..
        .X...
        X....
        .....
     """, (0, 2)),
]


@pytest.mark.parametrize("name,start,player,move,expected,captured", CAPTURE_CASES, ids=[c[0] for c in CAPTURE_CASES])
def test_captures(name, start, player, move, expected, captured):
    board = board_from(start)
    board.play(move, player)
    board.check_consistency()
    assert_board(board, expected)
    assert board.captures == captured


def test_snapback():
    board = board_from("""
        X.XO.
        .OXO.
        ..OXX
        .OXX.
        ..OXO
    """)
    board.play((4, 0), B)   # throw-in: the lone black stone is in atari
    board.play((4, 1), W)   # white takes it; no ko, the capturing chain has several stones
    assert board.captures == (1, 0)
    assert board.ko_point is None
    board.play((4, 0), B)   # black plays back in and captures the three white stones
    board.check_consistency()
    assert_board(board, """
        X.X.X
        .OX..
        ..OXX
        .OXX.
        ..OXO
    """)
    assert board.captures == (1, 3)


def test_single_stone_suicide_is_always_illegal():
    board = board_from("""
        .X.
        X..
        ...
    """)
    assert not board.is_legal((0, 0), W, False)
    assert not board.is_legal((0, 0), W, True)
    with pytest.raises(ValueError):
        board.play((0, 0), W)
    board.check_consistency()


def test_multi_stone_suicide_follows_the_rule():
    board = board_from("""
        .OX.
        OOX.
        XX..
        ....
    """)
    # White at (0, 0) joins the white chain and leaves it without liberties.
    assert not board.is_legal((0, 0), W, False)
    assert board.is_legal((0, 0), W, True)
    board.play((0, 0), W, True)
    board.check_consistency()
    assert_board(board, """
        ..X.
        ..X.
        XX..
        ....
    """)
    assert board.captures == (0, 4)  # four white stones removed by suicide


def test_simple_ko_ban_and_lift():
    board = board_from("""
        .XO.
        XO.O
        .XO.
        ....
    """)
    board.play((2, 1), B)  # black captures at the ko
    board.check_consistency()
    assert board.ko_point == (1, 1)
    assert not board.is_legal((1, 1), W)
    board.play((3, 3), W)  # a ko threat elsewhere
    assert board.ko_point is None
    assert board.is_legal((1, 1), W)


def test_occupied_and_off_board_raise():
    board = GoBoard(5)
    board.play((2, 2), B)
    with pytest.raises(ValueError, match="occupied"):
        board.play((2, 2), W)
    with pytest.raises(ValueError, match="off the"):
        board.play((5, 0), B)
    with pytest.raises(ValueError):
        board.play((0, 0), 3)
    with pytest.raises(ValueError):
        GoBoard(20)
    with pytest.raises(ValueError):
        GoBoard(1)


@pytest.mark.parametrize("x,y", [(2, 2), (5, 5), (9, 13), (19, 19), (19, 2), (3, 17)])
def test_sizes_including_rectangular(x, y):
    board = GoBoard(x, y)
    assert (board.x_size, board.y_size) == (x, y)
    assert len(board.empty_points()) == x * y
    board.play((x - 1, y - 1), B)
    board.play((0, 0), W)
    board.check_consistency()


# ---- history: superko ----------------------------------------------------------------

def rules_tuple(name, komi=7.5):
    return Rules.preset(name).with_komi(komi).to_core_tuple()


def play_all(state, moves):
    for player, xy in moves:
        state.play(xy, player)


# A ko in the corner of a small board: after B captures, W retakes, B's retake repeats a position.
KO_SETUP = """
    .XO..
    XO.O.
    .XO..
    .....
    .....
"""


def ko_state(rules_name):
    board = GoBoard.from_diagram(KO_SETUP)
    return GameState(board=board, rules=rules_tuple(rules_name), next_player=B)


def test_simple_ko_in_history():
    state = ko_state("tromp-taylor")
    state.play((2, 1), B)
    assert state.ko_point == (1, 1)
    with pytest.raises(IllegalMoveError):
        state.play((1, 1), W)
    assert state.next_player == W  # unchanged after the refused move


@pytest.mark.parametrize("rules_name,banned", [
    ("tromp-taylor", True),   # positional superko
    ("aga", True),            # situational superko: same stones, same player to move
    ("japanese", False),      # simple ko only: no superko bans
])
def test_retaking_after_passes_depends_on_superko(rules_name, banned):
    # After B takes the ko and both sides pass, the simple-ko ban is gone; W retaking would
    # recreate the position (and the situation) from before B's capture.
    state = ko_state(rules_name)
    state.play((2, 1), B)
    state.play(None, W)
    state.play(None, B)
    assert ((1, 1) in state.superko_banned_points()) == banned
    assert state.is_legal((1, 1), W) == (not banned)
    # The ban is part of the situation (KataGo's NN cache key): the same stones without the history differ.
    fresh = state.copy()
    fresh.reset_history_keep_board(W)
    assert fresh.superko_banned_points() == [] and fresh.ko_point is None
    assert (state.situation_hash() != fresh.situation_hash()) == banned


# ---- history: game end, button, handicap ----------------------------------------------

def test_two_passes_end_an_area_game_and_score_it():
    state = GameState(5, rules=rules_tuple("tromp-taylor", 0.5))
    play_all(state, [(B, (2, 2)), (W, None), (B, None)])
    assert state.is_game_finished
    # Black owns the whole 5x5 board by Tromp-Taylor area: 25 - 0.5 komi.
    assert state.final_white_minus_black_score == pytest.approx(-24.5)
    assert state.winner == B


def test_button_goes_to_first_passer():
    state = GameState(5, rules=rules_tuple("aga-button", 7.0))
    assert state.has_button
    play_all(state, [(B, (2, 2)), (W, None)])
    assert not state.has_button
    assert state.white_bonus_score == pytest.approx(0.5)


def test_white_handicap_bonus_counts_handicap_stones():
    board = GoBoard(9)
    for xy in [(2, 6), (6, 2), (2, 2)]:
        board.set_stone(xy, B)
    # AGA: white gets N-1 points for N handicap stones; chinese: N.
    aga = GameState(board=board, rules=rules_tuple("aga", 0.5), next_player=W)
    chinese = GameState(board=board, rules=rules_tuple("chinese", 0.5), next_player=W)
    assert aga.white_handicap_bonus_score == 2
    assert chinese.white_handicap_bonus_score == 3
    assert aga.num_handicap_stones() == 3


def test_out_of_turn_play_in_gamestate_hands_over_the_turn():
    state = GameState(5)
    state.play((0, 0), B)
    state.play((1, 1), B)  # black again: allowed, as GTP engines accept it
    assert state.next_player == W


def test_bad_state_input_raises():
    with pytest.raises(ValueError):
        GameState(20)
    with pytest.raises(ValueError):
        GameState(9, rules=(0, 0, 0, False, False, 0, False, 7.3))
    state = GameState(9)
    with pytest.raises(ValueError):
        state.play((9, 0), B)
    with pytest.raises(ValueError):
        state.set_komi(1000)


def test_rules_cross_the_core_boundary_as_one_typed_value():
    from katacli._core.rules_value import CoreRules
    from katacli.game.rules import Rules

    rules = Rules.parse("japanese").with_komi(6.5)
    core = rules.to_core_tuple()
    assert isinstance(core, CoreRules)
    state = GameState(9, 9, core)
    back = state.rules_tuple
    assert isinstance(back, CoreRules) and back == core
    assert back.scoring_rule == int(rules.scoring) and back.komi == rules.komi
    assert GameState(9, 9, tuple(core)).rules_tuple == core   # a plain 8-tuple in the same order still works


# KataGo 1.17.2's `showboard` HASH for these positions (its Zobrist numbers: katacli draws the same).
@pytest.mark.parametrize("size, moves, katago_hash", [
    ((9, 9), [], "9F0B2D702FC8448C75410E097F089AEB"),
    ((19, 19), [], "CDCBC1F514D7E680FACD226074256633"),
    ((9, 9), [("B", "E5"), ("W", "C3")], "6394AEF2C6D1E2F9EF2C0219DC61E13C"),
    ((7, 11), [("B", "D4")], "760EB9C7FC6F5BF6D1FF5138CAE32371"),
    ((19, 19), [("B", "Q16"), ("W", "D4"), ("B", "pass")], "B248EA89FABF13234D0CA990126373BE"),
])
def test_board_hash_is_katago_s(size, moves, katago_hash):
    from katacli import Game
    from katacli.game.board_text import format_hash

    game = Game(size)
    for colour, vertex in moves:
        game.play(colour, vertex)
    assert format_hash(game.state.board().pos_hash) == katago_hash
