"""The command table: GTP command name -> handler, and what ``list_commands`` reports."""
from __future__ import annotations

from katacli.gtp import handlers_game as game
from katacli.gtp import handlers_params as params
from katacli.gtp import handlers_search as search
from katacli.gtp.debug_moves import cmd_debug_moves

HANDLERS = {
    "protocol_version": game.cmd_protocol_version,
    "name": game.cmd_name,
    "version": game.cmd_version,
    "known_command": game.cmd_known_command,
    "list_commands": game.cmd_list_commands,
    "quit": game.cmd_quit,
    "boardsize": game.cmd_boardsize,
    "rectangular_boardsize": game.cmd_boardsize,
    "clear_board": game.cmd_clear_board,
    "set_position": game.cmd_set_position,
    "komi": game.cmd_komi,
    "get_komi": game.cmd_get_komi,
    "play": game.cmd_play,
    "undo": game.cmd_undo,
    "showboard": game.cmd_showboard,
    "fixed_handicap": game.cmd_fixed_handicap,
    "place_free_handicap": game.cmd_place_free_handicap,
    "set_free_handicap": game.cmd_set_free_handicap,
    "loadsgf": game.cmd_loadsgf,
    "printsgf": game.cmd_printsgf,
    "kata-get-rules": params.cmd_kata_get_rules,
    "kata-set-rules": params.cmd_kata_set_rules,
    "kata-set-rule": params.cmd_kata_set_rule,
    "kgs-rules": params.cmd_kgs_rules,
    "kata-list-params": params.cmd_kata_list_params,
    "kata-get-param": params.cmd_kata_get_param,
    "kata-get-params": params.cmd_kata_get_params,
    "kata-set-param": params.cmd_kata_set_param,
    "kata-set-params": params.cmd_kata_set_param,
    "kata-get-models": params.cmd_kata_get_models,
    "time_settings": params.cmd_time_settings,
    "kgs-time_settings": params.cmd_kgs_time_settings,
    "kata-time_settings": params.cmd_kgs_time_settings,
    "kata-list_time_settings": params.cmd_kata_list_time_settings,
    "time_left": params.cmd_time_left,
    "kata-debug-print-tc": params.cmd_kata_debug_print_tc,
    "cputime": params.cmd_cputime,
    "gomill-cpu_time": params.cmd_cputime,
    "genmove": search.cmd_genmove,
    "genmove_debug": search.cmd_genmove,
    "kata-search": search.cmd_genmove,
    "kata-search_debug": search.cmd_genmove,
    "kata-search_cancellable": search.cmd_genmove,
    "genmove_analyze": search.cmd_genmove_analyze,
    "lz-genmove_analyze": search.cmd_genmove_analyze,
    "kata-genmove_analyze": search.cmd_genmove_analyze,
    "kata-search_analyze": search.cmd_genmove_analyze,
    "kata-search_analyze_cancellable": search.cmd_genmove_analyze,
    "analyze": search.cmd_analyze,
    "lz-analyze": search.cmd_analyze,
    "kata-analyze": search.cmd_analyze,
    "stop": search.cmd_stop,
    "clear_cache": search.cmd_clear_cache,
    "final_score": search.cmd_final_score,
    "final_status_list": search.cmd_final_status_list,
    "kata-raw-nn": search.cmd_kata_raw_nn,
    "kata-raw-human-nn": search.cmd_kata_raw_human_nn,
    "kata-benchmark": search.cmd_kata_benchmark,
    "debug_moves": cmd_debug_moves,
}

# Answered at once, even while the network is still loading.
NEEDS_NO_MODEL = frozenset({"protocol_version", "name", "version", "known_command", "list_commands", "quit"})
# Commands that leave a running ponder alone (KataGo stops its bot only to change the game or search with it):
# they read the game, the settings or the clocks. komi stops it itself when the komi changes.
KEEP_PONDERING = frozenset({
    "protocol_version", "name", "version", "known_command", "list_commands", "showboard", "get_komi", "komi",
    "kata-get-rules", "kata-list-params", "kata-get-param", "kata-get-params", "kata-get-models",
    "time_settings", "kgs-time_settings", "kata-time_settings", "kata-list_time_settings", "time_left",
    "kata-debug-print-tc", "cputime", "gomill-cpu_time",
})
