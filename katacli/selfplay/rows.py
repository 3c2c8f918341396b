"""Turn a finished game into KataGo training rows (TrainingWriteBuffers::addRow and writeGame).

Each turn with target weight w contributes floor(w) rows plus one more with
probability frac(w) (weights are normally already resolved to integers); side
positions follow the main game's rows. Every row is the position before the move,
seen from the player to move, padded into a ``pos_len`` grid.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Optional

import numpy as np

from katacli._core.features import encode_v7
from katacli._core.game_state import GameState
from katacli.c_numbers import round_half_away
from katacli.data.schema import (
    DATA_FORMAT_VERSION,
    FIELDS,
    FUTURE_BOARD_OFFSETS,
    GT,
    NUM_GLOBAL_INPUTS,
    NUM_HISTORY_MASK_CHANNELS,
    NUM_SPATIAL_INPUTS,
    POLICY_TARGET_MAX,
    QVALUE_INT_LIMIT,
    QVALUE_SCORE_SCALE,
    QVALUE_WINLOSS_SCALE,
    SCORE_DISTR_TOTAL,
    SCORE_TARGET_CAP,
    SCORING_TARGET_SCALE,
    SELFPLAY_FIELDS,
    TD_TARGETS,
    pack_planes,
    score_distr_len,
    score_distr_mid,
    split_game_hash,
)
from katacli.game.coords import BLACK, WHITE, flat_index
from katacli.game.rules import ScoringRule
from katacli.selfplay.records import FinishedGame, Move, SearchTargets, ValueTargets

# Random history masking: each earlier move is shown with this probability, given the later ones were.
HISTORY_KEEP_PROB = 0.98
# Dummy score distribution for rows without a score target (must still sum to 100).
_HALF = SCORE_DISTR_TOTAL // 2


def opponent(pla: int) -> int:
    return WHITE if pla == BLACK else BLACK


def move_pos(move: Move, pos_len: int) -> int:
    return flat_index(move, pos_len, pos_len)  # on the network's padded pos_len x pos_len grid


def c_round(x: float) -> int:
    """C's round(): halves away from zero (Python's round() goes to even)."""
    return int(round_half_away(x))


def scale_policy_target(values: dict) -> dict:
    """Play-selection values -> int16 targets: scaled down if the largest exceeds 30000, rounded."""
    largest = max(values.values(), default=0.0)
    factor = POLICY_TARGET_MAX / largest if largest > POLICY_TARGET_MAX else 1.0
    return {move: c_round(v * factor) for move, v in values.items()}


def random_round(x: float, limit: int, rng: random.Random) -> int:
    """Round to an integer in [-limit, limit], up with probability frac(x) (exact in expectation)."""
    low = math.floor(x)
    if low < -limit:
        return -limit
    if low + 1 > limit:
        return limit
    frac = x - low
    if frac == 0.0:
        return low
    return low + 1 if rng.random() < frac else low


def td_value(values: list[ValueTargets], idx: int, pla: int, now_factor: float) -> tuple[float, float, float, float]:
    """Exponentially weighted average of the value targets from idx on, from pla's view."""
    win = loss = no_result = score = 0.0
    weight_left = 1.0
    last = len(values) - 1
    for i in range(idx, len(values)):
        if i == last:
            weight_now, weight_left = weight_left, 0.0
        else:
            weight_now = weight_left * now_factor
            weight_left *= 1.0 - now_factor
        v = values[i]
        win += weight_now * (v.win if pla == WHITE else v.loss)
        loss += weight_now * (v.loss if pla == WHITE else v.win)
        no_result += weight_now * v.no_result
        score += weight_now * (v.score if pla == WHITE else -v.score)
    score = min(max(score, -SCORE_TARGET_CAP), SCORE_TARGET_CAP)
    return win, loss, no_result, score


def variance_arrival_time(values: list[ValueTargets], idx: int) -> float:
    """Expected turn at which the win-loss variance arrives (sum of turns-from-now * squared changes)."""
    total = 0.0
    for i in range(idx + 1, len(values)):
        prev, cur = values[i - 1], values[i]
        delta = (cur.win - cur.loss) - (prev.win - prev.loss)
        total += (i - idx) * delta * delta
    return total


def board_colors(state: GameState) -> np.ndarray:
    return np.array(state.colors(), dtype=np.int8)


