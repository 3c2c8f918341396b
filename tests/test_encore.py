"""Territory-scoring encore, ko rules and game ends, as KataGo's BoardHistory does them.

The scenarios are KataGo 1.17.2's rule tests (cpp/tests/testrules.cpp) written as
tables. Each step is (player, point or None for pass, illegal, blocked):

  illegal  the empty points the player to move next may not play although they
           are not suicide (ko, superko, once-only encore ko captures); None: not checked
  blocked  every point marked ko-recapture-blocked (encore only); None: not checked

Diagrams: 'X' black, 'O' white, '.' empty; the first row is the top (y = 0).
"""
import pytest

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState, IllegalMoveError
from katacli.game.rules import KoRule, Rules, ScoringRule, TaxRule

B, W, EMPTY = 1, 2, 0
PASS = None
ALL_KO_RULES = (KoRule.SIMPLE, KoRule.POSITIONAL, KoRule.SITUATIONAL, KoRule.SPIGHT)


def rules_tuple(ko=KoRule.POSITIONAL, scoring=ScoringRule.TERRITORY, tax=TaxRule.SEKI, suicide=False,
                button=False, komi=0.5):
    return Rules(ko, scoring, tax, suicide, button, komi=komi).to_core_tuple()


def state_from(diagram, rules, next_player=B, encore_phase=0):
    return GameState(board=GoBoard.from_diagram(diagram), rules=rules, next_player=next_player,
                     encore_phase=encore_phase)


def rows(diagram):
    return [r.replace(" ", "") for r in diagram.strip().splitlines() if r.strip()]


def assert_stones(state, diagram):
    assert str(state).splitlines() == rows(diagram)


def is_illegal_suicide(board, xy, pla, multi_stone_suicide_legal):
    """Independent of the core's legality code: no liberty, no capture, no safe friendly neighbour."""
    x, y = xy
    for nx, ny in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1)):
        if not (0 <= nx < board.x_size and 0 <= ny < board.y_size):
            continue
        colour = board.color_at((nx, ny))
        if colour == EMPTY:
            return False
        if colour == pla and (multi_stone_suicide_legal or board.liberties_at((nx, ny)) > 1):
            return False
        if colour != pla and board.liberties_at((nx, ny)) == 1:
            return False
    return True


def illegal_points(state, pla):
    """Empty points refused by the history for pla although they are not suicide (KataGo's printout)."""
    board = state.board()
    suicide_legal = state.rules_tuple[3]
    return {(x, y) for y in range(state.y_size) for x in range(state.x_size)
            if board.color_at((x, y)) == EMPTY and not is_illegal_suicide(board, (x, y), pla, suicide_legal)
            and not state.is_legal((x, y), pla)}


def play_checked(state, pla, xy, prevent_encore=False):
    """Play a legal move; for passes, check pass_would_end_phase predicted what happened."""
    assert state.next_player == pla
    assert state.is_legal(xy, pla), f"{pla} at {xy} should be legal"
    phase_would_end = state.pass_would_end_phase(pla)
    old_phase = state.encore_phase
    if prevent_encore:
        state.play_tolerant(xy, pla, prevent_encore=True)
    else:
        state.play(xy, pla)
    if xy is None:
        phase_ended = state.encore_phase != old_phase or state.is_game_finished
        assert (phase_would_end and not prevent_encore) == phase_ended


def run_steps(state, steps):
    for i, (pla, xy, illegal, blocked) in enumerate(steps):
        play_checked(state, pla, xy)
        if illegal is not None:
            assert illegal_points(state, state.next_player) == set(illegal), f"step {i}: {pla} {xy}"
        if blocked is not None:
            assert set(state.ko_recap_blocked_points()) == set(blocked), f"step {i}: {pla} {xy}"


def pass_out(state, passes):
    for _ in range(passes):
        play_checked(state, state.next_player, PASS)


# ---- phases -----------------------------------------------------------------------------

