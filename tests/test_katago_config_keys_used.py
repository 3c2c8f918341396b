"""No key of KataGo's example configs is silently ignored: each is honoured or announced.

For every key that KataGo's gtp_example.cfg, analysis_example.cfg, match_example.cfg and training
selfplay and gatekeeper configs set or show (recorded in katago_example_config_keys), either
* katacli reads it when its command starts (it ends up in the Config's used keys) and, for a search
  parameter, the search uses the value; or
* the registry marks it unsupported, and setting it prints a one-line warning naming it, or stops
  the command with a one-line error naming it.
A failure lists the keys read but not used.
"""
from __future__ import annotations

import dataclasses
import functools
import io
import re
from pathlib import Path

import pytest

from katago_example_config_keys import (
    ANALYSIS_EXAMPLE, GATEKEEPER_CONFIGS, GTP_EXAMPLE, MATCH_EXAMPLE, MATCH_RUNNER_KEYS, SELFPLAY_CONFIGS,
)
from katacli import config_keys
from katacli.config import Config, ConfigError
from katacli.config_keys import DerivedDefault, Enabled, ValueKind

from support.paths import REPO
PACKAGE = REPO / "katacli"
SHIPPED_CONFIG = REPO / "configs" / "{mode}_example.cfg"
# The commands that read each KataGo config (match reads its game setup like self-play, its bots
# like the GTP engine).
COMMANDS_OF = {
    "gtp_example.cfg": (GTP_EXAMPLE, ("gtp",)),
    "analysis_example.cfg": (ANALYSIS_EXAMPLE, ("analysis",)),
    "match_example.cfg": (MATCH_EXAMPLE, ("gtp", "selfplay")),
    "training/selfplay*.cfg": (SELFPLAY_CONFIGS, ("selfplay",)),
}
# Device keys name a server thread; they are read for as many threads as the config asks for.
MANY_SERVER_THREADS = 8
# Values for keys whose registry entry has no default to take.
SAMPLE_VALUES = {
    "rules": "tromp-taylor", "playoutDoublingAdvantagePla": "BLACK", "nnRandSeed": "seed",
    "searchRandSeed": "seed", "humanSLProfile": "rank_5k",
}
PATH_KINDS = ("logDir", "logDirDated", "logFile", "homeDataDir", "startPosesFromSgfDir", "hintPosesDir")
# Self-play reads these at start-up (as KataGo does) and stops when one does not exist.
DIRECTORIES_READ_AT_STARTUP = ("startPosesFromSgfDir", "hintPosesDir")
INDIVIDUAL_RULES = {"koRule": "SIMPLE", "scoringRule": "AREA", "multiStoneSuicideLegal": "false"}
# Keys read only when another is absent: key -> the keys it gives way to.
# Keys KataGo reads only together with others: an avoidSgf<N>Pattern group needs its utility and its
# directories, the autoAvoidRepeat settings need autoAvoidRepeatDir. key pattern -> (key, value) to add.
NEEDS = [
    (re.compile(r"avoidSgf([0-9]*)Pattern[A-Za-z]+"), lambda group, tmp: {
        f"avoidSgf{group}PatternUtility": "0.01", f"avoidSgf{group}PatternDirs": str(tmp / "sgfs")}),
    (re.compile(r"autoAvoidRepeat[A-Za-z]+()"), lambda _, tmp: {"autoAvoidRepeatDir": str(tmp / "auto")}),
]
TAKES_THE_PLACE_OF = {"komiMean": ("komiAuto",), "komiAuto": ("komiMean",), "forkSidePositionProb": ("sidePositionProb",),
                      "bSizesXY": ("allowRectangleProb",)}


def _text(value) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, Enabled):
        return value.value
    return str(value)


def sample_value(key: str, mode: str, tmp_path: Path) -> str:
    """A valid value for ``key``: its default where it has one, else one of the right kind."""
    if key in SAMPLE_VALUES:
        return SAMPLE_VALUES[key]
    if key in PATH_KINDS:
        if key in DIRECTORIES_READ_AT_STARTUP:
            (tmp_path / key).mkdir(exist_ok=True)
        return str(tmp_path / key)
    spec = config_keys.get_spec(key)
    if spec.choices:
        return spec.choices[0]
    default = spec.default_for(mode)
    lo, hi = spec.bounds_for(mode)
    in_range = isinstance(default, (int, float)) and (lo is None or default >= lo) and (hi is None or default <= hi)
    if default is not None and not isinstance(default, (DerivedDefault, list, tuple)) and (
            in_range or not isinstance(default, (int, float)) or isinstance(default, bool)):
        return _text(default)
    by_kind = {
        ValueKind.BOOL: "false", ValueKind.ENABLED: "auto", ValueKind.INT: str(int(lo if lo is not None else 1)),
        ValueKind.FLOAT: str(lo if lo is not None else 0.5), ValueKind.LIST_BOOL: "false", ValueKind.LIST_INT: "9",
        ValueKind.LIST_FLOAT: "1.0", ValueKind.LIST_STR: "x", ValueKind.STR: "x", ValueKind.PLAYER: "BLACK",
        ValueKind.INT_PAIRS: "9-9",
    }
    return by_kind[spec.kind]


