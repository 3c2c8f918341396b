"""The vocabulary of the key registry: what one config key is.

A :class:`KeySpec` says how to parse a key, what range is legal, what its
default is, and which section of a config it belongs to. Defaults can differ
by command ("mode"): KataGo reads the same key with different fallbacks in
``gtp``, ``analysis``, ``selfplay`` and ``benchmark``. A few defaults depend
on other keys (``rootPolicyTemperatureEarly`` falls back to whatever
``rootPolicyTemperature`` is); those are :class:`DerivedDefault` objects that
compute the value from the rest of the config.

:class:`KeyFamily` covers keys whose names carry a number or a board size,
such as ``cudaDeviceToUseThread3`` or ``avoidSgf2PatternUtility``.
"""
from __future__ import annotations

import dataclasses
import enum
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Protocol
from katacli._core.constants import MAX_BOARD_LEN, NUM_SYMMETRIES  # noqa: F401  (the core's numbers, defined once)

# Commands whose defaults the registry knows. ``benchmark`` reads a GTP config
# but KataGo loads its search parameters with a profile of its own.
MODES: tuple[str, ...] = ("gtp", "analysis", "selfplay", "benchmark")

# KataGo's stand-in for "no visit or playout limit" (1 << 50).
UNLIMITED_VISITS = 1 << 50
# KataGo's stand-in for "no time limit", in seconds.
UNLIMITED_TIME = 1.0e20
# Bounds KataGo puts on any komi a user may configure.
MIN_USER_KOMI = -400.0
MAX_USER_KOMI = 400.0


class ValueKind(str, enum.Enum):
    """How the text of a value is turned into a Python value."""

    INT = "int"
    FLOAT = "float"
    BOOL = "bool"
    STR = "str"
    # true/false/auto, KataGo's enabled_t; parsed into config.Enabled.
    ENABLED = "enabled"
    # BLACK/WHITE (or B/W), case-insensitive; parsed into "B" or "W".
    PLAYER = "player"
    LIST_INT = "list_int"
    LIST_FLOAT = "list_float"
    LIST_STR = "list_str"
    LIST_BOOL = "list_bool"
    # Comma-separated "X-Y" pairs, as in bSizesXY = 9-9,13-19.
    INT_PAIRS = "int_pairs"


class Enabled(str, enum.Enum):
    """KataGo's three-way switch (``enabled_t``): true, false or auto."""

    TRUE = "true"
    FALSE = "false"
    AUTO = "auto"

    def resolve(self, auto_value: bool) -> bool:
        """The switch as a bool, using ``auto_value`` when it is AUTO."""
        if self is Enabled.AUTO:
            return auto_value
        return self is Enabled.TRUE

    def __str__(self) -> str:
        return self.value


class DefaultResolver(Protocol):
    """What a derived default may ask about the config it is resolving in."""

    def is_set(self, key: str) -> bool: ...

    def value(self, key: str) -> Any: ...


@dataclass(frozen=True)
class DerivedDefault:
    """A default computed from other keys of the same config."""

    explanation: str
    compute: Callable[[DefaultResolver], Any] = field(compare=False)

    def __repr__(self) -> str:
        return f"<{self.explanation}>"


def same_as(other_key: str) -> DerivedDefault:
    """Default that copies the effective value of ``other_key``."""
    return DerivedDefault(f"same as {other_key}", lambda r: r.value(other_key))


@dataclass(frozen=True)
class Unsupported:
    """A key katacli reads but cannot act on (yet). Setting it to any value but ``off`` (None: to any
    value at all) gets a one-line warning at start-up, or is refused there when ``refuse``: a key is
    never silently ignored."""

    reason: str
    off: Any = None
    refuse: bool = False
    modes: frozenset[str] | None = None  # the commands that cannot act on it (None: all of them)

    def applies_to(self, value: Any, mode: str | None = None) -> bool:
        if self.modes is not None and mode not in self.modes:
            return False
        return self.off is None or value != self.off


@dataclass(frozen=True)
class KeySpec:
    """Everything the project knows about one config key."""

    name: str
    kind: ValueKind
    section: str
    description: str
    # Value used when the key is absent. None means "no value" (the key is
    # optional and its absence has a meaning of its own, e.g. no log file).
    default: Any = None
    # Per-mode replacements for ``default``.
    mode_defaults: dict[str, Any] = field(default_factory=dict)
    minimum: float | None = None
    maximum: float | None = None
    # Per-mode replacements for the bounds, as {mode: (minimum, maximum)}.
    mode_bounds: dict[str, tuple[float | None, float | None]] = field(default_factory=dict)
    choices: tuple[str, ...] | None = None
    choices_ignore_case: bool = False
    # Modes in which KataGo refuses to start without this key.
    required_in: frozenset[str] = frozenset()
    # KataGo parses these as 32-bit floats; values are rounded accordingly.
    float32: bool = False
    # Accepted so KataGo configs load cleanly, but katacli does not act on it (see Unsupported).
    unsupported: Unsupported | None = None

    def default_for(self, mode: str | None) -> Any:
        """Raw default for ``mode`` (may be a :class:`DerivedDefault`)."""
        if mode is not None and mode in self.mode_defaults:
            return self.mode_defaults[mode]
        return self.default

    def bounds_for(self, mode: str | None) -> tuple[float | None, float | None]:
        if mode is not None and mode in self.mode_bounds:
            return self.mode_bounds[mode]
        return self.minimum, self.maximum

    def is_required(self, mode: str | None) -> bool:
        return mode is not None and mode in self.required_in

    def renamed(self, name: str) -> "KeySpec":
        return dataclasses.replace(self, name=name)


@dataclass(frozen=True)
class KeyFamily:
    """Keys whose names follow a pattern, e.g. ``cudaDeviceToUseThread<N>``."""

    pattern: str  # a regular expression matched against the whole key name
    template: KeySpec  # the spec every member shares; its name is a readable pattern
    _compiled: re.Pattern = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_compiled", re.compile(self.pattern))

    def matches(self, key: str) -> bool:
        return self._compiled.fullmatch(key) is not None

    def spec_for(self, key: str) -> KeySpec:
        return self.template.renamed(key)