def test_two_passes_end_an_area_game_and_later_moves_resume_it():
    # KataGo "Area rules": a 4x4 game, positional superko, komi 0.5.
    state = GameState(4, rules=rules_tuple(scoring=ScoringRule.AREA, tax=TaxRule.NONE, suicide=True))
    for pla, xy in [(B, (1, 1)), (W, (2, 2)), (B, (1, 2)), (W, (2, 1)), (B, (1, 3)), (W, (2, 3)),
                    (B, (1, 0)), (W, (2, 0)), (B, PASS)]:
        play_checked(state, pla, xy)
        assert not state.is_game_finished
    play_checked(state, W, PASS)
    assert state.is_game_finished and state.encore_phase == 0
    assert (state.winner, state.final_white_minus_black_score) == (W, 0.5)
    play_checked(state, B, PASS)     # a third pass: still over, same result
    assert state.is_game_finished and state.final_white_minus_black_score == 0.5
    play_checked(state, W, (3, 2))   # a real move resumes the game
    assert not state.is_game_finished
    play_checked(state, B, PASS)
    assert not state.is_game_finished
    play_checked(state, W, PASS)
    assert state.is_game_finished and state.final_white_minus_black_score == 0.5
    assert_stones(state, """
        .XO.
        .XO.
        .XOO
        .XO.
    """)


def test_territory_game_goes_through_two_encore_phases():
    # KataGo "Territory rules": same 4x4 game under territory scoring, komi 0.5.
    state = GameState(4, rules=rules_tuple(suicide=True))
    for pla, xy in [(B, (1, 1)), (W, (2, 2)), (B, (1, 2)), (W, (2, 1)), (B, (1, 3)), (W, (2, 3)),
                    (B, (1, 0)), (W, (2, 0)), (B, PASS), (W, (3, 2)), (B, PASS)]:
        play_checked(state, pla, xy)
    assert state.encore_phase == 0 and not state.is_game_finished
    for pla, phase in [(W, 1), (B, 1), (W, 2), (B, 2)]:
        play_checked(state, pla, PASS)
        assert state.encore_phase == phase and not state.is_game_finished
    play_checked(state, W, PASS)
    assert state.encore_phase == 2 and state.is_game_finished
    assert (state.winner, state.final_white_minus_black_score) == (B, -0.5)

    # A black throw-in in encore 2 changes nothing: stones count by their colour when encore 2 began.
    for pla, xy in [(B, (3, 1)), (W, PASS), (B, PASS)]:
        play_checked(state, pla, xy)
    assert state.is_game_finished and state.final_white_minus_black_score == -0.5
    # A white junk stone makes black's territory unclear: white wins by 3.5.
    for pla, xy in [(W, (0, 1)), (B, PASS), (W, PASS)]:
        play_checked(state, pla, xy)
    assert state.encore_phase == 2 and state.is_game_finished
    assert (state.winner, state.final_white_minus_black_score) == (W, 3.5)
    # Black makes the group pass-alive again: back to the original result.
    for pla, xy in [(B, (0, 2)), (W, (3, 0)), (B, PASS), (W, PASS)]:
        play_checked(state, pla, xy)
    assert (state.winner, state.final_white_minus_black_score) == (B, -0.5)
    assert_stones(state, """
        .XOO
        OXO.
        XXOO
        .XO.
    """)


PREVENT_ENCORE_BOARD = """
    .X.
    XXO
    .O.
"""


def test_passes_walk_through_the_encore_and_then_score():
    # KataGo "PreventEncore", first half. Territory B (0,0) vs W (2,2); the set-up stones
    # count as moves (black 3, white 2), so white's bonus is 1; komi 0.5.
    state = state_from(PREVENT_ENCORE_BOARD, rules_tuple(tax=TaxRule.NONE))
    phases = []
    for _ in range(6):
        play_checked(state, state.next_player, PASS)
        phases.append(state.encore_phase)
    assert phases == [0, 1, 1, 2, 2, 2]
    assert state.is_game_finished and state.white_bonus_score == 1
    assert (state.winner, state.final_white_minus_black_score) == (W, 0.5)
    state.play(PASS, B)              # one more pass: the game stays over with the same result
    assert state.is_game_finished and state.final_white_minus_black_score == 0.5


