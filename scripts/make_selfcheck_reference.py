"""Maintainer tool: regenerate the reference data `kata runtests` checks an installation against.

Not needed at run time. It writes into ``katacli/selfcheck/data/``:

* ``tiny-b2c16.bin.gz``: the smallest KataGo architecture (2 blocks, 16 channels) with seeded random
  weights, exported by katacli's own model writer (a few tens of KB);
* ``tiny-b2c16-human.bin.gz``: the same architecture with the SGF metadata encoder of KataGo's
  human-SL nets (``meta_encoder_version`` 1), also seeded random weights;
* ``reference.npz``: for a handful of positions, the input features katacli computes and the tiny
  network's outputs, and for a few of them the tiny human net's outputs under several humanSLProfiles.

The numbers are only worth recording from a build that is verified against KataGo itself, so the
script first replays every case of the shared KataGo 1.17.2 reference (``../shared/reference``) that
uses the ``test-b4c32`` network, and every ``kata-raw-human-nn`` case (a human-SL net under 12
profiles), and refuses to write anything if one output differs. The recorded positions are KataGo's
own reference positions (several board sizes, rulesets, handicap, a pass), so the features recorded
for them are the features that produced KataGo's numbers::

    python scripts/make_selfcheck_reference.py [--shared ../shared]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from katacli.selfcheck.positions import (
    SCALAR_NAMES, encode, evaluate, output_vector, query_player, query_player_and_symmetry, replay,
)

# A maintainer tool of the checkout (not installed): it writes into the source tree it lives in.
REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "katacli" / "selfcheck" / "data"
TINY_MODEL_PATH = DATA_DIR / "tiny-b2c16.bin.gz"
TINY_HUMAN_MODEL_PATH = DATA_DIR / "tiny-b2c16-human.bin.gz"
REFERENCE_PATH = DATA_DIR / "reference.npz"
DEFAULT_SHARED = REPO.parent / "shared"
VERIFY_MODEL = "test-b4c32.bin.gz"
TINY_CONFIG = "b2c16"
TINY_SEED = 20240611
TINY_MODEL_NAME = "katacli-selfcheck-b2c16"
HUMAN_VERIFY_MODEL = "human/test-b3c48nbt-humanmeta.bin.gz"
# A seed whose random policy, like a trained net's, prefers board moves to passing in the recorded
# positions, and differs between profiles (the human.search self-check wants both).
TINY_HUMAN_SEED = 20240622
TINY_HUMAN_MODEL_NAME = "katacli-selfcheck-b2c16-human"
HUMAN_META_ENCODER_VERSION = 1
# Profiles the tiny human net is recorded under: weak and strong modern amateurs, pre-AlphaZero,
# different ranks for Black and White, a professional year.
HUMAN_PROFILES = ("rank_20k", "rank_9d", "preaz_3d", "rank_3k_5d", "proyear_1990")
# Which recorded positions (indices into REFERENCE_CASE_IDS) the human net is recorded on: 19x19
# Tromp-Taylor and 9x9 AGA button with Black to move, 5x5 stone scoring with White to move (the
# metadata row describes the player to move).
HUMAN_CASE_INDICES = (0, 2, 4)
# KataGo reference cases whose positions are recorded: 19x19 Tromp-Taylor middle game, 19x19 Japanese
# 3-stone handicap late game, 9x9 AGA button, 9x13 rectangle, 5x5 stone scoring, 13x13 Chinese-OGS with
# negative komi evaluated for the other colour in symmetry 1, 11x11 AGA handicap, 19x19 Korean endgame.
REFERENCE_CASE_IDS = (
    "s1-g0-t110-b4c32-kata-raw-nn_0",
    "s1-g1-t189-b4c32-kata-raw-nn_0",
    "s1-g3-t44-b4c32-kata-raw-nn_0",
    "s1-g6-t122-b4c32-kata-raw-nn_0",
    "s1-g8-t17-b4c32-kata-raw-nn_0",
    "s1-g9-t150-b4c32-kata-raw-nn_b_1",
    "s1-g10-t84-b4c32-kata-raw-nn_0",
    "s1-g7-t312-b4c32-kata-raw-nn_0",
)
# The shared reference README's suggested tolerances for a float32 implementation.
PROB_TOLERANCE = 1e-4
SCORE_TOLERANCE = 0.01
SCORE_SQ_RELATIVE_TOLERANCE = 1e-3


# kata-raw-human-nn prints the score fields under other names (and no whiteLead or varTimeLeft).
HUMAN_FIELD_NAMES = {"whiteScore": "whiteScoreSelfplay", "whiteScoreSq": "whiteScoreSelfplaySq"}


def _mismatches(out, expected: dict) -> list[str]:
    got = dict(zip(SCALAR_NAMES, output_vector(out)["scalars"]))
    expected = {HUMAN_FIELD_NAMES.get(key, key): value for key, value in expected.items()}
    problems = []
    for name in ("whiteWin", "whiteLoss", "noResult", "policyPass"):
        if abs(got[name] - expected[name]) > PROB_TOLERANCE:
            problems.append(f"{name} {got[name]:.6f} vs {expected[name]:.6f}")
    for name in ("whiteLead", "whiteScoreSelfplay", "varTimeLeft", "shorttermWinlossError", "shorttermScoreError"):
        if name in expected and abs(got[name] - expected[name]) > SCORE_TOLERANCE:
            problems.append(f"{name} {got[name]:.3f} vs {expected[name]:.3f}")
    sq = expected["whiteScoreSelfplaySq"]
    if abs(got["whiteScoreSelfplaySq"] - sq) > SCORE_SQ_RELATIVE_TOLERANCE * max(1.0, abs(sq)):
        problems.append(f"whiteScoreSelfplaySq {got['whiteScoreSelfplaySq']:.3f} vs {sq:.3f}")
    policy = np.array([np.nan if p is None else p for p in expected["policy"]])
    illegal = np.isnan(policy)
    if not np.array_equal(illegal, np.asarray(out.policy) < 0):
        problems.append("illegal points differ")
    elif np.abs(np.asarray(out.policy)[~illegal] - policy[~illegal]).max(initial=0) > PROB_TOLERANCE:
        problems.append("policy differs")
    if np.abs(np.asarray(out.white_ownership) - np.array(expected["whiteOwnership"])).max() > PROB_TOLERANCE:
        problems.append("ownership differs")
    return problems


def verify_against_katago(shared: Path) -> dict[str, dict]:
    """Replay KataGo's recorded test-b4c32 cases; exit if any differs. Returns the cases by id."""
    from katacli.nn.evaluator import NNEvaluator

    cases = [json.loads(line) for line in (shared / "reference" / "kata-raw-nn.jsonl").read_text().splitlines()
             if line.strip()]
    cases = {c["id"]: c for c in cases if c["model_file"] == VERIFY_MODEL}
    evaluator = NNEvaluator.from_file(shared / "models" / VERIFY_MODEL, device="cpu", cache_size_power_of_two=None)
    failures = []
    for case in cases.values():
        if case["query"].split()[1:] == ["all"]:
            continue  # the single-symmetry cases cover the same positions
        session = replay(case["commands"])
        player, symmetry = query_player_and_symmetry(case["query"], session.state.next_player)
        spatial, global_features, legal, state = encode(session.state, player)
        problems = _mismatches(evaluate(evaluator, spatial, global_features, legal, state, player, symmetry),
                               case["expected"][0])
        if problems:
            failures.append(f"{case['id']}: {'; '.join(problems)}")
    if failures:
        sys.exit("this build does not reproduce KataGo's reference; not recording anything:\n" + "\n".join(failures))
    print(f"verified: {len(cases)} KataGo reference cases reproduced", file=sys.stderr)
    return cases


