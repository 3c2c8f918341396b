"""A match config read as KataGo's match command reads it: bots, pairings, game setup.

Bots are numbered 0 .. numBots-1. A bot's key may carry its index (``maxVisits1``,
``nnModelFile0``); the indexed value wins over the plain one. Each bot gets its own
:class:`SearchParams` from such a per-bot view of the config (gtp defaults, as KataGo's
match uses). Pairings follow KataGo: every two included bots play both colours each
round unless both are secondary, plus ``extraPairs``. Board sizes, rules and komi are
the self-play game-setup keys (required, as KataGo's GameInitializer requires them);
numGameThreads, maxMovesPerGame, logGamesEvery and clearBotBeforeSearch are read as in self-play. Games may start from
SGF or hint positions (startPosesFromSgfDir / startPosesProb, hintPosesDir / hintPosesProb and their
companions), read at start-up by self-play's loader, as KataGo's GameInitializer reads them for match
and gatekeeper too.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from katacli.config import Config, ConfigError
from katacli.config_keys import default_value, is_known
from katacli.config_keys.fields import build_settings, config_field
from katacli.game.sgf import MAX_BOARD_LEN
from katacli.gtp.resign import ResignSettings
from katacli.nets import ROLLOUTS_MODEL, is_rollouts_model
from katacli.nn.model_file_reader import ModelFileError, check_model_file
from katacli.search.pattern_avoidance import (PatternAvoidanceError, sgf_pattern_key_bot,
                                               sgf_pattern_sets_from_config)
from katacli.search.params import SearchParams
from katacli.selfplay.position_pools import PositionPools, load_position_pools
from katacli.selfplay.settings import GameSetupSettings, _game_setup_settings, _start_position_settings

# Search parameters of a match bot take the GTP engine's defaults.
BOT_MODE = "gtp"
# Runner keys (numGameThreads, maxMovesPerGame, ...) are optional here, with their self-play defaults.
RUNNER_MODE = "selfplay"
# nnModelFile value (any case) that means "no network: the random-playout engine", as -model reads it.
ROLLOUTS = ROLLOUTS_MODEL
_INDEXED_KEY = re.compile(r"^([A-Za-z][A-Za-z_]*?[A-Za-z_])(\d+)$")
# Visits of the searches that make komi fair (komiAuto, handicap): KataGo's loadForMatch default.
MATCH_COMPENSATE_KOMI_VISITS = 100
# KataGo's match reads policyInitGammaShape from 0.5 to 100 (self-play: to 10).
MIN_POLICY_INIT_GAMMA_SHAPE = 0.5
MAX_MATCH_POLICY_INIT_GAMMA_SHAPE = 100.0
# Keys of policy openings, which KataGo's match reads only with initGamesWithPolicy = true.
POLICY_INIT_KEYS = ("policyInitAreaProp", "startPosesPolicyInitAreaProp", "compensateAfterPolicyInitProb",
                    "policyInitGammaShape", "policyInitAreaTemperature")
# KataGo's loadForMatch default for compensateAfterPolicyInitProb (self-play's is 0): komi is made fair
# after every policy opening unless the config says otherwise.
MATCH_COMPENSATE_AFTER_POLICY_INIT_PROB = 1.0
# Bot-level keys that are never search parameters.
_BOT_IDENTITY_KEYS = ("botName", "nnModelFile")


@dataclass(frozen=True)
class BotSpec:
    index: int
    name: str
    model: str                 # a model file path, or ROLLOUTS
    params: SearchParams
    # avoidSgf<N>Pattern* groups for this bot (its index may end the key, as in KataGo's match).
    sgf_patterns: tuple = ()

    @property
    def uses_rollouts(self) -> bool:
        return self.model == ROLLOUTS


@dataclass(frozen=True)
class PolicyOpenings:
    """initGamesWithPolicy: games open with a random number of raw-policy moves (mean: area_prop of
    the board), each chosen by the network of the side to move, then komi is made fair with
    probability compensate_prob (always for handicap games and start positions)."""
    area_prop: float
    start_poses_area_prop: float     # instead of area_prop for games from SGF start positions
    compensate_prob: float
    gamma_shape: float
    temperature: float


@dataclass(frozen=True)
class MatchSettings:
    bots: tuple[BotSpec, ...]
    pairings: tuple[tuple[int, int], ...]   # (black bot, white bot) per game of one round
    num_games_total: int
    num_game_threads: int = config_field("numGameThreads")
    max_moves_per_game: int = config_field("maxMovesPerGame")
    log_games_every: int = config_field("logGamesEvery")
    log_search_info: bool = config_field("logSearchInfo")
    log_moves: bool = config_field("logMoves")
    resign: ResignSettings
    game: GameSetupSettings
    # Drop each bot's tree before every move (KataGo's GameRunner).
    clear_bot_before_search: bool = config_field("clearBotBeforeSearch", default_mode=RUNNER_MODE)
    compensate_komi_visits: int = MATCH_COMPENSATE_KOMI_VISITS
    ignored_keys: tuple[str, ...] = ()        # set, but without effect here (as in KataGo's match): warn
    positions: PositionPools = field(default_factory=PositionPools)   # start and hint positions, loaded
    policy_openings: Optional[PolicyOpenings] = None   # initGamesWithPolicy = true

    def bot_names(self) -> list[str]:
        return [b.name for b in self.bots]

    @classmethod
    def from_config(cls, cfg: Config, *, num_games_key: str = "numGamesTotal",
                    default_num_games: Optional[int] = None,
                    positions: Optional[PositionPools] = None, gatekeeper: bool = False) -> "MatchSettings":
        """Raises ConfigError with the key named (or the unreadable file) for every problem.
        ``gatekeeper``: read as KataGo's gatekeeper reads it (no policy openings).
        ``positions``: start positions already loaded (the gatekeeper loads them once); else loaded here."""
        num_bots = cfg.get("numBots", BOT_MODE)
        _mark_sgf_pattern_keys_used(cfg, num_bots)
        bots = tuple(_bot_spec(cfg, i, num_bots) for i in range(num_bots))
        names = [b.name for b in bots]
        if len(set(names)) != len(names):
            raise ConfigError(f"bot names must differ: {', '.join(names)}")
        pairings = _pairings(cfg, num_bots)
        if not pairings:
            raise ConfigError("no games to play: with one bot (numBots = 1) give extraPairs = 0-0, or define two "
                              "or more bots" if num_bots == 1 else
                              "no games to play: includeBots / secondaryBots leave no pair of bots (every pair needs "
                              "one bot that is not secondary), and extraPairs names none")
        used = {i for pair in pairings for i in pair}
        for i in sorted(used):   # only the bots that play, as KataGo loads only their networks
            _check_model(bots[i])
        game = _game_setup_settings(cfg)
        if (game.komi_auto or game.handicap_prob > 0) and all(bots[i].uses_rollouts for i in used):
            raise ConfigError("komiAuto and handicap games need a bot with a network (to judge fair komi and "
                              "place stones); set komiMean and handicapProb = 0 for rollout-only matches")
        policy_openings, ignored_keys = read_policy_openings(cfg, gatekeeper=gatekeeper)
        if policy_openings is not None and all(bots[i].uses_rollouts for i in used):
            raise ConfigError("initGamesWithPolicy = true needs a bot with a network (its policy plays the "
                              "opening moves); set it to false for rollout-only matches")
        if cfg.is_set(num_games_key):
            num_games = cfg.get(num_games_key, BOT_MODE)
        elif default_num_games is not None:
            num_games = default_num_games
        else:
            raise ConfigError(f"{num_games_key} is required: how many games the match plays")
        # KataGo's match reads the runner keys with their defaults, though self-play requires some.
        return build_settings(
            cls, cfg, RUNNER_MODE, required=False,
            bots=bots, pairings=tuple(pairings), num_games_total=num_games,
            compensate_komi_visits=(cfg.get("compensateKomiVisits", RUNNER_MODE) if cfg.is_set("compensateKomiVisits")
                                    else MATCH_COMPENSATE_KOMI_VISITS),
            ignored_keys=ignored_keys,
            policy_openings=policy_openings,
            resign=_resign_settings(cfg),
            game=game,
            positions=positions if positions is not None else load_match_positions(cfg),
        )


def read_policy_openings(cfg: Config, *, gatekeeper: bool = False) -> tuple[Optional[PolicyOpenings], tuple[str, ...]]:
    """(policy openings, keys set without effect). As KataGo: match reads the policy-opening keys only
    with initGamesWithPolicy = true (policyInitAreaProp then required); the gatekeeper never plays
    policy openings, so there every such key, initGamesWithPolicy too, is without effect."""
    enabled = cfg.is_set("initGamesWithPolicy") and cfg.get("initGamesWithPolicy", RUNNER_MODE)
    if gatekeeper or not enabled:
        keys = POLICY_INIT_KEYS + (("initGamesWithPolicy",) if gatekeeper else ())
        ignored = tuple(key for key in keys if cfg.is_set(key))
        for key in ignored:
            cfg.mark_used(key)   # announced by the command instead of as unknown
        return None, ignored
    if not cfg.is_set("policyInitAreaProp"):
        raise ConfigError("initGamesWithPolicy = true needs policyInitAreaProp: the average number of opening "
                          "moves, as a share of the board area (e.g. 0.04)")
    openings = PolicyOpenings(
        area_prop=cfg.get("policyInitAreaProp", RUNNER_MODE),
        start_poses_area_prop=_optional(cfg, "startPosesPolicyInitAreaProp", RUNNER_MODE),
        compensate_prob=(cfg.get("compensateAfterPolicyInitProb", RUNNER_MODE)
                         if cfg.is_set("compensateAfterPolicyInitProb") else MATCH_COMPENSATE_AFTER_POLICY_INIT_PROB),
        gamma_shape=cfg.get_float("policyInitGammaShape", default_value("policyInitGammaShape", RUNNER_MODE),
                                  minimum=MIN_POLICY_INIT_GAMMA_SHAPE, maximum=MAX_MATCH_POLICY_INIT_GAMMA_SHAPE),
        temperature=_optional(cfg, "policyInitAreaTemperature", RUNNER_MODE),
    )
    return openings, ()


def ignored_key_warnings(keys: tuple[str, ...], gatekeeper: bool = False) -> list[str]:
    """One line per key (of read_policy_openings) the match or gatekeeper cannot act on."""
    if gatekeeper:
        return [f"config key '{key}' has no effect: the gatekeeper's games never open with policy moves "
                "(as KataGo's)" for key in keys]
    return [f"config key '{key}' has no effect without initGamesWithPolicy = true" for key in keys]


def load_match_positions(cfg: Config) -> PositionPools:
    """The start and hint positions the config names, read now: PositionLoadError (a ConfigError naming
    the directory or file) when one cannot be read. Positions are not limited by a data board size
    (match games write no training rows): anything up to the largest board katacli plays."""
    return load_position_pools(_start_position_settings(cfg), MAX_BOARD_LEN)


def _mark_sgf_pattern_keys_used(cfg: Config, num_bots: int) -> None:
    """avoidSgfPatternUtility3 and its kind are registered keys, yet for bot 3: marked used only when that bot
    exists. Other bot keys are marked as each bot reads them (:func:`_bot_spec`); one for a bot beyond numBots is
    left unread, as KataGo leaves it, so the Unused key warning names it (a gap or a typo in numBots)."""
    for key in cfg.keys():
        index = sgf_pattern_key_bot(key)
        if index is not None and index < num_bots:
            cfg.mark_used(key)


def is_match_key(key: str) -> bool:
    """A registered key, or one with a bot's index (maxVisits1): the keys match warns about when unread (a bot
    beyond numBots: maxVisits2 with two bots; a match-wide key given a bot's index: komiMean1)."""
    return is_known(key) or _is_indexed_bot_key(key)


