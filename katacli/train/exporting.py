"""Exporting trained nets into the models directory that self-play watches.

Self-play (like KataGo's) loads the newest ``*.bin.gz`` under its models directory, so a
model must never be visible half-written: it is written under a hidden name that does not
end in ``.bin.gz``, flushed, then renamed into place. Names follow KataGo's training runs:
``<prefix>-s<samples>-d<data rows>.bin.gz``. The file is KataGo's own format (version of
the net, 15 for new nets), as :mod:`katacli.nn.export` writes it.
"""

from __future__ import annotations

import copy
import gzip
import json
import os
from typing import Optional

from katacli.nn.export import model_file_bytes
from katacli.nn.torch_model import KataGoModel, NestedBottleneckBlock
from katacli.atomic_files import atomic_write_bytes

GZIP_LEVEL = 6
MAX_NAME_LENGTH = 96  # KataGo's limit on model names


def architecture_name(model: KataGoModel) -> str:
    """KataGo-style size tag of a net, e.g. ``b6c96`` or ``b18c384nbt``."""
    blocks = model.trunk.blocks
    nested = any(isinstance(b, NestedBottleneckBlock) for b in blocks)
    return f"b{len(blocks)}c{model.trunk.initial_conv.out_channels}" + ("nbt" if nested else "")


def export_name(prefix: str, samples: int, data_rows: int) -> str:
    suffix = f"-s{samples}-d{data_rows}"
    return prefix[: MAX_NAME_LENGTH - len(suffix)] + suffix


def model_with_weights(model: KataGoModel, state: Optional[dict]) -> KataGoModel:
    """A CPU copy of ``model``, with ``state`` (e.g. SWA-averaged weights) loaded when given."""
    clone = copy.deepcopy(model).to("cpu").float()
    if state is not None:
        clone.load_state_dict(state)
    return clone


def write_model_atomically(model: KataGoModel, path: str, name: Optional[str] = None) -> str:
    desc = model.to_description()
    if name is not None:
        desc.name = name
    data = gzip.compress(model_file_bytes(desc, binary_floats=True), compresslevel=GZIP_LEVEL, mtime=0)
    atomic_write_bytes(path, data)
    return path


def export_to_models_dir(model: KataGoModel, export_dir: str, name: str, info: Optional[dict] = None) -> str:
    """Write ``<export_dir>/<name>.bin.gz`` (and a small ``<name>.json`` beside it); returns the model path."""
    os.makedirs(export_dir, exist_ok=True)
    if info is not None:
        # Metadata first, so that whoever sees the model can already read it.
        atomic_write_bytes(os.path.join(export_dir, name + ".json"), json.dumps(info, indent=1).encode())
    return write_model_atomically(model, os.path.join(export_dir, name + ".bin.gz"), name)
