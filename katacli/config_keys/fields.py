"""Settings dataclasses built from the key registry: one way to read settings.

A settings class declares each field that is a config key with :func:`config_field`; the field
carries its key, and optionally takes its dataclass default from the registry, so a default is
written once (in the ``*_keys.py`` table). :func:`build_settings` reads every such field
through ``Config.get``, which parses, range-checks and defaults by the registry and raises the
registry's one-line ``ConfigError`` for a bad value. Fields that combine keys (rules from several
keys, fallbacks between spellings) stay plain fields and are passed in by the caller.

    >>> from dataclasses import dataclass
    >>> from katacli.config import Config
    >>> @dataclass(frozen=True)
    ... class Limits:
    ...     max_visits: int = config_field("maxVisits", default_mode="gtp")
    ...     lag_buffer: float = config_field("lagBuffer", default_mode="gtp")
    >>> build_settings(Limits, Config({"maxVisits": "50"}), "gtp")
    Limits(max_visits=50, lag_buffer=0.0)
    >>> keys_read_by(Limits)
    ('maxVisits', 'lagBuffer')
"""
from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from katacli import config_keys

if TYPE_CHECKING:
    from katacli.config import Config

KEY_METADATA = "config_key"  # field metadata: the KataGo config key of the field
FROM_CONFIG_METADATA = "from_config"  # field metadata: read from the config (False: reported only)
CONVERT_METADATA = "convert"  # field metadata: applied to the parsed value (e.g. list -> tuple)
DEFAULT_MODE_METADATA = "default_mode"  # field metadata: the mode whose registry default the field has


class _NoDefault:
    def __repr__(self) -> str:
        return "NO_DEFAULT"


# ``default_mode`` of a field the caller must always give (no dataclass default).
NO_DEFAULT: Any = _NoDefault()
# ``default_mode`` of a key whose default is the same in every command (the registry's plain default).
ANY_MODE = None

S = TypeVar("S")


def config_field(key: str, *, default_mode: str | None = NO_DEFAULT,
                 convert: Callable[[Any], Any] | None = None) -> Any:
    """A dataclass field read from config key ``key``.

    With ``default_mode`` (a mode, or ANY_MODE) the field's default is the registry's default of the
    key in that mode; without it the field has no default. ``convert`` turns the parsed value (and a
    default) into the field's type, e.g. ``tuple`` for a list key kept as a tuple.
    """
    metadata = {KEY_METADATA: key, FROM_CONFIG_METADATA: True, CONVERT_METADATA: convert}
    config_keys.get_spec(key)  # an unregistered key is a programming error: fail at import time
    if default_mode is NO_DEFAULT:
        return dataclasses.field(metadata=metadata)
    metadata[DEFAULT_MODE_METADATA] = default_mode
    default = config_keys.default_value(key, default_mode)
    if convert is not None and default is not None:
        default = convert(default)
    if isinstance(default, (list, dict, set)):
        return dataclasses.field(default_factory=lambda: type(default)(default), metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def fixed_field(key: str, value: Any) -> Any:
    """A field reported under ``key`` (as KataGo names it) but never read from a config."""
    return dataclasses.field(default=value, metadata={KEY_METADATA: key, FROM_CONFIG_METADATA: False})


def config_fields(cls: type) -> tuple[dataclasses.Field, ...]:
    """The fields of ``cls`` read from a config, in declaration order."""
    return tuple(f for f in dataclasses.fields(cls) if f.metadata.get(FROM_CONFIG_METADATA))


def keys_read_by(cls: type) -> tuple[str, ...]:
    """The config keys the fields of ``cls`` read (keys combined by hand are not listed)."""
    return tuple(f.metadata[KEY_METADATA] for f in config_fields(cls))


def fields_by_key(cls: type) -> dict[str, str]:
    """``{config key: field name}`` for every field of ``cls`` that names a key (reported-only ones too)."""
    return {f.metadata[KEY_METADATA]: f.name for f in dataclasses.fields(cls) if KEY_METADATA in f.metadata}


def read_config_fields(cls: type, cfg: "Config", mode: str | None, *, required: bool = True) -> dict[str, Any]:
    """``{field name: value}`` for every config field of ``cls``, read with ``mode``'s defaults.

    ``required=False`` reads keys that ``mode`` requires as optional (their default when unset), as
    KataGo's match reads the self-play runner keys.
    """
    values = {}
    for f in config_fields(cls):
        key = f.metadata[KEY_METADATA]
        value = cfg.get(key, mode) if required or cfg.is_set(key) else cfg.default(key, mode)
        convert = f.metadata.get(CONVERT_METADATA)
        values[f.name] = convert(value) if convert is not None and value is not None else value
    return values


def build_settings(cls: type[S], cfg: "Config", mode: str | None, *, required: bool = True, **computed: Any) -> S:
    """``cls`` with every config field read from ``cfg`` and the other fields from ``computed``.

    Raises ``ConfigError`` (one line naming the key and where it was set) for a bad value, or for a
    key ``mode`` requires when the config must be complete (see :func:`read_config_fields`).
    """
    return cls(**read_config_fields(cls, cfg, mode, required=required), **computed)
