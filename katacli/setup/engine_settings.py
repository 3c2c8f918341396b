"""Engine settings that are not search parameters, read from a :class:`Config`.

* :class:`LoggingSettings` - where logs go (Logger in KataGo).
* :func:`load_rules` - the starting rules (Setup::loadSingleRules).
* :class:`NNSettings` - network evaluation and GPU choice.
* :class:`GtpSettings` - everything else the GTP engine reads at startup.
* :class:`AnalysisSettings` - the same for the JSON analysis engine.

Each field that is one config key is declared with ``config_field(key)`` and read by
:func:`katacli.config_keys.fields.build_settings`, so its type, range, default and error message
come from the registry. The fields read by hand are KataGo's rules about how keys combine
(exclusive keys, conditional requirements, fallbacks between spellings).
"""
from __future__ import annotations

from dataclasses import dataclass

from katacli import config_keys
from katacli.config import Config, ConfigError, Enabled
from katacli.config_keys.engine_keys import INDIVIDUAL_RULE_KEYS, LOG_DESTINATION_KEYS
from katacli.config_keys.fields import ANY_MODE, build_settings, config_field
from katacli.game.rules import KoRule, Rules, RulesError, ScoringRule, TaxRule, WhiteHandicapBonus
from katacli.search.auto_pattern_avoidance import AutoAvoidSettings
from katacli.search.pattern_avoidance import PatternAvoidanceError, SgfPatternSet, sgf_pattern_sets_from_config

# katacli evaluates networks with PyTorch on CUDA, so KataGo's "cuda" spellings apply.
BACKEND_PREFIX = "cuda"
OTHER_BACKEND_PREFIXES = ("trt", "metal", "opencl", "eigen", "dummybackend")
SEARCH_LIMIT_KEYS = ("maxVisits", "maxPlayouts", "maxTime")
# avoidRepeatedPatternUtility used in handicap games when the config does not set it.
HANDICAP_AVOID_REPEATED_PATTERN_UTILITY = 0.005
# whiteBonusPerHandicapStone (legacy) values and what they mean.
_LEGACY_HANDICAP_BONUS = {0: WhiteHandicapBonus.ZERO, 1: WhiteHandicapBonus.N}


def _winrate_perspective(cfg: Config, mode: str) -> str | None:
    """reportAnalysisWinratesAs as "B", "W", or None for side to move."""
    return {"BLACK": "B", "B": "B", "WHITE": "W", "W": "W"}.get(cfg.get("reportAnalysisWinratesAs", mode))


# --------------------------------------------------------------------------- logging


@dataclass(frozen=True)
class LoggingSettings:
    log_file: str | None = config_field("logFile")
    log_dir: str | None = config_field("logDir")
    log_dir_dated: str | None = config_field("logDirDated")
    log_to_stderr: bool = config_field("logToStderr")
    log_to_stdout: bool = config_field("logToStdout")
    log_time_stamp: bool = config_field("logTimeStamp")
    log_config_contents: bool = config_field("logConfigContents")

    @classmethod
    def from_config(cls, cfg: Config, mode: str) -> "LoggingSettings":
        given = [key for key in LOG_DESTINATION_KEYS if key in cfg]
        if len(given) > 1:
            raise ConfigError(f"{cfg.source}: set only one of {', '.join(LOG_DESTINATION_KEYS)} (found {', '.join(given)})")
        return build_settings(cls, cfg, mode)


# --------------------------------------------------------------------------- rules


def load_rules(cfg: Config, *, load_komi: bool = False) -> Rules:
    """Starting rules: either `rules` or the individual keys, never both.

    Without `rules`, koRule, scoringRule and multiStoneSuicideLegal must all be
    given (when the config requires keys). Komi is the ruleset's default unless
    ``load_komi``, in which case the `komi` key is required.
    """
    mode = cfg.mode
    if "rules" in cfg:
        clashing = [key for key in INDIVIDUAL_RULE_KEYS if key in cfg]
        if clashing:
            raise ConfigError(   # each from where it was set: a file, or -override-config
                f"cannot specify both 'rules' ({cfg.origin('rules')}) and individual rules like '{clashing[0]}' "
                f"({cfg.origin(clashing[0])})"
            )
        text = cfg.get("rules", mode)
        try:
            rules = Rules.parse(text)
        except RulesError as exc:
            raise ConfigError(f"Invalid value for 'rules' ({cfg.origin('rules')}): {exc}") from None
    else:
        rules = _rules_from_individual_keys(cfg, mode)

    if load_komi:
        if cfg.require_keys and "komi" not in cfg:
            raise ConfigError(f"Missing key 'komi' in {cfg.source}")
        komi = cfg.get("komi", mode)
        try:
            rules = rules.with_komi(komi)
        except RulesError as exc:
            raise ConfigError(f"Invalid value for 'komi' ({cfg.origin('komi')}): {exc}") from None
    return rules


