"""Area tests (katacli._core.area): Benson pass-alive, big territories, independent life.

Diagrams: 'X' black, 'O' white, '.' empty; the first row is the top (y = 0).
Expected areas use the same letters for the owner of each point ('.' = nobody).

Modes name area_calculate's flags:
    "pass-alive"   pass-alive stones and territory only
    "safe"         + safe big territories
    "safe+unsafe"  + unsafe big territories
    "all"          + every other stone for its own colour (the NN feature 18/19 setting)
and area_independent_life's flags: "bare", "territories" (keep_territories),
"stones" (keep_stones), "both". A mode name without "/suicide" or "/nosuicide"
means the result is the same whether multi-stone suicide is legal or not.

The KATAGO_* tables re-express cases from KataGo v1.17.2's
cpp/tests/testboardarea.cpp with their recorded expectations; ENDGAME_13 was
recorded by running KataGo's own board code on a random 180-move game.
"""
import pytest

from katacli._core.area import area_map, independent_life_map, non_pass_alive_self_connections
from katacli._core.board import GoBoard

B, W = 1, 2
CHAR = {0: ".", 1: "X", 2: "O"}

AREA_MODES = {
    "pass-alive": (False, False, False),
    "safe": (False, True, False),
    "safe+unsafe": (False, True, True),
    "all": (True, True, True),
}
INDEPENDENT_MODES = {
    "bare": (False, False),
    "territories": (True, False),
    "stones": (False, True),
    "both": (True, True),
}


def rows(diagram):
    return [r.strip() for r in diagram.strip().splitlines() if r.strip()]


def board(diagram):
    return GoBoard.from_diagram("\n".join(rows(diagram)))


def drawn(colour_rows):
    return ["".join(CHAR[c] for c in row) for row in colour_rows]


def suicide_variants(mode):
    """(mode name, [multi_stone_suicide_legal values it covers])."""
    if mode.endswith("/suicide"):
        return mode[: -len("/suicide")], [True]
    if mode.endswith("/nosuicide"):
        return mode[: -len("/nosuicide")], [False]
    return mode, [False, True]


def check_area_case(diagram, expected_by_mode):
    g = board(diagram)
    before = (str(g), g.pos_hash)
    for mode, expected in expected_by_mode.items():
        name, suicide_rules = suicide_variants(mode)
        non_pass_alive_stones, safe, unsafe = AREA_MODES[name]
        for suicide in suicide_rules:
            got = drawn(area_map(g, non_pass_alive_stones, safe, unsafe, suicide))
            assert got == rows(expected), f"mode {name}, multi-stone suicide {suicide}"
    assert (str(g), g.pos_hash) == before


def check_independent_case(diagram, expected_by_mode):
    g = board(diagram)
    for mode, (count, expected) in expected_by_mode.items():
        name, suicide_rules = suicide_variants(mode)
        keep_territories, keep_stones = INDEPENDENT_MODES[name]
        for suicide in suicide_rules:
            got, got_count = independent_life_map(g, keep_territories, keep_stones, suicide)
            assert (got_count, drawn(got)) == (count, rows(expected)), f"mode {name}, multi-stone suicide {suicide}"


# ---- hand-made positions -------------------------------------------------------------

