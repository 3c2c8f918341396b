"""Self-play settings read from a KataGo self-play config, with KataGo's checks.

Three groups, as in KataGo: the runner (threads, output files), game setup
(GameInitializer: rules, board sizes, komi, handicap) and play settings
(PlaySettings::loadForSelfplay: which positions become training rows and how they
are weighted). Search parameters come from :class:`katacli.search.params.SearchParams`.

Every problem raises :class:`katacli.config.ConfigError` with a message naming the
key(s), so the command can print it without a traceback.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from katacli.config import Config, ConfigError
from katacli.config_keys.fields import build_settings, config_field
from katacli.game.rules import KoRule, ScoringRule, TaxRule
from katacli.search.params import SearchParams
from katacli.selfplay.position_pools import PositionPools, StartPositionSettings, load_position_pools

MODE = "selfplay"
# KataGo refuses relative board-size weights that sum to (almost) nothing.
MIN_REL_PROB_SUM = 1e-100
# Fewest visits KataGo lets the weaker side of an asymmetric-playout game have.
MIN_ASYMMETRIC_VISITS = 5


@dataclass(frozen=True)
class RunnerSettings:
    num_game_threads: int = config_field("numGameThreads")
    data_board_len: int = config_field("dataBoardLen")
    max_data_queue_size: int = config_field("maxDataQueueSize")
    max_rows_per_train_file: int = config_field("maxRowsPerTrainFile")
    first_file_rand_min_prop: float = config_field("firstFileRandMinProp")
    log_games_every: int = config_field("logGamesEvery")
    switch_nets_mid_game: bool = config_field("switchNetsMidGame")
    log_moves: bool = config_field("logMoves")
    log_search_info: bool = config_field("logSearchInfo")
    max_moves_per_game: int = config_field("maxMovesPerGame")
    clear_bot_before_search: bool = config_field("clearBotBeforeSearch")


@dataclass(frozen=True)
class GameSetupSettings:
    ko_rules: tuple[KoRule, ...]
    scoring_rules: tuple[ScoringRule, ...]
    tax_rules: tuple[TaxRule, ...]
    multi_stone_suicide_legals: tuple[bool, ...]
    has_buttons: tuple[bool, ...]
    board_sizes: tuple[tuple[int, int], ...]       # (x_size, y_size)
    board_size_weights: tuple[float, ...]           # same length, normalised to sum 1
    komi_mean: float = config_field("komiMean")
    komi_auto: bool = config_field("komiAuto")
    komi_stdev: float = config_field("komiStdev")
    komi_big_stdev_prob: float = config_field("komiBigStdevProb")
    komi_big_stdev: float = config_field("komiBigStdev")
    komi_bigger_stdev_prob: float = config_field("komiBiggerStdevProb")
    komi_bigger_stdev: float = config_field("komiBiggerStdev")
    komi_allow_integer_prob: float = config_field("komiAllowIntegerProb")
    handicap_prob: float = config_field("handicapProb")
    handicap_compensate_komi_prob: float = config_field("handicapCompensateKomiProb")
    fork_compensate_komi_prob: float = config_field("forkCompensateKomiProb")
    handicap_komi_interp_zero_prob: float = config_field("handicapKomiInterpZeroProb")
    no_result_stdev: float = config_field("noResultStdev")
    draw_rand_radius: float = config_field("drawRandRadius")
    num_extra_black_fixed: int
    # Games from start or hint positions.
    sgf_compensate_komi_prob: float = config_field("sgfCompensateKomiProb", default_mode=MODE)
    sgf_komi_interp_zero_prob: float = config_field("sgfKomiInterpZeroProb", default_mode=MODE)

    @property
    def max_board_x(self) -> int:
        return max(x for x, _ in self.board_sizes)

    @property
    def max_board_y(self) -> int:
        return max(y for _, y in self.board_sizes)


@dataclass(frozen=True)
class PlaySettings:
    init_games_with_policy: bool = config_field("initGamesWithPolicy")
    policy_init_area_prop: float = config_field("policyInitAreaProp")
    compensate_after_policy_init_prob: float = config_field("compensateAfterPolicyInitProb")
    policy_init_gamma_shape: float = config_field("policyInitGammaShape")
    policy_init_area_temperature: float = config_field("policyInitAreaTemperature")
    handicap_temperature: float = config_field("handicapTemperature")
    side_position_prob: float
    compensate_komi_visits: int = config_field("compensateKomiVisits")
    flip_komi_prob_when_no_compensate: float = config_field("flipKomiProbWhenNoCompensate")
    estimate_lead_visits: int = config_field("estimateLeadVisits")
    estimate_lead_prob: float = config_field("estimateLeadProb")
    fancy_komi_varying: bool = config_field("fancyKomiVarying")
    early_fork_game_prob: float = config_field("earlyForkGameProb")
    early_fork_game_expected_move_prop: float = config_field("earlyForkGameExpectedMoveProp")
    fork_game_prob: float = config_field("forkGameProb")
    fork_game_min_choices: int = config_field("forkGameMinChoices")
    early_fork_game_max_choices: int = config_field("earlyForkGameMaxChoices")
    fork_game_max_choices: int = config_field("forkGameMaxChoices")
    seki_fork_hack_prob: float = config_field("sekiForkHackProb")
    cheap_search_prob: float = config_field("cheapSearchProb")
    cheap_search_visits: int = config_field("cheapSearchVisits")
    cheap_search_target_weight: float = config_field("cheapSearchTargetWeight")
    reduce_visits: bool = config_field("reduceVisits")
    reduce_visits_threshold: float = config_field("reduceVisitsThreshold")
    reduce_visits_threshold_lookback: int = config_field("reduceVisitsThresholdLookback")
    reduced_visits_min: int = config_field("reducedVisitsMin")
    reduced_visits_weight: float = config_field("reducedVisitsWeight")
    policy_surprise_data_weight: float = config_field("policySurpriseDataWeight")
    value_surprise_data_weight: float = config_field("valueSurpriseDataWeight")
    use_search_value_surprise: bool = config_field("useSearchValueSurprise")
    scale_data_weight: float = config_field("scaleDataWeight")
    handicap_asymmetric_playout_prob: float = config_field("handicapAsymmetricPlayoutProb")
    normal_asymmetric_playout_prob: float = config_field("normalAsymmetricPlayoutProb")
    max_asymmetric_ratio: float = config_field("maxAsymmetricRatio")
    min_asymmetric_compensate_komi_prob: float = config_field("minAsymmetricCompensateKomiProb")
    start_poses_policy_init_area_prop: float = config_field("startPosesPolicyInitAreaProp", default_mode=MODE)


@dataclass(frozen=True)
class SelfplaySettings:
    runner: RunnerSettings
    game: GameSetupSettings
    play: PlaySettings
    search: SearchParams
    start_positions: StartPositionSettings = StartPositionSettings()
    # Loaded from the directories start_positions names (KataGo reads them when the run starts).
    positions: PositionPools = field(default_factory=PositionPools)

    @classmethod
    def from_config(cls, cfg: Config) -> "SelfplaySettings":
        """Read and cross-check everything, and load the start and hint positions the config names;
        raises ConfigError (PositionLoadError naming a directory or file that cannot be read)."""
        search = SearchParams.from_config(cfg, MODE)
        runner = _runner_settings(cfg)
        game = _game_setup_settings(cfg)
        play = _play_settings(cfg)
        start_positions = _start_position_settings(cfg)
        _check_unsupported(cfg)
        _check_search(game, search)
        _check_combinations(runner, game, play, search)
        positions = load_position_pools(start_positions, runner.data_board_len)
        return cls(runner, game, play, search, start_positions, positions)


def _get(cfg: Config, key: str):
    return cfg.get(key, MODE)


def _runner_settings(cfg: Config) -> RunnerSettings:
    return build_settings(RunnerSettings, cfg, MODE)


def _nonempty(values, key: str) -> tuple:
    if not values:
        raise ConfigError(f"{key} must have at least one value")
    return tuple(values)


def _board_sizes(cfg: Config) -> tuple[tuple[tuple[int, int], ...], tuple[float, ...]]:
    """KataGo's board-size table: bSizes (squares, optionally paired into rectangles) or bSizesXY."""
    has_edges, has_xy = cfg.is_set("bSizes"), cfg.is_set("bSizesXY")
    if has_edges == has_xy:
        raise ConfigError("give exactly one of bSizes (square sizes, e.g. 9,13,19) or bSizesXY "
                          "(e.g. 9-9,9-13), each with bSizeRelProbs")
    if not cfg.is_set("bSizeRelProbs"):
        raise ConfigError("bSizeRelProbs is required with bSizes/bSizesXY: one relative weight per size")
    weights = list(_get(cfg, "bSizeRelProbs"))
    total = sum(weights)
    if has_edges:
        edges = _nonempty(_get(cfg, "bSizes"), "bSizes")
        if len(edges) != len(weights):
            raise ConfigError(f"bSizes has {len(edges)} values but bSizeRelProbs has {len(weights)}; "
                              "give one weight per size")
        if total <= MIN_REL_PROB_SUM:
            raise ConfigError("bSizeRelProbs must sum to a positive value")
        rect = _get(cfg, "allowRectangleProb")
        sizes, probs = [], []
        # Square sizes keep their weight; with allowRectangleProb some mass goes to every
        # pairing of two sizes (the square pairs included), weighted by the product.
        for i, x in enumerate(edges):
            for j, y in enumerate(edges):
                pair = rect * weights[i] * weights[j] / total / total
                if x == y:
                    sizes.append((x, y))
                    probs.append((1.0 - rect) * weights[i] / total + pair)
                elif rect > 0.0:
                    sizes.append((x, y))
                    probs.append(pair)
    else:
        if cfg.is_set("allowRectangleProb"):
            raise ConfigError("allowRectangleProb cannot be combined with bSizesXY; "
                              "list the rectangles you want in bSizesXY instead")
        sizes = list(_nonempty(_get(cfg, "bSizesXY"), "bSizesXY"))
        if len(sizes) != len(weights):
            raise ConfigError(f"bSizesXY has {len(sizes)} values but bSizeRelProbs has {len(weights)}; "
                              "give one weight per size")
        if total <= MIN_REL_PROB_SUM:
            raise ConfigError("bSizeRelProbs must sum to a positive value")
        probs = weights
    prob_total = sum(probs)
    merged: dict[tuple[int, int], float] = {}
    for size, p in zip(sizes, probs):
        merged[tuple(size)] = merged.get(tuple(size), 0.0) + p / prob_total
    return tuple(merged), tuple(merged.values())


