"""katacli's default network: a small net trained from random weights by examples/training_loop.py,
shipped inside the package, used when ``kata gtp`` / ``kata analysis`` / ``kata evalsgf`` / ``kata benchmark`` /
``kata genconfig`` get no ``-model``. ``-model rollouts`` picks the network-free Monte Carlo rollout
engine instead.

Files here: ``default.bin.gz`` (the network, KataGo's format) and ``default.json`` (how it was made:
the command, seed, budget, machine and Elo curve; written by benchmarks/default_net_record.py).
A source checkout without the network falls back to the rollout engine with a one-line warning.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from katacli.katago_defaults import DEFAULT_MODEL_FILES, find_default_file

# The -model value (any case) that asks for the rollout engine; `kata match` spells it the same way.
ROLLOUTS_MODEL = "rollouts"
DEFAULT_NET_FILE = "default.bin.gz"
DEFAULT_NET_RECORD_FILE = "default.json"

NETS_DIR = Path(__file__).resolve().parent


def default_net_path() -> Path:
    """Where the packaged default network lives (the file may be missing in a source checkout)."""
    return NETS_DIR / DEFAULT_NET_FILE


def default_net_record_path() -> Path:
    return NETS_DIR / DEFAULT_NET_RECORD_FILE


def packaged_default_net() -> Optional[Path]:
    """The packaged default network, or None when this installation lacks it."""
    path = default_net_path()
    return path if path.is_file() else None


def default_net_record() -> Optional[dict]:
    """How the default network was made (see benchmarks/default_net_record.py), or None when not recorded."""
    try:
        return json.loads(default_net_record_path().read_text())
    except (OSError, ValueError):
        return None


def is_rollouts_model(model: Optional[str]) -> bool:
    """Whether a -model value asks for the rollout engine (``rollouts``, any case)."""
    return model is not None and model.strip().lower() == ROLLOUTS_MODEL


MISSING_DEFAULT_NET_WARNING = (
    "WARNING: no -model given and katacli's default network is not installed ({path}): playing by Monte Carlo "
    "rollouts instead (pass -model NET.bin.gz, or -model rollouts to choose them)")


# Where a command's network came from (ModelChoice.source).
FROM_FILE, FROM_DEFAULT, FROM_ROLLOUTS, DEFAULT_MISSING = "file", "default", "rollouts", "default-missing"


@dataclass(frozen=True)
class ModelChoice:
    """What a command evaluates positions with, after reading its -model value."""

    path: Optional[str]   # the network file to load; None: the rollout engine
    source: str           # FROM_FILE, FROM_DEFAULT, FROM_ROLLOUTS or DEFAULT_MISSING
    note: Optional[str]   # the start-up line saying so (None for a -model file: "Loaded model" says it)

    @property
    def uses_rollouts(self) -> bool:
        return self.path is None


def choose_model(model: Optional[str]) -> ModelChoice:
    """-model as the commands read it: a file, ``rollouts``, or nothing (KataGo's default_model.bin.gz
    beside the launcher or in ~/.katago, else the packaged default network, or the rollout engine with a
    warning when it is missing)."""
    if model == "":   # KataGo takes an empty -model (a GUI's empty field) as none given
        model = None
    if is_rollouts_model(model):
        return ModelChoice(None, FROM_ROLLOUTS, "-model rollouts: playing by Monte Carlo rollouts, without a network")
    if model is not None:
        return ModelChoice(model, FROM_FILE, None)
    katago_default = find_default_file(DEFAULT_MODEL_FILES)
    if katago_default is not None:   # KataGo's default_model.bin.gz, set up for `katago`
        return ModelChoice(str(katago_default), FROM_FILE, f"No -model given: using KataGo's default network "
                                                           f"{katago_default}")
    packaged = packaged_default_net()
    if packaged is None:
        return ModelChoice(None, DEFAULT_MISSING, MISSING_DEFAULT_NET_WARNING.format(path=default_net_path()))
    return ModelChoice(str(packaged), FROM_DEFAULT, f"No -model given: using katacli's default network {packaged} "
                                                    f"(-model {ROLLOUTS_MODEL} plays without a network)")
