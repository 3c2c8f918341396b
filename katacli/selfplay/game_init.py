"""How each self-play game begins: rules, board size, komi, handicap, asymmetric playouts, forks.

Follows KataGo's GameInitializer (play.cpp) and PlayUtils' komi helpers: rules are
drawn from the configured lists, the board size by the bSizeRelProbs weights, komi
around komiMean (or a fair komi when komiAuto) with occasional wide spreads, and a
share of games get handicap stones or unequal visits for the two sides. Games may
instead start from a fork of an earlier game (:class:`ForkStore`), or from a start or
hint position (:mod:`katacli.selfplay.position_pools`): its moves are replayed under the
game's rules, komi is drawn around komiMean without handicap, and a hint that survives
the replay makes the first search study the hinted move.
"""
from __future__ import annotations

import math
import random
import threading
from dataclasses import dataclass, replace
from typing import Optional

from katacli._core.game_state import GameState
from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import Rules, ScoringRule, round_and_clip_komi
from katacli.search.params import SearchParams
from katacli.selfplay.position_pools import PositionPools
from katacli.selfplay.settings import GameSetupSettings, PlaySettings
from katacli.selfplay.start_positions import PositionSample

# Komi noise is drawn from a normal distribution cut off at this many standard deviations.
KOMI_NOISE_TRUNCATION = 3.0
# Komi spreads are given for 19x19 and scaled by sqrt(area) / this.
KOMI_STDEV_REFERENCE_EDGE = 19.0
# Seki fork positions kept at most; beyond this a random old one is replaced.
MAX_SEKI_FORKS = 1000
# Most extra black stones by sqrt(board area): (largest sqrt area, stones) -- KataGo's table.
_DEFAULT_MAX_EXTRA_BLACK = ((10.00001, 0), (14.00001, 1), (16.00001, 2), (17.00001, 3), (18.00001, 4))
_LARGE_BOARD_MAX_EXTRA_BLACK = 5


def gaussian_truncated(rng: random.Random, bound: float) -> float:
    while True:
        d = rng.gauss(0.0, 1.0)
        if -bound <= d <= bound:
            return d


def default_max_extra_black(sqrt_board_area: float) -> int:
    for limit, stones in _DEFAULT_MAX_EXTRA_BLACK:
        if sqrt_board_area <= limit:
            return stones
    return _LARGE_BOARD_MAX_EXTRA_BLACK


@dataclass
class KomiPlan:
    """KataGo's ExtraBlackAndKomi: what a game's komi is built from, kept for later re-noising."""

    extra_black: int
    komi_mean: float
    komi_stdev: float
    allow_integer: bool
    make_game_fair: bool = False
    make_game_fair_for_empty_board: bool = False
    interp_zero: bool = False

    def set_without_noise(self, state: GameState) -> None:
        state.set_komi(round_and_clip_komi(self.komi_mean, state.x_size, state.y_size))

    def set_with_noise(self, state: GameState, rng: random.Random) -> None:
        komi = self.komi_mean
        if self.komi_stdev > 0:
            komi += self.komi_stdev * gaussian_truncated(rng, KOMI_NOISE_TRUNCATION)
        if self.interp_zero:
            komi *= rng.random()
        # To the half-point grid, rounding up with the probability of the distance (unbiased).
        lower, upper = math.floor(komi * 2.0) / 2.0, math.ceil(komi * 2.0) / 2.0
        if upper > lower:
            komi = upper if rng.random() < (komi - lower) / (upper - lower) else lower
        komi = round_and_clip_komi(komi, state.x_size, state.y_size)
        if not self.allow_integer and komi == int(komi):
            komi += -0.5 if rng.random() < 0.5 else 0.5
        state.set_komi(komi)


@dataclass
class ForkPosition:
    """A position to start a new game from (a fork of a finished game)."""

    state: GameState
    is_seki_fork: bool
    training_weight: float
    is_hint_fork: bool = False       # the hinted move played where the game played another
    initial_turn_number: int = 0


