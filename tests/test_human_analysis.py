"""`kata analysis -human-model` as KaTrain drives it: humanSLProfile in overrideSettings, humanPolicy
with includePolicy (checked against the raw human net), humanPrior per move and the human root values."""
from __future__ import annotations

import json
import subprocess

import numpy as np
import pytest

from test_analysis_cli import KATRAIN_LIKE_CONFIG, EngineProcess
from support.gtp import python_cli
from support.paths import G170_B6, HUMAN_TEST, model_path

MAIN_MODEL = model_path(G170_B6, module=True)
HUMAN_MODEL = model_path(HUMAN_TEST, module=True)
pytestmark = [pytest.mark.needs_shared, pytest.mark.subprocess]
PROB_TOLERANCE = 1e-4
HUMAN_ROOT_FIELDS = ("humanWinrate", "humanScoreMean", "humanScoreStdev", "humanStWrError", "humanStScoreError")



@pytest.fixture
def katrain_engine(tmp_path):
    config = tmp_path / "analysis_config.cfg"
    config.write_text(KATRAIN_LIKE_CONFIG.format(log_dir=tmp_path / "logs"))
    engine = EngineProcess(["-model", str(MAIN_MODEL), "-human-model", str(HUMAN_MODEL), "-config", str(config),
                            "-analysis-threads", "2", "-override-config",
                            f"homeDataDir={tmp_path},nnRandomize=false"])
    yield engine
    engine.kill()


def raw_human_policy(profile: str, moves, size: int, white_to_move: bool) -> np.ndarray:
    """The human net's policy (board points, then pass) for this position, straight from the network,
    with the input settings an analysis search uses (passing hacks as configured)."""
    import dataclasses

    import torch

    from katacli.game.session import session_from_gtp_setup
    from katacli.nn.evaluator import NNEvaluator
    from katacli.nn.human_profile import parse_human_profile
    from katacli.search.params import SearchParams
    from katacli.search.raw_eval import position_request

    torch.set_num_threads(1)
    evaluator = NNEvaluator.from_file(HUMAN_MODEL, device="cpu", default_symmetry=0)
    commands = [f"boardsize {size}", "clear_board", "kata-set-rules japanese", "komi 6.5"]
    commands += [f"play {color} {vertex}" for color, vertex in moves]
    state = session_from_gtp_setup(commands).state
    # The query gives the stones as initialStones: no move history reaches the network.
    state.reset_history_keep_board(2 if white_to_move else 1)
    request = position_request(state, state.next_player, meta_profile=parse_human_profile(profile),
                               needs_metadata=True)
    request = dataclasses.replace(request, enable_passing_hacks=SearchParams.defaults("analysis").enable_passing_hacks)
    out = evaluator.evaluate([request])[0]
    return np.append(np.asarray(out.policy, np.float64), out.policy_pass)


def test_katrain_human_profile_query_reports_the_human_policy(katrain_engine):
    moves = [["B", "Q16"], ["W", "D4"], ["B", "C16"]]
    query = {"id": "HUMAN:1", "rules": "japanese", "analyzeTurns": [0], "maxVisits": 16, "komi": 6.5,
             "boardXSize": 19, "boardYSize": 19, "includePolicy": True, "moves": [], "initialStones": moves,
             "initialPlayer": "W",
             "overrideSettings": {"humanSLProfile": "rank_3k", "reportAnalysisWinratesAs": "BLACK"}}
    katrain_engine.send(json.dumps(query))
    result = katrain_engine.next()
    assert result["id"] == "HUMAN:1", result
    human_policy = np.array(result["humanPolicy"], np.float64)
    assert len(human_policy) == 362 and len(result["policy"]) == 362
    expected = raw_human_policy("rank_3k", moves, 19, white_to_move=True)
    legal = expected >= 0
    assert np.array_equal(human_policy >= 0, legal)
    assert np.abs(human_policy[legal] - expected[legal]).max() <= PROB_TOLERANCE
    assert not np.allclose(human_policy, np.array(result["policy"])), "human and main policies are different nets"
    for info in result["moveInfos"]:
        assert "humanPrior" in info
    root = result["rootInfo"]
    assert all(name in root for name in HUMAN_ROOT_FIELDS), root
    assert 0.0 <= root["humanWinrate"] <= 1.0 and root["humanScoreStdev"] >= 0.0

    # A different rank changes the human policy; no profile means no human output at all.
    katrain_engine.send(json.dumps(dict(query, id="HUMAN:2", overrideSettings={"humanSLProfile": "proyear_1850"})))
    other = katrain_engine.next()
    assert not np.allclose(np.array(other["humanPolicy"]), human_policy)
    katrain_engine.send(json.dumps(dict(query, id="PLAIN", overrideSettings={})))
    plain = katrain_engine.next()
    assert "humanPolicy" not in plain and "humanWinrate" not in plain["rootInfo"]
    assert katrain_engine.close_stdin_and_wait() == 0
    assert "humanSLProfile is not yet set" in katrain_engine.stderr_text