def config_with(key: str, mode: str, tmp_path: Path) -> Config:
    """katacli's shipped example config for ``mode`` with ``key`` set if it is not (keys that would take
    its place removed)."""
    values = {k: v for k, v in _shipped_values(mode).items() if k not in TAKES_THE_PLACE_OF.get(key, ())}
    values["numNNServerThreadsPerModel"] = str(MANY_SERVER_THREADS)
    if key in config_keys.INDIVIDUAL_RULE_KEYS:
        values.pop("rules", None)
        values.update(INDIVIDUAL_RULES)  # these, or `rules`, are needed
    if key in config_keys.LOG_DESTINATION_KEYS:
        for other in config_keys.LOG_DESTINATION_KEYS:
            values.pop(other, None)
    if key == "bSizesXY" and "bSizes" in values:  # square sizes in place of bSizes, same bSizeRelProbs
        sizes = [size.strip() for size in values.pop("bSizes").split(",")]
        values[key] = ",".join(f"{size}-{size}" for size in sizes)
    if key not in values:
        values[key] = sample_value(key, mode, tmp_path)
    for pattern, companions in NEEDS:
        found = pattern.fullmatch(key)
        if found:
            values.update({k: v for k, v in companions(found.group(1), tmp_path).items() if k != key})
    cfg = Config.from_text("".join(f"{k} = {v}\n" for k, v in values.items()), mode=mode)
    cfg.apply_mode_aliases(mode)
    return cfg


def read_at_startup(cfg: Config, mode: str) -> None:
    """Everything the command for ``mode`` reads from its config before it starts working."""
    from katacli.setup.engine_settings import NNSettings

    if mode == "selfplay":
        from katacli.commands.selfplay import read_selfplay_config

        read_selfplay_config(cfg)
    else:
        from katacli.gtp.runtime_params import GtpRuntimeParams
        from katacli.setup.engine_settings import AnalysisSettings, GtpSettings

        (GtpSettings if mode == "gtp" else AnalysisSettings).from_config(cfg)
        GtpRuntimeParams.from_config(cfg, has_human_model=True)
    NNSettings.from_config(cfg, mode, model_index=1)  # a second model's devices (match, gatekeeper)


def canonical(key: str, mode: str) -> str:
    return dict(config_keys.MODE_ALIASES.get(mode, ())).get(key, key)


def is_read(key: str, mode: str, tmp_path: Path) -> bool:
    cfg = config_with(key, mode, tmp_path)
    read_at_startup(cfg, mode)
    return canonical(key, mode) in cfg.used_keys()


# Values for the match keys under test, set on top of the shipped configs/match_example.cfg.
MATCH_SAMPLES = {"numBots": "2", "botName": "x", "nnModelFile": "rollouts", "numGamesTotal": "2",
                 "secondaryBots": "1", "includeBots": "0,1", "extraPairs": "0-1", "extraPairsAreOneSidedBW": "true"}


# The plain bot keys: with several bots KataGo reads botName<i> only, and nnModelFile only for a bot without its own.
ONE_BOT_KEYS = ("botName", "nnModelFile")


def match_reads(key: str) -> bool:
    """Whether `kata match` reads ``key`` from its config."""
    from katacli.match.settings import MatchSettings

    cfg = Config.from_file(REPO / "configs" / "match_example.cfg", mode="gtp")
    # Rollout bots (no network file needed), two of them, komi without a network.
    cfg.apply_overrides({"nnModelFile0": "rollouts", "komiAuto": "", "komiMean": "7.5", "handicapProb": "0"},
                        origin="test")
    if key in ONE_BOT_KEYS:   # read only by a match of one bot (KataGo's example), as KataGo reads them
        cfg.apply_overrides({"numBots": "1", "botName0": "", "botName1": "", "nnModelFile0": "", "nnModelFile1": "",
                             "botName": "x", "nnModelFile": "rollouts",
                             "extraPairs": "0-0"}, origin="test")
    cfg.apply_overrides({key: MATCH_SAMPLES[key]}, origin="test")
    MatchSettings.from_config(cfg)
    return key in cfg.used_keys()


