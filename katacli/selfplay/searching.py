"""What self-play asks of a search, per-move visit limits, and the targets taken from a search.

A self-play search backend implements :class:`SelfplaySearch`: given a position and
the search parameters for this move, it returns the move to play and what KataGo
records for training (visit distribution after forced-playout pruning, root values,
per-child values, the raw network's view). :func:`search_limits` decides how hard
to search each move (KataGo's getSearchLimitsThisMove: playout cap randomization,
visit reduction in decided games, asymmetric playouts); :func:`extract_targets`
turns a result into :class:`~katacli.selfplay.records.SearchTargets`.

:class:`RawNetSearcher` is a stand-in backend without tree search (one network
evaluation per move); tests and benchmarks of the data pipeline use it.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Optional, Protocol

import numpy as np

from katacli._core.game_state import GameState
from katacli.game.coords import WHITE
from katacli.search.params import SearchParams
from katacli.selfplay.raw_policy import NetEvaluator, RawEval, choose_with_temperature, raw_eval_of
from katacli.selfplay.records import Move, QValue, SearchTargets, ValueTargets
from katacli.selfplay.rows import c_round, scale_policy_target
from katacli.selfplay.settings import PlaySettings

# KataGo scales the policy target so its largest entry is at least this (extractPolicyTarget).
POLICY_TARGET_SCALE_MAX_TO_AT_LEAST = 10.0
# Asymmetric playouts may not leave a side fewer visits than this.
MIN_ASYMMETRIC_VISITS = 5
# Probabilities below this count as zero in the surprise and entropy sums.
MIN_PROB = 1e-100
# A hint move's search gets this many times the visits (KataGo's).
HINT_VISITS_FACTOR = 4.0
MAX_HINT_VISITS = 1 << 50
# For this many turns after a hint (or the start of a hint fork), cheap searches are half as likely.
HINT_CHEAP_SEARCH_TURNS = 6
HINT_CHEAP_SEARCH_FACTOR = 0.5


@dataclass
class MoveSearchRequest:
    state: GameState           # the position, its player to move searches; the backend must not modify it
    params: SearchParams       # this move's parameters (visits, root noise, playout doubling already set)
    reuse_tree: bool = False   # True: the previous search's tree may be kept (cheap, unrecorded searches)
    # True: first search a few visits to centre the dynamic score utility (KataGo does this for
    # moves whose visits were altered and whose tree was cleared).
    center_score: bool = False
    # A root move to study (a hint position's first search): searched almost as often as the best.
    has_root_hint: bool = False
    root_hint_move: Move = None


@dataclass
class MoveSearchResult:
    """One finished search. Values are White's view; moves are (x, y) or None for pass."""

    move: Move                                  # the move to play (temperature applied, LCB not used)
    root_visits: int
    play_selection_values: dict                 # move -> weight: visits after pruning, LCB applied
    value: ValueTargets                         # the root node's averaged values (KataGo's getNodeValues)
    reported_win_loss: float                    # the root's values (KataGo's getRootValues), for
    reported_lead: float                        # resignation, visit reduction and komi estimation
    root_policy: dict                           # move -> prior used at the root (noise/temperature included)
    raw: RawEval                                # the raw network on the root position
    children: list[QValue] = field(default_factory=list)


class SelfplaySearch(Protocol):
    """A search backend for self-play games. One instance per game thread; not shared."""

    def search(self, request: MoveSearchRequest) -> MoveSearchResult: ...

    def set_net(self, net: NetEvaluator) -> None:
        """Switch to another network (a newer model) for later searches."""

    def clear_tree(self) -> None:
        """Forget the search tree: the next search starts fresh (after komi or lead probes, as KataGo's)."""


@dataclass
class SearchLimits:
    """KataGo's SearchLimitsThisMove."""

    max_visits: int
    remove_root_noise: bool
    reuse_tree: bool
    target_weight: float
    is_cheap_search: bool
    visits_altered: bool = False    # cheap, reduced or asymmetric (KataGo's doAlterVisitsPlayouts)
    playout_doubling_advantage: float = 0.0
    pda_player: int = 0
    is_hint_search: bool = False    # the hint position's own turn: the hinted move is studied

    @property
    def center_score(self) -> bool:
        return self.visits_altered and not self.reuse_tree


def search_limits(params: SearchParams, play: PlaySettings, pla: int, rng: random.Random,
                  history_win_loss: list[float], pda: float, pda_player: int,
                  hint_now: bool = False, turns_since_hint: Optional[int] = None) -> SearchLimits:
    """How to search this move: cheap or full, reduced visits when decided, asymmetric playouts.

    hint_now: this is a hint position's turn (four times the visits, never cheap or reduced);
    turns_since_hint: moves since a hint or the start of a hint fork (None: no hint in this game)."""
    visits = params.max_visits
    target_weight = 1.0
    is_cheap = altered = False
    remove_noise = False
    reuse_tree = False
    cheap_prob = play.cheap_search_prob
    if hint_now:
        altered = True
        visits = math.ceil(min(MAX_HINT_VISITS, visits * HINT_VISITS_FACTOR))
    if turns_since_hint is not None and turns_since_hint < HINT_CHEAP_SEARCH_TURNS:
        cheap_prob *= HINT_CHEAP_SEARCH_FACTOR
    if not hint_now and cheap_prob > 0.0 and rng.random() < cheap_prob:
        is_cheap = altered = True
        visits = min(visits, play.cheap_search_visits)
        target_weight *= play.cheap_search_target_weight
        if play.cheap_search_target_weight <= 0.0:
            # Not recorded: keep the tree and play the plain search's move.
            reuse_tree = True
            remove_noise = True
    elif not hint_now and play.reduce_visits:
        lookback = play.reduce_visits_threshold_lookback
        if len(history_win_loss) >= lookback:
            recent = history_win_loss[len(history_win_loss) - lookback:]
            most_extreme = min(1.0, max(min(recent, default=1e20), -max(recent, default=-1e20)))
            through = most_extreme - play.reduce_visits_threshold
            if through > 0:
                prop = (through / (1.0 - play.reduce_visits_threshold)) ** 2
                altered = True
                visits = c_round(visits + prop * (play.reduced_visits_min - visits))
                visits = max(visits, play.reduced_visits_min)
                target_weight = target_weight + prop * (play.reduced_visits_weight - target_weight)
    limits = SearchLimits(visits, remove_noise, reuse_tree, target_weight, is_cheap, altered, is_hint_search=hint_now)
    if pda != 0.0 and pda_player:
        factor = 2.0 ** pda
        factor = 2.0 * (factor / (factor + 1.0)) if pla == pda_player else 2.0 * (1.0 / (factor + 1.0))
        # KataGo stops when this leaves fewer than MIN_ASYMMETRIC_VISITS (rare draws of a large
        # maxAsymmetricRatio); the weaker side gets the minimum instead.
        limits.max_visits = max(c_round(limits.max_visits * factor), MIN_ASYMMETRIC_VISITS)
        limits.reuse_tree = False  # asymmetric searches always start afresh
        limits.visits_altered = True
        limits.playout_doubling_advantage = pda
        limits.pda_player = pda_player
    return limits


