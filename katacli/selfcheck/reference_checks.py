"""Self-checks against the bundled reference: input features and a tiny network's outputs.

The reference (``data/reference.npz``, written by scripts/make_selfcheck_reference.py from a build
verified against KataGo 1.17.2's own recorded outputs) holds, for KataGo reference positions of several
board sizes and rulesets, the V7 input planes and the outputs of the bundled tiny network
(``data/tiny-b2c16.bin.gz``). An installation that reproduces them computes rules, features and
network arithmetic like the verified build.
"""
from __future__ import annotations

import json
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np

from katacli.selfcheck.framework import CheckFailed, check, expect
from katacli.selfcheck.positions import SCALAR_NAMES, encode, evaluate, output_vector, query_player_and_symmetry, replay

DATA_DIR = Path(__file__).resolve().parent / "data"
TINY_MODEL_PATH = DATA_DIR / "tiny-b2c16.bin.gz"
REFERENCE_PATH = DATA_DIR / "reference.npz"
TINY_MODEL_VERSION = 15
# Tolerances: probabilities and ownership as the KataGo reference suggests for float32; scores a little
# looser since they are large numbers; an exported and reloaded network must agree almost exactly.
PROB_TOLERANCE = 1e-4
SCORE_TOLERANCE = 1e-2
SCORE_SQ_RELATIVE_TOLERANCE = 1e-3
ROUND_TRIP_TOLERANCE = 1e-5
SCORE_SCALARS = {"whiteLead", "whiteScoreSelfplay", "varTimeLeft", "shorttermWinlossError", "shorttermScoreError"}


@lru_cache(maxsize=1)
def reference() -> tuple[list[dict], dict[str, np.ndarray]]:
    """(case descriptions, arrays) of the bundled reference."""
    if not REFERENCE_PATH.exists():
        raise CheckFailed(f"the bundled reference is missing: {REFERENCE_PATH} (reinstall katacli)")
    with np.load(REFERENCE_PATH, allow_pickle=False) as data:
        arrays = {key: data[key] for key in data.files}
    return json.loads(str(arrays["cases_json"])), arrays


@lru_cache(maxsize=1)
def tiny_evaluator():
    from katacli.nn.evaluator import NNEvaluator

    if not TINY_MODEL_PATH.exists():
        raise CheckFailed(f"the bundled tiny network is missing: {TINY_MODEL_PATH} (reinstall katacli)")
    return NNEvaluator.from_file(TINY_MODEL_PATH, device="cpu", cache_size_power_of_two=None)


def encoded_cases():
    cases, arrays = reference()
    for i, case in enumerate(cases):
        session = replay(case["commands"])
        player, symmetry = query_player_and_symmetry(case["query"], session.state.next_player)
        spatial, global_features, legal, state = encode(session.state, player)
        yield i, case, (spatial, global_features, legal, state, player, symmetry), arrays


def compare_outputs(tag: str, got: dict[str, np.ndarray], expected: dict[str, np.ndarray], tolerance_scale=1.0) -> None:
    for name, value, want in zip(SCALAR_NAMES, got["scalars"], expected["scalars"]):
        if name == "whiteScoreSelfplaySq":
            limit = SCORE_SQ_RELATIVE_TOLERANCE * max(1.0, abs(want))
        else:
            limit = SCORE_TOLERANCE if name in SCORE_SCALARS else PROB_TOLERANCE
        if abs(value - want) > limit * tolerance_scale:
            raise CheckFailed(f"{tag}: {name} is {value:.6f}, expected {want:.6f}")
    illegal = expected["policy"] < 0
    if not np.array_equal(illegal, got["policy"] < 0):
        where = np.nonzero(illegal != (got["policy"] < 0))[0].tolist()
        raise CheckFailed(f"{tag}: legal moves differ at policy indices {where[:10]}")
    policy_diff = np.abs(got["policy"] - expected["policy"])[~illegal].max(initial=0.0)
    expect(policy_diff <= PROB_TOLERANCE * tolerance_scale, f"{tag}: policy differs by up to {policy_diff:.2e}")
    own_diff = np.abs(got["ownership"] - expected["ownership"]).max(initial=0.0)
    expect(own_diff <= PROB_TOLERANCE * tolerance_scale, f"{tag}: ownership differs by up to {own_diff:.2e}")


@check("features.reference", "input features of KataGo reference positions match the bundled reference")
def features_match() -> str:
    count = 0
    sizes = set()
    for i, case, (spatial, global_features, legal, state, _, _), arrays in encoded_cases():
        tag = case["id"]
        expected_spatial = arrays[f"{i}_spatial"]
        if spatial.shape != expected_spatial.shape:
            raise CheckFailed(f"{tag}: feature planes have shape {spatial.shape}, expected {expected_spatial.shape}")
        wrong = np.nonzero((spatial != expected_spatial).any(axis=(1, 2)))[0].tolist()
        expect(not wrong, f"{tag}: spatial feature planes {wrong} differ")
        global_diff = np.abs(global_features - arrays[f"{i}_global"])
        expect(global_diff.max() <= 1e-6, f"{tag}: global features {np.nonzero(global_diff > 1e-6)[0].tolist()} differ")
        expect(np.array_equal(legal, arrays[f"{i}_legal"]), f"{tag}: legal moves differ")
        count += 1
        sizes.add((state.x_size, state.y_size))
    return f"{count} positions, boards {', '.join(f'{x}x{y}' for x, y in sorted(sizes))}"


@check("network.load", "the bundled tiny network file loads")
def network_loads() -> str:
    evaluator = tiny_evaluator()
    expect(evaluator.version == TINY_MODEL_VERSION,
           f"model version read as {evaluator.version}, expected {TINY_MODEL_VERSION}")
    return f"{evaluator.model_name} (version {evaluator.version}, {TINY_MODEL_PATH.stat().st_size // 1024} KB)"


@check("network.reference", "the tiny network's outputs match the bundled reference")
def network_matches() -> str:
    evaluator = tiny_evaluator()
    count = 0
    for i, case, inputs, arrays in encoded_cases():
        got = output_vector(evaluate(evaluator, *inputs))
        expected = {key: arrays[f"{i}_{key}"] for key in ("scalars", "policy", "ownership")}
        compare_outputs(case["id"], got, expected)
        count += 1
    return f"{count} positions: value, score, policy, ownership"


@check("network.export", "a network exported and read back gives the same outputs")
def export_round_trip() -> str:
    from katacli.nn.evaluator import NNEvaluator
    from katacli.nn.export import export_model
    from katacli.nn.torch_model import load_model

    original = tiny_evaluator()
    with tempfile.TemporaryDirectory(prefix="kata-runtests-") as tmp:
        path = Path(tmp) / "exported.bin.gz"
        export_model(load_model(TINY_MODEL_PATH), path)
        reloaded = NNEvaluator.from_file(path, device="cpu", cache_size_power_of_two=None)
    for i, case, inputs, _ in encoded_cases():
        compare_outputs(f"{case['id']} after export", output_vector(evaluate(reloaded, *inputs)),
                        output_vector(evaluate(original, *inputs)), ROUND_TRIP_TOLERANCE / PROB_TOLERANCE)
    return "KataGo .bin.gz writer and reader agree"
