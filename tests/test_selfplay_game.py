"""Self-play game mechanics: setup sampling, per-move limits, weights, komi estimation, game variants."""
from __future__ import annotations

import random
import re

import numpy as np
import pytest

from katacli._core.area import area_map
from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli.data import GT
from katacli.data.schema import MODE_CLEANUP, MODE_FORK, MODE_HANDICAP
from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import ScoringRule
from katacli.game.sgf import read_sgf
from katacli.selfplay import game as game_module
from katacli.selfplay.finish import apply_surprise_weighting, final_areas, final_value_targets, resolve_weight
from katacli.selfplay.game import GameRunner
from katacli.selfplay.game_init import GameInitializer, KomiPlan, default_max_extra_black, round_and_clip_komi
from katacli.selfplay.komi import adjust_komi_to_even, compute_lead
from katacli.selfplay.output import game_sgf, result_string
from katacli.selfplay.records import SearchTargets, TurnRecord, ValueTargets
from katacli.selfplay.rows import game_rows
from katacli.selfplay.searching import MoveSearchResult, RawNetSearcher, search_limits

from support.selfplay import play_games, random_handle, tiny_settings


# ---------------------------------------------------------------------------- setup


def test_initializer_draws_from_the_configured_lists():
    s = tiny_settings("komiStdev=2,komiAllowIntegerProb=0")
    init = GameInitializer(s.game, s.play, s.search)
    rng = random.Random(3)
    for _ in range(60):
        start = init.create(rng)
        ko, scoring, tax, suicide, button, *_ , komi = start.state.rules_tuple
        assert (start.state.x_size, start.state.y_size) == (7, 7)
        assert ko in s.game.ko_rules and scoring in s.game.scoring_rules and tax in s.game.tax_rules
        assert not (button and scoring != ScoringRule.AREA)
        assert komi * 2 == int(komi * 2) and komi != int(komi)  # half-integer only
        assert start.komi.extra_black == 0  # no handicap on 7x7 by default


def test_handicap_stone_counts():
    assert [default_max_extra_black(n) for n in (9, 11, 15, 16, 17, 18, 19)] == [0, 1, 2, 2, 3, 4, 5]
    s = tiny_settings("handicapProb=1.0,bSizes=19,dataBoardLen=19")
    init = GameInitializer(s.game, s.play, s.search)
    rng = random.Random(0)
    counts = {init.create(rng).komi.extra_black for _ in range(80)}
    assert counts == {1, 2, 3, 4, 5}


def test_komi_noise_and_rounding():
    state = GameState(9, 9)
    plan = KomiPlan(0, komi_mean=6.3, komi_stdev=0.0, allow_integer=True)
    rng = random.Random(1)
    seen = set()
    for _ in range(200):
        plan.set_with_noise(state, rng)
        seen.add(state.komi)
    assert seen == {6.0, 6.5}  # 6.3 rounds to the half-point grid without bias
    assert round_and_clip_komi(1000.0, 9, 9) == 101.0 and round_and_clip_komi(-2.25, 9, 9) == -2.5


def test_asymmetric_playouts_in_handicap_games_favour_white():
    s = tiny_settings("handicapProb=1.0,numExtraBlackFixed=1,handicapAsymmetricPlayoutProb=1.0,maxAsymmetricRatio=2,"
                      "maxVisits=40,cheapSearchVisits=20,reducedVisitsMin=20")
    start = GameInitializer(s.game, s.play, s.search).create(random.Random(2))
    assert start.komi.extra_black == 1 and start.pda_player == WHITE
    assert 0.0 <= start.playout_doubling_advantage <= 1.0


# ---------------------------------------------------------------------------- per move


def test_search_limits_playout_cap_randomization():
    s = tiny_settings("cheapSearchProb=1.0,cheapSearchVisits=4,cheapSearchTargetWeight=0")
    limits = search_limits(s.search, s.play, BLACK, random.Random(0), [], 0.0, 0)
    assert limits.is_cheap_search and limits.max_visits == 4 and limits.target_weight == 0.0
    assert limits.reuse_tree and limits.remove_root_noise and not limits.center_score
    s = tiny_settings("cheapSearchProb=0.0")
    full = search_limits(s.search, s.play, BLACK, random.Random(0), [], 0.0, 0)
    assert not full.is_cheap_search and full.max_visits == 12 and full.target_weight == 1.0


