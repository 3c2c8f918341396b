"""Helpers the ``kata`` subcommands share: loading the config the KataGo way
and the typer options for KataGo's common flags.

A subcommand typically looks like::

    @app.command()
    def gtp(
        model: str = model_option(),
        config: Optional[List[str]] = config_option("gtp_example.cfg"),
        override_config: Optional[List[str]] = override_config_option(),
    ):
        cfg = load_config(config, override_config, mode="gtp")
        with exit_on_config_error():
            genmove_params, analysis_params = gtp_search_params(cfg)
            settings = GtpSettings.from_config(cfg)

``cli.py`` rewrites KataGo's ``-model``/``-config``/``-override-config`` to the
``--`` spellings these options declare.
"""
from __future__ import annotations

import errno
import os
import signal
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from katacli.config import Config, ConfigError

if TYPE_CHECKING:  # typer is imported where an option is declared: `kata analysis`'s launch line runs without it
    import typer

# Exit status for a config the user has to fix.
EXIT_CONFIG_ERROR = 1
# A shell's status for a process killed by SIGPIPE (128 + 13), where the signal cannot be raised.
EXIT_BROKEN_PIPE = 141
# Exit status of an engine (kata gtp / kata analysis) whose network cannot be loaded. Not 1: KaTrain
# takes status 1 as a deliberate exit and reports nothing. 3 is what an aborting KataGo returns on
# Windows (134 on Linux is a signal status, which a normal exit should not fake).
EXIT_MODEL_FAILURE = 3
# Begins the one line an engine prints for a model that cannot be loaded. It is the mark of KataGo's own
# abort line (`what():  Error loading or parsing model file ...`), which KaTrain's stderr reader turns
# into an "engine failed" popup showing the text after these 9 characters; Lizzie and Sabaki show
# stderr as it is. Nothing else in katacli starts a line with it.
MODEL_FAILURE_MARK = "what():  "


def report_error_and_exit(message: str, code: int = EXIT_CONFIG_ERROR) -> None:
    """Print ``error: message`` to stderr and exit (no traceback)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(code)


def model_failure_line(message: str) -> str:
    """The one stderr line of an engine whose network cannot be loaded (see MODEL_FAILURE_MARK)."""
    return f"{MODEL_FAILURE_MARK}error: {message}"


def report_model_failure_and_exit(message: str) -> None:
    """An engine's network cannot be loaded: one line that GUIs report as an engine failure, status 3."""
    print(model_failure_line(message), file=sys.stderr, flush=True)
    raise SystemExit(EXIT_MODEL_FAILURE)


@contextmanager
def exit_on_config_error() -> Iterator[None]:
    """Turn a ConfigError raised inside the block into a clean error exit."""
    try:
        yield
    except ConfigError as exc:
        report_error_and_exit(str(exc))


def _as_list(value: str | Path | Sequence[str | Path] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, (str, Path)):
        return [str(value)]
    return [str(v) for v in value]


def load_config(
    config_path: str | Path | Sequence[str | Path] | None,
    override: str | Sequence[str] | None,
    mode: str,
    *,
    warn_unknown: bool = True,
) -> Config:
    """Read the config file(s), apply ``-override-config`` text(s), return the Config.

    * Several config paths are layered in order, later ones winning (KataGo's
      repeated ``-config``). With no path at all the config is empty and every
      key takes its default (keys KataGo would require are then not enforced).
    * Overrides are applied in order; an empty value removes a key.
    * The mode's key aliases are applied (numSearchThreadsPerAnalysisThread in
      analysis).
    * Keys the registry does not know get one ``WARNING:`` line each on
      stderr (pass ``warn_unknown=False`` to report them later yourself).
    * Keys katacli cannot act on (see ``Unsupported`` in katacli.config_keys)
      get a ``WARNING:`` line, or an error when katacli refuses them.

    A missing or malformed file or override prints ``error: ...`` to stderr and
    exits with status 1.
    """
    with exit_on_config_error():
        paths = _as_list(config_path)
        if paths:
            cfg = Config.from_files(paths, mode=mode)
        else:
            cfg = Config(mode=mode)
        for text in _as_list(override):
            cfg.apply_overrides(text)
        cfg.apply_mode_aliases(mode)
        cfg.check_unsupported_keys(sys.stderr)
    if warn_unknown:
        warn_unknown_keys(cfg)
    return cfg


def write_failure_message(exc: OSError, what: str) -> str:
    """One line for a failed write (disk full, permissions): which file, why, and that the files
    already finished are whole, so the same command resumes once the cause is fixed."""
    where = f"{exc.filename}: " if exc.filename else ""
    reason = os.strerror(exc.errno) if exc.errno else str(exc).splitlines()[0]
    advice = " (disk full: free some space)" if exc.errno == errno.ENOSPC else ""
    return (f"{what} stopped: cannot write {where}{reason}{advice}. Files already finished are "
            "whole; run the same command again to go on")