def test_prevent_encore_stops_at_the_end_of_the_main_phase():
    # KataGo "PreventEncore", second half: the main phase ends but no encore starts.
    state = state_from(PREVENT_ENCORE_BOARD, rules_tuple(tax=TaxRule.NONE))
    for pla in (B, W, B, W):
        play_checked(state, pla, PASS, prevent_encore=True)
        assert state.encore_phase == 0 and not state.is_game_finished
    assert state.white_bonus_score == 1


def test_area_scoring_has_no_encore():
    state = state_from(PREVENT_ENCORE_BOARD, rules_tuple(scoring=ScoringRule.AREA, tax=TaxRule.NONE))
    pass_out(state, 2)
    assert state.is_game_finished and state.encore_phase == 0


def test_encore_phases_only_exist_under_territory_scoring():
    with pytest.raises(ValueError):
        state_from(PREVENT_ENCORE_BOARD, rules_tuple(scoring=ScoringRule.AREA), encore_phase=1)


@pytest.mark.parametrize("phase", [1, 2])
def test_starting_directly_in_the_encore_equals_passing_into_it(phase):
    # KataGo "Board history clearing directly to the encore".
    board = """
        ..O.
        .O.O
        .XOX
        ..XX
    """
    rules = rules_tuple(ko=KoRule.SIMPLE, suicide=True)
    passed = state_from(board, rules)
    pass_out(passed, 2 * phase)
    direct = state_from(board, rules, encore_phase=phase)
    assert passed.encore_phase == direct.encore_phase == phase
    assert passed.superko_banned_points() == direct.superko_banned_points() == []
    assert passed.ko_recap_blocked_points() == direct.ko_recap_blocked_points() == []
    assert passed.white_bonus_score == direct.white_bonus_score == 0
    # Same stones, player, ko marks, second-encore colours and komi.
    assert passed.situation_hash() == direct.situation_hash()
    pass_out(passed, 2 * (3 - phase))
    pass_out(direct, 2 * (3 - phase))
    assert passed.is_game_finished and direct.is_game_finished
    assert passed.final_white_minus_black_score == direct.final_white_minus_black_score


def test_a_move_in_the_encore_restarts_the_pass_count():
    state = state_from(PREVENT_ENCORE_BOARD, rules_tuple(tax=TaxRule.NONE))
    pass_out(state, 2)
    assert state.encore_phase == 1
    play_checked(state, B, PASS)
    play_checked(state, W, (2, 0))
    assert not state.pass_would_end_phase(B)
    play_checked(state, B, PASS)
    assert state.encore_phase == 1 and state.pass_would_end_phase(W)
    play_checked(state, W, PASS)
    assert state.encore_phase == 2


# ---- ko rules in a territory game: a regular ko and a sending-two-returning-one ------------

KO_RULES_BOARD = """
    .O.XXO
    OXXXO.
    O.X.OO
    XX.OO.
    OOOO.O
"""


def test_simple_ko_with_sending_two_returning_one():
    state = state_from(KO_RULES_BOARD, rules_tuple(ko=KoRule.SIMPLE))
    run_steps(state, [
        (B, (5, 1), [(5, 0)], None),        # black takes the ko: white may not retake at once
        (W, PASS, [], None),
    ])
    assert state.pass_would_end_phase(B) and not state.pass_would_end_game(B)
    run_steps(state, [
        (B, (2, 3), [], None),
        (W, (5, 0), [(5, 1)], None),
        (B, (3, 2), None, None),
        # The cycle: white sends two, black captures, white returns one; no superko here.
        (W, (2, 0), [], None), (B, (0, 0), [], None), (W, (1, 0), [], None), (B, PASS, [], None),
        (W, (2, 0), [], None), (B, (0, 0), [], None), (W, (1, 0), [], None),
    ])
    assert state.encore_phase == 0 and not state.is_game_finished
    # Black passes again in a position he passed from before: a spight-like end of the phase.
    play_checked(state, B, PASS)
    assert state.encore_phase == 1 and not state.is_game_finished
    pass_out(state, 4)
    assert state.encore_phase == 2 and state.is_game_finished
    assert (state.winner, state.final_white_minus_black_score) == (B, -1.5)
    assert not state.is_no_result


