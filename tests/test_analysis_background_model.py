"""`kata analysis` says it is ready before its network is loaded (KaTrain waits for that line): the net
loads in the background, queries wait queued until it is there, everything else is answered at once.

In process, the load is a stand-in held by an event; as a process, a wrapper holds the real load until
the test lets it go (or makes it fail), so what happens while it loads is seen for certain.
"""
from __future__ import annotations

import json
import signal
import threading
import time

import pytest

from katacli.analysis.backend import AnalysisBackend, BackgroundNetwork, ModelInfo
from katacli.cli_support import EXIT_MODEL_FAILURE, MODEL_FAILURE_MARK
from katacli.config import Config
from katacli.nn.batching import BatchingEvaluator
from katacli.nn.model_file_reader import check_model_file
from katacli.setup.engine_settings import AnalysisSettings
from support.analysis import (
    HELD_TIMEOUT, READY_LINE, WAIT_SECONDS, e5_query, held_engines, query_line, running_engine, send,
)
from support.fakes import MaterialEvaluator
from support.paths import G170_B6, HUMAN_TEST, model_path
from support.processes import sigint_reaches_children

TIMEOUT = HELD_TIMEOUT
READY = READY_LINE
LOADED = "Loaded model"
LOAD_FAILURE = "no memory left on the device"
IDLE_WORKER_SECONDS = 0.3
FAKE_INFO = ModelInfo(name="material.bin.gz", internal_name="material", max_batch_size=64,
                      uses_human_sl_profile=False, version=15, using_fp16="auto")


class HeldLoad:
    """A BackgroundNetwork whose load (a MaterialEvaluator) waits for :meth:`let_go`, or fails then."""

    def __init__(self, fail: bool = False):
        self.gate = threading.Event()
        self.fail = fail
        self.loading = BackgroundNetwork(FAKE_INFO.name, self._load, needs_metadata=False)
        self.backend = AnalysisBackend(model_info=FAKE_INFO, loading=self.loading)

    def _load(self) -> tuple:
        self.gate.wait(WAIT_SECONDS)
        if self.fail:
            raise RuntimeError(LOAD_FAILURE)
        network = MaterialEvaluator()
        return network, FAKE_INFO, BatchingEvaluator(network, max_batch_size=FAKE_INFO.max_batch_size)

    def let_go(self) -> None:
        self.gate.set()


def test_only_searches_wait_for_the_network():
    held = HeldLoad()
    with running_engine(backend=held.backend) as (engine, out):
        send(engine, query_line("early"), query_line("dropped", maxVisits=50))
        send(engine, '{"id":"v","action":"query_version"}', '{"id":"m","action":"query_models"}',
             '{"id":"c","action":"clear_cache"}', "not json", query_line("bad", komi="lots"),
             '{"id":"t","action":"terminate","terminateId":"dropped"}')
        out.wait_for(lambda objs: any(o.get("id") == "t" for o in objs))
        answered = {o.get("id"): o for o in out.objects}
        assert answered["v"]["version"] and answered["m"]["models"] == [FAKE_INFO.to_json()]
        assert answered["c"] == {"id": "c", "action": "clear_cache"}
        assert answered["bad"]["field"] == "komi" and any("parse error" in o.get("error", "") for o in out.objects)
        # A query still queued when terminated gets noResults at once, as KataGo's queued queries do.
        assert answered["dropped"] == {"id": "dropped", "isDuringSearch": False, "noResults": True, "turnNumber": 0}
        assert "early" not in answered and not held.loading.loaded
        held.let_go()
        (final,) = out.wait_finals(1, "early")
    assert final["rootInfo"]["visits"] == 20 and "noResults" not in final


def test_queries_queued_while_loading_are_taken_by_priority():
    held = HeldLoad()
    with running_engine(backend=held.backend) as (engine, out):
        send(engine, query_line("low", priority=-1, maxVisits=10))
        time.sleep(IDLE_WORKER_SECONDS)  # an idle worker that could take a query has taken this one by now
        send(engine, query_line("high", priority=5, maxVisits=10), query_line("middle", priority=0, maxVisits=10))
        held.let_go()
        finals = out.wait_finals(3)
    assert [final["id"] for final in finals] == ["high", "middle", "low"]  # one analysis thread


def test_input_ending_while_loading_still_answers_everything():
    held = HeldLoad()
    with running_engine({"numAnalysisThreads": 2}, backend=held.backend) as (engine, out):
        send(engine, *[query_line(f"q{i}", maxVisits=10) for i in range(3)])
        threading.Timer(0.2, held.let_go).start()
        engine.finish(wait=True)  # what closing stdin does: returns once everything is answered
        assert sorted(final["id"] for final in out.finals()) == ["q0", "q1", "q2"]


