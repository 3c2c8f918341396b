"""`kata analysis` in process: response contents, perspectives, turns, avoid/allow, reports during search,
terminate, priorities, concurrency and shutdown. Rollouts or a deterministic fake network, small boards."""
from __future__ import annotations

import json
import time
from types import SimpleNamespace

import pytest

from katacli.analysis import worker as worker_module
from katacli.analysis.backend import AnalysisBackend
from support.fakes import MaterialEvaluator, launching_row_by_row_tiny_net, row_by_row_tiny_net

from support.analysis import ENDLESS_VISITS, query_line, running_engine, send, wait_until

MOVE_KEYS = {"move", "visits", "edgeVisits", "weight", "edgeWeight", "utility", "winrate", "scoreMean", "scoreLead",
             "scoreSelfplay", "scoreStdev", "prior", "lcb", "utilityLcb", "order", "playSelectionValue", "pv"}
ROOT_KEYS = {"visits", "weight", "winrate", "scoreSelfplay", "scoreLead", "scoreStdev", "utility", "thisHash",
             "symHash", "currentPlayer"}
RAW_KEYS = {"rawWinrate", "rawLead", "rawScoreSelfplay", "rawScoreSelfplayStdev", "rawNoResultProb", "rawStWrError",
            "rawStScoreError", "rawVarTimeLeft"}
# Black owns column C of a 5x5 board: a wall that random playouts almost never capture.
BLACK_WALL = [["B", f"C{row}"] for row in range(1, 6)]


def material_backend() -> AnalysisBackend:
    return AnalysisBackend(MaterialEvaluator(), max_batch_size=64)


def test_default_response_has_katago_fields_and_nothing_optional():
    with running_engine() as (engine, out):
        send(engine, query_line("d", maxVisits=30))
        (final,) = out.wait_finals(1)
    assert set(final) == {"id", "turnNumber", "isDuringSearch", "moveInfos", "rootInfo"}
    assert final["turnNumber"] == 0 and final["isDuringSearch"] is False
    assert set(final["rootInfo"]) == ROOT_KEYS  # rollouts: no raw network values
    assert final["rootInfo"]["visits"] == 30 and final["rootInfo"]["currentPlayer"] == "B"
    for index, info in enumerate(final["moveInfos"]):
        assert MOVE_KEYS <= set(info) <= MOVE_KEYS | {"isSymmetryOf"}
        assert info["order"] == index
    searched = [m for m in final["moveInfos"] if "isSymmetryOf" not in m]
    assert sum(m["edgeVisits"] for m in searched) == 29


def test_every_include_flag_adds_its_fields_in_documented_shapes():
    flags = dict(includeOwnership=True, includeOwnershipStdev=True, includeMovesOwnership=True,
                 includeMovesOwnershipStdev=True, includePolicy=True, includePVVisits=True, includeNoResultValue=True,
                 rootPolicyTemperature=1.5, rootFpuReductionMax=0.0)
    with running_engine(backend=material_backend()) as (engine, out):
        send(engine, query_line("f", boardXSize=5, boardYSize=4, maxVisits=40, **flags))
        (final,) = out.wait_finals(1)
    area = 5 * 4
    assert len(final["ownership"]) == len(final["ownershipStdev"]) == area
    assert len(final["policy"]) == area + 1
    assert abs(sum(p for p in final["policy"] if p > 0) - 1.0) < 1e-4
    assert set(final["rootInfo"]) == ROOT_KEYS | RAW_KEYS
    for info in final["moveInfos"]:
        assert {"pvVisits", "pvEdgeVisits", "noResultValue", "ownership", "ownershipStdev"} <= set(info)
        assert len(info["pvVisits"]) == len(info["pvEdgeVisits"]) == len(info["pv"])
        assert len(info["ownership"]) == len(info["ownershipStdev"]) == area
        assert all(0.0 <= s <= 1.0 for s in info["ownershipStdev"])


def test_only_moves_ownership_stdev_gives_only_that_array():
    with running_engine() as (engine, out):
        send(engine, query_line("s", includeMovesOwnershipStdev=True, includeOwnershipStdev=True))
        (final,) = out.wait_finals(1)
    assert "ownership" not in final and len(final["ownershipStdev"]) == 25
    assert all("ownershipStdev" in m and "ownership" not in m for m in final["moveInfos"])


