"""The search driver: runs a SearchTree batch by batch under limits, time controls and stop requests.

One :class:`Searcher` owns one tree for one game. Python steps once per batch:
collect leaves (nogil, in the Cython core) -> one evaluator call -> apply. The
lock is released during the evaluator call, so ``analysis()`` from another
thread (kata-analyze reports, pondering) and other searches sharing a
BatchingEvaluator proceed meanwhile.

numSearchThreads is the number of leaves one search keeps in flight per batch
(spread by virtual losses), not OS threads: the tree is single-threaded and the
network call is where the time goes. With 1 the search is KataGo's sequential
MCTS exactly; larger values trade a little search efficiency for bigger, faster
network batches. Run several Searchers in threads to use more cores for trees.
"""
from __future__ import annotations

import math
import random
import threading
import time
from dataclasses import dataclass
from typing import Callable, Generator, Optional, Union

import numpy as np

from katacli._core.game_state import GameState
from katacli._core.search_tree import SearchTree
from katacli._core import search_results as sr

from katacli.search.eval_cache import EvalCache, eval_cache_active, params_hash
from katacli.config import Enabled
from katacli.heap_trim import maybe_trim_heap, trim_heap_after_search
from katacli.game.coords import flat_index
from katacli.nn.batch import SHORTTERM_WINLOSS_COLUMN, NNBatch
from katacli.nn.symmetry import symmetry_pos_maps
from katacli.search.evaluation import NetworkLeafEvaluator, human_net_usable
from katacli.search.leaf_threads import leaf_feature_threads
from katacli.search.params import SearchParams
from katacli.search.pattern_avoidance import PatternBonusTable, search_pattern_table
from katacli.search.pipeline import (
    PIPELINE_LANES, LanePipeline, auto_pipelining, lane_capacity, pipelining_applies,
)
from katacli.search.restrictions import MoveRestrictions
from katacli.search.root_policy import (
    choose_index_with_temperature, dirichlet_noised, interpolate_early, tempered, with_hint,
)
from katacli.search.search_views import SearchViews
from katacli.search.timecontrol import (
    TimeBudgetInputs, TimeControls, search_time_limit, upper_bound_visits_left,
)
from katacli._core.constants import BLACK, WHITE  # noqa: F401  (the core's numbers, defined once)

# A search's network work, as run_steps yields it: an NNBatch of arrays (answered by the evaluator's
# evaluate_batch, and joinable with other searches' batches), or a call that does the work itself and
# returns (outputs, human outputs) (the per-request path: a human-SL net, root symmetry averaging).
EvaluationWork = Union[NNBatch, Callable[[], tuple]]

RESIGN = "resign"
# Time limits cannot stop a search before it has this many playouts (KataGo's).
MIN_PLAYOUTS_BEFORE_TIME_STOP = 2
# How often the time budget is re-planned during a search, seconds.
TIME_RECHECK_PERIOD = 0.1
# Playouts per Python step in rollout mode (each finishes inside the core).
ROLLOUT_PLAYOUTS_PER_STEP = 64
# Largest playout budget handed to the core in one step (it counts in C ints).
MAX_STEP_BUDGET = 1 << 30
# Visits left to a search nothing bounds (KataGo's 1e30), for futile-visit pruning.
UNBOUNDED_VISITS = 1e30
# Give up after this many steps in a row that finished no playout (everything uncounted or blocked).
MAX_IDLE_STEPS = 100
# (has a hint, the move): no hint.
NO_ROOT_HINT = (False, None)


@dataclass
class SearchStats:
    """What one run() did."""

    playouts: int = 0
    visits: int = 0             # root visits at the end
    batches: int = 0
    leaves_evaluated: int = 0   # leaves sent to the evaluator (cache hits included)
    seconds: float = 0.0
    stopped_by: str = ""        # "visits", "playouts", "time", "stop", "callback", "nothing"

    @property
    def average_batch_size(self) -> float:
        return self.leaves_evaluated / self.batches if self.batches else 0.0