class ForkStore:
    """Fork positions shared by all game threads (KataGo's ForkData)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._forks: list[ForkPosition] = []
        self._seki_forks: list[ForkPosition] = []

    def add(self, fork: ForkPosition) -> None:
        with self._lock:
            self._forks.append(fork)

    def add_seki(self, fork: ForkPosition, rng: random.Random) -> None:
        with self._lock:
            if len(self._seki_forks) >= MAX_SEKI_FORKS:
                self._seki_forks[rng.randrange(len(self._seki_forks))] = fork
            else:
                self._seki_forks.append(fork)

    @staticmethod
    def _take(items: list, rng: random.Random):
        if not items:
            return None
        i = rng.randrange(len(items))
        items[i], items[-1] = items[-1], items[i]
        return items.pop()

    def take(self, rng: random.Random) -> Optional[ForkPosition]:
        with self._lock:
            return self._take(self._forks, rng)

    def take_seki(self, rng: random.Random) -> Optional[ForkPosition]:
        with self._lock:
            return self._take(self._seki_forks, rng)

    def __len__(self) -> int:
        with self._lock:
            return len(self._forks) + len(self._seki_forks)


@dataclass
class GameStart:
    """Everything chosen before a game's first move."""

    state: GameState                 # the start position (a fork carries its earlier moves)
    komi: KomiPlan
    search_params: SearchParams      # per-game: noResultUtilityForWhite and drawEquivalentWinsForWhite jittered
    is_fork: bool = False
    is_seki_fork: bool = False
    allow_policy_init: bool = True
    training_weight: float = 1.0
    playout_doubling_advantage: float = 0.0
    pda_player: int = 0              # 0: nobody (equal visits)
    is_sgf_pos: bool = False         # from a start position (or a hint position whose hint did not survive)
    is_hint_pos: bool = False        # from a hint position: the first search studies hint_move
    is_hint_fork: bool = False
    has_hint: bool = False
    hint_move: Optional[tuple] = None   # (x, y) or None (pass), when has_hint
    hint_turn: int = -1              # moves in the history when the hint (or hint fork) applies
    hint_pos_hash: int = 0           # the board the hint is for
    initial_turn_number: int = 0     # turn number of the history's first board (KataGo's initialTurnNumber)

    def hint_applies(self, state: GameState) -> bool:
        """Whether `state` is the position the hint was given for (KataGo checks turn and board)."""
        return self.has_hint and len(state.moves) == self.hint_turn and state.board().pos_hash == self.hint_pos_hash


