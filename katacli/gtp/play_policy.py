"""KataGo's game-level decisions around genmove: thinking less when far ahead and the dynamic
playoutDoublingAdvantage of handicap games (resigning is katacli.gtp.resign's ResignTracker).

``recent_win_loss`` is the list of root win-loss values (White's view, in
[-1, 1]) of this engine's previous genmoves in the current game.
"""
from __future__ import annotations

import math

from katacli.c_numbers import round_half_away
from katacli.gtp import resign

BLACK, WHITE = 1, 2
FULL_BOARD_AREA = 19 * 19
# Handicap games: scale of "how many points is a real handicap" with board size.
BOARD_SCALING_EXPONENT = 0.75
HANDICAP_POINTS_BASE = 4.0
HANDICAP_POINTS_MIN = 2.0
# Dynamic PDA: adjusted in steps of this size (a power of two, exact in floating point), capped here.
PDA_INCREMENT = 0.125
PDA_HARD_CAP = 2.75
PDA_MIN_BOARD_LEN = 8  # boards of 7 or less get no dynamic PDA
PDA_RAISE_BELOW = -0.9  # disadvantaged side's win-loss below this: more PDA
PDA_LOWER_ABOVE = -0.5  # above this: less PDA
SEARCH_FACTOR_HISTORY = 3
SEARCH_FACTOR_EPSILON = 1e-10


def initial_black_advantage(rules, num_handicap_stones: int) -> float:
    """Points Black starts ahead (handicap stones and komi; KataGo's estimate, the one resigning uses)."""
    return resign.initial_black_advantage(num_handicap_stones, rules.komi, int(rules.scoring),
                                          int(rules.white_handicap_bonus))


def board_size_scaling(x_size: int, y_size: int) -> float:
    return math.pow(FULL_BOARD_AREA / (x_size * y_size), BOARD_SCALING_EXPONENT)


def handicap_game_points_threshold(scaling: float) -> float:
    return max(HANDICAP_POINTS_BASE / scaling, HANDICAP_POINTS_MIN)


def dynamic_pda_for_white(previous_pda_for_white: float, cap_per_opp_lead: float, rules, num_handicap_stones: int,
                          x_size: int, y_size: int, recent_win_loss: list[float], no_white_stones: bool) -> float:
    """The playoutDoublingAdvantage (for White) KataGo would use next in this game."""
    if cap_per_opp_lead <= 0.0:
        return 0.0
    scaling = board_size_scaling(x_size, y_size)
    start_points = handicap_game_points_threshold(scaling)
    black_advantage = initial_black_advantage(rules, num_handicap_stones)
    disadvantaged = WHITE if black_advantage >= 0 else BLACK
    advantage = abs(black_advantage)
    if advantage < start_points or x_size < PDA_MIN_BOARD_LEN or y_size < PDA_MIN_BOARD_LEN:
        return 0.0
    pda = previous_pda_for_white if disadvantaged == WHITE else -previous_pda_for_white
    cap = min(PDA_HARD_CAP, cap_per_opp_lead * (advantage - start_points) * scaling)
    cap = round_half_away(cap / PDA_INCREMENT) * PDA_INCREMENT  # C's round: a half step goes up
    if not recent_win_loss or no_white_stones:
        pda = cap  # a new game or a freshly set position
    else:
        value = recent_win_loss[-1]
        if disadvantaged == BLACK:
            value = -value
        if value < PDA_RAISE_BELOW:
            pda += PDA_INCREMENT
        elif value > PDA_LOWER_ABOVE:
            pda -= PDA_INCREMENT
        pda = min(max(pda, 0.0), cap)
    return pda if disadvantaged == WHITE else -pda


def search_factor(threshold: float, factor_when_winning: float, win_loss_utility_factor: float,
                  recent_win_loss: list[float], pla: int) -> float:
    """Think less (factor < 1) when the last few searches were comfortably winning."""
    if len(recent_win_loss) < SEARCH_FACTOR_HISTORY or win_loss_utility_factor - threshold <= SEARCH_FACTOR_EPSILON:
        return 1.0
    least_winning = -win_loss_utility_factor if pla == BLACK else win_loss_utility_factor
    for value in recent_win_loss[-SEARCH_FACTOR_HISTORY:]:
        if pla == BLACK and value > least_winning:
            least_winning = value
        if pla == WHITE and value < least_winning:
            least_winning = value
    excess = -threshold - least_winning if pla == BLACK else least_winning - threshold
    if excess <= 0:
        return 1.0
    weight = excess / (win_loss_utility_factor - threshold)
    return 1.0 + weight * (factor_when_winning - 1.0)
