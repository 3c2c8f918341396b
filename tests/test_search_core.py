"""Search core with a deterministic fake network: counts, virtual losses, legality, reuse, limits, terminals."""
import threading
import time

import numpy as np
import pytest

from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli._core import search_results as sr

from katacli.game.rules import Rules
from katacli.nn.batching import BatchingEvaluator
from katacli.search import MoveRestrictions, SearchParams, Searcher
from katacli.search import searcher as searcher_module
from support.fakes import MaterialEvaluator

BLACK, WHITE = 1, 2


def state_from(diagram: str, to_move: int = BLACK, komi: float = 0.5, rules: str = "tromp-taylor") -> GameState:
    board = GoBoard.from_diagram(diagram)
    return GameState(board=board, rules=Rules.preset(rules).with_komi(komi).to_core_tuple(), next_player=to_move)


def plain_params(**changes) -> SearchParams:
    """GTP defaults without the randomness and root-only hacks that make counts hard to predict."""
    base = dict(chosen_move_temperature=0.0, chosen_move_temperature_early=0.0, root_symmetry_pruning=False,
                subtree_value_bias_factor=0.0, enable_more_passing_hacks=False)
    base.update(changes)
    return SearchParams().replace(**base)


@pytest.mark.parametrize("threads", [1, 8])
def test_visits_add_up_and_virtual_losses_cleared(threads):
    searcher = Searcher(GameState(7), plain_params(num_search_threads=threads), MaterialEvaluator(), seed=3)
    stats = searcher.run(max_visits=400)
    tree = searcher.tree
    assert stats.visits == 400 == tree.root_visits
    assert tree.total_virtual_losses() == 0
    assert tree.check_invariants()
    children = sr.root_child_stats(tree)
    assert sum(c["edge_visits"] for c in children) == 400 - 1     # one visit is the root's own evaluation
    assert all(c["edge_visits"] == c["visits"] for c in children)
    if threads > 1:
        assert stats.average_batch_size > 2


def test_subtree_value_bias_and_passing_hacks_keep_tree_consistent():
    searcher = Searcher(GameState(5), SearchParams().replace(num_search_threads=4), MaterialEvaluator(), seed=4)
    searcher.run(max_visits=600)
    assert searcher.tree.total_virtual_losses() == 0
    assert searcher.tree.check_invariants()


def test_illegal_moves_never_searched_or_chosen():
    # White to move: (1, 0) is a ko recapture ban after Black captured; occupied points are illegal too.
    state = state_from("""
        .XO..
        XO.O.
        .XO..
        .....
        .....
    """, to_move=BLACK)
    state.play((2, 1), BLACK)          # captures at (1, 1): ko
    assert state.ko_point == (1, 1)
    searcher = Searcher(state, plain_params(num_search_threads=4), MaterialEvaluator(), seed=1)
    searcher.run(max_visits=300)
    legal = set(state.legal_moves())
    analysis = searcher.analysis(max_pv_len=1)
    assert analysis.moves
    assert all(m.move in legal for m in analysis.moves)
    assert (1, 1) not in {m.move for m in analysis.moves}
    assert searcher.best_move() in legal
    assert searcher.choose_move(temperature=1.0) in legal


def test_finds_a_capture_with_the_material_evaluator():
    state = state_from("""
        .....
        ..X..
        .XOX.
        .....
        .....
    """, to_move=BLACK)
    searcher = Searcher(state, plain_params(), MaterialEvaluator(), seed=2)
    searcher.run(max_visits=200)
    assert searcher.best_move() == (2, 3)


def test_tree_reuse_keeps_the_subtree():
    searcher = Searcher(GameState(7), plain_params(), MaterialEvaluator(), seed=5)
    searcher.run(max_visits=300)
    best = searcher.best_move()
    child_visits = {c["move"]: c["visits"] for c in sr.root_child_stats(searcher.tree)}[best]
    assert child_visits > 1
    assert searcher.advance(best)
    assert searcher.root_visits == child_visits
    assert searcher.root_player == WHITE
    stats = searcher.run(max_visits=child_visits + 50)
    assert stats.visits == child_visits + 50
    assert searcher.tree.check_invariants()


def test_advance_to_an_unexplored_move_starts_fresh():
    searcher = Searcher(GameState(7), plain_params(), MaterialEvaluator(), seed=5)
    searcher.run(max_visits=20)
    explored = {c["move"] for c in sr.root_child_stats(searcher.tree)}
    unexplored = next(p for p in GameState(7).legal_moves() if p not in explored and p is not None)
    assert not searcher.advance(unexplored)
    assert searcher.root_visits == 0
    searcher.run(max_visits=10)
    assert searcher.root_visits == 10


class SteppingClock:
    """Stands in for the searcher's ``time`` module: every reading advances by ``step`` seconds."""

    def __init__(self, step: float):
        self.step, self.now, self.readings = step, 0.0, 0

    def monotonic(self) -> float:
        self.now += self.step
        self.readings += 1
        return self.now