class Searcher(SearchViews):
    """MCTS for one position at a time, with tree reuse between moves. See katacli.search for the API;
    the read-only views of a search (analysis, root results, diagnostics) are in SearchViews."""

    def __init__(self, state: GameState, params: Optional[SearchParams] = None, evaluator=None, *,
                 nogo: bool = False, rollouts_per_leaf: int = 1, keep_ownership: bool = False,
                 seed: Optional[int] = None, pass_alive_suicide_override: int = -1, human_evaluator=None,
                 eval_cache: Optional[EvalCache] = None, pipeline: Optional[bool] = None, driver=None,
                 solo: bool = True):
        """
        state: the position to search (copied). evaluator: an NNEvaluator / BatchingEvaluator, or None to
        evaluate leaves by random playouts. human_evaluator: a human-SL net (KataGo's -human-model) whose
        policy the humanSL* parameters mix into the search and the move choice. nogo: play NoGo (rollouts only). keep_ownership: store every
        node's ownership so that tree-averaged ownership can be reported (analysis with ownership).
        pass_alive_suicide_override: features' pass-alive mode (-1 follow the state, 0/1 force), from the net.
        eval_cache: the table searches with useEvalCache share (an engine's); None: this searcher makes its own
        when its parameters ask for one (katacli.search.eval_cache).
        pipeline: keep two batches in flight, one evaluated while the next is collected (katacli.search.pipeline):
        True / False, or None to follow params.search_pipelining (the searchPipelining key).
        driver: a :class:`katacli.search.stepping.SearchDriver` (or SearchDrivers) of ``evaluator`` that
        run() hands each search to, stepped there with other threads' searches (self-play's game threads).
        solo: False where this search is one of many running at once (self-play's games, the analysis
        engine's groups; a driver implies it): numLeafFeatureThreads' auto value then gives it no helper
        threads, which would be a thread and a ladder cache per game for little gain.
        """
        if nogo and evaluator is not None:
            raise ValueError("NoGo is searched with rollouts only; pass evaluator=None")
        self.params = params if params is not None else SearchParams()
        self.evaluator = evaluator
        self.human_evaluator = human_evaluator if evaluator is not None else None
        self.nogo = nogo
        self.rollouts_per_leaf = rollouts_per_leaf
        self.keep_ownership = keep_ownership
        self.pass_alive_suicide_override = pass_alive_suicide_override
        self._seed = seed if seed is not None else random.getrandbits(63)
        self._rng = random.Random(self._seed)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._thread_done = threading.Event()   # set when the background search's thread ends its work
        self._thread_error: Optional[BaseException] = None
        self._leaf_evaluator = (NetworkLeafEvaluator(evaluator, seed=self._seed, human_evaluator=self.human_evaluator)
                                if evaluator is not None else None)
        # The human-SL net's evaluation of the current root (for analysis), None until made.
        self._root_human = None
        self._pla_search_was_for = 0
        self._nn_has_shortterm_error = False
        self._time_carried_over = 0.0
        self._visits_left_by_time = UNBOUNDED_VISITS   # futile-visit pruning's clock bound (_plan_time)
        self._pla_search_is_for = 0
        self.restrictions: Optional[MoveRestrictions] = None
        self._root_hint: tuple[bool, object] = NO_ROOT_HINT
        self.last_stats = SearchStats()
        self._eval_cache = eval_cache
        self._pipeline_wanted = pipeline
        self._driver = driver
        self._solo = solo and driver is None
        self._shared_helpers = None   # a SearchGroup's LeafHelpers (share_leaf_helpers)
        # Shapes to avoid from SGFs or earlier games (KataGo's externalPatternBonusTable), or None.
        self.external_pattern_table: Optional[PatternBonusTable] = None
        self._make_tree(state)

    # ---- setup -------------------------------------------------------------------------------
    def _lanes(self, board_area: Optional[int] = None) -> int:
        """Leaf batches in flight at once: 2 when pipelined, else 1 (``board_area``: of the board the tree
        is for, the current tree's by default)."""
        threads = self.params.num_search_threads
        if not pipelining_applies(self.evaluator, self.human_evaluator, threads):
            return 1
        wanted = self._pipeline_wanted
        if wanted is None:
            setting = self.params.search_pipelining
            if setting is Enabled.AUTO:
                area = board_area if board_area is not None else self.tree.x_size * self.tree.y_size
                wanted = auto_pipelining(self.evaluator, self._leaf_evaluator.launches_async, threads, area)
            else:
                wanted = bool(setting is Enabled.TRUE if isinstance(setting, Enabled) else setting)
        return PIPELINE_LANES if wanted else 1

    def _batch_capacity(self, board_area: Optional[int] = None) -> int:
        """Leaves per batch: numSearchThreads, split over the lanes when pipelined."""
        return lane_capacity(self.params.num_search_threads, self._lanes(board_area))

    @property
    def pipelined(self) -> bool:
        """Whether searches keep two batches in flight (katacli.search.pipeline)."""
        return self.tree.num_lanes > 1

    def _make_tree(self, state: GameState) -> None:
        self._root_human = None
        area = state.x_size * state.y_size
        self.tree = SearchTree(state.x_size, state.y_size, self._batch_capacity(area), self._lanes(area))
        self._configure_tree()
        self.tree.seed(self._seed)
        self.tree.set_root(state)
        self._apply_restrictions()
        self.tree.set_root_hint(self._root_hint[1], self._root_hint[0])

    def _tree_draws_symmetries(self) -> bool:
        """Whether the tree fills leaves' features already in a random orientation (sparing the evaluator its
        gather): a network that takes such rows and picks orientations at random, and every batch going
        as arrays (no human-SL net, the root not averaged over orientations)."""
        return (getattr(self.evaluator, "accepts_applied_symmetries", False)
                and getattr(self.evaluator, "default_symmetry", 0) is None
                and self.human_evaluator is None and self.params.root_num_symmetries_to_sample <= 1)

    def _configure_tree(self) -> None:
        self.tree.configure(self.params, self.pass_alive_suicide_override, self._nn_has_shortterm_error)
        draws = self._tree_draws_symmetries()
        if draws != self.tree.draws_leaf_symmetries:   # the maps depend on the board only: set when it changes
            self.tree.set_leaf_symmetries(symmetry_pos_maps(self.tree.y_size, self.tree.x_size) if draws else None,
                                          self._seed)
        self.tree.set_mode(nogo=self.nogo, rollouts=self.evaluator is None, rollouts_per_leaf=self.rollouts_per_leaf,
                           keep_ownership=self.keep_ownership)
        self._apply_leaf_helpers()
        if eval_cache_active(self.params):
            if self._eval_cache is None:
                self._eval_cache = EvalCache()
            self.tree.set_eval_cache(self._eval_cache, params_hash(self.params), self.params.eval_cache_min_visits)
        else:
            self.tree.set_eval_cache(None)

    def _apply_leaf_helpers(self) -> None:
        tree = self.tree
        if self.evaluator is None:   # rollouts evaluate each leaf where its descent stops: nothing to fill
            tree.set_leaf_threads(0)
        elif self._shared_helpers is not None:
            wanted = self.params.num_leaf_feature_threads != 0 and self._batch_capacity() > 1
            tree.set_leaf_helpers(self._shared_helpers if wanted else None)
        else:
            tree.set_leaf_threads(leaf_feature_threads(self.params, self._batch_capacity(), self._solo))

    def share_leaf_helpers(self, helpers) -> None:
        """Fill leaf inputs with ``helpers`` (a LeafHelpers the searches stepped from one thread share,
        katacli.search.leaf_threads.group_leaf_helpers) instead of helpers of this search's own; None: back
        to its own (numLeafFeatureThreads). numLeafFeatureThreads = 0 still means none."""
        with self._lock:
            self._shared_helpers = helpers
            self._apply_leaf_helpers()

    @property
    def eval_cache(self) -> Optional[EvalCache]:
        """The eval cache this searcher's searches use, or None (useEvalCache off or not yet made)."""
        return self._eval_cache

    def _apply_restrictions(self) -> None:
        for pla in (BLACK, WHITE):
            until = None if self.restrictions is None else self.restrictions.until_by_loc(pla)
            self.tree.set_avoid(pla, until)

    def set_params(self, params: SearchParams) -> None:
        """New parameters; the tree is kept unless the batch size grows or a tree-shaping setting changed."""
        self._ensure_idle()
        with self._lock:
            old = self.params
            self.params = params
            if self._lanes() != self.tree.num_lanes or self._batch_capacity() > self.tree.max_batch_capacity:
                self._make_tree(self.tree.root_state())
            else:
                self._configure_tree()
            if (old.conservative_pass != params.conservative_pass or old.policy_optimism != params.policy_optimism
                    or (self.human_evaluator is not None and _human_settings(old) != _human_settings(params))):
                self.tree.clear()
                self._root_human = None

    def set_keep_ownership(self, keep: bool) -> None:
        """Store per-node ownership (needed for tree-averaged ownership); turning it on clears the tree."""
        self._ensure_idle()
        with self._lock:
            if keep and not self.keep_ownership:
                self.tree.clear()
            self.keep_ownership = keep
            self._configure_tree()

    def set_external_pattern_table(self, table: Optional[PatternBonusTable]) -> None:
        """Shapes the next searches steer away from (avoidSgf*Pattern*, autoAvoidRepeat*), or None."""
        self._ensure_idle()
        with self._lock:
            self.external_pattern_table = table

    def _pattern_avoidance_on(self) -> bool:
        return self.params.avoid_repeated_pattern_utility != 0.0 or self.external_pattern_table is not None

    def set_restrictions(self, restrictions: Optional[MoveRestrictions]) -> None:
        """avoid / allow lists for the next searches (KataGo clears them when a move is played). Lists that
        differ from the last ones start a fresh tree (KataGo's setAvoidMoveUntilByLoc): the old tree's
        visits went to moves now forbidden, or left out moves now allowed."""
        self._ensure_idle()
        with self._lock:
            before = self._restricted_until()
            self.restrictions = restrictions
            if self._restricted_until() != before:
                self.tree.clear()
                self._root_human = None
            self._apply_restrictions()

    def _restricted_until(self) -> tuple:
        if self.restrictions is None:
            return (None, None)
        return tuple(self.restrictions.until_by_loc(pla) for pla in (BLACK, WHITE))

    def set_root_hint(self, move, has_hint: bool = True) -> None:
        """A root move, (x, y) or None for pass, to search almost as often as the most searched one, with a
        little policy moved to it (KataGo's setRootHintLoc, for self-play hint positions); has_hint=False
        removes it. A new hint clears the tree, so that the root is evaluated and noised with it."""
        self._ensure_idle()
        with self._lock:
            hint = (True, move) if has_hint else NO_ROOT_HINT
            if has_hint and hint != self._root_hint:
                self.tree.clear()
                self._root_human = None
            self._root_hint = hint
            self.tree.set_root_hint(move, has_hint)

    # ---- position ----------------------------------------------------------------------------
    def set_position(self, state: GameState) -> None:
        """Search a new position (copied); the tree is discarded."""
        self._ensure_idle()
        with self._lock:
            if (state.x_size, state.y_size) != (self.tree.x_size, self.tree.y_size):
                self._make_tree(state)
            else:
                self.tree.set_root(state)
            self._time_carried_over = 0.0
            self._root_human = None

    @property
    def root_state(self) -> GameState:
        """A copy of the position being searched."""
        with self._lock:
            return self.tree.root_state()

    @property
    def root_player(self) -> int:
        return self.tree.root_pla

    def advance(self, move, player: Optional[int] = None, prevent_encore: bool = True) -> bool:
        """Play move (x, y) or None (pass) at the root and keep its subtree; True if the subtree was kept.

        A move by the player not to move replaces the position (history cleared), as KataGo's
        engine does. avoid / allow lists are dropped, as in KataGo.
        """
        self._ensure_idle()
        with self._lock:
            player = player or self.tree.root_pla
            visits_before = self.tree.root_visits
            if player != self.tree.root_pla:
                state = self.tree.root_state()
                state.reset_history_keep_board(player)
                self.tree.set_root(state)
            kept = self.tree.advance(move, player, prevent_encore)
            self._root_human = None
            if kept and visits_before > 0:
                proportion = min(1.0, self.tree.root_visits / visits_before)
                self._time_carried_over *= proportion * self.params.tree_reuse_carry_over_time_factor
            else:
                self._time_carried_over = 0.0
            self.restrictions = None
            self._apply_restrictions()
            return kept

    def clear(self) -> None:
        """Forget the tree (keep the position)."""
        self._ensure_idle()
        with self._lock:
            self.tree.clear()
            self._time_carried_over = 0.0
            self._root_human = None

    # ---- running -----------------------------------------------------------------------------
    def run(self, max_visits: Optional[int] = None, max_playouts: Optional[int] = None,
            max_time: Optional[float] = None, *, stop_event: Optional[threading.Event] = None,
            callback: Optional[Callable[["Searcher"], Optional[bool]]] = None, callback_period: Optional[float] = None,
            time_controls: Optional[TimeControls] = None, pondering: bool = False,
            search_factor: float = 1.0) -> SearchStats:
        """Search until a limit is reached or a stop is requested; returns what was done.

        Limits default to the parameters' maxVisits / maxPlayouts / maxTime (the *Pondering ones when
        pondering). time_controls adds KataGo's per-move time budgeting (not while pondering).
        callback(searcher) runs every callback_period seconds (between batches); returning True stops.
        stop_event / stop() end the search after the batch in flight.
        """
        if self._driver is not None:
            return self._driver.run(self, max_visits=max_visits, max_playouts=max_playouts, max_time=max_time,
                                    stop_event=stop_event, callback=callback, callback_period=callback_period,
                                    time_controls=time_controls, pondering=pondering, search_factor=search_factor)
        steps = self._steps(max_visits, max_playouts, max_time, stop_event, callback, callback_period,
                            time_controls, pondering, search_factor)
        # A running search keeps coming back to a shared batching evaluator: register as its client
        # so batches wait for this search's leaves instead of running without them.
        client = getattr(self.evaluator, "client", None)
        if client is None:
            return self._drive_alone(steps)
        with client():
            return self._drive_alone(steps)

    def run_steps(self, max_visits: Optional[int] = None, max_playouts: Optional[int] = None,
                  max_time: Optional[float] = None, *, stop_event: Optional[threading.Event] = None,
                  callback: Optional[Callable[["Searcher"], Optional[bool]]] = None,
                  callback_period: Optional[float] = None, time_controls: Optional[TimeControls] = None,
                  pondering: bool = False,
                  search_factor: float = 1.0) -> Generator[EvaluationWork, object, SearchStats]:
        """run() as a generator, for a driver that steps many searches from one thread
        (:class:`katacli.search.stepping.SearchGroup`): it yields each batch of network work (see
        :data:`EvaluationWork`), expects that work's answer back through ``send`` (or its error through
        ``throw``), and returns the SearchStats. The caller registers as the evaluator's client."""
        # (never pipelined: a group already keeps the network busy with other searches' leaves)
        return self._steps(max_visits, max_playouts, max_time, stop_event, callback, callback_period,
                           time_controls, pondering, search_factor, allow_pipeline=False)

    def _drive_alone(self, steps) -> SearchStats:
        """Step one search to its end, doing its network work here."""
        try:
            work = next(steps)
            while True:
                try:
                    answer = work() if callable(work) else self._leaf_evaluator.run_arrays(work)
                except BaseException as exc:
                    work = steps.throw(exc)   # the search gives up its leaves and raises it again
                    continue
                work = steps.send(answer)
        except StopIteration as finished:
            return finished.value

    def _steps(self, max_visits, max_playouts, max_time, stop_event, callback, callback_period, time_controls,
               pondering, search_factor, allow_pipeline: bool = True) -> Generator[EvaluationWork, object, SearchStats]:
        p = self.params
        if max_visits is None:
            max_visits = p.max_visits_pondering if pondering else p.max_visits
        if max_playouts is None:
            max_playouts = p.max_playouts_pondering if pondering else p.max_playouts
        if max_time is None:
            max_time = p.max_time_pondering if pondering else p.max_time
        with self._lock:
            start = time.monotonic()
            stats = SearchStats()
            # Fewer passes, less thinking: KataGo's searchFactorAfterOnePass / TwoPass.
            search_factor *= self._pass_search_factor()
            if search_factor != 1.0:
                cap = float(1 << 62)
                max_visits = int(math.ceil(min(cap, max_visits * search_factor)))
                max_playouts = int(math.ceil(min(cap, max_playouts * search_factor)))
                max_time = max_time * search_factor
            stats.playouts = yield from self._begin(pondering)
            # Every counted playout adds one root visit (uncounted ones, KataGo's passing-hack
            # playouts, stop short of the root), so playouts are counted as root-visit growth, plus
            # the counted playouts that stopped at a weightless human-SL step below the root.
            non_playout_visits = self.tree.root_visits - stats.playouts
            below_root_before = self.tree.playouts_below_root
        batch_size = self._batch_capacity()
        pipeline = self._new_pipeline() if self.pipelined and allow_pipeline else None
        if p.min_playouts_per_thread > 0.0:
            new_playouts = min(max_visits - non_playout_visits, max_playouts)
            cap = new_playouts / p.min_playouts_per_thread
            if cap < batch_size * self.tree.num_lanes:
                # Fewer leaves in flight than numSearchThreads (KataGo's minPlayoutsPerThread): one lane.
                batch_size = max(1, min(batch_size, int(math.floor(cap))))
                pipeline = None
        has_max_time = max_time < 1.0e12
        has_tc = time_controls is not None and not pondering and not time_controls.is_effectively_unlimited()
        tc_limit = 1e30
        next_callback = callback_period if (callback is not None and callback_period is not None) else None
        idle_steps = 0
        # Only the visit and playout limits can stop a search without a clock or a stop event: the loop
        # then tests them inline (a one-leaf search comes here once a visit).
        limits_only = not (has_tc or has_max_time) and stop_event is None
        replans = (has_tc or has_max_time) and not pondering
        failed = True
        self._visits_left_by_time = UNBOUNDED_VISITS
        try:
            last_time_check = time.monotonic() - start
            if replans:   # the first plan, before any stop check
                with self._lock:
                    tc_limit = self._plan_time(time_controls, has_tc, last_time_check, search_factor, max_time)
            while True:
                elapsed = time.monotonic() - start
                if not limits_only or (stats.playouts >= max_playouts
                                       or stats.playouts + non_playout_visits >= max_visits):
                    reason = self._stop_reason(stats.playouts, non_playout_visits, max_visits, max_playouts, elapsed,
                                               has_max_time, max_time, has_tc, tc_limit, stop_event)
                    if reason:
                        stats.stopped_by = reason
                        break
                # Re-planned only after the stop check, as KataGo: a plan made just after the last one's time
                # ran out must not extend the move (with main time nearly gone it would round the limit up
                # to the whole next period).
                if replans and elapsed >= last_time_check + TIME_RECHECK_PERIOD:
                    last_time_check = elapsed
                    with self._lock:
                        tc_limit = self._plan_time(time_controls, has_tc, elapsed, search_factor, max_time)
                maybe_trim_heap()   # what the network's temporaries left free in the heap (katacli.heap_trim)
                if next_callback is not None and elapsed >= next_callback:
                    next_callback += callback_period
                    if callback(self):
                        stats.stopped_by = "callback"
                        break
                visits_left = min(max_playouts - stats.playouts, max_visits - non_playout_visits - stats.playouts)
                # Futile-visit pruning's bound (KataGo's upperBoundVisitsLeft, per playout there): the clock's
                # estimate, capped by the visits and playouts left -- without the cap a search limited by
                # visits alone saw 0 left and put every visit on one move.
                self.tree.set_upper_bound_visits_left(min(self._visits_left_by_time, visits_left))
                budget = int(min(visits_left, MAX_STEP_BUDGET))
                if pipeline is not None and pipeline.busy:
                    budget -= pipeline.leaves_in_flight   # each leaf in flight becomes a playout
                    if budget <= 0:
                        pipeline.finish()
                        stats.playouts = self._playouts_since(non_playout_visits, below_root_before)
                        continue
                if self.evaluator is None:
                    step = min(budget, ROLLOUT_PLAYOUTS_PER_STEP)
                    with self._lock:
                        n, done = self.tree.collect(1, step, step)
                else:
                    with self._lock:
                        if pipeline is not None:
                            self.tree.select_lane(pipeline.collect_lane)
                        n, done = self.tree.collect(min(batch_size, budget), budget)
                stats.playouts = self._playouts_since(non_playout_visits, below_root_before)
                if n == 0 and pipeline is not None and pipeline.busy:
                    pipeline.finish()   # every descent ran into the lane in flight: its answers unblock them
                    stats.playouts = self._playouts_since(non_playout_visits, below_root_before)
                    continue
                idle_steps = idle_steps + 1 if n == 0 and done == 0 else 0
                if idle_steps >= MAX_IDLE_STEPS:
                    stats.stopped_by = "nothing"
                    break
                if n == 0:
                    continue
                if pipeline is None or not pipeline.submit(n):
                    yield from self._evaluation(n)
                stats.playouts = self._playouts_since(non_playout_visits, below_root_before)
                stats.batches += 1
                stats.leaves_evaluated += n
            failed = False
        finally:
            if pipeline is not None:
                pipeline.drain(failed)
                stats.playouts = self._playouts_since(non_playout_visits, below_root_before)
            with self._lock:
                stats.seconds = time.monotonic() - start
                stats.visits = self.tree.root_visits
                self._time_carried_over += stats.seconds
                self.last_stats = stats
        with self._lock:
            self.tree.record_eval_cache()   # KataGo records after every finished search, stopped ones too
        trim_heap_after_search(stats.seconds)
        if callback is not None and callback_period is not None:
            callback(self)
        return stats

    def _playouts_since(self, non_playout_visits: int, below_root_before: int) -> int:
        """Playouts of this search so far: root-visit growth plus the counted ones that stopped below the root."""
        return self.tree.root_visits - non_playout_visits + self.tree.playouts_below_root - below_root_before

    def _new_pipeline(self) -> LanePipeline:
        tree, params = self.tree, self.params
        leaf_evaluator = self._leaf_evaluator
        return LanePipeline(tree, self._lock,
                            prepare=lambda n: leaf_evaluator.prepare_arrays(tree, n, params),
                            evaluate=leaf_evaluator.run_arrays,
                            store=lambda output: self._store(output, None, None),
                            launch=leaf_evaluator.launch_arrays if leaf_evaluator.launches_async else None)

    def _pass_search_factor(self) -> float:
        moves = self.tree.root_state().moves
        if moves and moves[-1][1] is None:
            if len(moves) >= 3 and moves[-3][1] is None:
                return self.params.search_factor_after_two_pass
            return self.params.search_factor_after_one_pass
        return 1.0

    @staticmethod
    def _stop_reason(playouts, non_playout_visits, max_visits, max_playouts, elapsed, has_max_time, max_time,
                     has_tc, tc_limit, stop_event) -> str:
        if playouts >= max_playouts:
            return "playouts"
        if playouts + non_playout_visits >= max_visits:
            return "visits"
        if has_max_time and playouts >= MIN_PLAYOUTS_BEFORE_TIME_STOP and elapsed >= max_time:
            return "time"
        if has_tc and playouts >= MIN_PLAYOUTS_BEFORE_TIME_STOP and elapsed >= tc_limit:
            return "time"
        if stop_event is not None and stop_event.is_set():
            return "stop"
        return ""

    def _evaluation(self, n: int) -> Generator[EvaluationWork, object, None]:
        """The tree's n waiting leaves as network work to yield (evaluated without the lock held unless
        the caller holds it), then their answers applied; on any error the leaves are given up."""
        try:
            batch = self._leaf_evaluator.prepare_arrays(self.tree, n, self.params)
            answer = outputs = human_outputs = None
            if batch is not None:
                answer = yield batch
            else:
                tree, params = self.tree, self.params
                outputs, human_outputs = yield lambda: self._leaf_evaluator.evaluate_with_human(tree, n, params)
        except BaseException:
            with self._lock:
                self.tree.abandon()
            raise
        with self._lock:
            try:
                self._store(answer, outputs, human_outputs)
            except BaseException:
                self.tree.abandon()
                raise

    def _store(self, batch, outputs, human_outputs) -> None:
        """Apply a batch's answers: whole arrays (batch), or per-leaf outputs with the human net's."""
        if batch is not None:
            if not self._nn_has_shortterm_error:
                self._note_shortterm_error(float(batch.values[0, SHORTTERM_WINLOSS_COLUMN]))
            ownership = batch.ownership
            self.tree.apply_batch(batch.values, batch.policy, batch.policy_pass, ownership,
                                  None if ownership is None else batch.ownership_rows.view(np.uint8))
            return
        self._note_shortterm_error(outputs[0].shortterm_winloss_error if outputs else -1.0)
        self._apply(outputs, human_outputs)

    def _apply(self, outputs, human_outputs) -> None:
        """Store a batch's evaluations; keep the root's human-SL evaluation for analysis."""
        if human_outputs is not None:
            for i, human in enumerate(human_outputs):
                if human is not None and self.tree.leaf_info(i)[1]:
                    self._root_human = human
        self.tree.apply(outputs, human_outputs)

    def _note_shortterm_error(self, first_shortterm_winloss_error: float) -> None:
        if not self._nn_has_shortterm_error and first_shortterm_winloss_error >= 0:
            self._nn_has_shortterm_error = True
            self.tree.set_nn_has_shortterm_error(True)

    def _begin(self, pondering: bool) -> Generator[EvaluationWork, object, int]:
        """Root setup for a new search (KataGo's beginSearch), yielding the root's evaluation if it needs
        one. Returns playouts done (1 if the root was evaluated)."""
        tree = self.tree
        if tree.update_mirroring():
            # The opponent started or stopped mirroring: grow a new tree with the anti-mirror settings (KataGo).
            tree.clear()
            self._root_human = None
        tree.next_search_age()
        if not pondering:
            self._pla_search_is_for = tree.root_pla
        elif self._pla_search_is_for == 0:
            self._pla_search_is_for = 3 - tree.root_pla
        tree.set_search_for(self._pla_search_is_for)
        if self._pla_search_was_for not in (0, self._pla_search_is_for) and (
                self._human_sides_differ() or self._pattern_avoidance_on()):
            # The human explore probabilities and pattern bonuses are tied to sides: the old tree was
            # grown for the other one (its playouts would follow the old bonuses).
            tree.clear()
            self._root_human = None
        # Rebuilt at every search: this game's moves so far (KataGo's beginSearch).
        tree.set_pattern_table(search_pattern_table(
            self.external_pattern_table, self.params.avoid_repeated_pattern_utility, tree.root_state(),
            self._pla_search_is_for) if self._pattern_avoidance_on() else None)
        self._pla_search_was_for = self._pla_search_is_for
        playouts = 0
        center_score = None
        if not tree.root_evaluated:
            if tree.prepare_root_eval():
                self._leaf_evaluator.root_plain_score_mean = None
                yield from self._evaluation(1)
                # A fresh root averaged over several symmetries: KataGo centres the score utility on one plain
                # evaluation of it (computeRootNNEvaluation), not on the average.
                if self.params.root_num_symmetries_to_sample > 1:
                    center_score = self._leaf_evaluator.root_plain_score_mean
            playouts = 1
        elif self.evaluator is not None and self._root_needs_reevaluation():
            tree.prepare_root_eval()
            yield from self._evaluation(1)
        if self._root_human is None and human_net_usable(self.human_evaluator, self.params):
            self._evaluate_root_human()
        tree.mark_root_current()
        self.root_symmetries = tree.begin_search(center_score)
        self._apply_root_noise_and_temperature()
        return playouts


    def _evaluate_root_human(self) -> None:
        """The human-SL net on the (evaluated) root alone: a reused root was grown without it."""
        tree = self.tree
        try:
            if not tree.prepare_root_eval():
                return
            _, human_outputs = self._leaf_evaluator.evaluate_with_human(tree, 1, self.params, root_human_only=True)
            self._root_human = human_outputs[0]
            tree.set_root_human_policy(self._root_human)
        finally:
            tree.abandon()

    def _human_sides_differ(self) -> bool:
        """KataGo clears the tree when the side searched for changes and the human explore settings
        are not the same for both sides and the root."""
        if self.human_evaluator is None:
            return False
        p = self.params
        return (p.human_sl_pla_explore_prob_weightless != p.human_sl_opp_explore_prob_weightless
                or p.human_sl_pla_explore_prob_weightful != p.human_sl_opp_explore_prob_weightful
                or p.human_sl_pla_explore_prob_weightless != p.human_sl_root_explore_prob_weightless
                or p.human_sl_pla_explore_prob_weightful != p.human_sl_root_explore_prob_weightful)

    @property
    def root_human_output(self):
        """The human-SL net's evaluation of the root (White's view), or None without one."""
        return self._root_human

    def _root_needs_reevaluation(self) -> bool:
        """The root's evaluation came from inside a previous tree: redo it with root settings when they differ."""
        p = self.params
        return (not self.tree.root_has_ownership
                or (p.conservative_pass and self.tree.root_pass_would_end_game)
                or p.root_num_symmetries_to_sample > 1
                or p.root_policy_optimism != p.policy_optimism
                or (p.ignore_pre_root_history and not p.ignore_all_history))

    def _interpolate_early(self, halflife: float, early_value: float, value: float) -> float:
        return interpolate_early(self.tree.root_turn_number, self.tree.x_size * self.tree.y_size, halflife,
                                 early_value, value)

    def _apply_root_noise_and_temperature(self) -> None:
        """Root policy temperature and Dirichlet noise (KataGo's maybeAddPolicyNoiseAndTemp)."""
        p = self.params
        has_hint = self._root_hint[0]
        if not p.root_noise_enabled and p.root_policy_temperature == 1.0 and p.root_policy_temperature_early == 1.0 \
                and not has_hint:
            self.tree.set_root_priors(None)
            return
        moves, priors = self.tree.root_edges()
        if len(priors) == 0:
            return
        probs = priors.astype(np.float64)
        if p.root_policy_temperature != 1.0 or p.root_policy_temperature_early != 1.0:
            probs = tempered(probs, self._interpolate_early(p.chosen_move_temperature_halflife,
                                                            p.root_policy_temperature_early, p.root_policy_temperature))
        if p.root_noise_enabled:
            probs = dirichlet_noised(probs, self._rng.getrandbits(63), p.root_dirichlet_noise_total_concentration,
                                     p.root_dirichlet_noise_weight)
        if has_hint and self._root_hint[1] in moves:
            probs = with_hint(probs, moves.index(self._root_hint[1]))
        self.tree.set_root_priors(probs.astype(np.float32))

    def _plan_time(self, tc: Optional[TimeControls], has_tc: bool, elapsed: float, search_factor: float,
                   max_time: float) -> float:
        """Re-plan the time limit (KataGo's recomputeSearchTimeLimit) and feed futile-visit pruning."""
        p = self.params
        root_visits = self.tree.root_visits
        limit = 1e30
        if has_tc:
            state = self.tree.root_state()
            entropy = surprise = None
            if p.obvious_moves_time_factor < 1.0:
                entropy, surprise = self._policy_entropy_and_surprise()
            inputs = TimeBudgetInputs(board_area=state.x_size * state.y_size,
                                      num_stones_on_board=state.num_stones,
                                      turn_number=self.tree.root_turn_number, policy_entropy=entropy,
                                      policy_surprise=surprise)
            limit = search_time_limit(tc, p, inputs, elapsed, self._time_carried_over, search_factor)
            if p.futile_visits_threshold > 0:
                upper = upper_bound_visits_left(root_visits, elapsed, limit, self._time_carried_over,
                                                p.num_search_threads)
                if upper < p.futile_visits_threshold * root_visits and self._no_move_can_catch_up(upper):
                    limit = search_time_limit(tc, p, inputs, elapsed, self._time_carried_over, search_factor,
                                              futile_stop=True)
        # Only a clock bounds the visits left by time (KataGo ignores the estimate for a plain maxTime).
        self._visits_left_by_time = (
            upper_bound_visits_left(root_visits, elapsed, min(limit, max_time), self._time_carried_over,
                                    p.num_search_threads) if has_tc else UNBOUNDED_VISITS)
        return limit

    def _no_move_can_catch_up(self, upper_bound_visits: float) -> bool:
        moves, values = sr.play_selection(self.tree, 1.0)
        children = sr.root_child_stats(self.tree)
        if not values or len(values) != len(children):
            return False
        visits = [c["edge_visits"] for c in children]
        best = max(range(len(values)), key=lambda i: values[i])
        most = max(range(len(visits)), key=lambda i: visits[i])
        if best != most:
            return False
        required = self._visits_needed_to_be_non_futile(visits[most])
        return all(i == best or visits[i] + upper_bound_visits < required for i in range(len(values)))

    def _visits_needed_to_be_non_futile(self, max_visits_move_visits: float) -> float:
        p = self.params
        required = p.futile_visits_threshold * max_visits_move_visits
        temperature = self._interpolate_early(p.chosen_move_temperature_halflife, p.chosen_move_temperature_early,
                                              p.chosen_move_temperature)
        if temperature < 1e-3:
            return required
        return min(required, max_visits_move_visits * math.pow(0.01, temperature))

    def _policy_entropy_and_surprise(self):
        policy = sr.root_policy(self.tree)
        moves, values = sr.play_selection(self.tree, 1.0)
        if policy is None or not values:
            return None, None
        legal = policy[policy > 1e-100].astype(np.float64)
        entropy = float(-(legal * np.log(legal)).sum())
        total = sum(values)
        surprise = 0.0
        for move, value in zip(moves, values):
            target = value / total
            if target > 1e-100:
                prior = max(float(policy[self._policy_index(move)]), 1e-100)
                surprise += target * (math.log(target) - math.log(prior))
        return entropy, max(0.0, surprise)

    def _policy_index(self, move) -> int:
        return flat_index(move, self.tree.x_size, self.tree.y_size)

    # ---- background search (pondering, analysis) ----------------------------------------------
    def start(self, **run_kwargs) -> None:
        """run() in a background thread until a limit or stop(); stop_event is managed here."""
        self._ensure_idle()
        self._stop.clear()
        self._thread_error = None
        done = self._thread_done = threading.Event()

        def target():
            try:
                self.run(stop_event=self._stop, **run_kwargs)
            except BaseException as exc:   # surfaced by stop() / wait()
                self._thread_error = exc
            finally:
                done.set()

        self._thread = threading.Thread(target=target, name="katacli-search", daemon=True)
        self._thread.start()

    def stop(self) -> Optional[SearchStats]:
        """Ask a background search to stop and wait for it; thread-safe, a no-op when idle."""
        self._stop.set()
        return self.wait()

    def wait(self, timeout: Optional[float] = None) -> Optional[SearchStats]:
        thread = self._thread
        if thread is None:
            return None
        # Our own event, not Thread.join: Python 3.11's join, interrupted by Ctrl-C, can mark a running
        # thread as finished.
        if not self._thread_done.wait(timeout):
            return None
        self._thread = None
        if self._thread_error is not None:
            error, self._thread_error = self._thread_error, None
            raise error
        return self.last_stats

    @property
    def is_running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _ensure_idle(self) -> None:
        if self._thread is not None and threading.current_thread() is not self._thread:
            self.stop()

    # ---- results -------------------------------------------------------------------------------
    def legal_move_exists(self) -> bool:
        with self._lock:
            _, priors = self.tree.root_edges()
            return len(priors) > 0 if self.tree.root_evaluated else self.tree.has_legal_move()

    def best_move(self):
        """The move with the highest play selection value: (x, y), None for pass, or RESIGN in NoGo without moves."""
        return self.choose_move(temperature=0.0)

    def choose_move(self, temperature: Optional[float] = None):
        """KataGo's chosen move: drawn from play selection values with chosenMoveTemperature (early/halflife
        interpolated by default). (x, y), None for pass, or RESIGN when NoGo leaves no legal move.
        Raises ValueError before any search."""
        p = self.params
        with self._lock:
            if self.nogo and not self.tree.has_legal_move():
                return RESIGN
            if not self.tree.root_evaluated:
                raise ValueError("nothing has been searched yet: call run() first")
            moves, values = sr.play_selection(self.tree, 0.0)
        if not moves:
            return RESIGN if self.nogo else None
        if temperature is None:
            temperature = self._interpolate_early(p.chosen_move_temperature_halflife, p.chosen_move_temperature_early,
                                                  p.chosen_move_temperature)
        return moves[choose_index_with_temperature(self._rng, values, temperature,
                                                   p.chosen_move_temperature_only_below_prob)]

    def has_move_to_play(self) -> bool:
        """Whether the root offers a move to choose (avoid / allow restrictions can leave none, not even a pass:
        choose_move then says pass)."""
        with self._lock:
            return bool(self.tree.root_evaluated and sr.play_selection(self.tree, 0.0)[0])

    @property
    def root_visits(self) -> int:
        return self.tree.root_visits


HUMAN_TREE_SETTINGS = (
    "human_sl_profile", "human_sl_cpuct_exploration", "human_sl_cpuct_permanent",
    "human_sl_root_explore_prob_weightless", "human_sl_root_explore_prob_weightful",
    "human_sl_pla_explore_prob_weightless", "human_sl_pla_explore_prob_weightful",
    "human_sl_opp_explore_prob_weightless", "human_sl_opp_explore_prob_weightful",
)


def _human_settings(params: SearchParams) -> tuple:
    """The human-SL settings that shape the tree (a change makes it stale)."""
    return tuple(getattr(params, name) for name in HUMAN_TREE_SETTINGS)
