"""NoGo, katacli's own variant: Go where capturing (and so suicide) is not allowed and passing is not a move;
the side to move with no legal move loses. The GTP engine, its scoring and the Python API share these."""
from __future__ import annotations

from katacli._core import nogo

# `rules = nogo` in a config, `kata-set-rules nogo`, `Game(rules="nogo")`.
NOGO_RULES_NAME = "nogo"
# What kata-get-rules and showboard print while NoGo is played.
NOGO_RULES_JSON = '{"game":"nogo"}'


def is_nogo_rules_name(text: str) -> bool:
    return text.strip().lower() == NOGO_RULES_NAME


def nogo_is_legal(state, xy, pla: int) -> bool:
    """NoGo: no pass, no capture, no suicide."""
    return xy is not None and nogo.is_legal(state.board(), xy, pla)


def nogo_has_legal_move(state, pla: int) -> bool:
    return bool(nogo.legal_moves(state.board(), pla))
