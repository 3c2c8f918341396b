# cython: language_level=3
"""Contract: storing a whole batch of network answers into the tree's waiting leaves, in one nogil call.

The answers come as arrays, one row per leaf in batch order (White's view): ``values`` [n, 9]
doubles in DirectEval order (win, loss, no_result, score_mean, score_mean_sq, lead, var_time_left,
st_wl_error, st_score_error), ``policy``: n rows of area + 1 priors (the pass prior last) in the block
``policy_block``, which the leaves' nodes keep a reference to (policy_rows.pxd); ownership [n, area] with
``own_rows`` saying which rows hold one (NULL: none); the human-SL net's policy likewise (NULL: none).
Each leaf's evaluation is stored, then its path is backed up, leaf by leaf in batch order.

``apply_batch_arrays`` is the checked entry from Python objects (SearchTree.apply_batch): the arrays are
held as they are when they already have that layout (an NNEvaluator's answers: their policy rows are the
NN cache's block, shared, not copied), else converted (policy rows into a block of their own), and every
shape is checked before the tree changes, so a bad batch raises with the leaves still pending.
"""
from katacli._core.search_nodes cimport TreeCore
from katacli._core.policy_rows cimport PolicyRows

# Values per leaf row, in DirectEval order.
cdef enum:
    NUM_VALUE_COLUMNS = 9

cdef void apply_leaf_rows(TreeCore* t, const double* values, const float* policy, PolicyRows* policy_block,
                          const float* ownership, const unsigned char* own_rows, const float* human_policy,
                          const float* human_pass, const unsigned char* human_rows) noexcept nogil
cdef int apply_batch_arrays(TreeCore* t, values, policy, policy_pass, ownership, ownership_rows, human_policy,
                            human_pass, human_rows) except -1
