"""`kata analysis` building blocks: JSON output as KataGo writes it, rounding, field readers, the queue."""
from __future__ import annotations

import math
import random
import threading

import numpy as np
import pytest

from katacli.analysis.fields import read_int, read_locations, read_moves, read_number, read_player
from katacli.c_numbers import round_half_away
from katacli.analysis.protocol import (
    OUTPUT_PRECISION, ROUNDING_ZERO_THRESHOLD, QueryError, dumps, loads, round_dynamic, round_dynamic_many, round_static,
)
from katacli.analysis.request import AnalysisRequest, ReportOptions, RequestStatus
from katacli.analysis.responses import pv_length_up_to_phase_end
from katacli.game.rules import Rules
from katacli._core.game_state import GameState
from katacli.analysis.scheduler import RequestQueue
from katacli.search import SearchParams


def test_dumps_sorts_keys_without_spaces_and_writes_null_for_non_finite():
    assert dumps({"b": 1, "a": [1.5, 2], "c": "x"}) == '{"a":[1.5,2],"b":1,"c":"x"}'
    assert dumps({"x": math.nan, "y": [math.inf]}) == '{"x":null,"y":[null]}'
    assert dumps({"id": "é"}) == '{"id":"é"}'


def test_loads_rejects_non_json_constants():
    with pytest.raises(ValueError):
        loads('{"komi": NaN}')
    assert loads('{"a": 1.0}') == {"a": 1.0}


@pytest.mark.parametrize("value, expected", [
    (0.8740855166489953, 0.874085517),
    (-12.300520420074463, -12.3005204),
    (123456789012.7, 123456789013.0),
    (0.0, 0.0),
    (1e-70, 1e-70),
    (2.5e-9, 2.5e-9),
    (0.0199999995529651641845703125, 0.0199999996),
])
def test_round_dynamic_keeps_nine_significant_digits(value, expected):
    assert round_dynamic(value) == expected


def test_round_static_rounds_half_away_from_zero_on_a_micro_grid():
    assert round_static([0.1234565, -0.1234565, 0.5, -1.0]) == [0.123457, -0.123457, 0.5, -1.0]


def _c_round_dynamic(value: float) -> float:
    """KataGo's roundDynamic spelled out with C's round() (round_half_away): the reference."""
    if not math.isfinite(value) or abs(value) <= ROUNDING_ZERO_THRESHOLD:
        return value
    magnitude = math.floor(math.log10(abs(value))) - OUTPUT_PRECISION
    if magnitude >= 0:
        return round_half_away(value)
    scale = 10.0 ** -magnitude
    return round_half_away(value * scale) / scale


def test_rounding_equals_cs_round_on_many_values():
    rng = random.Random(4)
    values = [0.5, -0.5, 2.5, -2.5, 1e-61, 1e-60, -0.0, math.nan, math.inf, -math.inf, 123456789.5, 0.1234565]
    values += [rng.choice((-1, 1)) * 10 ** rng.uniform(-20, 20) for _ in range(20000)]
    values += [round(rng.uniform(-3, 3), rng.randint(0, 9)) for _ in range(5000)]
    for value in values:
        got, want = round_dynamic(value), _c_round_dynamic(value)
        assert got == want or (math.isnan(got) and math.isnan(want)), value
    ownership = np.array([v for v in values if abs(v) < 1e6], np.float32)   # float32 rows, as the net's
    want = [round_half_away(float(v) * 1e6) / 1e6 for v in ownership]
    assert round_static(ownership) == want   # (no NaN among them: list equality is exact)


def test_rounding_many_at_once_equals_one_at_a_time_bit_for_bit():
    rng = np.random.default_rng(7)
    values = [0.0, -0.0, 0.5, -0.5, 2.5, 1e-61, 1e-60, 1e-59, math.nan, math.inf, -math.inf, 99999999.5, 123456789.0]
    for k in range(-70, 30):   # powers of ten and their neighbours, where floor(log10) turns
        values += [10.0 ** k, float(np.nextafter(10.0 ** k, 0.0)), float(np.nextafter(10.0 ** k, math.inf))]
    values += list(rng.standard_normal(20000) * 10.0 ** rng.integers(-70, 20, 20000))
    values += [float(v) for v in rng.random(5000).astype(np.float32)]   # policy rows are float32
    got = round_dynamic_many(np.array(values))
    assert len(got) == len(values)
    for value, many in zip(values, got):
        one = round_dynamic(value)
        assert (many == one and math.copysign(1, many) == math.copysign(1, one)) or (
            math.isnan(many) and math.isnan(one)), value
    assert round_dynamic_many([(0.8740855166489953, -12.300520420074463)]) == [0.874085517, -12.3005204]
    assert round_dynamic_many(np.array([0.02], np.float32)) == [round_dynamic(np.float32(0.02))]


