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

import torch

from katacli.nn.export import model_file_bytes
from katacli.nn.description import Activation
from katacli.nn.torch_model import AttentionBlock, KataGoModel, NestedBottleneckBlock
from katacli.atomic_files import atomic_write_bytes

GZIP_LEVEL = 6
MAX_NAME_LENGTH = 96  # KataGo's limit on model names


# A net's trunk activation as -model-kind spells it (katacli.nn.configs): ReLU has no suffix.
ACTIVATION_NAME_SUFFIXES = {Activation.MISH: "-mish", Activation.SILU: "-silu"}


def architecture_name(model: KataGoModel) -> str:
    """KataGo-style tag of a net, as -model-kind names it: ``b6c96``, ``b18c384nbt``, ``b4c32-mish``; a
    transformer trunk ``b7c96h3tf`` (attention blocks, channels, heads)."""
    blocks = model.trunk.blocks
    channels = model.trunk.initial_conv.out_channels
    attention = [b for b in blocks if isinstance(b, AttentionBlock)]
    if attention:
        return f"b{len(attention)}c{channels}h{attention[0].num_heads}tf"
    nested = any(isinstance(b, NestedBottleneckBlock) for b in blocks)
    activation = getattr(model.trunk.tip, "activation", None)
    return f"b{len(blocks)}c{channels}" + ("nbt" if nested else "") + ACTIVATION_NAME_SUFFIXES.get(activation, "")


MODEL_FILE_SUFFIX = ".bin.gz"


def export_path(export_dir: str, name: str) -> str:
    """Where the net exported under ``name`` lies."""
    return os.path.join(export_dir, name + MODEL_FILE_SUFFIX)


def export_name(prefix: str, samples: int, data_rows: int) -> str:
    suffix = f"-s{samples}-d{data_rows}"
    return prefix[: MAX_NAME_LENGTH - len(suffix)] + suffix


def model_with_weights(model: KataGoModel, state: Optional[dict]) -> KataGoModel:
    """A CPU copy of ``model``, with ``state`` (e.g. SWA-averaged weights) loaded when given."""
    clone = copy.deepcopy(model).to("cpu").float()
    if state is not None:
        clone.load_state_dict(state)
    return clone


# The board a model's outputs are checked on before export (every trained net takes it: the nets are fully
# convolutional, and an empty board on it is the one input needing no data).
CHECK_BOARD_LEN = 9


def nonfinite_outputs(model: KataGoModel) -> list[str]:
    """The outputs (policy, value, ...) that come out NaN or infinite on an empty board: a net whose weights
    are finite yet blew up (KataGo refuses to load it: "Got nonfinite for policy sum"). Empty if all are sound."""
    spatial = torch.zeros(1, model.num_input_channels, CHECK_BOARD_LEN, CHECK_BOARD_LEN)
    spatial[:, 0] = 1.0   # channel 0: the point is on the board
    global_features = torch.zeros(1, model.num_input_global_channels)
    with torch.no_grad():
        outputs = model.eval()(spatial, global_features)
    return [name for name, value in outputs._asdict().items() if not bool(torch.isfinite(value).all())]


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
    return write_model_atomically(model, export_path(export_dir, name), name)