# The two bots `kata gatekeeper` sets up for each gating (rollouts: no network file needed).
GATING_BOTS = {"numBots": "2", "botName0": "candidate", "botName1": "accepted", "nnModelFile0": "rollouts",
               "nnModelFile1": "rollouts"}


def gatekeeper_reads(key: str, tmp_path: Path) -> bool:
    """Whether `kata gatekeeper` reads ``key``: at start-up, or for each gating's match."""
    from katacli.commands.gatekeeper import read_gatekeeper_config
    from katacli.match.settings import MatchSettings
    from katacli.setup.engine_settings import NNSettings

    values = Config.from_file(REPO / "configs" / "gatekeeper_example.cfg", mode="gtp").as_dict()
    values = {k: v for k, v in values.items() if k not in TAKES_THE_PLACE_OF.get(key, ())}
    values.update(numNNServerThreadsPerModel=str(MANY_SERVER_THREADS), komiAuto="", komiMean="7.5",
                  handicapProb="0")  # komi without a network
    if key in ("komiAuto", "handicapProb"):
        values.update(komiAuto="false")
    if key not in values or not values[key]:
        values[key] = sample_value(key, "gtp", tmp_path)
    cfg = Config.from_text("".join(f"{k} = {v}\n" for k, v in values.items() if v != ""), mode="gtp")
    positions = read_gatekeeper_config(cfg)[0]
    gating = cfg.copy()
    for k, v in GATING_BOTS.items():
        gating.set(k, v, origin="gatekeeper")
    MatchSettings.from_config(gating, num_games_key="numGamesPerGating", default_num_games=2, positions=positions)
    NNSettings.from_config(gating, "gtp", model_index=1)  # the accepted model's devices
    return canonical(key, "gtp") in cfg.used_keys() | gating.used_keys()


# Keys of KataGo's example configs that KataGo 1.17.2 itself never reads: both engines announce them with the
# unused-key warning (checked in test_kata_gtp_announces_and_refuses_at_start_up).
READ_BY_NEITHER = frozenset({"avoidMYTDaggerHack"})


def test_no_key_of_katago_gatekeeper_configs_is_silently_ignored(tmp_path):
    read_but_unused = []
    for key in GATEKEEPER_CONFIGS:
        spec = config_keys.lookup(key)
        assert spec is not None, f"{key} is not a key katacli knows"
        if spec.unsupported is not None:
            continue  # announced at start-up: see the tests below
        if not gatekeeper_reads(key, tmp_path) or not _uses_the_search_field(key):
            read_but_unused.append(key)
    assert read_but_unused == [], f"gatekeeper configs: keys katacli accepts but does not act on: {read_but_unused}"


@functools.lru_cache(maxsize=None)
def _shipped_values(mode: str) -> dict[str, str]:
    return Config.from_file(SHIPPED_CONFIG.with_name(SHIPPED_CONFIG.name.format(mode=mode)), mode=mode).as_dict()


@functools.lru_cache(maxsize=None)
def _search_fields_unused_by_the_search() -> dict[str, str]:
    """Search keys whose SearchParams field nothing outside the parameter modules refers to: key -> field."""
    from katacli.config_keys.fields import FROM_CONFIG_METADATA, KEY_METADATA
    from katacli.search.params import SearchParams

    sources = [p for p in PACKAGE.rglob("*.py") if p.name not in ("params.py", "runtime_params.py")]
    sources += list((REPO / "katacli" / "_core").glob("*.pyx"))
    text = "\n".join(p.read_text(encoding="utf-8") for p in sources)
    unused = {}
    for f in dataclasses.fields(SearchParams):
        if f.metadata.get(FROM_CONFIG_METADATA) and not re.search(rf"\.{f.name}\b", text):
            unused[f.metadata[KEY_METADATA]] = f.name
    return unused


@functools.lru_cache(maxsize=None)
def _uses_the_search_field(key: str) -> bool:
    """A search key whose field the search never reads counts as used only where the key is read elsewhere."""
    unused = _search_fields_unused_by_the_search()
    if key not in unused:
        return True
    sources = [p for p in PACKAGE.rglob("*.py")
               if "config_keys" not in p.parts and p.name not in ("params.py", "runtime_params.py")]
    return any(f'"{key}"' in p.read_text(encoding="utf-8") for p in sources)