def verify_human_against_katago(shared: Path) -> None:
    """Replay KataGo's recorded kata-raw-human-nn cases (every symmetry of each); exit if any differs."""
    from katacli.nn.evaluator import NNEvaluator
    from katacli.nn.human_profile import parse_human_profile

    cases = [json.loads(line) for line in (shared / "reference" / "kata-raw-human-nn.jsonl").read_text().splitlines()
             if line.strip()]
    evaluator = NNEvaluator.from_file(shared / "models" / HUMAN_VERIFY_MODEL, device="cpu",
                                      cache_size_power_of_two=None)
    failures = []
    evaluations = 0
    for case in cases:
        if case["model_file"] != HUMAN_VERIFY_MODEL:
            sys.exit(f"{case['id']}: unexpected human model {case['model_file']}")
        # The last set-up command sets the profile (kata-set-param humanSLProfile ...), not the position.
        session = replay([c for c in case["commands"] if not c.startswith("kata-set-param ")])
        profile = parse_human_profile(case["human_sl_profile"])
        player = query_player(case["query"], session.state.next_player)
        spatial, global_features, legal, state = encode(session.state, player)
        for expected in case["expected"]:
            out = evaluate(evaluator, spatial, global_features, legal, state, player, expected["symmetry"], profile)
            evaluations += 1
            problems = _mismatches(out, expected)
            if problems:
                failures.append(f"{case['id']} symmetry {expected['symmetry']}: {'; '.join(problems)}")
    if failures:
        sys.exit("this build does not reproduce KataGo's human-SL reference; not recording anything:\n"
                 + "\n".join(failures))
    print(f"verified: {len(cases)} KataGo kata-raw-human-nn cases ({evaluations} evaluations) reproduced",
          file=sys.stderr)


