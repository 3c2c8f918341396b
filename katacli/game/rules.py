"""Go rules as KataGo models them: presets, the JSON and compact text forms, komi checks.

Everything here reproduces KataGo 1.17.2's user-visible behaviour:

* ``Rules.parse`` accepts what KataGo's rules parser accepts (preset names with
  all their spellings, a JSON object, or the legacy compact ``koXscoreY...``
  string) and applies the same defaults (tax from scoring, komi from the preset
  or from scoring/button).
* ``Rules.to_json_string`` prints exactly what ``kata-get-rules`` prints:
  keys sorted (KataGo's JSON objects are ordered maps), no spaces.
* ``Rules.updated`` is ``kata-set-rule KEY VALUE``; ``parse_kgs_rules`` is ``kgs-rules``.
* ``Rules.nice_name`` / ``to_string`` are what KataGo logs and writes into SGF ``RU``.

The integer values of the ko, scoring and tax enums are KataGo's own; see
WhiteHandicapBonus for its codes. ``to_core_tuple`` is what the Cython core
(katacli._core.game_state.GameState) takes.
"""
from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, replace
from enum import IntEnum

from katacli._core.rules_value import CoreRules
from katacli.c_numbers import round_half_away


class RulesError(ValueError):
    """A rules name, field value or komi that KataGo would refuse."""


class KoRule(IntEnum):
    SIMPLE = 0
    POSITIONAL = 1
    SITUATIONAL = 2
    SPIGHT = 3  # accepted by KataGo 1.17.2, though no preset uses it


class ScoringRule(IntEnum):
    AREA = 0
    TERRITORY = 1


class TaxRule(IntEnum):
    NONE = 0
    SEKI = 1
    ALL = 2


class WhiteHandicapBonus(IntEnum):
    """How many bonus points White gets per handicap stone.

    The codes follow katacli's core (katacli/_core/rules.pxd: N-1 is 1, N is 2);
    KataGo's rules.h numbers them the other way round (WHB_N = 1,
    WHB_N_MINUS_ONE = 2). The number never leaves the process (JSON, SGF and
    logs use the spellings "0" / "N-1" / "N"), so only core and Python must agree.
    """

    ZERO = 0
    N_MINUS_ONE = 1
    N = 2

    @property
    def text(self) -> str:
        return _WHB_TEXT[self]

    @classmethod
    def from_text(cls, text: str) -> "WhiteHandicapBonus":
        for value, spelling in _WHB_TEXT.items():
            if spelling == text:
                return value
        raise RulesError(f"Rules::parseWhiteHandicapBonusRule: Invalid whiteHandicapBonus rule: {text}")


_WHB_TEXT = {WhiteHandicapBonus.ZERO: "0", WhiteHandicapBonus.N_MINUS_ONE: "N-1", WhiteHandicapBonus.N: "N"}

# Range KataGo accepts for komi from users (GTP `komi`, JSON rules).
MIN_USER_KOMI = -400.0
# Komi is kept within this many points beyond the board area either way (KataGo's NNPos::KOMI_CLIP_RADIUS).
KOMI_CLIP_RADIUS = 20.0
MAX_USER_KOMI = 400.0
DEFAULT_KOMI = 7.5
TERRITORY_DEFAULT_KOMI = 6.5
BUTTON_DEFAULT_KOMI = 7.0
# Looser bound KataGo applies to a komi embedded in the compact rules string.
COMPACT_KOMI_LIMIT = 1e5

# KataGo's Global::trim whitespace set.
_WHITESPACE = " \t\r\n\v\f"
# What C++ `istream >> float` accepts (no inf/nan/hex, no Python-only underscores).
_C_FLOAT_RE = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)   # (strtod: no other digits)


def _parse_enum(enum_cls, text: str, what: str):
    try:
        return enum_cls[text]
    except KeyError:
        raise RulesError(f"Rules::parse{what}Rule: Invalid {what.lower()} rule: {text}") from None