HAND_MADE_AREA = [
    ("two eyes: pass-alive, the open side is only a big territory", """
        .X.X.
        XXXXX
        .....
        .....
        .....
    """, {
        "pass-alive": """
            XXXXX
            XXXXX
            .....
            .....
            .....
        """,
        "safe": """
            XXXXX
            XXXXX
            XXXXX
            XXXXX
            XXXXX
        """,
    }),
    ("one eye is not pass-alive; unsafe territory still counts", """
        .XX..
        XXX..
        .....
    """, {
        "pass-alive": """
            .....
            .....
            .....
        """,
        "safe": """
            .....
            .....
            .....
        """,
        "safe+unsafe": """
            X..XX
            ...XX
            XXXXX
        """,
        "all": """
            XXXXX
            XXXXX
            XXXXX
        """,
    }),
    # White's ring and black's lone stone share two liberties: neither side can
    # approach (seki). Neither is pass-alive, and neither is black's outer wall.
    ("seki is not pass-alive", """
        .........
        .XXXXXXX.
        .XOOOOOX.
        .XO.X.OX.
        .XOOOOOX.
        .XXXXXXX.
        .........
    """, {
        "pass-alive": """
            .........
            .........
            .........
            .........
            .........
            .........
            .........
        """,
        "safe": """
            .........
            .........
            .........
            .........
            .........
            .........
            .........
        """,
        "safe+unsafe": """
            XXXXXXXXX
            X.......X
            X.......X
            X.......X
            X.......X
            X.......X
            XXXXXXXXX
        """,
        "all": """
            XXXXXXXXX
            XXXXXXXXX
            XXOOOOOXX
            XXO.X.OXX
            XXOOOOOXX
            XXXXXXXXX
            XXXXXXXXX
        """,
    }),
    ("every point next to the wall: pass-alive territory, not just big territory", """
        .X.X.....
        XXXXXXXXX
        .........
    """, {
        "pass-alive": """
            XXXXXXXXX
            XXXXXXXXX
            XXXXXXXXX
        """,
    }),
    ("big territory is safe only without opponent stones", """
        .X.X.....
        XXXXXXXXX
        .........
        ....O....
    """, {
        "pass-alive": """
            XXXXXXXXX
            XXXXXXXXX
            .........
            .........
        """,
        "safe": """
            XXXXXXXXX
            XXXXXXXXX
            .........
            .........
        """,
        "safe+unsafe": """
            XXXXXXXXX
            XXXXXXXXX
            .........
            .........
        """,
        "all": """
            XXXXXXXXX
            XXXXXXXXX
            .........
            ....O....
        """,
    }),
    ("empty board: nobody owns anything", """
        .....
        .....
        .....
    """, {
        "all": """
            .....
            .....
            .....
        """,
    }),
]


@pytest.mark.parametrize("name, diagram, expected", HAND_MADE_AREA, ids=[c[0] for c in HAND_MADE_AREA])
def test_hand_made_area(name, diagram, expected):
    check_area_case(diagram, expected)


HAND_MADE_INDEPENDENT = [
    ("two living groups, no dame: one region each, counts cancel", """
        .X.XO.O.O
        XXXXOOOOO
        XXXXOOOOO
    """, {
        "bare": (0, """
            XXXXOOOOO
            XXXXOOOOO
            XXXXOOOOO
        """),
    }),
    ("one black region", """
        .X.X.....
        XXXXXXXXX
        .........
        .........
    """, {
        "bare": (-1, """
            XXXXXXXXX
            XXXXXXXXX
            XXXXXXXXX
            XXXXXXXXX
        """),
    }),
    # The same two groups, now touching a row of dame: both count as seki-like, so
    # only what keep_territories / keep_stones copy back remains.
    ("groups touching dame are not independent", """
        .X.XO.O.O
        XXXXOOOOO
        XXXXOOOOO
        .........
    """, {
        "bare": (0, """
            .........
            .........
            .........
            .........
        """),
        "territories": (0, """
            X.X..O.O.
            .........
            .........
            .........
        """),
        "stones": (0, """
            .X.XO.O.O
            XXXXOOOOO
            XXXXOOOOO
            .........
        """),
        "both": (0, """
            XXXXOOOOO
            XXXXOOOOO
            XXXXOOOOO
            .........
        """),
    }),
    # The black ring with its outside counts as independent; white's ring and black's
    # inner stone touch the two unowned points between them.
    ("seki inside a black wall", """
        .........
        .XXXXXXX.
        .XOOOOOX.
        .XO.X.OX.
        .XOOOOOX.
        .XXXXXXX.
        .........
    """, {
        "bare": (-1, """
            XXXXXXXXX
            XXXXXXXXX
            XX.....XX
            XX.....XX
            XX.....XX
            XXXXXXXXX
            XXXXXXXXX
        """),
    }),
]


