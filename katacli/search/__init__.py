"""KataGo's Monte-Carlo tree search: a Cython tree driven batch by batch from Python.

Public API (what the GTP engine, the analysis engine and selfplay use)::

    from katacli.search import Searcher, SearchParams, TimeControls, MoveRestrictions, RESIGN

    searcher = Searcher(state, params, evaluator)        # state: katacli._core.game_state.GameState (copied)
    # evaluator: NNEvaluator or a shared BatchingEvaluator; None = random-playout ("rollout") engine
    # Searcher(state, params, None, nogo=True) plays NoGo (rollouts only)

    stats = searcher.run(max_visits=None, max_playouts=None, max_time=None, *,
                         stop_event=None, callback=None, callback_period=None,
                         time_controls=None, pondering=False, search_factor=1.0)   # -> SearchStats
    searcher.start(**run_kwargs); searcher.stop(); searcher.wait(timeout); searcher.is_running
    searcher.best_move()                    # (x, y) / None (pass) / RESIGN (NoGo without a legal move)
    searcher.choose_move(temperature=None)  # KataGo's chosenMoveTemperature(+Early/Halflife) draw
    searcher.analysis(max_pv_len=15, min_moves=0, include_ownership=False, include_ownership_stdev=False,
                      include_moves_ownership=False, include_policy=False)   # -> SearchAnalysis (White's view)
    analysis.oriented("B" | "W" | None)     # reportAnalysisWinratesAs: Black, White, side to move
    searcher.root_values()                  # dict, White's view
    searcher.root_result()                  # RootResult: self-play's targets (values, play selection,
    searcher.child_results()                #   searched/raw priors); ChildResult per visited move
    searcher.advance(move, player=None, prevent_encore=True)   # tree reuse; True if the subtree was kept
    searcher.set_position(state); searcher.clear(); searcher.set_params(params)
    searcher.set_restrictions(MoveRestrictions(x, y).avoid(BLACK, [(3, 3)], 1).allow(WHITE, [...], 2))
    searcher.set_keep_ownership(True)       # needed for tree-averaged ownership in analysis

Helpers: :mod:`katacli.search.timecontrol` (TimeControls, time_settings / kgs-time_settings /
kata-time_settings / time_left parsing, per-move budgets), :mod:`katacli.search.results`
(MoveInfo, RootInfo, SearchAnalysis, perspective_sign, RootResult, ChildResult).

Threads and batching. ``numSearchThreads`` is the number of leaves one search keeps in
flight per batch: descents from the root spread out by virtual losses
(numVirtualLossesPerThread each), every new leaf's features go into a batch buffer, one
evaluator call evaluates them all, then they are backed up. With 1 the search is KataGo's
sequential MCTS. The tree work runs in the Cython core without the GIL and the lock is
released while the network runs, so several Searchers in separate threads (the analysis
engine, selfplay games) share one BatchingEvaluator and one another's CPU time. Pondering and
kata-analyze use start()/stop(); analysis() is safe to call while a search runs.

KataGo semantics kept: PUCT with cpuctExploration(+Log, Base) and utility-stdev scaling, FPU
(fpuReductionMax, rootFpuReductionMax, fpuLossProp, fpuParentWeightByVisitedPolicy), utility
= win/loss + no-result + static and dynamic score utility (KataGo's expected score-value
table), value-weight exponent, noise pruning, uncertainty weighting, subtree value bias,
LCB move selection, chosen-move temperature/subtract/prune, root policy temperature,
Dirichlet noise, wide root noise, root symmetry pruning, rootPruneUselessMoves, ending score
bonus, fillDameBeforePass, passing hacks, conservativePass and friendly-pass terminal
handling, futile-visit pruning, time controls, tree reuse, NN cache keys, graph search
(useGraphSearch: transpositions share one node, graphSearchRepBound, graphSearchCatchUpLeakProb),
the eval cache (useEvalCache: results remembered across searches), anti-mirror play (antiMirror),
pattern avoidance (avoidRepeatedPatternUtility, avoidSgf<N>Pattern*, autoAvoidRepeat*: see
pattern_avoidance), and a human-SL network beside the main one (-human-model: humanSL* keys).
"""
from katacli.lazy import lazy_attributes

# Imported on first use, so that the light modules (params, timecontrol) can be used without
# loading the search core and torch.
_EXPORTS = {
    "SearchParams": "katacli.search.params",
    "MoveRestrictions": "katacli.search.restrictions", "RestrictionError": "katacli.search.restrictions",
    "MoveInfo": "katacli.search.results", "RootInfo": "katacli.search.results",
    "SearchAnalysis": "katacli.search.results", "perspective_sign": "katacli.search.results",
    "RootResult": "katacli.search.results", "ChildResult": "katacli.search.results",
    "RESIGN": "katacli.search.searcher", "Searcher": "katacli.search.searcher",
    "SearchStats": "katacli.search.searcher", "choose_index_with_temperature": "katacli.search.root_policy",
    "TimeControls": "katacli.search.timecontrol", "TimeSettingsError": "katacli.search.timecontrol",
    "parse_kgs_time_settings": "katacli.search.timecontrol", "parse_time_settings": "katacli.search.timecontrol",
}

__all__ = sorted(_EXPORTS)

__getattr__ = lazy_attributes(__name__, _EXPORTS)
