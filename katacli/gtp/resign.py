"""When the GTP engine resigns (KataGo's gtp.cpp shouldResign), given its resignation settings.

The engine records the root's win-loss value (White's view, -1..1) after every
genmove. It resigns when, for resignConsecTurns moves in a row, that value was
below resignThreshold for the player to move, the game is not close
(|lead| >= resignMinScoreDifference), and enough of the game has been played
(resignMinMovesPerBoardArea). In handicap games White also waits until it is
well behind schedule for catching up.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from katacli._core.constants import BLACK, WHITE  # noqa: F401  (the core's numbers, defined once)

# KataGo's assumptions for handicap games.
FAIR_KOMI = 7.0
STONE_VALUE_AREA = 15.0
STONE_VALUE_TERRITORY = 14.0
HANDICAP_MIN_TURN_FRACTION = 1.0 / 5.0
HANDICAP_CATCH_UP_TURN_FRACTION = 0.60
HANDICAP_RESIGN_BUFFER_POINTS = 5.0
HANDICAP_RESIGN_BUFFER_FRACTION = 0.15
SCORING_AREA = 0
WHB_N_MINUS_ONE = 1
WHB_N = 2


@dataclass(frozen=True)
class ResignSettings:
    allow_resignation: bool = False
    resign_threshold: float = -0.90
    resign_consec_turns: int = 3
    resign_min_score_difference: float = -1e10
    resign_min_moves_per_board_area: float = 0.0

    @classmethod
    def from_gtp_settings(cls, settings) -> "ResignSettings":
        """From katacli.setup.engine_settings.GtpSettings (or anything with the same field names)."""
        return cls(settings.allow_resignation, settings.resign_threshold, settings.resign_consec_turns,
                   settings.resign_min_score_difference, settings.resign_min_moves_per_board_area)


def initial_black_advantage(num_handicap_stones: int, komi: float, scoring_rule: int, white_handicap_bonus_rule: int) -> float:
    """Points Black starts ahead by: handicap stones valued at ~14-15 points, minus komi beyond a fair 7."""
    if num_handicap_stones <= 1:
        return FAIR_KOMI - komi
    extra_black_stones = num_handicap_stones - 1   # White moves first after the handicap
    stone_value = STONE_VALUE_AREA if scoring_rule == SCORING_AREA else STONE_VALUE_TERRITORY
    bonus = 0.0
    if white_handicap_bonus_rule == WHB_N:
        bonus = num_handicap_stones
    elif white_handicap_bonus_rule == WHB_N_MINUS_ONE:
        bonus = num_handicap_stones - 1
    return stone_value * extra_black_stones + (FAIR_KOMI - komi - bonus)


@dataclass
class ResignTracker:
    """Remembers the root win-loss values of the engine's own moves and answers shouldResign."""

    settings: ResignSettings = field(default_factory=ResignSettings)
    recent_win_loss_values: list = field(default_factory=list)

    def clear(self) -> None:
        self.recent_win_loss_values.clear()

    def record(self, white_win_loss: float) -> None:
        self.recent_win_loss_values.append(float(white_win_loss))

    def should_resign(self, *, player: int, lead: float, board_area: int, num_moves: int,
                      initial_black_advantage_points: float) -> bool:
        """lead is White's expected lead; num_moves the moves played so far in the game."""
        s = self.settings
        if not s.allow_resignation:
            return False
        min_turn = 0
        no_resign_when_white_above = float(board_area)
        if initial_black_advantage_points > 0.9 and player == WHITE:
            min_turn = 1 + int(board_area * HANDICAP_MIN_TURN_FRACTION)
            turns_to_catch_up = max(1.0, HANDICAP_CATCH_UP_TURN_FRACTION * board_area - min_turn)
            turns_spent = min(max(0.0, float(num_moves - min_turn)), turns_to_catch_up)
            resign_score = -initial_black_advantage_points * ((turns_to_catch_up - turns_spent) / turns_to_catch_up)
            resign_score -= HANDICAP_RESIGN_BUFFER_POINTS
            resign_score -= initial_black_advantage_points * HANDICAP_RESIGN_BUFFER_FRACTION
            no_resign_when_white_above = resign_score
        if min_turn < s.resign_min_moves_per_board_area * board_area:
            min_turn = int(s.resign_min_moves_per_board_area * board_area)
        if num_moves < min_turn:
            return False
        if player == WHITE and lead > no_resign_when_white_above:
            return False
        if s.resign_consec_turns > len(self.recent_win_loss_values):
            return False
        if (player == WHITE and lead > -s.resign_min_score_difference) or (
                player == BLACK and lead < s.resign_min_score_difference):
            return False
        for value in self.recent_win_loss_values[len(self.recent_win_loss_values) - s.resign_consec_turns:]:
            if value < s.resign_threshold:
                loser = WHITE
            elif value > -s.resign_threshold:
                loser = BLACK
            else:
                loser = 0
            if loser != player:
                return False
        return True
