"""GTP commands for rules, runtime parameters, clocks and engine information."""
from __future__ import annotations

import json
import math

from katacli.engine_common import network_supported_rules
from katacli.game.coords import BLACK, WHITE
from katacli.game.nogo import NOGO_RULES_JSON, is_nogo_rules_name
from katacli.game.rules import Rules, RulesError, parse_kgs_rules
from katacli.game.session import SessionError
from katacli.gtp.arguments import (
    MAX_TIME_LEFT_STONES, MAX_USER_INPUT_TIME, MIN_TIME_LEFT, format_cpp_double, parse_double, parse_int,
    parse_overtime_count, parse_time,
)
from katacli.gtp.clock import TIME_SETTING_KINDS, canadian_or_absolute, describe
from katacli.gtp.errors import GtpError
from katacli.gtp.handlers_game import parse_player
from katacli.gtp.protocol import Command
from katacli.gtp.runtime_params import (
    SET_PARAMS_ERROR_PREFIX, ParamError, apply_param_updates, get_param_text, get_params_json, list_params, parse_set_param_args,
    parse_set_params_json,
)
from katacli.nn.human_profile import HumanProfileError, parse_human_profile
from katacli.search.timecontrol import TimeControls, TimeSettingsError


# --------------------------------------------------------------------------- rules


def change_rules(engine, rules: Rules) -> None:
    """Replay the game under new rules (komi kept), leaving NoGo."""
    if engine.options.model_path is not None and network_supported_rules(rules) != rules:
        raise GtpError(f"Rules {rules.to_json_string()} are not supported by this neural net version")
    try:
        engine.session.set_rules(rules)
    except SessionError as exc:   # the rules changed all the same, the game kept up to the move they forbid
        raise GtpError(str(exc)) from None
    finally:
        engine.new_game_position()
        engine.nogo = False
        engine.log.info(f"Changed rules to {rules.nice_name()}")


def cmd_kata_get_rules(engine, command: Command) -> str:
    if command.args:
        raise GtpError(f"Expected no arguments for kata-get-rules but got '{command.arg_text}'")
    if engine.nogo:
        return NOGO_RULES_JSON
    return engine.rules.to_json_string()


def cmd_kata_set_rules(engine, command: Command) -> str:
    text = command.arg_text
    if is_nogo_rules_name(text):
        engine.nogo = True
        engine.log.info("Changed rules to NoGo")
        return ""
    try:
        rules = Rules.parse_without_komi(text, engine.rules.komi)
    except RulesError as exc:
        raise GtpError(f"Unknown rules '{text}', {exc}") from None
    change_rules(engine, rules)
    return ""


def cmd_kata_set_rule(engine, command: Command) -> str:
    if len(command.args) != 2:
        raise GtpError(f"Expected two arguments for kata-set-rule but got '{command.arg_text}'")
    try:
        rules = engine.rules.updated(command.args[0], command.args[1])
    except RulesError as exc:
        raise GtpError(str(exc)) from None
    change_rules(engine, rules)
    return ""


def cmd_kgs_rules(engine, command: Command) -> str:
    if not command.args:
        raise GtpError("Expected one argument kgs-rules")
    try:
        rules = parse_kgs_rules(command.args[0], engine.rules.komi)
    except RulesError as exc:
        raise GtpError(str(exc)) from None
    change_rules(engine, rules)
    return ""


# --------------------------------------------------------------------------- parameters


def cmd_kata_list_params(engine, command: Command) -> str:
    return " ".join(list_params())


def cmd_kata_get_param(engine, command: Command) -> str:
    if len(command.args) != 1:
        raise GtpError(f"Expected one arguments for kata-get-param but got '{command.arg_text}'")
    try:
        return get_param_text(command.args[0], engine.params)
    except ParamError as exc:
        raise GtpError(str(exc)) from None


def cmd_kata_get_params(engine, command: Command) -> str:
    return get_params_json(engine.params)


def cmd_kata_set_param(engine, command: Command) -> str:
    try:
        if command.name == "kata-set-param":
            updates = parse_set_param_args(command.args)
        else:
            updates = parse_set_params_json(command.arg_text)
        _check_profile_is_used(engine, updates)
        has_human_model = engine.human_evaluator is not None
        old = engine.params
        engine.params = apply_param_updates(engine.config, engine.params, updates, has_human_model=has_human_model)
    except ParamError as exc:
        raise GtpError(str(exc)) from None
    new = engine.params
    if engine.has_bot and (new.genmove != old.genmove or new.analysis != old.analysis):
        engine.bot.params_changed(new.genmove if new.genmove != old.genmove else None,
                                  new.analysis if new.analysis != old.analysis else None)
    return ""


def _check_profile_is_used(engine, updates) -> None:
    """Refuse a humanSLProfile that no loaded model would use, before anything changes (as KataGo)."""
    try:
        profile = parse_human_profile(updates.get("humanSLProfile", ""))
    except HumanProfileError:
        return  # reported with KataGo's text by apply_param_updates
    if profile.is_set:
        models = [(engine.evaluator, engine.options.model_path), (engine.human_evaluator, engine.options.human_model_path)]
        warning = unused_profile_warning(profile, [(e, path) for e, path in models if e is not None])
        if warning:
            raise ParamError(SET_PARAMS_ERROR_PREFIX + warning)


def unused_profile_warning(profile, models) -> str:
    """KataGo's complaint when humanSLProfile is set but no loaded model takes SGF metadata; '' if fine.
    ``models``: (evaluator, file as given) of each loaded network; KataGo names them by their files."""
    if not profile.is_set or any(e.needs_metadata for e, _ in models):
        return ""
    names = " and ".join(path or e.model_name for e, path in models)
    return f"WARNING: humanSLProfile is specified as config param but model(s) don't use it: {names}"


