"""The adapter between the GTP engine and the search (:mod:`katacli.search`).

Everything the GTP layer needs from a search goes through :class:`Bot`:
``genmove`` (also for kata-search and genmove_analyze), ``analyze`` (streaming
until stopped), ``ponder``, ``estimate_lead`` / ``estimate_ownership`` (for
final_score and final_status_list), ``benchmark`` and ``clear_cache``. It also
holds the small move-level policies that need no search (cleanup before pass,
free handicap placement).
"""
from __future__ import annotations

import dataclasses
import random
import threading

import numpy as np

from katacli.config import Enabled
from katacli.engine_common import stable_seed
from katacli.game.coords import BLACK, WHITE, flat_index
from katacli.game.rules import ScoringRule
from katacli.gtp.errors import GtpError
from katacli.gtp.search_types import NO_MOVE, SearchOutcome, SearchRequest, SnapshotCallback
from katacli.search.benchmark_positions import BenchmarkError
from katacli.search.eval_cache import new_eval_cache
from katacli.search.speed_benchmark import gtp_benchmark_line

# Analysis searches until stopped: KataGo multiplies every limit by this.
ANALYSIS_SEARCH_FACTOR = 1e40
UNLIMITED_PLAYOUTS = 1 << 50
UNLIMITED_SECONDS = 1e20
# Territory scoring's last cleanup phase (the encore after the second pair of passes), its final phase.
FINAL_ENCORE_PHASE = 2
# place_free_handicap samples the network's policy at this temperature (KataGo's playExtraBlack).
FREE_HANDICAP_TEMPERATURE = 0.25
# Without a network, free handicap stones keep this many lines free at the edge: (smallest board side, margin).
FREE_HANDICAP_EDGE_MARGINS = ((13, 3), (7, 2), (4, 1), (0, 0))


