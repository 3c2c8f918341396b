"""``kata selfplay``: play games against itself and write KataGo-layout training data
(``kata convert`` moves it between our .h5 files and KataGo's .npz files)."""
from __future__ import annotations

import contextlib
import datetime
import logging
import os
import sys
from pathlib import Path
from typing import List, Optional, Sequence

import typer

from katacli.cli_support import (
    CurrentStream,
    check_model_or_exit,
    exit_on_config_error,
    load_config,
    override_config_option,
    report_error_and_exit,
    write_failure_message,
)
from katacli.example_configs import example_config

HELP = """Generate training data by self-play, like `katago selfplay`.

Plays many games at once with the newest network in -models-dir (checked again every 20 seconds; a newer network takes over in running games too) and writes:

\b
  OUTPUT/tdata/*.h5     training rows in KataGo's layout, whole games per file
  OUTPUT/sgfs/*.sgfs    every game, one SGF per line
  OUTPUT/log-*.log      the log (and selfplay-*.cfg, the settings used)

On the CPU the games are shared out among one worker process per core (numSelfplayProcesses sets how many); each writes its own files into OUTPUT.

Settings are KataGo's self-play config keys (numGameThreads, maxVisits, cheapSearchProb, bSizes, komiAuto, ...); see configs/selfplay_example.cfg. `kata convert` turns the .h5 files into KataGo's .npz and back.

Example: kata selfplay -models-dir models -output-dir selfplay -config configs/selfplay_example.cfg

Ctrl-C (or SIGTERM) stops after writing every finished game; games in progress are dropped. A second Ctrl-C exits at once (files on disk are always complete).
"""

EXAMPLE_CONFIG_NAME = "selfplay_example.cfg"   # the default -config (katacli.example_configs finds it)
MAX_GAMES_TOTAL = 2**63 - 1   # KataGo reads -max-games-total as a 64-bit count
EXIT_RUNTIME_ERROR = 2
COMMAND_NAME = "kata selfplay"   # in its warnings


class _OneLineFormatter(logging.Formatter):
    """The console gets one line per problem; its traceback goes to the log file only."""

    def format(self, record: logging.LogRecord) -> str:
        saved = record.exc_info, record.exc_text
        record.exc_info = record.exc_text = None
        try:
            return super().format(record)
        finally:
            record.exc_info, record.exc_text = saved


def _setup_logging(output_dir: Path, run_stamp: str, log_to_stdout: bool) -> tuple[Path, list[logging.Handler]]:
    log_path = output_dir / f"log-{run_stamp}.log"
    logger = logging.getLogger("katacli.selfplay")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logging.raiseExceptions = False  # a log line that cannot be written (full disk) is dropped quietly
    file_handler = logging.FileHandler(log_path, encoding="utf-8")
    file_handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    logger.addHandler(file_handler)
    console = logging.StreamHandler(CurrentStream("stdout" if log_to_stdout else "stderr"))
    console.setLevel(logging.INFO if log_to_stdout else logging.WARNING)
    console.setFormatter(_OneLineFormatter("%(asctime)s %(message)s", "%H:%M:%S"))
    logger.addHandler(console)
    return log_path, [file_handler, console]


def read_selfplay_config(cfg):
    """Everything self-play reads from its config: (SelfplaySettings, NNSettings, CPU threads per model,
    alwaysComputePassAliveUnderSuicideRules, logToStdout, numSelfplayProcesses or None).
    Raises ConfigError."""
    from katacli.selfplay.settings import SelfplaySettings
    from katacli.setup.engine_settings import NNSettings

    settings = SelfplaySettings.from_config(cfg)
    nn = NNSettings.from_config(cfg, "selfplay")
    cpu_threads = cfg.get("numEigenThreadsPerModel", "selfplay") or 1
    pass_alive = cfg.get("alwaysComputePassAliveUnderSuicideRules", "selfplay")
    log_to_stdout = cfg.get("logToStdout", "selfplay")
    num_processes = cfg.get("numSelfplayProcesses", "selfplay") if cfg.is_set("numSelfplayProcesses") else None
    return settings, nn, cpu_threads, pass_alive, log_to_stdout, num_processes


