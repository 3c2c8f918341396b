"""Self-checks of human-SL networks (``-human-model``): SGF-metadata profiles and the search's use of the human
policy (`kata gtp -human-model` is checked by the GTP round trip, see :func:`check_raw_human_nn`).

The bundled ``data/tiny-b2c16-human.bin.gz`` has the layout of KataGo's human-SL nets (a metadata encoder,
``meta_encoder_version`` 1) with seeded random weights; ``data/reference.npz`` holds its outputs for a few
positions under several humanSLProfiles, recorded by scripts/make_selfcheck_reference.py from a build
that reproduces KataGo 1.17.2's own ``kata-raw-human-nn`` answers.
"""
from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

from katacli.selfcheck.framework import CheckFailed, check, expect
from katacli.selfcheck.positions import output_vector, replay
from katacli.selfcheck.reference_checks import DATA_DIR, compare_outputs, reference, tiny_evaluator

TINY_HUMAN_MODEL_PATH = DATA_DIR / "tiny-b2c16-human.bin.gz"
# Two profiles' policies must differ somewhere by at least this log-probability (about 10%), far more than
# float noise.
MIN_PROFILE_LOG_POLICY_DIFFERENCE = 0.1
SEARCH_VISITS = 16
SEARCH_SEED = 7
SEARCH_PROFILES = ("rank_20k", "rank_9d")
# The search starts from this recorded position (a 9x9 middle game, see REFERENCE_CASE_IDS in scripts/make_selfcheck_reference.py).
SEARCH_CASE_INDEX = 2
# What the GTP round trip (engine_checks.gtp_round_trip) asks `kata gtp -human-model` on a fresh board.
GTP_PROFILE = "rank_5k"
GTP_BOARD_SIZE = 9
GTP_SETUP = [f"boardsize {GTP_BOARD_SIZE}", "clear_board", "kata-set-rules tromp-taylor", "komi 7", "play B E5"]
GTP_POLICY_TOLERANCE = 1e-4


@lru_cache(maxsize=1)
def tiny_human_evaluator():
    from katacli.nn.evaluator import NNEvaluator

    if not TINY_HUMAN_MODEL_PATH.exists():
        raise CheckFailed(f"the bundled tiny human net is missing: {TINY_HUMAN_MODEL_PATH} (reinstall katacli)")
    # One fixed symmetry where none is asked for (the search's): the human favourites, and so the check's
    # outcome, are then the same on every run.
    return NNEvaluator.from_file(TINY_HUMAN_MODEL_PATH, device="cpu", cache_size_power_of_two=None,
                                 default_symmetry=0)


def _human_reference():
    """(profile names, [(case index, case, encoded inputs)], arrays) of the recorded human-net outputs."""
    from katacli.selfcheck.reference_checks import encoded_cases

    _, arrays = reference()
    if "human_json" not in arrays:
        raise CheckFailed("the bundled reference has no human-net outputs (reinstall katacli)")
    recorded = json.loads(str(arrays["human_json"]))
    cases = [(i, case, inputs) for i, case, inputs, _ in encoded_cases() if i in recorded["cases"]]
    return recorded["profiles"], cases, arrays


@check("human.reference", "the tiny human-SL net's outputs under several humanSLProfiles match the reference")
def human_matches() -> str:
    from katacli.nn.human_profile import parse_human_profile
    from katacli.selfcheck.positions import evaluate

    evaluator = tiny_human_evaluator()
    expect(evaluator.needs_metadata, "the bundled human net was not read as one taking SGF metadata")
    profiles, cases, arrays = _human_reference()
    for i, case, inputs in cases:
        for j, name in enumerate(profiles):
            got = output_vector(evaluate(evaluator, *inputs, parse_human_profile(name)))
            expected = {key: arrays[f"human_{i}_{j}_{key}"] for key in ("scalars", "policy", "ownership")}
            compare_outputs(f"{case['id']} as {name}", got, expected)
    return f"{len(cases)} positions x {len(profiles)} profiles ({', '.join(profiles)})"