def test_search_limits_reduce_visits_in_decided_games():
    s = tiny_settings("cheapSearchProb=0,reduceVisitsThreshold=0.9,reduceVisitsThresholdLookback=2,"
                      "reducedVisitsMin=4,reducedVisitsWeight=0.1")
    rng = random.Random(0)
    undecided = search_limits(s.search, s.play, BLACK, rng, [0.99, 0.2], 0.0, 0)
    assert undecided.max_visits == 12 and undecided.target_weight == 1.0
    decided = search_limits(s.search, s.play, BLACK, rng, [0.99, 1.0], 0.0, 0)
    assert decided.center_score and not undecided.center_score  # KataGo centres only altered, cleared searches
    assert decided.max_visits == 6 and decided.target_weight == pytest.approx(1.0 + 0.81 * (0.1 - 1.0))
    lost = search_limits(s.search, s.play, BLACK, rng, [-1.0, -1.0], 0.0, 0)
    assert lost.max_visits == 4 and lost.target_weight == pytest.approx(0.1)


def test_search_limits_asymmetric_playouts():
    s = tiny_settings("cheapSearchProb=0,maxVisits=30")
    strong = search_limits(s.search, s.play, WHITE, random.Random(0), [], 1.0, WHITE)
    weak = search_limits(s.search, s.play, BLACK, random.Random(0), [], 1.0, WHITE)
    assert (strong.max_visits, weak.max_visits) == (40, 20)  # factor 2*2/3 and 2*1/3


def turn(weight: float, policy_surprise: float) -> TurnRecord:
    targets = SearchTargets({}, 10, ValueTargets(0.5, 0.5, 0, 0), [], 0, 0, 1.0, 0.5, 0.5, 0.0,
                            policy_surprise, 1.0, 1.0)
    return TurnRecord(BLACK, None, targets, weight, weight < 1)


def test_surprise_weighting_keeps_the_total_weight():
    s = tiny_settings("policySurpriseDataWeight=0.5,valueSurpriseDataWeight=0.1")
    turns = [turn(1.0, 0.1), turn(0.0, 3.0), turn(1.0, 1.0), turn(1.0, 0.2)]
    apply_surprise_weighting(turns, [0.05, 0.0, 0.3, 0.1], s.play)
    weights = [t.target_weight for t in turns]
    assert sum(weights) == pytest.approx(3.0)
    assert weights[1] > 0  # a cheap search that surprised the policy a lot earns some weight
    assert weights[2] > weights[0]


def test_resolve_weight_is_unbiased():
    rng = random.Random(5)
    draws = [resolve_weight(1.25, rng) for _ in range(4000)]
    assert set(draws) == {1.0, 2.0} and abs(np.mean(draws) - 1.25) < 0.03
    assert resolve_weight(-0.5, rng) == 0.0


def test_final_value_targets_draws():
    state = GameState(5, 5, (1, 0, 0, True, False, 0, False, 0.0))  # area scoring, integer komi 0
    for _ in range(2):
        state.play(None, state.next_player)
    assert state.is_game_finished and state.winner == 0
    v = final_value_targets(state, 0.7)
    assert (v.win, v.loss, v.no_result) == (0.7, pytest.approx(0.3), 0.0)
    assert v.score == pytest.approx(0.2) and v.has_lead  # draws shift the score by dew - 0.5
    assert v.score == state.white_komi_adjustment_for_draws(0.7)  # the core's float32 shift, as KataGo's


# White's wall is pass-alive only when multi-stone suicide is illegal (test_area.py's "suicide rule
# changes vitality"), so the final area depends on the game's pass-alive mode.
SUICIDE_CHANGES_VITALITY = """
X.OOOOOO.
OOX..XX.O
O...XOX.O
O...X.X.O
OXXX.XX.O
OX..X...O
O.XOX...O
O.XXX...O
.OOOOOOO.
"""


@pytest.mark.parametrize("always_pass_alive_under_suicide", [False, True])
def test_final_areas_follow_the_games_pass_alive_mode(always_pass_alive_under_suicide):
    board = GoBoard.from_diagram(SUICIDE_CHANGES_VITALITY.strip())
    state = GameState(board=board, rules=(1, 0, 0, False, False, 0, False, 0.5), next_player=BLACK)
    state.set_always_pass_alive_under_suicide_rules(always_pass_alive_under_suicide)
    zeros = [[0] * 9 for _ in range(9)]
    full, _, _ = final_areas(state, zeros)
    expected = np.array(area_map(board, True, True, True, always_pass_alive_under_suicide), np.int8)
    assert np.array_equal(full, expected)
    other = np.array(area_map(board, True, True, True, not always_pass_alive_under_suicide), np.int8)
    assert not np.array_equal(full, other)   # the position really tells the two modes apart


