"""Training rows as the trainer sees them, read through :mod:`katacli.data`.

:mod:`katacli.data.schema` owns the layout (KataGo's npz field names, dtypes, shapes and
channel meanings); this module only gives the trainer what it needs from it: reading row
ranges of ``.h5``/``.npz`` files as :class:`RowBlock` (compact on-disk dtypes), and the
channel indices the losses read, named after the schema's. KataGo's older data (format
version 2, 64 global-target channels) is zero-padded to the schema's width on read, as
KataGo's own trainer does.
"""

from __future__ import annotations

import zipfile
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

from katacli import data as D
from katacli.data import schema as S
from katacli.data.files import NPZ_READ_ERRORS

# ---------------------------------------------------------------------------------------------
# Field names (the schema's keys)

BINARY_INPUTS = "binaryInputNCHWPacked"
GLOBAL_INPUTS = "globalInputNC"
POLICY_TARGETS = "policyTargetsNCMove"
GLOBAL_TARGETS = "globalTargetsNC"
SCORE_DISTRIBUTION = "scoreDistrN"
VALUE_TARGETS = "valueTargetsNCHW"
QVALUE_TARGETS = "qValueTargetsNCMove"
METADATA_INPUTS = "metadataInputNC"
for _name in (BINARY_INPUTS, GLOBAL_INPUTS, POLICY_TARGETS, GLOBAL_TARGETS, SCORE_DISTRIBUTION, VALUE_TARGETS,
              QVALUE_TARGETS, METADATA_INPUTS):
    assert _name in S.FIELDS, f"the data schema no longer has {_name}"

TRAINING_FILE_SUFFIXES = (S.H5_SUFFIX, S.NPZ_SUFFIX)
EXTRA_SCORE_DISTR_RADIUS = S.EXTRA_SCORE_DISTR_RADIUS
SCORE_DISTRIBUTION_TOTAL = float(S.SCORE_DISTR_TOTAL)
GLOBAL_TARGET_CHANNELS = S.NUM_GLOBAL_TARGETS

# ---------------------------------------------------------------------------------------------
# globalTargetsNC channels the losses use (player to move's point of view)

_GT = S.GT
GT_VALUE = slice(_GT.WIN, _GT.NO_RESULT + 1)  # final result: win, loss, no result
GT_SCORE = _GT.SCORE
GT_TD_VALUE = tuple(slice(first, first + 3) for first in (_GT.TD_LONG, _GT.TD_MID, _GT.TD_SHORT))
GT_TD_SCORE = tuple(first + 3 for first in (_GT.TD_LONG, _GT.TD_MID, _GT.TD_SHORT))
GT_FINAL_SCORE = _GT.FINAL_SCORE
GT_LEAD = _GT.LEAD
GT_VARIANCE_TIME = _GT.VARIANCE_TIME
GT_ONE_MINUS_TD_VALUE_WEIGHT = _GT.ONE_MINUS_TD_WEIGHT
GT_ROW_WEIGHT = _GT.ROW_WEIGHT
GT_POLICY_WEIGHT = _GT.POLICY_WEIGHT
GT_OWNERSHIP_WEIGHT = _GT.OWNERSHIP_WEIGHT  # also weights the score distribution and most score targets
GT_NEXT_POLICY_WEIGHT = _GT.NEXT_POLICY_WEIGHT
GT_LEAD_WEIGHT = _GT.LEAD_WEIGHT
GT_FUTUREPOS_WEIGHT = _GT.FUTURE_POS_WEIGHT
GT_SCORING_WEIGHT = _GT.SCORING_WEIGHT
GT_ONE_MINUS_VALUE_WEIGHT = _GT.ONE_MINUS_VALUE_WEIGHT
GT_HISTORY_MASK = slice(_GT.USE_HISTORY, _GT.USE_HISTORY + S.NUM_HISTORY_MASK_CHANNELS)
GT_DATA_VERSION = _GT.DATA_VERSION

# valueTargetsNCHW channels
_VT = {name: index for index, (name, _) in S.VALUE_SPATIAL_CHANNELS.items()}
VT_OWNERSHIP = _VT["ownership"]
VT_SEKI = _VT["sekiArea"]
VT_FUTUREPOS = slice(_VT["futureBoard8"], _VT["futureBoard32"] + 1)
VT_SCORING = _VT["scoring"]
SCORING_TARGET_SCALE = float(S.SCORING_TARGET_SCALE)


class TrainingFileError(Exception):
    """A training file is missing, unreadable or not in the expected layout."""


@dataclass
class RowBlock:
    """Some training rows in their compact on-disk dtypes, keyed by field name."""

    arrays: dict[str, np.ndarray]

    def __len__(self) -> int:
        return int(self.arrays[GLOBAL_TARGETS].shape[0])

    @property
    def pos_len(self) -> int:
        return S.pos_len_of(self.arrays)

    def has(self, field: str) -> bool:
        return field in self.arrays

    def take(self, indices) -> "RowBlock":
        return RowBlock({name: array[indices] for name, array in self.arrays.items()})

    @staticmethod
    def concatenate(blocks: Iterable["RowBlock"]) -> "RowBlock":
        blocks = [b for b in blocks if len(b) > 0]
        if not blocks:
            raise TrainingFileError("no training rows to concatenate")
        fields = set(blocks[0].arrays)
        for block in blocks[1:]:
            fields &= set(block.arrays)  # an optional field survives only if every file has it
        return RowBlock({name: np.concatenate([b.arrays[name] for b in blocks]) for name in sorted(fields)})


