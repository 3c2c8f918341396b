# cython: language_level=3
"""Contract: an array's memory for the core, without a memoryview object per array.

A typed memoryview costs ~100 ns to make (an object for the collector to track, its format parsed); a
search's one-leaf batch hands its postprocessing over a dozen arrays, so those cost more than the
softmax itself. ``hold`` takes an array's buffer (PEP 3118) into a ``Py_buffer`` of a ``HeldBuffers``
on the caller's stack, checked to be C-contiguous, of the given item kind and number of dimensions;
``release_held`` gives them all back (call it in a ``finally``). Shapes are read from the Py_buffer.

Usage::

    cdef HeldBuffers held
    held.count = 0
    try:
        rows = <const float*>hold(&held, array, ITEM_FLOAT32, 2, "policy").buf
        ...
    finally:
        release_held(&held)
"""

cdef enum ItemKind:
    ITEM_FLOAT32      # numpy float32 ('f')
    ITEM_FLOAT64      # numpy float64 ('d')
    ITEM_BYTE         # numpy bool or uint8 ('?', 'B'): flags read as unsigned char
    ITEM_INT64        # numpy int64 ('l' or 'q', 8 bytes)

cdef enum:
    MAX_HELD_BUFFERS = 24

cdef struct HeldBuffers:
    int count
    Py_buffer views[MAX_HELD_BUFFERS]

# The buffer of obj, held until release_held: a C-contiguous array of ndim dimensions of that kind of item
# (ValueError naming ``what`` otherwise, TypeError for an object without a buffer).
cdef Py_buffer* hold(HeldBuffers* held, object obj, ItemKind kind, int ndim, str what) except NULL
# The same for an array of any strides (a view into a larger array): read them from the Py_buffer.
cdef Py_buffer* hold_strided(HeldBuffers* held, object obj, ItemKind kind, int ndim, str what) except NULL
cdef void release_held(HeldBuffers* held) noexcept
