"""What a finished self-play game records for training (KataGo's FinishedGameData).

Values here are from White's point of view, as KataGo keeps them; the row builder
(:mod:`katacli.selfplay.rows`) flips them to the player to move. Moves are ``(x, y)``
with y from the top, or None for pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from katacli._core.game_state import GameState

Move = Optional[tuple[int, int]]


@dataclass
class ValueTargets:
    """Win/loss/no-result probabilities and score for White; lead only where estimated."""

    win: float
    loss: float
    no_result: float
    score: float
    has_lead: bool = False
    lead: float = 0.0


@dataclass
class QValue:
    """One searched root child: White's win-loss and score after the move, and its visits."""

    move: Move
    win_loss: float
    score: float
    visits: int


@dataclass
class SearchTargets:
    """The training targets and statistics one search produced (KataGo's SearchTargetsThisTurn)."""

    policy_target: dict            # move -> int visit weight (pruned, scaled to fit int16)
    unreduced_visits: int
    value: ValueTargets            # the root's search values
    q_values: list[QValue]
    raw_white_win_loss: float      # the raw network on the root position
    raw_white_score_mean: float
    raw_policy_entropy: float
    raw_white_win: float
    raw_white_loss: float
    raw_white_no_result: float
    policy_surprise: float
    policy_entropy: float
    search_entropy: float


@dataclass
class TurnRecord:
    player: int
    move: Move
    targets: SearchTargets
    target_weight: float           # expected number of rows for this turn (resolved to an integer at the end)
    was_cheap_search: bool
    target_weight_unrounded: Optional[float] = None   # the weight before it was resolved (for the SGF)


@dataclass
class SidePosition:
    """A searched position off the game's line (a random alternative move), written as its own row."""

    state: GameState
    player: int
    targets: Optional[SearchTargets] = None
    target_weight: float = 1.0
    nets_changed_so_far: int = 0


@dataclass
class FinishedGame:
    start_state: GameState         # position where training rows begin (after handicap / policy-init moves)
    end_state: GameState           # finished and scored (or stopped at the move limit, then scored)
    turns: list[TurnRecord]
    final_value: ValueTargets      # the game's outcome for White
    # [y, x] colour codes (0 empty, 1 black, 2 white) and White's scoring value per point.
    final_full_area: np.ndarray
    final_ownership: np.ndarray
    final_white_scoring: np.ndarray
    game_hash: tuple[int, int]
    draw_equivalent_wins_for_white: float
    hit_turn_limit: bool
    num_extra_black: int
    mode: int
    training_weight: float = 1.0
    pda_player: int = 0
    playout_doubling_advantage: float = 0.0
    pass_alive_under_suicide: bool = False
    start_turn_idx: int = 0        # moves in start_state's history
    changed_nets: list[tuple[str, int]] = field(default_factory=list)   # (model name, turn index it took over)
    side_positions: list[SidePosition] = field(default_factory=list)
    model_name: str = ""
    handicap_for_sgf: int = 0
    scored_state: Optional[GameState] = None   # end_state after final scoring (the SGF result)
    initial_encore_phase: int = 0               # encore phase the training period began in (cleanup games)
    initial_turn_number: int = 0                # turn number of the history's first board (start positions)
    used_initial_position: bool = False         # began at a fork of an earlier game (KataGo's initialPosition)

    @property
    def white_value_targets(self) -> list[ValueTargets]:
        """One entry per turn plus the final outcome (KataGo's whiteValueTargetsByTurn)."""
        return [t.targets.value for t in self.turns] + [self.final_value]

    @property
    def is_no_result(self) -> bool:
        return self.end_state.is_game_finished and self.end_state.is_no_result