def test_integer_and_number_readers_are_strict_about_json_types():
    assert read_int({"v": 5}, "v", 1, 10, "m") == 5
    for bad in (5.0, True, "5", 11, 0, None):
        with pytest.raises(QueryError) as info:
            read_int({"v": bad}, "v", 1, 10, "bad v")
        assert (info.value.field, info.value.message) == ("v", "bad v")
    assert read_number({"v": 3}, "v", 0, 5, "m") == 3.0
    for bad in (True, "1", 6, math.inf):
        with pytest.raises(QueryError):
            read_number({"v": bad}, "v", 0, 5, "m")


def test_player_and_vertex_readers_follow_katago():
    assert read_player({"p": "Black"}, "p") == 1 and read_player({"p": "w"}, "p") == 2
    with pytest.raises(QueryError, match='Must be "b" or "w"'):
        read_player({"p": "x"}, "p")
    moves = read_moves({"m": [["B", "A1"], ["w", "pass"], ["b", "(2,0)"], ["W", "t19"]]}, "m", 19, 19, True)
    assert moves == [(1, (0, 18)), (2, None), (1, (2, 0)), (2, (18, 0))]
    with pytest.raises(QueryError, match="Could not parse board location: pass"):
        read_moves({"m": [["B", "pass"]]}, "m", 19, 19, False)
    with pytest.raises(QueryError, match="Could not parse board location: Z9"):
        read_moves({"m": [["B", "Z9"]]}, "m", 9, 9, True)
    with pytest.raises(QueryError, match="Could not parse player: x"):
        read_moves({"m": [["x", "A1"]]}, "m", 9, 9, True)
    with pytest.raises(QueryError, match="Must be an array of pairs"):
        read_moves({"m": [["B"]]}, "m", 9, 9, True)
    assert read_locations({"m": ["C3", "pass"]}, "m", 9, 9) == [(2, 6), None]


def _request(internal_id: int, priority: int) -> AnalysisRequest:
    return AnalysisRequest(internal_id=internal_id, query_id=f"r{internal_id}", turn_number=0, priority=priority,
                           state=None, params=SearchParams(), report=ReportOptions(perspective=None, pv_len=5))


def test_queue_orders_by_priority_then_arrival():
    queue = RequestQueue()
    queue.push([_request(0, 0), _request(1, 5), _request(2, 0), _request(3, 5), _request(4, -1)])
    queue.close()
    order = []
    while (request := queue.pop()) is not None:
        order.append(request.internal_id)
        queue.finish(request)
    assert order == [1, 3, 0, 2, 4]


def test_terminating_queued_and_running_requests():
    queue = RequestQueue()
    queue.push([_request(0, 0), _request(1, 0)])
    running = queue.pop()
    never_started = queue.terminate(lambda r: True)
    assert [r.internal_id for r in never_started] == [1]
    assert running.status is RequestStatus.TERMINATED and running.stop_event.is_set()
    queue.close()
    assert queue.pop() is None
    queue.finish(running)
    assert queue.num_open == 0


def test_pop_blocks_until_a_request_or_close():
    queue = RequestQueue()
    got = []
    thread = threading.Thread(target=lambda: got.append(queue.pop()))
    thread.start()
    queue.push([_request(7, 0)])
    thread.join(5)
    assert got and got[0].internal_id == 7
    thread = threading.Thread(target=lambda: got.append(queue.pop()))
    thread.start()
    queue.close()
    thread.join(5)
    assert got[-1] is None


def test_pvs_stop_before_the_move_that_ends_the_phase_when_cleanup_is_prevented():
    japanese = GameState(5, 5, rules=Rules.preset("japanese").to_core_tuple())
    japanese.play((2, 2), 1)
    japanese.play(None, 2)          # Black's pass would now end the normal phase
    assert pv_length_up_to_phase_end(japanese, [None, (1, 1)], prevent_encore=True) == 0
    assert pv_length_up_to_phase_end(japanese, [(1, 1), None, None, (3, 3)], prevent_encore=True) == 2
    assert pv_length_up_to_phase_end(japanese, [(1, 1), None, None], prevent_encore=False) == 3
    assert pv_length_up_to_phase_end(japanese, [(1, 1), (3, 3)], prevent_encore=True) == 2
    area = GameState(5, 5)
    assert pv_length_up_to_phase_end(area, [None, None, (1, 1)], prevent_encore=True) == 3
