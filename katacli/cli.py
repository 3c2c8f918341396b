"""The ``kata`` command: one typer app, one module per subcommand under ``katacli.commands``.

KataGo's GUIs launch engines with single-dash long flags (``katago gtp -model M
-config C -override-config "a=1,b=2"``). Click only knows ``--long`` options,
so :func:`normalize_argv` rewrites ``-model`` to ``--model`` before typer sees
the arguments; single-letter flags (``-v``, ``-t``) and negative numbers pass
through untouched.

The app is built on first use: a GUI's plain ``kata analysis`` launch line runs
without it (:mod:`katacli.launch_line`), as typer alone costs ~0.2 s of start-up.
"""
from __future__ import annotations

import importlib
import inspect
import os
import re
import sys

from katacli import __version__, KATAGO_COMPAT_VERSION
from katacli.launch_line import EXIT_INTERRUPTED, launch_directly

# Subcommands in the order `kata --help` lists them. A name is registered only
# when its module exists and defines `register(app)`, so a subcommand appears
# exactly when it works.
SUBCOMMANDS = ["gtp", "analysis", "selfplay", "train", "match", "gatekeeper", "benchmark", "genconfig", "runtests",
               "evalsgf", "convert", "testgpuerror"]

HELP_OPTION_NAMES = ["-h", "--help"]
_SINGLE_DASH_LONG = re.compile(r"^-[A-Za-z][A-Za-z0-9_-]+(=.*)?$")

APP_HELP = (
    "katacli: KataGo as a Python toolkit. Drop-in `kata gtp` and `kata analysis` engines that read "
    "KataGo networks (.bin.gz) and configs (.cfg), plus self-play, training and benchmarking.\n\n"
    "KataGo-style single-dash flags work: `kata gtp -model net.bin.gz -config gtp.cfg`."
)


def normalize_argv(argv: list[str], value_options: frozenset = frozenset()) -> list[str]:
    """Turn KataGo's ``-long-flag`` spelling into click's ``--long-flag``.

    Everything after a bare ``--`` is left alone, as are negative numbers (the pattern excludes them: they
    start with a digit) and the value of an option named in ``value_options`` (``--name`` spellings of the
    options that take a value): ``-override-version -dev`` keeps its value ``-dev``, as KataGo reads it.
    """
    out: list[str] = []
    passthrough = False
    for arg in argv:
        if passthrough or (out and out[-1] in value_options and arg != "--"):
            out.append(arg)
            continue
        if arg == "--":
            passthrough = True
            out.append(arg)
        elif _SINGLE_DASH_LONG.match(arg):
            out.append("-" + arg)
        else:
            out.append(arg)
    return out


def _version_text() -> str:
    return f"katacli {__version__} (KataGo {KATAGO_COMPAT_VERSION} compatible)"


def _version_callback(value: bool) -> None:
    import typer

    if value:
        typer.echo(_version_text())
        raise typer.Exit()


def _build_app():
    """The typer app with every subcommand (built on first use of ``app``: a GUI's plain engine launch
    line runs without it, see :mod:`katacli.launch_line`)."""
    import typer

    app = typer.Typer(name="kata", help=APP_HELP, no_args_is_help=True, add_completion=False, rich_markup_mode=None,
                      pretty_exceptions_enable=False, context_settings={"help_option_names": HELP_OPTION_NAMES})

    @app.callback()
    def _root(
        version: bool = typer.Option(
            False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
        ),
    ) -> None:
        """katacli: KataGo as a Python toolkit."""

    _register_subcommands(app)

    @app.command("version", help="Print the version and exit (same as kata --version or kata -version).")
    def _version_command() -> None:
        typer.echo(_version_text())

    for command in app.registered_commands:
        text = command.help if command.help is not None else (command.callback.__doc__ if command.callback else None)
        if text:
            command.help = reflow_help(text)
    return app


