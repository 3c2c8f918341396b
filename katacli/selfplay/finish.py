"""After the last move: final targets, surprise-based row weights, and rounding weights to whole rows.

KataGo's end of Play::runGame: the outcome and final ownership/scoring maps, the value
surprise of each turn, the re-weighting that moves part of the data weight to
surprising positions (policySurpriseDataWeight, valueSurpriseDataWeight), and the
random resolution of fractional weights.
"""
from __future__ import annotations

import math
import random

import numpy as np

from katacli._core.area import area_map
from katacli._core.game_state import GameState
from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import TaxRule
from katacli.selfplay.records import TurnRecord, ValueTargets
from katacli.selfplay.settings import PlaySettings

# Value surprise (a KL divergence) is capped here so one move cannot take a ridiculous weight.
MAX_VALUE_SURPRISE = 1.0
# td horizon used for the value surprise: nowFactor = 1 / (1 + area * this).
VALUE_SURPRISE_TD_COEFF = 0.016
# Below this average value surprise the value-surprise weighting fades out (too little signal).
MIN_AVERAGE_VALUE_SURPRISE = 0.010
# Reduced-weight rows still count if their policy surprise exceeds the average by this factor.
EXCESS_SURPRISE_FACTOR = 1.5
SURPRISE_SUM_FLOOR = 1e-10
# Territories of at most this many points score nothing under group tax (two eyes are free).
GROUP_TAX_FREE_POINTS = 2


def final_value_targets(scored: GameState, draw_equivalent_wins_for_white: float) -> ValueTargets:
    """White's outcome of a finished (scored or no-result) game; draws fold into the score as in the core
    (GameState.white_komi_adjustment_for_draws)."""
    if scored.is_no_result:
        return ValueTargets(0.0, 0.0, 1.0, 0.0)
    winner = scored.winner
    win = 1.0 if winner == WHITE else 0.0 if winner == BLACK else draw_equivalent_wins_for_white
    score = scored.final_white_minus_black_score + scored.white_komi_adjustment_for_draws(
        draw_equivalent_wins_for_white)
    return ValueTargets(win, 1.0 - win, 0.0, score, has_lead=True, lead=score)


def final_areas(scored: GameState, ownership_rows):
    """(full area, ownership, White's scoring per point) as [y, x] arrays for the row builder.

    Pass-alive areas follow the game's own mode (GameState.suicide_legal_for_pass_alive: the rules, or
    the always-pass-alive-under-suicide mode the game started with), as KataGo's final targets do.
    """
    board = scored.board()
    full = np.array(area_map(board, True, True, True, scored.suicide_legal_for_pass_alive()), np.int8)
    ownership = np.array(ownership_rows, np.int8)
    colors = np.array(scored.colors(), np.int8)
    group_tax = scored.rules_tuple.tax_rule == TaxRule.ALL
    return full, ownership, white_scoring(colors, ownership, group_tax)


def white_scoring(colors: np.ndarray, area: np.ndarray, group_tax: bool) -> np.ndarray:
    """How much each point scores for White (KataGo's NNInputs::fillScoring).

    Without group tax: +1 White's area, -1 Black's. With it, the territory of each
    connected area region scores (n - 2) / n per point, its stones the full point.
    """
    sign = np.where(area == WHITE, 1.0, np.where(area == BLACK, -1.0, 0.0)).astype(np.float32)
    if not group_tax:
        return sign
    y_size, x_size = area.shape
    out = np.zeros_like(sign)
    seen = np.zeros(area.shape, bool)
    for y0 in range(y_size):
        for x0 in range(x_size):
            owner = area[y0, x0]
            if seen[y0, x0] or owner not in (BLACK, WHITE):
                continue
            region, stack = [], [(x0, y0)]
            seen[y0, x0] = True
            while stack:
                x, y = stack.pop()
                region.append((x, y))
                for nx, ny in ((x - 1, y), (x + 1, y), (x, y - 1), (x, y + 1)):
                    if 0 <= nx < x_size and 0 <= ny < y_size and not seen[ny, nx] and area[ny, nx] == owner:
                        seen[ny, nx] = True
                        stack.append((nx, ny))
            full = 1.0 if owner == WHITE else -1.0
            territory = sum(1 for x, y in region if colors[y, x] != owner)
            territory_value = 0.0 if territory <= GROUP_TAX_FREE_POINTS else full * (territory - 2.0) / territory
            for x, y in region:
                out[y, x] = full if colors[y, x] == owner else territory_value
    return out