def parse_c_float(text: str) -> float | None:
    """Parse like KataGo's tryStringToFloat (trimmed, float32); None when it would fail."""
    stripped = text.strip(_WHITESPACE)
    if not _C_FLOAT_RE.fullmatch(stripped):
        return None
    value = float(stripped)
    if math.isinf(value):   # too many digits for a double: a C++ stream fails there too
        return None
    try:
        return to_float32(value)
    except OverflowError:
        return None


def to_float32(value: float) -> float:
    """Round to the nearest float32, as KataGo stores komi (raises OverflowError when out of range)."""
    rounded = struct.unpack("f", struct.pack("f", value))[0]
    if math.isinf(rounded) and not math.isinf(value):
        raise OverflowError(f"{value} is out of float32 range")
    return rounded


def komi_is_int_or_half_int(komi: float) -> bool:
    return math.isfinite(komi) and (komi * 2) == int(komi * 2)


def is_valid_user_komi(komi: float) -> bool:
    """KataGo's check on user komi: finite, within [-400, 400], integer or half-integer."""
    return komi_is_int_or_half_int(komi) and MIN_USER_KOMI <= komi <= MAX_USER_KOMI


def parse_komi(text: str) -> float:
    """The argument of GTP `komi`, with KataGo's three error messages."""
    komi = parse_c_float(text)
    if komi is None:
        raise RulesError(f"Expected single float argument for komi but got '{text}'")
    if math.isnan(komi) or komi < MIN_USER_KOMI or komi > MAX_USER_KOMI:
        raise RulesError("unacceptable komi")
    if not komi_is_int_or_half_int(komi):
        raise RulesError("komi must be an integer or half-integer")
    return komi


def round_and_clip_komi(komi: float, x_size: int, y_size: int) -> float:
    """Komi on the half-point grid (halves rounded away from zero, as C's round), within
    KOMI_CLIP_RADIUS points beyond the board area either way (KataGo's PlayUtils::roundAndClipKomi)."""
    limit = KOMI_CLIP_RADIUS + x_size * y_size
    komi = min(max(komi, -limit), limit)
    return 0.5 * round_half_away(2.0 * komi)


def format_komi(komi: float) -> str:
    """Komi as C++ streams print it (`get_komi`, SGF KM, toString): 6 significant digits, no trailing zeros."""
    return format(komi, "g")


def _parse_bool(text: str) -> bool:
    lowered = text.strip(_WHITESPACE).lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    raise RulesError(f"could not parse bool: {text}")


