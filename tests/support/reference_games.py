"""The katacli.Game a kata-raw-nn reference case (../shared/reference) sets up with GTP commands."""
from __future__ import annotations

from typing import Optional

import katacli


def reference_game(case: dict) -> Optional[katacli.Game]:
    """The game of ``case["commands"]`` (boardsize, clear_board, kata-set-rules, komi, play; kata-set-param is
    left to the caller), or None for a set-up the API builds differently (fixed_handicap, ...)."""
    size = rules = komi = None
    moves = []
    for command in case["commands"]:
        name, *args = command.split()
        if name == "boardsize":
            size = int(args[0])
        elif name == "kata-set-rules":
            rules = args[0]
        elif name == "komi":
            komi = float(args[0])
        elif name == "play":
            moves.append((args[0], args[1]))
        elif name not in ("clear_board", "kata-set-param"):   # (the human-SL profile is the caller's to pass)
            return None
    game = katacli.Game(size, rules=rules or "tromp-taylor", komi=komi)
    for color, vertex in moves:
        game.play(color, vertex)
    return game