def test_analysis_pv_len_bounds_the_pv_after_the_first_move():
    with running_engine() as (engine, out):
        send(engine, query_line("p", maxVisits=300, analysisPVLen=2))
        (final,) = out.wait_finals(1)
    lengths = [len(m["pv"]) for m in final["moveInfos"]]
    assert max(lengths) == 3 and min(lengths) >= 1


@pytest.mark.parametrize("perspective, black_view", [("BLACK", True), ("WHITE", False), ("SIDETOMOVE", False)])
def test_values_follow_report_analysis_winrates_as(perspective, black_view):
    # Three Black handicap stones and komi 0: Black is far ahead, White (side to move) far behind.
    stones = [["B", "B2"], ["B", "D4"], ["B", "C3"]]
    line = query_line("v", initialStones=stones, komi=0, maxVisits=30, includeOwnership=True,
                      overrideSettings={"reportAnalysisWinratesAs": perspective})
    with running_engine(backend=material_backend()) as (engine, out):
        send(engine, line)
        (final,) = out.wait_finals(1)
    root = final["rootInfo"]
    assert root["currentPlayer"] == "W"
    sign = 1 if black_view else -1
    assert sign * (root["winrate"] - 0.5) > 0.2 and sign * root["scoreLead"] > 1
    assert sign * (root["rawWinrate"] - 0.5) > 0.2 and sign * root["rawLead"] > 1
    best = final["moveInfos"][0]
    assert sign * (best["winrate"] - 0.5) > 0.2 and sign * best["scoreLead"] > 1


def test_ownership_sign_follows_the_perspective():
    def centre_ownership(perspective: str) -> float:
        line = query_line("o", moves=[], initialStones=BLACK_WALL, initialPlayer="W", komi=0, maxVisits=60,
                          includeOwnership=True, overrideSettings={"reportAnalysisWinratesAs": perspective})
        # A fixed seed: the rollouts' ownership at 60 visits scatters (below 0.5 about once in 300 runs).
        with running_engine({"searchRandSeed": "ownership-sign"}) as (engine, out):
            send(engine, line)
            (final,) = out.wait_finals(1)
        return final["ownership"][2 * 5 + 2]  # C3, row-major from the top-left
    black, white = centre_ownership("BLACK"), centre_ownership("WHITE")
    assert black > 0.5 and white == -black   # the same search, seen from the other side


def test_analyze_turns_replays_the_game_with_katago_turn_semantics():
    moves = [["B", "C3"], ["W", "D4"], ["B", "pass"], ["B", "B2"]]
    with running_engine() as (engine, out):
        send(engine, query_line("t", moves=moves, analyzeTurns=[4, 0, 2, 2], maxVisits=5),
             query_line("last", moves=moves, maxVisits=5),
             query_line("w1", initialPlayer="W", maxVisits=5),
             query_line("hc", initialStones=[["B", "B2"], ["B", "D4"]], maxVisits=5),
             query_line("one", initialStones=[["B", "B2"]], maxVisits=5))
        finals = out.wait_finals(7)
    turns = {(f["id"], f["turnNumber"]): f["rootInfo"]["currentPlayer"] for f in finals}
    assert turns == {("t", 0): "B", ("t", 2): "B", ("t", 4): "W", ("last", 4): "W", ("w1", 0): "W",
                     ("hc", 0): "W", ("one", 0): "B"}
    t_finals = [f for f in finals if f["id"] == "t"]
    assert [f["turnNumber"] for f in t_finals] == [0, 2, 4]  # one thread, same priority: turn order


def test_allow_moves_restricts_the_root_and_avoid_moves_removes_moves():
    allow = [{"player": "B", "moves": ["C3", "B4"], "untilDepth": 1}]
    avoid = [{"player": "B", "moves": ["A1", "C3"], "untilDepth": 3},
             {"player": "W", "moves": ["pass"], "untilDepth": 1}]
    with running_engine() as (engine, out):
        send(engine, query_line("allow", allowMoves=allow, maxVisits=40),
             query_line("avoid", avoidMoves=avoid, maxVisits=100))
        finals = out.wait_finals(2)
    by_id = {f["id"]: f for f in finals}
    assert {m["move"] for m in by_id["allow"]["moveInfos"]} <= {"C3", "B4"}
    avoided_moves = {m["move"] for m in by_id["avoid"]["moveInfos"]}
    assert avoided_moves and not avoided_moves & {"A1", "C3"}