@dataclass(frozen=True)
class Rules:
    """One complete ruleset. Defaults are KataGo's (Tromp-Taylor-like, komi 7.5)."""

    ko: KoRule = KoRule.POSITIONAL
    scoring: ScoringRule = ScoringRule.AREA
    tax: TaxRule = TaxRule.NONE
    multi_stone_suicide_legal: bool = True
    has_button: bool = False
    white_handicap_bonus: WhiteHandicapBonus = WhiteHandicapBonus.ZERO
    # Informational: whether passing before capturing dead stones is fine (area scoring only).
    friendly_pass_ok: bool = False
    komi: float = DEFAULT_KOMI

    def __post_init__(self) -> None:
        set_field = object.__setattr__
        try:
            set_field(self, "ko", KoRule(self.ko))
            set_field(self, "scoring", ScoringRule(self.scoring))
            set_field(self, "tax", TaxRule(self.tax))
            set_field(self, "white_handicap_bonus", WhiteHandicapBonus(self.white_handicap_bonus))
        except ValueError as e:
            raise RulesError(f"Invalid rules field: {e}") from None
        for name in ("multi_stone_suicide_legal", "has_button", "friendly_pass_ok"):
            value = getattr(self, name)
            if not isinstance(value, bool):
                raise RulesError(f"Rules.{name} must be a bool, got {value!r}")
        try:
            komi = to_float32(float(self.komi))
        except (OverflowError, TypeError, ValueError):
            komi = math.nan
        if not is_valid_user_komi(komi):
            raise RulesError(f"Komi value is not a half-integer or is too extreme: {self.komi}")
        set_field(self, "komi", komi)

    # ---- parsing ---------------------------------------------------------------
    @classmethod
    def parse(cls, text: str) -> "Rules":
        """Any rules text KataGo accepts (config `rules`, SGF `RU`), komi included or defaulted."""
        return _parse_rules(text, allow_komi=True)

    @classmethod
    def parse_without_komi(cls, text: str, komi: float) -> "Rules":
        """`kata-set-rules TEXT`: like parse, but komi may not be named and is kept from `komi`."""
        return replace(_parse_rules(text, allow_komi=False), komi=komi)

    @classmethod
    def preset(cls, name: str) -> "Rules":
        """A preset by any of its accepted spellings (case-insensitive), with its default komi."""
        key = name.strip(_WHITESPACE).lower()
        if key not in PRESET_ALIASES:
            raise RulesError(f"Unknown rules preset: {name}")
        return PRESETS[PRESET_ALIASES[key]]

    def updated(self, key: str, value: str) -> "Rules":
        """`kata-set-rule KEY VALUE`: one field changed; no tax or komi re-defaulting, as in KataGo."""
        key = key.strip(_WHITESPACE)
        value = value.upper().strip(_WHITESPACE)
        if key == "ko":
            return replace(self, ko=_parse_enum(KoRule, value, "Ko"))
        if key in ("score", "scoring"):
            return replace(self, scoring=_parse_enum(ScoringRule, value, "Scoring"))
        if key == "tax":
            return replace(self, tax=_parse_enum(TaxRule, value, "Tax"))
        if key == "suicide":
            return replace(self, multi_stone_suicide_legal=_parse_bool(value))
        if key == "hasButton":
            return replace(self, has_button=_parse_bool(value))
        if key == "whiteHandicapBonus":
            return replace(self, white_handicap_bonus=WhiteHandicapBonus.from_text(value))
        if key == "friendlyPassOk":
            return replace(self, friendly_pass_ok=_parse_bool(value))
        raise RulesError(f"Unknown rules option: {key}")

    def with_komi(self, komi: float) -> "Rules":
        return replace(self, komi=komi)

    # ---- comparisons -----------------------------------------------------------
    def equals_ignoring_komi(self, other: "Rules") -> bool:
        return replace(self, komi=other.komi) == other

    def game_result_will_be_integer(self) -> bool:
        """Integer komi and no button, or half-integer komi with the half-point button."""
        return (self.komi == int(self.komi)) != self.has_button

    # ---- output ----------------------------------------------------------------
    def to_core_tuple(self) -> CoreRules:
        """The core's typed rules value (ko, scoring, tax, multi-stone suicide, button, white handicap
        bonus, friendly pass, komi)."""
        return CoreRules(
            int(self.ko),
            int(self.scoring),
            int(self.tax),
            self.multi_stone_suicide_legal,
            self.has_button,
            int(self.white_handicap_bonus),
            self.friendly_pass_ok,
            self.komi,
        )

    def to_json_dict(self, include_komi: bool = False, omit_defaults: bool = False) -> dict:
        """KataGo's JSON fields. omit_defaults drops button/whb/friendlyPassOk when at Tromp-Taylor values."""
        out: dict = {
            "ko": self.ko.name,
            "scoring": self.scoring.name,
            "tax": self.tax.name,
            "suicide": self.multi_stone_suicide_legal,
        }
        if not omit_defaults or self.has_button:
            out["hasButton"] = self.has_button
        if not omit_defaults or self.white_handicap_bonus != WhiteHandicapBonus.ZERO:
            out["whiteHandicapBonus"] = self.white_handicap_bonus.text
        if not omit_defaults or self.friendly_pass_ok:
            out["friendlyPassOk"] = self.friendly_pass_ok
        if include_komi:
            out["komi"] = self.komi
        return out

    def to_json_string(self, include_komi: bool = False, omit_defaults: bool = False) -> str:
        """Byte-identical to KataGo's JSON (the default is the `kata-get-rules` answer)."""
        return json.dumps(
            self.to_json_dict(include_komi, omit_defaults), sort_keys=True, separators=(",", ":")
        )

    def to_string_no_komi(self) -> str:
        """KataGo's compact form, e.g. `koPOSITIONALscoreAREAtaxNONEsui1` (what it writes in SGF RU)."""
        parts = [f"ko{self.ko.name}", f"score{self.scoring.name}", f"tax{self.tax.name}"]
        parts.append(f"sui{int(self.multi_stone_suicide_legal)}")
        if self.has_button:
            parts.append("button1")
        if self.white_handicap_bonus != WhiteHandicapBonus.ZERO:
            parts.append(f"whb{self.white_handicap_bonus.text}")
        if self.friendly_pass_ok:
            parts.append("fpok1")
        return "".join(parts)

    def to_string(self) -> str:
        """KataGo's Rules::toString: the compact form followed by `komi7.5`."""
        return f"{self.to_string_no_komi()}komi{format_komi(self.komi)}"

    def nice_name(self) -> str:
        """KataGo's toStringNoKomiMaybeNice: a well-known preset name, else the compact form."""
        for name, canonical in _NICE_NAMES:
            if self.equals_ignoring_komi(PRESETS[canonical]):
                return name
        return self.to_string_no_komi()

    def matching_presets(self) -> list[str]:
        """Canonical names of every preset with exactly these fields, komi ignored."""
        return [name for name, preset in PRESETS.items() if self.equals_ignoring_komi(preset)]

    def __str__(self) -> str:
        return self.to_string()


