"""``kata gtp``: a GTP engine that GUIs (Lizzie, Sabaki, q5Go, KaTrain's GTP mode) and match runners
(gomill, twogtp) accept as KataGo."""
from __future__ import annotations

import io
import os
import sys
import threading
from typing import List, Optional

import typer

from katacli.cli_support import (
    check_model_or_exit, config_option, exit_on_config_error, human_model_option, human_model_warning, load_config,
    model_option, override_config_option, report_error_and_exit,
)
from katacli.config import Config

EXIT_STARTUP_ERROR = 1
WAIT_POLL_SECONDS = 0.1  # waiting wakes up this often so that Ctrl-C is noticed
NOGO_RULES_NAME = "nogo"
DETERMINISTIC_SEED = "forDeterministicTesting"

HELP = (
    "Run a GTP engine on stdin/stdout, answering like KataGo.\n\n"
    "Point a GUI or match runner at `kata gtp -model NET.bin.gz -config gtp.cfg`. Without -model the engine "
    "plays without a network, by Monte Carlo rollouts (weak, but needs nothing). Without -config every setting "
    "takes KataGo's GTP default (configs/gtp_example.cfg documents them all); change single settings with "
    '-override-config "maxVisits=200,numSearchThreads=4".\n\n'
    "Besides standard GTP it supports KataGo's extensions (see list_commands): kata-analyze and lz-analyze "
    "streaming, kata-set-rules, kata-raw-nn, kata-get-param / kata-set-param, time settings and more. "
    "`kata-set-rules nogo` (or rules = nogo in the config) plays NoGo, where capturing is not allowed.\n\n"
    "Logs go to stderr or the configured log file, never to stdout."
)


def _extract_nogo(cfg: Config) -> bool:
    """`rules = nogo` is katacli's own: strip it so the Go rules loader never sees it."""
    if "rules" in cfg and str(cfg.as_dict().get("rules", "")).strip().lower() == NOGO_RULES_NAME:
        cfg.apply_overrides({"rules": ""}, origin="nogo")
        return True
    return False


def _make_loader(model_path: str, settings, log, human: bool = False, profile_set: bool = False):
    """Loads the network in the background; ``human``: the -human-model net (KataGo's warnings)."""
    from katacli.engine.engine import ModelLoader

    nn = settings.nn
    what = "human SL model" if human else "model"

    def load():
        from katacli.engine.bot import stable_seed
        from katacli.nn.evaluator import NNEvaluator

        import torch

        device = None
        if torch.cuda.is_available() and nn.device_per_server_thread[0] is not None:
            device = f"cuda:{nn.device_per_server_thread[0]}"
        symmetry = nn.forced_symmetry if nn.forced_symmetry is not None else (None if nn.randomize else 0)
        nn.apply_cpu_threads(device)
        evaluator = NNEvaluator.from_file(
            model_path, device=device, cache_size_power_of_two=nn.cache_size_power_of_two,
            default_symmetry=symmetry, max_batch_size=nn.max_batch_size or 8,
            seed=stable_seed(nn.rand_seed))
        log.write(f"Loaded {what} {model_path}")
        if settings.startup_print_message_to_stderr:
            log.info(f"{'Human SL model' if human else 'Model'} name: {evaluator.model_name}")
        warning = human_model_warning(evaluator, profile_set) if human else None
        if warning:
            log.info(warning)
        return evaluator

    def load_or_exit():
        try:
            return load()
        except Exception as exc:  # a broken model file: one line, then exit like any startup error
            print(f"error: could not load the {what} {model_path}: {exc}", file=sys.stderr, flush=True)
            os._exit(EXIT_STARTUP_ERROR)

    return ModelLoader(load_or_exit)


def prepare_config(config: Optional[List[str]], override_config: Optional[List[str]], has_model: bool,
                   has_human_model: bool = False):
    """(config, nogo?, GtpSettings): the cheap part of startup, so that config mistakes are reported
    (one line, exit status 1) before anything is answered on stdout."""
    from katacli.search.runtime_params import GtpRuntimeParams
    from katacli.settings import GtpSettings

    cfg = load_config(config, override_config, mode="gtp")
    nogo = _extract_nogo(cfg)
    with exit_on_config_error():
        settings = GtpSettings.from_config(cfg)
        # The search keys too: checked before input can end the run.
        GtpRuntimeParams.from_config(cfg, has_human_model=has_human_model)
    if has_model:
        _check_rules_for_network(settings, cfg)
    return cfg, nogo, settings


def _check_rules_for_network(settings, cfg) -> None:
    from katacli.engine.network_rules import network_supported_rules

    if network_supported_rules(settings.rules) != settings.rules:
        report_error_and_exit(f"Rules {settings.rules.to_json_string()} from config file {cfg.source} are NOT "
                              "supported by neural net")


