"""``kata match``: play networks (and the rollout engine) against each other, like ``katago match``."""
from __future__ import annotations

import json
import logging
import sys
from pathlib import Path
from typing import List, Optional

import typer

from katacli.cli_support import (
    CurrentStream, exit_on_config_error, load_config, override_config_option, report_error_and_exit,
)

HELP = """Play bots against each other and report who is stronger, like `katago match`.

Bots are defined in the config: numBots, botName0, botName1, ..., and nnModelFile0, nnModelFile1, ... (a .bin.gz network, or `rollouts` for the random-playout engine). Any search key can differ per bot by appending the bot's index (maxVisits1 = 400, cpuctExploration0 = 1.3). Every two bots play each other with both colours, numGameThreads games at a time sharing network batches, until numGamesTotal games; board sizes, rules and komi are drawn as in self-play (bSizes, bSizeRelProbs, koRules, komiMean / komiAuto, ...). See configs/match_example.cfg.

On a CPU the games are shared out among one worker process per core (numMatchProcesses sets how many; their log lines go to -log-file).

At the end a table shows games, wins, draws, win rate with a 95% interval and the Elo difference; --json prints the same as JSON on stdout.

\b
Example (the config's nnModelFile0 is a placeholder: name your network there or as here):
kata match -config configs/match_example.cfg -sgf-output-dir match_sgfs -override-config "nnModelFile0=NET.bin.gz,numGamesTotal=40"

Ctrl-C (or SIGTERM) stops the match with exit status 0, as KataGo's: games in progress are dropped, finished ones are counted and their SGFs kept (each game is its own complete file).
"""
EXIT_RUNTIME_ERROR = 2


def choose_num_processes(cfg, num_game_threads: int) -> int:
    """numMatchProcesses, else one per CPU core on the CPU and one with a GPU; never more than game threads."""
    from katacli.worker_processes import default_num_processes

    if cfg.is_set("numMatchProcesses"):
        wanted = cfg.get("numMatchProcesses", "gtp")
    else:
        import torch

        wanted = default_num_processes(num_game_threads, "cuda" if torch.cuda.is_available() else "cpu")
    return max(1, min(wanted, num_game_threads))


def warn_unknown_keys(cfg) -> None:
    """One WARNING line per key that is neither known nor a known key with a bot index."""
    from katacli.match.settings import unknown_keys

    for key in unknown_keys(cfg):
        print(f"WARNING: Unknown config key '{key}' in {cfg.source}", file=sys.stderr)


def warn_about_positions(positions, ignored_keys: tuple = (), gatekeeper: bool = False) -> None:
    """Start or hint positions that came to nothing (KataGo then plays ordinary games), and keys set
    that a match cannot act on: say so."""
    from katacli.match.settings import ignored_key_warnings

    for warning in positions.warnings + ignored_key_warnings(ignored_keys, gatekeeper):
        print(f"warning: {warning}", file=sys.stderr)


def _setup_logging(log_file: Optional[str], log_to_stdout: bool, quiet: bool) -> list[logging.Handler]:
    from katacli.worker_processes import keep_out_worker_records

    logger = logging.getLogger("katacli.match")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handlers: list[logging.Handler] = []
    if log_file:
        try:
            handler = logging.FileHandler(log_file, encoding="utf-8")
        except OSError as exc:   # a directory, a missing folder, no permission
            report_error_and_exit(f"-log-file: cannot write {log_file}: {exc.strerror or exc}")
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
        handlers.append(keep_out_worker_records(handler))
    # logToStdout = true (match_example.cfg's) puts the log on stdout, as KataGo's match does; the results
    # table follows it there.
    console = logging.StreamHandler(CurrentStream("stdout" if log_to_stdout and not quiet else "stderr"))
    console.setLevel(logging.INFO if log_to_stdout and not quiet else logging.WARNING)
    console.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    handlers.append(console)
    for handler in handlers:
        logger.addHandler(handler)
    return handlers