def test_reports_during_search_then_exactly_one_final_response():
    line = query_line("r", boardXSize=7, boardYSize=7, maxVisits=ENDLESS_VISITS, reportDuringSearchEvery=0.05)
    with running_engine() as (engine, out):
        send(engine, line)
        out.wait_for(lambda objs: sum(o.get("isDuringSearch") is True for o in objs) >= 3)
        send(engine, '{"id":"stop","action":"terminate","terminateId":"r"}')
        out.wait_finals(1, "r")
        time.sleep(0.2)
    reports = [o for o in out.objects if o.get("id") == "r"]
    assert [r["isDuringSearch"] for r in reports[-1:]] == [False]
    assert all(r["isDuringSearch"] for r in reports[:-1])
    visits = [r["rootInfo"]["visits"] for r in reports]
    assert visits == sorted(visits) and visits[-1] > visits[0]


class SetClock:
    """Stands in for the worker's ``time`` module; the test sets ``now``."""

    def __init__(self):
        self.now = 0.0

    def monotonic(self) -> float:
        return self.now


def test_first_report_after_delays_the_first_report(monkeypatch):
    clock = SetClock()
    monkeypatch.setattr(worker_module, "time", clock)
    monkeypatch.setattr(worker_module, "analysis_response",
                        lambda request, searcher, during_search, has_network: {"at": round(clock.now, 6)})
    # Binary fractions, so that the reporter's running sums are exact.
    request = SimpleNamespace(report_every=0.125, first_report_after=0.5)
    reports: list[dict] = []
    reporter = worker_module.DuringSearchReporter(request, reports.append, has_network=False)
    searcher = SimpleNamespace(last_stats=None)
    reporter.arm(searcher)
    for sixteenths in range(1, 17):
        clock.now = sixteenths / 16
        reporter(searcher)
    assert [r["at"] for r in reports] == [0.5, 0.625, 0.75, 0.875, 1.0]


def test_first_report_after_alone_reports_once_during_the_search():
    line = query_line("f", boardXSize=7, boardYSize=7, maxVisits=ENDLESS_VISITS, firstReportDuringSearchAfter=0.05)
    with running_engine() as (engine, out):
        send(engine, line)
        out.wait_for(lambda objs: any(o.get("isDuringSearch") for o in objs))
        send(engine, '{"id":"stop","action":"terminate_all"}')
        out.wait_finals(1, "f")
    reports = [o for o in out.objects if o.get("id") == "f"]
    assert [r["isDuringSearch"] for r in reports] == [True, False]


def test_terminate_queued_turns_reports_no_results_and_running_search_reports_partial():
    with running_engine() as (engine, out):
        send(engine, query_line("long", boardXSize=7, boardYSize=7, maxVisits=ENDLESS_VISITS))
        wait_until(lambda: engine.queue.num_queued == 0)
        send(engine, query_line("q2", moves=[["B", "C3"]], analyzeTurns=[0, 1], maxVisits=10))
        terminate_queued = '{"id":"t1","action":"terminate","terminateId":"q2","turnNumbers":[0]}'
        send(engine, terminate_queued)
        assert out.objects[-2:] == [
            {"id": "q2", "isDuringSearch": False, "noResults": True, "turnNumber": 0},
            json.loads(terminate_queued),
        ]
        send(engine, '{"id":"t2","action":"terminate","terminateId":"long"}')
        (long_final,) = out.wait_finals(1, "long")
        q2 = out.wait_finals(2, "q2")
    assert long_final["rootInfo"]["visits"] >= 1 and "moveInfos" in long_final
    assert [(f["turnNumber"], "noResults" in f) for f in q2] == [(0, True), (1, False)]


def test_terminate_all_with_turn_numbers_only_hits_those_turns():
    moves = [["B", "C3"], ["W", "D4"]]
    with running_engine() as (engine, out):
        send(engine, query_line("long", boardXSize=7, boardYSize=7, maxVisits=ENDLESS_VISITS))
        wait_until(lambda: engine.queue.num_queued == 0)
        send(engine, query_line("a", moves=moves, analyzeTurns=[0, 1, 2], maxVisits=10),
             query_line("b", moves=moves, analyzeTurns=[1, 2], maxVisits=10),
             '{"id":"ta","action":"terminate_all","turnNumbers":[1]}')
        no_results = {(o["id"], o["turnNumber"]) for o in out.objects if o.get("noResults")}
        assert no_results == {("a", 1), ("b", 1)}
        send(engine, '{"id":"tl","action":"terminate","terminateId":"long"}')
        out.wait_finals(5)
    full = {(o["id"], o["turnNumber"]) for o in out.finals() if "moveInfos" in o}
    assert full == {("long", 0), ("a", 0), ("a", 2), ("b", 2)}


