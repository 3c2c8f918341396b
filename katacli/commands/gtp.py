"""``kata gtp``: a GTP engine that GUIs (Lizzie, Sabaki, q5Go, KaTrain's GTP mode) and match runners
(gomill, twogtp) accept as KataGo."""
from __future__ import annotations

import io
import os
import sys
import threading
from typing import TYPE_CHECKING, List, Optional

from katacli.katago_defaults import default_gtp_config
from katacli.cli_support import (
    EXIT_MODEL_FAILURE, check_models_or_exit, config_option, end_by_broken_pipe, human_model_option,
    model_failure_line, model_option, override_config_option,
)
from katacli.gtp.startup import EXIT_STARTUP_ERROR, build_engine, prepare_config
from katacli.launch_line import EXIT_INTERRUPTED, LaunchOptions
from katacli.nets import choose_model

if TYPE_CHECKING:  # typer builds the command in register(); a GUI's plain launch line runs without it
    import typer

WAIT_POLL_SECONDS = 0.1  # waiting wakes up this often so that Ctrl-C is noticed

HELP = (
    "Run a GTP engine on stdin/stdout, answering like KataGo.\n\n"
    "Point a GUI or match runner at `kata gtp -model NET.bin.gz -config gtp.cfg`. Without -model the engine "
    "plays with katacli's small default network (trained from scratch by examples/training_loop.py, any board "
    "size 5..19); `-model rollouts` plays without a network, by Monte Carlo rollouts. Without -config every setting "
    "takes KataGo's GTP default (configs/gtp_example.cfg documents the usual ones); change single settings with "
    '-override-config "maxVisits=200,numSearchThreads=4".\n\n'
    "Besides standard GTP it supports KataGo's extensions (see list_commands): kata-analyze and lz-analyze "
    "streaming, kata-set-rules, kata-raw-nn, kata-get-param / kata-set-param, time settings and more. "
    "`kata-set-rules nogo` (or rules = nogo in the config) plays NoGo, where capturing is not allowed.\n\n"
    "Logs go to stderr or the configured log file, never to stdout."
)


def run_gtp(model: Optional[str], config: Optional[List[str]], override_config: Optional[List[str]],
            override_version: Optional[str], human_model: Optional[str] = None) -> int:
    """Serve GTP on stdin/stdout until quit or end of input; the process exit status.

    The engine (config, torch, search, network) is built in a thread while this thread already
    answers the identity commands (name, version, protocol_version, known_command, list_commands),
    so a GUI probing the engine gets its answers at once; other commands wait until it is built.
    """
    from katacli.gtp.errors import EngineStartupError
    from katacli.gtp.protocol import ResponseWriter

    choice = choose_model(model)
    model = choice.path
    config, config_note = default_gtp_config(config)   # KataGo's default_gtp.cfg, when set up
    if config_note:
        print(config_note, file=sys.stderr, flush=True)
    headers = check_models_or_exit(model, human_model)
    if override_version is None:   # KataGo's answer names the networks, known from their files' headers
        from katacli.gtp.identity import version_text

        override_version = version_text([header.name for header in headers if header is not None])
    prepared = prepare_config(config, override_config, model is not None, human_model is not None)
    # A controller that stops reading ends the engine, as SIGPIPE ends KataGo: no searches for nobody.
    output = ResponseWriter(sys.stdout, on_closed=end_by_broken_pipe)
    built: dict = {}
    ready = threading.Event()

    def build() -> None:
        try:
            built["engine"] = build_engine(model, config, override_config, override_version, output=output,
                                           model_headers=headers,
                                           prepared=prepared, human_model=human_model, model_note=choice.note)
        except SystemExit as exc:  # a config error, already reported on stderr
            sys.stderr.flush()
            os._exit(exc.code if isinstance(exc.code, int) else EXIT_STARTUP_ERROR)
        except BaseException as exc:
            print(f"error: could not start the engine: {exc}", file=sys.stderr, flush=True)
            os._exit(EXIT_STARTUP_ERROR)
        finally:
            ready.set()

    threading.Thread(target=build, name="engine-builder", daemon=True).start()
    # Lines end at LF only, as KataGo reads them: a lone CR is a control character the command drops, not a
    # second command (CR LF still works).
    stream = io.TextIOWrapper(sys.stdin.buffer, encoding="latin-1", newline="\n")
    engine = None
    status = 0
    try:
        while True:
            raw = stream.readline()
            if not raw:
                break
            if engine is None and not ready.is_set() and _answer_before_ready(raw, output, override_version):
                if _is_quit(raw):
                    break
                continue
            if engine is None:
                engine = _wait_for_engine(ready, built)
            engine.handle_line(raw)
            if engine.quit_requested:
                break
        # A network still loading when input ends may yet fail: that must not end in exit status 0, so
        # wait for it (a failed load exits with EXIT_MODEL_FAILURE, or raises EngineStartupError here).
        if engine is None:
            engine = _wait_for_engine(ready, built)
        engine.loader.get()
        engine.human_loader.get()
    except KeyboardInterrupt:
        status = EXIT_INTERRUPTED
    except EngineStartupError as exc:  # the network could not be loaded
        print(model_failure_line(str(exc)), file=sys.stderr, flush=True)
        return EXIT_MODEL_FAILURE
    finally:
        if engine is not None:
            engine.stop_background()
            engine.save_avoid_patterns(force=True)
            engine.log.write("All cleaned up, quitting")
            engine.log.close()
    return status