@pytest.mark.parametrize("name, diagram, expected", HAND_MADE_INDEPENDENT, ids=[c[0] for c in HAND_MADE_INDEPENDENT])
def test_hand_made_independent_life(name, diagram, expected):
    check_independent_case(diagram, expected)


# ---- KataGo's own expectations -----------------------------------------------------

KATAGO_AREA = [
    ("Area 1: dead stones, big territories", """
        ..O.O.XX.
        .OOOO.X.X
        OO.....XX
        .........
        .........
        X......OO
        .XX...O.O
        X.X..OO.O
        .X.X.O.O.
    """, {
        "pass-alive": """
            ......XXX
            ......XXX
            .......XX
            .........
            .........
            .......OO
            ......OOO
            .....OOOO
            .....OOOO
        """,
        "safe": """
            ......XXX
            ......XXX
            .......XX
            .........
            .........
            .......OO
            ......OOO
            .....OOOO
            .....OOOO
        """,
        "safe+unsafe": """
            OO.O..XXX
            O.....XXX
            .......XX
            .........
            .........
            .......OO
            X.....OOO
            .X...OOOO
            X.X..OOOO
        """,
        "all": """
            OOOOO.XXX
            OOOOO.XXX
            OO.....XX
            .........
            .........
            X......OO
            XXX...OOO
            XXX..OOOO
            XXXX.OOOO
        """,
    }),
    ("Area 2: suicide rule changes vitality", """
        X.OOOOOO.
        OOX..XX.O
        O...XOX.O
        O...X.X.O
        OXXX.XX.O
        OX..X...O
        O.XOX...O
        O.XXX...O
        .OOOOOOO.
    """, {
        "pass-alive/nosuicide": """
            OOOOOOOOO
            OO...XX.O
            O...XXX.O
            O...XXX.O
            OXXXXXX.O
            OXXXX...O
            O.XXX...O
            O.XXX...O
            OOOOOOOOO
        """,
        "pass-alive/suicide": """
            .........
            .........
            .........
            .........
            .........
            .........
            .........
            .........
            .........
        """,
        "safe/nosuicide": """
            OOOOOOOOO
            OO...XX.O
            O...XXX.O
            O...XXX.O
            OXXXXXX.O
            OXXXX...O
            O.XXX...O
            O.XXX...O
            OOOOOOOOO
        """,
        "safe/suicide": """
            .........
            .........
            .........
            .........
            .........
            .........
            .........
            .........
            .........
        """,
        "safe+unsafe/nosuicide": """
            OOOOOOOOO
            OO...XX.O
            O...XXX.O
            O...XXX.O
            OXXXXXX.O
            OXXXX...O
            O.XXX...O
            O.XXX...O
            OOOOOOOOO
        """,
        "safe+unsafe/suicide": """
            ........O
            .........
            .........
            .........
            ....X....
            .........
            .........
            .........
            O.......O
        """,
        "all/nosuicide": """
            OOOOOOOOO
            OOX..XX.O
            O...XXX.O
            O...XXX.O
            OXXXXXX.O
            OXXXX...O
            O.XXX...O
            O.XXX...O
            OOOOOOOOO
        """,
        "all/suicide": """
            X.OOOOOOO
            OOX..XX.O
            O...XOX.O
            O...X.X.O
            OXXXXXX.O
            OX..X...O
            O.XOX...O
            O.XXX...O
            OOOOOOOOO
        """,
    }),
    ("Area Rect: rectangular board", """
        X.OOXXXO.XX.
        OO.OX.XOOX.X
        OOXOX.XO.OX.
    """, {
        "pass-alive/nosuicide": """
            OOOO.....XXX
            OOOO.....XXX
            OOOO......XX
        """,
        "pass-alive/suicide": """
            .........XXX
            .........XXX
            ..........XX
        """,
        "safe/nosuicide": """
            OOOO.....XXX
            OOOO.....XXX
            OOOO......XX
        """,
        "safe/suicide": """
            .........XXX
            .........XXX
            ..........XX
        """,
        "safe+unsafe/nosuicide": """
            OOOO.....XXX
            OOOO.X...XXX
            OOOO.X..O.XX
        """,
        "safe+unsafe/suicide": """
            .........XXX
            .....X...XXX
            .....X..O.XX
        """,
        "all/nosuicide": """
            OOOOXXXO.XXX
            OOOOXXXOOXXX
            OOOOXXXOOOXX
        """,
        "all/suicide": """
            X.OOXXXO.XXX
            OO.OXXXOOXXX
            OOXOXXXOOOXX
        """,
    }),
    ("pass-alive regression", """
        .O.OOXXO.
        O.O.OOXXO
        OOOOOOX.X
        OXO.OOXXX
        XXOOOOXX.
        .XOOOXXX.
        .XOOOOOOX
        OXXOXXXXX
        .XXX.X...
    """, {
        "pass-alive": """
            OOOOOXXXX
            OOOOOOXXX
            OOOOOOXXX
            OXOOOOXXX
            XXOOOOXXX
            XXOOOXXXX
            XXOOOOOOX
            XXXOXXXXX
            XXXXXXXXX
        """,
        "safe": """
            OOOOOXXXX
            OOOOOOXXX
            OOOOOOXXX
            OXOOOOXXX
            XXOOOOXXX
            XXOOOXXXX
            XXOOOOOOX
            XXXOXXXXX
            XXXXXXXXX
        """,
        "safe+unsafe": """
            OOOOOXXXX
            OOOOOOXXX
            OOOOOOXXX
            OXOOOOXXX
            XXOOOOXXX
            XXOOOXXXX
            XXOOOOOOX
            XXXOXXXXX
            XXXXXXXXX
        """,
        "all": """
            OOOOOXXXX
            OOOOOOXXX
            OOOOOOXXX
            OXOOOOXXX
            XXOOOOXXX
            XXOOOXXXX
            XXOOOOOOX
            XXXOXXXXX
            XXXXXXXXX
        """,
    }),
    ("small board with eyes", """
        ..OOO..
        ..XXX..
        XXXXXXX
        .....X.
        OOOOOX.
        .O..OXX
        .X..OX.
    """, {
        "pass-alive": """
            .......
            ..XXX..
            XXXXXXX
            .....XX
            .....XX
            .....XX
            .....XX
        """,
        "safe": """
            .......
            ..XXX..
            XXXXXXX
            .....XX
            .....XX
            .....XX
            .....XX
        """,
        "safe+unsafe": """
            .......
            ..XXX..
            XXXXXXX
            .....XX
            .....XX
            .....XX
            .....XX
        """,
        "all": """
            ..OOO..
            ..XXX..
            XXXXXXX
            .....XX
            OOOOOXX
            .O..OXX
            .X..OXX
        """,
    }),
]