class GameInitializer:
    """Draws each new game's setup. Thread-safe when every thread passes its own rng."""

    def __init__(self, game: GameSetupSettings, play: PlaySettings, search: SearchParams,
                 pass_alive_under_suicide: bool = False, positions: Optional[PositionPools] = None):
        self.game = game
        self.play = play
        self.search = search
        self.pass_alive_under_suicide = pass_alive_under_suicide
        self.positions = positions

    # ---- rules
    def random_rules(self, rng: random.Random) -> Rules:
        g = self.game
        scoring = rng.choice(g.scoring_rules)
        return Rules(
            ko=rng.choice(g.ko_rules),
            scoring=scoring,
            tax=rng.choice(g.tax_rules),
            multi_stone_suicide_legal=bool(rng.choice(g.multi_stone_suicide_legals)),
            has_button=bool(rng.choice(g.has_buttons)) if scoring == ScoringRule.AREA else False,
        )

    def randomize_scoring_and_tax(self, rules: Rules, rng: random.Random) -> Rules:
        """Seki forks replay a game under freshly drawn scoring and tax rules."""
        g = self.game
        scoring = rng.choice(g.scoring_rules)
        button = bool(rng.choice(g.has_buttons)) if scoring == ScoringRule.AREA else False
        return replace(rules, scoring=scoring, tax=rng.choice(g.tax_rules), has_button=button)

    # ---- komi and handicap
    def choose_komi_plan(self, base_komi: float, sqrt_area: float, handicap_prob: float,
                         rng: random.Random) -> KomiPlan:
        g = self.game
        stdev = g.komi_stdev if g.komi_stdev > 0 else 0.0
        if g.komi_big_stdev > 0 and rng.random() < g.komi_big_stdev_prob:
            stdev = g.komi_big_stdev
        if g.komi_bigger_stdev > 0 and g.komi_bigger_stdev_prob > 0 and rng.random() < g.komi_bigger_stdev_prob:
            stdev = g.komi_bigger_stdev
        stdev *= sqrt_area / KOMI_STDEV_REFERENCE_EDGE
        extra_black = 0
        max_extra = default_max_extra_black(sqrt_area)
        if (g.num_extra_black_fixed > 0 or max_extra > 0) and rng.random() < handicap_prob:
            extra_black = g.num_extra_black_fixed if g.num_extra_black_fixed > 0 else 1 + rng.randrange(max_extra)
        allow_integer = rng.random() < g.komi_allow_integer_prob
        return KomiPlan(extra_black, base_komi, stdev, allow_integer)

    def _game_search_params(self, rng: random.Random) -> SearchParams:
        """Per-game jitter of the no-result utility and the value of a draw (noResultStdev, drawRandRadius)."""
        g, params = self.game, self.search
        if g.no_result_stdev > 1e-30:
            mean = params.no_result_utility_for_white
            while True:
                value = mean + g.no_result_stdev * gaussian_truncated(rng, KOMI_NOISE_TRUNCATION)
                if -1.0 <= value <= 1.0:
                    break
            params = params.replace(no_result_utility_for_white=value)
        if g.draw_rand_radius > 1e-30:
            mean = params.draw_equivalent_wins_for_white
            while True:
                value = mean + g.draw_rand_radius * (rng.random() * 2 - 1)
                if 0.0 <= value <= 1.0:
                    break
            params = params.replace(draw_equivalent_wins_for_white=value)
        return params

    # ---- the whole setup
    def create(self, rng: random.Random, fork: Optional[ForkPosition] = None) -> GameStart:
        params = self._game_search_params(rng)
        if fork is not None:
            state = fork.state.copy()
            state.set_always_pass_alive_under_suicide_rules(self.pass_alive_under_suicide)
            sqrt_area = math.sqrt(state.x_size * state.y_size)
            plan = self.choose_komi_plan(state.komi, sqrt_area, 0.0, rng)
            plan.set_with_noise(state, rng)
            plan.make_game_fair = rng.random() < self.game.fork_compensate_komi_prob
            return GameStart(state, plan, params, is_fork=True, is_seki_fork=fork.is_seki_fork,
                             allow_policy_init=False, training_weight=fork.training_weight,
                             is_hint_fork=fork.is_hint_fork, hint_turn=len(state.moves) if fork.is_hint_fork else -1,
                             initial_turn_number=fork.initial_turn_number)

        g = self.game
        x_size, y_size = rng.choices(g.board_sizes, weights=g.board_size_weights)[0]
        rules = self.random_rules(rng)
        sample = self.positions.choose(rng) if self.positions is not None else None
        if sample is not None:
            start = self._from_sample(sample, rules, params, rng)
            make_fair_prob = g.sgf_compensate_komi_prob
        else:
            state = GameState(x_size, y_size, rules.to_core_tuple(), BLACK)
            state.set_always_pass_alive_under_suicide_rules(self.pass_alive_under_suicide)
            sqrt_area = math.sqrt(x_size * y_size)
            plan = self.choose_komi_plan(g.komi_mean, sqrt_area, g.handicap_prob, rng)
            plan.set_with_noise(state, rng)
            make_fair_prob = g.handicap_compensate_komi_prob if plan.extra_black > 0 else 0.0
            if g.handicap_komi_interp_zero_prob > 0 and plan.extra_black > 0:
                plan.interp_zero = rng.random() < g.handicap_komi_interp_zero_prob
            start = GameStart(state, plan, params)
        plan = start.komi

        p = self.play
        asym_prob = p.handicap_asymmetric_playout_prob if plan.extra_black > 0 else p.normal_asymmetric_playout_prob
        if asym_prob > 0 and rng.random() < asym_prob:
            max_doublings = math.log(p.max_asymmetric_ratio) / math.log(2.0)
            start.playout_doubling_advantage = rng.random() * max_doublings
            # Handicap games give White the extra visits; otherwise either side at random.
            start.pda_player = WHITE if plan.extra_black > 0 or rng.random() < 0.5 else BLACK
            make_fair_prob = max(make_fair_prob, p.min_asymmetric_compensate_komi_prob)

        if make_fair_prob > 0.0:
            plan.make_game_fair = rng.random() < make_fair_prob
        plan.make_game_fair_for_empty_board = g.komi_auto and not plan.make_game_fair
        return start

    def _from_sample(self, sample: PositionSample, rules: Rules, params: SearchParams,
                     rng: random.Random) -> GameStart:
        """A game from a start or hint position, under this game's rules (no handicap)."""
        g = self.game
        state, hint_kept = sample.game_state(rules.to_core_tuple())
        state.set_always_pass_alive_under_suicide_rules(self.pass_alive_under_suicide)
        plan = self.choose_komi_plan(g.komi_mean, math.sqrt(state.x_size * state.y_size), 0.0, rng)
        plan.set_with_noise(state, rng)
        if g.sgf_komi_interp_zero_prob > 0:
            plan.interp_zero = rng.random() < g.sgf_komi_interp_zero_prob
        return GameStart(
            state, plan, params,
            # Start positions may open with a few policy moves; hint positions are studied as they are.
            allow_policy_init=not hint_kept, training_weight=sample.training_weight,
            is_sgf_pos=not hint_kept, is_hint_pos=hint_kept, has_hint=hint_kept,
            hint_move=sample.hint_move if hint_kept else None, hint_turn=len(state.moves),
            hint_pos_hash=state.board().pos_hash, initial_turn_number=sample.initial_turn_number,
        )