@pytest.mark.parametrize("ko_rule,illegal_after", [
    (KoRule.POSITIONAL, {
        "black captures back": [(1, 0)],
        "white sends two again": [(0, 0), (5, 1)]}),
    # Situational: the same stones with the other player to move are a new situation.
    (KoRule.SITUATIONAL, {
        "black captures back": [],
        "white sends two again": [(0, 0)]}),
])
def test_superko_with_sending_two_returning_one(ko_rule, illegal_after):
    state = state_from(KO_RULES_BOARD, rules_tuple(ko=ko_rule))
    run_steps(state, [(B, (5, 1), [(5, 0)], None), (W, PASS, [], None)])
    ended = state.copy()
    play_checked(ended, B, PASS)
    assert ended.encore_phase == 1 and not ended.is_game_finished
    run_steps(state, [
        (B, (3, 2), None, None),
        (W, (2, 0), [], None),
        (B, (0, 0), illegal_after["black captures back"], None),
        (W, (5, 0), [(5, 1)], None),
        (B, PASS, [], None),
        (W, (1, 0), [(5, 1)], None),
        (B, PASS, [], None),
        (W, (2, 0), illegal_after["white sends two again"], None),
    ])
    assert state.encore_phase == 0 and not state.is_game_finished
    if ko_rule == KoRule.POSITIONAL:
        # Illegal under superko, yet playable tolerantly (as when loading an SGF).
        assert not state.is_legal((0, 0), B)
        state.play_tolerant((0, 0), B)
        assert state.color_at((0, 0)) == B and state.next_player == W


def test_spight_ko_with_sending_two_returning_one():
    board = GoBoard.from_diagram(KO_RULES_BOARD)
    board.set_stone((2, 3), B)
    state = GameState(board=board, rules=rules_tuple(ko=KoRule.SPIGHT), next_player=B)
    run_steps(state, [(B, (5, 1), [(5, 0)], None), (W, PASS, [], None)])
    # Under spight ko two passes in a row do not end the phase; passes lift ko bans.
    both_passed = state.copy()
    play_checked(both_passed, B, PASS)
    assert both_passed.encore_phase == 0 and not both_passed.is_game_finished
    assert illegal_points(both_passed, W) == set()
    run_steps(state, [
        (B, (3, 2), None, None),
        (W, (2, 0), [], None),
        (B, (0, 0), [(1, 0)], None),
        (W, (5, 0), [(5, 1)], None),
        (B, PASS, [], None),
        (W, (1, 0), [], None),
        (B, PASS, [], None),
        (W, (2, 0), [], None),
        (B, (0, 0), [(1, 0)], None),
        (W, PASS, [], None),
    ])
    assert state.encore_phase == 0 and not state.is_game_finished
    play_checked(state, B, PASS)     # black's second pass in this very position ends the phase
    assert state.encore_phase == 1 and not state.is_game_finished
    pass_out(state, 4)
    assert state.encore_phase == 2 and state.is_game_finished
    assert (state.winner, state.final_white_minus_black_score) == (B, -2.5)


SUICIDE_KO_BOARD = """
    .OXO.X
    OXXOOO
    XX....
    ......
    ......
"""