def _preset(ko, scoring, tax, suicide, fpok, komi, whb=WhiteHandicapBonus.ZERO, button=False) -> Rules:
    return Rules(ko, scoring, tax, suicide, button, whb, fpok, komi)


_K, _S, _T, _W = KoRule, ScoringRule, TaxRule, WhiteHandicapBonus

# Canonical name -> (every spelling KataGo accepts, lower-case; the rules incl. default komi).
_PRESET_TABLE: dict[str, tuple[tuple[str, ...], Rules]] = {
    "tromp-taylor": (
        ("tromp-taylor", "tromp_taylor", "tromp taylor", "tromptaylor"),
        _preset(_K.POSITIONAL, _S.AREA, _T.NONE, True, False, 7.5),
    ),
    "chinese": (("chinese",), _preset(_K.SIMPLE, _S.AREA, _T.NONE, False, True, 7.5, _W.N)),
    "chinese-ogs": (
        ("chinese-ogs", "chineseogs", "chinese_ogs"),
        _preset(_K.POSITIONAL, _S.AREA, _T.NONE, False, True, 7.5, _W.N),
    ),
    "chinese-kgs": (
        ("chinese-kgs", "chinesekgs", "chinese_kgs"),
        _preset(_K.POSITIONAL, _S.AREA, _T.NONE, False, True, 7.5, _W.N),
    ),
    "japanese": (("japanese",), _preset(_K.SIMPLE, _S.TERRITORY, _T.SEKI, False, False, 6.5)),
    "korean": (("korean",), _preset(_K.SIMPLE, _S.TERRITORY, _T.SEKI, False, False, 6.5)),
    "stone-scoring": (
        ("stone-scoring", "stonescoring", "stone_scoring", "stone scoring",
         "ancient-area", "ancientarea", "ancient_area", "ancient area"),
        _preset(_K.SIMPLE, _S.AREA, _T.ALL, False, True, 7.5),
    ),
    "ancient-territory": (
        ("ancient-territory", "ancientterritory", "ancient_territory", "ancient territory"),
        _preset(_K.SIMPLE, _S.TERRITORY, _T.ALL, False, False, 6.5),
    ),
    "aga": (("aga",), _preset(_K.SITUATIONAL, _S.AREA, _T.NONE, False, True, 7.5, _W.N_MINUS_ONE)),
    "bga": (("bga",), _preset(_K.SITUATIONAL, _S.AREA, _T.NONE, False, True, 7.5, _W.N_MINUS_ONE)),
    "french": (("french",), _preset(_K.SITUATIONAL, _S.AREA, _T.NONE, False, True, 7.5, _W.N_MINUS_ONE)),
    "aga-button": (
        ("aga-button", "agabutton", "aga_button", "aga button"),
        _preset(_K.SITUATIONAL, _S.AREA, _T.NONE, False, True, 7.0, _W.N_MINUS_ONE, button=True),
    ),
    "new-zealand": (
        ("new-zealand", "nz", "newzealand", "new zealand", "new_zealand"),
        _preset(_K.SITUATIONAL, _S.AREA, _T.NONE, True, True, 7.0),
    ),
    "goe": (("goe",), _preset(_K.POSITIONAL, _S.AREA, _T.NONE, True, True, 7.5)),
    "ing": (("ing",), _preset(_K.POSITIONAL, _S.AREA, _T.NONE, True, True, 7.5)),
}