def build_engine(model: Optional[str], config: Optional[List[str]], override_config: Optional[List[str]],
                 override_version: Optional[str] = None, *, stdout=None, stderr=None, loader=None, make_bot=None,
                 output=None, prepared=None, human_model: Optional[str] = None, human_loader=None):
    """The configured engine (not yet running). Config mistakes exit with a one-line error.

    ``loader`` replaces the background model loader (tests pass one holding an already loaded
    network), ``human_loader`` the -human-model one; ``make_bot`` replaces the search adapter
    factory; ``prepared`` is what :func:`prepare_config` returned, when the caller has read the
    config already.
    """
    from katacli import KATAGO_COMPAT_VERSION, __version__

    if loader is None and prepared is None:  # run_gtp checked them before preparing the config
        check_model_or_exit(model)
    if human_loader is None and prepared is None:
        check_model_or_exit(human_model, flag="-human-model")
    has_human_model = human_model is not None or human_loader is not None
    cfg, nogo, settings = prepared or prepare_config(config, override_config, model is not None, has_human_model)
    # The search package (and torch with it) only now: a bad config file is reported at once.
    from katacli.engine.engine import EngineOptions, GtpEngine, ModelLoader
    from katacli.engine.log import EngineLog
    from katacli.engine.protocol import ResponseWriter
    from katacli.search.runtime_params import GtpRuntimeParams

    with exit_on_config_error():
        params = GtpRuntimeParams.from_config(cfg, has_human_model=has_human_model)
    log = EngineLog(settings.logging, stderr=stderr)
    for warning in cfg.unknown_key_warnings():  # shown on stderr while the config was read
        log.file_only(warning)
    announce = log.info if settings.startup_print_message_to_stderr else log.write
    announce(f"katacli {__version__} GTP engine (KataGo {KATAGO_COMPAT_VERSION} compatible)")
    rules_name = "NoGo" if nogo else settings.rules.nice_name()
    announce(f"Using {rules_name} rules initially, unless GTP/GUI overrides this")
    if config:
        announce(f"Loaded config {', '.join(config)}")
    if model is None and loader is None:
        announce("No model given: playing by Monte Carlo rollouts")
    seed = DETERMINISTIC_SEED if settings.for_deterministic_testing else settings.search_rand_seed
    options = EngineOptions(settings=settings, params=params, config=cfg, model_path=model,
                            human_model_path=human_model, override_version=override_version, nogo=nogo, seed=seed,
                            make_bot=make_bot)
    if loader is None:
        loader = _make_loader(model, settings, log) if model is not None else ModelLoader(None)
    if human_loader is None and human_model is not None:
        human_loader = _make_loader(human_model, settings, log, human=True, profile_set="humanSLProfile" in cfg)
    if output is None:
        output = ResponseWriter(stdout if stdout is not None else sys.stdout)
    if settings.log_all_gtp_communication:
        output.on_write = lambda text: log.write(text.rstrip("\n"))
    engine = GtpEngine(options, output, log, loader, human_loader)
    announce("GTP ready, beginning main protocol loop")
    return engine


def run_gtp(model: Optional[str], config: Optional[List[str]], override_config: Optional[List[str]],
            override_version: Optional[str], human_model: Optional[str] = None) -> int:
    """Serve GTP on stdin/stdout until quit or end of input; the process exit status.

    The engine (config, torch, search, network) is built in a thread while this thread already
    answers the identity commands (name, version, protocol_version, known_command, list_commands),
    so a GUI probing the engine gets its answers at once; other commands wait until it is built.
    """
    from katacli.engine.errors import EngineStartupError
    from katacli.engine.protocol import ResponseWriter

    check_model_or_exit(model)
    check_model_or_exit(human_model, flag="-human-model")
    if human_model is not None and model is None:
        report_error_and_exit("-human-model needs a main network too: pass -model")
    prepared = prepare_config(config, override_config, model is not None, human_model is not None)
    output = ResponseWriter(sys.stdout)
    built: dict = {}
    ready = threading.Event()

    def build() -> None:
        try:
            built["engine"] = build_engine(model, config, override_config, override_version, output=output,
                                           prepared=prepared, human_model=human_model)
        except SystemExit as exc:  # a config error, already reported on stderr
            sys.stderr.flush()
            os._exit(exc.code if isinstance(exc.code, int) else EXIT_STARTUP_ERROR)
        except BaseException as exc:
            print(f"error: could not start the engine: {exc}", file=sys.stderr, flush=True)
            os._exit(EXIT_STARTUP_ERROR)
        finally:
            ready.set()

    threading.Thread(target=build, name="engine-builder", daemon=True).start()
    stream = io.TextIOWrapper(sys.stdin.buffer, encoding="latin-1")
    engine = None
    try:
        while True:
            raw = stream.readline()
            if not raw:
                break
            if engine is None and not ready.is_set() and _answer_before_ready(raw, output, override_version):
                if _is_quit(raw):
                    return 0
                continue
            if engine is None:
                while not ready.wait(WAIT_POLL_SECONDS):
                    pass
                engine = built["engine"]
            engine.handle_line(raw)
            if engine.quit_requested:
                break
    except KeyboardInterrupt:
        pass
    except EngineStartupError as exc:
        print(f"error: {exc}", file=sys.stderr, flush=True)
        return EXIT_STARTUP_ERROR
    finally:
        if engine is not None:
            engine.stop_background()
            engine.log.write("All cleaned up, quitting")
            engine.log.close()
    return 0


def _is_quit(raw: str) -> bool:
    from katacli.engine.protocol import EmptyCommand, clean_line, parse_command

    try:
        return parse_command(clean_line(raw)).name == "quit"
    except EmptyCommand:
        return False


def _answer_before_ready(raw: str, output, override_version: Optional[str]) -> bool:
    """Answer a line that needs no engine (blank, comment, identity commands, quit); False otherwise."""
    from katacli.engine.identity import identity_answer
    from katacli.engine.protocol import EmptyCommand, clean_line, parse_command

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


def register(app: typer.Typer) -> None:
    @app.command("gtp", help=HELP)
    def gtp(
        model: Optional[str] = model_option(required=False),
        human_model: Optional[str] = human_model_option(),
        config: Optional[List[str]] = config_option("gtp_example.cfg"),
        override_config: Optional[List[str]] = override_config_option(),
        override_version: Optional[str] = typer.Option(
            None, "--override-version", metavar="VERSION", help="Answer this to the GTP `version` command."),
    ) -> None:
        raise typer.Exit(run_gtp(model, config, override_config, override_version, human_model))