def run_selfplay(models_dir: str, output_dir: str, config: Optional[List[str]], override_config: Optional[List[str]],
                 max_games_total: Optional[int], random_init: Optional[str], poll_seconds: float,
                 seed: Optional[int], quiet: bool) -> int:
    from katacli.selfplay.latest_model import find_latest_model
    from katacli.worker_processes import default_num_processes

    if max_games_total is not None and not 0 < max_games_total <= MAX_GAMES_TOTAL:   # KataGo's words (a 64-bit count)
        report_error_and_exit("-max-games-total must be a positive integer")
    if not config:
        example = example_config(EXAMPLE_CONFIG_NAME)
        if example is None:
            report_error_and_exit(f"give a self-play config with -config (see configs/{EXAMPLE_CONFIG_NAME})")
        print(f"No -config given: using {example}", file=sys.stderr)
        config = [str(example)]
    cfg = load_config(config, override_config, mode="selfplay")
    with exit_on_config_error():
        settings, nn, cpu_threads, pass_alive, log_to_stdout, num_processes = read_selfplay_config(cfg)
    # Every key self-play reads is read by now: KataGo's warning for the others (ponderingEnabled, logDir: its
    # log is the output folder's log-*.log), also written to that log.
    cfg.warn_unused_keys(COMMAND_NAME)
    for warning in settings.positions.warnings:
        print(f"warning: {warning}", file=sys.stderr)

    models_path, out_path = Path(models_dir), Path(output_dir)
    for flag, path in (("-models-dir", models_path), ("-output-dir", out_path)):
        if path.exists() and not path.is_dir():
            report_error_and_exit(f"{flag} {path} is not a directory")
    try:
        models_path.mkdir(parents=True, exist_ok=True)
        out_path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        report_error_and_exit(f"cannot create directory: {exc}")
    if not os.access(out_path, os.W_OK | os.X_OK):   # a read-only file system, no permission: before any log
        report_error_and_exit(f"-output-dir {output_dir}: cannot write there (read-only or no permission)")

    if random_init is not None:
        from katacli.nn.configs import config_of_name
        try:
            config_of_name(random_init)
        except ValueError as exc:
            report_error_and_exit(f"-random-init: {exc}")
    latest = find_latest_model(models_path)
    if latest is None and random_init is None:
        report_error_and_exit(
            f"no model in {models_dir} (looked for *.bin.gz, *.bin, model.txt.gz files). Put a network there, "
            "or start from random weights with -random-init b6c96 (any name kata train knows, e.g. b4c32)")
    if latest is not None:  # before worker processes start, each of which would load it
        check_model_or_exit(str(latest.path), flag="-models-dir")
    device = "cuda" if _cuda_available() else "cpu"
    if num_processes is None:
        num_processes = default_num_processes(settings.runner.num_game_threads, device)
    num_processes = min(num_processes, settings.runner.num_game_threads)
    if num_processes > 1:
        return _run_processes(settings, nn, cfg, models_path, out_path, num_processes, cpu_threads, pass_alive,
                              log_to_stdout, max_games_total, random_init, poll_seconds, seed, quiet)

    from katacli.selfplay.model_pool import ModelManager
    from katacli.selfplay.runner import SelfplayRun

    manager = ModelManager(nn, cpu_threads=cpu_threads, pass_alive_setting=pass_alive)
    try:
        manager.load_first(models_path, random_init, seed)
    except Exception as exc:
        report_error_and_exit(f"could not load the newest model in {models_dir}: {exc}")

    run = SelfplayRun(settings, manager, out_path, models_dir=models_path, max_games_total=max_games_total,
                      poll_seconds=poll_seconds, seed=seed)

    def start(log_path: Path):
        logging.getLogger("katacli.selfplay").info("self-play starting with model %s, log %s",
                                                   manager.latest_name(), log_path)
        return run

    return _run_logged(out_path, run.run_id, cfg, log_to_stdout, quiet, start, Exception, close=manager.close,
                       startup_lines=settings.positions.log_lines)


