"""``kata analysis``: KataGo's JSON analysis engine, for tools that analyse many positions (KaTrain,
review servers, scripts)."""
from __future__ import annotations

import io
import os
import sys
from typing import TYPE_CHECKING, List, Optional

from katacli.cli_support import (
    EXIT_MODEL_FAILURE, config_option, end_by_broken_pipe, exit_on_config_error, human_model_option,
    human_model_warning, load_config, model_failure_line, model_option, override_config_option, start_model_checks,
    unused_profile_startup_warning,
)
from katacli.launch_line import EXIT_INTERRUPTED, LaunchOptions
from katacli.nets import choose_model

if TYPE_CHECKING:  # typer builds the command in register(); a GUI's plain launch line runs without it
    import typer

EXIT_STARTUP_ERROR = 1
# Note when the network's batches cannot hold every search's leaves (KataGo's rule of thumb).
BATCH_SIZE_NOTE_FACTOR = 1.5

HELP = (
    "Run KataGo's parallel JSON analysis engine on stdin/stdout.\n\n"
    "Write one JSON query per line, such as this one:\n\n"
    "\b\n"   # click's mark: the paragraph below is printed as it is, so it can be copied
    '{"id":"q1","moves":[["B","D4"],["W","Q16"]],"rules":"japanese","komi":6.5,"boardXSize":19,'
    '"boardYSize":19,"analyzeTurns":[0,1,2],"maxVisits":200}\n\n'
    "and read one JSON result per analysed turn (moveInfos, rootInfo, optional ownership and policy), in "
    "whatever order they finish. Actions: terminate (with terminateId), terminate_all, clear_cache, "
    "query_version, query_models. The protocol is KataGo's docs/Analysis_Engine.md.\n\n"
    "numAnalysisThreads positions are searched at once, each with numSearchThreadsPerAnalysisThread leaves in "
    "flight, and their network evaluations share batches; queries with a higher \"priority\" go first.\n\n"
    "Without -model the engine evaluates with katacli's small default network (trained from scratch, any "
    "board size 5..19); `-model rollouts` evaluates by Monte Carlo rollouts, without a network. Closing stdin "
    "finishes the queued work, then exits; with -quit-without-waiting it exits at once. Logs go to stderr "
    "(or the configured log file), never to stdout. configs/analysis_example.cfg documents the settings."
)


def _exit_on_failure(exc: BaseException) -> None:
    """A network failing to load after "ready": one line and EXIT_MODEL_FAILURE, whatever the engine is doing
    (KataGo would abort at start-up; GUIs report this status as an engine failure)."""
    # One write: print() writes the newline separately, and the engine's other threads log meanwhile.
    sys.stderr.write(model_failure_line(str(exc)) + "\n")
    sys.stderr.flush()
    os._exit(EXIT_MODEL_FAILURE)


def _stdio():
    """UTF-8 text streams over stdin/stdout whatever the locale (query ids may be any text)."""
    stdin = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace", newline="\n")  # LF ends a query
    stdout = io.TextIOWrapper(sys.stdout.buffer, encoding="utf-8", newline="\n", write_through=False)
    return stdin, stdout


