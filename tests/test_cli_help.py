"""Command help reads as prose at any terminal width: source line breaks inside a paragraph are dropped
(typer keeps them, which left one-word lines at 80-100 columns), hand-laid-out blocks are kept."""
from __future__ import annotations

import pytest
from typer.testing import CliRunner

from katacli.cli import app, reflow_help


@pytest.mark.parametrize("text, expected", [
    ("One line.", "One line."),
    ("First\nparagraph wraps.\n\nSecond\nparagraph.", "First paragraph wraps.\n\nSecond paragraph."),
    # click's verbatim mark, and paragraphs with indented or bulleted lines, stay as written
    ("\b\nExamples:\n  kata x\n  kata y", "\b\nExamples:\n  kata x\n  kata y"),
    ("Intro.\n\nWrites:\n  a.h5   rows\n  b.sgf  games\nand more.", "Intro.\n\nWrites:\n  a.h5   rows\n  b.sgf  games\nand more."),
    ("Keys:\n- one\n- two", "Keys:\n- one\n- two"),
    # an option name starting a continuation line is prose, not a list
    ("what `kata selfplay\n-models-dir` watches", "what `kata selfplay -models-dir` watches"),
    ("    Indented docstring\n    text.", "Indented docstring text."),
])
def test_reflow_help(text, expected):
    assert reflow_help(text) == expected


def test_a_long_help_paragraph_wraps_at_the_terminal_not_at_the_source(monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    result = CliRunner().invoke(app, ["testgpuerror", "--help"], terminal_width=200)
    assert result.exit_code == 0
    # The source breaks this sentence after "one"; at 200 columns it is one line.
    assert "(float32 on the CPU, one position at a time)" in result.output
    lines = [line.strip(" │") for line in result.output.splitlines()]
    assert not [line for line in lines if line in ("count,", "which", "worse;", "median")]
