"""Helpers for the `kata analysis` tests: in-process engines over a line collector, query builders,
shared models.
"""
from __future__ import annotations

import json
import sys
import threading
import time
from contextlib import contextmanager
from functools import lru_cache
from typing import Callable, Optional

import pytest

from katacli.analysis.backend import AnalysisBackend, ModelInfo
from katacli.analysis.output import JsonLineWriter
from katacli.analysis.startup import build_engine
from katacli.config import Config
from katacli.setup.engine_settings import AnalysisSettings

from support.paths import MODELS, REPO, TEST_B4, model_path  # noqa: F401  (REPO: used by the analysis tests)

SMALL_MODEL = TEST_B4
WAIT_SECONDS = 30.0
# Far more visits than a test ever waits for: such searches end only when terminated.
ENDLESS_VISITS = 10 ** 9


class Collector:
    """A text stream that parses every line written to it as JSON and lets tests wait for lines."""

    def __init__(self):
        self._cond = threading.Condition()
        self._buffer = ""
        self.lines: list[str] = []
        self.objects: list[dict] = []

    def write(self, text: str) -> int:
        with self._cond:
            self._buffer += text
            while "\n" in self._buffer:
                line, self._buffer = self._buffer.split("\n", 1)
                self.lines.append(line)
                self.objects.append(json.loads(line))
            self._cond.notify_all()
        return len(text)

    def flush(self) -> None:
        pass

    def wait_for(self, predicate: Callable[[list], bool], timeout: float = WAIT_SECONDS) -> list:
        with self._cond:
            if not self._cond.wait_for(lambda: predicate(self.objects), timeout):
                raise AssertionError(f"timed out; got {self.objects!r}"[:3000])
            return list(self.objects)

    def finals(self, query_id: Optional[str] = None) -> list[dict]:
        with self._cond:
            return [o for o in self.objects if o.get("isDuringSearch") is False
                    and (query_id is None or o.get("id") == query_id)]

    def wait_finals(self, count: int, query_id: Optional[str] = None, timeout: float = WAIT_SECONDS) -> list[dict]:
        self.wait_for(lambda objs: len([o for o in objs if o.get("isDuringSearch") is False
                                        and (query_id is None or o.get("id") == query_id)]) >= count, timeout)
        return self.finals(query_id)

    def wait_for_id(self, query_id: str, timeout: float = WAIT_SECONDS) -> dict:
        objs = self.wait_for(lambda objs: any(o.get("id") == query_id for o in objs), timeout)
        return next(o for o in objs if o.get("id") == query_id)


def query_line(query_id: str = "q", **fields) -> str:
    """A query on an empty 5x5 board with few visits; keyword arguments add or replace fields."""
    query = {"id": query_id, "moves": [], "rules": "tromp-taylor", "komi": 7.5, "boardXSize": 5, "boardYSize": 5,
             "maxVisits": 20}
    query.update(fields)
    return json.dumps(query)


def shared_network(name: str = SMALL_MODEL):
    """A CPU NNEvaluator for a model from ../shared/models, loaded once (skips the test when absent)."""
    return _load_network(name)


@lru_cache(maxsize=None)
def _load_network(name: str):
    path = model_path(name)
    torch = pytest.importorskip("torch")
    from katacli.nn.evaluator import NNEvaluator

    torch.set_num_threads(1)
    return NNEvaluator.from_file(path, device="cpu", max_batch_size=64)


def network_backend(name: str = SMALL_MODEL, max_batch_size: int = 64) -> AnalysisBackend:
    network = shared_network(name)
    info = ModelInfo(name=str(MODELS / name), internal_name=network.model_name, max_batch_size=max_batch_size,
                     uses_human_sl_profile=bool(network.needs_metadata), version=int(network.version),
                     using_fp16="auto")
    return AnalysisBackend(network, info, max_batch_size=max_batch_size)


@contextmanager
def running_engine(settings: Optional[dict] = None, *, backend: Optional[AnalysisBackend] = None, wait: bool = True):
    """An in-process engine (rollouts unless ``backend``) with config ``settings``; yields (engine, collector)."""
    values = {"numAnalysisThreads": "1", "reportAnalysisWinratesAs": "BLACK"}
    values.update({k: str(v) for k, v in (settings or {}).items()})
    cfg = Config(values, mode="analysis")
    cfg.apply_mode_aliases("analysis")
    analysis_settings = AnalysisSettings.from_config(cfg)
    backend = backend if backend is not None else AnalysisBackend()
    out = Collector()
    engine = build_engine(cfg, analysis_settings, backend, JsonLineWriter(out))
    engine.start()
    try:
        yield engine, out
    finally:
        engine.finish(wait=wait)
        backend.close()


def send(engine, *lines: str) -> None:
    for line in lines:
        engine.handle_line(line)


def python_cli() -> list[str]:
    return [sys.executable, "-m", "katacli.cli"]


def wait_until(predicate: Callable[[], bool], timeout: float = WAIT_SECONDS, step: float = 0.01) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError("timed out waiting")
        time.sleep(step)


# ---- `kata analysis` as a process, with a network's load held back ----------------------------------

READY_LINE = "ready to begin handling requests"
HELD_TIMEOUT = 120
HELD_POLL_SECONDS = 0.05


def e5_query(query_id: str, **fields) -> str:
    """One line: a 9x9 position after B E5, 8 visits (keyword arguments add or replace fields)."""
    return query_line(query_id, **{"moves": [["B", "E5"]], "rules": "japanese", "komi": 6.5, "boardXSize": 9,
                                   "boardYSize": 9, "maxVisits": 8, **fields}) + "\n"


class HeldEngine:
    """`kata analysis ARGS` run by ``python -c WRAPPER GATE MODE ARGS...``, a wrapper that holds a network's
    load until the file GATE exists (and then lets it fail when MODE is "fail"); stderr is read as it comes."""

    def __init__(self, wrapper: str, gate, mode: str, args: list[str]):
        import subprocess

        self.gate = gate
        self.process = subprocess.Popen([sys.executable, "-c", wrapper, str(gate), mode, *args],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True)
        self.stderr: list[str] = []
        self.ready = threading.Event()
        self.reader = threading.Thread(target=self._read_stderr, daemon=True)
        self.reader.start()

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr.append(line.rstrip("\n"))
            if READY_LINE in line:
                self.ready.set()

    def wait_for_line(self, start: str) -> str:
        deadline = time.monotonic() + HELD_TIMEOUT
        while time.monotonic() < deadline:
            found = [line for line in list(self.stderr) if line.startswith(start)]
            if found:
                return found[0]
            time.sleep(HELD_POLL_SECONDS)
        raise AssertionError(f"no line starting {start!r}: {self.stderr}")

    def send(self, text: str) -> None:
        self.process.stdin.write(text)
        self.process.stdin.flush()

    def answer(self) -> dict:
        return json.loads(self.process.stdout.readline())

    def wait(self) -> int:
        """The exit status, once all of stderr is read."""
        status = self.process.wait(HELD_TIMEOUT)
        self.reader.join(HELD_TIMEOUT)
        return status

    def finish(self) -> int:
        self.process.stdin.close()
        return self.wait()


def held_engines(wrapper: str, gate, args: list[str]):
    """A fixture's body: yields ``start(mode="load")`` making HeldEngines, and kills those still running after."""
    engines: list[HeldEngine] = []

    def start(mode: str = "load") -> HeldEngine:
        engines.append(HeldEngine(wrapper, gate, mode, args))
        return engines[-1]

    yield start
    for engine in engines:
        if engine.process.poll() is None:
            engine.process.kill()
            engine.process.wait()