@pytest.mark.parametrize("ko_rule,after_pass,after_loop,after_fill,after_more", [
    (KoRule.POSITIONAL, [(5, 0)], [(0, 1)], [(0, 1)], [(0, 0), (0, 1)]),
    (KoRule.SITUATIONAL, [], [(0, 1)], [(0, 1)], []),
    (KoRule.SPIGHT, [], [], [], [(0, 0)]),
])
def test_superko_with_multi_stone_suicide(ko_rule, after_pass, after_loop, after_fill, after_more):
    # KataGo "Suicide ko testing": area scoring, multi-stone suicide legal.
    state = state_from(SUICIDE_KO_BOARD, rules_tuple(ko=ko_rule, scoring=ScoringRule.AREA, tax=TaxRule.NONE,
                                                     suicide=True))
    run_steps(state, [
        (B, (4, 0), None, None),          # black suicides two stones
        (W, PASS, after_pass, None),
        (B, (4, 0), None, None), (W, (0, 0), None, None), (B, (5, 0), None, None), (W, (1, 0), None, None),
        (B, PASS, after_loop, None),
        (W, (0, 0), None, None),
        (B, (4, 0), after_fill, None),
    ])
    # Moves that superko may forbid still play tolerantly and leave a consistent history.
    for pla, xy in [(W, (0, 1)), (B, (5, 0)), (W, (1, 0)), (B, (4, 0))]:
        state.play_tolerant(xy, pla)
    assert illegal_points(state, W) == set(after_more)
    assert_stones(state, """
        .OXOX.
        .XXOOO
        XX....
        ......
        ......
    """)
    state.board().check_consistency()


SENDING_TWO_BOARD = """
    .....
    ..XXX
    XX.OO
    XOOO.
    XO.OX
    XOXX.
"""
SENDING_TWO_CYCLE = [(B, (4, 3)), (W, (4, 5)), (B, (4, 4))]


@pytest.mark.parametrize("has_button,komi,expected", [(False, 0.0, -11), (True, 0.5, -10)])
def test_spightlike_end_of_an_area_game_under_simple_ko(has_button, komi, expected):
    # KataGo "Sending two returning one initial pass WITH(OUT) button, simple": white's
    # second pass in a position it already passed from ends the game.
    rules = rules_tuple(ko=KoRule.SIMPLE, scoring=ScoringRule.AREA, button=has_button, komi=komi)
    state = state_from(SENDING_TWO_BOARD, rules)
    play_checked(state, B, (2, 2))
    play_checked(state, W, PASS)
    for pla, xy in SENDING_TWO_CYCLE:
        play_checked(state, pla, xy)
    assert not state.is_game_finished
    play_checked(state, W, PASS)
    if has_button:
        # The first pass only took the button, so the cycle must run once more.
        assert not state.is_game_finished
        for pla, xy in SENDING_TWO_CYCLE:
            play_checked(state, pla, xy)
        assert not state.is_game_finished
        play_checked(state, W, PASS)
    assert state.is_game_finished
    assert (state.winner, state.final_white_minus_black_score) == (B, expected)


@pytest.mark.parametrize("has_button,initial_pass", [(False, False), (True, False), (True, True)])
def test_situational_superko_forbids_restarting_the_cycle(has_button, initial_pass):
    # KataGo "Sending two returning one ... SSK" cases.
    board = SENDING_TWO_BOARD if initial_pass else SENDING_TWO_BOARD.replace("XX.OO", "XXXOO")
    rules = rules_tuple(ko=KoRule.SITUATIONAL, scoring=ScoringRule.AREA, button=has_button,
                        komi=0.5 if has_button else 0.0)
    state = state_from(board, rules)
    if initial_pass:
        play_checked(state, B, (2, 2))
        play_checked(state, W, PASS)
    cycles = 2 if has_button and not initial_pass else 1
    for cycle in range(cycles):
        for pla, xy in SENDING_TWO_CYCLE:
            play_checked(state, pla, xy)
        play_checked(state, W, PASS)
        last = cycle == cycles - 1
        # With the button unclaimed, white's first pass takes it and clears the history.
        assert illegal_points(state, B) == ({(4, 3)} if last else set())
        assert not state.is_game_finished


# ---- long cycles --------------------------------------------------------------------------

def test_eternal_life_is_no_result_under_simple_ko():
    board = """
        ........
        OOOOOO..
        XXXXXO..
        XOOOXXOO
        .O.X.OX.
    """
    state = state_from(board, rules_tuple(ko=KoRule.SIMPLE, scoring=ScoringRule.AREA, tax=TaxRule.NONE))
    cycle = [(B, (2, 4)), (W, (4, 4)), (B, (3, 4)), (W, (5, 4))]
    for pla, xy in cycle + cycle[:3]:
        play_checked(state, pla, xy)
        assert not state.is_game_finished
    play_checked(state, *cycle[3])    # the position occurs for the third time
    assert state.is_game_finished and state.is_no_result
    assert (state.winner, state.final_white_minus_black_score) == (EMPTY, 0)
    assert not state.is_scored


