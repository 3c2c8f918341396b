"""Every unique position of an SGF, over all its variations, as start-position samples.

Follows KataGo's Sgf::iterAllUniquePositions as self-play calls it: the game is replayed
under Tromp-Taylor-like rules with situational superko and suicide allowed; each
position reached (the root, after setup stones or a change of the player to move,
after every move) becomes a sample unless the game is over or the last two moves were
passes, or the same stones, player to move and ko were already seen (in any file).
A sample keeps up to five moves of history, fewer where a player moved twice in a row.
Samples of games where Black passed once, or White moved first on an empty board,
get their colours exchanged. Setup stones or a move out of turn or against superko
restart the history at the current board; an occupied point, a single-stone suicide or
a simple-ko recapture makes the file unreadable (samples found before it are kept).

Exclude files list SGFs to skip by KataGo's file hash, one per line (``#`` comments).
"""
from __future__ import annotations

import re
from collections import deque
from typing import Callable

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState, IllegalMoveError
from katacli.game.coords import BLACK, WHITE, format_vertex, opponent
from katacli.game.rules import KoRule, Rules
from katacli.game.sgf import EMPTY, SgfError
from katacli.game.sgf_variations import FILE_HASH_HEX_DIGITS, SgfTree, SgfVariation
from katacli.selfplay.start_positions import Move, PositionSample

# Moves of history a sample keeps at most.
HISTORY_MOVES_KEPT = 5
# The rules positions are replayed under (KataGo's Tromp-Taylor-ish with situational superko).
REPLAY_RULES = Rules(ko=KoRule.SITUATIONAL, multi_stone_suicide_legal=True).to_core_tuple()
_HASH_RE = re.compile(f"[0-9a-fA-F]{{{FILE_HASH_HEX_DIGITS}}}")


class ExcludesError(ValueError):
    """An exclude file that cannot be read or has a line that is not a file hash."""


def read_excludes(paths: list[str]) -> set[str]:
    """The file hashes (lowercase hex) listed in KataGo's startPosesSgfExcludes files."""
    hashes: set[str] = set()
    for path in paths:
        path = path.strip()
        if not path:
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise ExcludesError(f"cannot read exclude file {path}: {e.strerror or e}") from None
        for number, line in enumerate(lines, 1):
            text = line.split("#", 1)[0].strip()
            if not text:
                continue
            if not _HASH_RE.fullmatch(text):
                raise ExcludesError(f"{path} line {number}: '{text}' is not a {FILE_HASH_HEX_DIGITS}-digit hex hash")
            hashes.add(text.lower())
    return hashes


class _Walk:
    """Where the replay of one variation stands (copied at each branch)."""

    def __init__(self, state: GameState, initial_turn_number: int):
        self.state = state
        self.initial_turn_number = initial_turn_number
        self.boards_before: deque[GoBoard] = deque(maxlen=HISTORY_MOVES_KEPT)  # before each recent move

    def copy(self) -> "_Walk":
        other = _Walk(self.state.copy(), self.initial_turn_number)
        other.boards_before.extend(self.boards_before)
        return other

    def restart_history(self, board: GoBoard, next_player: int, turn_number: int) -> None:
        """The board becomes a fresh setup position (no history, no ko) at `turn_number`."""
        rules = self.state.rules_tuple
        self.state = GameState(board.x_size, board.y_size, rules, next_player, board=board)
        self.state.reset_history_keep_board(next_player)  # drops the simple-ko point
        self.initial_turn_number = turn_number
        self.boards_before.clear()

    def turn_number_now(self) -> int:
        return self.initial_turn_number + len(self.state.moves)


def _num_stones(board: GoBoard) -> int:
    return sum(1 for row in board.colors() for c in row if c in (BLACK, WHITE))


def _black_passed_or_white_first(state: GameState) -> bool:
    """KataGo's hasBlackPassOrWhiteFirst over the moves since the history began."""
    moves = state.moves
    if not state.initial_stones() and moves and moves[0][0] == WHITE:
        return True
    passes = {BLACK: 0, WHITE: 0}
    doubles = {BLACK: 0, WHITE: 0}
    for i, (pla, xy) in enumerate(moves):
        if xy is None:
            passes[pla] += 1
        if i > 0 and moves[i - 1][0] == pla:
            doubles[pla] += 1
    no_doubles = doubles[BLACK] == 0 and doubles[WHITE] == 0
    if passes[BLACK] == 1 and passes[WHITE] == 0 and no_doubles:
        return True
    return passes[BLACK] == 0 and passes[WHITE] == 0 and doubles[BLACK] == 0 and doubles[WHITE] == 1