# The rule keys a config must give all of without `rules` (the others have defaults).
REQUIRED_RULE_KEYS = ("koRule", "scoringRule", "multiStoneSuicideLegal")


def _rules_from_individual_keys(cfg: Config, mode: str | None) -> Rules:
    if cfg.require_keys:
        missing = [key for key in REQUIRED_RULE_KEYS if key not in cfg]
        if missing:
            raise ConfigError(
                f"Missing key '{missing[0]}' in {cfg.source}: set `rules`, or all of koRule, scoringRule "
                "and multiStoneSuicideLegal"
            )
    scoring = ScoringRule[cfg.get("scoringRule", mode)]
    has_button = cfg.get("hasButton", mode)
    if has_button and scoring != ScoringRule.AREA:
        raise ConfigError(f"{cfg.source}: hasButton = true needs area scoring (scoringRule = AREA)")
    if "whiteBonusPerHandicapStone" in cfg and "whiteHandicapBonus" in cfg:
        raise ConfigError(f"{cfg.source}: set only one of whiteBonusPerHandicapStone and whiteHandicapBonus")
    if "whiteBonusPerHandicapStone" in cfg:
        handicap_bonus = _LEGACY_HANDICAP_BONUS[cfg.get("whiteBonusPerHandicapStone", mode)]
    else:
        handicap_bonus = WhiteHandicapBonus.from_text(cfg.get("whiteHandicapBonus", mode))
    return Rules(
        ko=KoRule[cfg.get("koRule", mode)],
        scoring=scoring,
        tax=TaxRule[cfg.get("taxRule", mode)],
        multi_stone_suicide_legal=cfg.get("multiStoneSuicideLegal", mode),
        has_button=has_button,
        white_handicap_bonus=handicap_bonus,
        friendly_pass_ok=cfg.get("friendlyPassOk", mode),
        # The ruleset's own komi, whatever a `komi` key says (see load_komi).
        komi=cfg.default("komi", mode),
    )


def load_default_board_size(cfg: Config, mode: str | None = None) -> tuple[int, int] | None:
    """(width, height) to start with, or None for the engine's default."""
    mode = mode or cfg.mode
    size = cfg.get("defaultBoardSize", mode)
    width = cfg.get("defaultBoardXSize", mode) if "defaultBoardXSize" in cfg else size
    height = cfg.get("defaultBoardYSize", mode) if "defaultBoardYSize" in cfg else size
    if width is None or height is None:
        return None
    return width, height


# --------------------------------------------------------------------------- neural net


def _first_set(cfg: Config, mode: str | None, candidates: list[str], default_key: str | None = None):
    """Value of the first candidate key present in cfg, else the default of
    ``default_key`` (or None)."""
    for key in candidates:
        if key in cfg:
            return cfg.get(key, mode)
    return None if default_key is None else cfg.default(default_key, mode)


def _device_keys(model: int, thread: int) -> list[str]:
    """KataGo's lookup order for the GPU of one model's server thread."""
    stems = [f"{BACKEND_PREFIX}DeviceToUse", f"{BACKEND_PREFIX}GpuToUse", "deviceToUse", "gpuToUse"]
    suffixes = [f"Model{model}Thread{thread}", f"Model{model}", f"Thread{thread}", ""]
    return [stem + suffix for suffix in suffixes for stem in stems]


# KataGo's home data directory when homeDataDir is not set, and torch.compile's caches' folder in it.
DEFAULT_HOME_DATA_DIR = "~/.katago"
COMPILE_CACHE_SUBDIR = "torchcompile"


