"""Data and helpers behind the GTP commands that read and change parameters
while the engine runs: ``kata-list-params``, ``kata-get-param``,
``kata-get-params``, ``kata-set-param`` and ``kata-set-params``.

KataGo's rules, reproduced here:

* Readable: nine engine-level parameters (:data:`GTP_ENGINE_PARAMS`) plus the
  search parameters of :data:`REPORTED_SEARCH_PARAMS`, which are read from the
  genmove parameter set. ``kata-list-params`` lists the engine ones first, then
  the search ones in alphabetical order (KataGo builds them as a JSON object).
* Settable: any key the GTP engine's search-parameter loading reads, plus
  allowResignation, ponderingEnabled, delayMoveScale and delayMoveMax. Values
  are validated exactly like config values. Setting a key with no value
  returns it to its default.
* Refused: dynamicPlayoutDoublingAdvantageCapPerOppLead and
  avoidRepeatedPatternUtility (handled specially by GTP), and changes to
  nodeTableShardsPowerOfTwo, useEvalCache, evalCacheMinVisits after startup.

Values print as KataGo prints them: search parameters as JSON values, engine
parameters as plain text (``%g`` numbers, ``true``/``false``).
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from katacli.config import Config, ConfigError, Enabled
from katacli.config_keys.fields import build_settings, config_field
from katacli.search.params import SearchParams, field_of_key, gtp_search_params

# Engine-level parameters, in the order kata-list-params reports them.
GTP_ENGINE_PARAMS: tuple[str, ...] = (
    "analysisWideRootNoise", "analysisIgnorePreRootHistory", "genmoveAntiMirror", "antiMirror",
    "humanSLProfile", "allowResignation", "ponderingEnabled", "delayMoveScale", "delayMoveMax",
)
# Settable keys that live in the engine rather than in SearchParams.
ENGINE_STATE_KEYS: tuple[str, ...] = ("allowResignation", "ponderingEnabled", "delayMoveScale", "delayMoveMax")
# SearchParams fields KataGo leaves out of its report: special GTP handling
# (antiMirror, avoidRepeatedPatternUtility, humanSLProfile), fixed at startup,
# or not a parameter at all (avoidMYTDaggerHackPla); and katacli's own (searchPipelining,
# numLeafFeatureThreads), so that kata-list-params and kata-get-param answer exactly as KataGo's do.
_UNREPORTED_SEARCH_FIELDS = frozenset({
    "avoidMYTDaggerHackPla", "avoidRepeatedPatternUtility", "antiMirror", "humanSLProfile",
    "useEvalCache", "evalCacheMinVisits", "nodeTableShardsPowerOfTwo", "searchPipelining",
    "numLeafFeatureThreads",
})
REPORTED_SEARCH_PARAMS: tuple[str, ...] = tuple(sorted(
    key for key in SearchParams().to_key_dict() if key not in _UNREPORTED_SEARCH_FIELDS
))
# Keys kata-set-param refuses outright.
NOT_SETTABLE_AT_RUNTIME: tuple[str, ...] = ("dynamicPlayoutDoublingAdvantageCapPerOppLead", "avoidRepeatedPatternUtility")
# Keys that may be "set" only to the value they already have.
FIXED_AFTER_STARTUP: tuple[str, ...] = ("nodeTableShardsPowerOfTwo", "useEvalCache", "evalCacheMinVisits")
# How KataGo prints a player that is not set.
NO_PLAYER_TEXT = "E"
SET_PARAM_ORIGIN = "kata-set-param"
SET_PARAMS_ERROR_PREFIX = "Could not set params: "


class ParamError(Exception):
    """A rejected parameter command; the message is the GTP error text."""


@dataclass(frozen=True)
class GtpRuntimeParams:
    """Everything kata-get-param can report and kata-set-param can change."""

    genmove: SearchParams
    analysis: SearchParams
    allow_resignation: bool = config_field("allowResignation")
    pondering_enabled: bool = config_field("ponderingEnabled")
    delay_move_scale: float = config_field("delayMoveScale")
    delay_move_max: float = config_field("delayMoveMax")

    @classmethod
    def from_config(cls, cfg: Config, *, has_human_model: bool = False) -> "GtpRuntimeParams":
        genmove, analysis = gtp_search_params(cfg, has_human_model=has_human_model)
        return build_settings(cls, cfg, "gtp", genmove=genmove, analysis=analysis)


def list_params() -> list[str]:
    """Names reported by kata-list-params, in KataGo's order."""
    return list(GTP_ENGINE_PARAMS) + list(REPORTED_SEARCH_PARAMS)


def _json_ready(value: Any) -> Any:
    if isinstance(value, Enabled):
        return value.value
    return value


def _search_param_json(params: SearchParams, key: str) -> Any:
    value = params.get_by_key(key)
    if key == "playoutDoublingAdvantagePla" and value is None:
        return NO_PLAYER_TEXT
    return _json_ready(value)


def _plain_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "%g" % value
    return str(value)


def _engine_param_text(name: str, state: GtpRuntimeParams) -> str:
    values = {
        "analysisWideRootNoise": state.analysis.wide_root_noise,
        "analysisIgnorePreRootHistory": state.analysis.ignore_pre_root_history,
        "genmoveAntiMirror": state.genmove.anti_mirror,
        "antiMirror": state.analysis.anti_mirror,
        "humanSLProfile": state.genmove.human_sl_profile,
        "allowResignation": state.allow_resignation,
        "ponderingEnabled": state.pondering_enabled,
        "delayMoveScale": state.delay_move_scale,
        "delayMoveMax": state.delay_move_max,
    }
    return _plain_text(values[name])


