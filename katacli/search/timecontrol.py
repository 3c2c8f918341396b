"""Clock handling: KataGo's TimeControls (absolute, Fischer, byo-yomi, Canadian) and per-move budgets.

A :class:`TimeControls` describes one player's clock: the settings given by
``time_settings`` / ``kgs-time_settings`` / ``kata-time_settings`` plus what
``time_left`` last reported. :meth:`TimeControls.get_time` turns it into
``(min_time, recommended_time, max_time)`` for the next move, as KataGo does:

* absolute / Fischer: spread the main time over the expected number of our
  remaining moves (estimated from the stones on the board), plus the increment;
* byo-yomi / Canadian: while in main time, spend about e times a period's
  per-stone time per move (the log-time optimum), stretched toward the expected
  game length; in overtime, divide the period's time by the stones left;
* a lag buffer is taken off every figure, twice on a last byo-yomi stone.

:func:`search_time_limit` adds the search-side adjustments (overallocation,
midgame peak, obvious moves, time already thought by pondering) that KataGo's
Search::recomputeSearchTimeLimit applies, and :func:`upper_bound_visits_left`
estimates how many more visits fit (used for futile-visit pruning).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Optional, Sequence

# KataGo's thresholds for "no time limit".
UNLIMITED_TIME_THRESHOLD = 1e20
MAX_USER_INPUT_TIME = 1e25
UNLIMITED_TIME_DEFAULT = 1e30
UNLIMITED_TIME_DEFAULT_LARGE = 1e40
# time_left tolerates a slightly negative time from controllers.
MIN_TIME_LEFT = -10.0
MAX_STONES_LEFT = 100000
# Byo-yomi: all but this many periods are treated as main time.
NUM_RESERVED_PERIODS = 5
TIME_SETTINGS_KINDS_KGS = ("none", "absolute", "byoyomi", "canadian")
TIME_SETTINGS_KINDS_KATA = ("none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped")
# Obvious-move and softplus constants of recomputeSearchTimeLimit.
CARRIED_OVER_SOFTPLUS_SHARPNESS = 6.0
MIN_SECONDS_TO_TRUST_VISIT_RATE = 0.1
BOARD_AREA_19 = 361.0


class TimeSettingsError(ValueError):
    """Bad arguments for a time command; the message is the GTP error text."""


@dataclass(frozen=True)
class TimeControls:
    original_main_time: float = UNLIMITED_TIME_DEFAULT
    increment: float = 0.0
    main_time_limit: float = UNLIMITED_TIME_DEFAULT_LARGE
    max_time_per_move: float = UNLIMITED_TIME_DEFAULT_LARGE
    original_num_periods: int = 0
    num_stones_per_period: int = 0
    per_period_time: float = 0.0
    main_time_left: float = UNLIMITED_TIME_DEFAULT
    in_overtime: bool = False
    num_periods_left_including_current: int = 0
    num_stones_left_in_period: int = 0
    time_left_in_period: float = 0.0

    # -- construction ---------------------------------------------------------------------
    @classmethod
    def unlimited(cls) -> "TimeControls":
        return cls()

    @classmethod
    def absolute(cls, main_time: float) -> "TimeControls":
        return cls(original_main_time=main_time, main_time_left=main_time)

    @classmethod
    def fischer(cls, main_time: float, increment: float) -> "TimeControls":
        return cls(original_main_time=main_time, increment=increment, main_time_left=main_time)

    @classmethod
    def fischer_capped(cls, main_time: float, increment: float, main_time_limit: float,
                       max_time_per_move: float) -> "TimeControls":
        if main_time_limit < main_time:
            raise TimeSettingsError("TimeControls: mainTimeLimit is smaller than mainTime")
        return cls(original_main_time=main_time, increment=increment, main_time_limit=main_time_limit,
                   max_time_per_move=max_time_per_move, main_time_left=main_time)

    @classmethod
    def byoyomi_or_canadian(cls, main_time: float, per_period_time: float, num_periods: int,
                            num_stones_per_period: int) -> "TimeControls":
        return cls(original_main_time=main_time, original_num_periods=num_periods,
                   num_stones_per_period=num_stones_per_period, per_period_time=per_period_time,
                   main_time_left=main_time, num_periods_left_including_current=num_periods)

    def is_effectively_unlimited(self) -> bool:
        return ((self.main_time_left > UNLIMITED_TIME_THRESHOLD
                 or (self.in_overtime and self.time_left_in_period > UNLIMITED_TIME_THRESHOLD))
                and self.max_time_per_move > UNLIMITED_TIME_THRESHOLD)

    def with_time_left(self, time: float, stones: int) -> "TimeControls":
        """Apply a GTP ``time_left`` report (KGS byo-yomi reports periods as stones)."""
        if math.isnan(time) or time < MIN_TIME_LEFT or time > MAX_USER_INPUT_TIME:
            raise TimeSettingsError("invalid time")
        if stones < 0 or stones > MAX_STONES_LEFT:
            raise TimeSettingsError("invalid stones")
        if stones > 0 and self.original_num_periods <= 0:
            raise TimeSettingsError(
                "stones left in period is > 0 but the time control used does not have any overtime periods")
        if stones == 0:
            return replace(self, main_time_left=time, in_overtime=False,
                           num_periods_left_including_current=self.original_num_periods,
                           num_stones_left_in_period=0, time_left_in_period=0.0)
        if self.original_num_periods > 1 and self.num_stones_per_period == 1:
            return replace(self, main_time_left=0.0, in_overtime=True,
                           num_periods_left_including_current=min(stones, self.original_num_periods),
                           num_stones_left_in_period=1, time_left_in_period=time)
        return replace(self, main_time_left=0.0, in_overtime=True, num_periods_left_including_current=1,
                       num_stones_left_in_period=min(stones, self.num_stones_per_period), time_left_in_period=time)

    # -- per-move budget ----------------------------------------------------------------------
    def get_time(self, board_area: int, num_stones_on_board: int, lag_buffer: float) -> tuple[float, float, float]:
        """(min, recommended, max) seconds for the next move."""
        def turns_left(typical_fraction: float, typical_extra: float, min_fraction: float, min_extra: float) -> float:
            typical = typical_fraction * board_area + typical_extra
            minimum = min_fraction * board_area + min_extra
            return 0.5 * max(typical - num_stones_on_board, minimum)  # we make half the moves

        turns_absolute = turns_left(0.95, 20.0, 0.15, 30.0)
        turns_increment = turns_left(0.75, 15.0, 0.10, 20.0)
        turns_byoyomi = turns_left(0.50, 10.0, 0.02, 4.0)

        def divide_evenly(time: float, is_increment_or_abs: bool, is_byoyomi: bool) -> float:
            if_absolute = time / turns_absolute
            if is_increment_or_abs:
                if time <= 0:
                    return time
                return min(time / turns_increment, if_absolute + 2.0 * self.increment)
            if is_byoyomi:
                if self.per_period_time <= 0 or self.num_stones_per_period <= 0:
                    return if_absolute
                per_move = self.per_period_time / self.num_stones_per_period
                # Spending e times the byo-yomi time per move is optimal if strength ~ log(time).
                optimal_turns = (time / per_move) * math.exp(-1.0)
                turns = optimal_turns
                if turns_byoyomi > optimal_turns:
                    turns = min(turns_byoyomi, optimal_turns * 1.75)
                turns = max(1.0, min(turns, turns_absolute))
                use = min(time / turns, if_absolute + 3.0 * per_move)
                use = max(use, per_move)
                if use < per_move * 1.5 and time < per_move * 1.5:
                    use = time + per_move
                return use
            return if_absolute

        lag = lag_buffer
        if self.increment > 0 or self.num_periods_left_including_current <= 0:
            if self.in_overtime:
                raise TimeSettingsError("TimeControls: inOvertime with Fischer or absolute time")
            left = self.main_time_left
            min_time = min(max(0.0, left * 0.5), max(0.0, left + self.increment - self.main_time_limit))
            if left <= self.increment:
                rec = _apply_lag_buffer(left, lag)
                max_time = left
            else:
                excess = _apply_lag_buffer(left - self.increment, lag)
                rec = self.increment + divide_evenly(excess, True, False)
                max_time = min(left, self.increment + excess / 5.0)
        else:
            main_left = self.main_time_left
            overtime = self.in_overtime
            periods = self.num_periods_left_including_current
            period_left = self.time_left_in_period
            stones_left = self.num_stones_left_in_period
            overtime, periods, period_left, stones_left = self._carry_over_into_overtime(
                main_left, overtime, periods, period_left, stones_left)
            if periods > NUM_RESERVED_PERIODS:
                overtime = False
                if not self.in_overtime:
                    main_left += self.per_period_time * (periods - NUM_RESERVED_PERIODS)
                else:
                    main_left += period_left + self.per_period_time * (periods - NUM_RESERVED_PERIODS - 1)
            if not overtime:
                large_per_move = self.per_period_time / (0.75 * self.num_stones_per_period + 0.25)
                min_time = 0.0
                rec = divide_evenly(main_left, False, True)
                max_time = large_per_move + max(min(large_per_move * 1.75, main_left), main_left / 5.0)
                if main_left < max_time < main_left + large_per_move:
                    max_time = main_left + large_per_move
                if max_time > main_left and periods <= 1 and self.num_stones_per_period <= 1:
                    lag *= 2.0
            else:
                if stones_left < 1:
                    raise TimeSettingsError("TimeControls: no stones left in the period while in overtime")
                if periods > 1 and _apply_lag_buffer(period_left, lag) < (
                        _apply_lag_buffer(0.5 * self.per_period_time, lag) * (periods - 1) / (NUM_RESERVED_PERIODS - 1)):
                    periods -= 1
                    period_left += self.per_period_time
                min_time = period_left if stones_left <= 1 else 0.0
                rec = period_left / stones_left
                max_time = period_left / (0.75 * stones_left + 0.25)
                if periods <= 1 and stones_left <= 1:
                    lag *= 2.0
        max_time = min(max_time, self.max_time_per_move)
        min_time = max(0.0, _apply_lag_buffer(min_time, lag))
        rec = max(0.0, _apply_lag_buffer(rec, lag))
        max_time = max(0.0, _apply_lag_buffer(max_time, lag))
        min_time = min(min_time, max_time)
        rec = min(rec, max_time)
        return min_time, rec, max_time

    def _carry_over_into_overtime(self, main_left, overtime, periods, period_left, stones_left):
        """Overspent main time starts byo-yomi; an overspent period uses up the following ones.

        Returns (overtime, periods, period_left, stones_left) after the carry-over."""
        if main_left < 0 and not overtime:
            overtime = True
            period_left = main_left + self.per_period_time
            stones_left = self.num_stones_per_period
        if overtime:
            while period_left < 0 and periods > 1:
                periods -= 1
                period_left += self.per_period_time
        return overtime, periods, period_left, stones_left

    def round_up_time_limit_if_needed(self, lag_buffer: float, time_used: float, time_limit: float) -> float:
        """Byo-yomi: if stopping now would waste time that cannot be carried over, think longer."""
        if self.increment > 0 or self.num_periods_left_including_current <= 0:
            return time_limit
        main_left = self.main_time_left
        overtime = self.in_overtime
        periods = self.num_periods_left_including_current
        period_left = self.time_left_in_period
        stones_left = float(self.num_stones_left_in_period)
        if not overtime:
            main_left -= time_used
        else:
            period_left -= time_used
        overtime, periods, period_left, stones_left = self._carry_over_into_overtime(
            main_left, overtime, periods, period_left, stones_left)
        per_move = self.per_period_time / self.num_stones_per_period
        per_move_buffered = _apply_lag_buffer(per_move, lag_buffer)
        bit_of_time = min(max(lag_buffer, per_move_buffered * 0.01), per_move_buffered)
        if not overtime:
            if main_left < per_move * 0.5:
                if self.num_stones_per_period <= 1:
                    rounded = time_used + main_left + per_move_buffered
                else:
                    rounded = time_used + main_left + bit_of_time
            else:
                return time_limit
        else:
            if period_left <= 0:
                return time_limit
            if stones_left > 1:
                if not self.in_overtime and (self.per_period_time - period_left) < bit_of_time:
                    rounded = time_used + bit_of_time - (self.per_period_time - period_left)
                else:
                    return time_limit
            else:
                rounded = _apply_lag_buffer(time_used + period_left, lag_buffer)
        if rounded < time_used:
            return time_limit
        return max(time_limit, rounded)


def _apply_lag_buffer(time: float, lag_buffer: float) -> float:
    if time < 0:
        return time
    if time < 2.0 * lag_buffer:
        return time * 0.5
    return time - lag_buffer


# ---- GTP time commands -----------------------------------------------------------------------
def _parse_time(args: Sequence[str], idx: int, what: str, allow_negative: bool = False) -> float:
    if idx >= len(args):
        raise TimeSettingsError(f"Could not parse {what}: missing argument")
    try:
        value = float(args[idx])
    except ValueError:
        raise TimeSettingsError(f"Could not parse {what}: '{args[idx]}'") from None
    low = -MAX_USER_INPUT_TIME if allow_negative else 0.0
    if math.isnan(value) or value < low or value > MAX_USER_INPUT_TIME:
        raise TimeSettingsError(f"Invalid {what}: '{args[idx]}'")
    return value


def _parse_count(args: Sequence[str], idx: int, what: str) -> int:
    if idx >= len(args):
        raise TimeSettingsError(f"Could not parse {what}: missing argument")
    try:
        value = int(args[idx])
    except ValueError:
        raise TimeSettingsError(f"Could not parse {what}: '{args[idx]}'") from None
    if value < 0 or value > MAX_STONES_LEFT:
        raise TimeSettingsError(f"Invalid {what}: '{args[idx]}'")
    return value


def _canadian_like(main: float, period_time: float, stones: int) -> TimeControls:
    # GTP: positive overtime with 0 stones means no time limit; no overtime at all means absolute.
    if stones == 0 and period_time > 0.0:
        return TimeControls.unlimited()
    if stones == 0:
        return TimeControls.absolute(main)
    return TimeControls.byoyomi_or_canadian(main, period_time, 1, stones)


def parse_time_settings(args: Sequence[str]) -> TimeControls:
    """GTP ``time_settings main_time byo_yomi_time byo_yomi_stones``."""
    main = _parse_time(args, 0, "main time")
    period = _parse_time(args, 1, "byo-yomi per-period time")
    stones = _parse_count(args, 2, "byo-yomi stones")
    return _canadian_like(main, period, stones)


def parse_kgs_time_settings(args: Sequence[str], kata: bool = False) -> TimeControls:
    """``kgs-time_settings`` (or ``kata-time_settings`` with kata=True, which adds fischer and fischer-capped)."""
    kinds = TIME_SETTINGS_KINDS_KATA if kata else TIME_SETTINGS_KINDS_KGS
    expected = ("Expected " + ", ".join(f"'{k}'" for k in kinds[:-1]) + f", or '{kinds[-1]}' as first argument for "
                + ("kata-time_settings" if kata else "kgs-time_settings"))
    if not args:
        raise TimeSettingsError(expected)
    kind = args[0].strip().lower()
    if kind not in kinds:
        raise TimeSettingsError(expected)
    if kind == "none":
        return TimeControls.unlimited()
    if kind == "absolute":
        return TimeControls.absolute(_parse_time(args, 1, "main time"))
    if kind == "canadian":
        main = _parse_time(args, 1, "main time")
        period = _parse_time(args, 2, "byo-yomi period time")
        return _canadian_like(main, period, _parse_count(args, 3, "byo-yomi stones"))
    if kind == "byoyomi":
        main = _parse_time(args, 1, "main time")
        period = _parse_time(args, 2, "byo-yomi per-period time")
        periods = _parse_count(args, 3, "byo-yomi periods")
        if periods == 0:
            return TimeControls.absolute(main)
        return TimeControls.byoyomi_or_canadian(main, period, periods, 1)
    main = _parse_time(args, 1, "main time")
    increment = _parse_time(args, 2, "increment time")
    if kind == "fischer":
        return TimeControls.fischer(main, increment)
    limit = _parse_time(args, 3, "main time limit", allow_negative=True)
    per_move = _parse_time(args, 4, "max time per move", allow_negative=True)
    return TimeControls.fischer_capped(main, increment, MAX_USER_INPUT_TIME if limit < 0 else limit,
                                      MAX_USER_INPUT_TIME if per_move < 0 else per_move)


# ---- search-side budget -----------------------------------------------------------------------
@dataclass
class TimeBudgetInputs:
    """What recomputeSearchTimeLimit looks at besides the clock."""

    board_area: int
    num_stones_on_board: int
    turn_number: int
    policy_entropy: Optional[float] = None     # of the root's raw policy
    policy_surprise: Optional[float] = None    # KL(search distribution || raw policy)


def search_time_limit(tc: TimeControls, params, inputs: TimeBudgetInputs, time_used: float,
                      time_carried_over: float, search_factor: float = 1.0,
                      futile_stop: bool = False) -> float:
    """Seconds to think this move (KataGo's recomputeSearchTimeLimit, futile check supplied by the caller).

    ``time_carried_over`` is search time already spent on this position (pondering, tree reuse);
    ``futile_stop`` asks to stop now because no other move can overtake the best.
    """
    tc_min, tc_rec, tc_max = tc.get_time(inputs.board_area, inputs.num_stones_on_board, params.lag_buffer)
    tc_rec *= params.overallocate_time_factor
    if params.midgame_time_factor != 1.0:
        area_scale = inputs.board_area / BOARD_AREA_19
        turn = max(0.0, float(inputs.turn_number))
        peak = params.midgame_turn_peak_time * area_scale
        if turn < peak:
            weight = turn / peak
        else:
            weight = math.exp(-(turn - peak) / (params.endgame_turn_time_decay * area_scale))
        weight = min(1.0, max(0.0, weight))
        tc_rec *= 1.0 + weight * (params.midgame_time_factor - 1.0)
    if params.obvious_moves_time_factor < 1.0 and inputs.policy_entropy is not None and inputs.policy_surprise is not None:
        by_entropy = math.exp(-inputs.policy_entropy / params.obvious_moves_policy_entropy_tolerance)
        by_surprise = math.exp(-inputs.policy_surprise / params.obvious_moves_policy_surprise_tolerance)
        tc_rec *= 1.0 + min(by_entropy, by_surprise) * (params.obvious_moves_time_factor - 1.0)
    if tc_rec > 1e-20:
        # Time already thought (pondering, reused tree) counts, softly, toward this move.
        needed_factor = (tc_rec - time_carried_over) / tc_rec
        softplus = math.log1p(math.exp(min(needed_factor * CARRIED_OVER_SOFTPLUS_SHARPNESS, 700.0)))
        tc_rec *= min(1.0, softplus / CARRIED_OVER_SOFTPLUS_SHARPNESS)
    tc_rec = min(tc.round_up_time_limit_if_needed(params.lag_buffer, time_used, tc_rec), tc_max)
    if futile_stop:
        tc_rec = time_used * (1.0 - 1e-10)
        tc_rec = min(tc.round_up_time_limit_if_needed(params.lag_buffer, time_used, tc_rec), tc_max)
    tc_rec = max(tc_rec, tc_min)
    return min(tc_rec * search_factor, tc_max)


def upper_bound_visits_left(root_visits: int, time_used: float, planned_limit: float, time_carried_over: float,
                            num_threads: int) -> float:
    """How many more visits fit before planned_limit at the rate seen so far (KataGo's estimate)."""
    if root_visits <= 1:
        return 1e30
    thought = time_carried_over + time_used
    if thought < MIN_SECONDS_TO_TRUST_VISIT_RATE:
        return 1e30
    return math.ceil((planned_limit - time_used) / thought * root_visits + num_threads - 1)