@dataclass(frozen=True)
class NNSettings:
    """How to evaluate one model (index ``model_index`` when several are loaded)."""

    # None: the caller decides (KataGo requires it where it has no default).
    max_batch_size: int | None = config_field("nnMaxBatchSize")
    cache_size_power_of_two: int = config_field("nnCacheSizePowerOfTwo")
    mutex_pool_size_power_of_two: int = config_field("nnMutexPoolSizePowerOfTwo")
    num_server_threads: int = config_field("numNNServerThreadsPerModel")
    randomize: bool = config_field("nnRandomize")
    rand_seed: str | None
    forced_symmetry: int | None = config_field("nnForcedSymmetry")
    max_board_x_size: int | None
    max_board_y_size: int | None
    require_max_board_size: bool | None
    use_fp16: Enabled
    use_nhwc: Enabled = config_field(f"{BACKEND_PREFIX}UseNHWC")
    use_tf32: bool = config_field(f"{BACKEND_PREFIX}UseTF32")
    cuda_graphs: bool = config_field(f"{BACKEND_PREFIX}UseGraphs")
    use_torch_compile: Enabled = config_field(f"{BACKEND_PREFIX}UseTorchCompile")
    # GPU index per server thread; None means "let the backend choose".
    device_per_server_thread: tuple[int | None, ...]
    home_data_dir: str | None = config_field("homeDataDir")
    debug_skip_neural_net: bool = config_field("debugSkipNeuralNet")
    # Torch intra-op threads on the CPU; None: torch's default.
    cpu_threads: int | None = config_field("numEigenThreadsPerModel", default_mode=ANY_MODE)
    # kata analysis: a small net runs in numpy (katacli.nn.numpy_evaluator) until torch is loaded.
    numpy_until_torch: bool = config_field("nnNumpyUntilTorch", default_mode=ANY_MODE)

    def device_for(self, server_thread: int = 0) -> str:
        """The device a server thread's evaluations run on: its configured GPU (else the first), or the CPU."""
        import torch

        if not torch.cuda.is_available():
            return "cpu"
        devices = self.device_per_server_thread
        index = devices[server_thread] if server_thread < len(devices) else None
        return f"cuda:{index if index is not None else 0}"

    def evaluator_options(self, device: str | None = None) -> dict:
        """NNEvaluator's device, precision, layout and orientation options, chosen as KataGo's CUDA backend
        chooses them: useFP16 = auto means FP16 on GPUs with tensor cores, float32 elsewhere (and always on the
        CPU); cudaUseNHWC = auto means channels-last; nnForcedSymmetry, else a random orientation per position
        with nnRandomize, else orientation 0; the NN cache's size (none for nnCacheSizePowerOfTwo = -1). ``device``: None for :meth:`device_for` (thread 0)."""
        import torch

        from katacli.nn.device_runner import has_tensor_cores

        device = device or self.device_for(0)
        on_gpu = torch.device(device).type == "cuda"
        half = on_gpu and (self.use_fp16 == Enabled.TRUE
                           or (self.use_fp16 == Enabled.AUTO and has_tensor_cores(torch.device(device))))
        return {"device": device, "precision": "float16" if half else "float32",
                "channels_last": self.use_nhwc != Enabled.FALSE, "allow_tf32": self.use_tf32,
                "cuda_graphs": self.cuda_graphs, "compile_net": self.compile_option,
                "compile_cache_dir": self.compile_cache_dir,
                "default_symmetry": self.default_symmetry,
                "cache_size_power_of_two": self.cache_size_option}

    @property
    def compile_cache_dir(self) -> str:
        """Where torch.compile keeps its caches: under homeDataDir (KataGo's default ~/.katago), beside
        where KataGo keeps its GPU tuning."""
        import os

        return os.path.join(os.path.expanduser(self.home_data_dir or DEFAULT_HOME_DATA_DIR), COMPILE_CACHE_SUBDIR)

    @property
    def compile_option(self) -> bool | None:
        """The evaluators' compile_net: cudaUseTorchCompile as a bool, None for auto (the evaluator decides)."""
        return None if self.use_torch_compile == Enabled.AUTO else self.use_torch_compile == Enabled.TRUE

    @property
    def cache_size_option(self) -> int | None:
        """The evaluators' cache_size_power_of_two: None (no cache) for nnCacheSizePowerOfTwo = -1."""
        return self.cache_size_power_of_two if self.cache_size_power_of_two >= 0 else None

    @property
    def default_symmetry(self) -> int | None:
        """The orientation of positions asked without one (None: a random one each)."""
        if self.forced_symmetry is not None:
            return self.forced_symmetry
        return None if self.randomize else 0

    def apply_cpu_threads(self, device) -> None:
        """Give PyTorch the configured CPU thread count when the network runs on the CPU."""
        if self.cpu_threads is not None and str(device or "cpu").startswith("cpu"):
            from katacli.nn.evaluator import set_cpu_threads

            set_cpu_threads(self.cpu_threads)

    @classmethod
    def from_config(cls, cfg: Config, mode: str | None = None, *, model_index: int = 0) -> "NNSettings":
        mode = mode or cfg.mode
        idx = str(model_index)
        # Keys for backends we do not have are fine and need no warning.
        for prefix in OTHER_BACKEND_PREFIXES:
            cfg.mark_used_with_prefix(prefix)
        num_server_threads = cfg.get("numNNServerThreadsPerModel", mode)  # one device per server thread
        size_keys = ["maxBoardSizeForNNBuffer" + idx, "maxBoardSizeForNNBuffer"]
        use_fp16 = _first_set(cfg, mode, [f"{BACKEND_PREFIX}UseFP16-{idx}", f"useFP16-{idx}",
                                          f"{BACKEND_PREFIX}UseFP16", "useFP16"])
        return build_settings(
            cls, cfg, mode,
            rand_seed=_first_set(cfg, mode, ["nnRandSeed" + idx, "nnRandSeed"]),
            max_board_x_size=_first_set(cfg, mode, ["maxBoardXSizeForNNBuffer" + idx, "maxBoardXSizeForNNBuffer",
                                                    *size_keys], "maxBoardXSizeForNNBuffer"),
            max_board_y_size=_first_set(cfg, mode, ["maxBoardYSizeForNNBuffer" + idx, "maxBoardYSizeForNNBuffer",
                                                    *size_keys], "maxBoardYSizeForNNBuffer"),
            require_max_board_size=_first_set(cfg, mode, ["requireMaxBoardSize" + idx, "requireMaxBoardSize"],
                                              "requireMaxBoardSize"),
            use_fp16=Enabled.AUTO if use_fp16 is None else use_fp16,
            device_per_server_thread=tuple(
                _first_set(cfg, mode, _device_keys(model_index, thread)) for thread in range(num_server_threads)
            ),
        )


