"""``kata gatekeeper``: accept or reject each newly trained network by a match, like ``katago gatekeeper``."""
from __future__ import annotations

import datetime
import logging
import secrets
import signal
import sys
from pathlib import Path
from typing import List, Optional

import typer

from katacli.cli_support import exit_on_config_error, load_config, override_config_option, report_error_and_exit
from katacli.commands.match import choose_num_processes, warn_about_positions, warn_unknown_keys

# KataGo's gatekeeper log name ends in a random 64-bit number (16 hex digits).
GATEKEEPER_LOG_RANDOM_BYTES = 8

HELP = """Test each new network against the accepted one before self-play uses it, like `katago gatekeeper`.

Watches -test-models-dir for networks (files, or directories holding one, as training exports them). The newest is played against the newest network in -accepted-models-dir (a random network while that holds none) for numGamesPerGating games (both colours in turn; fewer once the finished games decide it either way, as KataGo); it moves into -accepted-models-dir if it scores at least -required-candidate-win-prop (ties go to the candidate), otherwise into -rejected-models-dir. Candidates older than the accepted network are rejected without games (unless -no-autoreject-old-models). A file still being copied is waited for, never tested or moved; moves are renames.

Game and search settings are match keys (numGameThreads, maxVisits, bSizes, komiAuto, ...); see configs/gatekeeper_example.cfg. SGFs go to -sgf-output-dir/<candidate>/, the log to -sgf-output-dir/log-*.log. The test, accepted and rejected folders must lie side by side, none inside another.

\b
Example: kata gatekeeper -config configs/gatekeeper_example.cfg -test-models-dir loop/candidates \\
           -accepted-models-dir loop/models -rejected-models-dir loop/rejected -sgf-output-dir loop/gating

Ctrl-C (or SIGTERM) stops at once with exit status 0, as KataGo's; a gating in progress moves nothing and is repeated next time.
"""


def read_gatekeeper_config(cfg):
    """What `kata gatekeeper` reads from its config at start-up: (start positions, NNSettings, CPU
    threads, worker processes, logToStdout, policy-opening keys it cannot act on). ConfigError names the key or the unreadable file. The bots'
    search settings are read per candidate (MatchSettings, with the two networks filled in)."""
    from katacli.config import ConfigError
    from katacli.match.settings import load_match_positions, read_policy_openings
    from katacli.setup.engine_settings import NNSettings

    if "numGamesPerGating" not in cfg:   # no default, as in KataGo: how much to test is the user's choice
        raise ConfigError(f"Could not find key 'numGamesPerGating' in config file {cfg.source}")
    _, ignored_keys = read_policy_openings(cfg, gatekeeper=True)   # set, but never acted on
    positions = load_match_positions(cfg)  # once: an unreadable file stops the gatekeeper before any gating
    log_to_stdout = cfg.get("logToStdout", "gtp")
    nn = NNSettings.from_config(cfg, "gtp")
    cpu_threads = cfg.get("numEigenThreadsPerModel", "gtp") or 1
    num_processes = choose_num_processes(cfg, cfg.get("numGameThreads", "selfplay")
                                         if cfg.is_set("numGameThreads") else 1)
    return positions, nn, cpu_threads, num_processes, log_to_stdout, ignored_keys