def check_models_or_exit(model: str | None, human_model: str | None) -> tuple:
    """An engine's (``kata gtp``, ``kata analysis``) ``-model`` and ``-human-model``, checked as
    :func:`check_model_or_exit` does but reported as an engine failure (:func:`report_model_failure_and_exit`,
    status 3) that GUIs show; a human net needs a main one (a usage mistake, status 1). Returns what
    the checks found, a ModelFileHeader or None for each."""
    return start_model_checks(model, human_model)()


def start_model_checks(model: str | None, human_model: str | None,
                       keep_contents: bool = False) -> Callable[[], tuple]:
    """:func:`check_models_or_exit` begun in one thread per file; call what it returns to wait for the
    checks and get their result (or the one line and the exit, in the calling thread, model first).
    zlib inflates without holding the GIL, so on two cores two large files (a b18 net and a b18 human
    net, ~0.5 s each) and whatever the caller imports meanwhile overlap. ``keep_contents``: each header
    keeps its file's inflated bytes for the load that follows (which must then take them)."""
    from katacli.nn.model_file_reader import HUMAN_MODEL_WITHOUT_MODEL, ModelFileError, check_model_file

    files = (("-model", model), ("-human-model", human_model))
    results: dict = {}

    def check(flag: str, path: str) -> None:
        try:
            results[flag] = check_model_file(path, keep_contents=keep_contents)
        except BaseException as exc:  # reported (or re-raised) by the caller's thread
            results[flag] = exc

    threads = [threading.Thread(target=check, args=(flag, path), name=f"check{flag}", daemon=True)
               for flag, path in files if path is not None]
    for thread in threads:
        thread.start()

    def finish() -> tuple:
        for thread in threads:
            thread.join()
        headers = []
        for flag, path in files:
            found = results.get(flag)
            if isinstance(found, ModelFileError):
                report_model_failure_and_exit(f"{flag}: {found}")
            if isinstance(found, BaseException):
                raise found
            headers.append(found)
        if human_model is not None and model is None:
            report_error_and_exit(HUMAN_MODEL_WITHOUT_MODEL)
        return tuple(headers)

    return finish


def check_model_or_exit(path: str | None, flag: str = "-model", engine: bool = False):
    """Check a model file before a command starts (exists, gzip whole, every layer and weight count
    parses, no NaN: see :func:`katacli.nn.model_file_reader.check_model_file`); a bad one prints one
    ``error:`` line and exits 1, or with ``engine`` the GUI-facing line and status 3 of
    :func:`report_model_failure_and_exit`. Building the network may then go on in the background
    without a broken file being noticed only after the protocol loop has begun. Returns the file's
    ModelFileHeader (None without a path)."""
    if path is None:
        return None
    from katacli.nn.model_file_reader import ModelFileError, check_model_file

    try:
        return check_model_file(path)
    except ModelFileError as exc:
        if engine:
            report_model_failure_and_exit(f"{flag}: {exc}")
        report_error_and_exit(f"{flag}: {exc}")


def warn_unknown_keys(cfg: Config) -> list[str]:
    """One ``WARNING:`` line on stderr per key the registry does not know."""
    return cfg.warn_unknown_keys(sys.stderr)


# --------------------------------------------------------------------------- typer options

MODEL_HELP = ("Neural net model file (.bin.gz or .txt.gz), e.g. kata1-b18c384nbt-....bin.gz. Default: KataGo's "
              "default_model.bin.gz beside the kata launcher or in ~/.katago if there is one, else katacli's small "
              "built-in network.")
ROLLOUTS_MODEL_HELP = " `rollouts`: no network, Monte Carlo rollouts."
HUMAN_MODEL_HELP = (
    "Optional human SL model (e.g. b18c384nbt-humanv0.bin.gz) for human-like play; "
    "pick the imitated profile with the humanSLProfile key."
)
# KataGo's warnings about a -human-model that will not act as one.
HUMAN_MODEL_WITHOUT_METADATA_WARNING = (
    "WARNING: Human model was not trained from SGF metadata to vary by rank! Did you pass the wrong model for "
    "-human-model?")
HUMAN_MODEL_WITHOUT_PROFILE_WARNING = (
    "WARNING: Provided -human-model but humanSLProfile was not set in the config or overrides. The human SL model "
    "will not be used until it is set in the config or at runtime via kata-set-param.")


# The analysis engine's version: queries may still set the profile.
HUMAN_MODEL_WITHOUT_PROFILE_ANALYSIS_WARNING = (
    "Warning: Provided -human-model but humanSLProfile is not yet set. The human SL model will only be used on "
    "queries that provide humanSLProfile in overrideSettings.")