def _game_setup_settings(cfg: Config) -> GameSetupSettings:
    ko = tuple(KoRule[s.upper()] for s in _nonempty(_get(cfg, "koRules"), "koRules"))
    scoring = tuple(ScoringRule[s.upper()] for s in _nonempty(_get(cfg, "scoringRules"), "scoringRules"))
    tax = tuple(TaxRule[s.upper()] for s in _nonempty(_get(cfg, "taxRules"), "taxRules"))
    suicide = _nonempty(_get(cfg, "multiStoneSuicideLegals"), "multiStoneSuicideLegals")
    buttons = _nonempty(_get(cfg, "hasButtons"), "hasButtons")
    if ScoringRule.AREA not in scoring and any(buttons):
        raise ConfigError("hasButtons can only include true when scoringRules includes AREA "
                          "(the button exists only under area scoring)")
    komi_auto = _get(cfg, "komiAuto")
    if cfg.is_set("komiMean") == komi_auto:
        raise ConfigError("give exactly one of komiMean=<komi> or komiAuto=true "
                          "(komiAuto picks a fair komi per board size and rules)")
    sizes, weights = _board_sizes(cfg)
    return build_settings(
        GameSetupSettings, cfg, MODE,
        ko_rules=ko, scoring_rules=scoring, tax_rules=tax,
        multi_stone_suicide_legals=suicide, has_buttons=buttons,
        board_sizes=sizes, board_size_weights=weights,
        num_extra_black_fixed=_get(cfg, "numExtraBlackFixed") if cfg.is_set("numExtraBlackFixed") else 0,
    )


