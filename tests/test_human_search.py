"""The humanSL* search parameters with a human-SL net beside the main one (KataGo's semantics).

- humanSLChosenMoveProp mixes the human policy into the final move choice (shifted towards moves the
  search likes by humanSLChosenMovePiklLambda);
- humanSL{Root,Pla,Opp}ExploreProb{Weightless,Weightful} make playouts pick their move by the human
  policy at the root / below it; weightless ones count no edge visit, so the parent's value ignores
  them; in-tree probabilities make every leaf be evaluated by the human net too.
"""
from __future__ import annotations

import numpy as np
import pytest

from support.gtp import load_evaluator

from katacli.game.session import session_from_gtp_setup
from katacli.search.params import SearchParams
from katacli.search.searcher import Searcher

MAIN_MODEL = "g170-b6c96-s175395328-d26788732.bin.gz"
HUMAN_MODEL = "human/test-b3c48nbt-humanmeta.bin.gz"
# A 9x9 position without symmetries, Black to move.
SETUP = ["boardsize 9", "clear_board", "kata-set-rules japanese", "komi 6.5", "play b E5", "play w C3",
         "play b G4"]
SEED = 7


def human_params(**changes) -> SearchParams:
    params = SearchParams.defaults("gtp").replace(
        num_search_threads=1, max_visits=60, human_sl_profile="rank_5k", chosen_move_temperature=0.0,
        chosen_move_temperature_early=0.0, root_symmetry_pruning=False)
    return params.replace(**changes)


def searcher_for(params: SearchParams, human: bool = True) -> Searcher:
    state = session_from_gtp_setup(SETUP).state
    main = load_evaluator(MAIN_MODEL)
    human_net = load_evaluator(HUMAN_MODEL) if human else None
    return Searcher(state, params, main, seed=SEED, human_evaluator=human_net)


def human_policy_of(searcher) -> np.ndarray:
    out = searcher.root_human_output
    return np.append(np.asarray(out.policy, np.float64), out.policy_pass)


def index_of(move, x_size: int = 9) -> int:
    return 81 if move is None else move[1] * x_size + move[0]


def test_without_human_settings_the_search_is_unchanged():
    plain = searcher_for(human_params(human_sl_profile=""), human=False)
    plain.run()
    with_net = searcher_for(human_params())
    with_net.run()
    assert [m.visits for m in plain.analysis().moves] == [m.visits for m in with_net.analysis().moves]
    assert plain.best_move() == with_net.best_move()
    assert with_net.root_human_output is not None and plain.root_human_output is None


def test_chosen_move_prop_one_plays_the_human_favourite():
    searcher = searcher_for(human_params(human_sl_chosen_move_prop=1.0, human_sl_chosen_move_pikl_lambda=1e9))
    searcher.run()
    policy = human_policy_of(searcher)
    best = searcher.best_move()
    assert index_of(best) == int(np.argmax(policy)), "prop 1 with no utility shift: the human argmax"
    plain = searcher_for(human_params())
    plain.run()
    assert plain.best_move() != best, "the main search alone prefers another move here"


def test_a_small_pikl_lambda_pulls_the_choice_to_the_move_the_search_values_most():
    searcher = searcher_for(human_params(human_sl_chosen_move_prop=1.0, human_sl_chosen_move_pikl_lambda=1e-6))
    searcher.run()
    moves = searcher.analysis().oriented(None).moves   # the side to move's view
    best_by_utility = max((m for m in moves if m.visits > 0 and m.is_symmetry_of is None), key=lambda m: m.utility)
    assert searcher.best_move() == best_by_utility.move


def test_weightless_root_exploration_searches_children_without_moving_the_root_value():
    searcher = searcher_for(human_params(human_sl_root_explore_prob_weightless=1.0))
    stats = searcher.run()
    assert stats.playouts >= 59, "weightless playouts still count toward the limits"
    moves = searcher.analysis().moves
    assert sum(m.visits for m in moves) >= 50 and all(m.edge_visits == 0 for m in moves)
    assert searcher.tree.root_visits == 1, "no playout reached the root's value"
    assert searcher.tree.check_invariants()


def test_weightful_root_exploration_spreads_visits_like_the_flat_human_policy():
    spread = searcher_for(human_params(human_sl_root_explore_prob_weightful=1.0, human_sl_cpuct_exploration=50.0))
    spread.run()
    focused = searcher_for(human_params())
    focused.run()
    spread_children = len(spread.analysis().moves)
    focused_children = len(focused.analysis().moves)
    assert spread_children >= 2 * focused_children, (spread_children, focused_children)
    assert spread.tree.root_visits == 60 and spread.tree.check_invariants()


def test_in_tree_exploration_evaluates_every_leaf_with_the_human_net():
    human_net = load_evaluator(HUMAN_MODEL)
    before = human_net.num_positions_evaluated
    root_only = searcher_for(human_params(human_sl_root_explore_prob_weightful=0.5))
    root_only.run()
    root_only_evals = human_net.num_positions_evaluated - before
    before = human_net.num_positions_evaluated
    in_tree = searcher_for(human_params(human_sl_pla_explore_prob_weightful=0.5,
                                        human_sl_opp_explore_prob_weightless=0.5))
    in_tree.run()
    in_tree_evals = human_net.num_positions_evaluated - before
    assert root_only_evals <= 1
    assert in_tree_evals >= 20
    assert in_tree.tree.check_invariants()


def test_changing_the_profile_drops_the_old_human_evaluation():
    searcher = searcher_for(human_params())
    searcher.run()
    first = human_policy_of(searcher)
    searcher.set_params(human_params(human_sl_profile="proyear_1900"))
    searcher.run()
    assert not np.allclose(first, human_policy_of(searcher))


def test_tree_reuse_re_evaluates_the_new_root_with_the_human_net():
    searcher = searcher_for(human_params())
    searcher.run()
    move = searcher.best_move()
    assert searcher.advance(move)
    searcher.run()
    assert searcher.root_human_output is not None
    assert searcher.tree.root_has_human_policy
    infos = searcher.analysis().moves
    assert all(m.human_prior is not None and m.human_prior >= 0.0 for m in infos)


@pytest.mark.parametrize("key", ["human_sl_chosen_move_prop", "human_sl_root_explore_prob_weightless"])
def test_no_profile_means_no_human_influence(key):
    """A human net that needs a profile is not used while humanSLProfile is empty (KataGo)."""
    params = human_params(human_sl_profile="", **{key: 1.0})
    searcher = searcher_for(params)
    searcher.run()
    assert searcher.root_human_output is None
    plain = searcher_for(human_params(human_sl_profile=""), human=False)
    plain.run()
    assert searcher.best_move() == plain.best_move()