def run_gatekeeper(config: List[str], override_config: Optional[List[str]], test_dir: str, accepted_dir: str,
                   rejected_dir: str, sgf_dir: str, selfplay_dir: Optional[str], required_win_prop: float,
                   no_autoreject: bool, quit_if_no_nets: bool, seed: Optional[int], quiet: bool) -> int:

    from katacli.match.gatekeeper import Gatekeeper, GatekeeperError
    from katacli.match.results import results_console, results_table

    if not 0.0 <= required_win_prop <= 1.0:
        report_error_and_exit("-required-candidate-win-prop must be between 0 and 1")
    folder_flags = (("-test-models-dir", test_dir), ("-accepted-models-dir", accepted_dir),
                    ("-rejected-models-dir", rejected_dir), ("-sgf-output-dir", sgf_dir))
    for name, value in folder_flags:
        if not value.strip():   # an unset shell variable: never "the current folder" (KataGo refuses it too)
            report_error_and_exit(f"Empty directory specified for {name}")
    cfg = load_config(config, override_config, mode="gtp", warn_unknown=False)
    warn_unknown_keys(cfg)
    with exit_on_config_error():
        positions, nn, cpu_threads, num_processes, log_to_stdout, ignored_keys = read_gatekeeper_config(cfg)
    for name, value in folder_flags:
        if Path(value).exists() and not Path(value).is_dir():
            report_error_and_exit(f"{name} {value} is not a directory")
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    # A random part, as KataGo's: two gatekeepers started in the same second keep logs of their own.
    log_path = Path(sgf_dir) / f"log-{stamp}-{secrets.token_hex(GATEKEEPER_LOG_RANDOM_BYTES).upper()}.log"
    try:
        keeper = Gatekeeper(cfg, nn, Path(test_dir), Path(accepted_dir), Path(rejected_dir), Path(sgf_dir),
                            Path(selfplay_dir) if selfplay_dir else None, required_win_prop, not no_autoreject,
                            cpu_threads, seed, num_processes=num_processes, log_path=str(log_path),
                            positions=positions)
    except GatekeeperError as exc:
        report_error_and_exit(str(exc))
    warn_about_positions(positions, ignored_keys, gatekeeper=True)
    logger = logging.getLogger("katacli.match")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    # The log on the terminal: stdout with logToStdout = true (as KataGo's logger), else stderr.
    handlers = [logging.FileHandler(log_path, encoding="utf-8"),
                logging.StreamHandler(sys.stdout if log_to_stdout else sys.stderr)]
    handlers[0].setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(message)s"))
    handlers[1].setFormatter(logging.Formatter("%(asctime)s %(message)s", "%H:%M:%S"))
    handlers[1].setLevel(logging.WARNING if quiet else logging.INFO)
    for handler in handlers:
        logger.addHandler(handler)
    for line in positions.log_lines:   # what the start positions' loading found (KataGo logs it too)
        logger.info("%s", line)
    console = results_console(stderr=True)

    def show(outcome) -> None:
        if outcome.results is not None and not quiet:
            console.print(results_table(outcome.results))
        verdict = "ACCEPTED" if outcome.accepted else "rejected"
        print(f"{outcome.candidate}: {verdict} ({outcome.reason})", flush=True)

    previous = {sig: signal.signal(sig, lambda *_: keeper.request_stop()) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        with exit_on_config_error():
            keeper.run(quit_if_no_nets=quit_if_no_nets, on_outcome=show)
    except GatekeeperError as exc:
        report_error_and_exit(str(exc))
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for handler in handlers:
            logger.removeHandler(handler)
            handler.close()
    return 0   # a stop, too, is a clean end (KataGo's "Exited cleanly after signal"): loop scripts go on


def register(app: typer.Typer) -> None:
    @app.command("gatekeeper", help=HELP, no_args_is_help=True)
    def gatekeeper(
        config: List[str] = typer.Option(..., "--config", "--config-file", metavar="FILE",
                                         help="Gatekeeper config (.cfg); see configs/gatekeeper_example.cfg."),
        override_config: Optional[List[str]] = override_config_option(),
        test_models_dir: str = typer.Option(..., "--test-models-dir", metavar="DIR",
                                            help="Where new candidate networks appear."),
        accepted_models_dir: str = typer.Option(..., "--accepted-models-dir", metavar="DIR",
                                                help="Accepted networks (self-play's models directory)."),
        rejected_models_dir: str = typer.Option(..., "--rejected-models-dir", metavar="DIR",
                                                help="Where rejected candidates go."),
        sgf_output_dir: str = typer.Option(..., "--sgf-output-dir", metavar="DIR",
                                           help="Gating games (one directory per candidate) and the log."),
        selfplay_dir: Optional[str] = typer.Option(None, "--selfplay-dir", metavar="DIR",
                                                   help="Make DIR/<accepted net>/{sgfs,tdata,vadata} on acceptance."),
        required_win_prop: float = typer.Option(0.5, "--required-candidate-win-prop", metavar="P",
                                                help="Share of points the candidate needs (draws count half)."),
        no_autoreject: bool = typer.Option(False, "--no-autoreject-old-models",
                                           help="Also test candidates older than the accepted network."),
        quit_if_no_nets: bool = typer.Option(False, "--quit-if-no-nets-to-test",
                                             help="Exit when the test directory is empty instead of waiting."),
        seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Seed the game randomness."),
        quiet: bool = typer.Option(False, "--quiet", help="Only the verdicts and warnings."),
    ) -> None:
        raise typer.Exit(run_gatekeeper(config, override_config, test_models_dir, accepted_models_dir,
                                        rejected_models_dir, sgf_output_dir, selfplay_dir, required_win_prop,
                                        no_autoreject, quit_if_no_nets, seed, quiet))