def _start_position_settings(cfg: Config) -> StartPositionSettings:
    """As KataGo: the directory keys switch the loading on; their probabilities are read with them."""
    sgf_dirs = tuple(_get(cfg, "startPosesFromSgfDir")) if cfg.is_set("startPosesFromSgfDir") else None
    hint_dirs = tuple(_get(cfg, "hintPosesDir")) if cfg.is_set("hintPosesDir") else None
    start_prob, hint_prob = _get(cfg, "startPosesProb"), _get(cfg, "hintPosesProb")
    if start_prob > 0 and sgf_dirs is None:
        raise ConfigError(f"startPosesProb = {start_prob:g} needs startPosesFromSgfDir (directories of SGFs "
                          "whose positions games start from)")
    if hint_prob > 0 and hint_dirs is None:
        raise ConfigError(f"hintPosesProb = {hint_prob:g} needs hintPosesDir (directories of *.hintposes.txt, "
                          "*.startposes.txt or *.bookposes.txt files)")
    return build_settings(
        StartPositionSettings, cfg, MODE,
        sgf_dirs=sgf_dirs, sgf_excludes=tuple(_get(cfg, "startPosesSgfExcludes") or ()), hint_dirs=hint_dirs,
    )


def _play_settings(cfg: Config) -> PlaySettings:
    # forkSidePositionProb is KataGo's older name, used only when the new one is absent.
    if cfg.is_set("forkSidePositionProb") and not cfg.is_set("sidePositionProb"):
        side_prob = _get(cfg, "forkSidePositionProb")
    else:
        side_prob = _get(cfg, "sidePositionProb")
    return build_settings(PlaySettings, cfg, MODE, side_position_prob=side_prob)


