"""Golden check of the network stack against KataGo 1.17.2's ``kata-raw-nn`` output.

Only the empty-board reference cases are used here: their V7 input features are simple
enough to build by hand (``empty_board_features`` below follows nninputs.cpp fillRowV7), so
this checks the model file reader, the network arithmetic, symmetries and postprocessing
without a board engine. The full replay of every case lives in test_reference_raw_nn.py.
"""
from __future__ import annotations

import json
import math
from functools import lru_cache

import numpy as np
import pytest

from katacli.nn.evaluator import NNEvaluator, NNRequest

from support.paths import MODELS, model_path, reference_path, require

REFERENCE = reference_path("kata-raw-nn.jsonl", module=True)
require(MODELS, module=True)
pytestmark = pytest.mark.needs_shared

# Tolerances suggested by the reference README.
PROB_TOLERANCE = 1e-4
SCORE_TOLERANCE = 0.01
SCORE_SQ_RELATIVE_TOLERANCE = 1e-3
# KataGo's GTP engine evaluates kata-raw-nn with rootPolicyOptimism, 0.2 unless configured.
GTP_ROOT_POLICY_OPTIMISM = 0.2

NUM_SPATIAL, NUM_GLOBAL = 22, 19
# fillRowV7 global feature indices
G_SELF_KOMI, G_KO_NOT_SIMPLE, G_KO_KIND, G_SUICIDE, G_TERRITORY, G_TAX, G_TAX_ALL = 5, 6, 7, 8, 9, 10, 11
G_BUTTON, G_KOMI_PARITY_WAVE = 17, 18
KOMI_SCALE = 20.0
KOMI_CLIP_RADIUS = 20.0


def komi_parity_wave(self_komi: float, board_area: int) -> float:
    """Triangle wave of the komi relative to the nearest komi that allows a draw (fillRowV7)."""
    self_komi = np.float32(self_komi)
    if board_area % 2 == 0:
        komi_floor = math.floor(self_komi / 2.0) * 2.0
    else:
        komi_floor = math.floor((self_komi - 1.0) / 2.0) * 2.0 + 1.0
    delta = min(max(float(self_komi - np.float32(komi_floor)), 0.0), 2.0)
    if delta < 0.5:
        return delta
    if delta < 1.5:
        return 1.0 - delta
    return delta - 2.0


def empty_board_features(x_size: int, y_size: int, komi: float, rules: dict, white_to_move: bool):
    """V7 features of an empty board with no history (so no stones, ko, ladders, areas or passes)."""
    spatial = np.zeros((NUM_SPATIAL, y_size, x_size), np.float32)
    spatial[0] = 1.0  # on board
    g = np.zeros(NUM_GLOBAL, np.float32)
    area = x_size * y_size
    # No handicap stones and no button taken yet, so only komi counts; drawEquivalentWinsForWhite = 0.5.
    self_komi = komi if white_to_move else -komi
    self_komi = min(max(self_komi, -area - KOMI_CLIP_RADIUS), area + KOMI_CLIP_RADIUS)
    g[G_SELF_KOMI] = self_komi / KOMI_SCALE
    if rules["ko"] in ("POSITIONAL", "SPIGHT"):
        g[G_KO_NOT_SIMPLE], g[G_KO_KIND] = 1.0, 0.5
    elif rules["ko"] == "SITUATIONAL":
        g[G_KO_NOT_SIMPLE], g[G_KO_KIND] = 1.0, -0.5
    if rules["suicide"]:
        g[G_SUICIDE] = 1.0
    if rules["scoring"] == "TERRITORY":
        g[G_TERRITORY] = 1.0
    if rules["tax"] in ("SEKI", "ALL"):
        g[G_TAX] = 1.0
    if rules["tax"] == "ALL":
        g[G_TAX_ALL] = 1.0
    # Encore phase 0, a pass ends nothing, no playout doubling advantage.
    if rules["hasButton"]:
        g[G_BUTTON] = 1.0
    if rules["scoring"] == "AREA":
        g[G_KOMI_PARITY_WAVE] = komi_parity_wave(self_komi, area)
    return spatial, g


def load_empty_board_cases():
    cases = [json.loads(line) for line in REFERENCE.read_text().splitlines() if line.strip()]
    return [c for c in cases if not any(cmd.split()[0] in ("play", "fixed_handicap") for cmd in c["commands"])]


CASES = load_empty_board_cases()


