# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""Reference-counted policy rows (contract: policy_rows.pxd)."""
from libc.stdint cimport int64_t, uintptr_t
from libc.stdlib cimport malloc, free
from libc.string cimport memcpy

import numpy as np

from katacli._core.buffers cimport HeldBuffers, hold_strided, release_held, ITEM_FLOAT32

from katacli._core.atomics cimport atomic_add_acq_rel


cdef PolicyRows* policy_rows_new(int num_rows, int width) noexcept nogil:
    cdef PolicyRows* rows = <PolicyRows*>malloc(sizeof(PolicyRows))
    if rows == NULL:
        return NULL
    rows.data = <float*>malloc((<size_t>num_rows * width if num_rows * width > 0 else 1) * sizeof(float))
    if rows.data == NULL:
        free(rows)
        return NULL
    rows.refs = 1
    rows.num_rows = num_rows
    rows.width = width
    return rows


cdef void policy_rows_retain(PolicyRows* rows) noexcept nogil:
    atomic_add_acq_rel(&rows.refs, 1)


cdef void policy_rows_release(PolicyRows* rows) noexcept nogil:
    if rows != NULL and atomic_add_acq_rel(&rows.refs, -1) == 0:
        free(rows.data)
        free(rows)


cdef class PolicyBlock:
    """PolicyBlock(num_rows, width): a block of num_rows rows of width floats (see shared_policy)."""

    def __cinit__(self, int num_rows, int width):
        if num_rows < 0 or width < 1:
            raise ValueError(f"a policy block needs rows >= 0 and width >= 1, got {num_rows} x {width}")
        self.rows = policy_rows_new(num_rows, width)
        if self.rows == NULL:
            raise MemoryError("no memory for a policy block")
        self._shape[0] = <Py_ssize_t>num_rows * width
        self._strides[0] = sizeof(float)

    def __dealloc__(self):
        policy_rows_release(self.rows)

    @property
    def references(self):
        """Holders of the block: this object plus every node evaluated from one of its rows."""
        return self.rows.refs

    def __getbuffer__(self, Py_buffer* view, int flags):
        view.buf = self.rows.data
        view.obj = self
        view.len = self._shape[0] * sizeof(float)
        view.readonly = 0
        view.itemsize = sizeof(float)
        view.format = b"f"
        view.ndim = 1
        view.shape = self._shape
        view.strides = self._strides
        view.suboffsets = NULL
        view.internal = NULL

    def __releasebuffer__(self, Py_buffer* view):
        pass


def shared_policy(policy, policy_pass):
    """(policy [n, area], policy_pass [n]): read-only copies of an answer's priors in one new PolicyBlock,
    each row's pass prior after its board points, for nodes to share (shared_policy_rows)."""
    policy = np.asarray(policy, dtype=np.float32)
    policy_pass = np.asarray(policy_pass, dtype=np.float32)
    if policy.ndim != 2 or policy_pass.shape != (policy.shape[0],):
        raise ValueError(f"policy [n, area] and policy_pass [n] expected, got shapes {policy.shape} "
                         f"and {policy_pass.shape}")
    n, area = policy.shape
    # The array's base is the block itself (no memoryview between): fewer objects per answered batch.
    flat = np.ndarray((n, area + 1), np.float32, buffer=PolicyBlock(n, area + 1))
    flat[:, :area] = policy
    flat[:, area] = policy_pass
    flat.flags.writeable = False
    return flat[:, :area], flat[:, area]


def views_one_block(policy, policy_pass):
    """Whether both arrays view the same PolicyBlock (as shared_policy() and the network postprocessing
    make them): such an answer's priors are shared already. A quick test; shared_policy_rows checks
    the layout when a tree takes the rows."""
    block = _block_behind(policy)
    return block is not None and _block_behind(policy_pass) is block


def policy_block_references(array):
    """The number of holders of the PolicyBlock an array views (the views count as one), or None."""
    block = _block_behind(array)
    return None if block is None else block.references


cdef object _block_behind(object array):
    """The PolicyBlock an array views (numpy's base chain, through a memoryview if one is there), or None."""
    while array is not None:
        if isinstance(array, PolicyBlock):
            return array
        if isinstance(array, memoryview):
            array = array.obj
        else:
            array = getattr(array, "base", None)
    return None


cdef PolicyRows* shared_policy_rows(object policy, object policy_pass, int area, float** first_row) except? NULL:
    cdef PolicyBlock buf
    cdef object block
    cdef HeldBuffers held
    cdef Py_buffer* rows
    cdef Py_buffer* passes
    cdef uintptr_t start, end, p, q
    cdef Py_ssize_t row_bytes, n
    block = _block_behind(policy)
    if block is None or _block_behind(policy_pass) is not block:
        return NULL
    buf = block
    if buf.rows.width != area + 1:
        return NULL
    row_bytes = (area + 1) * sizeof(float)
    held.count = 0
    try:   # (the arrays' memory read without a memoryview each: a one-leaf batch comes here every visit)
        try:
            rows = hold_strided(&held, policy, ITEM_FLOAT32, 2, "policy")
            passes = hold_strided(&held, policy_pass, ITEM_FLOAT32, 1, "policy_pass")
        except (ValueError, TypeError, BufferError):
            return NULL
        n = rows.shape[0]
        if rows.shape[1] != area or passes.shape[0] != n or rows.strides[1] != sizeof(float):
            return NULL
        if n > 1 and (rows.strides[0] != row_bytes or passes.strides[0] != row_bytes):
            return NULL
        p = <uintptr_t>rows.buf
        q = <uintptr_t>passes.buf
    finally:
        release_held(&held)
    start = <uintptr_t>buf.rows.data
    end = start + <uintptr_t>buf.rows.num_rows * row_bytes
    # Each row's pass prior must sit right after its board priors, inside the block.
    if p < start or (p - start) % row_bytes != 0 or q != p + area * sizeof(float):
        return NULL
    if p + <uintptr_t>n * row_bytes > end:
        return NULL
    first_row[0] = <float*>p
    return buf.rows
