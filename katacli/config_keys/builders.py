"""Short constructors for :class:`KeySpec`, so the key tables read like tables.

Each builder returns a spec without a section; :func:`section` stamps the
section name on a list of them. Keyword arguments go straight to KeySpec
(``mode_defaults``, ``required_in``, ``unsupported`` ...).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Iterable

from katacli.config_keys.spec import Enabled, KeySpec, ValueKind

# KataGo's `setupFor` profiles, as sets of our modes. Many search defaults
# differ between the interactive engines (and benchmark) on one side and
# self-play on the other.
INTERACTIVE_MODES = ("gtp", "analysis")


def for_modes(modes: Iterable[str], value: Any) -> dict[str, Any]:
    """``{mode: value}`` for each mode, to build ``mode_defaults``."""
    return {mode: value for mode in modes}


def section(name: str, specs: Iterable[KeySpec]) -> list[KeySpec]:
    return [dataclasses.replace(spec, section=name) for spec in specs]


def _spec(name: str, kind: ValueKind, default: Any, description: str, **extra: Any) -> KeySpec:
    if "required_in" in extra:
        extra["required_in"] = frozenset(extra["required_in"])
    section_name = extra.pop("section", "")
    return KeySpec(name=name, kind=kind, section=section_name, description=description, default=default, **extra)


def int_key(name: str, default: Any, lo: float | None, hi: float | None, description: str, **extra: Any) -> KeySpec:
    return _spec(name, ValueKind.INT, default, description, minimum=lo, maximum=hi, **extra)


def float_key(name: str, default: Any, lo: float | None, hi: float | None, description: str, **extra: Any) -> KeySpec:
    return _spec(name, ValueKind.FLOAT, default, description, minimum=lo, maximum=hi, **extra)


def bool_key(name: str, default: Any, description: str, **extra: Any) -> KeySpec:
    return _spec(name, ValueKind.BOOL, default, description, **extra)


def str_key(name: str, default: Any, description: str, **extra: Any) -> KeySpec:
    return _spec(name, ValueKind.STR, default, description, **extra)


def choice_key(name: str, default: Any, choices: Iterable[str], description: str, **extra: Any) -> KeySpec:
    return _spec(name, ValueKind.STR, default, description, choices=tuple(choices), **extra)


def enabled_key(name: str, description: str, **extra: Any) -> KeySpec:
    """A true/false/auto key; KataGo's default for all of them is auto."""
    return _spec(name, ValueKind.ENABLED, Enabled.AUTO, description, **extra)


def player_key(name: str, description: str, **extra: Any) -> KeySpec:
    return _spec(name, ValueKind.PLAYER, None, description, **extra)


def list_key(
    name: str,
    kind: ValueKind,
    default: Any,
    description: str,
    lo: float | None = None,
    hi: float | None = None,
    **extra: Any,
) -> KeySpec:
    return _spec(name, kind, default, description, minimum=lo, maximum=hi, **extra)