# ---------------------------------------------------------------------------- komi estimation


class LinearLead:
    """A fake search whose White lead is komi - 5.5, to check the fair-komi search."""

    def search(self, request):
        lead = request.state.komi - 5.5
        wl = float(np.tanh(lead / 4.0))
        return MoveSearchResult(None, 1, {}, ValueTargets(0.5 + wl / 2, 0.5 - wl / 2, 0, lead), wl, lead, {}, None)

    def set_net(self, net):
        pass

    def clear_tree(self):
        self.cleared = getattr(self, "cleared", 0) + 1


def test_adjust_komi_to_even_and_compute_lead():
    s = tiny_settings()
    for start_komi in (-20.0, 7.5, 30.0):
        state = GameState(9, 9, (1, 1, 0, False, False, 0, False, start_komi))  # territory scoring
        adjust_komi_to_even(LinearLead(), state, s.search, 20, random.Random(0))
        assert state.komi == 5.5
    state = GameState(9, 9, (1, 1, 0, False, False, 0, False, 7.5))
    assert compute_lead(LinearLead(), state, s.search, 20) == pytest.approx(2.0, abs=0.3)
    assert state.komi == 7.5


# ---------------------------------------------------------------------------- game variants


def test_handicap_games():
    s = tiny_settings("handicapProb=1.0,numExtraBlackFixed=2,handicapCompensateKomiProb=0,fancyKomiVarying=false,"
                      "initGamesWithPolicy=false")
    game = play_games(s, 1, seed=3)[0]
    assert game.mode == MODE_HANDICAP and game.num_extra_black == 2
    assert sum(1 for c, _ in game.end_state.initial_stones() if c == BLACK) == 2
    assert game.turns[0].player == BLACK  # Black still moves first: N extra black = N+1 stones' worth
    rows = game_rows(game, 9)
    if rows["globalTargetsNC"].shape[0]:
        assert (rows["globalTargetsNC"][:, GT.NUM_EXTRA_BLACK] == 2).all()
        assert (rows["globalTargetsNC"][:, GT.GAME_MODE] == MODE_HANDICAP).all()


def test_forked_games_continue_earlier_games():
    s = tiny_settings("earlyForkGameProb=0.5,forkGameProb=0.5,earlyForkGameExpectedMoveProp=0.2")
    runner = GameRunner(s, lambda model, rng: RawNetSearcher(model.net, rng))
    games = play_games(s, 6, seed=8, runner=runner)
    forks = [g for g in games if g.mode == MODE_FORK]
    assert forks, "with these probabilities some game must be a fork"
    for g in forks:
        assert g.start_turn_idx >= 1 and len(g.start_state.moves) == g.start_turn_idx
        # KataGo's root comment marks a game begun at an earlier game's position
        assert "gtype=fork,usedInitialPosition=1" in game_sgf(g)
    assert all("usedInitialPosition" not in game_sgf(g) for g in games if g.mode != MODE_FORK)


def test_cleanup_training_games_start_in_the_encore(monkeypatch):
    # Every eligible game is drawn for cleanup training. Forks and the policy opening are off, so each game
    # starts fresh in the main phase (a policy opening that passes twice would reach the encore first, and a
    # fork's position depends on earlier games); the cleanup opening itself may still end a game on 7x7,
    # which then has no encore to train.
    monkeypatch.setattr(game_module, "CLEANUP_TRAINING_PROB", 1.0)
    s = tiny_settings("scoringRules=TERRITORY,hasButtons=false,initGamesWithPolicy=false,"
                      "earlyForkGameProb=0,forkGameProb=0,sekiForkHackProb=0")
    phases = []
    for game in play_games(s, 16, seed=5):
        if game.start_state.is_game_finished:
            assert game.mode != MODE_CLEANUP and game.initial_encore_phase == 0
            continue
        assert game.mode == MODE_CLEANUP
        phase = game.start_state.encore_phase
        assert phase in (1, 2) and game.initial_encore_phase == phase
        phases.append(phase)
        g = game_rows(game, 9)["globalTargetsNC"]
        if phase == 2:  # the second encore scores like area scoring; phase 1 may move on to it later
            assert (g[:, GT.AREA_SCORING_LIKE] == 1.0).all()
        assert (g[:, GT.GAME_MODE] == MODE_CLEANUP).all()
    assert len(phases) >= 8 and set(phases) == {1, 2}  # both encore phases are drawn


