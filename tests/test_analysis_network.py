"""`kata analysis` with a real (small) network from ../shared/models: network fields, models, cache,
and KaTrain's query pattern. Skipped when ../shared is absent."""
from __future__ import annotations

import json

from support.analysis import (
    ENDLESS_VISITS, MODELS, SMALL_MODEL, network_backend, query_line, running_engine, send, shared_network, wait_until,
)

# A KaTrain-style game: the first moves of a 19x19 game in GTP coordinates.
KATRAIN_MOVES = [["B", "Q16"], ["W", "D4"], ["B", "Q3"], ["W", "D16"], ["B", "R5"], ["W", "C14"], ["B", "O17"]]


def katrain_query(query_id: str, turn: int, **extra) -> str:
    """The shape KaTrain sends: one turn, priority, ownership/policy flags, perspective override."""
    query = {
        "id": query_id, "rules": "japanese", "priority": 1, "analyzeTurns": [turn], "maxVisits": 16, "komi": 6.5,
        "boardXSize": 19, "boardYSize": 19, "includeOwnership": True, "includeMovesOwnership": False,
        "includePolicy": True, "initialStones": [], "initialPlayer": "B", "moves": KATRAIN_MOVES[:turn],
        "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.0},
    }
    query.update(extra)
    return json.dumps(query)


def test_network_response_has_raw_values_and_a_normalised_policy():
    with running_engine(backend=network_backend()) as (engine, out):
        send(engine, query_line("n", boardXSize=9, boardYSize=9, maxVisits=24, includePolicy=True,
                                includeOwnership=True))
        (final,) = out.wait_finals(1)
    root = final["rootInfo"]
    assert {"rawWinrate", "rawLead", "rawScoreSelfplay", "rawScoreSelfplayStdev", "rawNoResultProb",
            "rawStWrError", "rawStScoreError", "rawVarTimeLeft"} <= set(root)
    assert 0.0 <= root["rawWinrate"] <= 1.0 and root["visits"] == 24
    policy = final["policy"]
    assert len(policy) == 82 and abs(sum(p for p in policy if p >= 0) - 1.0) < 1e-3
    assert all(-1.0 <= o <= 1.0 for o in final["ownership"])
    # The best move's prior is the policy entry of its point.
    best = final["moveInfos"][0]
    if best["move"] != "pass":
        column = "ABCDEFGHJ".index(best["move"][0])
        row = 9 - int(best["move"][1:])
        assert abs(policy[row * 9 + column] - best["prior"]) < 1e-6


def test_query_models_describes_the_network_and_clear_cache_empties_it():
    network = shared_network()
    with running_engine(backend=network_backend(max_batch_size=32)) as (engine, out):
        send(engine, query_line("warm", maxVisits=8))
        out.wait_finals(1)
        assert len(network.cache) > 0
        send(engine, '{"id":"m","action":"query_models"}', '{"id":"c","action":"clear_cache"}')
        assert len(network.cache) == 0
    models = out.objects[1]
    assert models["id"] == "m" and models["action"] == "query_models"
    (model,) = models["models"]
    assert model == {"name": str(MODELS / SMALL_MODEL), "internalName": network.model_name, "maxBatchSize": 32,
                     "usesHumanSLProfile": False, "version": network.version, "usingFP16": "auto"}
    assert out.objects[2] == {"id": "c", "action": "clear_cache"}


def test_katrain_query_pattern_and_terminate():
    with running_engine({"numAnalysisThreads": 2, "numSearchThreadsPerAnalysisThread": 4},
                        backend=network_backend()) as (engine, out):
        for turn in range(len(KATRAIN_MOVES) + 1):
            send(engine, katrain_query(f"QUERY:{turn}", turn, priority=turn))
        send(engine, katrain_query("QUERY:long", len(KATRAIN_MOVES), maxVisits=ENDLESS_VISITS, priority=-100))
        finals = out.wait_finals(len(KATRAIN_MOVES) + 1)
        wait_until(lambda: engine.queue.num_queued == 0)
        send(engine, json.dumps({"id": "terminate_QUERY:long", "action": "terminate", "terminateId": "QUERY:long"}))
        (long_final,) = out.wait_finals(1, "QUERY:long")
    assert not any("error" in o or "warning" in o for o in out.objects)
    for final in finals:
        turn = int(final["id"].split(":")[1])
        assert final["turnNumber"] == turn
        assert final["rootInfo"]["currentPlayer"] == ("B" if turn % 2 == 0 else "W")
        assert len(final["ownership"]) == 361 and len(final["policy"]) == 362
        assert final["rootInfo"]["visits"] == 16
        assert all("ownership" not in m for m in final["moveInfos"])
    assert "moveInfos" in long_final and long_final["rootInfo"]["visits"] >= 1
    ack = next(o for o in out.objects if o.get("action") == "terminate")
    assert ack == {"id": "terminate_QUERY:long", "action": "terminate", "terminateId": "QUERY:long"}


def test_katrain_moves_ownership_query():
    with running_engine(backend=network_backend()) as (engine, out):
        send(engine, katrain_query("mo", 3, includeMovesOwnership=True, includePolicy=False, maxVisits=10))
        (final,) = out.wait_finals(1)
    assert "policy" not in final
    assert all(len(m["ownership"]) == 361 for m in final["moveInfos"])