def _sample_of(walk: _Walk, next_player: int) -> PositionSample:
    """The position with up to HISTORY_MOVES_KEPT moves of history (KataGo's writePosOfHist)."""
    moves: list[Move] = walk.state.moves
    turns_ago = 0
    while turns_ago < HISTORY_MOVES_KEPT and turns_ago < len(moves):
        # No history in which one player moves twice in a row (nor moves again right after).
        if turns_ago > 0 and moves[-turns_ago - 1][0] == moves[-turns_ago][0]:
            break
        if turns_ago == 0 and moves[-1][0] == next_player:
            break
        turns_ago += 1
    start = len(moves) - turns_ago
    board = walk.boards_before[-turns_ago] if turns_ago > 0 else walk.state.board()
    sample = PositionSample(
        x_size=board.x_size, y_size=board.y_size, stones=tuple(tuple(row) for row in board.colors()),
        next_player=moves[start][0] if start < len(moves) else next_player, moves=tuple(moves[start:]),
        initial_turn_number=walk.initial_turn_number + start,
    )
    return sample.color_flipped() if _black_passed_or_white_first(walk.state) else sample


def unique_positions(tree: SgfTree, seen: set, on_sample: Callable[[PositionSample], None]) -> None:
    """Call on_sample for each position of `tree` not in `seen` (updated). Raises SgfError at an
    illegal setup or move; the samples before it have been passed on already."""
    where = tree.file_name or "<sgf>"
    root_player = next((n.player for n in tree.root.nodes[:1] if n.player is not None), BLACK)
    start = _Walk(GameState(tree.x_size, tree.y_size, REPLAY_RULES, root_player), 0)
    pending: list[tuple[SgfVariation, _Walk, int, bool]] = [(tree.root, start, root_player, True)]
    while pending:  # depth first, first variation first, without recursion
        variation, walk, next_player, is_root = pending.pop()
        for node_idx, node in enumerate(variation.nodes):
            try:
                next_player = _replay_node(node, node_idx, is_root, walk, next_player, seen, on_sample)
            except SgfError as e:
                raise SgfError(f"{where}: {e}") from None
        for child in reversed(variation.children):
            pending.append((child, walk.copy(), next_player, False))


def _maybe_emit(walk: _Walk, next_player: int, seen: set, on_sample: Callable[[PositionSample], None]) -> None:
    state = walk.state
    moves = state.moves
    if state.is_game_finished or (len(moves) >= 2 and moves[-1][1] is None and moves[-2][1] is None):
        return
    key = (state.x_size, state.y_size, state.situation_hash(next_player))
    if key in seen:
        return
    seen.add(key)
    on_sample(_sample_of(walk, next_player))


def _replay_node(node, node_idx: int, is_root: bool, walk: _Walk, next_player: int, seen: set,
                 on_sample: Callable[[PositionSample], None]) -> int:
    """Apply one node's setup and moves, emitting samples; returns the player to move after it."""
    if is_root and node_idx == 0 and not node.setup:
        _maybe_emit(walk, next_player, seen, on_sample)
    changes_player = node.player is not None and node.player != next_player
    if node.setup or changes_player:
        board = walk.state.board()
        net_added = 0
        for color, xy in node.setup:
            before = board.color_at(xy)
            net_added += (before == EMPTY and color != EMPTY) - (before != EMPTY and color == EMPTY)
            try:
                board.set_stone(xy, color)
            except ValueError:
                raise SgfError("illegal placements: a group without liberties at "
                               f"{_vertex(walk.state, xy)}") from None
        # Each net added stone counts as half a turn, and a board has had at least one turn per stone.
        turn = walk.turn_number_now() + ((net_added + 1) // 2 if net_added > 0 else 0)
        turn = max(turn, _num_stones(board))
        if changes_player:
            next_player = node.player
        walk.restart_history(board, next_player, turn)
        _maybe_emit(walk, next_player, seen, on_sample)
    for pla, xy in node.moves:
        state = walk.state
        if xy is not None and not state.board().is_legal(xy, pla, True):
            raise SgfError(f"illegal move {pla_name(pla)} {_vertex(state, xy)} at turn {walk.turn_number_now()} "
                           "(occupied, suicide or ko)")
        superko = xy is not None and xy in state.superko_banned_points()
        if superko or pla != state.next_player:
            # Out of turn or against superko: played, but the history restarts just before it.
            board = state.board()
            walk.restart_history(board, next_player, max(walk.turn_number_now(), _num_stones(board)))
        walk.boards_before.append(walk.state.board())
        try:
            walk.state.play_tolerant(xy, pla)
        except IllegalMoveError:
            raise SgfError(f"move {pla_name(pla)} {_vertex(walk.state, xy)} cannot be played "
                           f"at turn {walk.turn_number_now()}") from None
        next_player = opponent(pla)
        _maybe_emit(walk, next_player, seen, on_sample)
    return next_player


def pla_name(pla: int) -> str:
    return "B" if pla == BLACK else "W"


def _vertex(state: GameState, xy) -> str:
    return format_vertex(xy, state.x_size, state.y_size)