@pytest.mark.parametrize("name, diagram, expected", KATAGO_AREA, ids=[c[0] for c in KATAGO_AREA])
def test_katago_area(name, diagram, expected):
    check_area_case(diagram, expected)


KATAGO_INDEPENDENT_LIFE = [
    ("IndependentLife 3", """
        OOOOOOX.X.XO...
        XXXXXOXXXXXOOOO
        XOOOXOOOOOXXXXX
        X.X.XO...OXX.X.
    """, {
        "bare": (1, """
            OOOOOOXXXXXOOOO
            .....OXXXXXOOOO
            .....OOOOOXXXXX
            .....OOOOOXXXXX
        """),
        "territories": (1, """
            OOOOOOXXXXXOOOO
            .....OXXXXXOOOO
            .....OOOOOXXXXX
            .....OOOOOXXXXX
        """),
        "stones": (1, """
            OOOOOOXXXXXOOOO
            XXXXXOXXXXXOOOO
            XOOOXOOOOOXXXXX
            X.X.XOOOOOXXXXX
        """),
        "both": (1, """
            OOOOOOXXXXXOOOO
            XXXXXOXXXXXOOOO
            XOOOXOOOOOXXXXX
            X.X.XOOOOOXXXXX
        """),
    }),
    ("IndependentLife 4", """
        OOOOOOX.X.XO...
        XXXXXOXXXXXOOOO
        XOOOXOOOOOOXXXX
        X.X.XO...OXX.X.
    """, {
        "bare": (0, """
            OOOOOOXXXXXOOOO
            .....OXXXXXOOOO
            .....OOOOOOXXXX
            .....OOOOOXXXXX
        """),
        "territories": (0, """
            OOOOOOXXXXXOOOO
            .....OXXXXXOOOO
            .....OOOOOOXXXX
            .....OOOOOXXXXX
        """),
        "stones": (0, """
            OOOOOOXXXXXOOOO
            XXXXXOXXXXXOOOO
            XOOOXOOOOOOXXXX
            X.X.XOOOOOXXXXX
        """),
        "both": (0, """
            OOOOOOXXXXXOOOO
            XXXXXOXXXXXOOOO
            XOOOXOOOOOOXXXX
            X.X.XOOOOOXXXXX
        """),
    }),
    ("IndependentLife 5", """
        OOOOOOX.X.XO...
        XXXXXOXXXXOOOOO
        XOOOXOOOOOOXXXX
        X.X.XO...OXX.X.
    """, {
        "bare": (0, """
            OOOOOO.....OOOO
            .....O....OOOOO
            .....OOOOOOXXXX
            .....OOOOOXXXXX
        """),
        "territories": (0, """
            OOOOOO.X.X.OOOO
            .....O....OOOOO
            .....OOOOOOXXXX
            .....OOOOOXXXXX
        """),
        "stones": (0, """
            OOOOOOX.X.XOOOO
            XXXXXOXXXXOOOOO
            XOOOXOOOOOOXXXX
            X.X.XOOOOOXXXXX
        """),
        "both": (0, """
            OOOOOOXXXXXOOOO
            XXXXXOXXXXOOOOO
            XOOOXOOOOOOXXXX
            X.X.XOOOOOXXXXX
        """),
    }),
    ("IndependentLife 6", """
        .XO..OX.X.X.X..
        .XO..O.XOXX.XXX
        .XO...OOOOXXOOO
        .XO.......OO...
    """, {
        "bare": (-1, """
            XX.............
            XX.............
            XX.............
            XX.............
        """),
        "territories": (-1, """
            XX.OO..X.X.X.XX
            XX.OO......X...
            XX.OOO.........
            XX.OOOOOOO..OOO
        """),
        "stones": (-1, """
            XXO..OX.X.X.X..
            XXO..O.XOXX.XXX
            XXO...OOOOXXOOO
            XXO.......OO...
        """),
        "both": (-1, """
            XXOOOOXXXXXXXXX
            XXOOOO.XOXXXXXX
            XXOOOOOOOOXXOOO
            XXOOOOOOOOOOOOO
        """),
    }),
    ("IndependentLife 7", """
        .XO.OOX....XO.O
        XXXOOOX....XOOX
        .XO.OXX...XXXO.
        XOOOOX....XOOOO
        OOXXXX....XO.O.
    """, {
        "bare": (-1, """
            ......XXXXXX...
            ......XXXXXX...
            .....XXXXXXXX..
            .....XXXXXX....
            ..XXXXXXXXX....
        """),
        "territories": (-1, """
            X..O..XXXXXX.O.
            ......XXXXXX...
            X..O.XXXXXXXX..
            .....XXXXXX....
            ..XXXXXXXXX.O.O
        """),
        "stones": (-1, """
            .XO.OOXXXXXXO.O
            XXXOOOXXXXXXOOX
            .XO.OXXXXXXXXO.
            XOOOOXXXXXXOOOO
            OOXXXXXXXXXO.O.
        """),
        "both": (-1, """
            XXOOOOXXXXXXOOO
            XXXOOOXXXXXXOOX
            XXOOOXXXXXXXXO.
            XOOOOXXXXXXOOOO
            OOXXXXXXXXXOOOO
        """),
    }),
]