PRESETS: dict[str, Rules] = {name: rules for name, (_, rules) in _PRESET_TABLE.items()}
PRESET_ALIASES: dict[str, str] = {
    alias: name for name, (aliases, _) in _PRESET_TABLE.items() for alias in aliases
}

# Names KataGo's toStringNoKomiMaybeNice tries, in its order.
_NICE_NAMES = (
    ("TrompTaylor", "tromp-taylor"),
    ("Japanese", "japanese"),
    ("Chinese", "chinese"),
    ("Chinese-OGS", "chinese-ogs"),
    ("AGA", "aga"),
    ("StoneScoring", "stone-scoring"),
    ("NewZealand", "new-zealand"),
)

# `kgs-rules NAME` (kgsGtp's names) -> our preset.
KGS_RULES = {"chinese": "chinese-kgs", "aga": "aga", "japanese": "japanese", "new_zealand": "new-zealand"}


def rules_of(state) -> Rules:
    """The rules a GameState (the core's history) plays under, komi included."""
    ko, scoring, tax, suicide, button, whb, friendly, komi = state.rules_tuple
    return Rules(ko=ko, scoring=scoring, tax=tax, multi_stone_suicide_legal=suicide, has_button=button,
                 white_handicap_bonus=whb, friendly_pass_ok=friendly, komi=komi)


def parse_kgs_rules(name: str, komi: float) -> Rules:
    """`kgs-rules NAME`: like kata-set-rules but only kgsGtp's four names; `chinese` means chinese-kgs."""
    key = name.strip(_WHITESPACE).lower()
    if key not in KGS_RULES:
        raise RulesError(f"Unknown rules '{key}'")
    return PRESETS[KGS_RULES[key]].with_komi(komi)


def _default_tax(scoring: ScoringRule) -> TaxRule:
    return TaxRule.SEKI if scoring == ScoringRule.TERRITORY else TaxRule.NONE


def _default_komi(scoring: ScoringRule, has_button: bool) -> float:
    if scoring == ScoringRule.TERRITORY:
        return TERRITORY_DEFAULT_KOMI
    return BUTTON_DEFAULT_KOMI if has_button else DEFAULT_KOMI


def _parse_rules(text: str, allow_komi: bool) -> Rules:
    key = text.strip(_WHITESPACE).lower()
    if key in PRESET_ALIASES:
        return PRESETS[PRESET_ALIASES[key]]
    if text.startswith("{"):
        fields = _parse_json_fields(text, allow_komi)
    else:
        fields = _parse_compact_fields(text, allow_komi)
    # Fields not given fall back to Tromp-Taylor, except tax and komi, which follow scoring/button.
    if "tax" not in fields:
        fields["tax"] = _default_tax(fields.get("scoring", ScoringRule.AREA))
    if "komi" not in fields:
        fields["komi"] = _default_komi(fields.get("scoring", ScoringRule.AREA), fields.get("has_button", False))
    return Rules(**fields)