class Bot:
    """Search-independent parts of the adapter; subclasses add the searches."""

    def __init__(self, evaluator, engine):
        self.evaluator = evaluator
        self.engine = engine
        self.rng = random.Random(engine.options.seed)

    # ------------------------------------------------------------------ searches (subclasses)
    def genmove(self, request: SearchRequest, stop: threading.Event,
                on_snapshot: SnapshotCallback | None = None) -> SearchOutcome:
        raise GtpError("no search engine is available in this build")

    def analyze(self, request: SearchRequest, stop: threading.Event, on_snapshot: SnapshotCallback) -> None:
        raise GtpError("no search engine is available in this build")

    def ponder(self, request: SearchRequest, stop: threading.Event) -> None:
        return None

    def estimate_lead(self, state, pla: int, visits: int, stop: threading.Event) -> float:
        raise GtpError("no search engine is available in this build")

    def estimate_ownership(self, state, pla: int, visits: int, stop: threading.Event):
        raise GtpError("no search engine is available in this build")

    def benchmark(self, params, visits: int, board_len: int, stop: threading.Event) -> str:
        raise GtpError("no search engine is available in this build")

    def clear_cache(self) -> None:
        cache = getattr(self.evaluator, "cache", None)
        if cache is not None:
            cache.clear()

    def on_new_board(self, x_size: int, y_size: int) -> None:
        """The board size changed (a search tree for the old size is useless)."""

    def search_tree(self, state):
        """The searcher with its tree at ``state``, or None (no search has been run)."""
        return None

    def forget_tree(self) -> None:
        """The position was replaced (undo, new rules, a set-up position): KataGo starts a fresh tree
        then, even where the new position is one the old tree already holds."""

    def params_changed(self, genmove, analysis) -> None:
        """kata-set-param changed the engine's genmove and/or analysis parameters (None: unchanged): the kind
        the tree was last searched with applies at once, as KataGo's set*ParamsIfChanged (pondering, which
        searches on with the tree's parameters, then uses them)."""

    # ------------------------------------------------------------------ move policies
    def adjust_pass(self, state, pla: int, move):
        """KataGo's cleanupBeforePass (PlayUtils::maybeCleanupBeforePass): in the game's final phase (area
        scoring, or territory scoring's last cleanup phase) with the button taken, where dead stones should
        be captured, rather than passing, play inside our own pass-alive area next to an opponent stone
        while there is one."""
        settings = self.engine.settings
        rules = self.engine.rules
        if move is not None or self.engine.nogo or settings.friendly_pass == Enabled.TRUE:
            return move
        if settings.cleanup_before_pass == Enabled.AUTO:
            wanted = not rules.friendly_pass_ok and rules.scoring == ScoringRule.AREA
        else:
            wanted = settings.cleanup_before_pass == Enabled.TRUE
        final_phase = rules.scoring == ScoringRule.AREA or state.encore_phase >= FINAL_ENCORE_PHASE
        if not wanted or not final_phase or state.has_button:   # (has_button: still there to take)
            return move
        from katacli._core.area import area_map

        board = state.board()
        # the search's root safe area: pass-alive groups and the territory they strictly own
        safe = area_map(board, False, False, False, state.suicide_legal_for_pass_alive())
        colors = state.colors()
        opp = BLACK + WHITE - pla
        for y in range(state.y_size):
            for x in range(state.x_size):
                if colors[y][x] != 0 or safe[y][x] != pla:
                    continue
                near_opp = any(0 <= nx < state.x_size and 0 <= ny < state.y_size and colors[ny][nx] == opp
                               for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)))
                if near_opp and state.is_legal((x, y), pla):
                    return (x, y)
        return move

    def choose_free_handicap(self, state, count: int) -> list[tuple[int, int]]:
        """Points for place_free_handicap: sampled from the network's policy, else spread evenly."""
        if self.evaluator is not None:
            return self._policy_handicap(state, count)
        return self._spread_handicap(state.x_size, state.y_size, count)

    def _policy_handicap(self, state, count: int) -> list[tuple[int, int]]:
        from katacli.search.raw_eval import evaluate_raw

        state = state.copy()
        points: list[tuple[int, int]] = []
        for _ in range(count):
            state.reset_history_keep_board(BLACK)
            out = evaluate_raw(self.evaluator, state, BLACK, [self.rng.randrange(8)], 0.0)[0]
            policy = np.asarray(out.policy, dtype=np.float64)
            legal = policy > 0
            if not legal.any():
                break
            weights = np.where(legal, np.power(np.where(legal, policy, 1.0), 1.0 / FREE_HANDICAP_TEMPERATURE), 0.0)
            index = self.rng.choices(range(len(weights)), weights=weights.tolist())[0]
            xy = (index % state.x_size, index // state.x_size)
            state.play(xy, BLACK)
            points.append(xy)
        return points

    @staticmethod
    def _spread_handicap(x_size: int, y_size: int, count: int) -> list[tuple[int, int]]:
        """Farthest-point placement, away from the edge: star-point-like spacing without a network."""
        margin = next(m for min_len, m in FREE_HANDICAP_EDGE_MARGINS if min(x_size, y_size) >= min_len)
        candidates = [(x, y) for y in range(margin, y_size - margin) for x in range(margin, x_size - margin)]
        chosen: list[tuple[int, int]] = []
        while candidates and len(chosen) < count:
            def spread(p):
                if not chosen:  # start in the upper right corner, as handicap stones usually do
                    return (p[0] - p[1], 0)
                return (min((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 for q in chosen), -p[1] * x_size - p[0])
            best = max(candidates, key=spread)
            chosen.append(best)
            candidates.remove(best)
        return chosen


class SearchBot(Bot):
    """The adapter over :class:`katacli.search.Searcher`: one tree, reused while the game goes on."""

    def __init__(self, evaluator, engine):
        super().__init__(evaluator, engine)
        self._searcher = None
        self._signature = None  # what the tree's root position was built from
        self._moves: list = []
        self._analysis_params = False   # the tree was last searched with the analysis parameters
        self._seed = stable_seed(engine.options.seed)
        # KataGo's eval cache (useEvalCache): one for the engine's whole run, across games, until clear_cache.
        self._eval_cache = new_eval_cache(engine.params.genmove)

    # ------------------------------------------------------------------ the tree
    @staticmethod
    def _signature_of(state) -> tuple:
        return (state.x_size, state.y_size, state.rules_tuple, tuple(state.initial_stones()), state.initial_player)

    def _prepare(self, request: SearchRequest, keep_ownership: bool, pondering: bool = False):
        """The searcher, positioned at request.state: the old tree is advanced along new moves when possible.
        As KataGo's GTP engine, a switch between the genmove and the analysis parameters, or genmove
        parameters that changed (dynamic PDA), start a fresh tree (its Search::setParams clears the search):
        an analysis tree must not make the next genmove's move, nor its visits count against maxVisits.
        Pondering searches on with the parameters of the last search."""
        from katacli.search import Searcher

        evaluator = None if request.nogo else self.evaluator
        human_evaluator = None if request.nogo else self.engine.human_evaluator
        state = request.state
        signature, moves = self._signature_of(state), list(state.moves)
        searcher = self._searcher
        if searcher is None or searcher.nogo != request.nogo or searcher.evaluator is not evaluator:
            searcher = Searcher(state, request.params, evaluator, nogo=request.nogo, keep_ownership=keep_ownership,
                                seed=self._seed, human_evaluator=human_evaluator, eval_cache=self._eval_cache)
            self._searcher = searcher
        else:
            if not pondering and (searcher.params != request.params
                                  or self._analysis_params != request.analysis_params):
                searcher.set_params(request.params)
                searcher.clear()
            if searcher.keep_ownership != keep_ownership:
                searcher.set_keep_ownership(keep_ownership)
            self._follow(searcher, state)
        self._signature, self._moves = signature, moves
        if not pondering:
            self._analysis_params = request.analysis_params
        searcher.set_restrictions(self._restrictions(request))
        searcher.set_external_pattern_table(self.engine.avoid_patterns.table)
        return searcher

    def _follow(self, searcher, state) -> None:
        """Bring the searcher to ``state``: the old tree advanced along new moves when possible."""
        signature, moves = self._signature_of(state), list(state.moves)
        known = len(self._moves)
        if signature == self._signature and moves[:known] == self._moves:
            for pla, xy in moves[known:]:
                searcher.advance(xy, pla, self.engine.settings.prevent_cleanup_phase)
        else:
            searcher.set_position(state)
        self._signature, self._moves = signature, moves

    def search_tree(self, state):
        """The searcher with its tree at ``state`` (kept from earlier searches where it still applies), or
        None before the first search."""
        if self._searcher is None:
            return None
        self._follow(self._searcher, state)
        return self._searcher

    @staticmethod
    def _restrictions(request: SearchRequest):
        if not request.avoid:
            return None
        from katacli.search import MoveRestrictions

        restrictions = MoveRestrictions(request.state.x_size, request.state.y_size)
        for pla, table in request.avoid.items():
            by_depth: dict[int, list] = {}
            for point, depth in table.items():
                by_depth.setdefault(depth, []).append(point)
            for depth, points in sorted(by_depth.items()):
                restrictions.avoid(pla, points, depth)
        return restrictions

    def _snapshot(self, searcher, request: SearchRequest):
        analysis = searcher.analysis(max_pv_len=request.pv_len, min_moves=request.min_moves,
                                     include_ownership=request.want_ownership,
                                     include_ownership_stdev=request.want_ownership_stdev,
                                     include_moves_ownership=request.want_moves_ownership)
        if self.evaluator is None and analysis.root is not None:
            # Rollouts have no network output at the root, so there are no raw values to report.
            analysis = dataclasses.replace(analysis, root=dataclasses.replace(
                analysis.root, raw_st_wr_error=None, raw_st_score_error=None, raw_var_time_left=None))
        return analysis

    # ------------------------------------------------------------------ searches
    def genmove(self, request: SearchRequest, stop: threading.Event,
                on_snapshot: SnapshotCallback | None = None) -> SearchOutcome:
        from katacli.search import RESIGN

        searcher = self._prepare(request, request.want_ownership or request.want_moves_ownership)
        callback = period = None
        if on_snapshot is not None and request.report_interval is not None:
            callback, period = (lambda s: on_snapshot(self._snapshot(s, request))), request.report_interval
        stats = searcher.run(stop_event=stop, callback=callback, callback_period=period,
                             time_controls=request.clock, search_factor=request.search_factor)
        move = searcher.choose_move()
        if move is None and not searcher.has_move_to_play():
            move = NO_MOVE
        values = searcher.root_values(pruned=False) or {}   # KataGo's getRootValues (not analysis' pruned ones)
        prior = 0.0
        human = searcher.root_human_output
        if move not in (RESIGN, NO_MOVE):
            if human is not None:
                # With a human-SL net KataGo times its move delay by the human policy.
                prob = human.policy_pass if move is None else human.policy[flat_index(move, request.state.x_size, request.state.y_size)]
                prior = max(0.0, float(prob))
            else:
                prior = next((m.prior for m in searcher.analysis(max_pv_len=1).moves if m.move == move), 0.0)
        return SearchOutcome(move=move, win_loss=values.get("win_loss", 0.0), lead=values.get("lead", 0.0),
                             visits=stats.visits, move_prior=prior, new_playouts=stats.playouts,
                             score_stdev=values.get("score_stdev", 0.0))

    def analyze(self, request: SearchRequest, stop: threading.Event, on_snapshot: SnapshotCallback) -> None:
        searcher = self._prepare(request, request.want_ownership or request.want_moves_ownership)

        def report(s) -> bool:
            if stop.is_set():
                return True  # stopped by the controller: KataGo prints nothing more
            on_snapshot(self._snapshot(s, request))
            return False

        searcher.run(stop_event=stop, callback=report, callback_period=request.report_interval,
                     search_factor=ANALYSIS_SEARCH_FACTOR)

    def ponder(self, request: SearchRequest, stop: threading.Event) -> None:
        searcher = self._prepare(request, False, pondering=True)
        searcher.run(stop_event=stop, pondering=True, search_factor=request.search_factor)

    def _side_search(self, state, pla: int, visits: int, stop: threading.Event, keep_ownership: bool):
        """A separate, noiseless search (the game's tree is left alone), as KataGo's score estimates use."""
        from katacli.search import Searcher

        params = self.engine.params.genmove.replace(
            max_visits=visits, max_playouts=UNLIMITED_PLAYOUTS, max_time=UNLIMITED_SECONDS,
            root_noise_enabled=False, wide_root_noise=0.0, playout_doubling_advantage=0.0,
            playout_doubling_advantage_pla=None, conservative_pass=True, chosen_move_temperature=0.0,
            chosen_move_temperature_early=0.0, anti_mirror=False, avoid_repeated_pattern_utility=0.0,
            # The rest of KataGo's getNoiselessParams: without them the root got the genmove FPU (0.1, not
            # 0.2) and a search after a pass only half its visits (searchFactorAfterOnePass).
            root_policy_temperature=1.0, root_policy_temperature_early=1.0,
            root_fpu_reduction_max=self.engine.params.genmove.fpu_reduction_max,
            root_fpu_loss_prop=self.engine.params.genmove.fpu_loss_prop,
            root_desired_per_child_visits_coeff=0.0, root_num_symmetries_to_sample=1,
            search_factor_after_one_pass=1.0, search_factor_after_two_pass=1.0)
        if state.next_player != pla:
            state.reset_history_keep_board(pla)
        # KataGo runs these on the game's bot, so they share its eval cache (under their own params' hash).
        searcher = Searcher(state, params, self.evaluator, keep_ownership=keep_ownership, seed=self._seed,
                            eval_cache=self._eval_cache)
        searcher.set_external_pattern_table(self.engine.avoid_patterns.table)  # the game's bot keeps it (KataGo)
        searcher.run(stop_event=stop)
        return searcher

    def side_search_values(self, state, pla: int, visits: int, stop: threading.Event) -> dict:
        """The root values (White's view, unpruned: KataGo's getRootValues) of a noiseless side search."""
        return self._side_search(state, pla, visits, stop, False).root_values(pruned=False) or {}

    def estimate_lead(self, state, pla: int, visits: int, stop: threading.Event) -> float:
        """Points White is ahead: KataGo's computeLead, noiseless side searches at a few komi values (one
        search's lead is off by a point or two under area scoring, whose score moves in 2-point steps)."""
        from katacli.search.fair_komi import CachedProbe, lead_by_komi

        def probe(komi: float) -> tuple[float, float]:
            position = state.copy()
            position.set_komi(komi)
            values = self.side_search_values(position, pla, visits, stop)
            return float(values.get("lead", 0.0)), float(values.get("win_loss", 0.0))

        lead = lead_by_komi(CachedProbe(probe, state.x_size, state.y_size), state)
        self._after_scoring()
        return lead

    def estimate_ownership(self, state, pla: int, visits: int, stop: threading.Event):
        analysis = self._side_search(state, pla, visits, stop, True).analysis(max_pv_len=1, include_ownership=True)
        self._after_scoring()
        return [float(v) for v in analysis.ownership]

    def _after_scoring(self) -> None:
        """KataGo scores (final_score, final_status_list) on the game's bot and then sets its genmove
        parameters back, which clears its tree: the next search starts afresh, as there."""
        if self._searcher is not None:
            self._searcher.clear()
        self._analysis_params = False

    def benchmark(self, params, visits: int, board_len: int, stop: threading.Event) -> str:
        self.clear_cache()
        try:
            return gtp_benchmark_line(params, self.evaluator, visits, board_len, stop, seed=self._seed)
        except BenchmarkError as exc:  # board sizes without a bundled game, as in KataGo
            raise GtpError(str(exc)) from None

    def clear_cache(self) -> None:
        super().clear_cache()
        if self._searcher is not None:
            self._searcher.clear()
        if self._eval_cache is not None:
            self._eval_cache.clear()

    def on_new_board(self, x_size: int, y_size: int) -> None:
        self._searcher = None

    def forget_tree(self) -> None:
        # The next search sets its position afresh instead of advancing the old tree.
        self._signature, self._moves = None, []

    def params_changed(self, genmove, analysis) -> None:
        searcher = self._searcher
        wanted = analysis if self._analysis_params else genmove
        if searcher is not None and wanted is not None and searcher.params != wanted:
            searcher.set_params(wanted)
            searcher.clear()   # KataGo's setParams clears the search


def make_bot(evaluator, engine) -> Bot:
    """The search adapter for this engine: network search, or rollouts without a network."""
    return SearchBot(evaluator, engine)