@pytest.mark.parametrize("name, diagram, expected", KATAGO_INDEPENDENT_LIFE,
                         ids=[c[0] for c in KATAGO_INDEPENDENT_LIFE])
def test_katago_independent_life(name, diagram, expected):
    check_independent_case(diagram, expected)


def test_katago_non_pass_alive_self_connection():
    # Which empty points would join two of a player's chains, at least one of them
    # neither pass-alive nor inside the opponent's pass-alive area ('1'); '-' marks stones.
    g = board("""
        .X.OO.XX.
        XOO.OXOX.
        .O.OOOOOX
        OOO....X.
        ..O..X.XX
        OO.O...X.
        ...XXXOXX
        XXXX.X.X.
        O.O.XXOXO
    """)
    expected = {
        B: """
            0-0--1--0
            ---0----1
            0-0------
            ---0000-1
            00-00-1--
            --0-010-0
            000------
            ----0-0-0
            -0-0-----
        """,
        W: """
            0-0--0--0
            ---0----0
            0-0------
            ---0000-0
            11-10-0--
            --1-000-0
            000------
            ----0-1-0
            -0-0-----
        """,
    }
    for pla, want in expected.items():
        joins = non_pass_alive_self_connections(g, pla)
        got = ["".join("-" if g.color_at((x, y)) else str(int(joins[y][x])) for x in range(g.x_size))
               for y in range(g.y_size)]
        assert got == rows(want)


