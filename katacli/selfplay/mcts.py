"""The self-play search backend on katacli's MCTS (:class:`katacli.search.Searcher`).

Per move, as KataGo's self-play does it (runBotWithLimits, extractSearchTargetsThisTurn):

* the tree is cleared before every recorded search (the same bot plays both sides,
  and root noise must act afresh); unrecorded cheap searches keep the tree;
* when asked (moves with altered visits on a cleared tree), 10 visits are searched first
  so the dynamic score utility is centred on a sensible score, then the rest;
* a hint position's first search is told the hinted move (:meth:`Searcher.set_root_hint`), which it
  searches almost as often as its best move;
* the move is drawn with LCB switched off, while the policy target (play selection
  values: forced playouts pruned, chosenMovePrune/Subtract applied) uses LCB as configured;
* the targets come from :meth:`Searcher.root_result` (typed, White's view; this module never
  reads the tree itself);
* values are the root node's averages; the raw network's view is the root's own
  evaluation (its raw priors, before noise and temperature; also used to pick
  side-position moves), while policy surprise and entropy are measured against the
  priors the search used (temperature and noise applied), as in KataGo;
* a kept tree is advanced through the encore, as the game itself is (GTP prevents it).
"""
from __future__ import annotations

import random
from typing import Optional

import numpy as np

from katacli._core.game_state import GameState
from katacli.search import Searcher
from katacli.search.params import SearchParams
from katacli.selfplay.raw_policy import NetEvaluator, Policy, RawEval
from katacli.selfplay.records import QValue, ValueTargets
from katacli.selfplay.searching import MoveSearchRequest, MoveSearchResult

# Visits of the short search run first on a cleared tree (KataGo's dynamic score centring).
SCORE_CENTERING_VISITS = 10
SEED_BITS = 63


def _same_situation(a: GameState, b: GameState) -> bool:
    """The same moves leading to the same phase of the game (main phase or encore, over or not)."""
    return (a.moves == b.moves and a.encore_phase == b.encore_phase
            and a.is_game_finished == b.is_game_finished and a.next_player == b.next_player)


class MctsSelfplaySearch:
    """One game's search: a Searcher on the shared (batching) evaluator."""

    def __init__(self, net: NetEvaluator, rng: Optional[random.Random] = None):
        self.net = net
        self.rng = rng or random.Random()
        self._searcher: Optional[Searcher] = None
        # Shapes to steer away from (kata match's avoidSgfPattern*; self-play has none, as in KataGo).
        self.pattern_table = None

    def set_net(self, net: NetEvaluator) -> None:
        self.net = net
        self._searcher = None  # a new net invalidates the tree; the next search builds a fresh one

    def clear_tree(self) -> None:
        if self._searcher is not None:
            self._searcher.clear()

    def _prepare(self, state: GameState, params: SearchParams, reuse_tree: bool) -> bool:
        """Point the searcher at ``state``; True if an existing tree was kept."""
        searcher = self._searcher
        if searcher is None:
            driver = getattr(self.net, "driver", None)
            # A driver's searches are never pipelined (a pipelined tree would split its leaves over two lanes).
            self._searcher = Searcher(state, params, self.net.evaluator, seed=self.rng.getrandbits(SEED_BITS),
                                      driver=driver, pipeline=False if driver is not None else None,
                                      solo=False)   # one of the process's many games
            if self.pattern_table is not None:
                self._searcher.set_external_pattern_table(self.pattern_table)
            return False
        searcher.set_params(params)
        if reuse_tree:
            root = searcher.root_state
            root_moves, moves = root.moves, state.moves
            # Only a tree of this game's line under the same rules and komi (komi estimation searches
            # the same position at other komis) may be continued.
            if (root.x_size, root.y_size, root.rules_tuple) == (state.x_size, state.y_size, state.rules_tuple) \
                    and root.initial_stones() == state.initial_stones() \
                    and len(root_moves) <= len(moves) and moves[: len(root_moves)] == root_moves:
                kept = True
                for pla, move in moves[len(root_moves):]:
                    # Self-play games go through the encore (territory scoring), unlike GTP games.
                    kept = searcher.advance(move, pla, prevent_encore=False) and kept
                if _same_situation(searcher.root_state, state):
                    return kept
        searcher.set_position(state)
        return False

    def searcher_at(self, state: GameState, params: SearchParams) -> Searcher:
        """The searcher pointed at ``state``, keeping the tree of this game's earlier moves when it
        can (a match bot plays one side of a game; it searches but records no targets)."""
        self._prepare(state, params, reuse_tree=True)
        return self._searcher

    def search(self, request: MoveSearchRequest) -> MoveSearchResult:
        state, params = request.state, request.params
        kept = self._prepare(state, params, request.reuse_tree)
        searcher = self._searcher
        # LCB only shapes the policy target, not the move actually played (KataGo's self-play hack).
        searcher.set_params(params.replace(use_lcb_for_selection=False))
        if request.center_score and not kept and params.max_visits > SCORE_CENTERING_VISITS \
                and params.max_playouts > SCORE_CENTERING_VISITS:
            searcher.run(max_visits=SCORE_CENTERING_VISITS)
        if request.has_root_hint:  # clears the tree, so the root is noised with the hint (as KataGo)
            searcher.set_root_hint(request.root_hint_move)
        try:
            searcher.run(max_visits=params.max_visits, max_playouts=params.max_playouts)
        finally:
            if request.has_root_hint:
                searcher.set_root_hint(None, has_hint=False)
        move = searcher.choose_move()
        searcher.set_params(params)

        root = searcher.root_result()
        children = [QValue(c.move, c.win_loss, c.score_mean, c.visits) for c in root.children]
        raw_moves = [raw_move for raw_move, _ in root.raw_priors]
        raw_probs = np.array([prior for _, prior in root.raw_priors], np.float64)
        raw = RawEval(root.raw_win, root.raw_loss, root.raw_no_result, root.raw_score_mean, Policy(raw_moves, raw_probs))
        return MoveSearchResult(
            move=move, root_visits=root.visits, play_selection_values=dict(root.play_selection),
            value=ValueTargets(root.win, root.loss, root.no_result, root.score_mean),
            reported_win_loss=root.win_loss, reported_lead=root.lead,
            root_policy=dict(root.search_priors), raw=raw, children=children,
        )
