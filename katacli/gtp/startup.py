"""Assembling a GTP engine from a model and config files: what ``kata gtp``, the Python API and the
transcript recorder all start from. Config mistakes exit with one line (status 1) before anything is
answered on stdout; the network loads in the background."""
from __future__ import annotations

import os
import sys
from typing import List, Optional, Sequence

from katacli.cli_support import (
    EXIT_MODEL_FAILURE, check_model_or_exit, exit_on_config_error, human_model_warning, load_config,
    model_failure_line, report_error_and_exit, unused_profile_startup_warning,
)
from katacli.config import Config
from katacli.engine_common import DETERMINISTIC_SEED, network_supported_rules, stable_seed
from katacli.game.nogo import is_nogo_rules_name
from katacli.setup.engine_settings import REQUIRED_RULE_KEYS

EXIT_STARTUP_ERROR = 1


def extract_nogo(cfg: Config) -> bool:
    """`rules = nogo` is katacli's own: the Go rules loader sees the rules underneath instead (kept for a later
    kata-set-rules back to Go): the config's individual rule keys where it has the required ones, else Tromp-Taylor,
    as without a config."""
    if "rules" in cfg and is_nogo_rules_name(str(cfg.as_dict().get("rules", ""))):
        if all(key in cfg for key in REQUIRED_RULE_KEYS):
            cfg.remove("rules")
        else:   # as an override of `rules` does, this drops a partial set of rule keys (no Go is played)
            cfg.apply_overrides({"rules": "tromp-taylor"}, origin="nogo")
        return True
    return False


def _make_loader(model_path: str, settings, log, human: bool = False, profile_set: bool = False):
    """Loads the network in the background; ``human``: the -human-model net (KataGo's warnings)."""
    from katacli.gtp.engine import DEFAULT_BOARD_LEN, ModelLoader

    nn = settings.nn
    what = "human SL model" if human else "model"

    def load():
        from katacli.nn.evaluator import NNEvaluator
        from katacli.startup_objects import freeze_startup_objects

        options = nn.evaluator_options()  # device, precision, layout, orientation, cache (the config's)
        nn.apply_cpu_threads(options["device"])
        evaluator = NNEvaluator.from_file(
            model_path, max_batch_size=nn.max_batch_size or 8,
            seed=stable_seed(nn.rand_seed), **options)
        # GTP searches one position at a time: spread each batch of the search's leaves over the cores.
        evaluator.set_parallel_threads()
        # Build and optimise the traced network now, while the protocol is already answering, rather
        # than in the first genmove (seconds on a CPU).
        board_x, board_y = settings.default_board_size or (DEFAULT_BOARD_LEN, DEFAULT_BOARD_LEN)
        evaluator.warm_up(board_x, board_y, notify=log.info)
        freeze_startup_objects()   # torch's and the net's objects: no full collection walks them again
        log.write(f"Loaded {what} {model_path}")
        log.info(f"{'Human SL model' if human else 'Model'} runs on: {evaluator.describe_device()}")
        if settings.startup_print_message_to_stderr:
            log.info(f"{'Human SL model' if human else 'Model'} name: {evaluator.model_name}")
        warning = human_model_warning(evaluator, profile_set) if human else None
        if warning:
            log.info(warning)
        return evaluator

    def load_or_exit():
        try:
            return load()
        except Exception as exc:  # the file passed the start-up check but the network cannot be built
            # One write: print() would write the newline separately, and the protocol thread's lines could
            # land between the two.
            sys.stderr.write(model_failure_line(f"could not load the {what} {model_path}: {exc}") + "\n")
            sys.stderr.flush()
            os._exit(EXIT_MODEL_FAILURE)

    return ModelLoader(load_or_exit)


