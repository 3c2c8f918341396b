"""`kata gtp` as a real process: startup errors, answers before the network is loaded, exit status
on EOF and Ctrl-C, and sessions scripted the way Lizzie, Sabaki and q5Go drive an engine.
(CR LF input and a log on stderr over the real wire: gtp_transcripts/search_rollouts.gtp.)"""
from __future__ import annotations

import gzip
import re
import signal
import subprocess
import sys
import threading

import pytest

from katacli.cli_support import EXIT_MODEL_FAILURE, MODEL_FAILURE_MARK
from katacli.gtp.client import GtpClient
from support.gtp import model_path, python_cli
from support.paths import G170_B6
from support.processes import sigint_reaches_children

pytestmark = pytest.mark.subprocess  # every test here starts processes

TIMEOUT = 60
KATA_INFO_RE = re.compile(
    r"info move (\S+) visits \d+ edgeVisits \d+ utility \S+ winrate \S+ scoreMean \S+ scoreStdev \S+ "
    r"scoreLead \S+ scoreSelfplay \S+ prior \S+ lcb \S+ utilityLcb \S+ weight \S+( isSymmetryOf \S+)? order \d+ pv")
LZ_INFO_RE = re.compile(r"info move (\S+) visits \d+ winrate -?\d+ prior \d+ lcb -?\d+ order \d+ pv")
ROLLOUTS = ["-model", "rollouts", "-override-config", "maxVisits=60,searchRandSeed=3"]


def gtp(*args: str, **kwargs) -> GtpClient:
    return GtpClient(python_cli() + ["gtp", *args], stderr=subprocess.PIPE, **kwargs)


def run_gtp(args: list[str], text: str) -> subprocess.CompletedProcess:
    return subprocess.run(python_cli() + ["gtp", *args], input=text.encode(), capture_output=True, timeout=TIMEOUT)


# --------------------------------------------------------------------------- startup and exit


# (A model that cannot be loaded is an engine failure, status 3: tests/test_engine_model_failure.py.)
@pytest.mark.parametrize("args, message", [
    (["-override-config", "maxVisits=" + "9" * 5000],  # a search key, checked before input can end the run
     "error: Invalid value for 'maxVisits' (-override-config): " + "9" * 120 + "... is out of range, must be "
     "between 1 and 1125899906842624"),
    (["-config", "not-text.cfg"], "error: Config file not-text.cfg is a binary file, not a text config "
                                  "(is it a model file?)"),
    (["-config", "no-such.cfg"], "error: Config file not found: no-such.cfg"),
    (["-override-config", "rules=bogus"], "error: Invalid value for 'rules' (-override-config): "
                                          "Could not parse rules: bogus"),
])
def test_startup_mistakes_are_one_line_errors(args, message, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "not-text.cfg").write_bytes(gzip.compress(b"maxVisits = 10\n"))
    result = run_gtp(args, "name\n")
    assert result.returncode == 1
    assert result.stdout == b""
    assert result.stderr.decode().strip() == message


