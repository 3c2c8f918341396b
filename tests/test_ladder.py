"""Ladder solver tests (katacli._core.ladder): KataGo semantics, board restoration, the feature scan.

Diagrams: 'X' black, 'O' white, '.' empty; the first row is the top (y = 0).
In expectation diagrams a lowercase stone ('x', 'o') is one the search reports
as laddered, an uppercase one is not.

The KATAGO_* tables re-express cases from KataGo v1.17.2's
cpp/tests/testboardbasic.cpp with their recorded expectations. KataGo's tests
ask every stone in turn, row by row, on the same board, and so do we.
MIDGAME_19 was recorded by running KataGo's own board code on a random 150-move
game (iterLadders with the feature-17 rule, white being the opponent of the
side to move).
"""
import pytest

from katacli._core.board import GoBoard
from katacli._core.ladder import is_ladder_captured, is_ladder_captured_2libs, ladder_map, seqlock_stress

B, W = 1, 2


def parse(diagram):
    """(board, set of points expected laddered) from a diagram with lowercase laddered stones."""
    rows = [r.strip() for r in diagram.strip().splitlines() if r.strip()]
    laddered = {(x, y) for y, row in enumerate(rows) for x, ch in enumerate(row) if ch in "xo"}
    return GoBoard.from_diagram("\n".join(rows).upper()), laddered


def stones(board):
    return [(x, y) for y in range(board.y_size) for x in range(board.x_size) if board.color_at((x, y))]


def snapshot(board):
    return (str(board), board.pos_hash, board.ko_point, board.captures)


def ask_every_stone(board, ask):
    """KataGo's test protocol: every stone, row by row, on one board; the board must not change."""
    before = snapshot(board)
    found = set()
    for xy in stones(board):
        if ask(board, xy):
            found.add(xy)
        assert snapshot(board) == before, f"board changed after asking about {xy}"
    board.check_consistency()
    return found


def defender_first(board, xy):
    return is_ladder_captured(board, xy, True)


def attacker_first_2libs(board, xy):
    return is_ladder_captured_2libs(board, xy)[0]


# ---- KataGo's own expectations --------------------------------------------------

KATAGO_ONE_LIBERTY = [
    ("one liberty, mixed shapes", """
        Xo.X..OxO
        XoXO..O..
        XXO......
        ..O.X....
        xO..XOX..
        O..OOXO..
        .....XO..
        XOOX..XO.
        .xxOO.XXo
    """),
]

KATAGO_TWO_LIBERTIES = [
    ("two liberties, mixed shapes", """
        xo.x..OXO
        xo.O..O..
        xxO......
        ..O.X....
        xO..XO...
        ...OOxO..
        .....xO..
        xooX..Xo.
        .xx.O.XXO
    """),
    ("kos along the ladder", """
        ..................
        ..................
        ....oX.......OX...
        ..XoooX....XOOOX..
        ..XoXoX....XOXOX..
        ..XX.X......X.X...
        ...OX.......OX....
        ....O.............
        ..................
    """),
    ("double ko (1)", """
        .............XO.oo
        ....X........XXooo
        ...X.XX.......XXo.
        ..XOXOXO.......XXO
        ..XOOOXO........XX
        ...XO......O......
        ..................
        ..................
        .....X.OO.........
    """),
    ("double ko (2)", """
        ..................
        ....X.............
        ...X.XX...........
        ..XoXoXO..........
        ..XoooXO..........
        ...Xo......O......
        .................X
        ..................
        .....X.OO.........
    """),
    ("double ko (3)", """
        ....Xo.......Xo...
        ....Xox......Xox..
        ...XO.oX....XO.OX.
        ...XXooX....XXOOX.
        ..XoooX....XOOOX..
        .XO.oX....XO.OX...
        ..XoX......XOX....
        ..XoX......XOX....
        ............O.....
    """),
    ("many kos, nothing laddered", """
        .XXXXXXO.
        XOXOX.XO.
        OOO.OXOO.
        ..OOOO...
        .XXXX....
        XX.X.XX..
        XOXOXOX..
        XOOOOOXX.
        O.OOO.OX.
    """),
    ("ladder across the whole board", """
        ....O..............
        O.................O
        ..................O
        ...OOXO............
        O...OXOOOO.O.....O.
        OXXXXXXXXXO........
        XOOO.X....X.......O
        X.OOOX....XO.......
        XOOOOX....X........
        OXXXXXXXXXO.......O
        OO...XO..O.........
        .O.O.X.O...........
        ......O............
        ....O....X.........
        O....X...X...XO....
        .....X...X...X.....
        .....X...X...X.....
        ....O.XXXXXXXO...O.
        .O....ooooooo.O....
    """),
    ("cubic ladder just inside the node budget", """
        ...OOOOOOOO.....O.O
        XXX.XXXXX...OOOOO.O
        O.....OO.......XXX.
        .......OOO......O..
        O.O................
        ..O......O......O.O
        ..O.......X.....O..
        .........OX........
        .......X.X.O.O.....
        OXX.....X.O........
        OX......Xo.........
        ..XO.....X.........
        O...X..............
        ...................
        ...................
        O...............O..
        .........XO.....O..
        ...OO....XOX.X...X.
        ......X.OOOX.X..OOO
    """),
    ("polynomial ladder beyond the node budget", """
        X.OOOOX.OOOOX.OOOOO
        OXXXXOOXXXXOOXXXXXO
        OX..XXOX..XXOX...XO
        O....XOX...XOX...XO
        ......OX....OX...XO
        .................XO
        ...............XXOO
        ...............OOOX
        ................XX.
        .................XO
        .................XO
        .................XO
        ...............XXOO
        ...............OOOX
        ................XX.
        .................XO
        .................XO
        .X...X..........X.O
        ...............OOO.
    """),
]


