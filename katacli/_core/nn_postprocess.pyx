# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A batch's raw network outputs as answers in one nogil pass (katacli.nn.evaluator.postprocess_arrays).

Per row, as KataGo's NNEvaluator does it (nneval.cpp): the symmetry undone and the board cropped out
of the network's grid, the optimistic policy channel mixed in, the policy scaled by the output scale
over the temperature, a softmax over the legal moves in float32 (the maximum, then exp and a running
sum in board order with pass last, the pass prior capped by the passing hacks, -1 where illegal,
uniform if every legal prior rounded to 0); the values in double as katacli.nn.postprocess computes
them (rounded to float32), ownership as tanh from White's side. The numpy version (postprocess.py)
stays the per-position reference; the two agree to float32 rounding (exp and the sum's order).
"""
import numpy as np

from libc.math cimport exp, expf, log1p, sqrt, tanhf, isfinite
from libc.stdint cimport int64_t
from libc.string cimport memset
from katacli._core.policy_rows cimport PolicyBlock

# Value given to illegal moves' logits before the softmax, and to their probabilities after it.
cdef float ILLEGAL_LOGIT = -1e30
cdef float ILLEGAL_POLICY = -1.0
# KataGo starts the maximum below any legal logit.
cdef float MAX_POLICY_START = -1e25
# "Passing hacks": the pass prior may be at most this many times the sum of the other moves'.
cdef float MAX_PASS_POLICY_SUM_FACTOR = 19.0
cdef float MIN_PASS_POLICY = 1e-20
# See katacli.nn.postprocess.
cdef double NO_RESULT_SUPPRESSION = 100000.0
cdef double SOFTPLUS_LINEAR_THRESHOLD = 40.0
cdef double MISSING_VALUE = -1.0
cdef double OLD_SHORTTERM_SCORE_ERROR_SCALE = 10.0
cdef enum:
    # The value columns, in katacli.nn.batch.VALUE_COLUMNS' order.
    NUM_VALUE_COLUMNS = 9
    # Score-value head columns each model version has.
    SCORE_COLUMNS_OLD = 4
    SCORE_COLUMNS_V9 = 6
    # The multipliers postprocess_rows takes.
    NUM_MULTIPLIERS = 7
    # What a row's pass of the nogil loop may fail on (the message is made outside it).
    OK = 0
    NO_LEGAL_MOVE = 1
    NONFINITE_POLICY = 2
    NONFINITE_VALUE = 3


cdef inline double _softplus(double x) noexcept nogil:
    # exp of at most SOFTPLUS_LINEAR_THRESHOLD cannot overflow.
    return x if x > SOFTPLUS_LINEAR_THRESHOLD else log1p(exp(x))


cdef int _policy_row(const float* p0, const float* p1, float pass0, float pass1, float optimism, bint mixed,
                     const int64_t* index, int board_x, int grid_w, int area, const unsigned char* legal,
                     float scaling, bint hacks, float* out) noexcept nogil:
    """One row's priors into out[0 .. area] (pass last); p1 the optimistic channel when mixed."""
    cdef int p, q, x, y, legal_count = 0
    cdef float logit, max_logit = MAX_POLICY_START, total = 0.0, board_total, uniform
    # The row's logits in board order (the gather by rows of board_x points: no division per point).
    for y in range(area // board_x):
        for x in range(board_x):
            q = index[y * grid_w + x]
            out[y * board_x + x] = p0[q] + (p1[q] - p0[q]) * optimism if mixed else p0[q]
    out[area] = pass0 + (pass1 - pass0) * optimism if mixed else pass0
    for p in range(area + 1):
        logit = out[p]
        if legal[p]:
            legal_count += 1
            logit = logit * scaling
        else:
            logit = ILLEGAL_LOGIT
        out[p] = logit
        if logit > max_logit:
            max_logit = logit
    if legal_count == 0:
        return NO_LEGAL_MOVE
    for p in range(area):
        # An illegal move's exp(-1e30 - max) is 0 exactly: not computed (most of a row's time is expf).
        if legal[p]:
            out[p] = expf(out[p] - max_logit)
            total += out[p]
        else:
            out[p] = 0.0
    if hacks:
        board_total = total
        out[area] = max(MIN_PASS_POLICY, min(expf(out[area] - max_logit),
                                             board_total * MAX_PASS_POLICY_SUM_FACTOR))
    else:
        out[area] = expf(out[area] - max_logit)
    total += out[area]
    if not isfinite(total):
        return NONFINITE_POLICY
    if total <= 0.0:  # every legal prior rounded to 0: uniform, as KataGo
        uniform = 1.0 / legal_count
        for p in range(area + 1):
            out[p] = uniform if legal[p] else ILLEGAL_POLICY
    else:
        for p in range(area + 1):
            out[p] = out[p] / total if legal[p] else ILLEGAL_POLICY
    return OK


cdef int _value_row(const float* logits, const float* sv, bint white, bint allow_no_result, int version,
                    const double* m, double* out) noexcept nogil:
    """One row's value columns (VALUE_COLUMNS order), from White's side, each rounded to float32.
    m: output scale, score mean, score stdev, lead, variance-time, short-term value and score error
    multipliers."""
    cdef double scale = m[0]
    cdef double win_logit = logits[0] * scale, loss_logit = logits[1] * scale, no_result_logit = logits[2] * scale
    cdef double max_logit, win, loss, no_result, total, score_mean, score_stdev, score_mean_sq, lead
    cdef double var_time_left, st_winloss, st_score, has_result, s, sign
    cdef int k
    if not allow_no_result:
        no_result_logit = no_result_logit - NO_RESULT_SUPPRESSION
    max_logit = max(max(win_logit, loss_logit), no_result_logit)
    win = exp(win_logit - max_logit)
    loss = exp(loss_logit - max_logit)
    no_result = exp(no_result_logit - max_logit) if allow_no_result else 0.0
    total = win + loss + no_result
    win, loss, no_result = win / total, loss / total, no_result / total
    score_mean = (sv[0] * scale) * m[1]
    score_stdev = _softplus(sv[1] * scale) * m[2]
    score_mean_sq = score_mean * score_mean + score_stdev * score_stdev
    lead = (sv[2] * scale) * m[3]
    var_time_left = _softplus(sv[3] * scale) * m[4]
    has_result = 1.0 - no_result
    score_mean, score_mean_sq, lead = score_mean * has_result, score_mean_sq * has_result, lead * has_result
    if version >= 14:
        s = _softplus((sv[4] * scale) * 0.5)
        st_winloss = sqrt(s * s * m[5])
        s = _softplus((sv[5] * scale) * 0.5)
        st_score = sqrt(s * s * m[6])
    elif version >= 10:
        st_winloss = sqrt(_softplus(sv[4] * scale) * m[5])
        st_score = sqrt(_softplus(sv[5] * scale) * m[6])
    elif version >= 9:
        st_winloss = _softplus(sv[4] * scale)
        st_score = _softplus(sv[5] * scale) * OLD_SHORTTERM_SCORE_ERROR_SCALE
    else:
        var_time_left = st_winloss = st_score = MISSING_VALUE
    sign = 1.0 if white else -1.0
    out[0] = <float>(win if white else loss)
    out[1] = <float>(loss if white else win)
    out[2] = <float>no_result
    out[3] = <float>(sign * score_mean)
    out[4] = <float>score_mean_sq
    out[5] = <float>(sign * lead)
    out[6] = <float>var_time_left
    out[7] = <float>st_winloss
    out[8] = <float>st_score
    if not isfinite(total):
        return NONFINITE_VALUE
    for k in range(NUM_VALUE_COLUMNS):
        if not isfinite(out[k]):
            return NONFINITE_VALUE
    return OK


def postprocess_rows(const float[:, :, :, ::1] policy, const float[:, ::1] policy_pass, const float[:, ::1] value,
                     const float[:, ::1] score_value, ownership, const unsigned char[:, ::1] legal,
                     const unsigned char[::1] white, const float[::1] optimism, const float[::1] temperature,
                     const unsigned char[::1] hacks, const unsigned char[::1] allow_no_result,
                     const unsigned char[::1] want_ownership,
                     const int64_t[::1] symmetries, const int64_t[:, ::1] undo_table, int board_x, int board_y,
                     int version, bint mix_optimism, multipliers):
    """(values float64 [n, 9], priors float32 [n, area + 1] with pass last, ownership float32 [n, area] or
    None, zero in the rows want_ownership leaves out) of n rows. policy [n, C, H, W] and policy_pass [n, C] as the net gave them (channel 1 the
    optimistic one, mixed in when mix_optimism), ownership [n, 1, H, W] or None; undo_table
    katacli.nn.symmetry.gather_indices(H, W, undo=True); multipliers (output scale, score mean, score
    stdev, lead, variance-time, short-term value error, short-term score error)."""
    cdef Py_ssize_t n = policy.shape[0], i
    cdef int grid_h = policy.shape[2], grid_w = policy.shape[3], area = board_x * board_y
    cdef int channels = policy.shape[1], p, x, y, status = OK, failed_row = -1
    cdef int score_columns = score_value.shape[1]
    cdef double m[NUM_MULTIPLIERS]
    cdef bint has_own = ownership is not None
    cdef float out_scale, scaling
    cdef const int64_t* index
    cdef const float* own_src
    cdef float* own_dst
    cdef const float[:, :, :, ::1] own_view
    if not (0 < board_x <= grid_w and 0 < board_y <= grid_h):
        raise ValueError(f"board {board_x}x{board_y} does not fit the network's {grid_w}x{grid_h} outputs")
    if undo_table.shape[1] != grid_h * grid_w:
        raise ValueError(f"symmetry table has {undo_table.shape[1]} points per row, the outputs {grid_h * grid_w}")
    if mix_optimism and (channels < 2 or policy_pass.shape[1] < 2):
        raise ValueError("policy optimism needs the net's optimistic policy channel")
    if score_columns < (SCORE_COLUMNS_V9 if version >= 9 else SCORE_COLUMNS_OLD):
        raise ValueError(f"a version {version} net's score-value head needs more than {score_columns} columns")
    for array_rows in (policy_pass.shape[0], value.shape[0], score_value.shape[0], legal.shape[0], white.shape[0],
                       optimism.shape[0], temperature.shape[0], hacks.shape[0], allow_no_result.shape[0],
                       want_ownership.shape[0], symmetries.shape[0]):
        if array_rows != n:
            raise ValueError(f"postprocess_rows: an input has {array_rows} rows, the policy {n}")
    if legal.shape[1] != area + 1:
        raise ValueError(f"legal mask has {legal.shape[1]} entries per row, the board {area} + pass")
    for i in range(n):
        if not 0 <= symmetries[i] < undo_table.shape[0]:
            raise ValueError(f"symmetry {symmetries[i]} out of range")
    if len(multipliers) != NUM_MULTIPLIERS:
        raise ValueError(f"postprocess_rows takes {NUM_MULTIPLIERS} multipliers, got {len(multipliers)}")
    for p in range(NUM_MULTIPLIERS):
        m[p] = multipliers[p]
    out_scale = <float>m[0]
    values = np.empty((n, NUM_VALUE_COLUMNS), np.float64)
    # In a PolicyBlock: the NN cache and the search tree's nodes share these rows as they are (policy_rows.pxd).
    probs = np.ndarray((n, area + 1), np.float32, buffer=PolicyBlock(n, area + 1))
    cdef double[:, ::1] values_view = values
    cdef float[:, ::1] probs_view = probs
    own = None
    cdef float[:, ::1] own_out
    if has_own:
        own_view = ownership
        if own_view.shape[0] != n or own_view.shape[2] != grid_h or own_view.shape[3] != grid_w:
            raise ValueError(f"ownership shape {tuple(own_view.shape)[:4]} does not match the policy's")
        own = np.empty((n, area), np.float32)
        own_out = own
    if n == 0:
        return values, probs, own
    with nogil:
        for i in range(n):
            index = &undo_table[symmetries[i], 0]
            scaling = out_scale / temperature[i]
            status = _policy_row(&policy[i, 0, 0, 0], &policy[i, 1 if mix_optimism else 0, 0, 0],
                                 policy_pass[i, 0], policy_pass[i, 1 if mix_optimism else 0], optimism[i],
                                 mix_optimism, index, board_x, grid_w, area, &legal[i, 0], scaling, hacks[i],
                                 &probs_view[i, 0])
            if status == OK:
                status = _value_row(&value[i, 0], &score_value[i, 0], white[i], allow_no_result[i], version, m,
                                    &values_view[i, 0])
            if status != OK:
                failed_row = i
                break
            if has_own:
                own_src = &own_view[i, 0, 0, 0]
                own_dst = &own_out[i, 0]
                if not want_ownership[i]:  # tanh is dear: only the rows that keep ownership
                    memset(own_dst, 0, area * sizeof(float))
                    continue
                for y in range(board_y):
                    for x in range(board_x):
                        p = y * board_x + x
                        own_dst[p] = tanhf(own_src[index[y * grid_w + x]] * out_scale)
                        if not white[i]:
                            own_dst[p] = -own_dst[p]
    if status == NO_LEGAL_MOVE:
        raise ValueError(f"a position has no legal move (not even pass): row {failed_row}")
    if status == NONFINITE_POLICY:
        raise FloatingPointError("non-finite policy sum")
    if status == NONFINITE_VALUE:
        raise FloatingPointError("non-finite network value output")
    return values, probs, own
