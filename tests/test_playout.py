"""Random playouts on the board struct: the PRNG, move choice, game end, Tromp-Taylor count.

Diagrams: 'X' black, 'O' white, '.' empty; the first row is the top (y = 0).
"""
import collections

import pytest

from katacli._core.board import GoBoard
from katacli._core.playout import (
    choose_move, random_playout, record_playout, replay_moves, rng_sequence, run_playouts, tromp_taylor_score,
)

B, W, EMPTY = 1, 2, 0
MASK64 = (1 << 64) - 1
MAX_MOVES_PER_POINT = 3


# ---- independent references ----------------------------------------------------------------

def reference_xoshiro256starstar(seed, count):
    """xoshiro256** seeded by splitmix64, straight from the published algorithms."""
    def splitmix64(state):
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        return state, z ^ (z >> 31)

    def rotl(x, k):
        return ((x << k) | (x >> (64 - k))) & MASK64

    s, state = [], seed
    for _ in range(4):
        state, word = splitmix64(state)
        s.append(word)
    out = []
    for _ in range(count):
        out.append((rotl((s[1] * 5) & MASK64, 7) * 9) & MASK64)
        t = (s[1] << 17) & MASK64
        s[2] ^= s[0]
        s[3] ^= s[1]
        s[1] ^= s[2]
        s[0] ^= s[3]
        s[2] ^= t
        s[3] = rotl(s[3], 45)
    return out


def neighbours(board, xy):
    x, y = xy
    return [(nx, ny) for nx, ny in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1))
            if 0 <= nx < board.x_size and 0 <= ny < board.y_size]


def diagonals(board, xy):
    x, y = xy
    return [(nx, ny) for nx, ny in ((x - 1, y - 1), (x + 1, y - 1), (x - 1, y + 1), (x + 1, y + 1))
            if 0 <= nx < board.x_size and 0 <= ny < board.y_size]


def is_simple_eye(board, xy, pla):
    """All neighbours pla; opponent diagonals: fewer than 2 in the middle, none on the edge."""
    if board.color_at(xy) != EMPTY or any(board.color_at(n) != pla for n in neighbours(board, xy)):
        return False
    on_edge = len(neighbours(board, xy)) < 4
    opp_corners = sum(board.color_at(d) == 3 - pla for d in diagonals(board, xy))
    return opp_corners == 0 or (not on_edge and opp_corners == 1)


def acceptable_moves(board, pla, multi_stone_suicide_legal=False):
    return {(x, y) for y in range(board.y_size) for x in range(board.x_size)
            if board.color_at((x, y)) == EMPTY and board.is_legal((x, y), pla, multi_stone_suicide_legal)
            and not is_simple_eye(board, (x, y), pla)}


def reference_tromp_taylor(board):
    """Stones plus empty regions reaching one colour only, white minus black."""
    score, seen = 0, set()
    for y in range(board.y_size):
        for x in range(board.x_size):
            colour = board.color_at((x, y))
            if colour != EMPTY:
                score += 1 if colour == W else -1
            elif (x, y) not in seen:
                region, reached, stack = 0, set(), [(x, y)]
                seen.add((x, y))
                while stack:
                    point = stack.pop()
                    region += 1
                    for n in neighbours(board, point):
                        c = board.color_at(n)
                        if c == EMPTY and n not in seen:
                            seen.add(n)
                            stack.append(n)
                        elif c != EMPTY:
                            reached.add(c)
                if reached == {W}:
                    score += region
                elif reached == {B}:
                    score -= region
    return score


# ---- PRNG ----------------------------------------------------------------------------------

@pytest.mark.parametrize("seed", [0, 1, 42, 2**63 + 12345])
def test_rng_is_xoshiro256starstar(seed):
    assert rng_sequence(seed, 50) == reference_xoshiro256starstar(seed, 50)


def test_rng_below_stays_in_range_and_is_roughly_uniform():
    draws = rng_sequence(7, 36100, below=361)
    assert min(draws) == 0 and max(draws) == 360
    counts = collections.Counter(draws)
    expected = len(draws) / 361
    # Each bucket within 50% of its expectation (100 draws each; a 5-sigma band).
    assert all(0.5 * expected < counts[v] < 1.5 * expected for v in range(361))


def test_different_seeds_give_different_streams():
    assert rng_sequence(1, 4) != rng_sequence(2, 4)
    assert rng_sequence(3, 4) == rng_sequence(3, 4)


# ---- move choice ---------------------------------------------------------------------------

EYES_AND_A_FREE_ROW = """
    .X.X.
    XXXXX
    .X.X.
    XXXXX
    .....
"""


@pytest.mark.parametrize("pla", [B, W])
def test_choose_move_is_uniform_over_acceptable_moves(pla):
    # Black's eyes are its own (never filled) and suicide for white: only the free row is acceptable.
    board = GoBoard.from_diagram(EYES_AND_A_FREE_ROW)
    acceptable = acceptable_moves(board, pla)
    assert acceptable == {(x, 4) for x in range(5)}
    counts = collections.Counter(choose_move(board, pla, seed) for seed in range(5000))
    assert set(counts) == acceptable
    assert all(800 < counts[xy] < 1200 for xy in acceptable)   # 1000 expected each