@pytest.mark.parametrize("name, diagram", KATAGO_ONE_LIBERTY, ids=[c[0] for c in KATAGO_ONE_LIBERTY])
def test_katago_defender_first(name, diagram):
    board, expected = parse(diagram)
    assert ask_every_stone(board, defender_first) == expected


@pytest.mark.parametrize("name, diagram", KATAGO_TWO_LIBERTIES, ids=[c[0] for c in KATAGO_TWO_LIBERTIES])
def test_katago_attacker_first_two_liberties(name, diagram):
    board, expected = parse(diagram)
    assert ask_every_stone(board, attacker_first_2libs) == expected


# ---- hand-made positions ------------------------------------------------------------
# White at (5, 6) is in atari with its last liberty at (5, 5); running up-left it meets
# only black's stones or the edge.
OPEN_LADDER = """
    .........
    .........
    .........
    .........
    .........
    ......X..
    ....XoX..
    .....X...
    .........
"""

ONE_LIBERTY_CASES = [
    ("ladder to the edge works", OPEN_LADDER),
    ("a white stone on the path breaks it", """
        .........
        .........
        ..O......
        .........
        .........
        ......X..
        ....XOX..
        .....X...
        .........
    """),
    # Black's (5, 7) is itself in atari: white escapes by capturing it at (5, 8),
    # a capture that gains liberties, even though the plain extension is laddered.
    ("capturing an atari stone gains liberties", """
        .........
        .........
        .........
        .........
        .........
        ......X..
        ....XOX..
        ....OXO..
        .........
    """),
    # Both white stones share the last liberty (2, 1); no capture helps them.
    ("nothing to capture", """
        XXoX.....
        Xo.......
        XX.......
        .........
        .........
    """),
    ("more than one liberty is never laddered defender-first", """
        .........
        ....O....
        ...XOX...
        .........
    """),
]


@pytest.mark.parametrize("name, diagram", ONE_LIBERTY_CASES, ids=[c[0] for c in ONE_LIBERTY_CASES])
def test_defender_first(name, diagram):
    board, expected = parse(diagram)
    assert ask_every_stone(board, defender_first) == expected


def test_defender_may_retake_a_ko_at_the_root():
    # Black has just taken a ko at (1, 0), so white may not retake at (0, 0) now. The
    # white stones at (1, 1) and (2, 0) share one liberty; with the retake they escape
    # (KataGo assumes kos work for the defender at the root), without it they are
    # laddered (compare the "nothing to capture" case).
    board = GoBoard.from_diagram("""
        O.OX.....
        XO.......
        .X.......
        .........
        .........
    """)
    board.play((1, 0), B)
    assert board.ko_point == (0, 0)
    assert not board.is_legal((0, 0), W)
    assert ask_every_stone(board, defender_first) == set()
    assert board.ko_point == (0, 0)
    assert ladder_map(board, W) == (set(), set())


def test_attacker_first_without_root_ko_rule():
    # The attacker moving first with the chain already in atari: captured at once.
    board, _ = parse(OPEN_LADDER)
    assert is_ladder_captured(board, (5, 6), False)
    # Three liberties: never a ladder.
    board = GoBoard.from_diagram("""
        .....
        .XO..
        .....
    """)
    assert not is_ladder_captured(board, (2, 1), False)


# White at (5, 6) has two liberties, (5, 5) and (6, 6). Atari from (6, 6) chases white
# up-left; atari from (5, 5) chases it down-right. A white stone on a path breaks
# that ladder; the working moves are the ataris that still capture.
WORKING_MOVE_CASES = [
    ("both directions work", """
        .........
        .........
        .........
        .........
        .........
        ......X..
        ....XO...
        .....X...
        .........
    """, {(5, 5), (6, 6)}),
    ("breaker up-left: only the atari that drives down-right", """
        .........
        .........
        ..O......
        .........
        .........
        ......X..
        ....XO...
        .....X...
        .........
    """, {(5, 5)}),
    ("breaker down-right: only the atari that drives up-left", """
        .........
        .........
        .........
        .........
        .........
        ......X..
        ....XO...
        .....X.O.
        .........
    """, {(6, 6)}),
]