@pytest.mark.parametrize("damage", ["truncated", "bit flip", "not a model", "future version"])
def test_a_broken_model_stops_the_start_even_when_input_ends_first(damage, tmp_path):
    """The file is checked before the protocol loop: identity commands alone cannot hide a broken
    network behind exit status 0."""
    good = model_path("test-b4c32.bin.gz").read_bytes()
    plain = gzip.decompress(good)
    broken = {
        "truncated": good[: len(good) // 2],
        "bit flip": good[: len(good) // 2] + bytes([good[len(good) // 2] ^ 0xFF]) + good[len(good) // 2 + 1:],
        "not a model": gzip.compress(b"hello world\n"),
        "future version": gzip.compress(plain.replace(b"\n15\n", b"\n99\n", 1)),
    }[damage]
    path = tmp_path / "broken.bin.gz"
    path.write_bytes(broken)
    result = run_gtp(["-model", str(path)], "name\nversion\nquit\n")
    assert result.returncode == EXIT_MODEL_FAILURE and result.stdout == b""
    lines = result.stderr.decode().strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{MODEL_FAILURE_MARK}error: -model: {path}: "), lines


@pytest.mark.parametrize("command", ["gtp", "analysis"])
def test_config_warnings_reach_the_log_file_too(command, tmp_path):
    log = tmp_path / "engine.log"
    stdin = "boardsize 9\nquit\n" if command == "gtp" else ""
    result = subprocess.run(python_cli() + [command, "-override-config", f"logFile={log},maxVisitz=10"],
                            input=stdin.encode(), capture_output=True, timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    warning = "WARNING: Unknown config key 'maxVisitz' in -override-config (did you mean 'maxVisits'?)"
    assert warning in result.stderr.decode()
    assert warning in log.read_text()


def test_config_rules_a_network_cannot_represent_stop_the_start():
    model = model_path("test-b4c32.bin.gz")
    result = run_gtp(["-model", str(model), "-override-config", "koRule=SPIGHT,scoringRule=AREA,"
                      "multiStoneSuicideLegal=true"], "name\n")
    assert result.returncode == 1 and result.stdout == b""
    assert result.stderr.decode().strip().endswith("are NOT supported by neural net")


def test_identity_is_answered_while_the_model_loads():
    """name is answered before the network has finished loading (the engine says so on stderr)."""
    model = model_path("g170-b6c96-s175395328-d26788732.bin.gz")
    stderr_lines: list[str] = []
    with gtp("-model", str(model)) as engine:
        def read_stderr():
            for line in engine.process.stderr:
                stderr_lines.append(line)

        reader = threading.Thread(target=read_stderr, daemon=True)
        reader.start()
        assert engine.command("name") == "KataGo"
        assert engine.command("version") == "1.17.2+g170-b6c96-s175M"   # as KataGo 1.17.2 answers with this net
        lines_before_the_answer = len(stderr_lines)
        assert '"version":8' in engine.command("kata-get-models")  # waits for the network
    reader.join(TIMEOUT)
    loaded = next(i for i, line in enumerate(stderr_lines) if line.startswith("Model name: "))
    assert loaded >= lines_before_the_answer  # the engine said it loaded the model after answering


def test_end_of_input_during_analysis_ends_the_response_and_exits_0():
    engine = gtp(*ROLLOUTS)
    engine.command("boardsize 7")
    engine.send_line("kata-analyze 5")
    assert engine.read_line() == "="
    assert KATA_INFO_RE.match(engine.read_line())
    engine.process.stdin.close()
    lines = []
    while True:
        try:
            lines.append(engine.read_line(TIMEOUT))
        except Exception:
            break
    assert "" in lines  # the blank line that ends the analysis response
    assert engine.process.wait(TIMEOUT) == 0


def test_ctrl_c_exits_cleanly():
    with sigint_reaches_children():
        engine = gtp(*ROLLOUTS)
    engine.command("boardsize 9")
    engine.send_line("lz-analyze 5")
    assert engine.read_line() == "="
    assert LZ_INFO_RE.match(engine.read_line())
    engine.process.send_signal(signal.SIGINT)
    assert engine.process.wait(TIMEOUT) == -signal.SIGINT   # ended as Ctrl-C ends a process, as KataGo
    assert "Traceback" not in engine.process.stderr.read()


def test_ctrl_c_during_a_genmove_exits_cleanly():
    """Ctrl-C while a genmove's search runs the network: the search stops and the process ends as Ctrl-C ends one. (Python
    3.11's Thread.join, interrupted by the Ctrl-C, marked the running search thread finished; the process
    then exited with the search inside torch and aborted: "terminate called without an active exception".)"""
    model = model_path(G170_B6)
    with sigint_reaches_children():
        engine = gtp("-model", str(model), "-override-config", "maxVisits=1000000,numSearchThreads=2")
    assert engine.command("boardsize 19") == ""
    engine.send_line("genmove b")
    threading.Event().wait(2.0)  # the search is under way (a million visits take minutes)
    engine.process.send_signal(signal.SIGINT)
    assert engine.process.wait(TIMEOUT) == -signal.SIGINT
    stderr = engine.process.stderr.read()
    assert "terminate called" not in stderr and "Traceback" not in stderr


# --------------------------------------------------------------------------- GUI-style sessions


def read_info_lines(engine: GtpClient, count: int) -> list[str]:
    return [engine.read_line() for _ in range(count)]


def test_lizzie_style_session_with_a_network():
    """Lizzie: no ids, kata-analyze with ownership for the side to move, interrupted by the next move."""
    model = model_path("test-b4c32.bin.gz")
    with gtp("-model", str(model), "-override-config", "numSearchThreads=2") as engine:
        assert engine.command("name") == "KataGo"
        engine.command("version")
        engine.command("boardsize 9")
        engine.command("komi 7.5")
        engine.command("clear_board")
        engine.send_line("kata-analyze B 10 ownership true")
        assert engine.read_line() == "="
        for line in read_info_lines(engine, 2):
            assert KATA_INFO_RE.match(line), line
            values = line.split(" ownership ")[1].split()
            assert len(values) == 81 and all(-1.0 <= float(v) <= 1.0 for v in values)
        engine.send_line("play B E5")  # stops the analysis: its blank line, then this answer
        while (line := engine.read_line()) != "":
            assert line.startswith("info ")
        ok, _, text = engine.read_response()
        assert ok and text == ""
        engine.send_line("kata-analyze W 10")
        assert engine.read_line() == "="
        assert KATA_INFO_RE.match(engine.read_line())
        engine.send_line("")  # a bare newline stops it too
        while engine.read_line() != "":
            pass
        assert engine.command("kata-get-rules").startswith("{")


def test_sabaki_style_session():
    """Sabaki: numbered commands, `analyze` with decimal points everywhere, genmove_analyze to play."""
    with gtp(*ROLLOUTS) as engine:
        engine.send_line("1 name")
        assert engine.read_response() == (True, 1, "KataGo")
        engine.send_line("2 list_commands")
        ok, command_id, text = engine.read_response()
        assert ok and command_id == 2 and "kata-analyze" in text.split("\n")
        for i, command in enumerate(["boardsize 9", "clear_board", "komi 6.5", "play B D4"], start=3):
            engine.send_line(f"{i} {command}")
            assert engine.read_response() == (True, i, "")
        engine.send_line("7 analyze W 10")
        assert engine.read_line() == "=7"
        line = engine.read_line()
        assert re.match(r"info move \S+ visits \d+ edgeVisits \d+ utility -?\d+\.\d+ winrate \d\.\d+", line), line
        engine.send_line("8 genmove_analyze W 10")
        while engine.read_line() != "":
            pass
        assert engine.read_line() == "=8"
        while (line := engine.read_line()).startswith("info "):
            pass
        assert re.fullmatch(r"play [A-J]\d", line), line
        assert engine.read_line() == ""
        engine.send_line("9 showboard")
        ok, command_id, text = engine.read_response()
        assert ok and command_id == 9 and "Next player: Black" in text


def test_q5go_style_session():
    """q5Go: kata-analyze with rootInfo and minmoves, stopped with `stop`; kata-search to suggest a move."""
    with gtp(*ROLLOUTS) as engine:
        engine.command("boardsize 7")
        engine.command("clear_board")
        engine.send_line("kata-analyze b interval 5 minmoves 3 rootInfo true")
        assert engine.read_line() == "="
        line = engine.read_line()
        assert KATA_INFO_RE.match(line) and " rootInfo visits " in line
        engine.send_line("stop")
        while engine.read_line() != "":
            pass
        assert engine.read_response() == (True, None, "")
        move = engine.command("kata-search b")
        assert re.fullmatch(r"[A-G][1-7]|pass", move)
        assert "MoveNum: 0" in engine.command("showboard")  # kata-search does not play


# --------------------------------------------------------------------------- odd launches


@pytest.mark.parametrize("closed", [0, 1, 2], ids=["stdin", "stdout", "stderr"])
def test_a_closed_standard_stream_is_no_crash(closed):
    """A launcher may start the engine with a standard stream closed: KataGo then reads end-of-input or
    writes into nothing. (Python left None there, and the engine ended in a traceback.)"""
    import os

    result = subprocess.run(python_cli() + ["gtp"] + ROLLOUTS, input=b"name\ngenmove b\nquit\n",
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT,
                            preexec_fn=lambda: os.close(closed))
    assert result.returncode == 0, result.stderr
    assert b"Traceback" not in result.stderr
    if closed == 0:
        assert result.stdout == b""   # nothing read, nothing answered
    elif closed == 2:   # the game goes on as usual
        assert result.stdout.decode().startswith("= KataGo\n\n= ") and result.stdout.endswith(b"\n\n")


def test_a_reader_that_goes_away_ends_the_engine_as_katago():
    """`kata gtp ... | head -1`, or a controller that stops reading but keeps stdin open: KataGo dies by
    SIGPIPE at its next write; kata answered on into nothing, searching every genmove for nobody."""
    process = subprocess.Popen(python_cli() + ["gtp"] + ROLLOUTS, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL)
    try:
        process.stdin.write(b"name\n")
        process.stdin.flush()
        assert process.stdout.readline() == b"= KataGo\n"
        process.stdout.close()   # the reader goes away; stdin stays open
        for _ in range(3):
            process.stdin.write(b"genmove b\n")
            process.stdin.flush()
        assert process.wait(TIMEOUT) in (-signal.SIGPIPE, 141)
    except BrokenPipeError:   # (ended before the last command was sent)
        assert process.wait(TIMEOUT) in (-signal.SIGPIPE, 141)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.mark.skipif(not __import__("os").path.exists("/dev/full"), reason="needs /dev/full (a device that is always full)")
def test_a_full_log_disk_does_not_fail_the_run():
    result = subprocess.run(python_cli() + ["gtp", "-model", "rollouts", "-override-config",
                                            "maxVisits=10,logDir=,logFile=/dev/full"],
                            input="name\ngenmove b\nquit\n", capture_output=True, text=True, timeout=TIMEOUT)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    assert result.stdout.startswith("= KataGo\n\n= ")


def test_katagos_default_files_in_the_home_folder_are_used(tmp_path):
    """`katago gtp` without -model / -config reads default_model.bin.gz and default_gtp.cfg beside its
    executable or in ~/.katago: a user who set them up for KataGo gets them from `kata gtp` too."""
    import os
    import shutil

    from support.paths import CONFIGS

    home = tmp_path / "home"
    (home / ".katago").mkdir(parents=True)
    config = "\n".join(line for line in (CONFIGS / "gtp_example.cfg").read_text().splitlines()
                       if not line.startswith(("logDir", "maxVisits"))) + "\nmaxVisits = 7\n"
    (home / ".katago" / "default_gtp.cfg").write_text(config)
    shutil.copy(model_path("test-b4c32.bin.gz"), home / ".katago" / "default_model.bin.gz")
    env = dict(os.environ, HOME=str(home))
    result = subprocess.run(python_cli() + ["gtp"], input="kata-get-param maxVisits\nkata-get-models\nquit\n",
                            capture_output=True, text=True, timeout=TIMEOUT, env=env, cwd=tmp_path)
    answers = [line for line in result.stdout.splitlines() if line]
    assert answers[:1] == ["= 7"], result.stderr
    assert f'"name":"{home / ".katago" / "default_model.bin.gz"}"' in answers[1]
    assert "No -config given: using KataGo's default config" in result.stderr
    assert "No -model given: using KataGo's default network" in result.stderr


def test_a_dead_engine_is_reported_with_its_exit_status_and_last_words():
    # A match runner's engine that fails to start (a bad flag, a path with spaces split in two) said why on
    # stderr; the error used to read "engine exited (status None)".
    from katacli.gtp.client import GtpClient, GtpClientError

    script = "import sys; sys.stderr.write('error: Got unexpected extra argument (net.bin.gz)\\n'); sys.exit(2)"
    client = GtpClient([sys.executable, "-c", script], name="broken")
    with pytest.raises(GtpClientError, match=r"exit status 2; it said: error: Got unexpected extra argument"):
        client.command("name")
    client.close()


def test_a_lone_carriage_return_does_not_end_a_command():
    """KataGo ends GTP lines at LF and drops a CR as a control character: a controller writing "name\\r"
    gets one answer per LF-ended line, never two for one line (ids stay matched). CR LF still works."""
    result = run_gtp(ROLLOUTS, "1 name\r2 version\n3 play b d4\r4 play w q16\r\n5 name\r\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.decode().split("\n\n")[:3] == [
        "?1 unknown command", "?3 Expected two arguments for play but got 'b d44 play w q16'", "=5 KataGo"]
