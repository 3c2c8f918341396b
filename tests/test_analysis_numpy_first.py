"""`kata analysis` answers its first queries with the numpy forward pass while torch is imported, then
the torch evaluator takes over between network calls (katacli.analysis.backend, BatchingEvaluator's
replace_evaluator). The hand-over never mixes evaluators within a batch, loses no answer, keeps the NN
cache, and counts both in the engine's summary; nnNumpyUntilTorch=false loads torch only, as before.
"""
from __future__ import annotations

import json
import subprocess
import threading

import numpy as np
import pytest

from katacli.analysis.backend import (
    TAKE_OVER_IDLE_S, TAKE_OVER_LATEST_S, TAKE_OVER_NO_QUERY_S, network_backend_in_background, wait_for_quiet,
)
from katacli.config import Config
from katacli.nn.batching import BatchingEvaluator
from katacli.nn.model_file_reader import check_model_file, read_model_file
from katacli.nn.numpy_evaluator import NumpyEvaluator
from katacli.nn.request import NNRequest
from katacli.setup.engine_settings import AnalysisSettings
from support.analysis import READY_LINE, e5_query, python_cli
from support.fakes import MaterialEvaluator
from support.paths import G170_B6, TEST_B4, TEST_TRANSFORMER, model_path

TIMEOUT = 120
PROB_TOLERANCE = 1e-4
SCORE_TOLERANCE = 0.01
THREADS = 6
ROUNDS = 40
ROUNDS_AFTER_SWAP = 3
CACHE_KEY = 12345


class TaggedEvaluator(MaterialEvaluator):
    """A MaterialEvaluator that records which requests each of its network calls had."""

    def __init__(self):
        super().__init__()
        self.calls: list[list] = []  # the requests themselves: kept alive, their ids stay unique

    def evaluate_uncached(self, requests):
        self.calls.append(list(requests))
        return super().evaluate_uncached(requests)


def blank_request(board_len: int = 9, white: bool = False, cache_key=None) -> NNRequest:
    spatial = np.zeros((22, board_len, board_len), np.float32)
    spatial[0] = 1.0
    return NNRequest(spatial, np.zeros(19, np.float32), np.ones(board_len * board_len + 1, bool),
                     board_x=board_len, board_y=board_len, white_to_move=white, symmetry=0, cache_key=cache_key)


def test_replacing_the_evaluator_mid_stream_answers_everything_and_never_mixes_a_batch():
    first, second = TaggedEvaluator(), TaggedEvaluator()
    batching = BatchingEvaluator(first, max_batch_size=4, max_wait_ms=0.5, num_server_threads=2)
    answered = []
    halfway, swapped = threading.Event(), threading.Event()

    def search():
        # ROUNDS rounds, and on until a few after the swap: the new evaluator surely serves some.
        round_index = after_swap = 0
        while round_index < ROUNDS or after_swap < ROUNDS_AFTER_SWAP:
            seen_swap = swapped.is_set()
            outputs = batching.evaluate_many([blank_request(), blank_request(white=True)])
            answered.append(len(outputs) == 2 and all(o is not None for o in outputs))
            round_index += 1
            after_swap += seen_swap
            if round_index == ROUNDS // 2:
                halfway.set()

    threads = [threading.Thread(target=search) for _ in range(THREADS)]
    for thread in threads:
        thread.start()
    assert halfway.wait(TIMEOUT)
    batching.replace_evaluator(second)
    swapped.set()
    for thread in threads:
        thread.join(TIMEOUT)
    batching.close()
    assert len(answered) >= THREADS * ROUNDS and all(answered)
    assert first.calls and second.calls  # both served, each whole batches of its own
    rows_first = sum(len(call) for call in first.calls)
    rows_second = sum(len(call) for call in second.calls)
    assert rows_first + rows_second == len(answered) * 2
    assert not {id(r) for call in first.calls for r in call} & {id(r) for call in second.calls for r in call}


class FakeBatching:
    """What wait_for_quiet reads of a BatchingEvaluator, driven by the test's clock."""

    def __init__(self, clock, schedule):
        self.clock, self.schedule = clock, schedule

    def activity(self):
        return self.schedule(self.clock.now)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


