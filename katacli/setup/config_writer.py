"""The commented GTP config `kata genconfig` writes, built from the key registry.

What each key means and what it defaults to comes from :mod:`katacli.config_keys` (the single source of
truth); this module only chooses which keys a generated config shows, in which section, and with which
values. A key the user did not choose is written commented out (``# key = value``) so the file documents
it without changing the default. :func:`check_config_text` loads the text the way `kata gtp` does, so a
generated config is never written unless the engine would accept it without warnings.
"""
from __future__ import annotations

import datetime
import io
import textwrap
from dataclasses import dataclass, field
from typing import Any, Optional

from katacli import config_keys

COMMENT_WIDTH = 100
LOG_DIR = "gtp_logs"
# Bytes one cached network result takes on 19x19 with ownership kept (GUIs ask for it): 4.5 KB measured
# (2.5 KB without), searches of 30,000 visits with the cache on and off, the RSS difference per entry.
CACHE_BYTES_PER_ENTRY = 4500
MIN_CACHE_SIZE_POWER_OF_TWO = 10
MAX_CACHE_SIZE_POWER_OF_TWO = 48
# KataGo keeps the lock pool 16 times smaller than the cache, within these bounds.
MUTEX_POOL_SHIFT = 4
MIN_MUTEX_POOL_POWER_OF_TWO = 10
MAX_MUTEX_POOL_POWER_OF_TWO = 24
BYTES_PER_GB = 1 << 30
# Example values shown on commented-out limits (the real defaults mean "unlimited").
EXAMPLE_MAX_VISITS = 500
EXAMPLE_MAX_PLAYOUTS = 300
EXAMPLE_MAX_TIME = 10.0
EXAMPLE_MAX_PONDER_TIME = 60.0
EXAMPLE_FORCED_KOMI = 7.5
# What KataGo's genconfig writes for play against people: a second of lag allowance per move, and
# faster moves once the opponent passes or the game is won (commented out in a controlled match).
LAG_BUFFER_SECONDS = 1.0
SEARCH_FACTOR_AFTER_ONE_PASS = 0.50
SEARCH_FACTOR_AFTER_TWO_PASS = 0.25
SEARCH_FACTOR_WHEN_WINNING = 0.40
SEARCH_FACTOR_WHEN_WINNING_THRESHOLD = 0.95
# Human-like play, as configs/gtp_human5k_example.cfg (KataGo's gtp_human5k_example.cfg) sets it up: the move
# is drawn from the human policy, unbent by the search's values, with a person's randomness.
HUMAN_CHOSEN_MOVE_PROP = 1.0
HUMAN_PIKL_LAMBDA_PURE_IMITATION = 1.0e8
HUMAN_CPUCT_EXPLORATION = 0.5
HUMAN_CPUCT_PERMANENT = 0.2
HUMAN_TEMPERATURE_EARLY = 0.85
HUMAN_TEMPERATURE = 0.70
HUMAN_TEMPERATURE_ONLY_BELOW_PROB = 0.01
HUMAN_EXPLORE_KEYS = tuple(f"humanSL{where}ExploreProb{kind}" for where in ("Root", "Pla", "Opp")
                           for kind in ("Weightless", "Weightful"))
HUMAN_PROFILE_NOTE = ("rank_20k .. rank_1k, rank_1d .. rank_9d: modern amateurs (KGS, 2020); preaz_RANK: amateurs "
                      "before AlphaGo-style play spread (2016); rank_BR_WR: Black and White of different ranks; "
                      "proyear_1800 .. proyear_2023: professionals of that year. Change it while playing with "
                      "kata-set-param humanSLProfile rank_3d.")


@dataclass
class GenConfigChoices:
    """Everything the wizard asks; None means "leave the key at its default"."""

    rules: str = "tromp-taylor"
    forced_komi: Optional[float] = None
    max_visits: Optional[int] = None
    max_playouts: Optional[int] = None
    max_time: Optional[float] = None
    pondering: bool = False
    max_ponder_time: Optional[float] = None
    allow_resignation: bool = True
    resign_threshold: float = -0.90
    resign_consec_turns: int = 3
    devices: list[int] = field(default_factory=list)  # CUDA device indices; empty: the default device
    cache_size_power_of_two: Optional[int] = None
    num_search_threads: int = 1
    tuning_note: Optional[str] = None  # how numSearchThreads was chosen
    # Settings tuning found clearly faster than their auto values: key -> (value, note).
    tuned_settings: dict[str, tuple[str, str]] = field(default_factory=dict)
    human_sl_profile: Optional[str] = None  # imitate this humanSLProfile (needs -human-model); None: full strength


def cache_size_for_gb(gigabytes: float) -> int:
    """nnCacheSizePowerOfTwo whose full cache fits in about ``gigabytes`` of RAM."""
    budget = gigabytes * BYTES_PER_GB
    power = MIN_CACHE_SIZE_POWER_OF_TWO
    while power < MAX_CACHE_SIZE_POWER_OF_TWO and (2 << power) * CACHE_BYTES_PER_ENTRY <= budget:
        power += 1
    return power