class SwitchingModels:
    """Hands out model A for the first few acquires, then model B."""

    def __init__(self, first, second, switch_after: int):
        self.models, self.count, self.switch_after = (first, second), 0, switch_after

    def acquire(self):
        self.count += 1
        return self.models[0] if self.count <= self.switch_after else self.models[1]

    def release(self, handle):
        pass


def test_switching_nets_mid_game(monkeypatch):
    monkeypatch.setattr(game_module, "NEW_NET_CHECK_PROB", 1.0)
    s = tiny_settings("cheapSearchProb=0,policySurpriseDataWeight=0,valueSurpriseDataWeight=0,"
                      "sidePositionProb=0,initGamesWithPolicy=false")
    runner = GameRunner(s, lambda model, rng: RawNetSearcher(model.net, rng))
    source = SwitchingModels(random_handle("b2c16", 1), random_handle("b2c16", 2), switch_after=4)
    game = runner.run_game(random.Random(1), source)
    assert game.model_name == random_handle("b2c16", 2).name
    assert len(game.changed_nets) == 1 and game.changed_nets[0][1] == 4  # took over before turn 4
    g = game_rows(game, 9)["globalTargetsNC"]
    assert (g[:, GT.EARLIER_NET] == 1).all()
    turn_idx = g[:, GT.TURN_IDX]
    assert (g[turn_idx < 4, GT.NETS_BEHIND] == 1).all() and (g[turn_idx >= 4, GT.NETS_BEHIND] == 0).all()


def test_a_net_switched_in_mid_game_keeps_the_games_pass_alive_mode(monkeypatch):
    """As KataGo: the pass-alive mode is stamped on the game at its start; final areas and the rows'
    pass-alive flag keep it when a net preferring the other mode takes over."""
    import dataclasses

    monkeypatch.setattr(game_module, "NEW_NET_CHECK_PROB", 1.0)
    s = tiny_settings("cheapSearchProb=0,sidePositionProb=0,initGamesWithPolicy=false,multiStoneSuicideLegals=false")
    runner = GameRunner(s, lambda model, rng: RawNetSearcher(model.net, rng))
    prefers_suicide_rules = dataclasses.replace(random_handle("b2c16", 2), pass_alive_under_suicide=True)
    game = runner.run_game(random.Random(1), SwitchingModels(random_handle("b2c16", 1), prefers_suicide_rules, 4))
    assert game.changed_nets and game.model_name == prefers_suicide_rules.name
    assert not game.pass_alive_under_suicide and not game.end_state.suicide_legal_for_pass_alive()
    assert (game_rows(game, 9)["globalTargetsNC"][:, GT.PASS_ALIVE_UNDER_SUICIDE] == 0.0).all()


def test_mcts_games_and_their_sgf():
    s = tiny_settings("cheapSearchProb=0.5,estimateLeadProb=0.3,estimateLeadVisits=4,sidePositionProb=0.1")
    game = play_games(s, 1, seed=2, search="mcts")[0]
    full = [t for t in game.turns if not t.was_cheap_search]
    assert full and all(t.targets.unreduced_visits >= 12 for t in full)
    assert all(sum(t.targets.policy_target.values()) > 0 for t in game.turns)
    assert any(t.targets.q_values for t in full)
    text = game_sgf(game)
    record = read_sgf(text)
    assert record.moves == game.end_state.moves
    # RE, except for a game stopped at maxMovesPerGame (none there, as in KataGo's SGFs)
    assert record.result == (None if game.hit_turn_limit else result_string(game))
    assert record.komi == game.end_state.komi
    # KataGo's comments: training start, hash and game type at the root; search values, visits and
    # the unrounded row weight on every training move; the result on the last move.
    low, high = game.game_hash
    assert record.root_properties["C"] == [f"startTurnIdx={game.start_turn_idx},initTurnNum=0,"
                                           f"gameHash={high:016X}{low:016X},gtype=normal"]
    comments = re.findall(r";[BW]\[[a-z]*\](?:C\[([^\]]*)\])?", text)
    assert len(comments) == len(game.end_state.moves)
    for turn, comment in zip(game.turns, comments[game.start_turn_idx:]):
        v = turn.targets.value
        assert comment.startswith(f"{v.win:.2f} {v.loss:.2f} {v.no_result:.2f} {v.score:.1f} "
                                  f"v={turn.targets.unreduced_visits} weight={turn.target_weight_unrounded:.2f}")
    assert not any(comments[:game.start_turn_idx])
    assert comments[-1].endswith(f"result={result_string(game)}") == game.end_state.is_game_finished


