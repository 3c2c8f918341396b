"""katacli.game.coords against KataGo's Location::toString / tryOfString and PlayerIO."""
import pytest

from katacli.game.coords import (
    BLACK,
    WHITE,
    CoordError,
    OffBoardError,
    format_color,
    flat_index,
    format_vertex,
    point_of_flat,
    opponent,
    parse_color,
    parse_vertex,
)

# (vertex, x_size, y_size, internal (x, y) with y from the top)
VERTEX_CASES = [
    ("A1", 19, 19, (0, 18)),
    ("A19", 19, 19, (0, 0)),
    ("T19", 19, 19, (18, 0)),
    ("T1", 19, 19, (18, 18)),
    ("H8", 19, 19, (7, 11)),
    ("J8", 19, 19, (8, 11)),  # no I: J is column 8
    ("K10", 19, 19, (9, 9)),
    ("D4", 19, 19, (3, 15)),
    ("Q16", 19, 19, (15, 3)),
    # 9 wide, 13 tall
    ("A1", 9, 13, (0, 12)),
    ("J13", 9, 13, (8, 0)),
    ("E7", 9, 13, (4, 6)),
    ("A13", 9, 13, (0, 0)),
    # smallest board
    ("A1", 2, 2, (0, 1)),
    ("B2", 2, 2, (1, 0)),
    ("B1", 2, 2, (1, 1)),
    # wide boards: after Z come two-letter columns, first letter names the block of 25
    ("Z1", 25, 25, (24, 24)),
    ("AA1", 30, 5, (25, 4)),
    ("AB5", 30, 5, (26, 0)),
    ("AE3", 30, 5, (29, 2)),
    ("BA1", 60, 2, (50, 1)),
]


@pytest.mark.parametrize("vertex,x_size,y_size,xy", VERTEX_CASES)
def test_vertex_round_trip(vertex, x_size, y_size, xy):
    assert parse_vertex(vertex, x_size, y_size) == xy
    assert parse_vertex(vertex.lower(), x_size, y_size) == xy
    assert format_vertex(xy, x_size, y_size) == vertex


@pytest.mark.parametrize("x_size,y_size", [(19, 19), (9, 13), (13, 9), (2, 2), (25, 25), (30, 7)])
def test_every_point_round_trips(x_size, y_size):
    seen = set()
    for x in range(x_size):
        for y in range(y_size):
            text = format_vertex((x, y), x_size, y_size)
            assert parse_vertex(text, x_size, y_size) == (x, y)
            assert "I" not in text
            seen.add(text)
    assert len(seen) == x_size * y_size


@pytest.mark.parametrize("text", ["pass", "PASS", "Pass", "pss", " pass "])
def test_pass(text):
    assert parse_vertex(text, 19, 19) is None


def test_format_pass():
    assert format_vertex(None, 19, 19) == "pass"


@pytest.mark.parametrize("text,x_size,y_size,xy", [
    ("(3,4)", 19, 19, (3, 4)),
    ("(0,0)", 2, 2, (0, 0)),
    ("( 8 , 12 )", 9, 13, (8, 12)),
])
def test_machine_form(text, x_size, y_size, xy):
    assert parse_vertex(text, x_size, y_size) == xy


def test_machine_form_printed_for_huge_boards():
    assert format_vertex((3, 4), 626, 5) == "(3,4)"


BAD_VERTICES = [
    ("", 19, 19), ("A", 19, 19), ("I5", 19, 19), ("i5", 19, 19), ("A0", 19, 19), ("A20", 19, 19),
    ("U1", 19, 19), ("Z19", 19, 19), ("A-1", 19, 19), ("AA1", 19, 19), ("AI1", 30, 5), ("1A", 19, 19),
    ("A1x", 19, 19), ("K1", 9, 13), ("A14", 9, 13), ("C1", 2, 2), ("A3", 2, 2), ("(3,4", 19, 19),
    ("(3)", 19, 19), ("(a,b)", 19, 19), ("passs", 19, 19), ("A1.5", 19, 19),
]


@pytest.mark.parametrize("text,x_size,y_size", BAD_VERTICES)
def test_bad_vertex(text, x_size, y_size):
    with pytest.raises(CoordError) as err:
        parse_vertex(text, x_size, y_size)
    assert not isinstance(err.value, OffBoardError)
    assert repr(text)[1:-1] in str(err.value)


@pytest.mark.parametrize("text,x_size,y_size", [("(19,0)", 19, 19), ("(0,-1)", 19, 19), ("(8,13)", 9, 13)])
def test_machine_form_off_board(text, x_size, y_size):
    # KataGo parses these and then calls the move illegal; OffBoardError lets GTP say so.
    with pytest.raises(OffBoardError, match="off the"):
        parse_vertex(text, x_size, y_size)


@pytest.mark.parametrize("xy,x_size,y_size", [((19, 0), 19, 19), ((0, 13), 9, 13), ((-1, 0), 9, 9)])
def test_off_board_prints_machine_form(xy, x_size, y_size):
    assert format_vertex(xy, x_size, y_size) == f"({xy[0]},{xy[1]})"


@pytest.mark.parametrize("text,color", [
    ("b", BLACK), ("B", BLACK), ("black", BLACK), ("BLACK", BLACK), ("Black", BLACK),
    ("w", WHITE), ("W", WHITE), ("white", WHITE), ("WHITE", WHITE), ("wHiTe", WHITE),
])
def test_parse_color(text, color):
    assert parse_color(text) == color


@pytest.mark.parametrize("text", ["", "x", "bl", "blackk", "empty", "1", " b"])
def test_bad_color(text):
    with pytest.raises(CoordError, match="Could not parse color"):
        parse_color(text)


@pytest.mark.parametrize("color,short,long", [(BLACK, "B", "Black"), (WHITE, "W", "White")])
def test_format_color(color, short, long):
    assert format_color(color) == short
    assert format_color(color, long=True) == long
    assert parse_color(short) == color and parse_color(long) == color


def test_opponent_and_bad_colors():
    assert opponent(BLACK) == WHITE and opponent(WHITE) == BLACK
    for bad in (0, 3):
        with pytest.raises(CoordError):
            format_color(bad)
        with pytest.raises(CoordError):
            opponent(bad)


@pytest.mark.parametrize("point, x_size, y_size, index", [
    ((0, 0), 19, 19, 0),
    ((18, 0), 19, 19, 18),
    ((0, 18), 19, 19, 342),          # A1
    ((18, 18), 19, 19, 360),         # T1
    (None, 19, 19, 361),             # pass is last
    ((4, 2), 9, 13, 22),             # rectangular: the row length is x_size
    (None, 9, 13, 117),
    ((0, 1), 2, 2, 2),
])
def test_flat_policy_indices_round_trip(point, x_size, y_size, index):
    assert flat_index(point, x_size, y_size) == index
    assert point_of_flat(index, x_size, y_size) == point


def test_gtp_vertex_point_and_flat_index_name_the_same_point():
    for text in ("A1", "T19", "K10", "D4", "pass"):
        point = parse_vertex(text, 19, 19)
        assert point_of_flat(flat_index(point, 19, 19), 19, 19) == point
        assert format_vertex(point, 19, 19).lower() == text.lower()