def run_analysis(model: Optional[str], config: Optional[List[str]], override_config: Optional[List[str]],
                 analysis_threads: Optional[int], quit_without_waiting: bool,
                 human_model: Optional[str] = None) -> int:
    """Serve the analysis protocol until stdin closes; the exit status."""
    choice = choose_model(model)
    model = choice.path
    # The files are checked whole before "ready" (a bad one fails here, status 3), while the engine's modules
    # are imported; the networks load after it.
    finish_model_checks = start_model_checks(model, human_model, keep_contents=True)  # the loads take them
    from katacli import KATAGO_COMPAT_VERSION, __version__
    from katacli.analysis.backend import AnalysisBackend, default_batch_size, network_backend_in_background
    from katacli.analysis.output import JsonLineWriter
    from katacli.analysis.startup import build_engine, load_pattern_table, load_search_defaults, without_stdout_logging
    from katacli.search.pattern_avoidance import PatternAvoidanceError
    from katacli.engine_log import EngineLog
    from katacli.setup.engine_settings import AnalysisSettings

    header, human_header = finish_model_checks()

    cfg = load_config(config, override_config, mode="analysis")
    with exit_on_config_error():
        settings = AnalysisSettings.from_config(cfg, analysis_threads_from_command_line=analysis_threads)
        params = load_search_defaults(cfg, has_human_model=human_model is not None)
    log = EngineLog(without_stdout_logging(settings).logging)
    for warning in cfg.unknown_key_warnings():  # shown on stderr while the config was read
        log.file_only(warning)
    if settings.logging.log_to_stdout:
        log.info("WARNING: logToStdout is ignored by `kata analysis`: stdout carries the JSON protocol")
    log.write("Analysis Engine starting...")
    log.info(f"katacli {__version__} analysis engine (KataGo {KATAGO_COMPAT_VERSION} compatible)")
    if config:
        log.write(f"Loaded config {', '.join(config)}")
    if override_config:
        log.write(f"Config overrides: {'; '.join(override_config)}")

    try:
        pattern_table = load_pattern_table(settings, log)
    except PatternAvoidanceError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return EXIT_STARTUP_ERROR

    searches = settings.num_analysis_threads * params.num_search_threads
    if choice.note is not None:
        log.info(choice.note)
    if model is None:
        backend = AnalysisBackend()
    else:
        batch_size = settings.nn.max_batch_size or default_batch_size(settings.num_analysis_threads,
                                                                      params.num_search_threads)

        def on_loaded(path: str, network, human: bool) -> None:
            log.write(f"Loaded {'human SL model' if human else 'model'} {path}")
            if not human:
                log.info(f"Model runs on: {network.describe_device()}")

        # Like kata gtp's, the networks load (torch imported, the 19x19 trace warmed up) after "ready":
        # KaTrain waits for that line. Queries are read and checked meanwhile; searches wait for the net.
        backend = network_backend_in_background(header, settings.nn, batch_size, human_header,
                                                on_loaded=on_loaded, on_failure=_exit_on_failure, notify=log.info)
        if human_model is not None:
            warning = human_model_warning(backend.human_loading, "humanSLProfile" in cfg, analysis=True)
            if warning:
                log.info(warning)
        unused = unused_profile_startup_warning(params.human_profile.is_set, (header, human_header))
        if unused:
            log.info(unused)
        if batch_size * BATCH_SIZE_NOTE_FACTOR <= searches:
            log.write(f"Note: nnMaxBatchSize ({batch_size}) is smaller than numSearchThreads * numAnalysisThreads "
                      f"({searches}); raising nnMaxBatchSize may improve throughput")
    if params.max_visits >= 1 << 50 and params.max_playouts >= 1 << 50 and params.max_time >= 1e19:
        log.info("Note: no maxVisits / maxPlayouts / maxTime configured: queries without maxVisits search "
                 "until terminated")

    stdin, stdout = _stdio()
    writer = JsonLineWriter(stdout, on_closed=lambda: (log.write("stdout was closed by its reader: quitting"),
                                                       end_by_broken_pipe()))
    if settings.log_all_responses:
        writer.on_line = lambda line: log.write("Response: " + line)
    with exit_on_config_error():
        engine = build_engine(cfg, settings, backend, writer, log, params, pattern_table)
    for warning in cfg.unused_key_warnings("kata analysis"):   # all its keys are read by now (KataGo's check)
        log.info(warning)
    log.write(f"Analyzing up to {settings.num_analysis_threads} positions at a time in parallel")
    log.info("Started, ready to begin handling requests")
    try:
        status = engine.serve(stdin, wait_at_end=not quit_without_waiting)  # starts the networks' loads
        if engine.interrupted:
            status = EXIT_INTERRUPTED
    finally:
        backend.close()
        for line in backend.summary_lines():
            log.write(line)
        log.write("All cleaned up, quitting")
        log.close()
    if writer.silenced:   # quitting without writing (Ctrl-C): a flush could block on a pipe nobody reads
        return status
    try:
        stdout.flush()
    except (BrokenPipeError, OSError, ValueError):
        pass
    return status


# The options of the typer command below, for a launch line read without typer (katacli.launch_line).
LAUNCH_OPTIONS = LaunchOptions(
    values={"--model": "model", "--human-model": "human_model"},
    repeated={"--config": "config", "--override-config": "override_config"},
    counts={"--analysis-threads": "analysis_threads"},
    flags={"--quit-without-waiting": "quit_without_waiting"},
)


def launch(model: Optional[str], human_model: Optional[str], config: Optional[List[str]],
           override_config: Optional[List[str]], analysis_threads: Optional[int], quit_without_waiting: bool) -> int:
    """The command, given its options: the exit status."""
    try:
        return run_analysis(model, config, override_config, analysis_threads, quit_without_waiting, human_model)
    except KeyboardInterrupt:  # Ctrl-C while starting up (serving handles its own)
        return EXIT_INTERRUPTED


def register(app: typer.Typer) -> None:
    import typer

    @app.command("analysis", help=HELP)
    def analysis(
        model: Optional[str] = model_option(required=False),
        human_model: Optional[str] = human_model_option(),
        config: Optional[List[str]] = config_option("analysis_example.cfg"),
        override_config: Optional[List[str]] = override_config_option(),
        analysis_threads: Optional[int] = typer.Option(
            None, "--analysis-threads", metavar="N",
            help="Analyse up to N positions at once (numAnalysisThreads; not together with that config key)."),
        quit_without_waiting: bool = typer.Option(
            False, "--quit-without-waiting",
            help="When stdin closes, quit at once instead of finishing the queued queries."),
    ) -> None:
        raise typer.Exit(launch(model, human_model, config, override_config, analysis_threads, quit_without_waiting))