def write_tiny_models() -> None:
    from katacli.nn.configs import random_description
    from katacli.nn.export import write_model_file

    DATA_DIR.mkdir(parents=True, exist_ok=True)
    write_model_file(random_description(TINY_CONFIG, seed=TINY_SEED, model_name=TINY_MODEL_NAME), TINY_MODEL_PATH)
    human = random_description(TINY_CONFIG, seed=TINY_HUMAN_SEED, model_name=TINY_HUMAN_MODEL_NAME,
                               meta_encoder_version=HUMAN_META_ENCODER_VERSION)
    write_model_file(human, TINY_HUMAN_MODEL_PATH)
    for path in (TINY_MODEL_PATH, TINY_HUMAN_MODEL_PATH):
        print(f"wrote {path} ({path.stat().st_size} bytes)", file=sys.stderr)


def record(cases: dict[str, dict]) -> None:
    from katacli.nn.evaluator import NNEvaluator
    from katacli.nn.human_profile import parse_human_profile

    evaluator = NNEvaluator.from_file(TINY_MODEL_PATH, device="cpu", cache_size_power_of_two=None)
    human = NNEvaluator.from_file(TINY_HUMAN_MODEL_PATH, device="cpu", cache_size_power_of_two=None)
    profiles = [parse_human_profile(name) for name in HUMAN_PROFILES]
    arrays: dict[str, np.ndarray] = {}
    meta = []
    for i, case_id in enumerate(REFERENCE_CASE_IDS):
        case = cases[case_id]
        session = replay(case["commands"])
        player, symmetry = query_player_and_symmetry(case["query"], session.state.next_player)
        inputs = encode(session.state, player)
        out = evaluate(evaluator, *inputs, player, symmetry)
        arrays[f"{i}_spatial"], arrays[f"{i}_global"], arrays[f"{i}_legal"], _ = inputs
        for key, value in output_vector(out).items():
            arrays[f"{i}_{key}"] = value
        if i in HUMAN_CASE_INDICES:
            for j, profile in enumerate(profiles):
                for key, value in output_vector(evaluate(human, *inputs, player, symmetry, profile)).items():
                    arrays[f"human_{i}_{j}_{key}"] = value
        meta.append({"id": case_id, "commands": case["commands"], "query": case["query"]})
    arrays["cases_json"] = np.array(json.dumps(meta))
    arrays["human_json"] = np.array(json.dumps({"profiles": HUMAN_PROFILES, "cases": HUMAN_CASE_INDICES}))
    np.savez_compressed(REFERENCE_PATH, **arrays)
    print(f"wrote {REFERENCE_PATH} ({REFERENCE_PATH.stat().st_size} bytes, {len(meta)} positions)", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", default=str(DEFAULT_SHARED), help="the shared folder with KataGo's reference")
    args = parser.parse_args(argv)
    cases = verify_against_katago(Path(args.shared))
    verify_human_against_katago(Path(args.shared))
    write_tiny_models()
    record(cases)
    return 0


if __name__ == "__main__":
    sys.exit(main())
