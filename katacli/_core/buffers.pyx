# cython: language_level=3
"""Arrays' memory held without memoryview objects (see buffers.pxd)."""
from cpython.buffer cimport PyObject_GetBuffer, PyBuffer_Release, PyBUF_C_CONTIGUOUS, PyBUF_FORMAT, PyBUF_STRIDES

# Names for messages, by ItemKind.
_KIND_NAMES = {ITEM_FLOAT32: "float32", ITEM_FLOAT64: "float64", ITEM_BYTE: "bool", ITEM_INT64: "int64"}


cdef bint _format_is(const Py_buffer* view, ItemKind kind) noexcept:
    """Whether the buffer's items are of this kind (native byte order)."""
    cdef const char* f = view.format
    if f == NULL:
        return False
    if f[0] == b"@" or f[0] == b"=" or f[0] == b"<":   # (katacli's hosts are little-endian: numpy's "<" is native)
        f += 1
    if f[0] == 0 or f[1] != 0:
        return False
    if kind == ITEM_FLOAT32:
        return f[0] == b"f" and view.itemsize == 4
    if kind == ITEM_FLOAT64:
        return f[0] == b"d" and view.itemsize == 8
    if kind == ITEM_BYTE:
        return (f[0] == b"?" or f[0] == b"B") and view.itemsize == 1
    return (f[0] == b"l" or f[0] == b"q") and view.itemsize == 8


cdef Py_buffer* hold(HeldBuffers* held, object obj, ItemKind kind, int ndim, str what) except NULL:
    return _hold(held, obj, kind, ndim, what, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT, "C-contiguous ")


cdef Py_buffer* hold_strided(HeldBuffers* held, object obj, ItemKind kind, int ndim, str what) except NULL:
    return _hold(held, obj, kind, ndim, what, PyBUF_STRIDES | PyBUF_FORMAT, "")


cdef Py_buffer* _hold(HeldBuffers* held, object obj, ItemKind kind, int ndim, str what, int flags,
                      str layout) except NULL:
    cdef Py_buffer* view
    if held.count >= MAX_HELD_BUFFERS:
        raise ValueError(f"more than {MAX_HELD_BUFFERS} buffers held at once")
    if obj is None:
        raise TypeError(f"{what}: an array is needed, not None")
    view = &held.views[held.count]
    PyObject_GetBuffer(obj, view, flags)
    if view.ndim != ndim or not _format_is(view, kind):
        got_ndim, got_format = view.ndim, (<bytes>view.format).decode() if view.format != NULL else "?"
        PyBuffer_Release(view)
        raise ValueError(f"{what}: expected a {layout}{ndim}-dimensional {_KIND_NAMES[kind]} array, got "
                         f"{got_ndim} dimensions of format {got_format!r}")
    held.count += 1
    return view


cdef void release_held(HeldBuffers* held) noexcept:
    while held.count > 0:
        held.count -= 1
        PyBuffer_Release(&held.views[held.count])
