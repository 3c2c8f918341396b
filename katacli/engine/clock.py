"""Each player's clock as the GTP controller describes it (time_settings, kgs-/kata-time_settings, time_left).

The fields are KataGo's TimeControls: Fischer time (main time plus an increment,
optionally capped) or generalized byo-yomi (main time, then periods of
``per_period_time`` in which ``num_stones_per_period`` stones must be played;
Canadian overtime is one period of N stones, Japanese byo-yomi N periods of one
stone). The search decides how long to think from these; this module only
records what the controller said.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from katacli.engine.errors import GtpError

# KataGo's sentinels: above UNLIMITED_TIME_THRESHOLD a time is "no limit".
UNLIMITED_TIME_THRESHOLD = 1e20
UNLIMITED_TIME_DEFAULT = 1e30
UNLIMITED_TIME_DEFAULT_LARGE = 1e40

# With no search limit in the config at all, KataGo assumes a quick game: 1 s main
# time plus 5 periods of 5 s byo-yomi.
QUICK_GAME_MAIN_TIME = 1.0
QUICK_GAME_PERIOD_TIME = 5.0
QUICK_GAME_PERIODS = 5

TIME_SETTING_KINDS = ("none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped")
KGS_TIME_SETTING_KINDS = ("none", "absolute", "byoyomi", "canadian")


@dataclass(frozen=True)
class Clock:
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

    # ------------------------------------------------------------------ constructors
    @classmethod
    def unlimited(cls) -> "Clock":
        return cls()

    @classmethod
    def absolute(cls, main_time: float) -> "Clock":
        return cls(original_main_time=main_time, main_time_left=main_time)

    @classmethod
    def fischer(cls, main_time: float, increment: float) -> "Clock":
        return cls(original_main_time=main_time, increment=increment, main_time_left=main_time)

    @classmethod
    def fischer_capped(cls, main_time: float, increment: float, main_time_limit: float,
                       max_time_per_move: float) -> "Clock":
        if main_time_limit < main_time:
            raise GtpError("TimeControls: mainTimeLimit is smaller than mainTime")
        return cls(original_main_time=main_time, increment=increment, main_time_limit=main_time_limit,
                   max_time_per_move=max_time_per_move, main_time_left=main_time)

    @classmethod
    def byo_yomi(cls, main_time: float, per_period_time: float, num_periods: int,
                 num_stones_per_period: int) -> "Clock":
        """Canadian (1 period of N stones) or Japanese (N periods of 1 stone) overtime."""
        return cls(original_main_time=main_time, original_num_periods=num_periods,
                   num_stones_per_period=num_stones_per_period, per_period_time=per_period_time,
                   main_time_left=main_time, num_periods_left_including_current=num_periods)

    @classmethod
    def quick_game(cls) -> "Clock":
        return cls.byo_yomi(QUICK_GAME_MAIN_TIME, QUICK_GAME_PERIOD_TIME, QUICK_GAME_PERIODS, 1)

    @classmethod
    def canadian_or_absolute(cls, main_time: float, period_time: float, stones: int) -> "Clock":
        """GTP time_settings semantics: 0 stones with positive period time means no limit at all."""
        if stones == 0 and period_time > 0.0:
            return cls.unlimited()
        if stones == 0:
            return cls.absolute(main_time)
        return cls.byo_yomi(main_time, period_time, 1, stones)

    # ------------------------------------------------------------------ updates
    def with_time_left(self, time: float, stones: int) -> "Clock":
        """GTP ``time_left``: ``stones`` 0 means main time; otherwise overtime.

        KGS sends the number of periods left instead of stones for Japanese
        byo-yomi, so with several one-stone periods the number means periods.
        """
        if stones > 0 and self.original_num_periods <= 0:
            raise GtpError(
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
                       num_stones_left_in_period=min(stones, self.num_stones_per_period),
                       time_left_in_period=time)

    def is_effectively_unlimited(self) -> bool:
        main_unlimited = self.main_time_left > UNLIMITED_TIME_THRESHOLD or (
            self.in_overtime and self.time_left_in_period > UNLIMITED_TIME_THRESHOLD)
        return main_unlimited and self.max_time_per_move > UNLIMITED_TIME_THRESHOLD

    def describe(self) -> str:
        """The fields that are set, KataGo's kata-debug-print-tc style (without the time recommendation)."""
        parts = [f"originalMainTime {self.original_main_time:g}"]
        if self.increment != 0:
            parts.append(f"increment {self.increment:g}")
        if self.main_time_limit < UNLIMITED_TIME_THRESHOLD:
            parts.append(f"mainTimeLimit {self.main_time_limit:g}")
        if self.max_time_per_move < UNLIMITED_TIME_THRESHOLD:
            parts.append(f"maxTimePerMove {self.max_time_per_move:g}")
        if self.original_num_periods != 0:
            parts.append(f"originalNumPeriods {self.original_num_periods}")
        if self.num_stones_per_period != 0:
            parts.append(f"numStonesPerPeriod {self.num_stones_per_period}")
        if self.per_period_time != 0:
            parts.append(f"perPeriodTime {self.per_period_time:g}")
        parts.append(f"mainTimeLeft {self.main_time_left:g}")
        parts.append(f"inOvertime {int(self.in_overtime)}")
        if self.num_periods_left_including_current != 0:
            parts.append(f"numPeriodsLeftIncludingCurrent {self.num_periods_left_including_current}")
        if self.num_stones_left_in_period != 0:
            parts.append(f"numStonesLeftInPeriod {self.num_stones_left_in_period}")
        if self.time_left_in_period != 0:
            parts.append(f"timeLeftInPeriod {self.time_left_in_period:g}")
        return " ".join(parts)
