"""Each player's clock as the GTP controller describes it (time_settings, kgs-/kata-time_settings, time_left).

The clock type is the search's :class:`katacli.search.timecontrol.TimeControls`
(KataGo's fields: Fischer time with an optional cap, or generalized byo-yomi
where Canadian overtime is one period of N stones and Japanese byo-yomi N
periods of one stone). This module adds what only GTP needs: its argument
conventions and the kata-debug-print-tc description.
"""
from __future__ import annotations

from katacli.search.timecontrol import UNLIMITED_TIME_THRESHOLD, TimeControls

# With no search limit in the config at all, KataGo assumes a quick game: 1 s main
# time plus 5 periods of 5 s byo-yomi.
QUICK_GAME_MAIN_TIME = 1.0
QUICK_GAME_PERIOD_TIME = 5.0
QUICK_GAME_PERIODS = 5

TIME_SETTING_KINDS = ("none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped")
# kata-debug-print-tc's "just before the limit": this many seconds short of it (KataGo's).
ALMOST_AT_LIMIT = 0.000001


def quick_game() -> TimeControls:
    return TimeControls.byoyomi_or_canadian(QUICK_GAME_MAIN_TIME, QUICK_GAME_PERIOD_TIME, QUICK_GAME_PERIODS, 1)


def canadian_or_absolute(main_time: float, period_time: float, stones: int) -> TimeControls:
    """GTP time_settings semantics: 0 stones with a positive period time means no limit at all."""
    if stones == 0 and period_time > 0.0:
        return TimeControls.unlimited()
    if stones == 0:
        return TimeControls.absolute(main_time)
    return TimeControls.byoyomi_or_canadian(main_time, period_time, 1, stones)


def describe(tc: TimeControls, board_area: int, num_stones_on_board: int, lag_buffer: float) -> str:
    """kata-debug-print-tc's line (KataGo's toDebugString): the fields that are set, then the next move's
    min / recommended / max seconds and the recommendation rounded up for byo-yomi at the search's start,
    just before the limit and just before the rounded limit."""
    parts = [f"originalMainTime {tc.original_main_time:g}"]
    if tc.increment != 0:
        parts.append(f"increment {tc.increment:g}")
    if tc.main_time_limit < UNLIMITED_TIME_THRESHOLD:
        parts.append(f"mainTimeLimit {tc.main_time_limit:g}")
    if tc.max_time_per_move < UNLIMITED_TIME_THRESHOLD:
        parts.append(f"maxTimePerMove {tc.max_time_per_move:g}")
    if tc.original_num_periods != 0:
        parts.append(f"originalNumPeriods {tc.original_num_periods}")
    if tc.num_stones_per_period != 0:
        parts.append(f"numStonesPerPeriod {tc.num_stones_per_period}")
    if tc.per_period_time != 0:
        parts.append(f"perPeriodTime {tc.per_period_time:g}")
    parts.append(f"mainTimeLeft {tc.main_time_left:g}")
    parts.append(f"inOvertime {int(tc.in_overtime)}")
    if tc.num_periods_left_including_current != 0:
        parts.append(f"numPeriodsLeftIncludingCurrent {tc.num_periods_left_including_current}")
    if tc.num_stones_left_in_period != 0:
        parts.append(f"numStonesLeftInPeriod {tc.num_stones_left_in_period}")
    if tc.time_left_in_period != 0:
        parts.append(f"timeLeftInPeriod {tc.time_left_in_period:g}")
    min_time, rec_time, max_time = tc.get_time(board_area, num_stones_on_board, lag_buffer)
    parts.append(f"minRecMax {min_time:g} {rec_time:g} {max_time:g}")
    rrec0 = tc.round_up_time_limit_if_needed(lag_buffer, 0.0, rec_time)
    rreclimit = tc.round_up_time_limit_if_needed(lag_buffer, rec_time - ALMOST_AT_LIMIT, rec_time)
    rreclimit2 = tc.round_up_time_limit_if_needed(lag_buffer, rreclimit - ALMOST_AT_LIMIT, rreclimit)
    parts.append(f"rrec0 {rrec0:g} rreclimit {rreclimit:g} rreclimit2 {rreclimit2:g}")
    return " ".join(parts)