def reflow_help(text: str) -> str:
    """A command's help with each prose paragraph on one line, so the terminal wraps it (typer keeps the
    source's line breaks, which at a narrower terminal leave one-word lines). Paragraphs that are laid out
    by hand stay as they are: those starting with \\b (click's verbatim mark) and those with indented,
    bulleted or option lines."""
    paragraphs = inspect.cleandoc(text).split("\n\n")
    out = []
    for paragraph in paragraphs:
        lines = paragraph.split("\n")
        laid_out = paragraph.startswith("\b") or any(
            line.startswith((" ", "\t", "- ", "* ", "|")) for line in lines[1:])
        out.append(paragraph if laid_out else " ".join(line.strip() for line in lines))
    return "\n\n".join(out)


def __getattr__(name: str):
    if name == "app":
        globals()["app"] = _build_app()
        return globals()["app"]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _the_app():
    return globals()["app"] if "app" in globals() else __getattr__("app")


def _register_unavailable(app, name: str, exc: BaseException) -> None:
    """A command whose module cannot load still shows up, and says why when run; the others work."""
    import typer

    reason = f"{type(exc).__name__}: {exc}"

    @app.command(name=name, help=f"(unavailable: {reason})", context_settings={
        "allow_extra_args": True, "ignore_unknown_options": True})
    def _unavailable() -> None:
        typer.echo(f"error: `kata {name}` cannot start: {reason}", err=True)
        raise typer.Exit(1)


def _register_subcommands(app=None) -> None:
    """Register every subcommand on ``app`` (default: this module's app)."""
    app = _the_app() if app is None else app
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(f"katacli.commands.{name}")
            module.register(app)
        except ModuleNotFoundError as exc:
            if exc.name == f"katacli.commands.{name}":
                continue  # not built yet
            _register_unavailable(app, name, exc)
        except Exception as exc:  # one broken command must not take the others down
            _register_unavailable(app, name, exc)


