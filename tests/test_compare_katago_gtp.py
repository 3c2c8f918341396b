"""The differential GTP harness (benchmarks/compare_katago_gtp.py): its streams, its comparison, katacli
against itself, and katacli against KataGo when a KataGo binary is given (KATAGO_BINARY)."""
from __future__ import annotations

import os
import sys

import pytest

from support.gtp import python_cli
from support.paths import CONFIGS, G170_B6, REPO, model_path

sys.path.insert(0, str(REPO / "benchmarks"))
import compare_katago_gtp as harness  # noqa: E402

KATAGO_MODEL = G170_B6


def test_streams_are_reproducible_and_varied(tmp_path):
    first = harness.random_stream(7, 400, tmp_path)
    assert first == harness.random_stream(7, 400, tmp_path)
    names = {line.split()[0] for line in first}
    assert {"play", "undo", "boardsize", "clear_board", "set_position", "set_free_handicap", "fixed_handicap",
            "loadsgf", "komi", "kata-set-rules", "known_command", "kata-get-rules"} <= names
    assert any(line.startswith("known_command  ") for line in first)  # doubled spaces too
    assert any(line == "set_free_handicap" for line in first)  # and no vertices at all


class _Scripted:
    """A stand-in engine answering from a table (default `= `)."""

    def __init__(self, answers):
        self.answers = answers

    def ask(self, command):
        return self.answers.get(command, "= ")


def test_first_divergence_with_its_context():
    stream = ["boardsize 9", "play b E5", "undo", "undo", "kata-get-rules x", "clear_board"]
    same = harness.compare(stream, _Scripted({}), _Scripted({"kata-get-rules x": "= error"}), False)
    assert same is None  # a deliberate difference is not a divergence
    found = harness.compare(stream, _Scripted({"undo": "? cannot undo"}), _Scripted({}), False)
    assert found.index == 2 and found.command == "undo"
    assert found.answers == ("? cannot undo", "= ")
    assert [c for c, _ in found.context] == ["boardsize 9", "play b E5"]
    assert "first divergence at command 3: undo" in found.report()


@pytest.mark.subprocess
def test_katacli_against_itself_never_diverges(tmp_path):
    stream = harness.random_stream(3, 150, tmp_path)
    argv = python_cli() + ["gtp", "-model", "rollouts"]
    first, second = harness.GtpProcess(argv), harness.GtpProcess(argv)
    try:
        assert harness.compare(stream, first, second, check_boards=True) is None
    finally:
        first.close()
        second.close()


@pytest.mark.subprocess
@pytest.mark.skipif(not os.environ.get("KATAGO_BINARY"), reason="set KATAGO_BINARY to a KataGo binary to run")
def test_katacli_against_katago():
    model = model_path(KATAGO_MODEL)
    config = CONFIGS / "gtp_example.cfg"
    status = harness.main(["--model", str(model), "--config", str(config), "--lines", "500", "--check-boards",
                           "--kata-command", " ".join(python_cli())])
    assert status == 0
