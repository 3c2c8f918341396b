"""`kata analysis` as a real process: KaTrain's launch line, the JSON wire, closing stdin, quitting,
Ctrl-C and startup errors."""
from __future__ import annotations

import json
import queue
import signal
import subprocess
import threading
import time

import pytest

from katacli.cli_support import EXIT_MODEL_FAILURE
from support.analysis import ENDLESS_VISITS, REPO, SMALL_MODEL, model_path, python_cli, query_line
from support.processes import sigint_reaches_children

pytestmark = pytest.mark.subprocess  # every test here starts processes

PROCESS_TIMEOUT = 60.0

# What KaTrain's analysis config sets (numAnalysisThreads comes from -analysis-threads instead).
KATRAIN_LIKE_CONFIG = """
logDir = {log_dir}
logAllRequests = false
logSearchInfo = false
reportAnalysisWinratesAs = BLACK
analysisPVLen = 15
maxVisits = 500
numSearchThreadsPerAnalysisThread = 4
nnMaxBatchSize = 16
nnCacheSizePowerOfTwo = 18
wideRootNoise = 0.04
"""


class EngineProcess:
    """A `kata analysis` child process with its stdout lines parsed as JSON on a reader thread."""

    def __init__(self, args: list[str], cwd=REPO):
        self.process = subprocess.Popen(python_cli() + ["analysis"] + args, cwd=cwd, stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, encoding="utf-8")
        self.lines: "queue.Queue[dict]" = queue.Queue()
        self.stderr_text = ""
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        for line in self.process.stdout:
            self.lines.put(json.loads(line))

    def _read_stderr(self) -> None:
        for line in self.process.stderr:
            self.stderr_text += line

    def send(self, *lines: str) -> None:
        for line in lines:
            self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def next(self, timeout: float = PROCESS_TIMEOUT) -> dict:
        return self.lines.get(timeout=timeout)

    def close_stdin_and_wait(self, timeout: float = PROCESS_TIMEOUT) -> int:
        self.process.stdin.close()
        return self.process.wait(timeout)

    def remaining(self) -> list[dict]:
        time.sleep(0.1)
        out = []
        while not self.lines.empty():
            out.append(self.lines.get_nowait())
        return out

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def engines():
    started: list[EngineProcess] = []

    def start(args: list[str]) -> EngineProcess:
        engine = EngineProcess(args)
        started.append(engine)
        return engine

    yield start
    for engine in started:
        engine.kill()


def test_rollout_engine_answers_on_the_wire_and_finishes_queued_work_when_stdin_closes(engines):
    engine = engines(["-model", "rollouts", "-override-config", "numAnalysisThreads=2,logToStderr=true"])
    engine.send('{"id":"v","action":"query_version"}', "not json")
    assert engine.next()["version"] == "1.17.2"
    assert "error" in engine.next()
    engine.send(*[query_line(f"q{i}", maxVisits=300, analyzeTurns=[0]) for i in range(6)])
    assert engine.close_stdin_and_wait() == 0
    finals = engine.remaining()
    assert sorted(o["id"] for o in finals) == [f"q{i}" for i in range(6)]
    assert all(o["rootInfo"]["visits"] == 300 for o in finals)
    assert "Monte Carlo rollouts" in engine.stderr_text
    assert "Started, ready to begin handling requests" in engine.stderr_text


def test_a_lone_carriage_return_does_not_end_a_query(engines):
    """Queries end at LF, as KataGo reads them: a CR inside a line is JSON whitespace (two objects on one line
    are one malformed query, never two answers), and CR LF line ends work."""
    engine = engines(["-model", "rollouts"])
    engine.send('{"id":"a","action":"query_version"}\r{"id":"b","action":"query_version"}',
                '{"id":"c","action":"query_version"}\r')
    first, second = engine.next(), engine.next()
    assert "error" in first and "id" not in first
    assert second["id"] == "c" and second["version"] == "1.17.2"
    assert engine.close_stdin_and_wait() == 0
    assert engine.remaining() == []


def test_katrain_launch_line_with_a_network(engines, tmp_path):
    model = model_path(SMALL_MODEL)
    config = tmp_path / "analysis_config.cfg"
    config.write_text(KATRAIN_LIKE_CONFIG.format(log_dir=tmp_path / "logs"))
    engine = engines(["-model", str(model), "-config", str(config), "-analysis-threads", "2",
                      "-override-config", f"homeDataDir={tmp_path}"])
    query = {"id": "QUERY:1", "rules": "japanese", "priority": 3, "analyzeTurns": [2], "maxVisits": 12,
             "komi": 6.5, "boardXSize": 19, "boardYSize": 19, "includeOwnership": True, "includeMovesOwnership": False,
             "includePolicy": True, "initialStones": [], "initialPlayer": "B", "moves": [["B", "Q16"], ["W", "D4"]],
             "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"}}
    engine.send(json.dumps(query))
    result = engine.next()
    assert result["id"] == "QUERY:1" and result["turnNumber"] == 2 and result["isDuringSearch"] is False
    assert len(result["ownership"]) == 361 and len(result["policy"]) == 362 and "rawWinrate" in result["rootInfo"]
    endless = dict(query, id="QUERY:2", maxVisits=ENDLESS_VISITS)
    engine.send(json.dumps(endless))
    time.sleep(0.5)
    engine.send(json.dumps({"id": "terminate_QUERY:2", "action": "terminate", "terminateId": "QUERY:2"}))
    replies = [engine.next(), engine.next()]
    assert {"id": "terminate_QUERY:2", "action": "terminate", "terminateId": "QUERY:2"} in replies
    assert any(r.get("id") == "QUERY:2" and r["isDuringSearch"] is False for r in replies)
    assert engine.close_stdin_and_wait() == 0
    assert list((tmp_path / "logs").glob("*.log")), "logDir from the config gets a log file"