TRIPLE_KO_BOARD = """
    OOOOOOO
    OXO.O.O
    X.XOXOX
    XXXXXXX
    OOOOOOO
    .......
"""
TRIPLE_KO_CYCLE = [(B, (3, 1)), (W, (1, 2)), (B, (5, 1)), (W, (3, 2)), (B, (1, 1)), (W, (5, 2))]


def test_triple_ko_is_no_result_under_simple_ko():
    state = state_from(TRIPLE_KO_BOARD, rules_tuple(ko=KoRule.SIMPLE, scoring=ScoringRule.AREA, tax=TaxRule.NONE))
    moves = TRIPLE_KO_CYCLE * 2
    for pla, xy in moves[:-1]:
        play_checked(state, pla, xy)
        assert not state.is_game_finished
    play_checked(state, *moves[-1])
    assert state.is_game_finished and state.is_no_result and state.winner == EMPTY


def test_triple_ko_under_positional_superko():
    state = state_from(TRIPLE_KO_BOARD, rules_tuple(scoring=ScoringRule.AREA, tax=TaxRule.NONE))
    run_steps(state, [(pla, xy, None, None) for pla, xy in TRIPLE_KO_CYCLE[:5]])
    assert illegal_points(state, W) == {(1, 2), (5, 2)}
    # (1,2) is the simple-ko point; superko bans only what simple ko does not already ban.
    assert state.ko_point == (1, 2)
    assert state.superko_banned_points() == [(5, 2)]
    with pytest.raises(IllegalMoveError):
        state.play((1, 2), W)


def test_passing_out_of_a_triple_ko_scores_the_game():
    state = state_from(TRIPLE_KO_BOARD, rules_tuple(ko=KoRule.SIMPLE, scoring=ScoringRule.AREA, tax=TaxRule.NONE))
    for pla, xy in TRIPLE_KO_CYCLE:
        play_checked(state, pla, xy)
    play_checked(state, B, PASS)
    play_checked(state, W, PASS)
    assert state.is_game_finished and state.is_scored and not state.is_no_result


# ---- the encore's ko mechanics ------------------------------------------------------------

def test_triple_ko_in_the_encore():
    state = state_from(TRIPLE_KO_BOARD, rules_tuple())
    pass_out(state, 2)
    assert state.encore_phase == 1
    run_steps(state, [
        (B, (3, 1), None, None),
        (W, (1, 2), None, None),
        (B, (5, 1), None, None),
        (W, (3, 2), None, None),          # a pass for ko: the blocked stone at (3,1) stays
        (B, (1, 1), None, [(5, 1)]),      # a complete capture; only the last ko stays blocked
    ])
    assert_stones(state, """
        .......
        .X.X.X.
        X.X.X.X
        XXXXXXX
        OOOOOOO
        .......
    """)


THROW_IN_BOARD = """
    ..O....
    ...O...
    .XOXO..
    ..X.X..
    ...X...
    .......
"""
AFTER_WHITE_KO_CAPTURE = """
    ..O....
    ...O...
    .XO.O..
    ..XOX..
    ...X...
    .......
"""


def encore_after_white_ko_capture():
    state = state_from(THROW_IN_BOARD, rules_tuple(), next_player=W)
    pass_out(state, 2)
    run_steps(state, [(W, (3, 3), None, [(3, 3)])])
    assert_stones(state, AFTER_WHITE_KO_CAPTURE)
    return state


def test_own_throw_in_does_not_clear_the_ko_recapture_block():
    state = encore_after_white_ko_capture()
    run_steps(state, [(B, (2, 1), None, [(3, 3)]), (W, (1, 1), None, [(3, 3)])])
    # White's (1,1) captured the throw-in at (2,1); the block on (3,3) survives.
    assert_stones(state, """
        ..O....
        .O.O...
        .XO.O..
        ..XOX..
        ...X...
        .......
    """)