# --------------------------------------------------------------------------- engines


def _sgf_patterns(cfg: Config, bot_index: int = 0) -> tuple[SgfPatternSet, ...]:
    try:
        return tuple(sgf_pattern_sets_from_config(cfg, bot_index))
    except PatternAvoidanceError as exc:
        raise ConfigError(f"{exc} in {cfg.source}") from None


@dataclass(frozen=True)
class GtpSettings:
    """What `kata gtp` reads at startup besides search parameters."""

    rules: Rules
    forced_komi: float | None = config_field("ignoreGTPAndForceKomi")
    default_board_size: tuple[int, int] | None
    logging: LoggingSettings
    nn: NNSettings
    log_all_gtp_communication: bool = config_field("logAllGTPCommunication")
    log_search_info: bool = config_field("logSearchInfo")
    log_search_info_for_chosen_move: bool = config_field("logSearchInfoForChosenMove")
    startup_print_message_to_stderr: bool = config_field("startupPrintMessageToStderr")
    ogs_chat_to_stderr: bool = config_field("ogsChatToStderr")
    report_winrates_as: str | None  # "B", "W", or None for side to move
    analysis_pv_len: int = config_field("analysisPVLen")
    pondering_enabled: bool = config_field("ponderingEnabled")
    allow_resignation: bool = config_field("allowResignation")
    resign_threshold: float = config_field("resignThreshold")
    resign_consec_turns: int = config_field("resignConsecTurns")
    resign_min_score_difference: float = config_field("resignMinScoreDifference")
    resign_min_moves_per_board_area: float = config_field("resignMinMovesPerBoardArea")
    cleanup_before_pass: Enabled = config_field("cleanupBeforePass")
    friendly_pass: Enabled = config_field("friendlyPass")
    search_factor_when_winning: float = config_field("searchFactorWhenWinning")
    search_factor_when_winning_threshold: float = config_field("searchFactorWhenWinningThreshold")
    assume_multiple_starting_black_moves_are_handicap: bool = config_field("assumeMultipleStartingBlackMovesAreHandicap")
    prevent_cleanup_phase: bool = config_field("preventCleanupPhase")
    dynamic_pda_cap_per_opp_lead: float = config_field("dynamicPlayoutDoublingAdvantageCapPerOppLead")
    # A fixed playoutDoublingAdvantage wins only if the dynamic cap is not configured.
    static_pda_takes_precedence: bool
    handicap_avoid_repeated_pattern_utility: float
    delay_move_scale: float = config_field("delayMoveScale")
    delay_move_max: float = config_field("delayMoveMax")
    gtp_force_max_nn_size: bool = config_field("gtpForceMaxNNSize")
    search_rand_seed: str | None = config_field("searchRandSeed")
    for_deterministic_testing: bool = config_field("forDeterministicTesting")
    # No search limit configured: KataGo then assumes a quick time control.
    has_search_limit: bool
    # Pattern avoidance: the avoidSgf<N>Pattern* groups, and autoAvoidRepeat* (None without its directory).
    sgf_patterns: tuple[SgfPatternSet, ...] = ()
    auto_avoid: AutoAvoidSettings | None = None

    @classmethod
    def from_config(cls, cfg: Config) -> "GtpSettings":
        mode = "gtp"
        rules = load_rules(cfg)
        forced_komi = cfg.get("ignoreGTPAndForceKomi", mode)
        if forced_komi is not None:
            try:
                rules = rules.with_komi(forced_komi)
            except RulesError as exc:
                raise ConfigError(f"Invalid value for 'ignoreGTPAndForceKomi' ({cfg.origin('ignoreGTPAndForceKomi')}): "
                                  f"{exc}") from None
        if "allowResignation" in cfg and cfg.require_keys and "resignThreshold" not in cfg:
            raise ConfigError(f"Missing key 'resignThreshold' in {cfg.source}; it must accompany allowResignation")
        if cfg.get("cleanupBeforePass", mode) == Enabled.TRUE and cfg.get("friendlyPass", mode) == Enabled.TRUE:
            raise ConfigError("Cannot specify both cleanupBeforePass = true and friendlyPass = true at the same time")
        pattern_utility = cfg.get("avoidRepeatedPatternUtility", mode)
        return build_settings(
            cls, cfg, mode,
            rules=rules,
            default_board_size=load_default_board_size(cfg, mode),
            logging=LoggingSettings.from_config(cfg, mode),
            nn=NNSettings.from_config(cfg, mode),
            report_winrates_as=_winrate_perspective(cfg, mode),
            static_pda_takes_precedence=(
                "playoutDoublingAdvantage" in cfg and "dynamicPlayoutDoublingAdvantageCapPerOppLead" not in cfg),
            handicap_avoid_repeated_pattern_utility=(
                pattern_utility if "avoidRepeatedPatternUtility" in cfg else HANDICAP_AVOID_REPEATED_PATTERN_UTILITY),
            has_search_limit=any(key in cfg for key in SEARCH_LIMIT_KEYS),
            sgf_patterns=_sgf_patterns(cfg),
            auto_avoid=AutoAvoidSettings.from_config(cfg),
        )