@pytest.mark.parametrize("schedule, earliest, latest", [
    # No query ever comes: torch loads once the engine has been quiet for a while.
    (lambda now: (False, None), TAKE_OVER_NO_QUERY_S, TAKE_OVER_NO_QUERY_S + 0.1),
    # A search answered at 1.0 s and then nothing: torch loads just after.
    (lambda now: (now < 1.0, 1.0 if now >= 1.0 else None), 1.0 + TAKE_OVER_IDLE_S, 1.0 + TAKE_OVER_IDLE_S + 0.1),
    # A search that never ends keeps torch out only until the latest hand-over.
    (lambda now: (True, max(0.0, now - 0.01)), TAKE_OVER_LATEST_S, TAKE_OVER_LATEST_S + 0.1),
])
def test_torch_loads_when_the_waiting_queries_are_answered(schedule, earliest, latest):
    clock = Clock()
    wait_for_quiet(FakeBatching(clock, schedule), clock=clock, sleep=clock.sleep)
    assert earliest <= clock.now <= latest


def nn_settings(**keys):
    values = {"numAnalysisThreads": "1", "nnRandomize": "false", **keys}
    return AnalysisSettings.from_config(Config(values, mode="analysis")).nn


def background(name: str, **keys):
    loaded = []
    header = check_model_file(str(model_path(name)), keep_contents=True)
    failures = []
    backend = network_backend_in_background(header, nn_settings(**keys), 8, on_loaded=lambda *a: loaded.append(a),
                                            on_failure=failures.append)
    return backend, loaded, failures


def assert_same_answer(a, b):
    assert abs(a.white_win - b.white_win) <= PROB_TOLERANCE and abs(a.white_lead - b.white_lead) <= SCORE_TOLERANCE
    np.testing.assert_allclose(a.policy, b.policy, atol=PROB_TOLERANCE)


@pytest.mark.needs_shared
def test_the_numpy_evaluator_answers_first_and_torch_takes_over():
    from katacli.nn.evaluator import NNEvaluator

    backend, loaded, failures = background(G170_B6)
    backend.start_loading()
    batching = backend.loading.evaluator
    request = blank_request(19, cache_key=CACHE_KEY)
    first = batching.evaluate(request)
    backend.loading.wait_settled()
    assert not failures
    assert [type(network) for _, network, _ in loaded][0] is NumpyEvaluator
    assert isinstance(batching.evaluator, NNEvaluator) and not isinstance(batching.evaluator, NumpyEvaluator)
    assert backend.network is batching.evaluator and isinstance(backend.loading.replaced[0], NumpyEvaluator)
    assert batching.evaluator.cache is backend.loading.replaced[0].cache  # the numpy answers stay cached
    assert batching.evaluate(request) is first
    fresh = blank_request(19, white=True)
    by_torch = batching.evaluate(fresh)
    assert "NN rows: 2" in backend.summary_lines()  # the numpy net's row and torch's
    assert_same_answer(by_torch, NumpyEvaluator(read_model_file(model_path(G170_B6))).evaluate_one(fresh))
    backend.close()


@pytest.mark.needs_shared
@pytest.mark.parametrize("name, keys", [(TEST_TRANSFORMER, {}), (TEST_B4, {"nnNumpyUntilTorch": "false"})],
                         ids=["unsupported net", "turned off"])
def test_torch_only_when_numpy_cannot_or_must_not(name, keys):
    backend, loaded, failures = background(name, **keys)
    backend.start_loading()
    backend.loading.wait_settled()
    assert not failures and len(loaded) == 1 and not isinstance(loaded[0][1], NumpyEvaluator)
    assert backend.loading.replaced == []
    backend.close()


@pytest.mark.needs_shared
@pytest.mark.subprocess
def test_kata_analysis_answers_with_numpy_then_torch():
    process = subprocess.run(
        python_cli() + ["analysis", "-model", str(model_path(G170_B6)), "-override-config", "nnRandomize=false"],
        input=e5_query("first") + e5_query("second", komi=7.5), capture_output=True, text=True, timeout=TIMEOUT)
    assert process.returncode == 0, process.stderr
    answers = [json.loads(line) for line in process.stdout.splitlines()]
    assert sorted(a["id"] for a in answers) == ["first", "second"] and all("moveInfos" in a for a in answers)
    devices = [line.split("Model runs on: ")[1] for line in process.stderr.splitlines() if "Model runs on" in line]
    assert READY_LINE in process.stderr
    assert len(devices) == 2 and "numpy" in devices[0] and "PyTorch" in devices[1], process.stderr



@pytest.mark.needs_shared
def test_torch_only_where_a_gpu_would_run_the_net(tmp_path, monkeypatch):
    from katacli.nn import numpy_evaluator

    device_file = tmp_path / "nvidia0"
    device_file.touch()
    monkeypatch.setattr(numpy_evaluator, "GPU_DEVICE_FILES", (str(device_file),))
    assert numpy_evaluator.gpu_likely()
    backend, loaded, failures = background(TEST_B4)
    backend.start_loading()
    backend.loading.wait_settled()
    assert not failures and len(loaded) == 1 and not isinstance(loaded[0][1], NumpyEvaluator)
    backend.close()
