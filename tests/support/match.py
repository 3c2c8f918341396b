"""Shared set-up of the `kata match` and `kata gatekeeper` tests: tiny games and tiny random nets."""
from __future__ import annotations

from pathlib import Path

from katacli.nn.configs import random_description
from katacli.nn.export import write_model_file

# Rules, board and threads of every match and gating test: 5x5 area scoring, no handicap, two game
# threads. Each test module adds its own limits (maxMovesPerGame, maxVisits, games) after it.
TINY_GAMES_CONFIG = """
koRules = SIMPLE
scoringRules = AREA
taxRules = NONE
multiStoneSuicideLegals = false
hasButtons = false
bSizes = 5
bSizeRelProbs = 1
komiMean = 6.5
handicapProb = 0.0
numGameThreads = 2
nnMaxBatchSize = 8
"""


def write_tiny_net(path: Path, seed: int) -> Path:
    """A random-weight b2c16 network at ``path`` (directories created), named after the file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_model_file(random_description("b2c16", seed=seed, model_name=path.name.split(".")[0]), path)
    return path