def case_setup(case):
    x_size = y_size = None
    komi = None
    for command in case["commands"]:
        name, *args = command.split()
        if name == "boardsize":
            x_size = y_size = int(args[0])
        elif name == "rectangular_boardsize":
            x_size, y_size = int(args[0]), int(args[1])
        elif name == "komi":
            komi = float(args[0])
    args = case["query"].split()[1:]
    white = False  # Black moves first on an empty board
    if args[0] in ("b", "w"):
        white = args[0] == "w"
        args = args[1:]
    symmetries = list(range(8)) if args[0] == "all" else [int(args[0])]
    return x_size, y_size, komi, white, symmetries


@lru_cache(maxsize=None)
def evaluator(model_file: str, fuse: bool = True) -> NNEvaluator:
    path = model_path(model_file)
    return NNEvaluator.from_file(path, device="cpu", cache_size_power_of_two=None, fuse=fuse)


def evaluate_case(case, fuse: bool = True):
    x_size, y_size, komi, white, symmetries = case_setup(case)
    spatial, global_features = empty_board_features(x_size, y_size, komi, case["rules"], white)
    legal = np.ones(x_size * y_size + 1, bool)
    requests = [
        NNRequest(spatial, global_features, legal, board_x=x_size, board_y=y_size, white_to_move=white,
                  symmetry=s, policy_optimism=GTP_ROOT_POLICY_OPTIMISM)
        for s in symmetries
    ]
    return evaluator(case["model_file"], fuse).evaluate(requests)


def assert_matches(out, expected):
    tag = f"symmetry {expected['symmetry']}"
    assert out.symmetry == expected["symmetry"]
    for name, got, key in [("whiteWin", out.white_win, "whiteWin"), ("whiteLoss", out.white_loss, "whiteLoss"),
                           ("noResult", out.no_result, "noResult"), ("policyPass", out.policy_pass, "policyPass")]:
        assert abs(got - expected[key]) <= PROB_TOLERANCE, f"{tag} {name}: got {got}, KataGo {expected[key]}"
    for name, got in [("whiteLead", out.white_lead), ("whiteScoreSelfplay", out.white_score_mean),
                      ("varTimeLeft", out.var_time_left), ("shorttermWinlossError", out.shortterm_winloss_error),
                      ("shorttermScoreError", out.shortterm_score_error)]:
        assert abs(got - expected[name]) <= SCORE_TOLERANCE, f"{tag} {name}: got {got}, KataGo {expected[name]}"
    sq = expected["whiteScoreSelfplaySq"]
    assert abs(out.white_score_mean_sq - sq) <= SCORE_SQ_RELATIVE_TOLERANCE * max(1.0, abs(sq)), f"{tag} scoreSq"
    assert None not in expected["policy"]  # nothing is illegal on an empty board
    policy_diff = np.abs(out.policy - np.array(expected["policy"]))
    assert policy_diff.max() <= PROB_TOLERANCE, f"{tag}: policy differs by {policy_diff.max()}"
    own_diff = np.abs(out.white_ownership - np.array(expected["whiteOwnership"]))
    assert own_diff.max() <= PROB_TOLERANCE, f"{tag}: ownership differs by {own_diff.max()}"


def test_empty_board_cases_cover_every_model_and_query_kind():
    assert len(CASES) >= 20
    assert {c["model_file"] for c in CASES} == {p.name for p in MODELS.glob("*.bin.gz")}
    queries = {c["query"].split()[1] for c in CASES}
    assert {"0", "all", "b", "w"} <= queries


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_empty_board_matches_katago(case):
    outputs = evaluate_case(case)
    assert len(outputs) == len(case["expected"])
    for out, expected in zip(outputs, case["expected"]):
        assert_matches(out, expected)


FIRST_CASE_PER_MODEL = list({c["model_file"]: c for c in reversed(CASES)}.values())


@pytest.mark.parametrize("case", FIRST_CASE_PER_MODEL, ids=[c["id"] for c in FIRST_CASE_PER_MODEL])
def test_unfused_model_matches_katago(case):
    """The model run exactly as loaded (batch norms not folded) matches too."""
    for out, expected in zip(evaluate_case(case, fuse=False), case["expected"]):
        assert_matches(out, expected)


def test_komi_parity_wave_examples():
    # 19x19 (odd area): drawable komis are odd; -7.5 sits 1.5 above -9 -> on the falling edge.
    assert komi_parity_wave(-7.5, 361) == pytest.approx(-0.5)
    assert komi_parity_wave(7.5, 361) == pytest.approx(0.5)
    assert komi_parity_wave(-7.0, 81) == 0.0
    assert komi_parity_wave(0.0, 25) == 0.0  # 1 above the drawable -1
    assert komi_parity_wave(6.5, 36) == pytest.approx(0.5)  # even area: drawable komis are even
    assert komi_parity_wave(0.25, 36) == pytest.approx(0.25)