def _run_logged(out_path: Path, run_id: str, cfg, log_to_stdout: bool, quiet: bool, start, failures,
                close=None, startup_lines: Sequence[str] = ()) -> int:
    """What both ways of running share: write the settings used and open the log (both named by the
    run id) with ``startup_lines`` (what loading start positions found), make the run with
    ``start(log_path)``, play it under the progress display, report a failure (an exception of type
    ``failures``), then ``close()`` and close the log."""
    from katacli.selfplay.progress import ProgressDisplay

    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    log_path, handlers = _setup_logging(out_path, f"{stamp}-{run_id}", log_to_stdout)
    for warning in cfg.unknown_key_warnings() + cfg.unused_key_warnings(COMMAND_NAME):   # shown on stderr too
        logging.getLogger("katacli.selfplay").info(warning)
    for line in startup_lines:
        logging.getLogger("katacli.selfplay").info(line)
    (out_path / f"selfplay-{stamp}-{run_id}.cfg").write_text(
        "".join(f"{k} = {v}\n" for k, v in cfg.as_dict().items()), encoding="utf-8")
    display = ProgressDisplay(live=False if quiet else None)
    try:
        run = start(log_path)
        with display:
            stats = run.run(on_tick=None if quiet else display)
    except OSError as exc:  # disk full, output directory gone, ...
        print(f"error: {write_failure_message(exc, 'self-play')} (see {log_path})", file=sys.stderr)
        return EXIT_RUNTIME_ERROR
    except failures as exc:
        print(f"error: self-play stopped: {exc} (see {log_path})", file=sys.stderr)
        return EXIT_RUNTIME_ERROR
    finally:
        if close is not None:
            close()
        logger = logging.getLogger("katacli.selfplay")
        for handler in handlers:
            logger.removeHandler(handler)
            with contextlib.suppress(OSError):  # its last flush may meet the same full disk
                handler.close()
    display.finish(stats)
    return 0


def _cuda_available() -> bool:
    """Whether an NVIDIA GPU seems present, without importing torch (seconds of start-up the
    supervising process of a multi-process run does not need)."""
    return os.path.exists("/dev/nvidia0") or os.path.exists("/proc/driver/nvidia/version")


def _run_processes(settings, nn, cfg, models_path: Path, out_path: Path, num_processes: int, cpu_threads: int,
                   pass_alive, log_to_stdout: bool, max_games_total: Optional[int], random_init: Optional[str],
                   poll_seconds: float, seed: Optional[int], quiet: bool) -> int:
    """Self-play in num_processes worker processes (katacli.selfplay.processes), this one supervising."""
    import random

    from katacli.selfplay.processes import ProcessRun, WorkerFailed, make_jobs

    run_id = f"{random.Random(seed).getrandbits(64):016X}"

    def start(log_path: Path):
        logging.getLogger("katacli.selfplay").info("self-play starting in %d processes, log %s", num_processes,
                                                   log_path)
        jobs = make_jobs(settings, num_processes, nn=nn, cpu_threads=cpu_threads, pass_alive=pass_alive,
                         models_dir=str(models_path), output_dir=str(out_path), poll_seconds=poll_seconds, seed=seed,
                         random_init=random_init,
                         random_init_seed=seed if seed is not None else random.getrandbits(32),
                         log_path=str(log_path))
        return ProcessRun(jobs, max_games_total)

    return _run_logged(out_path, run_id, cfg, log_to_stdout, quiet, start, WorkerFailed,
                       startup_lines=settings.positions.log_lines)


def register(app: typer.Typer) -> None:
    @app.command("selfplay", help=HELP, no_args_is_help=True)
    def selfplay(
        models_dir: str = typer.Option(..., "--models-dir", metavar="DIR",
                                       help="Directory with the networks; the newest .bin.gz (searched recursively) plays."),
        output_dir: str = typer.Option(..., "--output-dir", metavar="DIR",
                                       help="Where tdata/, sgfs/ and the log go."),
        config: Optional[List[str]] = typer.Option(
            None, "--config", metavar="FILE",
            help="Self-play config (.cfg); may be repeated, later files win. "
                 "Default: configs/selfplay_example.cfg."),
        override_config: Optional[List[str]] = override_config_option(),
        max_games_total: Optional[int] = typer.Option(None, "--max-games-total", metavar="N",
                                                      help="Stop after N games (default: run until stopped)."),
        random_init: Optional[str] = typer.Option(
            None, "--random-init", metavar="NET",
            help="If -models-dir has no network, play with random weights of this architecture (e.g. b6c96) "
                 "to bootstrap a run; a network appearing later takes over."),
        poll_seconds: float = typer.Option(20.0, "--model-poll-seconds", metavar="S", min=0.1,
                                           help="How often to look for a newer network."),
        seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Seed the game randomness."),
        quiet: bool = typer.Option(False, "--quiet", help="No live progress panel (status lines only)."),
    ) -> None:
        raise typer.Exit(run_selfplay(models_dir, output_dir, config, override_config, max_games_total,
                                      random_init, poll_seconds, seed, quiet))
