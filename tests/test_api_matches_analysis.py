"""katacli.analyze gives what `kata analysis` answers for the same position and settings.

Both run on a shared network (skipped when ../shared/models is absent) with everything that is
random switched off: one search thread, symmetry 0 (nnRandomize = false in the engine), no wide
root noise. The engine runs in-process over its own evaluator, so the two never share a cache.
"""
from __future__ import annotations

import json

import pytest

import katacli
from support.analysis import running_engine, send
from support.paths import G170_B6
from support.paths import model_path as shared_model_path

NET = G170_B6
DETERMINISTIC = {"numSearchThreads": 1, "wideRootNoise": 0.0}
# The JSON rounds to about nine significant digits.
JSON_PRECISION = 1e-7

POSITIONS = [
    # (size, rules, komi, moves, visits)
    (9, "japanese", 6.5, [["B", "E5"], ["W", "C3"]], 120),
    (7, "tromp-taylor", 7.5, [["B", "D4"], ["W", "C5"], ["B", "E3"]], 80),
    (9, "chinese", 0.5, [], 60),
]


@pytest.fixture(scope="module")
def model_path():
    path = shared_model_path(NET)
    pytest.importorskip("torch")
    return path


def _engine_answer(model_path, query: dict, perspective: str) -> dict:
    from katacli.analysis.backend import AnalysisBackend
    from katacli.nn.evaluator import NNEvaluator

    backend = AnalysisBackend(NNEvaluator.from_file(model_path, device="cpu", default_symmetry=0), max_batch_size=8)
    settings = {**DETERMINISTIC, "reportAnalysisWinratesAs": perspective, "nnRandomize": False}
    with running_engine(settings, backend=backend) as (engine, out):
        send(engine, json.dumps(query))
        return out.wait_finals(1, timeout=120)[0]


@pytest.mark.parametrize("size, rules, komi, moves, visits", POSITIONS)
def test_analyze_equals_kata_analysis(model_path, size, rules, komi, moves, visits):
    query = {"id": "api", "moves": moves, "rules": rules, "komi": komi, "boardXSize": size, "boardYSize": size,
             "maxVisits": visits, "includeOwnership": True}
    answer = _engine_answer(model_path, query, "SIDETOMOVE")

    net = katacli.load_network(model_path, symmetry=0, device="cpu")
    game = katacli.Game(size, rules=rules, komi=komi).play_moves(moves)
    result = katacli.analyze(game, net, visits=visits, **DETERMINISTIC)

    root = answer["rootInfo"]
    assert result.visits == root["visits"]
    assert result.next_player == root["currentPlayer"]
    assert result.winrate == pytest.approx(root["winrate"], abs=JSON_PRECISION)
    assert result.score_lead == pytest.approx(root["scoreLead"], abs=JSON_PRECISION * 100)
    assert result.best_move == answer["moveInfos"][0]["move"]
    assert [m.move for m in result.moves] == [m["move"] for m in answer["moveInfos"]]
    for ours, theirs in zip(result.moves, answer["moveInfos"]):
        assert ours.visits == theirs["visits"]
        assert ours.winrate == pytest.approx(theirs["winrate"], abs=JSON_PRECISION)
        assert ours.prior == pytest.approx(theirs["prior"], abs=JSON_PRECISION)
        assert ours.pv == theirs["pv"]
    assert result.ownership.reshape(-1).tolist() == pytest.approx(answer["ownership"], abs=1e-6)


def test_white_view_equals_kata_analysis_reported_as_white(model_path):
    size, rules, komi, moves, visits = POSITIONS[0]
    query = {"id": "api", "moves": moves, "rules": rules, "komi": komi, "boardXSize": size, "boardYSize": size,
             "maxVisits": visits}
    answer = _engine_answer(model_path, query, "WHITE")
    net = katacli.load_network(model_path, symmetry=0, device="cpu")
    game = katacli.Game(size, rules=rules, komi=komi).play_moves(moves)
    result = katacli.analyze(game, net, visits=visits, **DETERMINISTIC)
    assert result.white_winrate == pytest.approx(answer["rootInfo"]["winrate"], abs=JSON_PRECISION)
    assert result.white_score_lead == pytest.approx(answer["rootInfo"]["scoreLead"], abs=JSON_PRECISION * 100)
    for ours, theirs in zip(result.moves, answer["moveInfos"]):
        assert ours.white_winrate == pytest.approx(theirs["winrate"], abs=JSON_PRECISION)


def test_engine_plays_what_kata_gtp_plays(model_path):
    """Engine.genmove chooses the moves `kata gtp` answers, with the same config, seed and network."""
    from support.gtp import feed, make_engine

    settings = "maxVisits=60,numSearchThreads=1,searchRandSeed=api-vs-gtp,nnRandomize=false,wideRootNoise=0"
    gtp, out, _ = make_engine(settings, model=NET, scripted=False)
    feed(gtp, ["boardsize 9", "kata-set-rules japanese", "komi 6.5", "play B E5", "genmove W", "genmove B",
               "genmove W"])
    gtp.stop_background()
    answers = [line[2:] for line in out.getvalue().split("\n") if line.startswith("= ") and line[2:]]

    net = katacli.load_network(model_path, symmetry=0, device="cpu")
    overrides = dict(item.split("=") for item in settings.split(","))
    del overrides["nnRandomize"]   # the network's setting: symmetry=0 above
    engine = katacli.Engine(net, size=9, rules="japanese", komi=6.5, **overrides).play("B", "E5")
    moves = [engine.genmove().move for _ in range(3)]
    assert len(answers) == 3 and moves == answers
