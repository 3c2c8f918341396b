"""Who the engine says it is, and which commands it lists: cheap to import, so that these answers
are ready before the network, torch and the search are loaded."""
from __future__ import annotations

import re

from katacli import KATAGO_COMPAT_VERSION

PROTOCOL_VERSION = "2"
# GUIs (Lizzie, q5Go) recognise KataGo by its GTP name, and scripts its version by `version`'s first part.
ENGINE_NAME = "KataGo"
ENGINE_VERSION = KATAGO_COMPAT_VERSION
# A model name's training-step pieces, as KataGo's getAbbrevInternalModelName shortens them: "s175395328" ->
# "s175M" (at least ten million), "s20000" -> "s20K" (at least ten thousand); the data piece ("d26788732")
# and the "kata1" run prefix are left out.
_STEP_PIECE = re.compile(r"([sd])([0-9]+)\s*")
_MEGA, _KILO = 10_000_000, 10_000
_INT64_LIMIT = 2 ** 63


def abbreviated_model_name(name: str) -> str:
    pieces = []
    for piece in name.split("-"):
        match = _STEP_PIECE.fullmatch(piece)
        step = int(match[2]) if match else _INT64_LIMIT   # a number past int64 is no step piece (KataGo's parse)
        if piece == "kata1" or (step < _INT64_LIMIT and match[1] == "d"):
            continue
        if _MEGA <= step < _INT64_LIMIT:
            piece = f"s{step // 1_000_000}M"
        elif _KILO <= step < _INT64_LIMIT:
            piece = f"s{step // 1_000}K"
        pieces.append(piece)
    return "-".join(pieces)


def version_text(model_names: list[str]) -> str:
    """`version` as KataGo answers it: its version, then each loaded network's abbreviated name, joined by +
    (1.17.2+g170-b6c96-s175M); the katacli version is in the start-up line and `kata --version`."""
    return "+".join([KATAGO_COMPAT_VERSION] + [abbreviated_model_name(name) for name in model_names])

# KataGo 1.17.2's list, in its order (it leaves out analyze, genmove_analyze, kata-get-params and
# kata-set-params, which it still accepts).
KNOWN_COMMANDS = (
    "protocol_version", "name", "version", "known_command", "list_commands", "quit",
    "boardsize", "rectangular_boardsize", "clear_board", "set_position", "komi", "get_komi", "play", "undo",
    "kata-get-rules", "kata-set-rule", "kata-set-rules",
    "kata-get-models", "kata-get-param", "kata-set-param", "kata-list-params", "kgs-rules",
    "genmove", "kata-search", "kata-search_cancellable", "genmove_debug", "kata-search_debug",
    "clear_cache", "showboard", "fixed_handicap", "place_free_handicap", "set_free_handicap",
    "time_settings", "kgs-time_settings", "time_left", "kata-list_time_settings", "kata-time_settings",
    "final_score", "final_status_list", "loadsgf", "printsgf",
    "lz-genmove_analyze", "kata-genmove_analyze", "kata-search_analyze", "kata-search_analyze_cancellable",
    "lz-analyze", "kata-analyze",
    "kata-raw-nn", "kata-raw-human-nn",
    "cputime", "gomill-cpu_time", "kata-benchmark",
    "kata-debug-print-tc", "debug_moves",
    "stop",
)


def known_command_answer(args: list[str]) -> tuple[str, bool]:
    """(response text, is_error) for ``known_command``."""
    if len(args) != 1:
        return f"Expected single argument for known_command but got '{' '.join(args)}'", True
    return ("true" if args[0] in KNOWN_COMMANDS else "false"), False


def identity_answer(name: str, args: list[str], override_version: str | None) -> tuple[str, bool] | None:
    """The answer to a command that needs no engine state, or None for any other command."""
    if name == "protocol_version":
        return PROTOCOL_VERSION, False
    if name == "name":
        return ENGINE_NAME, False
    if name == "version":
        return override_version or ENGINE_VERSION, False
    if name == "known_command":
        return known_command_answer(args)
    if name == "list_commands":
        return "\n".join(KNOWN_COMMANDS), False
    return None
