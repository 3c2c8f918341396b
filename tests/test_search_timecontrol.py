"""Time controls (KataGo's per-move budgets and GTP time commands), resignation, and utility shapes."""
import math
import random

import numpy as np
import pytest

from katacli._core.game_state import GameState
from katacli._core import search_values

from katacli.gtp.resign import ResignSettings, ResignTracker, initial_black_advantage
from katacli.search import (
    SearchParams, Searcher, TimeControls, TimeSettingsError, choose_index_with_temperature, parse_kgs_time_settings,
    parse_time_settings,
)
from support.fakes import MaterialEvaluator

BLACK, WHITE = 1, 2


def close(a, b, tol=1e-6):
    return abs(a - b) <= tol * max(1.0, abs(b))


# ---- per-move budgets -------------------------------------------------------------------------
def test_absolute_time_spreads_over_the_expected_game():
    tc = TimeControls.absolute(600.0)
    min_t, rec, max_t = tc.get_time(361, 0, 0.0)
    turns_absolute = 0.5 * (0.95 * 361 + 20)
    turns_increment = 0.5 * (0.75 * 361 + 15)
    assert close(rec, min(600 / turns_increment, 600 / turns_absolute))
    assert close(max_t, 120.0)
    assert min_t == 0.0


def test_fischer_adds_the_increment():
    tc = TimeControls.fischer(60.0, 5.0)
    _, rec, max_t = tc.get_time(81, 10, 0.0)
    turns_absolute = 0.5 * (0.95 * 81 + 20 - 10)
    turns_increment = 0.5 * (0.75 * 81 + 15 - 10)
    excess = 60.0 - 5.0
    assert close(rec, 5.0 + min(excess / turns_increment, excess / turns_absolute + 10.0))
    assert close(max_t, min(60.0, 5.0 + excess / 5.0))


def test_byoyomi_overtime_uses_the_period():
    tc = parse_kgs_time_settings(["byoyomi", "0", "30", "5"]).with_time_left(30.0, 5)
    assert tc.in_overtime and tc.num_periods_left_including_current == 5
    assert tc.get_time(361, 100, 0.0) == (30.0, 30.0, 30.0)


def test_canadian_overtime_divides_the_period():
    tc = parse_time_settings(["0", "300", "25"]).with_time_left(300.0, 25)
    min_t, rec, max_t = tc.get_time(361, 100, 0.0)
    assert min_t == 0.0
    assert close(rec, 12.0)
    assert close(max_t, 300.0 / (0.75 * 25 + 0.25))


def test_lag_buffer_is_taken_off():
    tc = TimeControls.absolute(600.0)
    _, rec0, _ = tc.get_time(361, 0, 0.0)
    _, rec1, _ = tc.get_time(361, 0, 1.0)
    assert rec1 < rec0


def test_time_command_parsing():
    assert parse_time_settings(["0", "10", "0"]).is_effectively_unlimited()      # overtime, no stones: none
    assert parse_time_settings(["100", "0", "0"]) == TimeControls.absolute(100.0)
    assert parse_kgs_time_settings(["none"]).is_effectively_unlimited()
    assert parse_kgs_time_settings(["fischer", "10", "2"], kata=True) == TimeControls.fischer(10.0, 2.0)
    capped = parse_kgs_time_settings(["fischer-capped", "10", "2", "-1", "5"], kata=True)
    assert capped.max_time_per_move == 5.0
    with pytest.raises(TimeSettingsError):
        parse_kgs_time_settings(["fischer", "10", "2"])            # KGS has no Fischer
    with pytest.raises(TimeSettingsError):
        parse_time_settings(["x", "1", "1"])
    with pytest.raises(TimeSettingsError):
        TimeControls.absolute(10.0).with_time_left(5.0, 3)          # stones without overtime


def test_search_spends_about_the_recommended_time():
    tc = TimeControls.absolute(10.0)
    _, rec, _ = tc.get_time(81, 0, 0.0)
    params = SearchParams().replace(lag_buffer=0.0)
    searcher = Searcher(GameState(9), params, MaterialEvaluator(), seed=1)
    stats = searcher.run(time_controls=tc)
    assert stats.stopped_by == "time"
    assert rec * 0.8 <= stats.seconds <= rec + 0.4


class SlowMaterialEvaluator(MaterialEvaluator):
    """Each batch takes STEP_SECONDS, longer than the search's 0.1 s re-planning period."""
    STEP_SECONDS = 0.25

    def evaluate(self, requests):
        import time
        time.sleep(self.STEP_SECONDS)
        return super().evaluate(requests)