@check("human.profiles", "humanSLProfiles give different human policies; a missing or unknown one is refused")
def profiles_differ() -> str:
    from katacli.search.raw_eval import evaluate_raw
    from katacli.nn.human_profile import HumanProfileError, parse_human_profile
    from katacli.selfcheck.positions import evaluate

    evaluator = tiny_human_evaluator()
    profiles, cases, _ = _human_reference()
    smallest = np.inf
    for _, case, inputs in cases:
        legal = inputs[2][:-1]
        log_policies = {name: np.log(np.asarray(evaluate(evaluator, *inputs, parse_human_profile(name)).policy)[legal])
                        for name in profiles}
        for a, name_a in enumerate(profiles):
            for name_b in profiles[a + 1:]:
                difference = np.abs(log_policies[name_a] - log_policies[name_b]).max()
                expect(difference >= MIN_PROFILE_LOG_POLICY_DIFFERENCE,
                       f"{case['id']}: profiles {name_a} and {name_b} give the same policy")
                smallest = min(smallest, difference)
    state = cases[0][2][3]  # any recorded position
    try:
        evaluate_raw(evaluator, state, state.next_player, [0], 0.0, profile=parse_human_profile(""))
    except ValueError:
        pass
    else:
        expect(False, "the human net was evaluated without a humanSLProfile")
    try:
        parse_human_profile("rank_30k")
    except HumanProfileError as exc:
        expect(str(exc) == "Unknown human SL network profile: rank_30k", f"unexpected error text: {exc}")
    else:
        expect(False, "humanSLProfile rank_30k was accepted")
    return f"any two profiles' policies differ by a factor {np.exp(smallest):.2f} or more somewhere"


@check("human.search", "with humanSLChosenMoveProp = 1 the search plays the human policy's favourite move")
def human_search() -> str:
    from katacli.config_keys.search_keys import HUMAN_SL_PIKL_LAMBDA_OFF
    from katacli.game.coords import format_vertex
    from katacli.search import Searcher, SearchParams

    cases, _ = reference()
    start = replay(cases[SEARCH_CASE_INDEX]["commands"]).state
    size = start.x_size
    chosen = []
    for profile in SEARCH_PROFILES:
        params = SearchParams.defaults("gtp").replace(
            max_visits=SEARCH_VISITS, num_search_threads=1, human_sl_profile=profile,
            human_sl_chosen_move_prop=1.0, human_sl_chosen_move_pikl_lambda=HUMAN_SL_PIKL_LAMBDA_OFF,
            chosen_move_temperature=0.0, chosen_move_temperature_early=0.0, root_symmetry_pruning=False)
        searcher = Searcher(start.copy(), params, tiny_evaluator(), seed=SEARCH_SEED,
                            human_evaluator=tiny_human_evaluator())
        searcher.run()
        human = searcher.root_human_output
        expect(human is not None, f"{profile}: the search did not evaluate the root with the human net")
        policy = np.append(np.asarray(human.policy, np.float64), human.policy_pass)
        favourite = int(np.argmax(policy))
        move = searcher.choose_move()
        index = size * size if move is None else move[1] * size + move[0]
        expect(index == favourite, f"{profile}: played policy index {index}, the human favourite is {favourite}")
        chosen.append(f"{profile} -> {format_vertex(move, size, size)}")
    return ", ".join(chosen)


def check_raw_human_nn(client, timeout: float) -> str:
    """Ask a running ``kata gtp -human-model TINY_HUMAN -override-config humanSLProfile=GTP_PROFILE`` (a
    GtpClient) for kata-raw-human-nn, compare it with the net evaluated here, and check that an unknown
    profile is refused with KataGo's message; a short description of what was checked."""
    from katacli.gtp.client import GtpCommandError
    from katacli.search.raw_eval import evaluate_raw
    from katacli.nn.human_profile import parse_human_profile
    from katacli.selfcheck.positions import GTP_ROOT_POLICY_OPTIMISM

    for command in GTP_SETUP:
        client.command(command, timeout)
    answer = client.command("kata-raw-human-nn 0", timeout)
    try:
        client.command("kata-set-param humanSLProfile rank_30k", timeout)
    except GtpCommandError as exc:
        expect("Unknown human SL network profile: rank_30k" in str(exc), f"unexpected error: {exc}")
    else:
        expect(False, "kata-set-param humanSLProfile rank_30k was accepted")
    state = replay(GTP_SETUP).state
    [here] = evaluate_raw(tiny_human_evaluator(), state, state.next_player, [0], GTP_ROOT_POLICY_OPTIMISM,
                          profile=parse_human_profile(GTP_PROFILE))
    lines = answer.splitlines()
    expect("policy" in lines, f"kata-raw-human-nn answered {answer[:60]!r}")
    start = lines.index("policy") + 1
    cells = [cell for row in lines[start:start + GTP_BOARD_SIZE] for cell in row.split()]
    expected = np.asarray(here.policy, np.float64)
    legal = expected >= 0
    expect([cell != "NAN" for cell in cells] == legal.tolist(), "kata-raw-human-nn's legal points differ")
    got = np.array([float(cell) for cell in cells if cell != "NAN"])
    difference = np.abs(got - expected[legal]).max()
    expect(difference <= GTP_POLICY_TOLERANCE, f"kata-raw-human-nn's policy differs by {difference:.2e}")
    return f"kata-raw-human-nn as {GTP_PROFILE}"
