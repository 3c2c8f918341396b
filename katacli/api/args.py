"""Turning what a person writes into katacli's internal values, with errors that name the bad value.

Colours: "B" / "b" / "black" / "W" / "white" (any case). Vertices: GTP ("E5", "pass").
Settings: KataGo's config key names ("maxVisits", "cpuctExploration") or their snake_case
forms ("max_visits"), given as Python values (200, 1.1, True, "0.04") or a config file.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Mapping, Union

from katacli import config_keys
from katacli.config_keys.nn_keys import NN_SECTION
from katacli.config import Config, ConfigError, shipped_copy_hint
from katacli.game.coords import BLACK, WHITE, CoordError, format_color, parse_color, parse_vertex

Point = tuple[int, int]
# What the API accepts as a colour: text, or katacli's internal 1 (Black) / 2 (White).
ColorLike = Union[str, int]
# A config: a .cfg path, a parsed Config, or a mapping of keys to values.
ConfigLike = Union[str, os.PathLike, Config, Mapping[str, Any], None]


class SettingError(ValueError):
    """A setting name that is not a KataGo config key, or a value it does not accept."""


def to_color(color: ColorLike) -> int:
    """"B"/"black"/1 -> 1 and "W"/"white"/2 -> 2; anything else raises CoordError naming it.

    >>> to_color("black"), to_color("W")
    (1, 2)
    >>> to_color("red")
    Traceback (most recent call last):
    ...
    katacli.game.coords.CoordError: Could not parse color: 'red' (expected "B"/"black" or "W"/"white")
    """
    if isinstance(color, int) and not isinstance(color, bool) and color in (BLACK, WHITE):
        return color
    try:
        return parse_color(str(color).strip())
    except CoordError:
        raise CoordError(f"Could not parse color: {str(color)!r} (expected \"B\"/\"black\" or \"W\"/\"white\")") \
            from None


def color_name(color: int) -> str:
    """1 -> "B", 2 -> "W".

    >>> color_name(to_color("white"))
    'W'
    """
    return format_color(color)


def to_point(vertex: str | None, x_size: int, y_size: int) -> Point | None:
    """A GTP vertex ("E5", "pass", or None for pass) as (x, y) with y from the top; CoordError when bad.

    >>> to_point("A1", 9, 9), to_point("pass", 9, 9)
    ((0, 8), None)
    """
    if vertex is None:
        return None
    if not isinstance(vertex, str):
        raise CoordError(f"a vertex is text such as \"E5\" or \"pass\", got {vertex!r}")
    return parse_vertex(vertex, x_size, y_size)


def setting_key(name: str) -> str:
    """KataGo's config key for ``name``, which may be the key itself or its snake_case form.

    >>> setting_key("max_visits"), setting_key("cpuctExploration"), setting_key("num_search_threads")
    ('maxVisits', 'cpuctExploration', 'numSearchThreads')
    """
    if config_keys.is_known(name):
        return name
    camel = _snake_to_camel(name)
    if camel in _SNAKE_KEYS:
        return _SNAKE_KEYS[camel]
    suggestion = config_keys.suggest_key(name)
    hint = f" (did you mean {suggestion!r}?)" if suggestion else " (see configs/*_example.cfg for the keys)"
    raise SettingError(f"unknown setting {name!r}: not a KataGo config key{hint}")


def _snake_to_camel(name: str) -> str:
    return name.replace("_", "").lower()


# KataGo keys by their lower-case letters without underscores, so that max_visits, lcb_stdevs and
# min_visit_prop_for_lcb all find their key (maxVisits, lcbStdevs, minVisitPropForLCB).
_SNAKE_KEYS = {_snake_to_camel(spec.name): spec.name for spec in config_keys.all_specs()}


def _value_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_value_text(v) for v in value)
    return str(value)


# Where the network's own settings go instead: the Network is built before any search sees a setting.
_NETWORK_SETTING_HINTS = {
    "nnRandomize": "load_network(..., symmetry=0) for nnRandomize=false",
    "nnForcedSymmetry": "load_network(..., symmetry=N)",
    "nnRandSeed": "load_network(..., seed=N)",
    "nnCacheSizePowerOfTwo": "load_network(..., cache=False) for none",
    "nnMaxBatchSize": "load_network(..., max_batch_size=N)",
}


def _refuse_network_setting(key: str) -> None:
    """A network setting given to a search would be silently ignored (the network is already loaded)."""
    spec = config_keys.lookup(key)
    if spec is None or spec.section != NN_SECTION:
        return
    hint = _NETWORK_SETTING_HINTS.get(key, "the options of load_network")
    raise SettingError(f"{key!r} is a network setting, which a search cannot change: use {hint}")


def build_config(config: ConfigLike, settings: Mapping[str, Any], mode: str) -> Config:
    """A Config for ``mode`` from a file / Config / mapping, with ``settings`` applied over it.

    Names in ``settings`` and in a mapping must be KataGo keys (SettingError otherwise); values are
    checked when read, as ConfigErrors naming key and value. A file may hold keys for other modes.

    >>> cfg = build_config({"maxVisits": 50}, {"root_noise_enabled": True}, "analysis")
    >>> cfg.get("maxVisits"), cfg.get("rootNoiseEnabled")
    (50, True)
    """
    if config is None:
        cfg = Config({}, mode=mode)
    elif isinstance(config, Config):
        cfg = config.copy()
    elif isinstance(config, (str, os.PathLike)):
        path = Path(config)
        if not path.is_file():   # the docs' configs/*.cfg: an installed package has its own copies
            raise ConfigError(f"config file not found: {path}{shipped_copy_hint(path)}")
        cfg = Config.from_file(path, mode=mode)
    elif isinstance(config, Mapping):
        cfg = Config({setting_key(k): _value_text(v) for k, v in config.items()}, mode=mode)
        for key in cfg.keys():
            _refuse_network_setting(key)
    else:
        raise SettingError(f"config must be a .cfg path, a Config or a dict of settings, got {type(config).__name__}")
    overrides = {setting_key(k): _value_text(v) for k, v in settings.items()}
    for key in overrides:
        _refuse_network_setting(key)
    if overrides:
        cfg.apply_overrides(overrides, origin="Python API")
    return cfg