def _parse_json_fields(text: str, allow_komi: bool) -> dict:
    could_not_parse = RulesError(f"Could not parse rules: {text}")
    def reject_non_json_constant(name):  # Python accepts NaN/Infinity; JSON (and KataGo) does not
        raise ValueError(name)

    try:
        obj = json.loads(text, parse_constant=reject_non_json_constant)
    except (ValueError, RecursionError):  # RecursionError: nesting too deep to decode
        raise could_not_parse from None
    if not isinstance(obj, dict):
        raise could_not_parse

    def string_value(value) -> str:
        if not isinstance(value, str):
            raise could_not_parse
        return value

    def bool_value(value) -> bool:
        if not isinstance(value, bool):
            raise could_not_parse
        return value

    fields: dict = {}
    # KataGo walks the keys in sorted order, so e.g. "scoring" overrides "score".
    for key in sorted(obj):
        value = obj[key]
        if key == "ko":
            fields["ko"] = _parse_enum(KoRule, string_value(value), "Ko")
        elif key in ("score", "scoring"):
            fields["scoring"] = _parse_enum(ScoringRule, string_value(value), "Scoring")
        elif key == "tax":
            fields["tax"] = _parse_enum(TaxRule, string_value(value), "Tax")
        elif key == "suicide":
            fields["multi_stone_suicide_legal"] = bool_value(value)
        elif key == "hasButton":
            fields["has_button"] = bool_value(value)
        elif key == "whiteHandicapBonus":
            fields["white_handicap_bonus"] = WhiteHandicapBonus.from_text(string_value(value))
        elif key == "friendlyPassOk":
            fields["friendly_pass_ok"] = bool_value(value)
        elif key == "komi" and allow_komi:
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise could_not_parse
            try:
                komi = to_float32(float(value))
            except OverflowError:
                komi = math.inf
            if not is_valid_user_komi(komi):
                raise RulesError("Komi value is not a half-integer or is too extreme")
            fields["komi"] = komi
        else:
            raise RulesError(f"Unknown rules option: {key}")
    return fields


# Compact form: each key is followed by one of its spellings. Keys are tried in this
# order ("komi" before "ko", "scoring" before "score"), values too ("N-1" before "N").
_COMPACT_KEYS: tuple[tuple[str, str, tuple[tuple[str, object], ...]], ...] = (
    ("ko", "ko", tuple((k.name, k) for k in KoRule)),
    ("scoring", "scoring", tuple((s.name, s) for s in ScoringRule)),
    ("score", "scoring", tuple((s.name, s) for s in ScoringRule)),
    ("tax", "tax", tuple((t.name, t) for t in TaxRule)),
    ("sui", "multi_stone_suicide_legal", (("1", True), ("0", False))),
    ("button", "has_button", (("1", True), ("0", False))),
    ("whb", "white_handicap_bonus", (("0", _W.ZERO), ("N-1", _W.N_MINUS_ONE), ("N", _W.N))),
    ("fpok", "friendly_pass_ok", (("1", True), ("0", False))),
)


def _parse_compact_fields(text: str, allow_komi: bool) -> dict:
    could_not_parse = RulesError(f"Could not parse rules: {text}")
    rest = text.strip(_WHITESPACE)
    if not rest:
        raise could_not_parse
    fields: dict = {}
    while rest:
        if rest.startswith("komi"):
            if not allow_komi:
                raise could_not_parse
            rest = rest[len("komi"):].strip(_WHITESPACE)
            end = 0
            while end < len(rest) and not rest[end].isalpha() and rest[end] not in _WHITESPACE:
                end += 1
            komi = parse_c_float(rest[:end])
            if komi is None or not math.isfinite(komi) or abs(komi) > COMPACT_KOMI_LIMIT:
                raise could_not_parse
            if not is_valid_user_komi(komi):
                raise RulesError(f"Komi value is not a half-integer or is too extreme: {text}")
            fields["komi"] = komi
            rest = rest[end:].strip(_WHITESPACE)
            continue
        for prefix, field_name, choices in _COMPACT_KEYS:
            if rest.startswith(prefix):
                rest = rest[len(prefix):].strip(_WHITESPACE)
                for spelling, value in choices:
                    if rest.startswith(spelling):
                        fields[field_name] = value
                        rest = rest[len(spelling):].strip(_WHITESPACE)
                        break
                else:
                    raise could_not_parse
                break
        else:
            raise could_not_parse
    return fields