ENDGAME_13 = """
    OOXX.XXXXOOO.
    OOXXX..X.XOOO
    O.OXXXX.XOOOO
    OO.OOX.XOOO.O
    XOOOX.XO.OOOO
    ..XOXXXOO..OO
    O.OOOXOO.OOOX
    .OOOXXXOXOOX.
    OX.XXXXOOO.OO
    OXXXO.XOOXXOO
    .OXX.XOOX.XO.
    XXXXXOOXXXXXO
    X.X..XOX.XX.X
"""
ENDGAME_13_AREA = {"pass-alive": """
    OOXXXXXXXOOOO
    OOXXXXXX..OOO
    OOOXXXX..OOOO
    OOOOOX..OOOOO
    .OOOXXXOOOOOO
    ...OXXXOOOOOO
    ..OOOXOOOOOO.
    .OOOXXXOOOO..
    .X.XXXXOOO...
    .XXX..XOOXX..
    ..XX..OOXXX..
    XXXXXOOXXXXX.
    XXX...OXXXX..
""", "all": """
    OOXXXXXXXOOOO
    OOXXXXXXXXOOO
    OOOXXXXXXOOOO
    OOOOOXXXOOOOO
    XOOOXXXOOOOOO
    ..XOXXXOOOOOO
    O.OOOXOOOOOOX
    OOOOXXXOOOOX.
    OX.XXXXOOO.OO
    OXXXO.XOOXXOO
    .OXX.XOOXXXOO
    XXXXXOOXXXXXO
    XXXXXXOXXXXXX
"""}


def test_endgame_position_matches_katago():
    g = board(ENDGAME_13)
    for mode, expected in ENDGAME_13_AREA.items():
        assert drawn(area_map(g, *AREA_MODES[mode], False)) == rows(expected), mode


def test_rejects_bad_player():
    with pytest.raises(ValueError):
        non_pass_alive_self_connections(GoBoard(5), 3)
