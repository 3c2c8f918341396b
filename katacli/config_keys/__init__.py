"""The registry of every KataGo config key katacli understands.

This is the single source of truth for key names, types, ranges and defaults:
the config parser warns about keys missing from here, ``Config.get`` parses
and defaults through it, and every settings class (``SearchParams``, the
engine, self-play, match and training settings) declares its fields with
:func:`katacli.config_keys.fields.config_field`, which takes the key's default
from it. Keys are grouped into sections (logging, rules, search limits, ...) that
the shipped example configs and ``kata genconfig`` follow.

    >>> from katacli import config_keys
    >>> config_keys.get_spec("maxVisits").maximum == 1 << 50
    True
    >>> config_keys.default_value("wideRootNoise", mode="analysis")
    0.04
"""
from __future__ import annotations

import difflib
from typing import Any, Iterable

from katacli.config_keys.match_keys import MATCH_KEYS
from katacli.config_keys.engine_keys import ENGINE_FAMILIES, ENGINE_KEYS, INDIVIDUAL_RULE_KEYS, LOG_DESTINATION_KEYS
from katacli.config_keys.nn_keys import NN_FAMILIES, NN_KEYS
from katacli.config_keys.search_keys import HUMAN_MODEL_ONLY_KEYS, SEARCH_KEYS
from katacli.config_keys.selfplay_keys import SELFPLAY_KEYS
from katacli.config_keys.train_keys import TRAIN_KEYS
from katacli.config_keys.spec import (
    MAX_BOARD_LEN,
    MODES,
    DefaultResolver,
    DerivedDefault,
    Enabled,
    KeyFamily,
    KeySpec,
    ValueKind,
)

__all__ = [
    "MODES", "MAX_BOARD_LEN", "Enabled", "KeySpec", "KeyFamily", "ValueKind", "DerivedDefault",
    "REGISTRY", "FAMILIES", "MODE_ALIASES", "OVERRIDE_EXCLUSIVE_GROUPS", "HUMAN_MODEL_ONLY_KEYS",
    "INDIVIDUAL_RULE_KEYS", "LOG_DESTINATION_KEYS",
    "lookup", "get_spec", "is_known", "all_specs", "sections", "specs_in_section", "default_value",
    "resolve_default", "suggest_key", "check_mode",
]


def _build_registry(specs: Iterable[KeySpec]) -> dict[str, KeySpec]:
    registry: dict[str, KeySpec] = {}
    for spec in specs:
        if spec.name in registry:
            raise RuntimeError(f"config key {spec.name!r} is registered twice")
        registry[spec.name] = spec
    return registry


REGISTRY: dict[str, KeySpec] = _build_registry(
    ENGINE_KEYS + SEARCH_KEYS + NN_KEYS + SELFPLAY_KEYS + MATCH_KEYS + TRAIN_KEYS)
FAMILIES: tuple[KeyFamily, ...] = tuple(ENGINE_FAMILIES + NN_FAMILIES)

# Alternative spellings a command accepts, as (spelling, canonical key) pairs.
# The analysis engine calls numSearchThreads "numSearchThreadsPerAnalysisThread".
MODE_ALIASES: dict[str, tuple[tuple[str, str], ...]] = {
    "analysis": (("numSearchThreadsPerAnalysisThread", "numSearchThreads"),),
}

# When -override-config sets a key of one group, config keys of the other
# group are dropped, so that e.g. overriding `rules` wins over a config that
# spells out koRule/scoringRule (and the other way round).
OVERRIDE_EXCLUSIVE_GROUPS: tuple[tuple[frozenset[str], frozenset[str]], ...] = (
    (frozenset({"rules"}), frozenset(INDIVIDUAL_RULE_KEYS)),
)


def check_mode(mode: str | None) -> None:
    if mode is not None and mode not in MODES:
        raise ValueError(f"unknown config mode {mode!r}; expected one of {', '.join(MODES)}")


def lookup(key: str) -> KeySpec | None:
    """The spec for ``key`` (exact names first, then families), or None."""
    spec = REGISTRY.get(key)
    if spec is not None:
        return spec
    for family in FAMILIES:
        if family.matches(key):
            return family.spec_for(key)
    return None


def get_spec(key: str) -> KeySpec:
    spec = lookup(key)
    if spec is None:
        raise KeyError(f"unknown config key {key!r}")
    return spec


def is_known(key: str) -> bool:
    return lookup(key) is not None


def all_specs() -> list[KeySpec]:
    """Every exactly-named key, in registry (section) order."""
    return list(REGISTRY.values())


def sections() -> list[str]:
    seen: dict[str, None] = {}
    for spec in REGISTRY.values():
        seen.setdefault(spec.section, None)
    return list(seen)


def specs_in_section(section_name: str) -> list[KeySpec]:
    return [spec for spec in REGISTRY.values() if spec.section == section_name]


class _DefaultsOnly:
    """Resolves derived defaults against a config in which nothing is set."""

    def __init__(self, mode: str | None):
        self.mode = mode

    def is_set(self, key: str) -> bool:
        return False

    def value(self, key: str) -> Any:
        return resolve_default(get_spec(key), self.mode, self)


def resolve_default(spec: KeySpec, mode: str | None, resolver: DefaultResolver) -> Any:
    """The effective default of ``spec`` in ``mode``, computing derived ones."""
    default = spec.default_for(mode)
    if isinstance(default, DerivedDefault):
        return default.compute(resolver)
    return default


def default_value(key: str, mode: str | None = None) -> Any:
    """Default of ``key`` in ``mode`` when the config sets nothing at all."""
    check_mode(mode)
    return resolve_default(get_spec(key), mode, _DefaultsOnly(mode))


def suggest_key(key: str) -> str | None:
    """The registered key closest to a misspelt one, if any is close."""
    lowered = {name.lower(): name for name in REGISTRY}
    if key.lower() in lowered:
        return lowered[key.lower()]
    matches = difflib.get_close_matches(key, list(REGISTRY), n=1, cutoff=0.8)
    return matches[0] if matches else None