def run_match(config: List[str], override_config: Optional[List[str]], log_file: Optional[str],
              sgf_output_dir: Optional[str], seed: Optional[int], as_json: bool, quiet: bool) -> int:
    from rich.console import Console

    from katacli.config import ConfigError
    from katacli.match.results import results_console, results_table
    from katacli.match.runner import MatchNetworks, MatchRun, load_pattern_tables
    from katacli.search.pattern_avoidance import PatternAvoidanceError
    from katacli.match.settings import MatchSettings, is_match_key
    from katacli.setup.engine_settings import NNSettings

    cfg = load_config(config, override_config, mode="gtp", warn_unknown=False)
    with exit_on_config_error():
        settings = MatchSettings.from_config(cfg)
        nn = NNSettings.from_config(cfg, "gtp")
        cpu_threads = cfg.get("numEigenThreadsPerModel", "gtp") or 1
        log_to_stdout = cfg.get("logToStdout", "gtp")
        num_processes = choose_num_processes(cfg, settings.num_game_threads)
    warn_unknown_keys(cfg)
    cfg.warn_unused_keys("kata match", known=is_match_key)   # every key the match reads is read by now (KataGo's check)
    warn_about_positions(settings.positions, settings.ignored_keys)
    handlers = _setup_logging(log_file, log_to_stdout, quiet or as_json)
    for line in settings.positions.log_lines:
        logging.getLogger("katacli.match").info("%s", line)
    sgf_dir = Path(sgf_output_dir) if sgf_output_dir else None
    if sgf_dir is not None:
        if sgf_dir.exists() and not sgf_dir.is_dir():
            report_error_and_exit(f"-sgf-output-dir: {sgf_output_dir} is a file, not a directory")
        try:   # made now: a file in the way or no permission is said before any game is played
            sgf_dir.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            report_error_and_exit(f"-sgf-output-dir: cannot make {sgf_output_dir}: {exc.strerror or exc}")
    try:
        try:  # loaded before any network: unusable pattern files stop the match at once, in one line
            pattern_tables = load_pattern_tables(settings)
        except PatternAvoidanceError as exc:
            report_error_and_exit(str(exc))
        if num_processes > 1:
            from katacli.match.processes import MatchProcessRun

            networks = None
            run = MatchProcessRun(settings, nn, num_processes, cpu_threads, sgf_dir, seed, log_file)
        else:
            try:
                networks = MatchNetworks(settings, nn, cpu_threads)
            except Exception as exc:
                report_error_and_exit(f"could not load a network: {exc}")
            run = MatchRun(settings, networks.nets, sgf_dir, seed, networks.client_contexts,
                           pattern_tables=pattern_tables)
        err = Console(stderr=True, soft_wrap=True)   # whole lines in a log file
        try:
            if quiet or as_json:
                results = run.run()
            else:
                results = _run_with_progress(run, err)
        except ConfigError as exc:
            report_error_and_exit(str(exc))
        except Exception as exc:
            print(f"error: the match stopped: {exc}", file=sys.stderr)
            return EXIT_RUNTIME_ERROR
        finally:
            if networks is not None:
                networks.close()
    finally:
        logger = logging.getLogger("katacli.match")
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
    if as_json:
        print(json.dumps({"interrupted": run.stopped, **results.as_dict()}, indent=2))
    else:
        results_console().print(results_table(results))
        if run.stopped:
            print(f"interrupted after {results.games} games", file=sys.stderr)
    return 0   # a stop, too, ends cleanly with the games so far (KataGo: "Exited cleanly after signal", status 0)


def _run_with_progress(run, console):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

    columns = (TextColumn("[bold]match"), BarColumn(), MofNCompleteColumn(), TextColumn("games"),
               TimeElapsedColumn(), TimeRemainingColumn(), TextColumn("{task.fields[status]}"))
    with Progress(*columns, console=console, transient=False) as progress:
        task = progress.add_task("match", total=run.settings.num_games_total, status="")

        def tick(r) -> None:
            res = r.results
            progress.update(task, completed=r.games_finished,
                            status=f"{r.moves_played} moves, B {res.black_wins} / W {res.white_wins} / = {res.draws}")

        results = run.run(on_tick=tick)
        tick(run)
    return results


def register(app: typer.Typer) -> None:
    @app.command("match", help=HELP, no_args_is_help=True)
    def match(
        config: List[str] = typer.Option(..., "--config", "--config-file", metavar="FILE",
                                         help="Match config (.cfg); may be repeated, later files win. "
                                              "See configs/match_example.cfg."),
        override_config: Optional[List[str]] = override_config_option(),
        log_file: Optional[str] = typer.Option(None, "--log-file", metavar="FILE", help="Also log to this file."),
        sgf_output_dir: Optional[str] = typer.Option(None, "--sgf-output-dir", metavar="DIR",
                                                     help="Write every game here as its own .sgf file."),
        seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Seed the game randomness."),
        as_json: bool = typer.Option(False, "--json", help="Print the results as JSON on stdout."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bar."),
    ) -> None:
        raise typer.Exit(run_match(config, override_config, log_file, sgf_output_dir, seed, as_json, quiet))