def unused_profile_startup_warning(profile_set: bool, headers: Sequence) -> str | None:
    """KataGo's start-up warning when humanSLProfile is set but no loaded network takes SGF metadata (a
    forgotten or wrong -human-model: the profile would be ignored without a word), or None. ``headers``: the
    ModelFileHeader (or None) of -model and -human-model."""
    loaded = [header for header in headers if header is not None]
    if not profile_set or not loaded or any(header.takes_metadata for header in loaded):
        return None
    names = " and ".join(header.path for header in loaded)
    return f"WARNING: humanSLProfile is specified as config param but model(s) don't use it: {names}"


def human_model_warning(human_network, profile_set: bool, analysis: bool = False) -> str | None:
    """KataGo's startup warning for a loaded -human-model net, or None."""
    if not human_network.needs_metadata:
        return HUMAN_MODEL_WITHOUT_METADATA_WARNING
    if not profile_set:
        return HUMAN_MODEL_WITHOUT_PROFILE_ANALYSIS_WARNING if analysis else HUMAN_MODEL_WITHOUT_PROFILE_WARNING
    return None


OVERRIDE_CONFIG_HELP = (
    'Override config keys, e.g. "maxVisits=200, numSearchThreads=8". May be repeated; '
    "an empty value (key=) removes the key. Values cannot contain commas."
)


def model_option(required: bool = True, rollouts: bool = True) -> typer.models.OptionInfo:
    """``-model FILE`` (``rollouts``: the command also plays without a network)."""
    import typer

    help_text = MODEL_HELP + (ROLLOUTS_MODEL_HELP if rollouts else "")
    return typer.Option(... if required else None, "--model", metavar="FILE", help=help_text)


def human_model_option() -> typer.models.OptionInfo:
    """``-human-model FILE`` (optional)."""
    import typer

    return typer.Option(None, "--human-model", metavar="FILE", help=HUMAN_MODEL_HELP)


def config_option(example_name: str | None = None, required: bool = False,
                  katago_default: bool = False) -> typer.models.OptionInfo:
    """``-config FILE`` (repeatable); annotate the parameter as ``Optional[List[str]]``. ``katago_default``: the
    command reads KataGo's default_gtp.cfg when no config is given."""
    import typer

    help_text = "Config file (.cfg). May be repeated; keys in later files override earlier ones."
    if example_name:
        help_text += f" See configs/{example_name} for a commented example."
    if katago_default:
        help_text += (" Without one: KataGo's default_gtp.cfg beside the kata launcher or in ~/.katago if there is "
                      "one, else every key takes its default.")
    elif not required:
        help_text += " Without one, every key takes its default."
    return typer.Option(... if required else None, "--config", metavar="FILE", help=help_text)


def override_config_option() -> typer.models.OptionInfo:
    """``-override-config "k=v,k=v"`` (repeatable); annotate as ``Optional[List[str]]``."""
    import typer

    return typer.Option(None, "--override-config", metavar="KEY=VALUE,...", help=OVERRIDE_CONFIG_HELP)


def end_by_signal(signum_name: str, status: int) -> None:
    """End the process as the signal's default action would (the status a shell sees: killed by it), once a
    command has stopped cleanly. Python lets only the main thread reset a handler: another thread resets it
    through the C library (POSIX); where that cannot be done, or the signal does not end the process, exit
    with ``status``."""
    try:
        sys.stderr.flush()   # (stderr only: stdout is flushed line by line, and a pipe nobody reads would block)
    except (OSError, ValueError, AttributeError):
        pass
    signum = getattr(signal, signum_name, None)
    if threading.current_thread() is not threading.main_thread():
        if signum is not None and hasattr(os, "kill"):
            try:
                import ctypes

                ctypes.CDLL(None).signal(int(signum), 0)   # 0: SIG_DFL
                os.kill(os.getpid(), signum)
            except (OSError, AttributeError, TypeError):
                pass
        os._exit(status)
    if signum is not None and hasattr(os, "kill"):
        signal.signal(signum, signal.SIG_DFL)
        os.kill(os.getpid(), signum)
    sys.exit(status)


def end_by_broken_pipe() -> None:
    """End the process as SIGPIPE's default action ends KataGo once the reader of its stdout has gone away
    (`kata analysis ... | head -1`): at once, with the status a shell expects, instead of searching on for
    nobody (Python ignores SIGPIPE). Safe from any thread."""
    end_by_signal("SIGPIPE", EXIT_BROKEN_PIPE)


class CurrentStream:
    """Writes to whatever sys.stdout / sys.stderr is at the time (a live progress panel redirects them
    while it runs): a log handler made with it prints above the panel instead of through it."""

    def __init__(self, name: str):
        self.name = name

    def write(self, text: str) -> int:
        return getattr(sys, self.name).write(text)

    def flush(self) -> None:
        getattr(sys, self.name).flush()
