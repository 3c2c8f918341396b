"""`kata analysis`'s and `kata gtp`'s plain launch lines run without typer; anything else still goes through typer."""
import subprocess
import sys

import pytest
import typer

from katacli import cli
from katacli.commands import analysis, gtp
from katacli.launch_line import LaunchOptions, launch_directly, parse_launch_line

from support.paths import REPO

PROCESS_TIMEOUT = 120
OPTIONS = analysis.LAUNCH_OPTIONS
NOTHING_GIVEN = {"model": None, "human_model": None, "config": None, "override_config": None,
                 "analysis_threads": None, "quit_without_waiting": False}


@pytest.mark.parametrize("name, module", [("analysis", analysis), ("gtp", gtp)])
def test_the_launch_options_are_exactly_the_typer_commands(name, module):
    options = module.LAUNCH_OPTIONS
    command = typer.main.get_command(cli.app).commands[name]
    declared = {opt: param.name for param in command.params for opt in param.opts if opt not in cli.HELP_OPTION_NAMES}
    read_here = {**options.values, **options.repeated, **options.counts, **options.flags}
    assert read_here == declared
    multiple = {opt for param in command.params if param.multiple for opt in param.opts}
    assert multiple == set(options.repeated)
    flags = {opt for param in command.params if getattr(param, "is_flag", False) for opt in param.opts}
    assert flags - set(cli.HELP_OPTION_NAMES) == set(options.flags)


@pytest.mark.parametrize("line, expected", [
    ([], {}),
    (["-model", "m.bin.gz", "-human-model", "h.bin.gz", "-config", "a.cfg", "-analysis-threads", "12"],
     {"model": "m.bin.gz", "human_model": "h.bin.gz", "config": ["a.cfg"], "analysis_threads": 12}),
    (["-config", "a.cfg", "-config", "b.cfg", "-override-config", "maxVisits=5", "-override-config", ""],
     {"config": ["a.cfg", "b.cfg"], "override_config": ["maxVisits=5", ""]}),
    (["-model=m.bin.gz", "-quit-without-waiting", "-analysis-threads=007"],
     {"model": "m.bin.gz", "quit_without_waiting": True, "analysis_threads": 7}),
])
def test_plain_lines_are_read(line, expected):
    assert parse_launch_line(cli.normalize_argv(line), OPTIONS) == {**NOTHING_GIVEN, **expected}


@pytest.mark.parametrize("line", [
    ["--help"], ["-h"], ["-model"], ["-model", "a", "-model", "b"], ["-analysis-threads", "-1"],
    ["-analysis-threads", "twelve"], ["-analysis-threads", "1.5"], ["-quit-without-waiting=true"],
    ["-quit-without-waiting", "-quit-without-waiting"], ["-unknown-flag", "x"], ["stray"], ["--", "-model"],
    ["-override-config", "-model"], ["-modelx", "m"],
])
def test_other_lines_are_left_to_typer(line):
    assert parse_launch_line(cli.normalize_argv(line), OPTIONS) is None


def test_only_subcommands_that_declare_launch_options_are_run_directly(monkeypatch):
    calls = []
    monkeypatch.setattr(analysis, "launch", lambda **params: calls.append(params) or 7)
    assert launch_directly(["analysis", "--model", "rollouts"]) == 7
    assert calls == [{**NOTHING_GIVEN, "model": "rollouts"}]
    assert launch_directly(["analysis", "--help"]) is None
    assert launch_directly(["benchmark", "--model", "rollouts"]) is None
    assert launch_directly([]) is None
    assert len(calls) == 1


def test_a_plain_gtp_line_runs_the_gtp_command(monkeypatch):
    calls = []
    monkeypatch.setattr(gtp, "run_gtp", lambda *args: calls.append(args) or 5)
    assert launch_directly(["gtp", "--model", "m.bin.gz", "--config", "g.cfg", "--override-version", "1.2"]) == 5
    assert calls == [("m.bin.gz", ["g.cfg"], None, "1.2", None)]
    assert launch_directly(["gtp", "--analysis-threads", "2"]) is None  # not a gtp option: typer says so
    assert len(calls) == 1


def test_an_empty_declaration_reads_only_an_empty_line():
    assert parse_launch_line([], LaunchOptions()) == {}
    assert parse_launch_line(["--model", "m"], LaunchOptions()) is None


@pytest.mark.parametrize("line", [["analysis", "-model", "rollouts", "-analysis-threads", "1"],
                                  ["gtp", "-model", "rollouts"]])
def test_a_plain_launch_line_imports_no_typer(line):
    """Run the way a GUI starts it (stdin closed at once): the engine starts, answers nothing, exits 0,
    and typer (with pydantic) was never imported."""
    code = (f"import sys, runpy; sys.argv = ['kata', *{line!r}]\n"
            "try:\n    runpy.run_module('katacli.cli', run_name='__main__')\n"
            "except SystemExit as done:\n"
            "    assert done.code == 0, done.code\n"
            "    print(sorted(name for name in ('typer', 'pydantic', 'click') if name in sys.modules))\n")
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO, input="", capture_output=True, text=True,
                            timeout=PROCESS_TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().endswith("[]")
    if line[0] == "analysis":
        assert "ready to begin handling requests" in result.stderr