def prepare_config(config: Optional[List[str]], override_config: Optional[List[str]], has_model: bool,
                   has_human_model: bool = False):
    """(config, nogo?, GtpSettings, GtpPatternAvoidance): the part of startup before anything is answered on
    stdout, so that config mistakes and unusable pattern files are reported (one line, exit status 1) first."""
    from katacli.gtp.avoid_patterns import GtpPatternAvoidance
    from katacli.search.pattern_avoidance import PatternAvoidanceError

    from katacli.gtp.runtime_params import GtpRuntimeParams
    from katacli.setup.engine_settings import GtpSettings

    cfg = load_config(config, override_config, mode="gtp")
    nogo = extract_nogo(cfg)
    with exit_on_config_error():
        settings = GtpSettings.from_config(cfg)
        # The search keys too: checked before input can end the run.
        GtpRuntimeParams.from_config(cfg, has_human_model=has_human_model)
    if has_model:
        _check_rules_for_network(settings, cfg)
    try:
        avoid_patterns = GtpPatternAvoidance.load(settings, settings.for_deterministic_testing)
    except PatternAvoidanceError as exc:
        report_error_and_exit(str(exc))
    return cfg, nogo, settings, avoid_patterns


def _check_rules_for_network(settings, cfg) -> None:
    if network_supported_rules(settings.rules) != settings.rules:
        report_error_and_exit(f"Rules {settings.rules.to_json_string()} from config file {cfg.source} are NOT "
                              "supported by neural net")


def build_engine(model: Optional[str], config: Optional[List[str]], override_config: Optional[List[str]],
                 override_version: Optional[str] = None, *, stdout=None, stderr=None, loader=None, make_bot=None,
                 output=None, prepared=None, human_model: Optional[str] = None, human_loader=None,
                 model_note: Optional[str] = None, model_headers: Sequence = ()):
    """The configured engine (not yet running). Config mistakes exit with a one-line error.

    ``model``: the network file, None for the rollout engine (``kata gtp`` reads -model, the default
    network included, with :func:`katacli.nets.choose_model`, and passes its ``note`` as
    ``model_note``, shown on stderr at start-up). ``loader`` replaces the background model loader
    (tests pass one holding an already loaded network), ``human_loader`` the -human-model one;
    ``make_bot`` replaces the search adapter factory; ``prepared`` is what :func:`prepare_config`
    returned, when the caller has read the config already.
    """
    from katacli import KATAGO_COMPAT_VERSION, __version__

    if loader is None and prepared is None:  # run_gtp checked them before preparing the config
        check_model_or_exit(model, engine=True)
    if human_loader is None and prepared is None:
        check_model_or_exit(human_model, flag="-human-model", engine=True)
    has_human_model = human_model is not None or human_loader is not None
    cfg, nogo, settings, avoid_patterns = prepared or prepare_config(config, override_config, model is not None,
                                                                     has_human_model)
    # The search package (and torch with it) only now: a bad config file is reported at once.
    from katacli.gtp.engine import EngineOptions, GtpEngine, ModelLoader
    from katacli.engine_log import EngineLog
    from katacli.gtp.protocol import ResponseWriter
    from katacli.gtp.runtime_params import GtpRuntimeParams

    with exit_on_config_error():
        params = GtpRuntimeParams.from_config(cfg, has_human_model=has_human_model)
    log = EngineLog(settings.logging, stderr=stderr)
    for warning in cfg.unknown_key_warnings():  # shown on stderr while the config was read
        log.file_only(warning)
    for warning in cfg.unused_key_warnings("kata gtp"):   # every key gtp reads has been read by now (KataGo's check)
        log.info(warning)
    announce = log.info if settings.startup_print_message_to_stderr else log.write
    announce(f"katacli {__version__} GTP engine (KataGo {KATAGO_COMPAT_VERSION} compatible)")
    rules_name = "NoGo" if nogo else settings.rules.nice_name()
    announce(f"Using {rules_name} rules initially, unless GTP/GUI overrides this")
    if config:
        announce(f"Loaded config {', '.join(config)}")
    if model_note is not None:
        log.info(model_note)  # which engine plays is worth a line on stderr whatever the settings
    elif model is None and loader is None:
        announce("No model given: playing by Monte Carlo rollouts")
    for line in avoid_patterns.startup_log:
        log.write(line)
    unused = unused_profile_startup_warning(params.genmove.human_profile.is_set, model_headers)
    if unused:
        log.info(unused)
    seed = DETERMINISTIC_SEED if settings.for_deterministic_testing else settings.search_rand_seed
    options = EngineOptions(settings=settings, params=params, config=cfg, model_path=model,
                            human_model_path=human_model, override_version=override_version, nogo=nogo, seed=seed,
                            make_bot=make_bot, avoid_patterns=avoid_patterns)
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