def _is_indexed_bot_key(key: str) -> bool:
    m = _INDEXED_KEY.match(key)
    return bool(m) and not is_known(key) and is_known(m.group(1))


def unknown_keys(cfg: Config) -> list[str]:
    """Keys neither registered nor a registered bot key with an index (``maxVisits1``)."""
    out = []
    for key in cfg.unknown_keys():
        if not _is_indexed_bot_key(key):
            out.append(key)
    return out


def bot_config(cfg: Config, index: int) -> Config:
    """The config as bot ``index`` sees it: its indexed keys replace the plain ones, other bots' are gone."""
    view = cfg.copy()
    view.require_keys = False
    view.forget_used()   # what the bot reads, alone: marked back in the match's config by _bot_spec
    for key in cfg.keys():
        m = _INDEXED_KEY.match(key)
        if not m or is_known(key) or not is_known(m.group(1)):
            continue
        view._remove(key)
        if int(m.group(2)) == index:
            view.set(m.group(1), cfg.as_dict()[key], origin=f"{cfg.origin(key)}, as {key}")   # errors name it
    return view


def _check_model(bot: "BotSpec") -> None:
    """The bot's network file exists, is a whole gzip with a readable header: before any game starts."""
    if bot.model != ROLLOUTS:
        try:
            check_model_file(bot.model)
        except ModelFileError as exc:
            raise ConfigError(f"nnModelFile{bot.index} for bot {bot.name}: {exc}") from None


