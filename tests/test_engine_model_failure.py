"""A network the engines cannot load ends them the way GUIs report as an engine failure.

``kata gtp`` and ``kata analysis`` print one line and exit with status 3 (EXIT_MODEL_FAILURE) for a
missing, corrupt or cut-short ``-model`` / ``-human-model``; the line starts with KataGo's ``what():``
mark. :func:`katrain_reports` replays what KaTrain does with the stderr lines and exit status of its
engine process; Lizzie and Sabaki report any unrequested end of the engine and show its stderr.
"""
from __future__ import annotations

import gzip
import subprocess
import sys

import pytest

from katacli.cli_support import EXIT_MODEL_FAILURE, MODEL_FAILURE_MARK
from support.paths import G170_B6, HUMAN_TEST, model_path

TIMEOUT = 120
# KaTrain's stderr reader takes a line holding either of these as KataGo failing (katrain/core/engine.py).
KATRAIN_FAILURE_MARKS = ("Uncaught exception", "what()")
KATRAIN_SKIPPED_PREFIX_CHARS = 9  # the characters of the mark KaTrain cuts off before showing the line
KATRAIN_DELIBERATE_EXIT_STATUS = 1  # an exit KaTrain does not report at all
CUT_FRACTION = 0.6  # where the body of a network is cut short: inside its weights


def katrain_reports(returncode: int, stderr: str) -> list[str]:
    """What KaTrain 1.20 reports to the user for an engine that ended with ``returncode`` after writing
    ``stderr``. Mirrors ``KataGoEngine._read_stderr_thread`` (the first stderr line holding a failure mark
    becomes an error popup "KataGo Engine Failed: <line from its 10th character>") and
    ``KataGoEngine.check_alive`` (an exit status other than 1 is logged as "Engine died unexpectedly";
    status 1 counts as deliberate and shows nothing)."""
    reports = []
    for line in stderr.splitlines():
        if any(mark in line for mark in KATRAIN_FAILURE_MARKS):
            reports.append(f"KataGo Engine Failed: {line[KATRAIN_SKIPPED_PREFIX_CHARS:].strip()}")
            break
    if returncode != KATRAIN_DELIBERATE_EXIT_STATUS:
        reports.append(f"Engine died unexpectedly status {returncode}")
    return reports


def test_the_katrain_mirror_tells_katago_abort_from_a_deliberate_exit():
    katago = "terminate called after throwing an instance of 'StringError'\n  what():  Error loading model\n"
    assert katrain_reports(134, katago) == ["KataGo Engine Failed: Error loading model",
                                            "Engine died unexpectedly status 134"]
    assert katrain_reports(1, "error: -model: model file not found: x.bin.gz\n") == []


def run_engine(command: str, args: list[str], text: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "katacli.cli", command, *args], input=text, capture_output=True,
                          text=True, timeout=TIMEOUT)


def cut_short(tmp_path) -> str:
    """The g170 net cut inside its weights and gzipped again: a whole gzip stream with a valid header."""
    raw = gzip.decompress(model_path(G170_B6).read_bytes())
    path = tmp_path / "cut.bin.gz"
    path.write_bytes(gzip.compress(raw[: int(len(raw) * CUT_FRACTION)]))
    return str(path)


def assert_reported_as_engine_failure(result: subprocess.CompletedProcess, flag: str, reason: str) -> None:
    assert result.returncode == EXIT_MODEL_FAILURE, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{MODEL_FAILURE_MARK}error: {flag}: "), lines
    assert reason in lines[0] and result.stdout == ""
    popup, died = katrain_reports(result.returncode, result.stderr)
    assert popup == f"KataGo Engine Failed: {lines[0].removeprefix(MODEL_FAILURE_MARK)}"  # the whole message
    assert died == f"Engine died unexpectedly status {EXIT_MODEL_FAILURE}"


@pytest.mark.parametrize("command, text", [("gtp", "name\nversion\nquit\n"), ("analysis", "")])
def test_a_missing_model_is_an_engine_failure(command, text, tmp_path):
    result = run_engine(command, ["-model", str(tmp_path / "missing.bin.gz")], text)
    assert_reported_as_engine_failure(result, "-model", "model file not found")


@pytest.mark.parametrize("command, text", [("gtp", "name\nversion\nquit\n"), ("analysis", "")])
def test_a_network_cut_short_is_refused_before_anything_is_answered(command, text, tmp_path):
    result = run_engine(command, ["-model", cut_short(tmp_path)], text)
    assert_reported_as_engine_failure(result, "-model", "file truncated, expected")


@pytest.mark.parametrize("command", ["gtp", "analysis"])
def test_a_corrupt_human_model_is_an_engine_failure(command, tmp_path):
    human = tmp_path / "human.bin.gz"
    human.write_bytes(model_path(HUMAN_TEST).read_bytes()[:-100])
    result = run_engine(command, ["-model", str(model_path(G170_B6)), "-human-model", str(human)], "")
    assert_reported_as_engine_failure(result, "-human-model", "gzip file is truncated")


FAIL_IN_BACKGROUND = (
    "import sys\n"
    "from katacli.nn.evaluator import NNEvaluator\n"
    "def fail(*args, **kwargs):\n"
    "    raise RuntimeError('no memory left on the device')\n"
    "NNEvaluator.from_file = staticmethod(fail)\n"
    "from katacli.cli import main\n"
    "main(sys.argv[1:])\n"
)


@pytest.mark.parametrize("text", ["", "name\n", "name\nquit\n"])
def test_a_network_failing_after_ready_never_ends_in_status_0(text):
    """The file passes the start-up check, building the network in the background fails (as a full
    device would): input ending or `quit` before the load is over still ends in the failure."""
    result = subprocess.run([sys.executable, "-c", FAIL_IN_BACKGROUND, "gtp", "-model", str(model_path(G170_B6))],
                            input=text, capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == EXIT_MODEL_FAILURE, result.stderr
    failure = [line for line in result.stderr.splitlines() if line.startswith(MODEL_FAILURE_MARK)]
    assert failure == [f"{MODEL_FAILURE_MARK}error: could not load the model {model_path(G170_B6)}: "
                       "no memory left on the device"], result.stderr
    assert "Traceback" not in result.stderr
