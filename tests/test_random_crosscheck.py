"""Randomized cross-check of GameState against independent pure-Python references.

Thousands of random games (board sizes 2..19, rectangular ones included, mixed
rules) are played move by move. At every step:

* legality of every point (or of a random sample on big boards) must match a
  slow reference: occupancy, suicide (single-stone always illegal, multi-stone
  by rule), the simple-ko point, and positional / situational superko checked
  against a plain set of earlier positions with KataGo's history conventions
  (passes clear the history under simple and spight ko; the button pass too);
* superko_banned_points() must equal the reference's superko-only bans;
* the stones after each move must match sgfmill's Board (square boards) and a
  small flood-fill board written here (all boards; it is itself checked
  against sgfmill on square ones);
* illegal moves must raise ValueError and leave the state untouched.

The main phase only: a game stops when it ends or enters the territory encore
(tests/test_encore.py covers that). Fixed seeds keep it deterministic.
"""
import random
import time

import pytest
from sgfmill import boards as sgf_boards

from katacli._core.game_state import GameState, IllegalMoveError
from katacli.game.rules import KoRule, Rules

B, W, EMPTY = 1, 2, 0
SGFMILL_COLOUR = {B: "b", W: "w"}

RULE_MIX = [
    Rules.preset("tromp-taylor"),   # positional, multi-stone suicide legal
    Rules.preset("chinese"),        # simple ko
    Rules.preset("chinese-ogs"),    # positional, no suicide
    Rules.preset("aga"),            # situational
    Rules.preset("new-zealand"),    # situational, suicide legal
    Rules.preset("aga-button"),     # situational with the button
    Rules.preset("japanese"),       # simple ko, territory (stops at the encore)
    Rules.preset("stone-scoring"),
    Rules(ko=KoRule.SPIGHT),        # spight ko with suicide
    Rules(ko=KoRule.SPIGHT, multi_stone_suicide_legal=False),
]

PASS_PROBABILITY = 0.04
ILLEGAL_ATTEMPT_PROBABILITY = 0.15
CONSISTENCY_CHECK_EVERY = 7
MAX_MOVES_PER_POINT = 3            # random games are cut off after this many moves per board point
FULL_CHECK_MAX_POINTS = 64         # boards up to this size check every point's legality every move
SAMPLED_POINTS_PER_MOVE = 12       # bigger boards check this many random points per move...
FULL_CHECK_EVERY = 20              # ...and every point every this many moves


# ---- reference board ---------------------------------------------------------------------

