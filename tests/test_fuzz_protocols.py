"""Fuzzing `kata gtp` and `kata analysis` with hostile input: random unicode, invalid UTF-8 bytes, 1 MB
lines, JSON nested 10,000 deep, hostile file paths. No line may kill or hang an engine; GTP never
answers with an internal error, and every line the analysis engine writes is a JSON object.

The 100,000-line runs are marked `slow`: they take about half a minute together and run by default;
before each release run them on their own too with `bash scripts/test.sh -m slow` (see README). The
real processes get raw bytes once as well.
"""
from __future__ import annotations

import json
import random
import subprocess
import threading

import pytest

from katacli.analysis.backend import AnalysisBackend
from katacli.analysis.output import JsonLineWriter
from katacli.analysis.startup import build_engine as build_analysis_engine
from katacli.config import Config
from katacli.setup.engine_settings import AnalysisSettings

from support.analysis import python_cli
from support.fuzz import (
    DEEP_NESTING, MEGABYTE, feed_with_watchdog, hostile_analysis_line, hostile_gtp_line, hostile_paths, small_query,
)
from support.gtp import make_engine

RELEASE_LINES = 100_000
SEED = 20261123
PROCESS_TIMEOUT = 120
ANALYSIS_SETTINGS = {"numAnalysisThreads": "2", "numSearchThreadsPerAnalysisThread": "1", "maxVisits": "3",
                     "reportAnalysisWinratesAs": "BLACK"}


class LineRecorder:
    """A text stream (thread safe) keeping every whole line written to it."""

    def __init__(self):
        self._lock = threading.Lock()
        self._partial = ""
        self.lines: list[str] = []
        self.size = 0

    def write(self, text: str) -> int:
        with self._lock:
            self.size += len(text)
            pieces = (self._partial + text).split("\n")
            self._partial = pieces.pop()
            self.lines.extend(pieces)
        return len(text)

    def flush(self) -> None:
        pass


def fuzz_gtp(num_lines: int, tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)  # anything printsgf writes stays here
    engine, out, _ = make_engine(override="maxVisits=3,maxTime=0.05,searchRandSeed=1", scripted=False)
    rng = random.Random(SEED)
    paths = hostile_paths(tmp_path)
    lines = (hostile_gtp_line(rng, paths) for _ in range(num_lines))
    feed_with_watchdog(lambda line: engine.handle_line(line + "\n"), lines, engine.stop_background, out.tell)
    text = out.getvalue()
    at = text.find("internal error")
    assert at < 0, text[max(0, at - 300): at + 300]
    before = len(text)
    engine.handle_line("321 name\n")
    assert out.getvalue()[before:].endswith("=321 KataGo\n\n")


def fuzz_analysis(num_lines: int) -> None:
    cfg = Config(ANALYSIS_SETTINGS, mode="analysis")
    cfg.apply_mode_aliases("analysis")
    backend = AnalysisBackend()
    out = LineRecorder()
    engine = build_analysis_engine(cfg, AnalysisSettings.from_config(cfg), backend, JsonLineWriter(out))
    engine.start()
    rng = random.Random(SEED + 1)
    lines = [hostile_analysis_line(rng) for _ in range(num_lines)]
    lines.append(json.dumps(small_query(rng, "last")))  # still answered after everything else

    try:
        feed_with_watchdog(engine.handle_line, lines, lambda: engine.finish(wait=True), lambda: out.size)
    finally:
        backend.close()
    objects = []
    for line in out.lines:
        try:
            objects.append(json.loads(line))
        except ValueError:
            pytest.fail(f"not JSON: {line[:300]!r}")
    assert all(isinstance(o, dict) for o in objects)
    assert all("id" in o or "error" in o or "warning" in o for o in objects)
    assert any(o.get("id") == "last" and o.get("isDuringSearch") is False for o in objects)


@pytest.mark.slow
def test_gtp_release_fuzz_100000_lines(tmp_path, monkeypatch):
    fuzz_gtp(RELEASE_LINES, tmp_path, monkeypatch)


@pytest.mark.slow
def test_analysis_release_fuzz_100000_lines():
    fuzz_analysis(RELEASE_LINES)


# ---------------------------------------------------------------------------- the real processes, raw bytes

RAW_LINES = [
    b"\xff\xfe\xfd garbage \x80\x81",
    b"play b \xc3\x28",                      # a cut two-byte sequence
    b"name \xed\xa0\x80",                    # an encoded surrogate
    b"\xf0\x9f\x98\x80 \xe2\x82",            # an emoji, then a cut sequence
    b"komi " + b"9" * MEGABYTE,
    b"[" * DEEP_NESTING + b"]" * DEEP_NESTING,
    b"\x00\x00\x00",
]


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["gtp", "analysis"])
def test_real_process_reads_raw_bytes(command):
    final = b"name" if command == "gtp" else json.dumps(small_query(random.Random(0), "last")).encode()
    stdin = b"\n".join(RAW_LINES + [final]) + b"\n"
    result = subprocess.run(python_cli() + [command, "-override-config", "maxVisits=3"], input=stdin,
                            capture_output=True, timeout=PROCESS_TIMEOUT)
    assert result.returncode == 0, result.stderr[-2000:]
    assert b"Traceback" not in result.stderr
    if command == "gtp":
        assert b"internal error" not in result.stdout and result.stdout.endswith(b"= KataGo\n\n")
    else:
        objects = [json.loads(line) for line in result.stdout.decode("utf-8").splitlines()]
        assert len(objects) >= len(RAW_LINES) and objects[-1]["id"] == "last"