def test_mcts_backend_reuses_trees_only_on_the_same_line_and_komi():
    from katacli.selfplay.mcts import MctsSelfplaySearch
    from katacli.selfplay.searching import MoveSearchRequest

    s = tiny_settings()
    search = MctsSelfplaySearch(random_handle().net, random.Random(0))
    state = GameState(7, 7, (1, 0, 0, True, False, 0, False, 7.5))
    twenty, four = (s.search.replace(max_visits=v, max_playouts=v) for v in (20, 4))
    search.search(MoveSearchRequest(state, twenty))
    same = search.search(MoveSearchRequest(state, four, reuse_tree=True))
    assert same.root_visits == 20  # the tree already had more visits than asked
    other_komi = state.copy()
    other_komi.set_komi(0.5)
    fresh = search.search(MoveSearchRequest(other_komi, four, reuse_tree=True))
    assert fresh.root_visits == 4
    moved = other_komi.copy()
    moved.play(fresh.move, BLACK)
    continued = search.search(MoveSearchRequest(moved, four, reuse_tree=True))
    assert continued.root_visits >= 4


def test_the_first_move_after_the_fair_komi_search_starts_from_a_fresh_tree():
    """The fair-komi probes search the game's start with noiseless settings at several komis; the game's
    first move must not continue the last probe's tree (kata match's first moves showed v=100 where every
    later move had its 8 visits; KataGo's setParams clears the tree after the probes)."""
    from katacli.selfplay.komi import adjust_komi_to_even, compute_lead
    from katacli.selfplay.mcts import MctsSelfplaySearch
    from katacli.selfplay.searching import MoveSearchRequest

    s = tiny_settings()
    search = MctsSelfplaySearch(random_handle().net, random.Random(0))
    probed = []
    probe_search = search.search
    search.search = lambda request: probed.append(request.state.komi) or probe_search(request)
    state = GameState(7, 7, (1, 0, 0, True, False, 0, False, 7.5))
    four = s.search.replace(max_visits=4, max_playouts=4)
    for estimate in (lambda: adjust_komi_to_even(search, state, s.search, 40, random.Random(1)),
                     lambda: compute_lead(search, state, s.search, 40)):
        estimate()
        state.set_komi(probed[-1])   # the game at the last probe's komi: its tree would fit
        assert probe_search(MoveSearchRequest(state, four, reuse_tree=True)).root_visits == 4


def test_mcts_backend_follows_the_game_into_the_encore():
    """A reused tree must see the encore a territory-scoring game enters after two passes.

    (It once advanced with GTP's prevent-encore rule, so cheap searches after the main phase
    searched a finished game and passed far more often than KataGo does.)
    """
    from katacli.selfplay.mcts import MctsSelfplaySearch
    from katacli.selfplay.searching import MoveSearchRequest

    s = tiny_settings()
    search = MctsSelfplaySearch(random_handle().net, random.Random(0))
    territory = (1, 1, 0, False, False, 0, False, 6.5)  # positional ko, territory scoring
    state = GameState(7, 7, territory)
    params = s.search.replace(max_visits=8, max_playouts=8)
    for pla, move in ((BLACK, (2, 2)), (WHITE, (4, 4)), (BLACK, None), (WHITE, None)):
        search.search(MoveSearchRequest(state, params, reuse_tree=True))
        state.play(move, pla)
    assert state.encore_phase == 1 and not state.is_game_finished
    search.search(MoveSearchRequest(state, params, reuse_tree=True))
    root = search._searcher.root_state
    assert (root.encore_phase, root.is_game_finished, root.moves) == (1, False, state.moves)