def test_a_time_limit_that_ran_out_stops_the_search_before_it_is_planned_again(monkeypatch):
    # KataGo checks the stop against the last plan, then plans again: a plan made after the limit passed
    # (where the round-up to a whole byo-yomi period can double a move) must not extend the move.
    plans = []

    def plan(self, tc, has_tc, elapsed, search_factor, max_time):
        plans.append(elapsed)
        return 0.3 if elapsed < 0.3 else 3.0   # planned again after 0.3 s: a much longer limit

    monkeypatch.setattr(Searcher, "_plan_time", plan)
    searcher = Searcher(GameState(9), SearchParams().replace(lag_buffer=0.0), SlowMaterialEvaluator(), seed=1)
    stats = searcher.run(time_controls=TimeControls.byoyomi_or_canadian(0.0, 5.0, 3, 1))
    assert stats.stopped_by == "time"
    assert stats.seconds < 1.0 and all(at < 0.3 for at in plans)


# ---- chosen move ---------------------------------------------------------------------------
def test_choose_index_with_temperature():
    rng = random.Random(1)
    assert choose_index_with_temperature(rng, [1.0, 5.0, 3.0], 0.0) == 1
    counts = [0, 0]
    for _ in range(4000):
        counts[choose_index_with_temperature(rng, [1.0, 3.0], 1.0)] += 1
    assert 0.2 < counts[0] / 4000 < 0.3
    # Low temperature sharpens toward the best.
    sharp = sum(choose_index_with_temperature(rng, [1.0, 3.0], 0.25) for _ in range(2000))
    assert sharp / 2000 > 0.95


# ---- resignation ----------------------------------------------------------------------------
def test_resign_after_consecutive_losing_turns():
    tracker = ResignTracker(ResignSettings(True, -0.9, 3, -1e10, 0.0))
    kwargs = dict(player=BLACK, lead=30.0, board_area=361, num_moves=150, initial_black_advantage_points=0.0)
    tracker.record(0.95)
    tracker.record(0.97)
    assert not tracker.should_resign(**kwargs)
    tracker.record(0.99)
    assert tracker.should_resign(**kwargs)
    assert not tracker.should_resign(**{**kwargs, "player": WHITE, "lead": -30.0})   # White is winning
    tracker.record(0.5)
    assert not tracker.should_resign(**kwargs)


def test_resign_respects_score_difference_and_handicap():
    tracker = ResignTracker(ResignSettings(True, -0.9, 1, 10.0, 0.0))
    tracker.record(-0.99)    # White losing
    assert not tracker.should_resign(player=WHITE, lead=-5.0, board_area=361, num_moves=200,
                                     initial_black_advantage_points=0.0)
    assert tracker.should_resign(player=WHITE, lead=-15.0, board_area=361, num_moves=200,
                                 initial_black_advantage_points=0.0)
    # Handicap 4: White keeps playing early on even far behind.
    advantage = initial_black_advantage(4, 0.5, 0, 0)
    assert advantage > 40
    assert not tracker.should_resign(player=WHITE, lead=-15.0, board_area=361, num_moves=30,
                                     initial_black_advantage_points=advantage)
    assert not ResignTracker().should_resign(player=WHITE, lead=-99.0, board_area=361, num_moves=300,
                                             initial_black_advantage_points=0.0)


# ---- utility shapes ---------------------------------------------------------------------------
@pytest.mark.parametrize("mean,stdev,center,scale,area", [
    (0.0, 0.0, 0.0, 2.0, 19.0), (7.0, 0.0, 0.0, 2.0, 19.0), (7.0, 10.0, 0.0, 2.0, 19.0),
    (-20.0, 15.0, 3.0, 0.75, 9.0), (150.0, 40.0, 0.0, 2.0, 19.0),
])
def test_expected_score_value_matches_numerical_integration(mean, stdev, center, scale, area):
    def sv(s):
        return math.atan((s - center) / (scale * area)) * 2.0 / math.pi
    if stdev == 0.0:
        expected = sv(mean)
    else:
        xs = np.linspace(-6, 6, 4001)
        w = np.exp(-0.5 * xs * xs)
        expected = float((w * np.array([sv(mean + stdev * x) for x in xs])).sum() / w.sum())
    got = search_values.py_expected_white_score_value(mean, stdev, center, scale, area)
    assert abs(got - expected) < 2e-3


def test_student_t_cdf_table():
    assert search_values.py_t3_cdf(0.0) == pytest.approx(0.5, abs=1e-6)
    assert search_values.py_t3_cdf(1.0) == pytest.approx(0.80450, abs=1e-3)
    assert search_values.py_t3_cdf(-3.182) == pytest.approx(0.025, abs=1e-3)
    assert search_values.py_t3_cdf(-100.0) == 0.0 and search_values.py_t3_cdf(100.0) == 1.0