@dataclass
class _RowContext:
    """What every row of one game shares."""

    game: FinishedGame
    pos_len: int
    rng: random.Random
    hash_channels: list[float]


class RowBuffer:
    """Preallocated arrays for rows being built; ``take()`` returns the filled part."""

    def __init__(self, capacity: int, pos_len: int):
        self.pos_len = pos_len
        self.capacity = max(1, capacity)
        self.arrays = {name: np.zeros(FIELDS[name].shape(self.capacity, pos_len), FIELDS[name].dtype)
                       for name in SELFPLAY_FIELDS}
        self.num_rows = 0
        self._spatial = np.zeros((NUM_SPATIAL_INPUTS, pos_len, pos_len), np.float32)
        self._global = np.zeros(NUM_GLOBAL_INPUTS, np.float32)

    def _grow(self) -> None:
        for name, array in self.arrays.items():
            bigger = np.zeros((array.shape[0] * 2, *array.shape[1:]), array.dtype)
            bigger[: array.shape[0]] = array
            self.arrays[name] = bigger
        self.capacity *= 2

    def next_row(self) -> int:
        if self.num_rows == self.capacity:
            self._grow()
        self.num_rows += 1
        return self.num_rows - 1

    def take(self) -> dict[str, np.ndarray]:
        return {name: array[: self.num_rows].copy() for name, array in self.arrays.items()}


def _add_row(buf: RowBuffer, ctx: _RowContext, state: GameState, pla: int, *, turn_idx: int,
             targets: SearchTargets, next_policy: Optional[dict], values: list[ValueTargets], value_idx: int,
             future_boards: Optional[list[np.ndarray]], is_side_position: bool, nets_behind: int) -> None:
    game, L, rng = ctx.game, ctx.pos_len, ctx.rng
    row = buf.next_row()
    a = buf.arrays
    x_size, y_size = state.x_size, state.y_size
    opp = opponent(pla)
    dew = game.draw_equivalent_wins_for_white

    # Inputs. Side positions are searched without playout doubling, so their inputs show none.
    pda = 0.0
    if not is_side_position and game.pda_player:
        pda = -game.playout_doubling_advantage if opp == game.pda_player else game.playout_doubling_advantage
    encode_v7(state, pla, buf._spatial, buf._global, draw_equivalent_wins_for_white=dew,
              playout_doubling_advantage=pda)
    a["binaryInputNCHWPacked"][row] = pack_planes(buf._spatial)
    a["globalInputNC"][row] = buf._global

    g = a["globalTargetsNC"][row]
    g[:] = 0.0
    g[GT.ROW_WEIGHT] = game.training_weight

    # Policy targets: this turn's search, and the next turn's (the opponent's reply).
    policy = a["policyTargetsNCMove"][row]
    for channel, target, weight_channel in ((0, targets.policy_target, GT.POLICY_WEIGHT),
                                            (1, next_policy, GT.NEXT_POLICY_WEIGHT)):
        if target is None:
            policy[channel] = 1
            g[weight_channel] = 0.0
        else:
            policy[channel] = 0
            for move, visits in target.items():
                policy[channel, move_pos(move, L)] = visits
            g[weight_channel] = 1.0

    # Value targets: the outcome (nowFactor 0), three td horizons, and this search (nowFactor 1).
    area = x_size * y_size
    g[GT.WIN:GT.WIN + 4] = td_value(values, value_idx, pla, 0.0)
    for first, coeff in TD_TARGETS:
        g[first:first + 4] = td_value(values, value_idx, pla, 1.0 / (1.0 + area * coeff))
    g[GT.TD_SEARCH:GT.TD_SEARCH + 4] = td_value(values, value_idx, pla, 1.0)

    this = values[value_idx]
    no_result_game = game.is_no_result
    if this.has_lead and not no_result_game:
        lead = this.lead if pla == WHITE else -this.lead
        g[GT.LEAD] = min(max(lead, -SCORE_TARGET_CAP), SCORE_TARGET_CAP)
        g[GT.LEAD_WEIGHT] = 1.0
    g[GT.VARIANCE_TIME] = variance_arrival_time(values, value_idx)
    g[GT.POLICY_SURPRISE] = targets.policy_surprise
    g[GT.POLICY_ENTROPY] = targets.policy_entropy
    g[GT.SEARCH_ENTROPY] = targets.search_entropy
    # ONE_MINUS_TD_WEIGHT and ONE_MINUS_VALUE_WEIGHT stay 0: full weight on both.

    keep = True
    for k in range(NUM_HISTORY_MASK_CHANNELS):
        keep = keep and rng.random() < HISTORY_KEEP_PROB
        g[GT.USE_HISTORY + k] = 1.0 if keep else 0.0
    g[GT.GAME_HASH:GT.GAME_HASH + len(ctx.hash_channels)] = ctx.hash_channels

    rules = state.rules_tuple
    g[GT.SELF_KOMI] = state.self_komi(pla, dew)
    g[GT.AREA_SCORING_LIKE] = 1.0 if (state.encore_phase == 2 or rules.scoring_rule == ScoringRule.AREA) else 0.0
    g[GT.EARLIER_NET] = 1.0 if game.changed_nets else 0.0
    g[GT.NETS_BEHIND] = nets_behind
    g[GT.TURN_IDX] = turn_idx
    g[GT.HIT_TURN_LIMIT] = 1.0 if game.hit_turn_limit else 0.0
    g[GT.FIRST_TRAINING_TURN] = game.start_turn_idx
    g[GT.NUM_EXTRA_BLACK] = game.num_extra_black
    g[GT.GAME_MODE] = game.mode
    g[GT.INITIAL_TURN_NUMBER] = game.initial_turn_number
    g[GT.RAW_WINLOSS] = targets.raw_white_win_loss if pla == WHITE else -targets.raw_white_win_loss
    g[GT.RAW_SCORE_MEAN] = targets.raw_white_score_mean if pla == WHITE else -targets.raw_white_score_mean
    g[GT.RAW_POLICY_ENTROPY] = targets.raw_policy_entropy
    g[GT.UNREDUCED_VISITS] = targets.unreduced_visits
    if not is_side_position:
        white_bonus = game.end_state.white_bonus_score - state.white_bonus_score
        g[GT.BONUS_POINTS] = (white_bonus if pla == WHITE else -white_bonus) or 0.0
    end = game.end_state
    g[GT.GAME_FINISHED] = 1.0 if (not is_side_position and end.is_game_finished and not game.hit_turn_limit) else 0.0
    g[GT.DATA_VERSION] = DATA_FORMAT_VERSION
    g[GT.PASS_ALIVE_UNDER_SUICIDE] = 1.0 if game.pass_alive_under_suicide else 0.0

    _fill_outcome_targets(a, row, ctx, pla, x_size, y_size, is_side_position, no_result_game, values)
    _fill_future_boards(a["valueTargetsNCHW"][row], future_boards, value_idx, pla, g)
    _fill_qvalues(a["qValueTargetsNCMove"][row], targets, pla, L, rng)