def _value_surprise_kl(win: float, loss: float, no_result: float, turn: TurnRecord) -> float:
    t = turn.targets
    surprise = 0.0
    for p, q in ((win, t.raw_white_win), (loss, t.raw_white_loss), (no_result, t.raw_white_no_result)):
        if p > 1e-100:
            surprise += p * (math.log(p) - math.log(max(q, 1e-100)))
    return min(max(surprise, 0.0), MAX_VALUE_SURPRISE)


def value_surprise_by_turn(turns: list[TurnRecord], final: ValueTargets, board_area: int,
                           use_search_value: bool) -> list[float]:
    """How surprising each turn's value was to the raw net: vs. its own search, or vs. the smoothed outcome."""
    if use_search_value:
        return [_value_surprise_kl(t.targets.value.win, t.targets.value.loss, t.targets.value.no_result, t)
                for t in turns]
    now = 1.0 / (1.0 + board_area * VALUE_SURPRISE_TD_COEFF)
    win, loss, no_result = final.win, final.loss, final.no_result
    out = [0.0] * len(turns)
    for i in range(len(turns) - 1, -1, -1):
        v = turns[i].targets.value
        win += now * (v.win - win)
        loss += now * (v.loss - loss)
        no_result += now * (v.no_result - no_result)
        out[i] = _value_surprise_kl(win, loss, no_result, turns[i])
    return out


def apply_surprise_weighting(turns: list[TurnRecord], value_surprise: list[float], play: PlaySettings) -> None:
    """Move part of the row weight to turns whose policy or value was surprising (KataGo's formula)."""
    if play.policy_surprise_data_weight <= 0 and play.value_surprise_data_weight <= 0:
        return
    weights = [t.target_weight for t in turns]
    sum_weights = sum(weights)
    if sum_weights < 1:
        return
    avg_policy = sum(t.targets.policy_surprise * w for t, w in zip(turns, weights)) / sum_weights
    avg_value = sum(s * w for s, w in zip(value_surprise, weights)) / sum_weights
    value_weight = play.value_surprise_data_weight
    if avg_value < MIN_AVERAGE_VALUE_SURPRISE:
        value_weight *= avg_value / MIN_AVERAGE_VALUE_SURPRISE
    threshold = avg_policy * EXCESS_SURPRISE_FACTOR
    policy_prop = [w * t.targets.policy_surprise + (1 - w) * max(0.0, t.targets.policy_surprise - threshold)
                   for t, w in zip(turns, weights)]
    value_prop = [w * s for s, w in zip(value_surprise, weights)]
    sum_policy = max(sum(policy_prop), SURPRISE_SUM_FLOOR)
    sum_value = max(sum(value_prop), SURPRISE_SUM_FLOOR)
    for t, w, pp, vp in zip(turns, weights, policy_prop, value_prop):
        t.target_weight = ((1.0 - play.policy_surprise_data_weight - value_weight) * w
                           + play.policy_surprise_data_weight * pp * sum_weights / sum_policy
                           + value_weight * vp * sum_weights / sum_value)


def resolve_weight(weight: float, rng: random.Random) -> float:
    """A fractional weight becomes its floor or floor + 1, unbiased."""
    weight = max(weight, 0.0)
    floored = math.floor(weight)
    return float(floored + 1 if rng.random() < weight - floored else floored)