def test_query_models_lists_both_networks(katrain_engine):
    katrain_engine.send('{"id":"m","action":"query_models"}')
    models = katrain_engine.next()["models"]
    assert [m["usesHumanSLProfile"] for m in models] == [False, True]
    assert models[1]["name"].endswith("test-b3c48nbt-humanmeta.bin.gz")
    assert katrain_engine.close_stdin_and_wait() == 0


def test_bad_profile_is_an_error_reply_and_the_engine_keeps_running(katrain_engine):
    query = {"id": "BAD", "rules": "japanese", "analyzeTurns": [0], "maxVisits": 4, "komi": 6.5, "boardXSize": 9,
             "boardYSize": 9, "moves": [], "overrideSettings": {"humanSLProfile": "rank_42k"}}
    katrain_engine.send(json.dumps(query))
    reply = katrain_engine.next()
    assert reply["id"] == "BAD" and "Unknown human SL network profile: rank_42k" in reply["error"], reply
    katrain_engine.send(json.dumps(dict(query, id="GOOD", overrideSettings={"humanSLProfile": "rank_1d"})))
    good = katrain_engine.next()
    assert good["id"] == "GOOD" and "humanPrior" in good["moveInfos"][0]
    assert katrain_engine.close_stdin_and_wait() == 0


def test_a_human_net_without_a_profile_answers_with_the_setting_to_give(tmp_path):
    engine = EngineProcess(["-model", str(HUMAN_MODEL), "-override-config", f"homeDataDir={tmp_path}"])
    try:
        query = {"id": "A", "rules": "japanese", "maxVisits": 3, "komi": 6.5, "boardXSize": 9, "boardYSize": 9,
                 "moves": []}
        engine.send(json.dumps(query))
        reply = engine.next()
        assert reply["id"] == "A" and reply["field"] == "overrideSettings", reply
        assert "humanSLProfile was not set" in reply["error"] and "Internal error" not in reply["error"]
        assert engine.next()["noResults"] is True
        engine.send(json.dumps(dict(query, id="B", overrideSettings={"humanSLProfile": "rank_5k"})))
        assert engine.next()["moveInfos"]
        assert engine.close_stdin_and_wait() == 0 and "Traceback" not in engine.stderr_text
    finally:
        engine.kill()


def test_a_one_shot_command_says_in_one_line_that_the_net_needs_a_profile(tmp_path):
    sgf = tmp_path / "game.sgf"
    sgf.write_text("(;GM[1]FF[4]SZ[9];B[ee];W[cc])")
    result = subprocess.run(python_cli() + ["evalsgf", str(sgf), "-move-num", "1", "-model", str(HUMAN_MODEL),
                                            "-visits", "2"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: SGFMetadata is required for this network")


@pytest.mark.parametrize("args, message", [
    (["-human-model", "no-such-file.bin.gz"], "-human-model: model file not found: no-such-file.bin.gz"),
    (["-model", "rollouts", "-human-model", str(HUMAN_MODEL)], "-human-model needs a main network too"),
    (["-model", str(MAIN_MODEL), "-override-config", "humanSLChosenMoveProp=0.5"],
     "only works with a human SL model"),
])
def test_startup_errors_are_one_line(args, message):
    engine = EngineProcess(args)
    try:
        assert engine.close_stdin_and_wait() != 0
        assert message in engine.stderr_text
        assert "Traceback" not in engine.stderr_text
    finally:
        engine.kill()