def _hide_flag_types(command):
    """Typer's help prints ``<bool>`` beside every on/off flag, as if it took a value; an empty
    metavar leaves that column blank for flags (options that take a value keep theirs)."""
    import typer

    # The help option is made on first use; making it now (cached) lets it be changed too.
    help_option = command.get_help_option(typer.Context(command, help_option_names=HELP_OPTION_NAMES))
    for param in [*command.params, help_option]:
        if getattr(param, "is_flag", False) and param.metavar is None:
            param.metavar = ""
    if hasattr(command, "commands"):  # a group: the subcommands too
        for sub in command.commands.values():
            _hide_flag_types(sub)
    return command


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    _reopen_closed_std_streams()
    _escape_what_stdout_cannot_encode()
    raw_args = list(sys.argv[1:] if argv is None else argv)
    args = normalize_argv(raw_args)
    try:
        status = launch_directly(args)  # a GUI's plain engine launch line, without building the typer app
        if status is not None:
            sys.exit(status)
        import typer

        command = _hide_flag_types(typer.main.get_command(_the_app()))
        value_options = _value_options(command, args)
        args = _katago_common_flags(command, normalize_argv(raw_args, value_options), value_options)
        _refuse_repeated_options(command, args)
        command(args=args, prog_name="kata")
    except KeyboardInterrupt:   # Ctrl-C before a command took over its handling (while the app was built)
        if argv is None:
            _exit_by_interrupt()
        sys.exit(EXIT_INTERRUPTED)
    except SystemExit as exc:
        if exc.code == EXIT_INTERRUPTED and argv is None:
            _exit_by_interrupt()
        raise
    except Exception as exc:
        if not _is_missing_setting(exc):
            raise
        print(f"error: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)


def _katago_common_flags(command, args: list[str], value_options: frozenset) -> list[str]:
    """The flags every KataGo subcommand takes (TCLAP's): ``--`` or ``-ignore_rest`` ends the command
    line (what follows is ignored), ``-version`` prints the version and exits."""
    if _subcommand(command, args) is None:
        return args
    name_at = next(i for i, arg in enumerate(args) if not arg.startswith("-"))
    for i, arg in enumerate(args[name_at + 1:], start=name_at + 1):
        if args[i - 1] in value_options:
            continue   # an option's value, e.g. -override-version --
        if arg in ("--", "--ignore_rest"):
            return args[:i]
        if arg == "--version":
            print(f"{args[name_at]} version: {_version_text()}")
            sys.exit(0)
    return args


def _subcommand(command, args: list[str]):
    """The click command of the subcommand ``args`` name, or None."""
    words = [arg for arg in args if not arg.startswith("-")]
    return getattr(command, "commands", {}).get(words[0]) if words else None


def _value_options(command, args: list[str]) -> frozenset:
    """The ``--name`` spellings of the subcommand's options that take a value (not on/off flags)."""
    subcommand = _subcommand(command, args)
    if subcommand is None:
        return frozenset()
    return frozenset(opt for param in subcommand.params if getattr(param, "opts", None)
                     and not getattr(param, "is_flag", False) and not getattr(param, "count", False)
                     and param.param_type_name == "option" for opt in param.opts if opt.startswith("--"))


def _refuse_repeated_options(command, args: list[str]) -> None:
    """An option that takes one value, given twice, is an error, as in KataGo ("Argument already set!"):
    click would silently keep the last one (-model A -model B plays B)."""
    subcommand = _subcommand(command, args)
    if subcommand is None or "--" in args:
        return
    for param in subcommand.params:
        if getattr(param, "multiple", True) or not getattr(param, "opts", None):
            continue
        given = [arg for arg in args if arg.partition("=")[0] in param.opts]
        if len(given) > 1:
            name = param.opts[0]
            print(f"error: {name[1:] if name.startswith('--') else name} was given more than once", file=sys.stderr,
                  flush=True)
            sys.exit(1)


def _reopen_closed_std_streams() -> None:
    """A launcher may start the engine with stdin, stdout or stderr closed (Python then has None there):
    point each at the null device, as KataGo reads end-of-input and writes into nothing. The descriptor
    itself is filled, so that a file opened later (a log) cannot become the process's stdout."""
    for fd, name, mode in ((0, "stdin", "r"), (1, "stdout", "w"), (2, "stderr", "w")):
        if getattr(sys, name) is not None:
            continue
        null = os.open(os.devnull, os.O_RDWR)
        if null != fd:
            os.dup2(null, fd)
            os.close(null)
        setattr(sys, name, os.fdopen(fd, mode, closefd=False))


def _escape_what_stdout_cannot_encode() -> None:
    """A stdout that cannot encode a bot's or a file's name (PYTHONIOENCODING=ascii, a non-UTF-8 locale,
    Windows' ANSI code page in a redirect) gets it backslash-escaped, as stderr does by default: strict
    encoding raised mid-run, after a match's games were played, and a GTP response containing it
    silenced the engine's output for good."""
    stream = sys.stdout
    if getattr(stream, "errors", None) == "strict" and hasattr(stream, "reconfigure"):
        stream.reconfigure(errors="backslashreplace")


def _exit_by_interrupt() -> None:
    """End the process as Ctrl-C's default action does, once a command has stopped cleanly after one: a
    shell then sees a process killed by SIGINT and stops its loop or script (an exit status of 130 would
    let `for ...; do kata analysis ...; done` go on to the next run), as with KataGo."""
    from katacli.cli_support import end_by_signal

    end_by_signal("SIGINT", EXIT_INTERRUPTED)


def _is_missing_setting(exc: Exception) -> bool:
    """A setting the user must give that a command only finds missing once it evaluates (a human SL net
    without humanSLProfile): one line, not a traceback. Checked without importing the module for it."""
    profile = sys.modules.get("katacli.nn.human_profile")
    return profile is not None and isinstance(exc, profile.ProfileNotSetError)


if __name__ == "__main__":
    main()