def test_priorities_order_the_queue_then_first_come_first_served():
    with running_engine() as (engine, out):
        send(engine, query_line("blocker", boardXSize=7, boardYSize=7, maxVisits=ENDLESS_VISITS))
        wait_until(lambda: engine.queue.num_queued == 0)
        send(engine, query_line("a", maxVisits=5),
             query_line("b", maxVisits=5, priority=5),
             query_line("c", maxVisits=5, priority=5),
             query_line("d", maxVisits=5, priority=-1),
             query_line("e", moves=[["B", "C3"]], analyzeTurns=[0, 1], priorities=[1, 10], maxVisits=5),
             '{"id":"go","action":"terminate","terminateId":"blocker"}')
        finals = out.wait_finals(7)
    order = [(f["id"], f["turnNumber"]) for f in finals]
    assert order == [("blocker", 0), ("e", 1), ("b", 0), ("c", 0), ("e", 0), ("a", 0), ("d", 0)]


def test_many_queries_in_flight_each_end_with_exactly_one_final():
    num_queries = 24
    with running_engine({"numAnalysisThreads": 4}) as (engine, out):
        for index in range(num_queries):
            extra = {"reportDuringSearchEvery": 0.001} if index % 3 == 0 else {}
            send(engine, query_line(f"m{index}", moves=[["B", "C3"], ["W", "B2"]], analyzeTurns=[1, 2],
                                    maxVisits=100, priority=index % 2, **extra))
        out.wait_finals(2 * num_queries)
        time.sleep(0.1)
    finals = out.finals()
    assert sorted((f["id"], f["turnNumber"]) for f in finals) == sorted(
        (f"m{i}", t) for i in range(num_queries) for t in (1, 2))
    assert all(f["rootInfo"]["visits"] == 100 for f in finals)


def test_closing_input_finishes_queued_work():
    with running_engine({"numAnalysisThreads": 2}) as (engine, out):
        for index in range(8):
            send(engine, query_line(f"c{index}", maxVisits=200))
    assert sorted(f["id"] for f in out.finals()) == sorted(f"c{i}" for i in range(8))


def test_quitting_without_waiting_stops_at_once_and_writes_nothing_more():
    with running_engine(wait=False) as (engine, out):
        for index in range(4):
            send(engine, query_line(f"e{index}", boardXSize=9, boardYSize=9, maxVisits=ENDLESS_VISITS))
        time.sleep(0.2)
        written = len(out.objects)
    # The searches are endless: leaving the block at all means they were stopped, not waited for.
    assert len(out.objects) == written
    assert all(not worker.thread.is_alive() for worker in engine.workers)


def test_version_models_and_clear_cache_echo_the_query():
    with running_engine() as (engine, out):
        send(engine, '{"id":"v","action":"query_version","extra":[1,2]}',
             '{"action":"query_models","id":"m"}',
             '{"id":"c","action":"clear_cache"}')
    version, models, cache = out.objects
    assert version == {"id": "v", "action": "query_version", "extra": [1, 2], "version": "1.17.2",
                       "git_hash": version["git_hash"]}
    assert isinstance(version["git_hash"], str)
    assert models == {"id": "m", "action": "query_models", "models": []}
    assert cache == {"id": "c", "action": "clear_cache"}
    assert out.lines[0] == json.dumps(version, sort_keys=True, separators=(",", ":"))


def test_concurrent_searches_share_network_batches():
    network = MaterialEvaluator()
    backend = AnalysisBackend(network, max_batch_size=64)
    settings = {"numAnalysisThreads": 4, "numSearchThreadsPerAnalysisThread": 4}
    with running_engine(settings, backend=backend) as (engine, out):
        for index in range(8):
            send(engine, query_line(f"b{index}", boardXSize=9, boardYSize=9, maxVisits=200))
        out.wait_finals(8)
    average_batch = network.num_positions_evaluated / network.num_batches
    assert average_batch > 4, f"no cross-search batching: {average_batch:.2f} positions per network call"