def test_ko_recapture_block_does_not_stop_a_capture_that_is_not_a_ko():
    state = encore_after_white_ko_capture()
    run_steps(state, [(B, (2, 1), None, [(3, 3)]), (W, (0, 0), None, [(3, 3)]), (B, (3, 2), None, [])])
    assert_stones(state, """
        O.O....
        ..XO...
        .X.XO..
        ..X.X..
        ...X...
        .......
    """)


def test_once_only_rule_does_not_stop_the_opponent_filling_the_ko():
    state = encore_after_white_ko_capture()
    run_steps(state, [
        (B, (3, 2), [], []),              # pass for ko: lifts the block, stones unchanged
        (W, PASS, None, []),
        (B, (3, 2), None, [(3, 2)]),      # black takes the ko
        (W, PASS, None, [(3, 2)]),
        (B, (3, 3), None, [(3, 2)]),      # black fills the ko
    ])
    assert_stones(state, """
        ..O....
        ...O...
        .XOXO..
        ..XXX..
        ...X...
        .......
    """)
    for xy in [(1, 3), (2, 4), (3, 5), (4, 4)]:
        run_steps(state, [(W, xy, None, None), (B, PASS, None, [(3, 2)])])
    run_steps(state, [(W, (5, 3), None, [])])    # white captures everything, block gone with the stone
    assert_stones(state, """
        ..O....
        ...O...
        .XO.O..
        .O...O.
        ..O.O..
        ...O...
    """)


PASS_FOR_KO_BOARD = """
    ..OX.OO
    ..OXXXO
    ...OOX.
    ....OXX
    ..O.OO.
    .......
    .......
"""


def test_pass_for_ko_and_once_only_captures():
    # KataGo "Pass for ko".
    state = state_from(PASS_FOR_KO_BOARD, rules_tuple())
    pass_out(state, 2)
    assert state.encore_phase == 1
    run_steps(state, [
        (B, PASS, None, None), (W, (6, 2), None, None), (B, (4, 0), None, None), (W, (6, 1), None, None),
        (B, (6, 0), None, None),
        (W, (5, 0), [], [(5, 0)]),             # white retakes: black may not take back at once
        (B, (2, 2), None, None),
        (W, (1, 2), [], [(5, 0)]),             # a ko threat does not help in the encore
        (B, PASS, None, None),
        (W, (0, 6), [], [(5, 0)]),             # neither does a plain pass
        (B, (6, 0), None, None),               # pass for ko: only lifts the block
    ])
    assert_stones(state, """
        ..OXXO.
        ..OXXXO
        .OXOOX.
        ....OXX
        ..O.OO.
        .......
        O......
    """)
    run_steps(state, [
        (W, (0, 5), None, None),
        (B, (6, 0), [], [(6, 0)]),             # now black retakes and white is blocked
        (W, (5, 0), None, None),               # white's pass for ko
        (B, PASS, [], []),
        (W, (5, 0), [], [(5, 0)]),             # white retakes; black is blocked again
        (B, (6, 0), None, None),               # black's pass for ko
        (W, PASS, [(6, 0)], []),               # black already captured here in this position: once only
        (B, (1, 1), None, None),
        (W, (2, 3), [], []),                   # a changed position lifts the once-only ban
        (B, (6, 0), [], [(6, 0)]),
    ])
    assert state.encore_phase == 1
    pass_out(state, 2)
    assert state.encore_phase == 2
    assert illegal_points(state, W) == set() and state.ko_recap_blocked_points() == []
    run_steps(state, [
        (W, (5, 0), None, None),
        (B, (1, 0), None, None),
        (W, (2, 2), [], [(5, 0)]),
        (B, (6, 0), None, None),               # pass for ko
        (W, PASS, [], []),
        (B, (6, 0), None, None),
        (W, (5, 0), None, None),               # white's pass for ko
        (B, PASS, None, None),
        (W, (5, 0), None, None),
        (B, (6, 0), None, None),
        (W, PASS, [(6, 0)], []),               # once only, again
    ])