def _bot_spec(cfg: Config, index: int, num_bots: int) -> BotSpec:
    view = bot_config(cfg, index)
    indexed_name = f"botName{index}"
    if indexed_name in cfg:
        name = cfg.as_dict()[indexed_name]
    elif num_bots == 1 and "botName" in cfg:
        name = cfg.as_dict()["botName"]
    else:
        raise ConfigError(f"{indexed_name} is missing: with several bots, name each one (botName0, botName1, ...)")
    model = view.as_dict().get("nnModelFile")
    if not model:
        raise ConfigError(f"bot {index} ({name}) has no network: set nnModelFile{index} (a .bin.gz file, "
                          f"or '{ROLLOUTS}' for the random-playout engine)")
    if is_rollouts_model(model):
        model = ROLLOUTS
    for key in _BOT_IDENTITY_KEYS:
        if key != "botName" or num_bots == 1 or f"{key}{index}" in cfg:   # several bots read botName<i> only
            _mark_bot_key_used(cfg, key, index)
    params = SearchParams.from_config(view, BOT_MODE)
    for key in view.used_keys():   # what the bot read, marked in the match's config: its own key, else the plain one
        _mark_bot_key_used(cfg, key, index)
    try:
        sgf_patterns = tuple(sgf_pattern_sets_from_config(cfg, index))
    except PatternAvoidanceError as exc:
        raise ConfigError(f"bot {index} ({name}): {exc}") from None
    return BotSpec(index, name, model, params, sgf_patterns)