def test_max_time_is_honoured(monkeypatch):
    evaluator = MaterialEvaluator()
    searcher = Searcher(GameState(9), plain_params(), evaluator, seed=1)
    clock = SteppingClock(step=0.05)
    monkeypatch.setattr(searcher_module, "time", clock)
    stats = searcher.run(max_time=0.2)
    assert stats.stopped_by == "time"
    # It stops at the first check past 0.2 s (the final reading for stats.seconds is one step later).
    assert 0.2 <= stats.seconds <= 0.2 + 2 * clock.step
    assert stats.playouts >= 2


def test_stop_from_another_thread():
    searcher = Searcher(GameState(9), plain_params(num_search_threads=2), MaterialEvaluator(), seed=1)
    searcher.start(pondering=True)
    time.sleep(0.15)
    assert searcher.is_running
    # analysis() may run while the background search goes on.
    assert searcher.analysis().root.visits > 0
    stats = searcher.stop()
    assert stats.stopped_by == "stop"
    assert not searcher.is_running
    assert searcher.tree.total_virtual_losses() == 0


def test_terminal_pass_is_scored_from_the_rules():
    # Black owns everything; White passed. Black passing ends the game with a Black win.
    state = state_from("""
        .X...
        XX...
        .....
        .....
        .....
    """, to_move=WHITE, komi=0.5)
    state.play(None, WHITE)
    params = plain_params(conservative_pass=False)
    searcher = Searcher(state, params, MaterialEvaluator(pass_weight=5.0), seed=1)
    searcher.run(max_visits=200)
    children = {c["move"]: c for c in sr.root_child_stats(searcher.tree)}
    assert children[None]["terminal"]
    assert children[None]["utility"] < -0.9        # a sure Black win is a large negative White utility
    assert searcher.best_move() is None


def test_conservative_pass_keeps_the_root_pass_non_terminal():
    state = state_from("""
        .X...
        XX...
        .....
        .....
        .....
    """, to_move=WHITE)
    state.play(None, WHITE)
    searcher = Searcher(state, plain_params(conservative_pass=True), MaterialEvaluator(pass_weight=5.0), seed=1)
    searcher.run(max_visits=100)
    children = {c["move"]: c for c in sr.root_child_stats(searcher.tree)}
    assert None in children and not children[None]["terminal"]


def test_avoid_and_allow_restrict_root_moves():
    searcher = Searcher(GameState(5), plain_params(), MaterialEvaluator(), seed=1)
    allowed = [(0, 0), (4, 4), None]
    searcher.set_restrictions(MoveRestrictions(5, 5).allow(BLACK, allowed, 1))
    searcher.run(max_visits=100)
    assert {m.move for m in searcher.analysis().moves} <= set(allowed)
    searcher.set_restrictions(MoveRestrictions(5, 5).avoid(BLACK, [(2, 2)], 1))
    searcher.clear()
    searcher.run(max_visits=100)
    assert (2, 2) not in {m.move for m in searcher.analysis().moves}


def test_root_noise_and_temperature_keep_a_distribution():
    params = plain_params(root_noise_enabled=True, root_policy_temperature=1.5)
    searcher = Searcher(GameState(7), params, MaterialEvaluator(), seed=9)
    searcher.run(max_visits=50)
    priors = [m.prior for m in searcher.analysis(min_moves=1000).moves]
    assert abs(sum(priors) - 1.0) < 1e-3
    assert len(set(round(p, 6) for p in priors)) > 2          # noise made priors unequal


def test_lcb_picks_the_best_lower_bound_among_well_visited_moves():
    searcher = Searcher(GameState(7), plain_params(), MaterialEvaluator(), seed=11)
    searcher.run(max_visits=400)
    moves = searcher.analysis().moves
    best = moves[0]
    most = max(m.edge_visits for m in moves)
    eligible = [m for m in moves if m.edge_visits >= 0.15 * most and m.edge_visits > 0]
    # utility_lcb is White's view; Black (to move) wants it low.
    assert best.utility_lcb <= min(m.utility_lcb for m in eligible) + 1e-9


def test_ordering_and_perspective():
    searcher = Searcher(GameState(7), plain_params(), MaterialEvaluator(), seed=1)
    searcher.run(max_visits=200)
    white_view = searcher.analysis()
    black_view = white_view.oriented("B")
    assert [m.order for m in white_view.moves] == list(range(len(white_view.moves)))
    assert abs(white_view.root.winrate + black_view.root.winrate - 1.0) < 1e-9
    assert black_view.moves[0].score_lead == -white_view.moves[0].score_lead
    side_to_move = white_view.oriented(None)       # Black to move
    assert side_to_move.root.winrate == black_view.root.winrate


def test_root_symmetry_pruning_reports_symmetric_twins():
    params = plain_params(root_symmetry_pruning=True)
    searcher = Searcher(GameState(7), params, MaterialEvaluator(), seed=1)
    searcher.run(max_visits=100)
    moves = searcher.analysis().moves
    assert any(m.is_symmetry_of is not None for m in moves)
    assert len({m.move for m in moves}) == len(moves)


