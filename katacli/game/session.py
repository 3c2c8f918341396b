"""A game as a GTP engine sees it: size, rules, komi, initial position and the moves played.

KataGo's GTP engine keeps an initial board, the player to move there and the
list of moves, and derives everything else by replaying them. This module does
the same on top of the Cython ``GameState`` so that every protocol (GTP, the
analysis engine, the reference tests) agrees on these semantics:

* ``play`` is tolerant, as in KataGo: any empty point is accepted except a lone
  stone's suicide; ko and superko bans only matter to move generation.
* A move by the player who is not to move first hands the turn over and clears
  the history (the stones stay): KataGo's ``setPlayerAndClearHistory``.
* ``undo``, rule changes and size changes rebuild by replaying from the start.
* Under territory scoring the cleanup (encore) phase is skipped by default
  (KataGo's ``preventCleanupPhase = true`` for GTP).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState, IllegalMoveError

from katacli.game.coords import Point, format_color, format_vertex, parse_color, parse_vertex
from katacli.game.handicap import HandicapError, fixed_handicap_points, handicap_stones_counting_first_moves
from katacli.game.rules import Rules
from katacli.game.sgf import SgfError, SgfGame, SgfPosition, final_setup, passes_for_ko, with_passes_for_ko
from katacli._core.constants import BLACK, WHITE, MAX_BOARD_LEN  # noqa: F401  (the core's numbers, defined once)

MIN_BOARD_LEN = 2


class SessionError(ValueError):
    """A request the game cannot honour (bad size, handicap on a non-empty board, ...)."""


RULES_CHANGE_REFUSED = "Could not make the rules change, some earlier moves in the game would now become illegal."


@dataclass
class GameSession:
    """Mutable game: call the methods, read ``state`` (a GameState) for the current position."""

    x_size: int = 19
    y_size: int = 19
    rules: Rules | str = field(default_factory=lambda: Rules.preset("tromp-taylor"))  # a Rules or any rules text
    prevent_encore: bool = True
    assume_multiple_starting_black_moves_are_handicap: bool = True
    always_pass_alive_under_suicide_rules: bool = False

    def __post_init__(self) -> None:
        if isinstance(self.rules, str):  # "japanese", a JSON object, KataGo's compact form, ...
            self.rules = Rules.parse(self.rules)
        self._check_size(self.x_size, self.y_size)
        self.initial_board = GoBoard(self.x_size, self.y_size)
        self.initial_player = BLACK
        self.moves: list[tuple[int, Point | None]] = []
        self._rebuild()

    # -- construction -------------------------------------------------------------------
    @staticmethod
    def _check_size(x_size: int, y_size: int) -> None:
        if not (MIN_BOARD_LEN <= x_size <= MAX_BOARD_LEN and MIN_BOARD_LEN <= y_size <= MAX_BOARD_LEN):
            raise SessionError(
                f"unacceptable size: {x_size}x{y_size} (supported: {MIN_BOARD_LEN} to {MAX_BOARD_LEN} per side)"
            )

    def _fresh_state(self, board: GoBoard, player: int) -> GameState:
        state = GameState(board=board, rules=self.rules.to_core_tuple(), next_player=player)
        state.set_always_pass_alive_under_suicide_rules(self.always_pass_alive_under_suicide_rules)
        state.set_assume_multiple_starting_black_moves_are_handicap(
            self.assume_multiple_starting_black_moves_are_handicap
        )
        return state

    def _rebuild(self) -> None:
        """Replay the recorded moves from the initial position under the current rules."""
        moves = self.moves
        self.state = self._fresh_state(self.initial_board, self.initial_player)
        self.moves = []
        for player, xy in moves:
            self._apply(player, xy)

    def _apply(self, player: int, xy: Point | None) -> None:
        self._replay(self.state, player, xy)
        self.moves.append((player, xy))

    def _replay(self, state: GameState, player: int, xy: Point | None) -> None:
        """A recorded move on ``state``, as the session plays it (a player moving twice clears the history).
        As KataGo's makeMove, the move is checked before the history is cleared: a refused move leaves
        ``state`` as it was."""
        if player != state.next_player:
            if not state.is_legal_tolerant(xy, player):
                raise IllegalMoveError(f"move at {xy} cannot be played even tolerantly")
            state.reset_history_keep_board(player)
        state.play_tolerant(xy, player, self.prevent_encore)

    def passes_for_ko(self) -> dict[int, Point]:
        """Index in ``state.moves`` (the history since the game began or its last reset, what a record of the
        game writes after its setup) -> point, for the moves that were a "pass for ko" in the encore (territory
        scoring's cleanup phases): KataGo's records write them as passes."""
        state = self.state
        return passes_for_ko(state.history_start(), state.moves,
                             lambda position, player, xy: position.play_tolerant(xy, player, self.prevent_encore))

    def sgf_record(self) -> SgfGame:
        """The game as KataGo's printsgf records it: the history since the game began or its last reset (the
        stones then as setup), its moves, a pass for ko written as a pass with its point marked."""
        state = self.state
        record = SgfGame(x_size=self.x_size, y_size=self.y_size, komi=self.rules.komi, rules=self.rules,
                         handicap=handicap_stones_counting_first_moves(state), setup=list(state.initial_stones()),
                         first_player=state.initial_player, moves=list(state.moves))
        return with_passes_for_ko(record, self.passes_for_ko())

    # -- GTP-level operations ----------------------------------------------------------------
    def set_size(self, x_size: int, y_size: int) -> None:
        self._check_size(x_size, y_size)
        self.x_size, self.y_size = x_size, y_size
        self.clear_board()

    def clear_board(self) -> None:
        self.initial_board = GoBoard(self.x_size, self.y_size)
        self.initial_player = BLACK
        self.moves = []
        self._rebuild()

    def set_rules(self, rules: Rules | str) -> None:
        """Change the rules (a Rules or rules text) but keep the komi, and replay the game under them; a move
        they forbid raises SessionError, the game kept up to it under the new rules."""
        if isinstance(rules, str):
            rules = Rules.parse(rules)
        self.rules = rules.with_komi(self.rules.komi)
        try:
            self._rebuild()
        except IllegalMoveError:
            # As KataGo: the new rules stay, with the game's moves up to the first one they forbid (a pass
            # for ko in a territory cleanup phase, say, is a capture of nothing under area rules).
            raise SessionError(RULES_CHANGE_REFUSED) from None

    def set_komi(self, komi: float) -> None:
        self.rules = self.rules.with_komi(komi)
        self.state.set_komi(komi)

    def set_position(self, stones: list[tuple[int, Point]], next_player: int = BLACK) -> None:
        """Replace the game by a set-up position (KataGo's set_position); raises SessionError if impossible."""
        board = GoBoard(self.x_size, self.y_size)
        seen = set()
        for player, xy in stones:
            if xy in seen:
                raise SessionError(f"point {format_vertex(xy, self.x_size, self.y_size)} is given twice")
            seen.add(xy)
        for player, xy in stones:
            try:
                board.set_stone(xy, player)
            except ValueError as exc:
                if "without liberties" not in str(exc):   # not a stone to place (a colour or pass set_stone refuses)
                    raise SessionError(f"cannot set up this position: {exc}") from None
                raise SessionError(f"cannot set up this position: the {format_color(player, long=True).lower()} "
                                   f"stone at {format_vertex(xy, self.x_size, self.y_size)} leaves a group "
                                   "without liberties") from None
        self.initial_board = board
        self.initial_player = next_player
        self.moves = []
        self._rebuild()

    def replace_game(self, initial_board: GoBoard, initial_player: int, moves: list[tuple[int, Point | None]]) -> None:
        """Take over another game's start and moves (e.g. another session's ``initial_board``, ``initial_player``
        and ``moves``), replayed under this session's rules."""
        self.initial_board = initial_board.copy()
        self.initial_player = initial_player
        self.moves = list(moves)
        self._rebuild()

    def set_sgf_position(self, position: SgfPosition, source: str | None = None) -> None:
        """Set up a position read from SGF, as KataGo's loadsgf does: the setup stones (AB/AW/AE in order),
        then the moves replayed. Raises SgfError naming the first impossible move (after ``source``, a file
        name, when given), or naming a setup stone that leaves a group without liberties."""
        seen = set()
        for _, xy in position.setup:   # KataGo refuses a root that sets a point twice (AB[ee]AW[ee], AB[ee]AE[ee])
            if xy in seen:
                where = f"{source}: " if source else ""
                raise SgfError(f"{where}the setup stones (AB/AW/AE) set "
                               f"{format_vertex(xy, position.x_size, position.y_size)} more than once")
            seen.add(xy)
        try:
            self.set_position(final_setup(position.setup), position.initial_player)
        except SessionError as exc:   # stones without liberties: the file's fault
            raise SgfError(f"{source}: {exc}" if source else str(exc)) from None
        for number, (pla, xy) in enumerate(position.moves, start=1):
            try:
                # KataGo's playMovesTolerant: a player's consecutive moves stay moves (a GTP `play` out of turn
                # would clear the history first), so printsgf gives them back as moves, not setup stones.
                self.state.play_tolerant(xy, pla, self.prevent_encore)
                self.moves.append((pla, xy))
            except IllegalMoveError:
                vertex = format_vertex(xy, position.x_size, position.y_size)
                # KataGo's words, its turn counted from 0
                raise SgfError(f"Illegal move in {source or 'sgf'} turn {number - 1} move {vertex}") from None

    def fixed_handicap_points(self, count: int) -> list[Point]:
        """KataGo's fixed handicap placement for this board size."""
        try:
            return fixed_handicap_points(self.x_size, self.y_size, count)
        except HandicapError as exc:
            raise SessionError(str(exc)) from None

    def place_fixed_handicap(self, count: int) -> list[Point]:
        """Put the handicap stones on an empty board; White moves next. Returns the points in board order."""
        if not self.is_board_empty():
            raise SessionError("Board is not empty")
        points = self.fixed_handicap_points(count)
        board = GoBoard(self.x_size, self.y_size)
        for xy in points:
            board.set_stone(xy, BLACK)
        self.initial_board = board
        self.initial_player = WHITE
        self.moves = []
        self._rebuild()
        return sorted(points, key=lambda p: (p[1], p[0]))

    def play(self, player: int | str, xy: Point | str | None) -> None:
        """Play a move the way KataGo's GTP ``play`` does; raises IllegalMoveError (game unchanged) if impossible.

        ``player`` is 1 / 2 or "B" / "W" / "black" / "white"; ``xy`` is (x, y) with y from the top, None for
        pass, or a GTP vertex such as "E5" or "pass" (CoordError if it cannot be read).
        """
        if isinstance(player, str):
            player = parse_color(player)
        if isinstance(xy, str):
            xy = parse_vertex(xy, self.x_size, self.y_size)
        saved = self.state.copy()
        try:
            self._apply(player, xy)
        except IllegalMoveError:
            self.state = saved
            raise IllegalMoveError("illegal move") from None

    def position_for(self, player: int) -> GameState:
        """A copy of the position with ``player`` to move: for the other side, its history forgotten (ko and
        superko bans do not carry over), as when KataGo's GTP bot searches for it."""
        state = self.state.copy()
        if player != state.next_player:
            state.reset_history_keep_board(player)
        return state

    def search_for(self, player: int) -> bool:
        """Make ``player`` the side to move, as KataGo's GTP bot does when asked to search or analyze for the
        other side: the stones stay, the history (superko, the simple-ko point) is forgotten, and later
        colourless commands go on for ``player``; the game's moves are kept, so undo replays them as played.
        Whether the history was reset (``player`` was not to move)."""
        if player == self.state.next_player:
            return False
        self.state.reset_history_keep_board(player)
        return True

    def undo(self) -> bool:
        """Take back the last move; False if there is none."""
        if not self.moves:
            return False
        self.moves = self.moves[:-1]
        self._rebuild()
        return True

    @property
    def next_player(self) -> int:
        return self.state.next_player

    def is_board_empty(self) -> bool:
        return len(self.state.board().empty_points()) == self.x_size * self.y_size


def session_from_gtp_setup(commands: list[str]) -> GameSession:
    """Replay position set-up commands the way KataGo's GTP engine applies them.

    Accepts boardsize, rectangular_boardsize, clear_board, kata-set-rules, komi, fixed_handicap
    and play (the commands recorded with KataGo's reference outputs); anything else is a
    SessionError.
    """
    session = GameSession()
    for command in commands:
        name, *args = command.split()
        if name == "boardsize":
            session.set_size(int(args[0]), int(args[0]))
        elif name == "rectangular_boardsize":
            session.set_size(int(args[0]), int(args[1]))
        elif name == "clear_board":
            session.clear_board()
        elif name == "kata-set-rules":
            session.set_rules(Rules.parse_without_komi(" ".join(args), session.rules.komi))
        elif name == "komi":
            session.set_komi(float(args[0]))
        elif name == "fixed_handicap":
            session.place_fixed_handicap(int(args[0]))
        elif name == "play":
            session.play(parse_color(args[0]), parse_vertex(args[1], session.x_size, session.y_size))
        else:
            raise SessionError(f"unexpected set-up command {command!r}")
    return session
