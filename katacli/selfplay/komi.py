"""Fair komi and lead estimation by short searches (KataGo's PlayUtils::adjustKomiToEven, computeLead).

Both search the position at a few komi values with a small, noiseless search: first
shifting komi by the predicted lead a few times, then a binary search on the
win-loss sign within a small window, interpolating the final half point.
"""
from __future__ import annotations

import math
import random

from cython_ext.history import GameState
from katacli.game.coords import WHITE
from katacli.game.rules import ScoringRule
from katacli.search.params import SearchParams
from katacli.selfplay.game_init import round_and_clip_komi
from katacli.selfplay.searching import MoveSearchRequest, SelfplaySearch, noiseless_params

# Lead-following shifts before the binary search, and the shift below which it stops early.
MAX_LEAD_SHIFTS = 3
SMALL_SHIFT = 16.0
# The binary search window grows by powers of two up to 2^this points.
MAX_WINDOW_DOUBLINGS = 5
# A shift that moves the lead by more than this (or the win-loss by WRONG_WAY_WINLOSS) the wrong way is half undone.
WRONG_WAY_LEAD = 5.0
WRONG_WAY_WINLOSS = 0.1
WRONG_WAY_WINLOSS_GUARD = 0.75


class KomiEstimator:
    """Evaluates (lead, win-loss) for White at given komis, caching per komi."""

    def __init__(self, searcher: SelfplaySearch, state: GameState, params: SearchParams, visits: int,
                 pda: float = 0.0, pda_player: int = 0):
        self.searcher = searcher
        self.state = state
        self.params = noiseless_params(params, visits)
        if pda != 0.0 and pda_player:
            # Tell the net about the coming asymmetry without changing the visits.
            self.params = self.params.replace(playout_doubling_advantage=pda,
                                              playout_doubling_advantage_pla="W" if pda_player == WHITE else "B")
        self.cache: dict[float, tuple[float, float]] = {}

    def evaluate(self, komi: float) -> tuple[float, float]:
        komi = round_and_clip_komi(komi, self.state.x_size, self.state.y_size)
        if komi not in self.cache:
            probe = self.state.copy()
            probe.set_komi(komi)
            result = self.searcher.search(MoveSearchRequest(probe, self.params))
            self.cache[komi] = (result.reported_lead, result.reported_win_loss)
        return self.cache[komi]

    def naive_even_komi(self) -> float:
        """A fair komi (not yet rounded) for the position, KataGo's getNaiveEvenKomiHelper."""
        x, y = self.state.x_size, self.state.y_size
        komi = self.state.komi
        last_shift = last_win_loss = last_lead = 0.0
        for i in range(MAX_LEAD_SHIFTS):
            lead, win_loss = self.evaluate(komi)
            if i > 0 and ((last_lead > 0 and lead > last_lead + WRONG_WAY_LEAD and win_loss < WRONG_WAY_WINLOSS_GUARD)
                          or (last_lead < 0 and lead < last_lead - WRONG_WAY_LEAD and win_loss > -WRONG_WAY_WINLOSS_GUARD)
                          or (last_win_loss > 0 and win_loss > last_win_loss + WRONG_WAY_WINLOSS)
                          or (last_win_loss < 0 and win_loss < last_win_loss - WRONG_WAY_WINLOSS)):
                komi = round_and_clip_komi(komi - last_shift * 0.5, x, y)
                break
            last_lead, last_win_loss = lead, win_loss
            shift = -lead
            if i > 0 and abs(shift) > abs(last_shift):
                shift = math.copysign(abs(last_shift), shift)
            last_shift = shift
            if (shift > 0 and win_loss > 0) or (shift < 0 and lead < 0):
                break
            komi = round_and_clip_komi(komi + shift, x, y)
            if abs(shift) < SMALL_SHIFT:
                break

        def win_loss_at(delta: float) -> float:
            return self.evaluate(komi + delta)[1]

        zero = win_loss_at(0.0)
        if zero < 0:
            lower, lower_wl = 0.0, zero
            for i in range(MAX_WINDOW_DOUBLINGS + 1):
                upper = float(round(2.0 ** i))
                upper_wl = win_loss_at(upper)
                if upper_wl >= 0:
                    break
        else:
            upper, upper_wl = 0.0, zero
            for i in range(MAX_WINDOW_DOUBLINGS + 1):
                lower = -float(round(2.0 ** i))
                lower_wl = win_loss_at(lower)
                if lower_wl <= 0:
                    break
        while upper - lower > 0.50001:
            mid = 0.5 * (lower + upper)
            mid_wl = win_loss_at(mid)
            if mid_wl < 0:
                lower, lower_wl = mid, mid_wl
            else:
                upper, upper_wl = mid, mid_wl
        if lower_wl >= upper_wl - 1e-30:
            delta = 0.5 * (lower + upper)
        elif upper_wl <= 0:
            delta = upper
        elif lower_wl >= 0:
            delta = lower
        else:
            delta = lower + (upper - lower) * (0 - lower_wl) / (upper_wl - lower_wl)
        return komi + delta


def adjust_komi_to_even(searcher: SelfplaySearch, state: GameState, params: SearchParams, visits: int,
                        rng: random.Random, pda: float = 0.0, pda_player: int = 0) -> None:
    """Set ``state``'s komi to a fair one, rounding to the half-point grid at random (unbiased)."""
    fair = KomiEstimator(searcher, state, params, visits, pda, pda_player).naive_even_komi()
    lower = math.floor(fair * 2.0) * 0.5
    fair = lower + 0.5 if rng.random() < (fair - lower) / 0.5 else lower
    state.set_komi(round_and_clip_komi(fair, state.x_size, state.y_size))


def compute_lead(searcher: SelfplaySearch, state: GameState, params: SearchParams, visits: int,
                 pda: float = 0.0, pda_player: int = 0) -> float:
    """Points White is ahead (komi minus the fair komi), smoothing area scoring's 2-point steps."""
    estimator = KomiEstimator(searcher, state, params, visits, pda, pda_player)
    komi = state.komi
    naive = estimator.naive_even_komi()
    rules = state.rules_tuple
    coarse = rules[1] == ScoringRule.AREA and not rules[4]
    if not coarse or naive == round(naive):
        return komi - naive
    lower = math.floor(naive * 2.0) * 0.5
    upper = lower + 0.5
    # Average the oscillation of area scoring's parity.
    lower_wl = 0.5 * (estimator.evaluate(upper)[1] + estimator.evaluate(lower - 0.5)[1])
    upper_wl = 0.5 * (estimator.evaluate(upper + 0.5)[1] + estimator.evaluate(lower)[1])
    if lower_wl >= upper_wl - 1e-30:
        result = 0.5 * (lower + upper)
    else:
        result = lower + (upper - lower) * (0 - lower_wl) / (upper_wl - lower_wl)
        result = min(max(result, lower - 0.5), upper + 0.5)
    return komi - result
