"""Finding the newest network in a models directory (kept light: no torch import).

As KataGo's LoadModel::findLatestModel: the newest (by modification time) file under the
directory, searched recursively, whose name ends in ``.bin.gz``, ``.bin``, ``model.txt.gz``
or ``model.txt``. Its name is the file name, or the parent directory's name for generic
names like ``model.bin.gz``.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

MODEL_SUFFIXES = (".bin.gz", ".bin", "model.txt.gz", "model.txt")
GENERIC_MODEL_NAMES = {f"{stem}{suffix}" for stem in ("model", "Model", "MODEL")
                       for suffix in (".bin.gz", ".bin", ".txt.gz", ".txt")}


class NoModelError(Exception):
    """The models directory has no network file."""


@dataclass(frozen=True)
class ModelFile:
    name: str
    path: Path
    mtime_ns: int


def find_latest_model(models_dir: str | os.PathLike) -> Optional[ModelFile]:
    """The newest network file under models_dir (recursively), or None."""
    best: Optional[ModelFile] = None
    for root, _dirs, files in os.walk(models_dir):
        for file_name in files:
            if not file_name.endswith(MODEL_SUFFIXES):
                continue
            path = Path(root) / file_name
            try:
                mtime = path.stat().st_mtime_ns
            except OSError:
                continue  # removed meanwhile
            if best is None or mtime > best.mtime_ns:
                name = path.parent.name if file_name in GENERIC_MODEL_NAMES else file_name
                best = ModelFile(name, path, mtime)
    return best