def test_a_failed_load_answers_each_waiting_query_with_an_error():
    """Embedded (no process to end): the queries that waited for the net get an error and noResults."""
    held = HeldLoad(fail=True)
    with pytest.raises(RuntimeError, match=LOAD_FAILURE):  # closing the backend re-raises the failure
        with running_engine(backend=held.backend) as (engine, out):
            send(engine, query_line("waiting"))
            held.let_go()
            (final,) = out.wait_finals(1, "waiting")
    assert final["noResults"] is True
    assert any(LOAD_FAILURE in o.get("error", "") for o in out.objects)


def test_a_load_never_started_is_not_begun_by_closing():
    def load() -> tuple:
        raise AssertionError("closing an engine that never started must not load its network")

    backend = AnalysisBackend(model_info=FAKE_INFO, loading=BackgroundNetwork(FAKE_INFO.name, load, False))
    backend.close()
    assert backend.summary_lines() == [] and backend.models() == [FAKE_INFO.to_json()]


@pytest.mark.parametrize("name", [G170_B6, HUMAN_TEST])
def test_query_models_from_the_file_check_equals_what_the_loaded_net_reports(name):
    from katacli.analysis.backend import _load_network, model_info_from_header

    nn = AnalysisSettings.from_config(Config({"numAnalysisThreads": "1"}, mode="analysis")).nn
    path = str(model_path(name))
    _, loaded = _load_network(path, nn, FAKE_INFO.max_batch_size)
    assert model_info_from_header(check_model_file(path), nn, FAKE_INFO.max_batch_size) == loaded


# ---- as a process ---------------------------------------------------------------------------------

# The wrapper's line saying whether torch was imported when the load was started (after "ready").
TORCH_MARK = "torch imported before the load:"
# Runs `kata analysis` with the network's load held until the file argv[1] exists (failing then when
# argv[2] is "fail"). It patches the backend, so torch is still imported only by the load.
HOLD_LOAD = (
    "import os, sys, time\n"
    "import katacli.analysis.backend as backend\n"
    "gate, mode = sys.argv[1], sys.argv[2]\n"
    "real = backend._load_network_unchecked\n"
    "def held(*args, **kwargs):\n"
    "    while not os.path.exists(gate):\n"
    "        time.sleep(0.05)\n"
    "    if mode == 'fail':\n"
    f"        raise RuntimeError({LOAD_FAILURE!r})\n"
    "    return real(*args, **kwargs)\n"
    "backend._load_network_unchecked = held\n"
    "start = backend.BackgroundNetwork.start\n"
    "def announced_start(self):\n"
    f"    print({TORCH_MARK!r}, 'torch' in sys.modules, file=sys.stderr, flush=True)\n"
    "    start(self)\n"
    "backend.BackgroundNetwork.start = announced_start\n"
    "from katacli.cli import main\n"
    "main(sys.argv[3:])\n"
)


@pytest.fixture
def held(tmp_path):
    # Without the numpy stand-in (test_analysis_numpy_first.py), which would answer before the held torch load.
    yield from held_engines(HOLD_LOAD, tmp_path / "let-the-network-load",
                            ["analysis", "-model", str(model_path(G170_B6)), "-override-config",
                             "nnNumpyUntilTorch=false"])


@pytest.mark.subprocess
def test_ready_and_answering_before_the_network_is_loaded(held):
    engine = held()
    assert engine.ready.wait(TIMEOUT), engine.stderr
    engine.send(e5_query("first"))
    engine.send('{"id":"m","action":"query_models"}\n')
    models = engine.answer()  # the query above waits for the net; this one does not
    header = check_model_file(model_path(G170_B6))
    (info,) = models["models"]
    assert models["id"] == "m" and info["internalName"] == header.name and info["version"] == header.version
    assert info["name"] == str(model_path(G170_B6)) and info["usesHumanSLProfile"] is False
    assert not any(LOADED in line for line in engine.stderr) and not engine.gate.exists()
    # Nothing before "ready" imported torch (a second of a newcomer's start-up on a CPU).
    assert engine.wait_for_line(TORCH_MARK) == f"{TORCH_MARK} False"
    engine.gate.touch()
    answer = engine.answer()
    assert answer["id"] == "first" and answer["rootInfo"]["visits"] == 8
    engine.process.stdin.close()
    assert engine.wait() == 0
    order = [line for line in engine.stderr if READY in line or LOADED in line]
    assert READY in order[0] and LOADED in order[1], engine.stderr


