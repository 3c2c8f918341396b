"""The moves of an SGF, over all its variations, each with the board it was played on.

What pattern avoidance reads from a game record (KataGo's avoidRepeatedSgfMoves walks
Sgf::iterAllUniquePositions the same way): every node's moves in every branch, replayed
under Tromp-Taylor-like rules with situational superko and suicide allowed. Setup stones
or a change of the player to move, a move out of turn or one that superko forbids start
the history again at the board as it stands, so ``moves_in_history`` (KataGo's
moveHistory size, which avoidSgfPatternMinTurnNumber compares with) counts from there.
A move onto a stone, a single-stone suicide or a simple-ko recapture makes the file
unreadable (SgfReplayError naming the file), as it does for KataGo.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState, IllegalMoveError
from katacli.game.coords import BLACK, Point, format_vertex, opponent
from katacli.game.rules import KoRule, Rules
from katacli.game.sgf import SgfError
from katacli.game.sgf_variations import SgfTree, SgfVariation

# The rules KataGo replays SGF positions under.
REPLAY_RULES = Rules(ko=KoRule.SITUATIONAL, multi_stone_suicide_legal=True).to_core_tuple()


class SgfReplayError(SgfError):
    """A move that cannot be replayed (occupied point, suicide, simple-ko recapture)."""


@dataclass
class ReplayedMove:
    board_before: GoBoard       # the position the move was played on
    move: Optional[Point]       # None: pass
    player: int
    moves_in_history: int       # moves since the history last (re)started, this one included
    comment: str                # the comment of the node holding the move


def _restart(state: GameState, next_player: int) -> GameState:
    """A fresh history (no ko, no move list) at the current board."""
    fresh = GameState(state.x_size, state.y_size, state.rules_tuple, next_player, board=state.board())
    fresh.reset_history_keep_board(next_player)
    return fresh


def replay_moves(tree: SgfTree) -> Iterator[ReplayedMove]:
    """Every move of every variation of `tree`, depth first, first variation first."""
    where = tree.file_name or "<sgf>"
    root_player = next((n.player for n in tree.root.nodes[:1] if n.player is not None), BLACK)
    start = GameState(tree.x_size, tree.y_size, REPLAY_RULES, root_player)
    pending: list[tuple[SgfVariation, GameState, int]] = [(tree.root, start, root_player)]
    while pending:  # without recursion: variations nest as deep as a game is long
        variation, state, next_player = pending.pop()
        for node in variation.nodes:
            if node.setup or (node.player is not None and node.player != next_player):
                board = state.board()
                for color, xy in node.setup:
                    try:
                        board.set_stone(xy, color)
                    except ValueError:
                        raise SgfReplayError(f"{where}: illegal setup stones at "
                                             f"{format_vertex(xy, tree.x_size, tree.y_size)}") from None
                next_player = node.player if node.player is not None else next_player
                state = _restart(GameState(tree.x_size, tree.y_size, REPLAY_RULES, next_player, board=board),
                                 next_player)
            for pla, xy in node.moves:
                if xy is not None and not state.board().is_legal(xy, pla, True):
                    raise SgfReplayError(f"{where}: illegal move {'B' if pla == BLACK else 'W'} "
                                         f"{format_vertex(xy, tree.x_size, tree.y_size)} after "
                                         f"{len(state.moves)} moves (occupied, suicide or ko)")
                if pla != state.next_player or (xy is not None and xy in state.superko_banned_points()):
                    state = _restart(state, pla)  # out of turn or against superko: played on a new history
                before = state.board()
                try:
                    state.play_tolerant(xy, pla)
                except IllegalMoveError:
                    raise SgfReplayError(f"{where}: move cannot be played after {len(state.moves)} moves") from None
                next_player = opponent(pla)
                yield ReplayedMove(before, xy, pla, len(state.moves), node.comment)
        for child in reversed(variation.children):
            pending.append((child, state.copy(), next_player))