def test_two_step_ko_in_the_encore():
    board = """
        X.X....
        .XX....
        XOX....
        OOO....
        .......
    """
    state = state_from(board, rules_tuple(ko=KoRule.SITUATIONAL, suicide=True), next_player=W)
    pass_out(state, 2)
    assert state.encore_phase == 1
    run_steps(state, [
        (W, (0, 1), [], [(0, 1)]),
        (B, PASS, None, None),
        (W, (1, 0), [], [(1, 0), (0, 1)]),
        (B, (0, 0), [], [(0, 1)]),             # pass for ko against the stone at (1,0)
    ])
    assert_stones(state, """
        .OX....
        OXX....
        .OX....
        OOO....
        .......
    """)
    after_black_capture = """
        X.X....
        OXX....
        .OX....
        OOO....
        .......
    """
    run_steps(state, [(W, PASS, [], [(0, 1)]), (B, (0, 0), [], [(0, 0), (0, 1)])])
    assert_stones(state, after_black_capture)
    run_steps(state, [(W, PASS, None, None), (B, (0, 2), [], [(0, 0)])])    # pass for ko at (0,1)
    assert_stones(state, after_black_capture)
    run_steps(state, [(W, PASS, None, None), (B, (0, 2), [], [(0, 0), (0, 2)])])
    after_second_capture = """
        X.X....
        .XX....
        XOX....
        OOO....
        .......
    """
    assert_stones(state, after_second_capture)
    run_steps(state, [(W, (0, 1), None, None), (B, PASS, [(0, 1)], [(0, 0)])])
    assert_stones(state, after_second_capture)


def test_throw_in_that_breaks_the_ko_shape_keeps_the_block():
    board = """
        X......
        OXX....
        .O.....
        OO.....
        .......
    """
    state = state_from(board, rules_tuple(ko=KoRule.SITUATIONAL, suicide=True))
    pass_out(state, 4)
    assert state.encore_phase == 2
    run_steps(state, [(B, (0, 2), [], [(0, 2)]), (W, (1, 0), None, None), (B, (2, 0), [], [(0, 2)])])
    assert_stones(state, """
        X.X....
        .XX....
        XO.....
        OO.....
        .......
    """)


def test_pass_for_ko_on_an_occupied_point():
    # KataGo "Test case failing in search before": white's ko capture at (4,6) is blocked,
    # black "plays" the recapture as a pass for ko, and white then fills at (4,7).
    board = """
        XXXXXXXXX
        X.OXXXXXX
        XXXXOXXXX
        XXX.OOXX.
        OXXXOOXXX
        .OXXXXXXO
        XXXX.XOOO
        XXXOXOOOO
        XXXOO.OOO
    """
    state = state_from(board, rules_tuple(ko=KoRule.SIMPLE))
    pass_out(state, 2)
    assert state.encore_phase == 1
    for pla, xy in [(B, (8, 3)), (W, (4, 6)), (B, (4, 7)), (W, (4, 7))]:
        play_checked(state, pla, xy)
    assert_stones(state, """
        XXXXXXXXX
        X.OXXXXXX
        XXXXOXXXX
        XXX.OOXXX
        OXXXOOXXX
        .OXXXXXXO
        XXXXOXOOO
        XXXOOOOOO
        XXXOO.OOO
    """)
    state.board().check_consistency()


def test_encore_moves_cost_points_in_phase_one_but_not_in_phase_two():
    state = state_from(PREVENT_ENCORE_BOARD, rules_tuple(tax=TaxRule.NONE))
    bonus = state.white_bonus_score
    pass_out(state, 2)
    play_checked(state, B, (2, 0))            # a move in encore 1: white gets a point
    assert state.white_bonus_score == bonus + 1
    play_checked(state, W, PASS)
    play_checked(state, B, PASS)
    play_checked(state, W, PASS)
    assert state.encore_phase == 2
    play_checked(state, B, (0, 2))            # a move in encore 2 is free
    assert state.white_bonus_score == bonus + 1
