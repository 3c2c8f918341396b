"""Rules a KataGo network (model version 7 and later) can represent: KataGo's getSupportedRules.

Spight ko is evaluated as situational ko, and the button exists only under area scoring. Kept
apart from the command handlers so that startup can check a config's rules before loading torch.
"""
from __future__ import annotations

import dataclasses

from katacli.game.rules import KoRule, Rules, ScoringRule


def network_supported_rules(rules: Rules) -> Rules:
    """The nearest rules a network can evaluate (``rules`` itself when it can)."""
    if rules.ko == KoRule.SPIGHT:
        rules = dataclasses.replace(rules, ko=KoRule.SITUATIONAL)
    if rules.has_button and rules.scoring != ScoringRule.AREA:
        rules = dataclasses.replace(rules, has_button=False)
    return rules
