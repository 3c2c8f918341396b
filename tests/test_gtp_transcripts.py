"""Golden GTP transcripts (tests/gtp_transcripts/*.gtp) replayed through the command loop.

Each file lists the lines sent and the exact output expected (format: support.gtp_transcript).
Commands run in tests/gtp_transcripts/, so `loadsgf game.sgf` reads the SGF files kept there.
Directives:
  #! override: KEY=VALUE,...   config overrides for the engine
  #! model: FILE               network from ../shared/models (skipped when absent)
  #! bot: scripted | search    scripted: fixed analysis numbers (tests/support/gtp.py ScriptedBot);
                               search: the real search (default scripted)
  #! subprocess: yes           also replay through a real `kata gtp` process (the real wire)

To (re)write a transcript's expected output, review the result of
``python tests/test_gtp_transcripts.py record FILE``.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from support.gtp_transcript import match_output, parse_transcript
from support.gtp import MODELS, TRANSCRIPTS, feed, make_engine, python_cli

SUBPROCESS_TIMEOUT_SECONDS = 60
FILES = sorted(TRANSCRIPTS.glob("*.gtp"))


def _engine_for(transcript):
    d = transcript.directives
    return make_engine(override=d.get("override", ""), model=d.get("model"),
                       scripted=d.get("bot", "scripted") == "scripted")


def replay_in_process(transcript) -> str:
    engine, out, _ = _engine_for(transcript)
    feed(engine, [exchange.send for exchange in transcript.exchanges])
    engine.stop_background()
    return out.getvalue()


@pytest.mark.parametrize("path", FILES, ids=[p.stem for p in FILES])
def test_transcript_in_process(path, monkeypatch):
    monkeypatch.chdir(TRANSCRIPTS)  # loadsgf finds its files beside the transcripts
    transcript = parse_transcript(path.read_text())
    problem = match_output(transcript.expected_lines, replay_in_process(transcript))
    assert problem is None, f"{path.name}: {problem}"


SUBPROCESS_FILES = [p for p in FILES if parse_transcript(p.read_text()).directives.get("subprocess") == "yes"]


@pytest.mark.subprocess
@pytest.mark.parametrize("path", SUBPROCESS_FILES, ids=[p.stem for p in SUBPROCESS_FILES])
def test_transcript_over_the_wire(path):
    """The same transcript through `kata gtp` as a process: bytes on stdin, bytes on stdout."""
    transcript = parse_transcript(path.read_text())
    d = transcript.directives
    assert d.get("bot", "scripted") != "scripted", "the scripted bot exists only in-process"
    args = python_cli() + ["gtp"]
    if "model" in d:
        model = MODELS / d["model"]
        if not model.exists():
            pytest.skip(f"model {model} not found")
        args += ["-model", str(model)]
    else:  # recorded in-process with no network: the rollout engine
        args += ["-model", "rollouts"]
    if d.get("override"):
        args += ["-override-config", d["override"]]
    result = subprocess.run(args, input=transcript.input_text.encode("latin-1"), capture_output=True,
                            timeout=SUBPROCESS_TIMEOUT_SECONDS, cwd=TRANSCRIPTS)
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    problem = match_output(transcript.expected_lines, result.stdout.decode("latin-1"))
    assert problem is None, f"{path.name}: {problem}"


def _record(path: str) -> None:
    import os
    from pathlib import Path

    transcript = parse_transcript(Path(path).read_text())
    os.chdir(TRANSCRIPTS)
    engine, out, _ = _engine_for(transcript)
    for key, value in transcript.directives.items():
        print(f"#! {key}: {value}")
    for exchange in transcript.exchanges:
        if engine.quit_requested:
            break
        before = len(out.getvalue())
        feed(engine, [exchange.send])
        plain = exchange.send.isascii() and exchange.send.isprintable()
        print(("> " + exchange.send) if plain else (">e " + exchange.send.encode("unicode_escape").decode()))
        if engine.background is not None:
            engine.stop_background()
        print(out.getvalue()[before:], end="")


def test_decimals_may_differ_in_the_last_printed_digit_but_integers_may_not():
    assert match_output(["info move D4 visits 8 winrate 0.582539"], "info move D4 visits 8 winrate 0.58254\n") is None
    assert match_output(["info move D4 visits 8 winrate 0.582539"], "info move D4 visits 8 winrate 0.5826\n")
    assert match_output(["info move D4 visits 8 winrate 4398"], "info move D4 visits 8 winrate 4399\n")
    assert match_output(["info move D4 visits 8"], "info move D5 visits 8\n")


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "record":
        sys.exit("usage: python tests/test_gtp_transcripts.py record FILE")
    _record(sys.argv[2])