@pytest.mark.parametrize("config_name", list(COMMANDS_OF))
def test_no_key_of_katago_example_configs_is_silently_ignored(config_name, tmp_path):
    keys, modes = COMMANDS_OF[config_name]
    read_but_unused = []
    for key in keys:
        spec = config_keys.lookup(key)
        if spec is None:
            assert key in MATCH_RUNNER_KEYS, f"{key} is not a key katacli knows"
            continue  # read by `kata match`, where that command is
        if spec.unsupported is not None or key in READ_BY_NEITHER:
            continue  # announced at start-up: see the tests below
        if key in MATCH_RUNNER_KEYS:
            if not match_reads(key):
                read_but_unused.append(key)
            continue
        if not any(is_read(key, mode, tmp_path) for mode in modes) or not _uses_the_search_field(key):
            read_but_unused.append(key)
    assert read_but_unused == [], f"{config_name}: keys katacli accepts but does not act on: {read_but_unused}"


def test_every_search_parameter_the_search_ignores_is_announced():
    unannounced = [key for key in _search_fields_unused_by_the_search()
                   if config_keys.get_spec(key).unsupported is None and not _uses_the_search_field(key)]
    assert unannounced == []


def _unsupported_cases():
    for config_name, (keys, modes) in COMMANDS_OF.items():
        for key in keys:
            spec = config_keys.lookup(key)
            if spec is not None and spec.unsupported is not None:
                mode = next((m for m in modes if spec.unsupported.modes is None or m in spec.unsupported.modes), None)
                if mode is not None:
                    yield pytest.param(key, mode, id=f"{config_name}:{key}")


def _active_value(spec, mode: str, tmp_path: Path) -> str:
    """A value for which the key would do something katacli cannot."""
    off = spec.unsupported.off
    if off is None:
        return sample_value(spec.name, mode, tmp_path)
    if isinstance(off, bool):
        return _text(not off)
    if isinstance(off, Enabled):
        return "true" if off != Enabled.TRUE else "false"
    raise AssertionError(f"no value known that turns {spec.name} on")


@pytest.mark.parametrize("key,mode", list(_unsupported_cases()))
def test_unsupported_keys_are_announced_or_refused(key, mode, tmp_path):
    spec = config_keys.lookup(key)
    value = _active_value(spec, mode, tmp_path)
    cfg = Config.from_text(f"{key} = {value}\n", mode=mode)
    stream = io.StringIO()
    if spec.unsupported.refuse:
        with pytest.raises(ConfigError, match=re.escape(key)):
            cfg.check_unsupported_keys(stream)
        return
    assert cfg.check_unsupported_keys(stream) == [key]
    line = stream.getvalue()
    assert line.count("\n") == 1 and line.startswith("WARNING:") and f"'{key} = {value}'" in line


def test_unsupported_keys_set_to_their_off_value_stay_quiet():
    cfg = Config.from_text("antiMirror = false\nuseGraphSearch = false\n", mode="gtp")
    stream = io.StringIO()
    assert cfg.check_unsupported_keys(stream) == [] and stream.getvalue() == ""


def test_pass_alive_mode_is_announced_only_where_it_is_not_honoured():
    key = "alwaysComputePassAliveUnderSuicideRules"
    assert Config.from_text(f"{key} = true\n", mode="gtp").check_unsupported_keys(io.StringIO()) == [key]
    assert Config.from_text(f"{key} = true\n", mode="selfplay").check_unsupported_keys(io.StringIO()) == []


@pytest.mark.subprocess
def test_kata_gtp_announces_and_refuses_at_start_up(tmp_path):
    import subprocess

    from support.gtp import python_cli

    run = lambda override: subprocess.run(python_cli() + ["gtp", "-override-config", override],
                                          input="name\nquit\n", capture_output=True, text=True, timeout=120)
    ok = run("avoidMYTDaggerHack=true")   # KataGo 1.17.2 reads it nowhere: its unused-key warning
    assert ok.returncode == 0 and ok.stdout.startswith("= KataGo")
    warnings = [line for line in ok.stderr.splitlines() if "avoidMYTDaggerHack" in line]
    assert len(warnings) == 1 and warnings[0].startswith("WARNING: Unused key 'avoidMYTDaggerHack' in ")
    missing = tmp_path / "missing"
    stopped = run(f"avoidSgfPatternDirs={missing},avoidSgfPatternUtility=0.1")
    assert stopped.returncode == 1 and stopped.stdout == ""
    lines = stopped.stderr.strip().splitlines()
    assert lines == [f"error: avoidSgfPatternDirs: {missing} does not exist"]