def test_choose_move_passes_when_only_eyes_are_left():
    board = GoBoard.from_diagram("""
        .X.X.
        XXXXX
        .X.X.
        XXXXX
        .X.X.
    """)
    for seed in range(20):
        assert choose_move(board, B, seed) is None   # only its own eyes
        assert choose_move(board, W, seed) is None   # all suicide


def test_choose_move_respects_the_simple_ko_point():
    board = GoBoard.from_diagram("""
        .XO..
        XO.O.
        .XO..
        .....
    """)
    board.play((2, 1), B)
    assert board.ko_point == (1, 1)
    assert all(choose_move(board, W, seed) != (1, 1) for seed in range(300))


def test_choose_move_finds_the_last_acceptable_point():
    # 19x19 all black eyes except one free point: the fallback scan must find it.
    rows = []
    for y in range(19):
        rows.append("".join("." if x % 2 == 0 and y % 2 == 0 else "X" for x in range(19)))
    rows[18] = "X" * 17 + ".."
    board = GoBoard.from_diagram("\n".join(rows))
    acceptable = acceptable_moves(board, W)
    assert len(acceptable) == 2
    for seed in range(50):
        assert choose_move(board, W, seed) in acceptable


def test_false_eyes_are_filled():
    # A corner point with an opponent diagonal is not an eye: black may fill it.
    board = GoBoard.from_diagram("""
        .X...
        XO...
        .....
        .....
        .....
    """)
    assert not is_simple_eye(board, (0, 0), B)
    moves = {choose_move(board, B, seed) for seed in range(2000)}
    assert (0, 0) in moves


# ---- playouts ------------------------------------------------------------------------------

SIZES = [(2, 2), (3, 3), (5, 5), (9, 9), (13, 13), (19, 19), (7, 3), (2, 19), (19, 11)]


@pytest.mark.parametrize("suicide", [False, True])
@pytest.mark.parametrize("x_size,y_size", SIZES)
def test_playouts_end_with_nothing_left_to_play(x_size, y_size, suicide):
    cap = MAX_MOVES_PER_POINT * x_size * y_size
    for seed in range(8):
        board = GoBoard(x_size, y_size)
        stones = random_playout(board, seed=seed, multi_stone_suicide_legal=suicide)
        board.check_consistency()
        assert 0 < stones <= cap
        if stones < cap:   # ended by two passes: neither side had anything but eye-filling left
            assert acceptable_moves(board, B, suicide) == set()
            assert acceptable_moves(board, W, suicide) == set()
        assert tromp_taylor_score(board) == reference_tromp_taylor(board)


def test_playouts_are_deterministic_per_seed():
    boards = []
    for seed in (5, 5, 6):
        board = GoBoard(9)
        random_playout(board, seed=seed)
        boards.append(str(board))
    assert boards[0] == boards[1] != boards[2]


def test_max_moves_and_first_player():
    board = GoBoard(19)
    assert random_playout(board, first=W, max_moves=1, seed=3) == 1
    colours = [c for row in board.colors() for c in row if c != EMPTY]
    assert colours == [W]
    board = GoBoard(19)
    assert random_playout(board, max_moves=40, seed=3) == 40
    flat = [c for row in board.colors() for c in row]
    assert flat.count(B) == flat.count(W) == 20   # no captures this early on an open board
    with pytest.raises(ValueError):
        random_playout(GoBoard(9), first=3)


def test_playout_continues_from_a_position():
    board = GoBoard.from_diagram(EYES_AND_A_FREE_ROW)
    stones = random_playout(board, first=W, seed=1)
    board.check_consistency()
    assert stones >= 1
    assert acceptable_moves(board, B) == set() and acceptable_moves(board, W) == set()


def test_batch_playouts_agree_with_single_ones():
    stones, score_sum = run_playouts(9, 9, 20, seed=11)
    assert stones > 20 * 40              # a random 9x9 game places far more than 40 stones
    assert abs(score_sum) <= 20 * 81


def test_replaying_a_recorded_playout_is_always_legal():
    moves = record_playout(19, 19, seed=2)
    assert len(moves) > 200
    assert replay_moves(19, 19, moves, 3, True) == 0
    assert replay_moves(19, 19, moves, 3, False) == 0


# ---- Tromp-Taylor count --------------------------------------------------------------------

SCORE_CASES = [
    ("empty board", """
        ...
        ...
     """, 0),
    ("one black stone owns everything", """
        ...
        .X.
        ...
     """, -9),
    ("one white stone owns everything", """
        ....
        ..O.
     """, 8),
    ("split board", """
        .X.O.
        .X.O.
        .X.O.
     """, 0),
    ("white has the bigger side", """
        X.O..
        X.O..
     """, 4),
    ("region touching both colours is nobody's", """
        X...O
        X...O
     """, 0),
    ("living black group, white dead stone still counts", """
        .X...
        XX...
        ...O.
     """, -(3 + 1) + 1),
]


@pytest.mark.parametrize("name,diagram,expected", SCORE_CASES, ids=[c[0] for c in SCORE_CASES])
def test_tromp_taylor_score(name, diagram, expected):
    board = GoBoard.from_diagram(diagram)
    assert tromp_taylor_score(board) == expected == reference_tromp_taylor(board)


def test_score_sign_after_black_fills_the_board_with_eyes():
    board = GoBoard.from_diagram("""
        .X.X.
        XXXXX
        .X.X.
        XXXXX
        .X.X.
    """)
    assert tromp_taylor_score(board) == -25