# Keys KataGo's self-play knows that katacli does not act on yet, with the value that
# means "off"; any other value is refused rather than silently ignored.
_UNSUPPORTED_UNLESS_OFF = {
    "useReanalyze": False,
}


def _check_unsupported(cfg: Config) -> None:
    for key, off in _UNSUPPORTED_UNLESS_OFF.items():
        if cfg.is_set(key) and _get(cfg, key) != off:
            raise ConfigError(f"{key} = {cfg.as_dict()[key]} is not supported by kata selfplay yet; "
                              f"remove it or set it to {str(off).lower()}")
    inputs_version = cfg.get("inputsVersion", MODE) if cfg.is_set("inputsVersion") else None
    if inputs_version not in (None, 7):
        raise ConfigError(f"inputsVersion = {inputs_version}: kata selfplay writes V7 inputs only")


def _check_combinations(runner: RunnerSettings, game: GameSetupSettings, play: PlaySettings,
                        search: SearchParams) -> None:
    """Every violated constraint at once, so that lowering maxVisits does not take one attempt per
    dependent key; where visit counts conflict, the message ends with an override line that fixes
    them all together."""
    problems: list[str] = []
    largest = max(game.max_board_x, game.max_board_y)
    if largest > runner.data_board_len:
        problems.append(f"dataBoardLen = {runner.data_board_len} is smaller than the largest board "
                        f"played ({largest}); raise dataBoardLen or drop the larger sizes")
    if play.policy_surprise_data_weight + play.value_surprise_data_weight > 1.0:
        problems.append("policySurpriseDataWeight + valueSurpriseDataWeight must not exceed 1.0")
    if play.early_fork_game_max_choices < play.fork_game_min_choices or \
            play.fork_game_max_choices < play.fork_game_min_choices:
        problems.append("earlyForkGameMaxChoices and forkGameMaxChoices must be at least forkGameMinChoices")
    fixes = _visit_count_problems(play, search, problems)
    if problems:
        message = "; ".join(problems)
        if len(problems) > 1:
            message = f"{len(problems)} problems: {message}"
        if fixes:
            line = ",".join(f"{key}={value}" for key, value in fixes.items())
            message += f'. A consistent setting: -override-config "{line}"'
        raise ConfigError(message)