def get_param_text(name: str, state: GtpRuntimeParams) -> str:
    """Response text of ``kata-get-param NAME``; ParamError for unknown names."""
    if name in GTP_ENGINE_PARAMS:
        return _engine_param_text(name, state)
    if name in REPORTED_SEARCH_PARAMS:
        return json.dumps(_search_param_json(state.genmove, name))
    raise ParamError(f"Invalid parameter: {name}")


def get_params_json(state: GtpRuntimeParams) -> str:
    """Response text of ``kata-get-params``: one JSON object, keys sorted.

    Like KataGo, search parameters keep their JSON types while the engine
    parameters are given as strings.
    """
    report: dict[str, Any] = {key: _search_param_json(state.genmove, key) for key in REPORTED_SEARCH_PARAMS}
    for name in GTP_ENGINE_PARAMS:
        report[name] = _engine_param_text(name, state)
    return json.dumps(report, sort_keys=True, separators=(",", ":"))


def parse_set_param_args(args: Sequence[str]) -> dict[str, str]:
    """Arguments of ``kata-set-param NAME [VALUE]``; no value means "back to default"."""
    if len(args) not in (1, 2):
        raise ParamError(f"Expected one or two arguments for kata-set-param but got '{' '.join(args)}'")
    return {args[0]: args[1] if len(args) == 2 else ""}


def parse_set_params_json(text: str) -> dict[str, str]:
    """Argument of ``kata-set-params {JSON object}``; non-string values are re-serialized."""
    if not text.strip():
        raise ParamError(f"Expected argument for kata-set-params but got '{text}'")
    try:
        settings = json.loads(text)
    except (ValueError, RecursionError) as exc:  # also numbers too long to convert, nesting too deep
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise ParamError(f"{SET_PARAMS_ERROR_PREFIX}argument is not valid JSON ({reason})") from None
    if not isinstance(settings, dict):
        raise ParamError(f"{SET_PARAMS_ERROR_PREFIX}Argument to kata-set-params must be a json object")
    return {key: value if isinstance(value, str) else json.dumps(value) for key, value in settings.items()}


def _validate_alone(updates: Mapping[str, str], current: GtpRuntimeParams, has_human_model: bool) -> None:
    """Check the updates on their own, as KataGo does, before touching anything."""
    clean = Config({k: v for k, v in updates.items() if v != ""}, source=SET_PARAM_ORIGIN, mode="gtp")
    if "numSearchThreads" not in clean:
        clean.set("numSearchThreads", current.genmove.num_search_threads)
    gtp_search_params(clean, has_human_model=has_human_model)
    for key in NOT_SETTABLE_AT_RUNTIME:
        if key in updates:
            raise ParamError(f"{SET_PARAMS_ERROR_PREFIX}Cannot be overridden in kata-set-param: {key}")
    for key in ENGINE_STATE_KEYS:
        if key in clean:
            clean.get(key, "gtp")
    for key in clean.unused_keys():
        raise ParamError(f"{SET_PARAMS_ERROR_PREFIX}Unrecognized or non-overridable parameter in kata-set-params: {key}")


def apply_param_updates(
    cfg: Config,
    current: GtpRuntimeParams,
    updates: Mapping[str, str],
    *,
    has_human_model: bool = False,
) -> GtpRuntimeParams:
    """Apply kata-set-param(s) updates; returns the new parameters.

    On success the updates are also written into ``cfg`` (so later
    kata-set-param calls and the config's defaults see them); on failure
    ``cfg`` is unchanged and ParamError carries the GTP error text. Warning
    about a humanSLProfile that the loaded models cannot use is left to the
    engine, which knows the models.
    """
    try:
        _validate_alone(updates, current, has_human_model)
        working = cfg.copy()
        working.apply_overrides(dict(updates), origin=SET_PARAM_ORIGIN)
        genmove, analysis = gtp_search_params(working, has_human_model=has_human_model)

        def engine_value(key: str, fallback: Any) -> Any:
            return working.get(key, "gtp") if key in working else fallback

        updated = replace(
            current,
            genmove=genmove,
            analysis=analysis,
            allow_resignation=engine_value("allowResignation", current.allow_resignation),
            pondering_enabled=engine_value("ponderingEnabled", current.pondering_enabled),
            delay_move_scale=engine_value("delayMoveScale", current.delay_move_scale),
            delay_move_max=engine_value("delayMoveMax", current.delay_move_max),
        )
    except ConfigError as exc:
        raise ParamError(f"{SET_PARAMS_ERROR_PREFIX}{exc}") from None
    for key in FIXED_AFTER_STARTUP:
        field_name = field_of_key(key)
        for new, old in ((updated.genmove, current.genmove), (updated.analysis, current.analysis)):
            if getattr(new, field_name) != getattr(old, field_name):
                raise ParamError(f"{SET_PARAMS_ERROR_PREFIX}Cannot change {key} after initialization")
    # The config has served its purpose for startup warnings; from here on only
    # the values matter, so nothing in it should be reported as unused.
    cfg.mark_used_with_prefix("")
    cfg.apply_overrides(dict(updates), origin=SET_PARAM_ORIGIN)
    return updated
