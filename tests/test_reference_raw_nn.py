"""Golden test: replay KataGo 1.17.2's recorded ``kata-raw-nn`` cases and compare every output.

Each case in ``../shared/reference/kata-raw-nn.jsonl`` sets a position up with GTP commands
(board size, rules, komi, handicap, moves) and records KataGo's raw network output for one or
all eight symmetries. Matching it checks the rules engine (legality, ko and superko bans,
encore), the V7 input features (liberties, ladders, pass-alive areas, history, komi parity)
and the network arithmetic together. Tolerances are those the reference README suggests.
"""
from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pytest

from katacli._core.features import encode_v7
from katacli.game.coords import parse_color
from katacli.game.session import session_from_gtp_setup

from support.paths import model_path, reference_path

PROB_TOLERANCE = 1e-4
SCORE_TOLERANCE = 0.01
SCORE_SQ_RELATIVE_TOLERANCE = 1e-3
# KataGo's GTP engine evaluates kata-raw-nn with rootPolicyOptimism, 0.2 unless configured.
GTP_ROOT_POLICY_OPTIMISM = 0.2
NUM_SPATIAL, NUM_GLOBAL = 22, 19

REFERENCE = reference_path("kata-raw-nn.jsonl", module=True)
pytestmark = pytest.mark.needs_shared

torch = pytest.importorskip("torch")
from katacli.nn.evaluator import NNEvaluator, NNRequest  # noqa: E402


def load_cases():
    with open(REFERENCE) as f:
        return [json.loads(line) for line in f if line.strip()]


CASES = load_cases()


@lru_cache(maxsize=None)
def evaluator_for(model_file: str) -> NNEvaluator:
    path = model_path(model_file)
    torch.set_num_threads(1)
    return NNEvaluator.from_file(path, device="cpu")


def query_player_and_symmetries(query: str, to_move: int) -> tuple[int, list[int]]:
    args = query.split()[1:]
    if len(args) == 2:
        return parse_color(args[0]), [int(args[1])]
    return to_move, list(range(8)) if args[0] == "all" else [int(args[0])]


def assert_close(name, got, expected, tolerance):
    assert abs(got - expected) <= tolerance, f"{name}: got {got}, KataGo {expected}"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kata_raw_nn_matches_katago(case):
    assert_case_matches(case, evaluator_for(case["model_file"]))


def assert_case_matches(case, evaluator) -> None:
    """``evaluator``'s answers for the case's position equal KataGo's (test_nn_numpy_forward runs this too)."""
    session = session_from_gtp_setup(case["commands"])
    assert json.loads(session.rules.to_json_string()) == case["rules"]
    state = session.state
    player, symmetries = query_player_and_symmetries(case["query"], state.next_player)
    if player != state.next_player:
        # KataGo rebuilds the history with that player to move (ko and pass history reset).
        state = state.copy()
        state.reset_history_keep_board(player)

    x_size, y_size = session.x_size, session.y_size
    spatial = np.zeros((NUM_SPATIAL, y_size, x_size), np.float32)
    global_features = np.zeros(NUM_GLOBAL, np.float32)
    legal = np.zeros(x_size * y_size + 1, np.uint8)
    encode_v7(state, 0, spatial, global_features, legal)

    requests = [
        NNRequest(spatial, global_features, legal.astype(bool), board_x=x_size, board_y=y_size,
                  white_to_move=(player == 2), symmetry=s, policy_optimism=GTP_ROOT_POLICY_OPTIMISM)
        for s in symmetries
    ]
    outputs = evaluator.evaluate(requests)
    assert len(outputs) == len(case["expected"])
    for out, expected in zip(outputs, case["expected"]):
        assert out.symmetry == expected["symmetry"]
        tag = f"symmetry {expected['symmetry']}"
        assert_close(f"{tag} whiteWin", out.white_win, expected["whiteWin"], PROB_TOLERANCE)
        assert_close(f"{tag} whiteLoss", out.white_loss, expected["whiteLoss"], PROB_TOLERANCE)
        assert_close(f"{tag} noResult", out.no_result, expected["noResult"], PROB_TOLERANCE)
        assert_close(f"{tag} whiteLead", out.white_lead, expected["whiteLead"], SCORE_TOLERANCE)
        assert_close(f"{tag} whiteScoreSelfplay", out.white_score_mean, expected["whiteScoreSelfplay"],
                     SCORE_TOLERANCE)
        sq = expected["whiteScoreSelfplaySq"]
        assert abs(out.white_score_mean_sq - sq) <= SCORE_SQ_RELATIVE_TOLERANCE * max(1.0, abs(sq)), (
            f"{tag} whiteScoreSelfplaySq: got {out.white_score_mean_sq}, KataGo {sq}")
        for key, got in [("varTimeLeft", out.var_time_left),
                         ("shorttermWinlossError", out.shortterm_winloss_error),
                         ("shorttermScoreError", out.shortterm_score_error)]:
            assert_close(f"{tag} {key}", got, expected[key], SCORE_TOLERANCE)

        expected_policy = np.array([np.nan if p is None else p for p in expected["policy"]], np.float64)
        illegal = np.isnan(expected_policy)
        ours_illegal = out.policy < 0
        assert np.array_equal(illegal, ours_illegal), (
            f"{tag}: illegal points differ at {np.nonzero(illegal != ours_illegal)[0].tolist()}")
        diff = np.abs(out.policy[~illegal] - expected_policy[~illegal])
        assert diff.max(initial=0.0) <= PROB_TOLERANCE, f"{tag}: policy differs by {diff.max()}"
        assert_close(f"{tag} policyPass", out.policy_pass, expected["policyPass"], PROB_TOLERANCE)
        own_diff = np.abs(out.white_ownership - np.array(expected["whiteOwnership"]))
        assert own_diff.max() <= PROB_TOLERANCE, f"{tag}: ownership differs by {own_diff.max()}"
