"""Self-play's fair komi and lead estimates: the search layer's fair_komi algorithm, probed by
small noiseless self-play searches (KataGo's PlayUtils::adjustKomiToEven, computeLead)."""
from __future__ import annotations

import math
import random

from katacli._core.game_state import GameState
from katacli.game.coords import WHITE
from katacli.game.rules import round_and_clip_komi
from katacli.search.fair_komi import CachedProbe, lead_by_komi, naive_even_komi, noiseless_params
from katacli.search.params import SearchParams
from katacli.selfplay.searching import MoveSearchRequest, SelfplaySearch


def _search_probe(searcher: SelfplaySearch, state: GameState, params: SearchParams, visits: int,
                  pda: float, pda_player: int) -> CachedProbe:
    """(lead, win-loss) for White at a komi, by a noiseless search of ``visits``."""
    params = noiseless_params(params, visits)
    if pda != 0.0 and pda_player:
        # Tell the net about the coming asymmetry without changing the visits.
        params = params.replace(playout_doubling_advantage=pda,
                                playout_doubling_advantage_pla="W" if pda_player == WHITE else "B")

    def probe(komi: float) -> tuple[float, float]:
        position = state.copy()
        position.set_komi(komi)
        result = searcher.search(MoveSearchRequest(position, params))
        return result.reported_lead, result.reported_win_loss

    return CachedProbe(probe, state.x_size, state.y_size)


def adjust_komi_to_even(searcher: SelfplaySearch, state: GameState, params: SearchParams, visits: int,
                        rng: random.Random, pda: float = 0.0, pda_player: int = 0) -> None:
    """Set ``state``'s komi to a fair one, rounding to the half-point grid at random (unbiased)."""
    probe = _search_probe(searcher, state, params, visits, pda, pda_player)
    try:
        fair = naive_even_komi(probe, state.komi)
    finally:   # the probes' noiseless trees never serve a game's move (KataGo's setParams clears them)
        searcher.clear_tree()
    lower = math.floor(fair * 2.0) * 0.5
    fair = lower + 0.5 if rng.random() < (fair - lower) / 0.5 else lower
    state.set_komi(round_and_clip_komi(fair, state.x_size, state.y_size))


def compute_lead(searcher: SelfplaySearch, state: GameState, params: SearchParams, visits: int,
                 pda: float = 0.0, pda_player: int = 0) -> float:
    """Points White is ahead (komi minus the fair komi), smoothing area scoring's 2-point steps."""
    probe = _search_probe(searcher, state, params, visits, pda, pda_player)
    try:
        return lead_by_komi(probe, state)
    finally:
        searcher.clear_tree()