def test_concurrent_searches_share_a_batching_evaluator():
    fake = MaterialEvaluator()
    with BatchingEvaluator(fake, max_batch_size=64, max_wait_ms=2.0) as shared:
        searchers = [Searcher(GameState(7), plain_params(num_search_threads=4), shared, seed=i) for i in range(4)]
        threads = [threading.Thread(target=s.run, kwargs={"max_visits": 150}) for s in searchers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    assert all(s.root_visits == 150 for s in searchers)
    assert all(s.tree.total_virtual_losses() == 0 for s in searchers)
    assert fake.num_batches < sum(s.last_stats.batches for s in searchers)   # batches were merged


def test_evaluator_failure_leaves_a_clean_tree():
    class Flaky(MaterialEvaluator):
        calls = 0

        def evaluate(self, requests):
            Flaky.calls += 1
            if Flaky.calls == 5:
                raise RuntimeError("boom")
            return super().evaluate(requests)

    searcher = Searcher(GameState(7), plain_params(num_search_threads=4), Flaky(), seed=1)
    with pytest.raises(RuntimeError):
        searcher.run(max_visits=200)
    assert searcher.tree.total_virtual_losses() == 0
    searcher.run(max_visits=100)
    assert searcher.root_visits == 100


def test_malformed_output_is_rejected_before_the_tree_changes():
    import dataclasses

    class Truncating(MaterialEvaluator):
        calls = 0

        def evaluate(self, requests):
            outputs = super().evaluate(requests)
            Truncating.calls += 1
            if Truncating.calls == 3:
                outputs[-1] = dataclasses.replace(outputs[-1], policy=outputs[-1].policy[:-1])
            return outputs

    searcher = Searcher(GameState(7), plain_params(num_search_threads=4), Truncating(), seed=1)
    with pytest.raises(ValueError):
        searcher.run(max_visits=100)
    assert searcher.tree.total_virtual_losses() == 0
    assert searcher.tree.check_invariants()
    searcher.run(max_visits=50)
    assert searcher.root_visits == 50


def test_callback_reports_periodically_and_can_stop():
    searcher = Searcher(GameState(9), plain_params(), MaterialEvaluator(), seed=1)
    seen = []

    def callback(s):
        seen.append(s.analysis(max_pv_len=2).root.visits)
        return len(seen) >= 3

    stats = searcher.run(max_time=5.0, callback=callback, callback_period=0.05)
    assert stats.stopped_by == "callback"
    assert len(seen) >= 3 and seen == sorted(seen)
    assert stats.seconds < 2.0


def test_root_symmetry_sampling_averages_evaluations():
    evaluator = MaterialEvaluator()
    searcher = Searcher(GameState(7), plain_params(root_num_symmetries_to_sample=4), evaluator, seed=1)
    searcher.run(max_visits=30)
    assert searcher.root_visits == 30
    # The root took 4 evaluations and a plain one (KataGo's computeRootNNEvaluation: the score utility's
    # centre), every other node one (in graph search a transposition reuses its node).
    assert evaluator.num_positions_evaluated == 4 + 1 + searcher.tree.node_count() - 1
    assert searcher.tree.node_count() <= 30
    assert abs(sum(m.prior for m in searcher.analysis(min_moves=100).moves) - 1.0) < 1e-3


@pytest.mark.parametrize("threads", [1, 4])
def test_uncounted_passing_hack_playouts_do_not_use_up_the_visit_limit(threads):
    # Territory scoring after a pass: the passing hacks add uncounted playouts (KataGo's shouldCountPlayout).
    state = state_from("""
        .XO..
        .XO..
        XXOO.
        ..XO.
        .XXO.
    """, to_move=BLACK, rules="japanese")
    state.play(None, BLACK)
    searcher = Searcher(state, SearchParams().replace(num_search_threads=threads), MaterialEvaluator(pass_weight=3.0),
                        seed=1)
    stats = searcher.run(max_visits=400)
    assert stats.visits == stats.playouts == 400
    assert stats.leaves_evaluated > 399          # some evaluations came from uncounted playouts
    assert searcher.tree.total_virtual_losses() == 0 and searcher.tree.check_invariants()


def test_an_evaluator_that_does_not_mask_illegal_moves_cannot_make_the_search_play_them():
    """Priors on occupied points (a custom net, a careless fake) are dropped, not turned into children."""
    class Unmasked(MaterialEvaluator):
        def evaluate(self, requests):
            outputs = super().evaluate(requests)
            for out in outputs:  # uniform priors everywhere, stones or not
                out.policy = np.full_like(out.policy, 1.0 / (len(out.policy) + 1))
                out.policy_pass = 1.0 / (len(out.policy) + 1)
            return outputs

    state = state_from("""
        . X O . .
        . X O . .
        . X O . .
        . X O . .
        . X O . .
    """)
    searcher = Searcher(state, plain_params(), Unmasked(), seed=3)
    searcher.run(max_visits=300)
    assert searcher.root_visits == 300
    occupied = {(x, y) for y in range(5) for x in (1, 2)}
    analysis = searcher.analysis()
    assert analysis.moves and not occupied & {m.move for m in analysis.moves}
