# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Symmetries of a whole batch in one nogil pass: katacli.nn.symmetry.apply_symmetries' copy loop.

Row i of a [N, C, H, W] float32 batch is gathered through the index table row of its symmetry
(``gather_indices``: for each output point, the input point it takes), so the result is the same
element-for-element copy numpy's take_along_axis made, without a numpy call per row.
"""
import numpy as np

from libc.stdint cimport int64_t, uint32_t


def gather_rows(const float[:, :, ::1] batch, const int64_t[:, ::1] table, const int64_t[::1] symmetries):
    """out[i, c, p] = batch[i, c, table[symmetries[i], p]] for a batch flattened to [N, C, H*W]."""
    cdef Py_ssize_t n = batch.shape[0], channels = batch.shape[1], points = batch.shape[2]
    cdef Py_ssize_t i, c, p
    cdef const int64_t* index
    cdef const float* src
    cdef float* dst
    if symmetries.shape[0] != n:
        raise ValueError(f"{symmetries.shape[0]} symmetries for {n} rows")
    if table.shape[1] != points:
        raise ValueError(f"index table has {table.shape[1]} points per row, the batch {points}")
    for i in range(n):
        if not 0 <= symmetries[i] < table.shape[0]:
            raise ValueError(f"symmetry {symmetries[i]} out of range")
    out = np.empty((n, channels, points), np.float32)
    cdef float[:, :, ::1] out_view = out
    with nogil:
        for i in range(n):
            index = &table[symmetries[i], 0]
            for c in range(channels):
                src = &batch[i, c, 0]
                dst = &out_view[i, c, 0]
                if _is_constant(src, points):
                    # Most feature planes are constant (all zero: ko, ladders, encore, often
                    # liberties; all one: on the board), and gather to themselves: filled without
                    # a random read per point.
                    for p in range(points):
                        dst[p] = src[0]
                else:
                    for p in range(points):
                        dst[p] = src[index[p]]
    return out


cdef inline bint _is_constant(const float* plane, Py_ssize_t points) noexcept nogil:
    """Whether every value of the plane has the first one's bits (so -0.0 never passes for 0.0)."""
    cdef const uint32_t* bits = <const uint32_t*>plane
    cdef uint32_t first = bits[0], differs = 0
    cdef Py_ssize_t p
    for p in range(points):
        differs |= bits[p] ^ first
    return differs == 0
