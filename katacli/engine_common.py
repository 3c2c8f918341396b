"""Small helpers that the GTP engine, the analysis engine, the Python API and evalsgf share.

* Seeds: a config's seed text (searchRandSeed, nnRandSeed) as a number that is the same in every run,
  and the fixed seed text forDeterministicTesting selects.
* The rules a KataGo network (model version 7 and later) can represent, KataGo's getSupportedRules:
  spight ko is evaluated as situational ko, and the button exists only under area scoring. Importing
  this module loads neither torch nor the search, so startup can check a config's rules first.
"""
from __future__ import annotations

import dataclasses
import hashlib

from katacli.game.rules import KoRule, Rules, ScoringRule

# The seed text used for everything random when forDeterministicTesting is set.
DETERMINISTIC_SEED = "forDeterministicTesting"
SEED_BYTES = 8


def stable_seed(text: str | None) -> int | None:
    """A seed string as a number that is the same in every run (Python's hash() is not)."""
    if text is None:
        return None
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:SEED_BYTES], "little")


def network_supported_rules(rules: Rules) -> Rules:
    """The nearest rules a network can evaluate (``rules`` itself when it can)."""
    if rules.ko == KoRule.SPIGHT:
        rules = dataclasses.replace(rules, ko=KoRule.SITUATIONAL)
    if rules.has_button and rules.scoring != ScoringRule.AREA:
        rules = dataclasses.replace(rules, has_button=False)
    return rules
