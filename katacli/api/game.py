"""A Go (or NoGo) game as a person thinks of it: ``Game(9, rules="japanese").play("B", "E5")``.

:class:`Game` wraps :class:`katacli.game.session.GameSession`, the game the GTP and analysis
engines keep, so a position set up here is exactly what ``kata gtp`` / ``kata analysis`` would
search. Colours are "B"/"W" (or "black"/"white"), points are GTP vertices ("E5", "pass").
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable, Sequence, Union

import numpy as np

from katacli._core.game_state import GameState, IllegalMoveError

from katacli.api.args import ColorLike, color_name, to_color, to_point
from katacli.game.coords import BLACK, WHITE, OffBoardError, format_vertex
from katacli.game.nogo import is_nogo_rules_name
from katacli.game.rules import Rules
from katacli.game.session import GameSession
from katacli.game.sgf import SgfGame, SgfError, load_sgf, read_sgf, write_sgf

DEFAULT_SIZE = 19
# Rules when a game names none: KataGo's default (Tromp-Taylor, komi 7.5).
DEFAULT_RULES = "tromp-taylor"

Size = Union[int, tuple[int, int]]



def illegal_move_error(pla: int, vertex: str, nogo: bool) -> IllegalMoveError:
    """The error :meth:`Game.play` and :meth:`katacli.Engine.play` raise for a move the rules refuse.

    >>> str(illegal_move_error(WHITE, "E5", nogo=False))
    'illegal move: W E5 (the point is taken, or it is suicide)'
    """
    why = "NoGo forbids captures, suicide and passing" if nogo else "the point is taken, or it is suicide"
    return IllegalMoveError(f"illegal move: {color_name(pla)} {vertex} ({why})")

class Game:
    """A game: board size, rules, komi and the moves played.

    >>> game = Game(9, rules="japanese")
    >>> game.komi, game.next_player
    (6.5, 'B')
    >>> game.play("B", "E5").play("W", "C3")
    Game(9x9, Japanese, komi 6.5, 2 moves, B to move)
    >>> game.moves
    [('B', 'E5'), ('W', 'C3')]
    >>> game.stone_at("E5"), game.stone_at("D4")
    ('B', None)
    >>> game.play("B", "E5")
    Traceback (most recent call last):
    ...
    katacli._core.game_state.IllegalMoveError: illegal move: B E5 (the point is taken, or it is suicide)
    """

    def __init__(self, size: Size = DEFAULT_SIZE, rules: Union[str, Rules] = DEFAULT_RULES,
                 komi: float | None = None) -> None:
        """``size``: 9, or (columns, rows) for a rectangular board. ``rules``: a preset name ("japanese",
        "chinese", "tromp-taylor", "aga", "new-zealand", "stone-scoring", ...), KataGo's JSON or compact
        rules text, a :class:`~katacli.game.rules.Rules`, or "nogo". ``komi``: None takes the rules' usual
        komi (7.5 for area scoring, 6.5 for territory scoring)."""
        x_size, y_size = board_dimensions(size)
        if not isinstance(rules, (str, Rules)):
            raise TypeError(f"rules must be text such as \"japanese\" or a Rules, got {rules!r}")
        self.nogo = isinstance(rules, str) and is_nogo_rules_name(rules)
        if self.nogo:
            rules = DEFAULT_RULES
        self.session = GameSession(x_size=x_size, y_size=y_size, rules=rules)
        if komi is not None:
            self.session.set_komi(float(komi))

    @classmethod
    def _from_session(cls, session: GameSession, nogo: bool) -> "Game":
        game = cls.__new__(cls)
        game.session, game.nogo = session, nogo
        return game

    # ------------------------------------------------------------------ reading the game
    @property
    def x_size(self) -> int:
        """Columns."""
        return self.session.x_size

    @property
    def y_size(self) -> int:
        """Rows."""
        return self.session.y_size

    @property
    def rules(self) -> Rules:
        """The rules (komi included); ``str(game.rules)`` is KataGo's compact form."""
        return self.session.rules

    @property
    def komi(self) -> float:
        """Points White receives."""
        return self.session.rules.komi

    @property
    def next_player(self) -> str:
        """"B" or "W": the side to move."""
        return color_name(self.session.next_player)

    @property
    def moves(self) -> list[tuple[str, str]]:
        """The moves played, as ("B", "E5") pairs ("pass" for passes)."""
        return [(color_name(pla), self._vertex(xy)) for pla, xy in self.session.moves]

    @property
    def state(self) -> GameState:
        """A copy of the Cython position (for katacli.search and other low-level code)."""
        return self.session.state.copy()

    @property
    def board(self) -> np.ndarray:
        """The stones as an int8 array [row, column], row 0 the TOP row (GTP row ``y_size``):
        0 empty, 1 Black, 2 White. ``game.board[game.y_size - 5, 4]`` is E5."""
        return np.array(self.session.state.colors(), dtype=np.int8)

    def stone_at(self, vertex: str) -> str | None:
        """"B", "W" or None (empty)."""
        point = self._point(vertex)
        if point is None:
            raise ValueError("a pass has no stone")
        color = self.session.state.colors()[point[1]][point[0]]
        return color_name(color) if color else None

    def is_legal(self, color: ColorLike, vertex: str) -> bool:
        """Whether the move is legal under the rules (ko and superko included; in NoGo, no capture). For the
        side not to move: whether it would be if that side moved now (its ko bans do not carry over)."""
        pla, point = to_color(color), self._point(vertex)
        if self.nogo:
            from katacli._core import nogo

            return point is not None and nogo.is_legal(self.session.state.board(), point, pla)
        return self._state_for(pla).is_legal(point, pla)

    def _state_for(self, pla: int):
        """The game state with ``pla`` to move: the game's own (read only, no copy), or the other side's."""
        state = self.session.state
        return state if pla == state.next_player else self.session.position_for(pla)

    def legal_moves(self, color: ColorLike | None = None) -> list[str]:
        """Every legal move for ``color`` (default: the side to move), "pass" last (never in NoGo).

        >>> Game(2).legal_moves()
        ['A2', 'B2', 'A1', 'B1', 'pass']
        """
        pla = self.session.next_player if color is None else to_color(color)
        if self.nogo:
            from katacli._core import nogo

            points = nogo.legal_moves(self.session.state.board(), pla)
        else:
            points = self._state_for(pla).legal_moves(pla)
        return [self._vertex(xy) for xy in points]

    @property
    def is_over(self) -> bool:
        """True once the game has ended (two passes under area scoring, the cleanup phase's end, ...); under
        territory scoring without a cleanup phase (preventCleanupPhase, KataGo's GTP and analysis default) at
        the passes that end the normal phase."""
        state = self.session.state
        return bool(state.is_game_finished or state.is_past_normal_phase_end)

    # ------------------------------------------------------------------ changing the game
    def play(self, color: ColorLike, vertex: str | None = None) -> "Game":
        """Play ``vertex`` for ``color`` ("B", "E5"), or ``play("E5")`` for the side to move; returns the game.

        Accepts what KataGo's GTP ``play`` accepts: any empty point except suicide (ko bans are for move
        choice, see :meth:`is_legal`). A move by the side not to move hands it the turn. Raises
        IllegalMoveError (game unchanged) or CoordError for a vertex that is not on the board.
        """
        if vertex is None:
            color, vertex = self.session.next_player, color
        pla = to_color(color)
        point = self._point(vertex)
        if self.nogo and not self.is_legal(pla, vertex):
            raise illegal_move_error(pla, vertex, nogo=True)
        try:
            self.session.play(pla, point)
        except IllegalMoveError:
            raise illegal_move_error(pla, vertex, nogo=False) from None
        return self

    def play_moves(self, moves: Iterable[Union[str, Sequence[str]]]) -> "Game":
        """Play several moves: ("B", "E5") pairs, or bare vertices for alternating play."""
        for move in moves:
            if isinstance(move, str):
                self.play(move)
            else:
                self.play(*move)
        return self

    def undo(self) -> "Game":
        """Take back the last move; ValueError when there is none."""
        if not self.session.undo():
            raise ValueError("there is no move to undo")
        return self

    def setup(self, black: Iterable[str] = (), white: Iterable[str] = (), next_player: ColorLike = "B") -> "Game":
        """Replace the game by a position: these stones, no moves, ``next_player`` to move."""
        stones = [(BLACK, self._point(v)) for v in black] + [(WHITE, self._point(v)) for v in white]
        if any(point is None for _, point in stones):
            raise ValueError("setup stones must be points, not 'pass'")
        self.session.set_position(stones, to_color(next_player))
        return self

    def place_handicap(self, stones: int) -> "Game":
        """KataGo's fixed handicap placement on an empty board; White moves next."""
        self.session.place_fixed_handicap(stones)
        return self

    def set_rules(self, rules: Union[str, Rules], komi: float | None = None) -> "Game":
        """Change the rules (keeping the komi unless given) and replay the game under them; SessionError when
        they forbid an earlier move (the new rules and komi kept, with the moves before it, as KataGo)."""
        try:
            self.session.set_rules(rules)
        finally:
            if komi is not None:
                self.session.set_komi(float(komi))
        return self

    def copy(self) -> "Game":
        """An independent copy."""
        return self.truncated(len(self.session.moves))

    def truncated(self, num_moves: int) -> "Game":
        """A copy with only the first ``num_moves`` moves (0: the starting position).

        >>> Game(9).play_moves(["E5", "C3", "G7"]).truncated(1).moves
        [('B', 'E5')]
        """
        if not 0 <= num_moves <= len(self.session.moves):
            raise ValueError(f"num_moves must be 0..{len(self.session.moves)}, got {num_moves}")
        session = GameSession(
            x_size=self.x_size, y_size=self.y_size, rules=self.rules,
            prevent_encore=self.session.prevent_encore,
            assume_multiple_starting_black_moves_are_handicap=(
                self.session.assume_multiple_starting_black_moves_are_handicap),
        )
        session.replace_game(self.session.initial_board, self.session.initial_player, self.session.moves[:num_moves])
        return Game._from_session(session, self.nogo)

    # ------------------------------------------------------------------ SGF
    @classmethod
    def from_sgf(cls, source: Union[str, os.PathLike, bytes], move_number: int | None = None,
                 default_rules: Union[str, Rules] = DEFAULT_RULES) -> "Game":
        """A game from an SGF file path or SGF text (read as KataGo's ``loadsgf`` does, through sgfmill).

        ``move_number``: the position before that move (1-based), None for the whole game. Rules come
        from RU/KM; ``default_rules`` when the file has none. Raises SgfError for unreadable files.

        >>> game = Game.from_sgf("(;GM[1]SZ[9]KM[6.5]RU[japanese];B[ee];W[cc])")
        >>> game.x_size, game.komi, game.moves
        (9, 6.5, [('B', 'E5'), ('W', 'C7')])
        """
        record = _read_record(source)
        default = Rules.parse(default_rules) if isinstance(default_rules, str) else default_rules
        rules, _ = record.rules_or_default(default)
        position = record.position_at(move_number)
        session = GameSession(x_size=position.x_size, y_size=position.y_size, rules=rules)
        session.set_sgf_position(position, source=record.file_name)
        return cls._from_session(session, nogo=False)

    def to_sgf(self) -> str:
        """The game as SGF text (size, rules, komi, setup stones and moves).

        >>> Game(9, rules="chinese").play("E5").to_sgf()  # doctest: +ELLIPSIS
        '(;FF[4]GM[1]SZ[9]...KM[7.5]RU[Chinese];B[ee])'
        """
        return write_sgf(self.session.sgf_record(), nice_rules_name=True)   # (passes for ko as KataGo writes them)

    def save_sgf(self, path: Union[str, os.PathLike]) -> None:
        """Write :meth:`to_sgf` to a file."""
        Path(path).write_text(self.to_sgf(), encoding="utf-8")

    # ------------------------------------------------------------------ helpers
    def _point(self, vertex: str | None):
        return to_point(vertex, self.x_size, self.y_size)

    def _vertex(self, xy) -> str:
        return format_vertex(xy, self.x_size, self.y_size)

    def vertex_of(self, column: int, row_from_top: int) -> str:
        """The GTP name of board array cell [row_from_top, column], e.g. (4, 4) -> "E5" on 9x9; OffBoardError for
        a cell off this board (an index past an array's edge names no point)."""
        if not (0 <= column < self.x_size and 0 <= row_from_top < self.y_size):
            raise OffBoardError(f"Cell [{row_from_top}, {column}] (row from the top, column) is off the "
                                f"{self.x_size}x{self.y_size} board")
        return self._vertex((column, row_from_top))

    def __repr__(self) -> str:
        rules = "nogo" if self.nogo else self.rules.nice_name()
        return (f"Game({self.x_size}x{self.y_size}, {rules}, komi {self.komi:g}, {len(self.session.moves)} moves, "
                f"{self.next_player} to move)")


def board_dimensions(size: Size) -> tuple[int, int]:
    """(columns, rows) from 9 or (9, 13); TypeError naming anything else.

    >>> board_dimensions(9), board_dimensions((7, 5))
    ((9, 9), (7, 5))
    """
    if isinstance(size, int) and not isinstance(size, bool):
        return size, size
    if (isinstance(size, (tuple, list)) and len(size) == 2
            and all(isinstance(n, int) and not isinstance(n, bool) for n in size)):
        return size[0], size[1]
    raise TypeError(f"size must be a whole number such as 19, or (columns, rows), got {size!r}")


def _read_record(source: Union[str, os.PathLike, bytes]) -> SgfGame:
    if isinstance(source, bytes):
        return read_sgf(source)
    text = str(source)
    if text.lstrip("\ufeff").lstrip().startswith("("):   # SGF text (read from a file that began with a BOM too)
        return read_sgf(text)
    path = Path(text)
    try:
        is_file = path.is_file()
    except OSError as exc:   # a name too long, say: no file of that name
        raise SgfError(f"SGF file not found: {text[:80]}{'...' if len(text) > 80 else ''} ({exc.strerror})") from None
    if not is_file:
        raise SgfError(f"SGF file not found: {path}")
    return load_sgf(str(path))

