"""Human-SL nets through the Python API: Network.evaluate(profile=...), analyze(human_net=...) and
Engine(human_net=...), checked against KataGo's recorded kata-raw-human-nn outputs and the raw net."""
from __future__ import annotations

import json

import numpy as np
import pytest

import katacli
from support.reference_games import reference_game
from support.paths import G170_B6, HUMAN_TEST, model_path, reference_path

MAIN_MODEL = model_path(G170_B6, module=True)
HUMAN_MODEL = model_path(HUMAN_TEST, module=True)
REFERENCE = reference_path("kata-raw-human-nn.jsonl", module=True)
PROB_TOLERANCE = 1e-4
pytestmark = pytest.mark.needs_shared


@pytest.fixture(scope="module")
def human_net():
    return katacli.load_network(HUMAN_MODEL, symmetry=0, device="cpu")


@pytest.fixture(scope="module")
def main_net():
    return katacli.load_network(MAIN_MODEL, symmetry=0, device="cpu")


def first_symmetry_zero_case():
    for line in REFERENCE.read_text().splitlines():
        case = json.loads(line)
        if case["query"] == "kata-raw-human-nn 0":
            return case
    raise AssertionError("no symmetry-0 case in the reference")


def game_of(case) -> katacli.Game:
    game = reference_game(case)
    if game is None:
        pytest.skip("the case's set-up uses fixed_handicap or rectangular_boardsize")
    return game


def test_network_evaluate_with_a_profile_matches_katago(human_net):
    case = first_symmetry_zero_case()
    assert human_net.is_human_sl
    result = human_net.evaluate(game_of(case), symmetry=0, profile=case["human_sl_profile"])
    expected = case["expected"][0]
    assert abs(result.white_winrate - 0.5 * (1 + expected["whiteWin"] - expected["whiteLoss"])) <= PROB_TOLERANCE
    want = np.array([np.nan if p is None else p for p in expected["policy"]])
    got = result.policy.reshape(-1)
    legal = ~np.isnan(want)
    assert np.abs(got[legal] - want[legal]).max() <= PROB_TOLERANCE


def test_a_human_net_without_a_profile_says_what_to_pass(human_net):
    with pytest.raises(ValueError, match="profile="):
        human_net.evaluate(katacli.Game(9))
    with pytest.raises(ValueError, match="Unknown human SL network profile: rank_99k"):
        human_net.evaluate(katacli.Game(9), profile="rank_99k")


def test_analyze_with_a_human_net_reports_its_policy(main_net, human_net):
    game = katacli.Game(9, rules="japanese", komi=6.5).play_moves(["E5", "C3"])
    result = katacli.analyze(game, main_net, visits=30, seed=1, human_net=human_net, humanSLProfile="rank_1d",
                             ignorePreRootHistory=False)   # the raw evaluation below sees the history too
    raw = human_net.evaluate(game, symmetry=0, profile="rank_1d")
    human_policy = result.raw.human_policy
    assert human_policy is not None and len(human_policy) == 82
    legal = human_policy[:81] >= 0
    assert legal.sum() == 79
    assert np.abs(human_policy[:81][legal] - raw.policy.reshape(-1)[legal]).max() <= PROB_TOLERANCE
    assert all(m.human_prior is not None for m in result.raw.moves)
    # The same, the API's way: [row, column] like policy, and a human_prior on every move.
    assert result.human_policy.shape == (9, 9) == result.policy.shape
    assert np.array_equal(result.human_policy.reshape(-1), human_policy[:81])
    assert [m.human_prior for m in result.moves] == [m.human_prior for m in result.raw.moves]
    assert all(m.human_prior > 0 for m in result.moves)


def test_analyze_without_a_human_net_has_no_human_values(main_net):
    result = katacli.analyze(katacli.Game(9), main_net, visits=10, seed=1)
    assert result.human_policy is None and all(m.human_prior is None for m in result.moves)


def test_engine_with_a_human_net_imitates_the_profile(main_net, human_net):
    engine = katacli.Engine(main_net, size=9, visits=20, seed=3, human_net=human_net, humanSLProfile="rank_5k",
                            humanSLChosenMoveProp=1.0, humanSLChosenMovePiklLambda=1e9, chosenMoveTemperature=0,
                            chosenMoveTemperatureEarly=0)
    engine.play("B", "E5").play("W", "C3").play("B", "G4")   # no symmetry left to prune root moves by
    choice = engine.genmove("W", play=False)
    favourite = human_net.evaluate(engine.game, symmetry=0, profile="rank_5k").best_move
    assert choice.move == favourite
    engine.set_param("humanSLProfile", "proyear_2015")
    assert engine.genmove("W").color == "W"