def cache_gb_for_size(power: int) -> float:
    return (1 << power) * CACHE_BYTES_PER_ENTRY / BYTES_PER_GB


def mutex_pool_for_cache(power: int) -> int:
    return min(MAX_MUTEX_POOL_POWER_OF_TWO, max(MIN_MUTEX_POOL_POWER_OF_TWO, power - MUTEX_POOL_SHIFT))


def format_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return f"{value:g}" if value != int(value) or abs(value) >= 1e15 else f"{value:.1f}"
    return str(value)


@dataclass
class Entry:
    """One key in the generated file: set to ``value``, or commented out showing ``shown`` (default: the
    registry default)."""

    key: str
    value: Any = None
    shown: Any = None
    note: Optional[str] = None

    def render(self) -> list[str]:
        spec = config_keys.get_spec(self.key)
        text = spec.description + (f" {self.note}" if self.note else "")
        lines = textwrap.wrap(text, COMMENT_WIDTH - 2, initial_indent="# ", subsequent_indent="# ",
                              break_on_hyphens=False)
        if self.value is not None:
            lines.append(f"{self.key} = {format_value(self.value)}")
            return lines
        shown = self.shown if self.shown is not None else config_keys.default_value(self.key, "gtp")
        if shown is None or isinstance(shown, config_keys.DerivedDefault):
            lines.append(f"# {self.key} = (default: {getattr(shown, 'explanation', 'not set')})")
        else:
            lines.append(f"# {self.key} = {format_value(shown)}")
        return lines


def _sections(c: GenConfigChoices) -> list[tuple[str, list[Entry]]]:
    cache = c.cache_size_power_of_two
    cache_power = cache if cache is not None else config_keys.default_value("nnCacheSizePowerOfTwo", "gtp")
    devices = [Entry("numNNServerThreadsPerModel", len(c.devices) if c.devices else None)]
    devices += [Entry(f"cudaDeviceToUseThread{i}", index) for i, index in enumerate(c.devices)]
    return [
        ("Logs", [
            Entry("logDir", LOG_DIR), Entry("logAllGTPCommunication", True), Entry("logSearchInfo", True),
            Entry("logToStderr", False),
        ]),
        ("Analysis output", [Entry("reportAnalysisWinratesAs"), Entry("analysisPVLen")]),
        ("Rules and komi", [
            Entry("rules", c.rules, note="GTP controllers may still change the rules (kata-set-rules)."),
            Entry("ignoreGTPAndForceKomi", c.forced_komi, shown=EXAMPLE_FORCED_KOMI,
                  note="Leave it unset to use the komi the GUI or server sends."),
        ]),
        ("Resignation", [
            Entry("allowResignation", c.allow_resignation),
            # Written even when resigning is off: the engine requires the threshold whenever allowResignation is set.
            Entry("resignThreshold", c.resign_threshold),
            Entry("resignConsecTurns", c.resign_consec_turns),
        ]),
        ("Search limits (for playing games; time controls from the GUI always apply too)", [
            Entry("maxVisits", c.max_visits, shown=EXAMPLE_MAX_VISITS),
            Entry("maxPlayouts", c.max_playouts, shown=EXAMPLE_MAX_PLAYOUTS),
            Entry("maxTime", c.max_time, shown=EXAMPLE_MAX_TIME),
            Entry("ponderingEnabled", c.pondering),
            Entry("maxTimePondering", c.max_ponder_time if c.pondering else None, shown=EXAMPLE_MAX_PONDER_TIME),
            Entry("lagBuffer", LAG_BUFFER_SECONDS,
                  note="Seconds per move kept in reserve for lag under GUI time controls."),
        ]),
        ("Playing faster against people (comment these out for matches at fixed compute per move)", [
            Entry("searchFactorAfterOnePass", SEARCH_FACTOR_AFTER_ONE_PASS),
            Entry("searchFactorAfterTwoPass", SEARCH_FACTOR_AFTER_TWO_PASS),
            Entry("searchFactorWhenWinning", SEARCH_FACTOR_WHEN_WINNING),
            Entry("searchFactorWhenWinningThreshold", SEARCH_FACTOR_WHEN_WINNING_THRESHOLD),
        ]),
        ("Leaves in flight per search (KataGo's search threads)", [
            Entry("numSearchThreads", c.num_search_threads, note=c.tuning_note),
            *(Entry(key, value, note=note) for key, (value, note) in c.tuned_settings.items()),
        ]),
        ("Neural network, GPU and memory", [
            # Left to follow numSearchThreads, as KataGo's genconfig leaves it: a fixed value would stay behind
            # when numSearchThreads is raised later (both benchmarks warn about a hard-coded one).
            Entry("nnMaxBatchSize", shown=config_keys.get_spec("nnMaxBatchSize").mode_defaults["gtp"],
                  note="It must be at least numSearchThreads; unset, it follows numSearchThreads."),
            Entry("nnCacheSizePowerOfTwo", cache,
                  note=f"Each step up doubles the memory; {cache_gb_for_size(cache_power):.1f} GB at this setting "
                       "for 19x19."),
            Entry("nnMutexPoolSizePowerOfTwo", mutex_pool_for_cache(cache) if cache is not None else None),
            *devices,
        ]),
    ]