def _fill_outcome_targets(a, row, ctx: _RowContext, pla, x_size, y_size, is_side_position, no_result_game,
                          values: list[ValueTargets]) -> None:
    """Final ownership, seki areas, scoring and the score distribution (all absent for side positions)."""
    game, L, rng = ctx.game, ctx.pos_len, ctx.rng
    g = a["globalTargetsNC"][row]
    spatial = a["valueTargetsNCHW"][row]
    distr = a["scoreDistrN"][row]
    spatial[:] = 0
    distr[:] = 0
    opp = opponent(pla)
    if is_side_position or no_result_game:
        mid = score_distr_mid(L)
        distr[mid - 1] = _HALF
        distr[mid] = SCORE_DISTR_TOTAL - _HALF
        return
    g[GT.OWNERSHIP_WEIGHT] = 1.0
    final = values[-1]
    score = final.score if pla == WHITE else -final.score
    g[GT.FINAL_SCORE] = score
    own = game.final_ownership
    full = game.final_full_area
    spatial[0, :y_size, :x_size] = np.where(own == pla, 1, np.where(own == opp, -1, 0))
    unowned_area = (full != 0) & (own == 0)
    spatial[1, :y_size, :x_size] = np.where(unowned_area, np.where(full == pla, 1, -1), 0)

    length, mid = score_distr_len(L), score_distr_mid(L)
    center = c_round(score) if math.isfinite(score) else 0
    lower, upper = center + mid - 1, center + mid
    if upper <= 0:
        distr[0] = SCORE_DISTR_TOTAL
    elif lower >= length - 1:
        distr[length - 1] = SCORE_DISTR_TOTAL
    else:
        upper_prop = c_round((score - (center - 0.5)) * SCORE_DISTR_TOTAL)
        distr[lower] = SCORE_DISTR_TOTAL - upper_prop
        distr[upper] = upper_prop

    g[GT.SCORING_WEIGHT] = 1.0
    scoring = game.final_white_scoring if pla == WHITE else -game.final_white_scoring
    for y in range(y_size):
        for x in range(x_size):
            spatial[4, y, x] = random_round(float(scoring[y, x]) * SCORING_TARGET_SCALE, SCORING_TARGET_SCALE, rng)


