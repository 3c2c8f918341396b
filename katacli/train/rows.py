"""Training rows as stored on disk: the one place the trainer touches the file layout.

Training files hold KataGo's self-play rows under KataGo's npz field names and layouts
(``cpp/dataio/trainingwrite.h``). Both containers are read here: KataGo's ``.npz`` and our
HDF5 files (``.h5``/``.hdf5``, one dataset per npz field, rows along axis 0; written by
:mod:`katacli.data`). Everything else in :mod:`katacli.train` sees only :class:`RowBlock`
(the compact on-disk arrays of some rows) and the named target channels below.

The channel meanings of ``globalTargetsNC`` and ``valueTargetsNCHW`` are KataGo's; they
are named here so that losses read like prose (``targets[:, GT_POLICY_WEIGHT]``).
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np

# ---------------------------------------------------------------------------------------------
# Field names (KataGo's npz keys)

BINARY_INPUTS = "binaryInputNCHWPacked"  # uint8 [N, 22, ceil(pos*pos/8)] bits, big-endian within a byte
GLOBAL_INPUTS = "globalInputNC"  # float32 [N, 19]
POLICY_TARGETS = "policyTargetsNCMove"  # int16 [N, 2, pos*pos+1] visit counts: this move, next (opponent) move
GLOBAL_TARGETS = "globalTargetsNC"  # float32 [N, 64 or 80] value targets, weights, metadata
SCORE_DISTRIBUTION = "scoreDistrN"  # int8 [N, 2*(pos*pos+60)] final score one-hot-ish, sums to 100
VALUE_TARGETS = "valueTargetsNCHW"  # int8 [N, 5, pos, pos] ownership, seki, 2 future boards, scoring
QVALUE_TARGETS = "qValueTargetsNCMove"  # int16 [N, 3, pos*pos+1] (only q-value nets train on it)
METADATA_INPUTS = "metadataInputNC"  # float32 [N, 192] SGF metadata (human-style nets only)

REQUIRED_FIELDS = (BINARY_INPUTS, GLOBAL_INPUTS, POLICY_TARGETS, GLOBAL_TARGETS, SCORE_DISTRIBUTION, VALUE_TARGETS)
OPTIONAL_FIELDS = (QVALUE_TARGETS, METADATA_INPUTS)

TRAINING_FILE_SUFFIXES = (".npz", ".h5", ".hdf5")

# Score distribution: indices cover scores -(area + radius) .. (area + radius), labels sum to this.
EXTRA_SCORE_DISTR_RADIUS = 60
SCORE_DISTRIBUTION_TOTAL = 100.0
# Current KataGo rows carry 80 global target channels; data format version 2 had 64 (zero-padded on read).
GLOBAL_TARGET_CHANNELS = 80

# ---------------------------------------------------------------------------------------------
# globalTargetsNC channels (player to move's point of view)

GT_VALUE = slice(0, 3)  # final result: win, loss, no result
GT_SCORE = 3  # final score
GT_TD_VALUE = (slice(4, 7), slice(8, 11), slice(12, 15))  # long, mid, short-term MCTS value targets
GT_TD_SCORE = (7, 11, 15)  # matching score targets
GT_LEAD = 21
GT_VARIANCE_TIME = 22
GT_ONE_MINUS_TD_VALUE_WEIGHT = 24
GT_ROW_WEIGHT = 25
GT_POLICY_WEIGHT = 26
GT_OWNERSHIP_WEIGHT = 27  # also weights the score distribution and most score targets
GT_NEXT_POLICY_WEIGHT = 28
GT_LEAD_WEIGHT = 29
GT_FUTUREPOS_WEIGHT = 33
GT_SCORING_WEIGHT = 34
GT_ONE_MINUS_VALUE_WEIGHT = 35
GT_HISTORY_MASK = slice(36, 41)  # whether moves 1..5 ago may be shown
GT_DATA_VERSION = 63

# valueTargetsNCHW channels
VT_OWNERSHIP = 0  # final ownership in [-1, 1]
VT_SEKI = 1  # ownership minus naive area (seki etc.)
VT_FUTUREPOS = slice(2, 4)  # the board a few moves later
VT_SCORING = 4  # final area/territory in [-120, 120]
SCORING_TARGET_SCALE = 120.0

# qValueTargetsNCMove scalings
QVALUE_WINLOSS_SCALE = 32000.0
QVALUE_SCORE_SCALE = 60.0


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
        return int(self.arrays[VALUE_TARGETS].shape[-1])

    def has(self, field: str) -> bool:
        return field in self.arrays

    def take(self, indices: np.ndarray) -> "RowBlock":
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


def is_training_file(path: str) -> bool:
    return path.lower().endswith(TRAINING_FILE_SUFFIXES) and not os.path.basename(path).startswith(".")


def _is_hdf5(path: str) -> bool:
    return path.lower().endswith((".h5", ".hdf5"))


def count_rows(path: str) -> int:
    """Number of rows in a training file, reading only its headers."""
    try:
        if _is_hdf5(path):
            import h5py

            with h5py.File(path, "r") as f:
                if GLOBAL_TARGETS not in f:
                    raise TrainingFileError(f"{path}: no {GLOBAL_TARGETS} dataset; not a training file")
                return int(f[GLOBAL_TARGETS].shape[0])
        with zipfile.ZipFile(path) as z:
            with z.open(GLOBAL_TARGETS + ".npy") as member:
                version = np.lib.format.read_magic(member)
                if version == (1, 0):
                    shape, _, _ = np.lib.format.read_array_header_1_0(member)
                elif version == (2, 0):
                    shape, _, _ = np.lib.format.read_array_header_2_0(member)
                else:  # rare newer header: read the array itself
                    shape = np.load(path)[GLOBAL_TARGETS].shape
                return int(shape[0])
    except TrainingFileError:
        raise
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise TrainingFileError(f"{path}: cannot read training file ({exc})") from exc


def read_rows(path: str, start: int = 0, stop: Optional[int] = None) -> RowBlock:
    """Rows ``start:stop`` of a training file (every field present), in on-disk dtypes."""
    try:
        if _is_hdf5(path):
            import h5py

            with h5py.File(path, "r") as f:
                arrays = {name: f[name][start:stop] for name in REQUIRED_FIELDS + OPTIONAL_FIELDS if name in f}
        else:
            with np.load(path) as npz:
                arrays = {name: npz[name][start:stop] for name in REQUIRED_FIELDS + OPTIONAL_FIELDS if name in npz}
    except (OSError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise TrainingFileError(f"{path}: cannot read training file ({exc})") from exc
    missing = [name for name in REQUIRED_FIELDS if name not in arrays]
    if missing:
        raise TrainingFileError(f"{path}: missing {', '.join(missing)}; not a KataGo-layout training file")
    arrays[GLOBAL_TARGETS] = _pad_global_targets(arrays[GLOBAL_TARGETS], path)
    _check_shapes(arrays, path)
    return RowBlock(arrays)


def _pad_global_targets(targets: np.ndarray, path: str) -> np.ndarray:
    channels = targets.shape[1]
    if channels == GLOBAL_TARGET_CHANNELS:
        return targets
    if channels > GLOBAL_TARGET_CHANNELS:
        raise TrainingFileError(f"{path}: {GLOBAL_TARGETS} has {channels} channels, more than {GLOBAL_TARGET_CHANNELS}")
    padded = np.zeros((targets.shape[0], GLOBAL_TARGET_CHANNELS), np.float32)
    padded[:, :channels] = targets
    return padded


def _check_shapes(arrays: dict[str, np.ndarray], path: str) -> None:
    n = arrays[GLOBAL_TARGETS].shape[0]
    value = arrays[VALUE_TARGETS]
    if value.ndim != 4 or value.shape[2] != value.shape[3]:
        raise TrainingFileError(f"{path}: {VALUE_TARGETS} should be [N, C, pos, pos], got {list(value.shape)}")
    pos = value.shape[-1]
    area = pos * pos
    expected_tail = {
        BINARY_INPUTS: (None, (area + 7) // 8),
        POLICY_TARGETS: (2, area + 1),
        SCORE_DISTRIBUTION: (2 * (area + EXTRA_SCORE_DISTR_RADIUS),),
    }
    for name, array in arrays.items():
        if array.shape[0] != n:
            raise TrainingFileError(f"{path}: {name} has {array.shape[0]} rows but {GLOBAL_TARGETS} has {n}")
        tail = expected_tail.get(name)
        if tail is not None and (len(array.shape) != len(tail) + 1 or any(
                want is not None and got != want for got, want in zip(array.shape[1:], tail))):
            raise TrainingFileError(f"{path}: {name} has shape {list(array.shape)}, which does not fit {pos}x{pos} rows")


def unpack_binary_inputs(packed: np.ndarray, pos_len: int) -> np.ndarray:
    """``binaryInputNCHWPacked`` -> float32 ``[N, C, pos, pos]``."""
    bits = np.unpackbits(packed, axis=2)[:, :, : pos_len * pos_len]
    return bits.reshape(packed.shape[0], packed.shape[1], pos_len, pos_len).astype(np.float32)


def pack_binary_inputs(spatial: np.ndarray) -> np.ndarray:
    """float ``[N, C, pos, pos]`` of 0/1 -> ``binaryInputNCHWPacked`` (inverse of :func:`unpack_binary_inputs`)."""
    n, c = spatial.shape[:2]
    return np.packbits(spatial.reshape(n, c, -1) > 0.5, axis=2)


def write_npz(path: str, block: RowBlock) -> None:
    """Write rows as KataGo writes them (a compressed npz), atomically."""
    tmp = os.path.join(os.path.dirname(path) or ".", "." + os.path.basename(path) + ".tmp")
    with open(tmp, "wb") as f:
        np.savez_compressed(f, **block.arrays)
    os.replace(tmp, path)


def write_hdf5(path: str, block: RowBlock) -> None:
    """Write rows as one dataset per field, atomically."""
    import h5py

    tmp = os.path.join(os.path.dirname(path) or ".", "." + os.path.basename(path) + ".tmp")
    with h5py.File(tmp, "w") as f:
        for name, array in block.arrays.items():
            f.create_dataset(name, data=array, compression="gzip", compression_opts=1)
    os.replace(tmp, path)