def params_for_move(params: SearchParams, limits: SearchLimits) -> SearchParams:
    """The search parameters for one move under its limits."""
    changes: dict = dict(max_visits=limits.max_visits, max_playouts=limits.max_visits)
    if limits.remove_root_noise:
        changes.update(root_noise_enabled=False, root_policy_temperature=1.0, root_policy_temperature_early=1.0,
                       root_fpu_loss_prop=params.fpu_loss_prop, root_fpu_reduction_max=params.fpu_reduction_max,
                       root_desired_per_child_visits_coeff=0.0, root_num_symmetries_to_sample=1)
    if limits.pda_player:
        changes.update(playout_doubling_advantage=limits.playout_doubling_advantage,
                       playout_doubling_advantage_pla="W" if limits.pda_player == WHITE else "B")
    return params.replace(**changes)



def surprise_and_entropies(selection: dict, root_policy: dict) -> tuple[float, float]:
    """(policy surprise = KL(search target || root policy), search entropy)."""
    total = sum(selection.values())
    surprise = entropy = 0.0
    if total <= 0:
        return 0.0, 0.0
    for move, value in selection.items():
        target = value / total
        if target > MIN_PROB:
            log_target = math.log(target)
            surprise += target * (log_target - math.log(max(root_policy.get(move, 0.0), MIN_PROB)))
            entropy -= target * log_target
    return max(surprise, 0.0), max(entropy, 0.0)


def extract_targets(result: MoveSearchResult) -> SearchTargets:
    """KataGo's extractSearchTargetsThisTurn."""
    values = dict(result.play_selection_values)
    largest = max(values.values(), default=0.0)
    if 0.0 < largest < POLICY_TARGET_SCALE_MAX_TO_AT_LEAST:
        values = {m: v * POLICY_TARGET_SCALE_MAX_TO_AT_LEAST / largest for m, v in values.items()}
    surprise, search_entropy = surprise_and_entropies(result.play_selection_values, result.root_policy)
    root_probs = np.array([p for p in result.root_policy.values() if p > MIN_PROB])
    raw = result.raw
    return SearchTargets(
        policy_target=scale_policy_target(values),
        unreduced_visits=result.root_visits,
        value=ValueTargets(result.value.win, result.value.loss, result.value.no_result, result.value.score),
        q_values=list(result.children),
        raw_white_win_loss=raw.white_win - raw.white_loss,
        raw_white_score_mean=raw.white_score_mean,
        raw_policy_entropy=raw.policy.entropy(),
        raw_white_win=raw.white_win,
        raw_white_loss=raw.white_loss,
        raw_white_no_result=raw.no_result,
        policy_surprise=surprise,
        policy_entropy=float((root_probs * -np.log(root_probs)).sum()),   # (+0.0 for a lone move, as KataGo)
        search_entropy=search_entropy,
    )


class RawNetSearcher:
    """Stand-in backend without tree search: the move is drawn from the raw policy.

    The "visits" are the policy spread over maxVisits, the values the network's own.
    It exercises the whole self-play pipeline at network speed (tests, benchmarks).
    """

    def __init__(self, net: NetEvaluator, rng: Optional[random.Random] = None):
        self.net = net
        self.rng = rng or random.Random()

    def set_net(self, net: NetEvaluator) -> None:
        self.net = net

    def clear_tree(self) -> None:
        pass   # no tree: every move is the bare network's

    def search(self, request: MoveSearchRequest) -> MoveSearchResult:
        state, params = request.state, request.params
        output = self.net.evaluate(state, draw_equivalent_wins_for_white=params.draw_equivalent_wins_for_white)
        policy = self.net.policy(state, output)
        idx = choose_with_temperature(self.rng, policy.probs, params.chosen_move_temperature)
        visits = max(1, params.max_visits)
        selection = {m: float(p) * visits for m, p in zip(policy.moves, policy.probs) if p > 0}
        value = ValueTargets(output.white_win, output.white_loss, output.no_result, output.white_score_mean)
        return MoveSearchResult(
            move=policy.moves[idx], root_visits=visits, play_selection_values=selection, value=value,
            reported_win_loss=output.white_win - output.white_loss, reported_lead=output.white_lead,
            root_policy=dict(zip(policy.moves, policy.probs.tolist())), raw=raw_eval_of(state, output, self.net),
        )