@pytest.mark.parametrize("name, diagram, working", WORKING_MOVE_CASES, ids=[c[0] for c in WORKING_MOVE_CASES])
def test_working_moves(name, diagram, working):
    board = GoBoard.from_diagram(diagram)
    before = snapshot(board)
    assert is_ladder_captured_2libs(board, (5, 6)) == (True, working)
    assert snapshot(board) == before


def test_breakers_on_both_paths():
    board = GoBoard.from_diagram("""
        .........
        .........
        ..O......
        .........
        .........
        ......X..
        ....XO...
        .....X...
        ......O..
    """)
    assert is_ladder_captured_2libs(board, (5, 6)) == (False, set())


def test_enclosed_stone_is_not_a_ladder():
    # The white stone cannot escape black's box, but capturing it takes a non-atari
    # move (a net): both of its liberties are open, so the ladder search says no.
    board = GoBoard.from_diagram("""
        .........
        .XXXXXXX.
        .X..X..X.
        .X..O..X.
        .X..X..X.
        .XXXXXXX.
        .........
    """)
    assert is_ladder_captured_2libs(board, (4, 3)) == (False, set())
    assert ladder_map(board, W) == (set(), set())


def test_non_stones_and_other_liberty_counts():
    board = GoBoard.from_diagram("""
        .....
        .XO..
        .....
    """)
    assert not is_ladder_captured(board, (0, 0), True)          # empty point
    assert is_ladder_captured_2libs(board, (0, 0)) == (False, set())
    assert is_ladder_captured_2libs(board, (2, 1)) == (False, set())   # three liberties


# ---- the feature scan (iterLadders) -------------------------------------------------

def test_scan_marks_whole_chains_and_working_moves_only_for_one_colour():
    board = GoBoard.from_diagram("""
        .........
        .........
        .........
        .........
        .........
        .....OX..
        ....XOX..
        .....X...
        .........
    """)
    # The open ladder after white's first extension: two liberties, and only the
    # atari from above at (5, 4) keeps white running towards the edge.
    white_chain = {(5, 5), (5, 6)}
    assert ladder_map(board, W) == (white_chain, {(5, 4)})
    assert is_ladder_captured_2libs(board, (5, 5)) == (True, {(5, 4)})
    # Working moves are reported only for chains of the requested colour.
    assert ladder_map(board, B) == (white_chain, set())
    assert ladder_map(board, 0) == (white_chain, set())


def test_scan_one_liberty_chain_has_no_working_moves():
    board, expected = parse(OPEN_LADDER)
    assert ladder_map(board, W) == (expected, set())


MIDGAME_19 = ("""
    x.ox.O.O...oXO...Xo
    O....X...X..XXOO.X.
    ....XO....O........
    .O.....OXX....XXXX.
    .X..XO.O..X..X.....
    .....Ox...O.O.O..OO
    ..O..OOXX.......XO.
    ..X..O..X.X.O.O..X.
    ..XO.X..OX.O...XO..
    ....XO..OOOOOX.X..X
    O...XOO...x.O......
    .X...X.XXOOOO....O.
    oX.XXOXoox....X..O.
    ....X.....Ox...X..X
    .OOO.O.XX..OX.X....
    .X..XX..X....XXO..O
    o.OO...X...OXXOX...
    x...XX......O.OO.O.
    .XXo.OOOXOX..XX..O.
""", 2, [(10, 0), (2, 1), (11, 1), (0, 13), (7, 13), (8, 13), (1, 16), (3, 17)])


def test_scan_matches_katago_on_a_midgame_position():
    diagram, working_for, working = MIDGAME_19
    board, expected = parse(diagram)
    before = snapshot(board)
    laddered, moves = ladder_map(board, working_for)
    assert laddered == expected
    assert moves == set(working)
    assert snapshot(board) == before


def test_the_shared_ladder_table_never_hands_out_a_half_written_entry():
    # A tree's table of scanned positions is shared by the search thread and the leaf helpers; each entry's
    # sequence number keeps a reader from taking stones another thread is writing. Four threads write two
    # positions' stones into one entry in turn and read it back under both keys after every write.
    first, first_laddered = parse("""
        .........
        .........
        .........
        .........
        .........
        .....oX..
        ....XoX..
        .....X...
        .........
    """)
    second, second_laddered = parse(OPEN_LADDER)
    assert 1 <= len(first_laddered) <= 13 and 1 <= len(second_laddered) <= 13   # both fit an entry
    assert first_laddered != second_laddered
    torn, hits = seqlock_stress(first, second, 4, 20000)
    assert hits > 1000 and torn == 0


def test_scan_of_empty_board():
    assert ladder_map(GoBoard(19), W) == (set(), set())