def _human_sections(c: GenConfigChoices) -> list[tuple[str, list[Entry]]]:
    """The humanSL* keys of a human-like player (none when ``c.human_sl_profile`` is None)."""
    if c.human_sl_profile is None:
        return []
    return [
        ("Human-like play (needs the human SL network: kata gtp -human-model FILE)", [
            Entry("humanSLProfile", c.human_sl_profile, note=HUMAN_PROFILE_NOTE),
            Entry("humanSLChosenMoveProp", HUMAN_CHOSEN_MOVE_PROP,
                  note="1.0: the move is drawn from the human policy; the search only judges positions."),
            Entry("humanSLChosenMoveIgnorePass", True, note="Keep the engine's own judgement of when to pass."),
            Entry("humanSLChosenMovePiklLambda", HUMAN_PIKL_LAMBDA_PURE_IMITATION,
                  note="This huge value means pure imitation; around 0.1 to 1 leans toward moves the search likes."),
            *(Entry(key, note=None if i else "These six are off: the human policy picks the move, it does not "
                                              "steer the search.")
              for i, key in enumerate(HUMAN_EXPLORE_KEYS)),
            Entry("humanSLCpuctExploration", HUMAN_CPUCT_EXPLORATION),
            Entry("humanSLCpuctPermanent", HUMAN_CPUCT_PERMANENT),
        ]),
        ("Move choice: some randomness, like a person", [
            Entry("chosenMoveTemperatureEarly", HUMAN_TEMPERATURE_EARLY),
            Entry("chosenMoveTemperature", HUMAN_TEMPERATURE),
            Entry("chosenMoveTemperatureOnlyBelowProb", HUMAN_TEMPERATURE_ONLY_BELOW_PROB,
                  note="Only moves below this share are flattened, so good moves stay likely."),
        ]),
    ]


def render_config(choices: GenConfigChoices, model_path: Optional[str] = None,
                  now: Optional[datetime.datetime] = None, human_model_path: Optional[str] = None) -> str:
    now = now or datetime.datetime.now()
    out = io.StringIO()
    out.write("# GTP config written by `kata genconfig` on " + now.strftime("%Y-%m-%d %H:%M") + ".\n")
    if model_path:
        out.write(f"# Tuned for the network {model_path}"
                  + (f" with the human SL network {human_model_path}.\n" if human_model_path else ".\n"))
    human_part = " -human-model HUMAN_NET.bin.gz" if choices.human_sl_profile is not None else ""
    out.write(f"#\n# Use it with:  kata gtp -model NET.bin.gz{human_part} -config THIS_FILE\n"
              "# Key names are KataGo's, so KataGo reads this file too. A commented-out line (# key = value)\n"
              "# shows a setting without changing it: remove the '#' to use it. configs/gtp_example.cfg\n"
              "# documents more of them.\n")
    for title, entries in _sections(choices) + _human_sections(choices):
        out.write("\n# " + "-" * (COMMENT_WIDTH - 2) + f"\n# {title}\n# " + "-" * (COMMENT_WIDTH - 2) + "\n")
        for entry in entries:
            out.write("\n".join(entry.render()) + "\n")
    return out.getvalue()


class GeneratedConfigError(ValueError):
    """The generated text would not load cleanly in `kata gtp` (a bug, or an impossible combination)."""


def check_config_text(text: str, source: str = "<generated config>", has_human_model: bool = False) -> None:
    """Load the text as `kata gtp` would (with ``-human-model`` when ``has_human_model``); raise
    GeneratedConfigError on any error or unknown key."""
    from katacli.config import Config, ConfigError
    from katacli.search.params import gtp_search_params
    from katacli.setup.engine_settings import GtpSettings

    try:
        cfg = Config.from_text(text, source=source, mode="gtp")
        # What `kata gtp` reads at start-up: its settings and its two search parameter sets (the
        # runtime parameters kata-set-param changes are these same keys).
        GtpSettings.from_config(cfg)
        gtp_search_params(cfg, has_human_model=has_human_model)
    except ConfigError as exc:
        raise GeneratedConfigError(str(exc)) from None
    unknown = cfg.unknown_keys()
    if unknown:
        raise GeneratedConfigError(f"unknown keys in the generated config: {', '.join(unknown)}")


def parse_device_list(text: str) -> list[int]:
    """``0,1,2`` -> [0, 1, 2]; ValueError for anything else."""
    devices = []
    for piece in text.split(","):
        piece = piece.strip()
        if not piece:
            continue
        if not piece.isdigit():
            raise ValueError(f"Invalid device index: {piece!r}")
        devices.append(int(piece))
    return devices


def existing_thread_count(path: str) -> Optional[int]:
    """numSearchThreads of an existing config, if it has a valid one (genconfig may keep it)."""
    from katacli.config import Config, ConfigError

    try:
        cfg = Config.from_file(path, mode="gtp")
        return cfg.get("numSearchThreads", "gtp") if "numSearchThreads" in cfg else None
    except (ConfigError, OSError, UnicodeDecodeError):
        return None