@dataclass(frozen=True)
class AnalysisSettings:
    """What `kata analysis` reads at startup besides search parameters."""

    num_analysis_threads: int
    logging: LoggingSettings
    nn: NNSettings
    report_winrates_as: str | None
    analysis_pv_len: int = config_field("analysisPVLen")
    log_all_requests: bool = config_field("logAllRequests")
    log_all_responses: bool = config_field("logAllResponses")
    log_errors_and_warnings: bool = config_field("logErrorsAndWarnings")
    log_search_info: bool = config_field("logSearchInfo")
    warn_unused_fields: bool = config_field("warnUnusedFields")
    assume_multiple_starting_black_moves_are_handicap: bool = config_field("assumeMultipleStartingBlackMovesAreHandicap")
    prevent_cleanup_phase: bool = config_field("preventCleanupPhase")
    for_deterministic_testing: bool = config_field("forDeterministicTesting")
    sgf_patterns: tuple[SgfPatternSet, ...] = ()   # the avoidSgf<N>Pattern* groups

    @classmethod
    def from_config(cls, cfg: Config, *, analysis_threads_from_command_line: int | None = None) -> "AnalysisSettings":
        """``analysis_threads_from_command_line`` is -analysis-threads; it may not
        be combined with numAnalysisThreads in the config."""
        mode = "analysis"
        cfg.apply_mode_aliases(mode)
        if analysis_threads_from_command_line is not None:
            if "numAnalysisThreads" in cfg:
                raise ConfigError(
                    f"numAnalysisThreads is set in {cfg.source}; do not also give -analysis-threads")
            spec = config_keys.get_spec("numAnalysisThreads")
            if not spec.minimum <= analysis_threads_from_command_line <= spec.maximum:
                raise ConfigError(f"Invalid value for numAnalysisThreads: {analysis_threads_from_command_line}")
            num_threads = analysis_threads_from_command_line
        else:
            num_threads = cfg.get("numAnalysisThreads", mode)
        return build_settings(
            cls, cfg, mode,
            num_analysis_threads=num_threads,
            logging=LoggingSettings.from_config(cfg, mode),
            nn=NNSettings.from_config(cfg, mode),
            report_winrates_as=_winrate_perspective(cfg, mode),
            sgf_patterns=_sgf_patterns(cfg),
        )