def _model_info(evaluator, path: str | None, fp16_mode: str) -> dict:
    return {
        "name": path or "",   # the file as given (KataGo's getModelName)
        "internalName": evaluator.model_name,
        "maxBatchSize": evaluator.max_batch_size,
        "usesHumanSLProfile": bool(evaluator.needs_metadata),
        "version": evaluator.version,
        "usingFP16": fp16_mode,   # the useFP16 setting (true / false / auto), as KataGo reports it
    }


def cmd_kata_get_models(engine, command: Command) -> str:
    """KataGo's list: the main network, then the -human-model one."""
    fp16_mode = str(engine.settings.nn.use_fp16)
    models = []
    if engine.evaluator is not None:
        models.append(_model_info(engine.evaluator, engine.options.model_path, fp16_mode))
    if engine.options.human_model_path is not None and engine.human_evaluator is not None:
        models.append(_model_info(engine.human_evaluator, engine.options.human_model_path, fp16_mode))
    return json.dumps(models, sort_keys=True, separators=(",", ":"))


# --------------------------------------------------------------------------- clocks


def _set_both_clocks(engine, clock: TimeControls) -> None:
    engine.clocks = {BLACK: clock, WHITE: clock}


def cmd_time_settings(engine, command: Command) -> str:
    args = command.args
    main_time = parse_time(args, 0, "main time")
    period_time = parse_time(args, 1, "byo-yomi per-period time")
    stones = parse_overtime_count(args, 2, "stones")
    _set_both_clocks(engine, canadian_or_absolute(main_time, period_time, stones))
    return ""


def _kind_error(command_name: str) -> GtpError:
    if command_name == "kata-time_settings":
        return GtpError("Expected 'none', 'absolute', 'byoyomi', 'canadian', 'fischer', or 'fischer-capped' "
                        "as first argument for kata-time_settings")
    return GtpError("Expected 'none', 'absolute', 'byoyomi', or 'canadian' as first argument for kgs-time_settings")


def cmd_kgs_time_settings(engine, command: Command) -> str:
    args = command.args
    if not args:
        raise _kind_error(command.name)
    kind = args[0].strip().lower()
    kata_only = kind in ("fischer", "fischer-capped")
    if kind not in TIME_SETTING_KINDS or (kata_only and command.name != "kata-time_settings"):
        raise _kind_error(command.name)
    if kind == "none":
        clock = TimeControls.unlimited()
    elif kind == "absolute":
        clock = TimeControls.absolute(parse_time(args, 1, "main time"))
    elif kind == "canadian":
        main_time = parse_time(args, 1, "main time")
        period_time = parse_time(args, 2, "byo-yomi period time")
        stones = parse_overtime_count(args, 3, "stones")
        clock = canadian_or_absolute(main_time, period_time, stones)
    elif kind == "byoyomi":
        main_time = parse_time(args, 1, "main time")
        period_time = parse_time(args, 2, "byo-yomi per-period time")
        periods = parse_overtime_count(args, 3, "periods")
        clock = (TimeControls.absolute(main_time) if periods == 0
                 else TimeControls.byoyomi_or_canadian(main_time, period_time, periods, 1))
    elif kind == "fischer":
        clock = TimeControls.fischer(parse_time(args, 1, "main time"), parse_time(args, 2, "increment time"))
    else:
        main_time = parse_time(args, 1, "main time")
        increment = parse_time(args, 2, "increment time")
        limit = parse_time(args, 3, "main time limit", allow_negative=True)
        per_move = parse_time(args, 4, "max time per move", allow_negative=True)
        # A negative limit means "no limit".
        limit = MAX_USER_INPUT_TIME if limit < 0 else limit
        per_move = MAX_USER_INPUT_TIME if per_move < 0 else per_move
        try:
            clock = TimeControls.fischer_capped(main_time, increment, limit, per_move)
        except TimeSettingsError as exc:
            raise GtpError(str(exc)) from None
    _set_both_clocks(engine, clock)
    return ""


def cmd_kata_list_time_settings(engine, command: Command) -> str:
    return " ".join(TIME_SETTING_KINDS)


def cmd_time_left(engine, command: Command) -> str:
    args = command.args
    usage = GtpError(f"Expected player and float time and int stones for time_left but got '{command.arg_text}'")
    if len(args) != 3:
        raise usage
    try:
        pla = parse_player(args[0])
    except GtpError:
        raise usage from None
    time_left, stones = parse_double(args[1]), parse_int(args[2])
    if time_left is None or stones is None:
        raise usage
    if math.isnan(time_left) or not MIN_TIME_LEFT <= time_left <= MAX_USER_INPUT_TIME:
        raise GtpError("invalid time")
    if not 0 <= stones <= MAX_TIME_LEFT_STONES:
        raise GtpError("invalid stones")
    try:
        engine.clocks[pla] = engine.clocks[pla].with_time_left(time_left, stones)
    except TimeSettingsError as exc:
        raise GtpError(str(exc)) from None
    engine.ponder_requested = bool(engine.session.state.moves)
    return ""


def cmd_kata_debug_print_tc(engine, command: Command) -> str:
    state = engine.session.state
    area, lag = state.x_size * state.y_size, engine.params.genmove.lag_buffer
    return (f"Black {describe(engine.clocks[BLACK], area, state.num_stones, lag)}\n"
            f"White {describe(engine.clocks[WHITE], area, state.num_stones, lag)}")


def cmd_cputime(engine, command: Command) -> str:
    return format_cpp_double(engine.genmove_time_sum)
