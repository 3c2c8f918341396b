"""Checkpoints for exact resume, written atomically.

A run directory holds:

* ``initial_model.bin.gz``: the network the run started from (its architecture is how a
  resumed run rebuilds the net before loading trained weights);
* ``checkpoint.pt``: everything that changes while training (weights of the net and the
  training-only heads, optimizer, lookahead, SWA, loss statistics, the data position and
  every RNG state), replaced atomically: written to a temporary file, flushed to disk, then
  renamed over the old one, so a crash leaves either the old or the new checkpoint.

Checkpoints hold only tensors and plain Python values, so they load with
``torch.load(weights_only=True)``.
"""

from __future__ import annotations

import io
import os
import random
from typing import Any

import numpy as np
import torch

from katacli.atomic_files import atomic_write_bytes

CHECKPOINT_FILE = "checkpoint.pt"
INITIAL_MODEL_FILE = "initial_model.bin.gz"
CHECKPOINT_FORMAT = 1


class CheckpointError(Exception):
    """A checkpoint cannot be read or does not belong to this run."""


def checkpoint_path(output_dir: str) -> str:
    return os.path.join(output_dir, CHECKPOINT_FILE)


def initial_model_path(output_dir: str) -> str:
    return os.path.join(output_dir, INITIAL_MODEL_FILE)


def save_checkpoint(path: str, state: dict[str, Any]) -> None:
    buffer = io.BytesIO()
    torch.save({"format": CHECKPOINT_FORMAT, **state}, buffer)
    atomic_write_bytes(path, buffer.getvalue())


def load_checkpoint(path: str) -> dict[str, Any]:
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many kinds for a damaged file (an empty one: EOFError with no text)
        detail = str(exc) or ("the file is empty" if os.path.getsize(path) == 0 else type(exc).__name__)
        raise CheckpointError(f"{path}: cannot read checkpoint ({detail})") from exc
    if not isinstance(state, dict) or state.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}: not a katacli training checkpoint (format {CHECKPOINT_FORMAT})")
    return state


def capture_rng_states() -> dict[str, Any]:
    kind, keys, pos, has_gauss, cached = np.random.get_state()
    states = {
        "torch": torch.get_rng_state(),
        "numpy": [kind, torch.from_numpy(np.asarray(keys, dtype=np.int64)), int(pos), int(has_gauss), float(cached)],
        "python": _python_state_to_plain(random.getstate()),
    }
    if torch.cuda.is_available():
        states["cuda"] = torch.cuda.get_rng_state_all()
    return states


def restore_rng_states(states: dict[str, Any]) -> None:
    torch.set_rng_state(states["torch"])
    kind, keys, pos, has_gauss, cached = states["numpy"]
    np.random.set_state((kind, keys.numpy().astype(np.uint32), pos, has_gauss, cached))
    random.setstate(_python_state_from_plain(states["python"]))
    if "cuda" in states and torch.cuda.is_available() and len(states["cuda"]) == torch.cuda.device_count():
        torch.cuda.set_rng_state_all(states["cuda"])


def _python_state_to_plain(state):
    version, internal, gauss = state
    return [version, list(internal), gauss]


def _python_state_from_plain(plain):
    version, internal, gauss = plain
    return (version, tuple(internal), gauss)