class ReferenceBoard:
    """Stones in a flat bytearray (index y * x_size + x, y = 0 the top row); groups by flood fill."""

    def __init__(self, x_size, y_size):
        self.x_size, self.y_size = x_size, y_size
        self.cells = bytearray(x_size * y_size)
        self.neighbours = [
            [(ny * x_size + nx) for nx, ny in ((x, y - 1), (x - 1, y), (x + 1, y), (x, y + 1))
             if 0 <= nx < x_size and 0 <= ny < y_size]
            for y in range(y_size) for x in range(x_size)]

    def xy(self, index):
        return (index % self.x_size, index // self.x_size)

    def index(self, xy):
        return xy[1] * self.x_size + xy[0]

    def analyse(self):
        """Group id of every stone (-1 on empty points) and each group's stones and liberties."""
        group_of = [-1] * len(self.cells)
        groups = []
        for start, colour in enumerate(self.cells):
            if colour == EMPTY or group_of[start] >= 0:
                continue
            gid = len(groups)
            stones, liberties, stack = [start], set(), [start]
            group_of[start] = gid
            while stack:
                point = stack.pop()
                for n in self.neighbours[point]:
                    if self.cells[n] == EMPTY:
                        liberties.add(n)
                    elif self.cells[n] == colour and group_of[n] < 0:
                        group_of[n] = gid
                        stones.append(n)
                        stack.append(n)
            groups.append((stones, liberties))
        return group_of, groups

    def outcome(self, analysis, index, pla, multi_stone_suicide_legal):
        """(cells after the move, simple-ko index for the opponent or None), or None if occupied or illegal suicide."""
        if self.cells[index] != EMPTY:
            return None
        group_of, groups = analysis
        opp = 3 - pla
        captured, own, has_liberty = set(), set(), False
        for n in self.neighbours[index]:
            colour = self.cells[n]
            if colour == EMPTY:
                has_liberty = True
            elif colour == opp:
                if groups[group_of[n]][1] == {index}:
                    captured.add(group_of[n])
            else:
                own.add(group_of[n])
                if groups[group_of[n]][1] != {index}:
                    has_liberty = True
        suicide = not has_liberty and not captured
        if suicide and (not own or not multi_stone_suicide_legal):
            return None
        cells = bytearray(self.cells)
        cells[index] = pla
        captured_stones = [s for g in captured for s in groups[g][0]]
        for s in captured_stones:
            cells[s] = EMPTY
        if suicide:
            for g in own:
                for s in groups[g][0]:
                    cells[s] = EMPTY
            cells[index] = EMPTY
        ko = None
        lone_stone = not own and len(captured_stones) == 1
        if lone_stone and not any(cells[n] == EMPTY for n in self.neighbours[index] if n != captured_stones[0]):
            ko = captured_stones[0]
        return cells, ko

    def rows(self, cells=None):
        cells = self.cells if cells is None else cells
        return [list(cells[y * self.x_size:(y + 1) * self.x_size]) for y in range(self.y_size)]


def sgfmill_rows(board, x_size):
    """sgfmill's row 0 is the bottom; ours is the top."""
    colour_code = {None: EMPTY, "b": B, "w": W}
    return [[colour_code[board.get(row, col)] for col in range(x_size)] for row in reversed(range(board.side))]


# ---- reference history -------------------------------------------------------------------

class ReferenceGame:
    """KataGo's main-phase legality: simple ko point, suicide rule, superko over a set of keys."""

    def __init__(self, x_size, y_size, rules):
        self.board = ReferenceBoard(x_size, y_size)
        self.rules = rules
        self.sgf = sgf_boards.Board(x_size) if x_size == y_size else None
        self.next_player = B
        self.ko = None
        self.has_button = rules.has_button
        self.history = set()
        self._remember()
        self._analysis = None

    def key(self, cells, player_to_move):
        # Situational (and, for cycle detection, simple) ko: the player to move is part of the situation.
        if self.rules.ko in (KoRule.SITUATIONAL, KoRule.SIMPLE):
            return bytes(cells) + bytes([player_to_move])
        return bytes(cells)

    def _remember(self):
        self.history.add(self.key(self.board.cells, self.next_player))

    def analysis(self):
        if self._analysis is None:
            self._analysis = self.board.analyse()
        return self._analysis

    def judge(self, index, pla):
        """(legal, banned only by superko) for pla at index."""
        if index == self.ko:
            return False, False
        outcome = self.board.outcome(self.analysis(), index, pla, self.rules.multi_stone_suicide_legal)
        if outcome is None:
            return False, False
        if self.rules.ko == KoRule.SIMPLE:
            return True, False
        repeats = self.key(outcome[0], 3 - pla) in self.history
        return not repeats, repeats

    def play(self, xy, pla):
        self._analysis = None
        if xy is None:
            self.ko = None
            # Passes wipe the ko history under simple and spight ko; taking the button does too.
            if self.has_button or self.rules.ko in (KoRule.SIMPLE, KoRule.SPIGHT):
                self.history = set()
            self.has_button = False
        else:
            index = self.board.index(xy)
            cells, self.ko = self.board.outcome(self.board.analyse(), index, pla, self.rules.multi_stone_suicide_legal)
            self.board.cells = cells
            if self.sgf is not None:
                x, y = xy
                self.sgf.play(self.board.y_size - 1 - y, x, SGFMILL_COLOUR[pla])
                assert sgfmill_rows(self.sgf, self.board.x_size) == self.board.rows(), "reference board vs sgfmill"
        self.next_player = 3 - pla
        self._remember()


# ---- the cross-check ---------------------------------------------------------------------

def snapshot(state):
    return (state.colors(), state.next_player, state.ko_point, state.superko_banned_points(), state.moves,
            state.captures, state.situation_hash(), state.is_game_finished, state.encore_phase)


def check_legality(state, ref, points, rng):
    pla = state.next_player
    legal_now = set(state.legal_moves()) if points is None else None
    expected_bans = set()
    all_points = [(x, y) for y in range(state.y_size) for x in range(state.x_size)]
    for xy in (all_points if points is None else points):
        legal, superko_only = ref.judge(ref.board.index(xy), pla)
        assert state.is_legal(xy, pla) == legal, f"legality of {xy} for {pla}"
        if points is None:
            assert (xy in legal_now) == legal
            if superko_only:
                expected_bans.add(xy)
    if points is None:
        assert set(state.superko_banned_points()) == expected_bans
    assert state.is_legal(None, pla)


def try_illegal_move(state, ref, rng):
    """Play a move the reference calls illegal (sometimes by the wrong player); nothing may change."""
    pla = state.next_player
    candidates = [ref.board.xy(i) for i in range(len(ref.board.cells)) if not ref.judge(i, pla)[0]]
    if not candidates:
        return
    xy = rng.choice(candidates)
    before = snapshot(state)
    with pytest.raises(ValueError):
        state.play(xy, pla)
    assert snapshot(state) == before
    # Out-of-turn attempts hand the turn over first; a failure must undo that too.
    other = 3 - pla
    analysis = ref.analysis()
    board_illegal = [ref.board.xy(i) for i in range(len(ref.board.cells))
                     if ref.board.outcome(analysis, i, other, ref.rules.multi_stone_suicide_legal) is None]
    if board_illegal:
        with pytest.raises(IllegalMoveError):
            state.play(rng.choice(board_illegal), other)
        assert snapshot(state) == before


def random_game(rng, x_size, y_size, rules, stats):
    state = GameState(x_size, y_size, rules=rules.to_core_tuple())
    ref = ReferenceGame(x_size, y_size, rules)
    num_points = x_size * y_size
    full_check = num_points <= FULL_CHECK_MAX_POINTS
    for move_number in range(MAX_MOVES_PER_POINT * num_points):
        if state.is_game_finished or state.encore_phase > 0:
            break
        assert state.next_player == ref.next_player
        if full_check or move_number % FULL_CHECK_EVERY == 0:
            check_legality(state, ref, None, rng)
        else:
            sample = [(rng.randrange(x_size), rng.randrange(y_size)) for _ in range(SAMPLED_POINTS_PER_MOVE)]
            check_legality(state, ref, sample, rng)
        if rng.random() < ILLEGAL_ATTEMPT_PROBABILITY:
            try_illegal_move(state, ref, rng)
            stats["illegal_attempts"] += 1
        pla = state.next_player
        legal = [xy for xy in state.legal_moves() if xy is not None]
        xy = None if not legal or rng.random() < PASS_PROBABILITY else rng.choice(legal)
        if xy is not None and ref.ko is None and ref.rules.ko != KoRule.SIMPLE and state.superko_banned_points():
            stats["positions_with_superko_bans"] += 1
        state.play(xy, pla)
        ref.play(xy, pla)
        stats["moves"] += 1
        assert state.colors() == ref.board.rows(), f"stones after {pla} {xy}"
        expected_ko = None if ref.ko is None else ref.board.xy(ref.ko)
        assert state.ko_point == expected_ko
        if move_number % CONSISTENCY_CHECK_EVERY == 0:
            state.board().check_consistency()
    state.board().check_consistency()
    stats["games"] += 1
    stats["no_result"] += state.is_no_result


def random_size(rng, low, high):
    x = rng.randint(low, high)
    # About a third of the boards are rectangular.
    y = x if rng.random() < 0.66 else rng.randint(low, high)
    return x, y


SIZE_CLASSES = [
    # name, seed, number of games, smallest side, largest side
    ("tiny", 11, 4000, 2, 4),
    ("small", 12, 1500, 5, 7),
    ("medium", 13, 100, 8, 13),
    ("large", 14, 20, 14, 19),
]


@pytest.mark.parametrize("name,seed,num_games,low,high", SIZE_CLASSES, ids=[c[0] for c in SIZE_CLASSES])
def test_random_games_agree_with_references(name, seed, num_games, low, high):
    rng = random.Random(seed)
    stats = dict(games=0, moves=0, illegal_attempts=0, positions_with_superko_bans=0, no_result=0)
    started = time.perf_counter()
    for _ in range(num_games):
        x_size, y_size = random_size(rng, low, high)
        random_game(rng, x_size, y_size, rng.choice(RULE_MIX), stats)
    elapsed = time.perf_counter() - started
    print(f"{name}: {stats} in {elapsed:.1f}s")
    assert stats["games"] == num_games
    assert stats["illegal_attempts"] > 0
    if name in ("tiny", "small"):
        # The games must reach the situations under test, not just fill the board.
        assert stats["positions_with_superko_bans"] > 0


def test_reference_board_captures_like_sgfmill():
    """The flood-fill reference itself, against sgfmill, on random square positions (suicide allowed)."""
    rng = random.Random(5)
    for _ in range(300):
        size = rng.randint(2, 9)
        ref = ReferenceBoard(size, size)
        sgf = sgf_boards.Board(size)
        for _ in range(size * size * 2):
            index = rng.randrange(size * size)
            pla = rng.choice((B, W))
            outcome = ref.outcome(ref.analyse(), index, pla, True)
            if outcome is None:
                continue
            ref.cells = outcome[0]
            x, y = ref.xy(index)
            sgf.play(size - 1 - y, x, SGFMILL_COLOUR[pla])
            assert sgfmill_rows(sgf, size) == ref.rows()