def list_files(data_dir: str) -> list[str]:
    """Completed training files under ``data_dir``, recursively (temporary files excluded)."""
    return [str(p) for p in D.list_training_files(data_dir)]


def split_converted_copies(paths: list[str]) -> tuple[list[str], list[str]]:
    """(kept, dropped): a ``.npz`` beside a ``.h5`` of the same name is the same rows in the other
    format (what ``kata convert x.h5`` writes), so only the ``.h5`` counts; otherwise training
    would see those rows twice."""
    h5_stems = {p[: -len(S.H5_SUFFIX)] for p in paths if p.endswith(S.H5_SUFFIX)}
    dropped = [p for p in paths if _is_npz(p) and p[: -len(S.NPZ_SUFFIX)] in h5_stems]
    dropped_set = set(dropped)
    return [p for p in paths if p not in dropped_set], dropped


def _is_npz(path: str) -> bool:
    return path.endswith(S.NPZ_SUFFIX)


def npz_member_name(archive: zipfile.ZipFile, array_name: str) -> str:
    """The archive member holding ``array_name``: numpy's savez writes ``NAME.npy``, KataGo's C++
    writes plain ``NAME``; np.load accepts both, so every reader must too."""
    names = set(archive.namelist())
    for candidate in (array_name + ".npy", array_name):
        if candidate in names:
            return candidate
    raise KeyError(f"no array named {array_name!r} in the archive")


def count_rows(path: str) -> int:
    """Number of rows in a training file, reading only headers."""
    try:
        if not _is_npz(path):
            with D.TrainingFile(path) as f:
                return f.num_rows
        with zipfile.ZipFile(path) as z, z.open(npz_member_name(z, GLOBAL_TARGETS)) as member:
            version = np.lib.format.read_magic(member)
            if version == (1, 0):
                shape, _, _ = np.lib.format.read_array_header_1_0(member)
            elif version == (2, 0):
                shape, _, _ = np.lib.format.read_array_header_2_0(member)
            else:  # a newer header version: read the array itself
                with np.load(path, allow_pickle=False) as npz:
                    shape = npz[GLOBAL_TARGETS].shape
            return int(shape[0])
    except D.TrainingDataError as exc:
        raise TrainingFileError(str(exc)) from None
    except (KeyError, *NPZ_READ_ERRORS) as exc:
        raise TrainingFileError(f"{path}: cannot read training file ({exc})") from None


def read_rows(path: str, start: int = 0, stop: Optional[int] = None) -> RowBlock:
    """Rows ``start:stop`` of a training file (every field it has), in on-disk dtypes."""
    try:
        if _is_npz(path):
            arrays = _read_npz_rows(path, start, stop)
        else:
            with D.TrainingFile(path) as f:
                arrays = f.read(start=start, stop=stop)
    except D.TrainingDataError as exc:
        raise TrainingFileError(str(exc)) from None
    return RowBlock(arrays)


def _read_npz_rows(path: str, start: int, stop: Optional[int]) -> dict[str, np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name][start:stop] for name in npz.files}
    except NPZ_READ_ERRORS as exc:
        raise TrainingFileError(f"{path}: cannot read training file ({exc})") from None
    if GLOBAL_TARGETS in arrays:
        arrays[GLOBAL_TARGETS] = _pad_global_targets(arrays[GLOBAL_TARGETS], path)
    try:
        S.validate_arrays(arrays)
    except S.SchemaError as exc:
        raise TrainingFileError(f"{path}: {exc}") from None
    return arrays


def _pad_global_targets(targets: np.ndarray, path: str) -> np.ndarray:
    channels = targets.shape[1] if targets.ndim == 2 else -1
    if channels == GLOBAL_TARGET_CHANNELS or channels <= 0 or channels > GLOBAL_TARGET_CHANNELS:
        return targets  # the schema check reports anything odd
    padded = np.zeros((targets.shape[0], GLOBAL_TARGET_CHANNELS), targets.dtype)
    padded[:, :channels] = targets
    return padded


def unpack_binary_inputs(packed: np.ndarray, pos_len: int) -> np.ndarray:
    """``binaryInputNCHWPacked`` -> float32 ``[N, C, pos, pos]``."""
    return S.unpack_planes(packed, pos_len)


def pack_binary_inputs(spatial: np.ndarray) -> np.ndarray:
    """float ``[N, C, pos, pos]`` of 0/1 -> ``binaryInputNCHWPacked``."""
    return S.pack_planes(spatial > 0.5)


def write_npz(path: str, block: RowBlock) -> None:
    """Write rows as KataGo does (a compressed npz), atomically."""
    D.write_npz(path, block.arrays)


def write_hdf5(path: str, block: RowBlock) -> None:
    """Write rows as one of our ``.h5`` training files, atomically."""
    D.write_h5(path, block.arrays)