def _visit_count_problems(play: PlaySettings, search: SearchParams, problems: list[str]) -> dict[str, str]:
    """Append the visit-count conflicts KataGo would stop on; returns key -> value that resolve them."""
    fixes: dict[str, str] = {}
    limit = min(search.max_visits, search.max_playouts)
    limit_name = "maxVisits" if search.max_visits <= search.max_playouts else "maxPlayouts"
    cheap, reduced = play.cheap_search_visits, play.reduced_visits_min
    if play.cheap_search_prob > 0.0 and cheap > limit:
        problems.append(f"cheapSearchVisits ({cheap}) must not exceed {limit_name} ({limit})")
        cheap = limit
        fixes["cheapSearchVisits"] = str(cheap)
    if play.reduce_visits and reduced > limit:
        problems.append(f"reducedVisitsMin ({reduced}) must not exceed {limit_name} ({limit})")
        reduced = limit
        fixes["reducedVisitsMin"] = str(reduced)
    asymmetric = play.max_asymmetric_ratio > 1.0 and (play.handicap_asymmetric_playout_prob > 0 or
                                                      play.normal_asymmetric_playout_prob > 0)
    if not asymmetric:
        return fixes
    # The weaker side of an asymmetric game gets a share of each search's visits; below
    # MIN_ASYMMETRIC_VISITS KataGo stops. A ratio that only rarely gets there is accepted, as KataGo
    # does (the searches raise the weaker side to the minimum instead); a visit count that is already
    # below the minimum would fail in nearly every asymmetric game.
    levels = {limit_name: limit}
    if play.cheap_search_prob > 0.0:
        levels["cheapSearchVisits"] = cheap
    if play.reduce_visits:
        levels["reducedVisitsMin"] = reduced
    too_few = {key: visits for key, visits in levels.items() if visits < MIN_ASYMMETRIC_VISITS}
    if too_few:
        listed = ", ".join(f"{key} ({visits})" for key, visits in too_few.items())
        problems.append(f"{listed} would leave the weaker side of asymmetric-playout games (maxAsymmetricRatio "
                        f"{play.max_asymmetric_ratio:g}) fewer than "
                        f"{MIN_ASYMMETRIC_VISITS} visits; raise to at least {MIN_ASYMMETRIC_VISITS} or turn "
                        "asymmetric games off (handicapAsymmetricPlayoutProb=0, normalAsymmetricPlayoutProb=0)")
        if limit >= MIN_ASYMMETRIC_VISITS:
            fixes.update((key, str(MIN_ASYMMETRIC_VISITS)) for key in too_few)
        else:
            fixes.update(handicapAsymmetricPlayoutProb="0", normalAsymmetricPlayoutProb="0")
    if fixes:  # a whole line to use instead of the one given: the visit limit it was made for first
        fixes = {limit_name: str(limit), **fixes}
    return fixes


def _check_search(game: GameSetupSettings, search: SearchParams) -> None:
    if search.max_visits >= 1 << 40:
        raise ConfigError("maxVisits must be set for self-play (e.g. maxVisits = 600)")
    if any(not math.isfinite(w) for w in game.board_size_weights):
        raise ConfigError("bSizeRelProbs must be finite")