def _fill_future_boards(spatial: np.ndarray, boards: Optional[list[np.ndarray]], idx: int, pla: int, g) -> None:
    if boards is None:
        return
    g[GT.FUTURE_POS_WEIGHT] = 1.0
    last = len(boards) - 1
    opp = opponent(pla)
    for channel, offset in zip((2, 3), FUTURE_BOARD_OFFSETS):
        b = boards[min(idx + offset, last)]
        y_size, x_size = b.shape
        spatial[channel, :y_size, :x_size] = np.where(b == pla, 1, np.where(b == opp, -1, 0))


def _fill_qvalues(q: np.ndarray, targets: SearchTargets, pla: int, L: int, rng: random.Random) -> None:
    q[:] = 0
    for child in targets.q_values:
        pos = move_pos(child.move, L)
        win_loss = child.win_loss if pla == WHITE else -child.win_loss
        score = child.score if pla == WHITE else -child.score
        score = min(max(score, -SCORE_TARGET_CAP), SCORE_TARGET_CAP)
        q[0, pos] = random_round(win_loss * QVALUE_WINLOSS_SCALE, QVALUE_INT_LIMIT, rng)
        q[1, pos] = random_round(score * QVALUE_SCORE_SCALE, QVALUE_INT_LIMIT, rng)
        q[2, pos] = max(0, min(child.visits, QVALUE_INT_LIMIT))


def _row_count(weight: float, rng: random.Random) -> int:
    """KataGo's loop: one row per whole unit of weight, plus one with probability of the remainder."""
    count = 0
    while weight > 0.0:
        if weight >= 1.0 or rng.random() < weight:
            count += 1
        weight -= 1.0
    return count


def game_rows(game: FinishedGame, pos_len: int, rng: Optional[random.Random] = None) -> dict[str, np.ndarray]:
    """All training rows of one game as KataGo's arrays (possibly zero rows)."""
    rng = rng or random.Random()
    turns = game.turns
    ctx = _RowContext(game, pos_len, rng, split_game_hash(*game.game_hash))
    counts = [_row_count(t.target_weight, rng) for t in turns]
    side_counts = [_row_count(sp.target_weight, rng) if sp.targets is not None else 0 for sp in game.side_positions]
    buf = RowBuffer(sum(counts) + sum(side_counts), pos_len)

    # One pass to collect every position's stones, for the future-board targets.
    state = game.start_state.copy()
    boards = [board_colors(state)]
    for t in turns:
        state.play(t.move, t.player)
        boards.append(board_colors(state))

    values = game.white_value_targets
    state = game.start_state.copy()
    for i, t in enumerate(turns):
        turn_idx = game.start_turn_idx + i
        if counts[i]:
            nets_behind = 0
            for k, (_, changed_at) in enumerate(game.changed_nets):
                if changed_at > turn_idx:
                    nets_behind = len(game.changed_nets) - k
                    break
            next_policy = turns[i + 1].targets.policy_target if i + 1 < len(turns) else None
            for _ in range(counts[i]):
                _add_row(buf, ctx, state, t.player, turn_idx=turn_idx, targets=t.targets, next_policy=next_policy,
                         values=values, value_idx=i, future_boards=boards, is_side_position=False,
                         nets_behind=nets_behind)
        state.play(t.move, t.player)

    for sp, count in zip(game.side_positions, side_counts):
        for _ in range(count):
            _add_row(buf, ctx, sp.state, sp.player, turn_idx=len(sp.state.moves), targets=sp.targets,
                     next_policy=None, values=[sp.targets.value], value_idx=0, future_boards=None,
                     is_side_position=True, nets_behind=len(game.changed_nets) - sp.nets_changed_so_far)
    return buf.take()
