"""The rules as they cross between the core and Python: one typed value, :class:`CoreRules`.

It is a named tuple, so code may read fields by name (``state.rules_tuple.scoring_rule``), and
``GameState(rules=...)`` takes one (or any 8-tuple in this order). The codes are the core's
(rules.pxd): ko 0 simple / 1 positional / 2 situational; scoring 0 area / 1 territory; tax 0 none /
1 seki / 2 all; white handicap bonus 0 none / 1 N-1 / 2 N. katacli.game.rules.Rules is the
user-facing object with names and validation that builds one.
"""
from __future__ import annotations

from typing import NamedTuple


class CoreRules(NamedTuple):
    ko_rule: int
    scoring_rule: int
    tax_rule: int
    multi_stone_suicide_legal: bool
    has_button: bool
    white_handicap_bonus_rule: int
    friendly_pass_ok: bool
    komi: float
