"""KataGo's 8 board symmetries, numbered as in KataGo (nninputs.cpp SymmetryHelpers).

Symmetry ``s`` is three bit flags: ``s & 1`` flips y (rows), ``s & 2`` flips x (columns),
``s & 4`` transposes, applied in that order. A point (x, y) of the real board goes to
:func:`symmetric_point` on the transformed board.

Like KataGo's copyWithSymmetry, the transpose is only applied to square arrays: for a
rectangular network input, symmetry ``s`` and ``s ^ 4`` are the same transformation
(KataGo's kata-raw-nn on a 9x13 board gives identical results for them).

Arrays are transformed on their last two axes, ``[..., H, W]``; this works for numpy
arrays and torch tensors alike.
"""

from __future__ import annotations

import numpy as np
from katacli._core.constants import NUM_SYMMETRIES  # noqa: F401  (the core's numbers, defined once)
from katacli._core.symmetry_gather import gather_rows

FLIP_Y = 1
FLIP_X = 2
TRANSPOSE = 4


def _check(symmetry: int) -> None:
    if not 0 <= symmetry < NUM_SYMMETRIES:
        raise ValueError(f"symmetry must be in 0..{NUM_SYMMETRIES - 1}, got {symmetry}")


def is_transpose(symmetry: int) -> bool:
    return bool(symmetry & TRANSPOSE)


def _is_tensor(array) -> bool:
    """Whether ``array`` is a torch tensor, told without torch: the numpy evaluator runs while torch is
    being imported in another thread (its module is then in sys.modules, half built)."""
    return not isinstance(array, np.ndarray) and type(array).__module__.split(".")[0] == "torch"


def _flip(array, axis: int):
    if _is_tensor(array):
        import torch


        return torch.flip(array, dims=(axis,))
    # A reversed basic slice: the same view as np.flip, without its per-call argument handling.
    return array[..., ::-1, :] if axis == -2 else array[..., ::-1] if axis == -1 else np.flip(array, axis=axis)


def _transpose(array):
    if _is_tensor(array):
        return array.transpose(-1, -2)
    return np.swapaxes(array, -1, -2)


def effective_symmetry(symmetry: int, height: int, width: int) -> int:
    """The transformation really applied to an ``height`` x ``width`` array: no transpose unless square."""
    _check(symmetry)
    return symmetry if height == width else symmetry & ~TRANSPOSE


def apply_symmetry(array, symmetry: int):
    """Transform a real-board array ``[..., H, W]`` into the symmetry's orientation (a view)."""
    symmetry = effective_symmetry(symmetry, array.shape[-2], array.shape[-1])
    if symmetry & FLIP_Y:
        array = _flip(array, -2)
    if symmetry & FLIP_X:
        array = _flip(array, -1)
    if symmetry & TRANSPOSE:
        array = _transpose(array)
    return array


def undo_symmetry(array, symmetry: int):
    """Map an array ``[..., H, W]`` in the symmetry's orientation back to the real board (a view)."""
    symmetry = effective_symmetry(symmetry, array.shape[-2], array.shape[-1])
    if symmetry & TRANSPOSE:
        array = _transpose(array)
    if symmetry & FLIP_X:
        array = _flip(array, -1)
    if symmetry & FLIP_Y:
        array = _flip(array, -2)
    return array


def symmetric_point(x: int, y: int, x_size: int, y_size: int, symmetry: int) -> tuple[int, int]:
    """Where (x, y) of an ``x_size`` x ``y_size`` board lands after the symmetry (KataGo's getSymLoc).

    For a rectangular board, pass ``symmetry & 3`` to match what the network input undergoes.
    """
    _check(symmetry)
    if symmetry & FLIP_X:
        x = x_size - 1 - x
    if symmetry & FLIP_Y:
        y = y_size - 1 - y
    if symmetry & TRANSPOSE:
        x, y = y, x
    return x, y


def invert(symmetry: int) -> int:
    """The symmetry undoing ``symmetry`` (only the two 'rotations' 5 and 6 differ from their inverse)."""
    _check(symmetry)
    return {5: 6, 6: 5}.get(symmetry, symmetry)


def compose(first: int, then: int) -> int:
    """The single symmetry equal to applying ``first`` and then ``then``."""
    _check(first)
    _check(then)
    if is_transpose(first):
        # After a transpose, flipping x of the result flips y of the original and vice versa.
        then = (then & TRANSPOSE) | ((then & FLIP_X) >> 1) | ((then & FLIP_Y) << 1)
    return first ^ then


# ---------------------------------------------------------------------------------------------
# Whole batches at once (gather_indices: the same maps as index tables).

_GATHER_CACHE: dict[tuple[int, int, bool], np.ndarray] = {}


def gather_indices(height: int, width: int, undo: bool = False) -> np.ndarray:
    """``[8, H*W]`` int64: row ``s`` lists, for each flattened output point, the input point it takes.

    ``flat_out = flat_in[..., idx[s]]`` equals ``apply_symmetry`` (``undo_symmetry`` if undo) on
    ``[..., H, W]`` arrays, rectangular inputs included (no transpose there)."""
    key = (height, width, undo)
    table = _GATHER_CACHE.get(key)
    if table is None:
        grid = np.arange(height * width, dtype=np.int64).reshape(height, width)
        transform = undo_symmetry if undo else apply_symmetry
        table = np.stack([np.ascontiguousarray(transform(grid, s)).reshape(-1) for s in range(NUM_SYMMETRIES)])
        table.flags.writeable = False
        _GATHER_CACHE[key] = table
    return table


def symmetry_pos_maps(height: int, width: int) -> np.ndarray:
    """``[8, H*W]`` int32: row ``s`` gives, for each flattened input point, where :func:`apply_symmetry` puts
    it (the inverse of :func:`gather_indices`): what a search tree needs to fill features already transformed."""
    maps = _POS_MAP_CACHE.get((height, width))
    if maps is None:
        table = gather_indices(height, width)
        maps = np.empty(table.shape, np.int32)
        for s in range(table.shape[0]):
            maps[s, table[s]] = np.arange(table.shape[1], dtype=np.int32)
        maps.flags.writeable = False
        _POS_MAP_CACHE[(height, width)] = maps
    return maps


# (height, width) -> symmetry_pos_maps: made once per board shape (every new search tree asks).
_POS_MAP_CACHE: dict[tuple[int, int], np.ndarray] = {}


def apply_symmetries(batch: np.ndarray, symmetries, undo: bool = False) -> np.ndarray:
    """``batch[i]`` transformed by ``symmetries[i]`` for a whole ``[N, C, H, W]`` batch (a new array).

    float32 batches (features, network outputs) go through the core's gather (one C loop, no numpy
    call per row); others are copied row by row through flip/transpose views."""
    symmetries = np.asarray(symmetries, dtype=np.int64).reshape(-1)
    transform = undo_symmetry if undo else apply_symmetry
    first = int(symmetries[0]) if len(symmetries) else 0
    if (symmetries == first).all():
        return np.ascontiguousarray(transform(batch, first))
    n, c, h, w = batch.shape
    if batch.dtype == np.float32:  # the network's arrays: one nogil pass through the index table
        flat = np.ascontiguousarray(batch).reshape(n, c, h * w)
        return gather_rows(flat, gather_indices(h, w, undo), symmetries).reshape(n, c, h, w)
    out = np.empty(batch.shape, batch.dtype)
    for i, symmetry in enumerate(symmetries.tolist()):
        out[i] = transform(batch[i], symmetry)
    return out