def _mark_bot_key_used(cfg: Config, key: str, index: int) -> None:
    """Mark the key bot ``index`` read as KataGo reads it: its own (maxVisits1) if set, else the plain one."""
    read = f"{key}{index}" if f"{key}{index}" in cfg else key
    if read in cfg:
        cfg.mark_used(read)


def _optional(cfg: Config, key: str, mode: str):
    """A key KataGo's match reads with a default (the command it is borrowed from may require it)."""
    return cfg.get(key, mode) if cfg.is_set(key) else default_value(key, mode)


def _int_list(cfg: Config, key: str) -> list[int]:
    return list(cfg.get(key, BOT_MODE)) if cfg.is_set(key) else []


def _pairings(cfg: Config, num_bots: int) -> list[tuple[int, int]]:
    # An includeBots index past numBots includes nothing (as KataGo: a list kept while numBots shrank).
    include = _int_list(cfg, "includeBots") or list(range(num_bots))
    secondary = _int_list(cfg, "secondaryBots")
    for value in secondary:
        if value >= num_bots:
            raise ConfigError(f"secondaryBots value {value} is out of range, numBots is {num_bots}")
    pairs = []
    for i in range(num_bots):
        for j in range(i + 1, num_bots):
            if i in include and j in include and not (i in secondary and j in secondary):
                pairs += [(i, j), (j, i)]
    one_sided = cfg.get("extraPairsAreOneSidedBW", BOT_MODE)
    for text in (cfg.get("extraPairs", BOT_MODE) if cfg.is_set("extraPairs") else []):
        parts = text.split("-")
        if len(parts) != 2 or not all(p.strip().isdigit() for p in parts):
            raise ConfigError(f"extraPairs: {text!r} is not a pair like 0-4")
        a, b = (int(p) for p in parts)
        if max(a, b) >= num_bots:
            raise ConfigError(f"extraPairs: {text} names a bot beyond numBots = {num_bots}")
        pairs.append((a, b))
        if not one_sided:
            pairs.append((b, a))
    return pairs


def _resign_settings(cfg: Config) -> ResignSettings:
    return ResignSettings(
        allow_resignation=_optional(cfg, "allowResignation", BOT_MODE),
        resign_threshold=_optional(cfg, "resignThreshold", BOT_MODE),
        resign_consec_turns=_optional(cfg, "resignConsecTurns", BOT_MODE),
    )