def test_rules_a_network_cannot_represent_are_replaced_with_a_warning():
    with running_engine(backend=material_backend()) as (engine, out):
        send(engine, query_line("s", rules={"ko": "SPIGHT", "scoring": "AREA"}, maxVisits=5))
        out.wait_finals(1)
    assert out.objects[0] == {"field": "rules", "id": "s", "warning": (
        "Rules koSPIGHTscoreAREAtaxNONEsui1komi7.5 not supported by neural net, "
        "using koSITUATIONALscoreAREAtaxNONEsui1komi7.5 instead")}
    with running_engine() as (engine, out):  # rollouts play any rules
        send(engine, query_line("s", rules={"ko": "SPIGHT", "scoring": "AREA"}, maxVisits=5))
        out.wait_finals(1)
    assert not any("warning" in o for o in out.objects)


@pytest.mark.parametrize("searches, has_network, capacities", [
    (1, True, [1]), (2, True, [1, 1]), (4, True, [1, 1, 1, 1]), (6, True, [2, 2, 1, 1]),
    (64, True, [16, 16, 16, 16]), (100, True, [15, 15, 14, 14, 14, 14, 14]), (0, True, [1]),
    (3, False, [1, 1, 1]),
])
def test_worker_capacities_share_the_searches_out(searches, has_network, capacities):
    assert worker_module.worker_capacities(searches, has_network) == capacities


@pytest.mark.parametrize("make_network", [MaterialEvaluator, row_by_row_tiny_net, launching_row_by_row_tiny_net],
                         ids=["requests", "arrays", "launched arrays"])
def test_many_single_leaf_searches_share_rounds_and_answer_as_one_thread_does(make_network):
    queries = [query_line(f"g{index}", boardXSize=7, boardYSize=7, maxVisits=60,
                          moves=[["B", "D4"], ["W", f"C{index % 5 + 2}"]] if index % 2 else [],
                          overrideSettings={"wideRootNoise": 0.0})
               for index in range(24)]

    def answers(threads: int):
        network = make_network()
        settings = {"numAnalysisThreads": threads, "numSearchThreadsPerAnalysisThread": 1}
        with running_engine(settings, backend=AnalysisBackend(network, max_batch_size=64)) as (engine, out):
            for line in queries:
                send(engine, line)
            finals = out.wait_finals(len(queries))
        by_id = {f["id"]: [(m["move"], m["visits"], m["winrate"]) for m in f["moveInfos"]] for f in finals}
        return by_id, network.num_positions_evaluated / network.num_batches, engine, network

    alone, _, _, _ = answers(1)
    grouped, average_batch, engine, network = answers(24)
    assert [w.capacity for w in engine.workers] == [6, 6, 6, 6]
    assert grouped == alone
    if make_network is launching_row_by_row_tiny_net:   # the server kept a second call in flight
        assert network.most_calls_in_flight >= 2
    assert average_batch > 4, f"single-leaf searches were not batched together: {average_batch:.2f}"


def test_searches_in_a_worker_group_keep_every_leaf_in_one_lane(monkeypatch):
    """searchPipelining=true does not halve a grouped search's batches (groups never pipeline)."""
    from katacli.search import stepping

    # The search's batches as the group hands them to the network, before the batching server splits
    # them over its threads (its calls depend on timing).
    sizes = []
    evaluate_batches = stepping.evaluate_batches

    def recording(evaluator, batches):
        sizes.extend(len(batch) for batch in batches)
        return evaluate_batches(evaluator, batches)

    monkeypatch.setattr(stepping, "evaluate_batches", recording)
    network = row_by_row_tiny_net()
    settings = {"numAnalysisThreads": 1, "numSearchThreadsPerAnalysisThread": 8, "searchPipelining": "true"}
    with running_engine(settings, backend=AnalysisBackend(network, max_batch_size=64)) as (engine, out):
        send(engine, query_line("p", boardXSize=9, boardYSize=9, maxVisits=200))
        out.wait_finals(1)
    # One lane: 8 leaves a batch but for the root's evaluation and the last; two lanes would give 4.
    assert len(sizes) > 10 and max(sizes) == 8 and sorted(sizes)[len(sizes) // 2] == 8, sizes