def test_quit_without_waiting_exits_promptly(engines):
    engine = engines(["-model", "rollouts", "-quit-without-waiting", "-analysis-threads", "2"])
    engine.send(*[query_line(f"e{i}", boardXSize=9, boardYSize=9, maxVisits=ENDLESS_VISITS) for i in range(4)])
    time.sleep(0.3)
    # The searches are endless: exiting at all (within the hang guard) means it did not wait for them.
    assert engine.close_stdin_and_wait(timeout=20) == 0


def test_ctrl_c_exits_cleanly(engines):
    with sigint_reaches_children():
        engine = engines(["-model", "rollouts"])
    engine.send(query_line("r", boardXSize=9, boardYSize=9, maxVisits=ENDLESS_VISITS, reportDuringSearchEvery=0.05))
    assert engine.next()["isDuringSearch"] is True
    engine.process.send_signal(signal.SIGINT)
    assert engine.process.wait(20) == -signal.SIGINT   # ended as Ctrl-C ends a process, as KataGo
    time.sleep(0.1)
    assert "Traceback" not in engine.stderr_text


@pytest.mark.parametrize("args, message, status", [
    (["-override-config", "maxVisits=0"], "maxVisits", 1),
    (["-model", "/nonexistent/model.bin.gz"], "model file not found", EXIT_MODEL_FAILURE),  # a GUI reports it
])
def test_startup_errors_exit_with_one_line(args, message, status):
    result = subprocess.run(python_cli() + ["analysis"] + args, cwd=REPO, input="", capture_output=True, text=True,
                            timeout=PROCESS_TIMEOUT)
    assert result.returncode == status
    assert "error" in result.stderr and message in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.subprocess
def test_a_reader_that_goes_away_ends_the_engine_at_once_as_katago():
    # `kata analysis ... | head -1`: KataGo dies by SIGPIPE at its next write; kata searched on for nobody.
    process = subprocess.Popen(
        python_cli() + ["analysis", "-model", str(model_path(SMALL_MODEL)), "-override-config", "logDir="],
        cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        process.stdin.write((query_line("endless", maxVisits=ENDLESS_VISITS, reportDuringSearchEvery=0.2) + "\n").encode())
        process.stdin.flush()
        assert process.stdout.readline().startswith(b'{"id":"endless"')
        process.stdout.close()   # the reader goes away; stdin stays open, as a producer's would
        assert process.wait(20) in (-signal.SIGPIPE, 141)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.subprocess
def test_ctrl_c_with_a_full_output_pipe_still_ends_the_engine():
    """A client that stops reading (its pipe full, the threads answering queries blocked writing to it)
    and then sends Ctrl-C: the engine ends within its few seconds' grace (it hung for ever, waiting on the
    blocked writers), and a second Ctrl-C ends it at once, as KataGo ends on the first."""
    with sigint_reaches_children():
        process = subprocess.Popen(
            python_cli() + ["analysis", "-model", str(model_path(SMALL_MODEL)), "-override-config",
                            "numAnalysisThreads=2,logDir="],
            cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        for index in range(60):   # 19x19 answers with policy and ownership: far more than a pipe holds
            process.stdin.write((query_line(f"q{index}", boardXSize=19, boardYSize=19, maxVisits=4,
                                            includeOwnership=True, includePolicy=True) + "\n").encode())
        process.stdin.flush()
        time.sleep(4.0)   # answered until the pipe filled; nobody reads it
        process.send_signal(signal.SIGINT)
        time.sleep(0.5)
        process.send_signal(signal.SIGINT)
        assert process.wait(10) == -signal.SIGINT
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_log_search_info_writes_katagos_search_block(engines, tmp_path):
    # KataGo's analysis engine logs each search as its genmove log (printGenmoveLog, no move, no time).
    log = tmp_path / "analysis.log"
    engine = engines(["-model", str(model_path(SMALL_MODEL)), "-override-config",
                      f"logFile={log},logSearchInfo=true,homeDataDir={tmp_path},reportAnalysisWinratesAs=BLACK"])
    engine.send(query_line("s", boardXSize=9, boardYSize=9, moves=[["B", "E5"]], maxVisits=12))
    assert engine.next()["id"] == "s"
    assert engine.close_stdin_and_wait() == 0
    text = log.read_text()
    block = text[text.index("MoveNum: 1 HASH: "):]
    for line in ("koPOSITIONALscoreAREAtaxNONEsui1komi7.5", "Root visits: 12", "New playouts: 12", "NN rows: ",
                 "NN avg batch size: ", "PV: ", "Tree:", "---White(v)---"):
        assert line in block, (line, block)
    assert "Time taken" not in block and "@" not in block.split("Tree:")[0]
    rows = int(block.split("NN rows: ")[1].split()[0])
    assert rows > 0   # the network's rows, through the batching server
