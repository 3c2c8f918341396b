# cython: language_level=3
"""Contract: policy rows shared by the network's answers, the NN cache and the search tree's nodes.

A network answer's policy is kept once: a block of rows, each the board points' priors in row-major
order followed by the pass prior (-1 where a move is illegal), reference counted in C. The NN cache
holds a block through the answer's ``policy`` and ``policy_pass`` arrays, read-only numpy views of
a PolicyBlock (shared_policy()); every node evaluated from one of its rows holds a reference too, instead of a copy
of its legal moves' priors (KataGo's nodes likewise share the cache's NNOutput). The block is freed
when the last holder lets go. Retain and release are atomic: nodes of several trees (the analysis
engine's searches) and the Python objects may drop their references from different threads.
"""
from libc.stdint cimport int64_t

cdef struct PolicyRows:
    int64_t refs
    int num_rows
    int width               # board points + 1 (the pass prior last)
    float* data             # num_rows * width floats

# A block of num_rows rows of width floats (uninitialised) with one reference for the caller, or NULL.
cdef PolicyRows* policy_rows_new(int num_rows, int width) noexcept nogil
cdef void policy_rows_retain(PolicyRows* rows) noexcept nogil
cdef void policy_rows_release(PolicyRows* rows) noexcept nogil      # rows may be NULL


cdef class PolicyBlock:
    """A PolicyRows block seen from Python (the buffer protocol). It holds no Python references, so that
    the numpy views based on it form no reference cycle: shared_policy() makes the views."""
    cdef PolicyRows* rows
    cdef Py_ssize_t _shape[1]
    cdef Py_ssize_t _strides[1]


# The block and first row behind a policy [n, area] / policy_pass [n] pair of shared_policy()'s views
# (rows may be a slice of the block), or NULL when the arrays are not such views.
cdef PolicyRows* shared_policy_rows(object policy, object policy_pass, int area, float** first_row) except? NULL