def _wait_for_engine(ready: threading.Event, built: dict):
    while not ready.wait(WAIT_POLL_SECONDS):
        pass
    return built["engine"]


def _is_quit(raw: str) -> bool:
    from katacli.gtp.protocol import EmptyCommand, clean_line, parse_command

    try:
        return parse_command(clean_line(raw)).name == "quit"
    except EmptyCommand:
        return False


def _answer_before_ready(raw: str, output, override_version: Optional[str]) -> bool:
    """Answer a line that needs no engine (blank, comment, identity commands, quit); False otherwise."""
    from katacli.gtp.identity import identity_answer
    from katacli.gtp.protocol import EmptyCommand, clean_line, parse_command

    line = clean_line(raw)
    if not line:
        return True
    try:
        command = parse_command(line)
    except EmptyCommand as exc:
        output.response(exc.command_id, str(exc), is_error=True)
        return True
    if command.name == "quit":
        output.response(command.id, "")
        return True
    answer = identity_answer(command.name, command.kata_args, override_version)
    if answer is None:
        return False
    output.response(command.id, answer[0], is_error=answer[1])
    return True


# The options of the typer command below, for a launch line read without typer (katacli.launch_line).
LAUNCH_OPTIONS = LaunchOptions(
    values={"--model": "model", "--human-model": "human_model", "--override-version": "override_version"},
    repeated={"--config": "config", "--override-config": "override_config"},
)


def launch(model: Optional[str], human_model: Optional[str], config: Optional[List[str]],
           override_config: Optional[List[str]], override_version: Optional[str]) -> int:
    """The command, given its options: the exit status."""
    return run_gtp(model, config, override_config, override_version, human_model)


def register(app: typer.Typer) -> None:
    import typer

    @app.command("gtp", help=HELP)
    def gtp(
        model: Optional[str] = model_option(required=False),
        human_model: Optional[str] = human_model_option(),
        config: Optional[List[str]] = config_option("gtp_example.cfg", katago_default=True),
        override_config: Optional[List[str]] = override_config_option(),
        override_version: Optional[str] = typer.Option(
            None, "--override-version", metavar="VERSION", help="Answer this to the GTP `version` command."),
    ) -> None:
        raise typer.Exit(launch(model, human_model, config, override_config, override_version))
