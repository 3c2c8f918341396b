"""Fair komi and lead by short searches (KataGo's PlayUtils getNaiveEvenKomi, adjustKomiToEven, computeLead).

Both ask a *probe* -- any ``komi -> (lead, win_loss)`` function, White's view, usually a small
noiseless search -- at a few komi values: first shifting komi by the predicted lead a few times,
then a binary search on the win-loss sign within a small window, interpolating the final half
point. Self-play (komiAuto, estimated leads) and ``kata evalsgf -print-lead`` use them.
"""
from __future__ import annotations

import math
from typing import Callable

from katacli.game.rules import ScoringRule, round_and_clip_komi
from katacli.search.params import SearchParams

KomiProbe = Callable[[float], "tuple[float, float]"]

# Lead-following shifts before the binary search, and the shift below which it stops early.
MAX_LEAD_SHIFTS = 3
SMALL_SHIFT = 16.0
# The binary search window grows by powers of two up to 2^this points.
MAX_WINDOW_DOUBLINGS = 5
# A shift that moves the lead by more than this (or the win-loss by WRONG_WAY_WINLOSS) the wrong way is half undone.
WRONG_WAY_LEAD = 5.0
WRONG_WAY_WINLOSS = 0.1
WRONG_WAY_WINLOSS_GUARD = 0.75
# Komi steps are half points; a window this wide is one step.
HALF_POINT_WINDOW = 0.50001


def noiseless_params(params: SearchParams, visits: int) -> SearchParams:
    """Parameters for komi and lead estimation searches (KataGo's getNoiselessParams)."""
    return params.replace(
        max_visits=visits, max_playouts=visits, root_noise_enabled=False, root_policy_temperature=1.0,
        root_policy_temperature_early=1.0, root_fpu_reduction_max=params.fpu_reduction_max,
        root_fpu_loss_prop=params.fpu_loss_prop, root_desired_per_child_visits_coeff=0.0,
        root_num_symmetries_to_sample=1, search_factor_after_one_pass=1.0, search_factor_after_two_pass=1.0,
    )


class CachedProbe:
    """A probe asked at most once per komi on the half-point grid of an x_size by y_size board."""

    def __init__(self, probe: KomiProbe, x_size: int, y_size: int):
        self.probe, self.x_size, self.y_size = probe, x_size, y_size
        self.cache: dict[float, tuple[float, float]] = {}

    def __call__(self, komi: float) -> tuple[float, float]:
        komi = round_and_clip_komi(komi, self.x_size, self.y_size)
        if komi not in self.cache:
            self.cache[komi] = self.probe(komi)
        return self.cache[komi]


def naive_even_komi(probe: CachedProbe, komi: float) -> float:
    """A fair komi (not yet rounded) starting from ``komi``: KataGo's getNaiveEvenKomiHelper."""
    x, y = probe.x_size, probe.y_size
    last_shift = last_win_loss = last_lead = 0.0
    for i in range(MAX_LEAD_SHIFTS):
        lead, win_loss = probe(komi)
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
        return probe(komi + delta)[1]

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
    while upper - lower > HALF_POINT_WINDOW:
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


def lead_by_komi(probe: CachedProbe, state) -> float:
    """Points White is ahead in ``state`` (its komi minus the fair komi): KataGo's computeLead.

    Under area scoring without a button the score moves in 2-point steps; the half-point parity
    oscillation is averaged out there.
    """
    komi = state.komi
    rules = state.rules_tuple
    scoring, has_button = rules.scoring_rule, rules.has_button
    coarse_scoring = scoring == ScoringRule.AREA and not has_button
    naive = naive_even_komi(probe, komi)
    if not coarse_scoring or naive == round(naive):
        return komi - naive
    lower = math.floor(naive * 2.0) * 0.5
    upper = lower + 0.5
    lower_wl = 0.5 * (probe(upper)[1] + probe(lower - 0.5)[1])
    upper_wl = 0.5 * (probe(upper + 0.5)[1] + probe(lower)[1])
    if lower_wl >= upper_wl - 1e-30:
        result = 0.5 * (lower + upper)
    else:
        result = lower + (upper - lower) * (0 - lower_wl) / (upper_wl - lower_wl)
        result = min(max(result, lower - 0.5), upper + 0.5)
    return komi - result