def test_policy_surprise_is_measured_against_the_noised_root_policy():
    """KataGo measures policy surprise and entropy against the priors its search used (temperature and noise)."""
    from katacli.selfplay.mcts import MctsSelfplaySearch
    from katacli.selfplay.searching import MoveSearchRequest

    s = tiny_settings()
    state = GameState(7, 7, (1, 0, 0, True, False, 0, False, 7.5))
    plain = s.search.replace(max_visits=8, max_playouts=8, root_noise_enabled=False, root_policy_temperature=1.0,
                             root_policy_temperature_early=1.0)
    noised = plain.replace(root_noise_enabled=True, root_dirichlet_noise_weight=0.25)
    results = [MctsSelfplaySearch(random_handle().net, random.Random(3)).search(MoveSearchRequest(state, p))
               for p in (plain, noised)]
    for result in results:
        assert abs(sum(result.root_policy.values()) - 1.0) < 1e-4
    raw_plain = dict(zip(results[0].raw.policy.moves, results[0].raw.policy.probs))
    assert all(abs(results[0].root_policy[m] - p) < 1e-6 for m, p in raw_plain.items())
    raw_noised = dict(zip(results[1].raw.policy.moves, results[1].raw.policy.probs))
    assert max(abs(results[1].root_policy[m] - p) for m, p in raw_noised.items()) > 1e-3


def test_a_lone_move_has_entropies_of_plus_zero_as_katago_writes_them():
    # KataGo sums -p log p from +0.0: a root with one legal move writes +0.0 (kata wrote -0.0 in C31 and C59).
    import math

    from katacli.selfplay.raw_policy import Policy
    from katacli.selfplay.searching import surprise_and_entropies

    assert math.copysign(1.0, Policy([None], np.array([1.0])).entropy()) == 1.0
    surprise, entropy = surprise_and_entropies({None: 5.0}, {None: 1.0})
    assert math.copysign(1.0, entropy) == 1.0 and math.copysign(1.0, surprise) == 1.0
    from katacli.selfplay.raw_policy import RawEval
    from katacli.selfplay.records import ValueTargets
    from katacli.selfplay.searching import MoveSearchResult, extract_targets

    result = MoveSearchResult(move=None, root_visits=5, play_selection_values={None: 5.0},
                              value=ValueTargets(0.5, 0.5, 0.0, 0.0), reported_win_loss=0.0, reported_lead=0.0,
                              root_policy={None: 1.0}, raw=RawEval(0.5, 0.5, 0.0, 0.0, Policy([None], np.array([1.0]))))
    targets = extract_targets(result)
    assert all(math.copysign(1.0, v) == 1.0 for v in (targets.policy_entropy, targets.search_entropy,
                                                       targets.raw_policy_entropy))


def test_sgf_writes_a_pass_for_ko_as_katago_does():
    """In the encore, retaking a blocked ko is a pass for ko: KataGo writes a pass, TR on the point, a comment."""
    import dataclasses

    game = play_games(tiny_settings(), 1, seed=4)[0]
    state = GameState(5, 5, (0, 1, 0, False, False, 0, False, 6.5))  # territory scoring
    ko_shape = [(BLACK, (1, 0)), (WHITE, (2, 0)), (BLACK, (0, 1)), (WHITE, (1, 1)), (BLACK, (1, 2)),
                (WHITE, (3, 1)), (BLACK, (4, 4)), (WHITE, (2, 2)), (BLACK, None), (WHITE, None)]
    for pla, move in ko_shape + [(BLACK, (2, 1))]:  # two passes start the encore; Black takes the ko
        state.play(move, pla)
    assert state.encore_phase == 1 and state.is_pass_for_ko((1, 1), WHITE)
    state.play((1, 1), WHITE)
    game = dataclasses.replace(game, end_state=state, scored_state=None, turns=[], start_turn_idx=0, mode=0)
    text = game_sgf(game)
    assert ";W[]TR[bb]C[Pass for ko]" in text and text.count("TR[") == 1
    assert read_sgf(text).moves[-1] == (WHITE, None)


def test_a_selfplay_game_stopped_at_the_move_limit_has_no_result_in_its_sgf():
    s = tiny_settings("maxMovesPerGame=6,initGamesWithPolicy=false,allowResignation=false,"
                      "earlyForkGameProb=0,forkGameProb=0,sekiForkHackProb=0")
    games = play_games(s, 4, seed=3, search="mcts")
    assert any(game.hit_turn_limit for game in games)
    for game in games:
        text = game_sgf(game)
        if game.hit_turn_limit:
            assert "RE[" not in text and "result=" not in text
        else:
            assert "RE[" in text
