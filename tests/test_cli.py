"""The `kata` entry point: KataGo-style flags, --help, --version, and containment of broken commands."""
import pytest
import typer
from typer.testing import CliRunner

from katacli import __version__
from katacli import cli

SUBCOMMANDS = ["gtp", "analysis", "selfplay", "train", "match", "gatekeeper", "benchmark", "genconfig", "runtests",
               "evalsgf", "convert"]

ARGV_CASES = [
    # KataGo's single-dash long flags become click's double-dash ones.
    (["gtp", "-model", "m.bin.gz", "-config", "c.cfg"], ["gtp", "--model", "m.bin.gz", "--config", "c.cfg"]),
    (["gtp", "-override-config", "a=1,b=2"], ["gtp", "--override-config", "a=1,b=2"]),
    (["selfplay", "-max-games-total", "5"], ["selfplay", "--max-games-total", "5"]),
    (["gtp", "-model=m.bin.gz"], ["gtp", "--model=m.bin.gz"]),
    # Left alone: short flags, double-dash flags, negative numbers, values, anything after --.
    (["benchmark", "-v", "100", "-t", "1,2"], ["benchmark", "-v", "100", "-t", "1,2"]),
    (["gtp", "--model", "m"], ["gtp", "--model", "m"]),
    (["gtp", "-override-config", "komi=-3.5"], ["gtp", "--override-config", "komi=-3.5"]),
    (["train", "-lr-scale", "-1"], ["train", "--lr-scale", "-1"]),
    (["x", "--", "-model"], ["x", "--", "-model"]),
]


@pytest.mark.parametrize("argv,expected", ARGV_CASES)
def test_normalize_argv(argv, expected):
    assert cli.normalize_argv(argv) == expected


def test_version_and_help_list_the_subcommands():
    runner = CliRunner()
    for spelling in (["--version"], ["-version"], ["version"]):
        version = runner.invoke(cli.app, cli.normalize_argv(spelling))
        assert version.exit_code == 0 and version.output == f"katacli {__version__} (KataGo 1.17.2 compatible)\n"
    help_text = runner.invoke(cli.app, ["--help"], terminal_width=200).output
    positions = [help_text.index(f" {name} ") for name in SUBCOMMANDS]
    assert positions == sorted(positions), "subcommands are listed in the documented order"


def test_help_shows_no_value_type_beside_on_off_flags(capsys):
    """Flags such as --quiet take no value; the help must not suggest `--quiet <bool>`."""
    for argv in (["--help"], ["selfplay", "--help"], ["train", "--help"], ["genconfig", "--help"]):
        with pytest.raises(SystemExit) as done:
            cli.main(argv)
        assert done.value.code == 0
        text = capsys.readouterr().out
        assert "--help" in text and "<bool>" not in text, argv


def test_a_broken_command_module_only_disables_itself(monkeypatch):
    app = typer.Typer(no_args_is_help=True)
    monkeypatch.setattr(cli, "app", app)
    real_import = cli.importlib.import_module

    def fake_import(name, *args, **kwargs):
        if name == "katacli.commands.train":
            raise ImportError("libsomething.so: cannot open shared object file")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(cli.importlib, "import_module", fake_import)
    cli._register_subcommands()
    runner = CliRunner()
    broken = runner.invoke(app, ["train", "-data-dir", "x"])
    assert broken.exit_code == 1
    assert "cannot start" in broken.output and "libsomething" in broken.output
    assert runner.invoke(app, ["runtests", "--list"]).exit_code == 0


def test_a_value_that_looks_like_a_flag_stays_a_value(capsys):
    """KataGo takes the token after -override-version as its value, even "-dev"; click got "--dev"."""
    with pytest.raises(SystemExit) as done:
        cli.main(["gtp", "-override-version", "-dev", "-model", "rollouts", "--help"])
    assert done.value.code == 0
    command = cli._hide_flag_types(typer.main.get_command(cli.app))
    args = cli.normalize_argv(["gtp", "-override-version", "-dev", "-quit-without-waiting"])
    values = cli._value_options(command, args)
    assert cli.normalize_argv(["gtp", "-override-version", "-dev"], values) == ["gtp", "--override-version", "-dev"]
    # an on/off flag takes no value: the next flag is still a flag
    flags = cli.normalize_argv(["evalsgf", "-print-ownership", "-print-policy"],
                               cli._value_options(command, ["evalsgf"]))
    assert flags == ["evalsgf", "--print-ownership", "--print-policy"]


@pytest.mark.parametrize("sub", ["gtp", "analysis", "benchmark", "match"])
def test_every_subcommand_takes_katagos_version_flag(sub, capsys):
    with pytest.raises(SystemExit) as done:
        cli.main([sub, "-model", "rollouts", "-version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith(f"{sub} version: katacli ")


def test_double_dash_and_ignore_rest_end_the_command_line_as_in_katago():
    command = cli._hide_flag_types(typer.main.get_command(cli.app))
    values = cli._value_options(command, ["gtp"])
    for end in ("--", "--ignore_rest"):
        args = ["gtp", "--model", "rollouts", end, "foo", "--bar"]
        assert cli._katago_common_flags(command, args, values) == ["gtp", "--model", "rollouts"]
    # an option's value is not a flag: -override-version -- keeps its value
    kept = ["gtp", "--override-version", "--", "--model", "rollouts"]
    assert cli._katago_common_flags(command, kept, values) == kept


@pytest.mark.parametrize("argv,message", [
    (["gtp", "-model", "a.bin.gz", "-model", "b.bin.gz"], "error: -model was given more than once"),
    (["gtp", "-model=a.bin.gz", "-model", "b.bin.gz"], "error: -model was given more than once"),
    (["benchmark", "-t", "1", "-t", "2"], "error: -t was given more than once"),
])
def test_an_option_of_one_value_given_twice_is_an_error_as_in_katago(argv, message, capsys):
    """KataGo refuses it ("Argument already set!"); click would keep the last one without a word."""
    with pytest.raises(SystemExit) as done:
        cli.main(argv)
    assert done.value.code == 1 and capsys.readouterr().err.strip() == message


def test_options_katago_takes_several_times_may_repeat(capsys):
    with pytest.raises(SystemExit) as done:   # (repeated -config / -override-config: --help ends it first)
        cli.main(["gtp", "-config", "a.cfg", "-config", "b.cfg", "-override-config", "x=1", "-override-config",
                  "y=2", "--help"])
    assert done.value.code == 0 and "more than once" not in capsys.readouterr().err


@pytest.mark.subprocess
def test_python_dash_m_katacli_is_the_kata_command():
    """For an environment whose scripts are not on PATH (python -m katacli failed: no __main__)."""
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-m", "katacli", "version"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and result.stdout.startswith(f"katacli {__version__}")