@pytest.mark.subprocess
def test_input_closed_while_loading_loses_no_answer(held):
    engine = held()
    assert engine.ready.wait(TIMEOUT), engine.stderr
    engine.send(e5_query("a") + e5_query("b"))
    engine.process.stdin.close()
    engine.gate.touch()
    answers = [json.loads(line) for line in engine.process.stdout]
    assert engine.wait() == 0
    assert sorted(answer["id"] for answer in answers) == ["a", "b"] and all("moveInfos" in a for a in answers)


@pytest.mark.subprocess
@pytest.mark.parametrize("before_failure", ["input ends", "a query waits"])
def test_a_network_failing_after_ready_ends_in_the_model_failure_status(held, before_failure):
    engine = held("fail")
    assert engine.ready.wait(TIMEOUT), engine.stderr
    if before_failure == "a query waits":
        engine.send(e5_query("waiting"))
    else:
        engine.process.stdin.close()  # the engine now waits for the net before it exits
    engine.gate.touch()
    assert engine.wait() == EXIT_MODEL_FAILURE
    failure = [line for line in engine.stderr if line.startswith(MODEL_FAILURE_MARK)]
    assert failure == [f"{MODEL_FAILURE_MARK}error: could not load the model {model_path(G170_B6)}: {LOAD_FAILURE}"]
    assert not any("Traceback" in line for line in engine.stderr)


@pytest.mark.subprocess
def test_ctrl_c_while_loading_quits_without_hanging(held):
    with sigint_reaches_children():
        engine = held()
    assert engine.ready.wait(TIMEOUT), engine.stderr
    engine.send(e5_query("dropped"))
    engine.process.send_signal(signal.SIGINT)
    engine.gate.touch()  # quitting still lets the load end: a failure would be reported
    # The status of an interrupted run (main() called with arguments, as here, returns it; the console
    # script then ends the process by SIGINT itself, as KataGo is ended: test_analysis_cli.py)
    assert engine.wait() == 130
    assert engine.process.stdout.read() == ""  # quitting now: the queued query is dropped, as KataGo does
    assert not any("Traceback" in line for line in engine.stderr)


def _engine_logging_to(lines: list, analysis_threads: int):
    """An in-process engine without a network whose log lines go to ``lines`` (not started)."""
    from katacli.analysis.output import JsonLineWriter
    from katacli.analysis.startup import build_engine
    from support.analysis import Collector

    class ListLog:
        def write(self, text: str) -> None:
            lines.append(text)

    cfg = Config({"numAnalysisThreads": str(analysis_threads)}, mode="analysis")
    cfg.apply_mode_aliases("analysis")
    return build_engine(cfg, AnalysisSettings.from_config(cfg), AnalysisBackend(), JsonLineWriter(Collector()),
                        log=ListLog())


def test_ctrl_c_while_the_workers_start_quits_like_ctrl_c_while_reading(monkeypatch):
    """A Ctrl-C can land while serve() starts the workers (their modules are imported after "ready"):
    it takes the same way out as one while reading queries, also with workers never started."""
    import io

    from katacli.analysis import worker as worker_module

    started = []

    def interrupted_start(self):
        if started:
            raise KeyboardInterrupt  # the second worker is never started
        started.append(self)
        self.thread.start()

    monkeypatch.setattr(worker_module.AnalysisWorker, "start", interrupted_start)
    lines = []
    engine = _engine_logging_to(lines, analysis_threads=2)
    assert engine.serve(io.StringIO(e5_query("never read") + "\n")) == 0
    assert lines == ["Interrupted, quitting without waiting for open queries"]
    assert len(engine.workers) == 2 and len(started) == 1


def test_ctrl_c_while_a_query_is_queued_waits_for_the_line_to_be_handled(monkeypatch):
    """SIGINT in the middle of handling a line (a lock may be held there) is taken once the line is done."""
    import io
    import os
    import signal as signals

    if signals.getsignal(signals.SIGINT) is not signals.default_int_handler:
        pytest.skip("SIGINT has another handler in this test process (a pytest-xdist worker ignores it)")
    lines = []
    engine = _engine_logging_to(lines, analysis_threads=1)
    handled = []
    real_handle = engine.handle_line

    def handle_and_interrupt(line):
        os.kill(os.getpid(), signals.SIGINT)
        time.sleep(0.05)            # the signal arrives here, inside the handling
        real_handle(line)
        handled.append(line)

    monkeypatch.setattr(engine, "handle_line", handle_and_interrupt)
    stream = io.StringIO(e5_query("first") + "\n" + e5_query("never read") + "\n")
    assert engine.serve(stream) == 0
    assert len(handled) == 1 and lines == ["Interrupted, quitting without waiting for open queries"]
    assert signals.getsignal(signals.SIGINT) is signals.default_int_handler   # restored
