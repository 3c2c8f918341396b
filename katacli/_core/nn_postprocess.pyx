# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""A batch's raw network outputs as answers in one nogil pass (katacli.nn.evaluator.postprocess_arrays).

Per row, as KataGo's NNEvaluator does it (nneval.cpp): the symmetry undone and the board cropped out
of the network's grid, the optimistic policy channel mixed in, the policy scaled by the output scale
over the temperature, a softmax over the legal moves in float32 (the maximum, then exp and the sum of
the board's points, pass added last, the pass prior capped by the passing hacks, -1 where illegal,
uniform if every legal prior rounded to 0); the values in double as katacli.nn.postprocess computes
them (rounded to float32), ownership as tanh from White's side. The numpy version (postprocess.py)
stays the per-position reference; the two agree to float32 rounding. The policy's passes are written
for the compiler to vectorize (their own exp, the sum in four running sums, no branches), so its last
bits differ from KataGo's libm exp and one running sum by an ulp or two: a thousandth of the tolerance
of the golden tests against KataGo's outputs. Measured (AMD EPYC, one thread, 19x19 rows, all legal):
1.91 us a row with libm's expf and one running sum, 1.00 us now.
"""
import numpy as np

from libc.math cimport exp, log1p, sqrt, tanhf, isfinite
from libc.stdint cimport int64_t
from libc.string cimport memset
from katacli._core.policy_rows cimport PolicyBlock
from katacli._core.buffers cimport (
    HeldBuffers, ItemKind, hold, release_held, ITEM_FLOAT32, ITEM_FLOAT64, ITEM_BYTE, ITEM_INT64,
)
from katacli._core.features cimport G_KO_NOT_SIMPLE, G_TERRITORY, NUM_GLOBAL_FEATURES_V7

from katacli._core.pthreads cimport pthread_t, pthread_create, pthread_join

# exp for the policy softmax, in plain arithmetic so the compiler vectorizes the loop that calls it (libm's
# expf, one call a point, was a third of a row's time): Cephes' expf (range reduction by ln 2 in two parts,
# a degree-6 polynomial, 2^n put in the exponent bits), within 1 ulp of the exact value (checked against
# double exp at every float in [-87, 0], where softmax arguments lie: 0.98 at worst, 1.01 built with
# KATACLI_NATIVE=1, where the compiler fuses its multiply-adds). Below -87.3 it
# returns about 1e-38 where expf gives a denormal or 0: a prior that small is 0 to every reader.
cdef extern from *:
    """
    #include <stdint.h>
    #include <string.h>
    /* x must not be NaN (the conversion to int is undefined for it): _policy_row refuses such a row first. */
    static inline float katacli_policy_exp(float x) {
        float fn, r, r2, p, scale;
        int32_t bits;
        x = x < -87.3f ? -87.3f : x;
        x = x > 88.3f ? 88.3f : x;
        /* n = round(x / ln 2): adding and taking away 1.5 * 2^23 rounds to the nearest integer. */
        fn = x * 1.44269504088896341f + 12582912.0f;
        fn = fn - 12582912.0f;
        r = x - fn * 0.693359375f;
        r = r - fn * -2.12194440e-4f;
        r2 = r * r;
        p = 1.9875691500e-4f;
        p = p * r + 1.3981999507e-3f;
        p = p * r + 8.3334519073e-3f;
        p = p * r + 4.1665795894e-2f;
        p = p * r + 1.6666665459e-1f;
        p = p * r + 5.0000001201e-1f;
        p = p * r2 + r + 1.0f;
        bits = ((int32_t)fn + 127) << 23;
        memcpy(&scale, &bits, sizeof(scale));
        return p * scale;
    }
    /* The largest of v[0 .. n) and start, in four running maxima (one chain of compares would wait on
       each). NaNs are never taken, as in one chain; the result is the same but for the sign of a zero. */
    static inline float katacli_max_of(const float* v, int n, float start) {
        float m0 = start, m1 = start, m2 = start, m3 = start;
        int p = 0;
        for (; p + 4 <= n; p += 4) {
            m0 = v[p] > m0 ? v[p] : m0;
            m1 = v[p + 1] > m1 ? v[p + 1] : m1;
            m2 = v[p + 2] > m2 ? v[p + 2] : m2;
            m3 = v[p + 3] > m3 ? v[p + 3] : m3;
        }
        for (; p < n; p++)
            m0 = v[p] > m0 ? v[p] : m0;
        m0 = m1 > m0 ? m1 : m0;
        m2 = m3 > m2 ? m3 : m2;
        return m2 > m0 ? m2 : m0;
    }
    /* The sum of v[0 .. n) in four running sums (one chain of adds waits on each, a third of a row's
       time): the same float32 rounding class as one chain, not the same last bit. */
    static inline float katacli_sum_of(const float* v, int n) {
        float s0 = 0.0f, s1 = 0.0f, s2 = 0.0f, s3 = 0.0f;
        int p = 0;
        for (; p + 4 <= n; p += 4) {
            s0 += v[p];
            s1 += v[p + 1];
            s2 += v[p + 2];
            s3 += v[p + 3];
        }
        for (; p < n; p++)
            s0 += v[p];
        return (s0 + s1) + (s2 + s3);
    }
    """
    float policy_exp "katacli_policy_exp"(float x) noexcept nogil
    float sum_of "katacli_sum_of"(const float* v, int n) noexcept nogil
    float max_of "katacli_max_of"(const float* v, int n, float start) noexcept nogil

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
    # A row's columns in the NN cache's scalars (cache_scalars=True): the value columns, then these.
    CACHE_PASS_COLUMN = NUM_VALUE_COLUMNS
    CACHE_SYMMETRY_COLUMN
    CACHE_OPTIMISM_COLUMN
    CACHE_HAS_OWNERSHIP_COLUMN
    NUM_CACHE_SCALAR_COLUMNS
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
    # Threads one call may split its rows over (postprocess_rows' ``threads``).
    MAX_POSTPROCESS_THREADS = 8


# Everything a range of rows of postprocess_rows' loop reads and writes: the rows are independent, so
# ranges can run on different threads. status / failed_row: the range's first failure, if any.
cdef struct RowJob:
    Py_ssize_t start, end
    const float* pol
    const float* pass_logits
    const float* value_logits
    const float* score_logits
    const unsigned char* legal_rows
    const int64_t* undo
    const unsigned char* white_rows
    const float* optimism_rows
    const float* temperature_rows
    const unsigned char* hacks_rows
    const unsigned char* want_rows
    const int64_t* sym_rows
    const unsigned char* allow_rows
    const float* globals_rows
    const float* own_in
    double* values_out
    float* probs_out
    double* scalars_out
    float* own_out
    const double* m
    Py_ssize_t grid, legal_width, globals_width, own_channels, value_width
    int channels, optimistic, board_x, board_y, grid_w, area, score_columns, pass_columns, version
    bint mix_optimism, from_globals, cache_scalars, has_own
    int status
    Py_ssize_t failed_row


# The extra columns of the cache scalars, by name (katacli.nn.batch.cached_rows reads them).
CACHE_EXTRA_COLUMNS = {"policy_pass": CACHE_PASS_COLUMN, "symmetry": CACHE_SYMMETRY_COLUMN,
                       "policy_optimism": CACHE_OPTIMISM_COLUMN, "has_ownership": CACHE_HAS_OWNERSHIP_COLUMN}


cdef inline double _softplus(double x) noexcept nogil:
    # exp of at most SOFTPLUS_LINEAR_THRESHOLD cannot overflow.
    return x if x > SOFTPLUS_LINEAR_THRESHOLD else log1p(exp(x))


cdef int _policy_row(const float* p0, const float* p1, float pass0, float pass1, float optimism, bint mixed,
                     const int64_t* index, int board_x, int grid_w, int area, const unsigned char* legal,
                     float scaling, bint hacks, float* out) noexcept nogil:
    """One row's priors into out[0 .. area] (pass last); p1 the optimistic channel when mixed."""
    cdef int p, q, x, y, legal_count = 0, nans = 0
    cdef float max_logit = MAX_POLICY_START, total = 0.0, board_total, uniform
    cdef const int64_t* row_index
    cdef float* row_out
    # The row's logits in board order (the gather by rows of board_x points: no division per point).
    for y in range(area // board_x):
        row_index = &index[y * grid_w]
        row_out = &out[y * board_x]
        if mixed:
            for x in range(board_x):
                q = row_index[x]
                row_out[x] = p0[q] + (p1[q] - p0[q]) * optimism
        else:
            for x in range(board_x):
                row_out[x] = p0[row_index[x]]
    out[area] = pass0 + (pass1 - pass0) * optimism if mixed else pass0
    # Branch-free passes (the compiler vectorizes them): scaled logits, illegal ones pushed to ILLEGAL_LOGIT.
    for p in range(area + 1):
        legal_count += legal[p] != 0
        out[p] = out[p] * scaling if legal[p] else ILLEGAL_LOGIT
        nans += out[p] != out[p]
    max_logit = max_of(out, area + 1, MAX_POLICY_START)
    if legal_count == 0:
        return NO_LEGAL_MOVE
    # A NaN logit, or an infinite maximum (inf - inf below): what libm's exp made NaN, refused before the exp.
    if nans or not isfinite(max_logit):
        return NONFINITE_POLICY
    for p in range(area + 1):
        # An illegal move gets 0 exactly, as exp(-1e30 - max) is (the exp computed for it is dropped: no branch).
        out[p] = policy_exp(out[p] - max_logit) if legal[p] else 0.0
    total = sum_of(out, area)
    if hacks:
        board_total = total
        out[area] = max(MIN_PASS_POLICY, min(out[area], board_total * MAX_PASS_POLICY_SUM_FACTOR))
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


cdef void _run_rows(RowJob* j) noexcept nogil:
    """Rows j.start:j.end of postprocess_rows' loop; stops at the first row that fails (j.status)."""
    cdef Py_ssize_t i
    cdef int p, x, y, status = OK
    cdef const int64_t* index
    cdef float scaling, out_scale = <float>j.m[0]
    cdef bint allow
    cdef const float* own_src
    cdef float* own_dst
    cdef Py_ssize_t grid = j.grid
    cdef int area = j.area
    j.status, j.failed_row = OK, -1
    for i in range(j.start, j.end):
        index = &j.undo[j.sym_rows[i] * grid]
        scaling = out_scale / j.temperature_rows[i]
        status = _policy_row(&j.pol[i * j.channels * grid], &j.pol[(i * j.channels + j.optimistic) * grid],
                             j.pass_logits[i * j.pass_columns], j.pass_logits[i * j.pass_columns + j.optimistic],
                             j.optimism_rows[i], j.mix_optimism, index, j.board_x, j.grid_w, area,
                             &j.legal_rows[i * j.legal_width], scaling, j.hacks_rows[i], &j.probs_out[i * (area + 1)])
        if j.from_globals:   # KataGo: no result is possible under simple ko or territory scoring
            allow = (j.globals_rows[i * j.globals_width + G_KO_NOT_SIMPLE] == 0.0
                     or j.globals_rows[i * j.globals_width + G_TERRITORY] == 1.0)
        else:
            allow = j.allow_rows[i] != 0
        if status == OK:
            status = _value_row(&j.value_logits[i * j.value_width], &j.score_logits[i * j.score_columns],
                                j.white_rows[i], allow, j.version, j.m, &j.values_out[i * NUM_VALUE_COLUMNS])
        if status != OK:
            j.status, j.failed_row = status, i
            return
        if j.cache_scalars:
            for p in range(NUM_VALUE_COLUMNS):
                j.scalars_out[i * NUM_CACHE_SCALAR_COLUMNS + p] = j.values_out[i * NUM_VALUE_COLUMNS + p]
            j.scalars_out[i * NUM_CACHE_SCALAR_COLUMNS + CACHE_PASS_COLUMN] = j.probs_out[i * (area + 1) + area]
            j.scalars_out[i * NUM_CACHE_SCALAR_COLUMNS + CACHE_SYMMETRY_COLUMN] = <double>j.sym_rows[i]
            j.scalars_out[i * NUM_CACHE_SCALAR_COLUMNS + CACHE_OPTIMISM_COLUMN] = <double>j.optimism_rows[i]
            j.scalars_out[i * NUM_CACHE_SCALAR_COLUMNS + CACHE_HAS_OWNERSHIP_COLUMN] = (
                1.0 if j.has_own and j.want_rows[i] else 0.0)
        if j.has_own:
            own_src = &j.own_in[i * j.own_channels * grid]
            own_dst = &j.own_out[i * area]
            if not j.want_rows[i]:  # tanh is dear: only the rows that keep ownership
                memset(own_dst, 0, area * sizeof(float))
                continue
            for y in range(j.board_y):
                for x in range(j.board_x):
                    p = y * j.board_x + x
                    own_dst[p] = tanhf(own_src[index[y * j.grid_w + x]] * out_scale)
                    if not j.white_rows[i]:
                        own_dst[p] = -own_dst[p]


cdef void* _rows_thread(void* arg) noexcept nogil:
    _run_rows(<RowJob*>arg)
    return NULL


cdef void _run_split(RowJob* job, int threads) noexcept nogil:
    """The job's rows split into ``threads`` ranges, one on this thread and the others on threads of their
    own (made and joined here: a call worth splitting costs far more than making them); the first failing
    row in row order is the job's. Ranges a thread could not be made for run here."""
    cdef RowJob parts[MAX_POSTPROCESS_THREADS]
    cdef pthread_t ids[MAX_POSTPROCESS_THREADS]
    cdef bint started[MAX_POSTPROCESS_THREADS]
    cdef Py_ssize_t n = job.end - job.start, k
    cdef int t
    if threads > MAX_POSTPROCESS_THREADS:
        threads = MAX_POSTPROCESS_THREADS
    if threads > n:
        threads = <int>n
    if threads <= 1:
        _run_rows(job)
        return
    for t in range(threads):
        parts[t] = job[0]
        parts[t].start = job.start + n * t // threads
        parts[t].end = job.start + n * (t + 1) // threads
    for t in range(1, threads):
        started[t] = pthread_create(&ids[t], NULL, _rows_thread, &parts[t]) == 0
        if not started[t]:
            _run_rows(&parts[t])
    _run_rows(&parts[0])
    for t in range(1, threads):
        if started[t]:
            pthread_join(ids[t], NULL)
    job.status, job.failed_row = OK, -1
    for t in range(threads):
        if parts[t].status != OK:
            job.status, job.failed_row = parts[t].status, parts[t].failed_row
            return


def postprocess_rows(policy, policy_pass, value, score_value, ownership, legal, white, optimism, temperature, hacks,
                     allow_no_result, want_ownership, symmetries, undo_table, int board_x, int board_y, int version,
                     bint mix_optimism, multipliers, *, global_features=None, bint cache_scalars=False,
                     int threads=1):
    """(values float64 [n, 9], priors float32 [n, area + 1] with pass last, ownership float32 [n, area] or
    None) of n rows, and with ``cache_scalars`` a fourth array: the NN cache's per-row scalars float64
    [n, 13] (the value columns, then CACHE_EXTRA_COLUMNS: pass prior, symmetry, optimism as float32 gave
    it, whether the row holds ownership). C-contiguous float32 arrays: policy [n, C, H, W] and policy_pass
    [n, C] as the net gave them (channel 1 the optimistic one, mixed in when mix_optimism), value [n, 3],
    score_value [n, S], ownership [n, 1, H, W] or None (kept only for the rows want_ownership names: zero in
    the others; None when no row wants it), optimism and temperature [n]; bools (or uint8): legal
    [n, area + 1], white, hacks, want_ownership [n], allow_no_result [n] or None to read it from
    ``global_features`` float32 [n, 19] (simple ko or territory scoring); int64: symmetries [n] and
    undo_table katacli.nn.symmetry.gather_indices(H, W, undo=True); multipliers (output scale, score mean,
    score stdev, lead, variance-time, short-term value error, short-term score error). An array of another
    type or layout raises ValueError (the caller converts it). ``threads``: split the rows over that many
    threads (up to MAX_POSTPROCESS_THREADS; the rows are independent, so the answers are the same)."""
    cdef HeldBuffers held
    held.count = 0
    try:
        return _postprocess_rows(&held, policy, policy_pass, value, score_value, ownership, legal, white, optimism,
                                 temperature, hacks, allow_no_result, want_ownership, symmetries, undo_table, board_x,
                                 board_y, version, mix_optimism, multipliers, global_features, cache_scalars,
                                 threads)
    finally:
        release_held(&held)


cdef const void* _row_vector(HeldBuffers* held, object array, ItemKind kind, Py_ssize_t n, str what) except NULL:
    """The data of a per-row vector of n items, held."""
    cdef Py_buffer* view = hold(held, array, kind, 1, what)
    if view.shape[0] != n:
        raise ValueError(f"postprocess_rows: {what} has {view.shape[0]} rows, the policy {n}")
    return view.buf


cdef object _postprocess_rows(HeldBuffers* held, policy, policy_pass, value, score_value, ownership, legal, white,
                              optimism, temperature, hacks, allow_no_result, want_ownership, symmetries, undo_table,
                              int board_x, int board_y, int version, bint mix_optimism, multipliers,
                              global_features, bint cache_scalars, int threads):
    """postprocess_rows with every array it reads or fills held in ``held`` (released by the caller)."""
    cdef Py_buffer* policy_buf = hold(held, policy, ITEM_FLOAT32, 4, "policy")
    cdef Py_buffer* pass_buf = hold(held, policy_pass, ITEM_FLOAT32, 2, "policy_pass")
    cdef Py_buffer* value_buf = hold(held, value, ITEM_FLOAT32, 2, "value")
    cdef Py_buffer* score_buf = hold(held, score_value, ITEM_FLOAT32, 2, "score_value")
    cdef Py_buffer* legal_buf = hold(held, legal, ITEM_BYTE, 2, "legal")
    cdef Py_buffer* undo_buf = hold(held, undo_table, ITEM_INT64, 2, "undo_table")
    cdef Py_buffer* own_buf = NULL
    cdef Py_buffer* globals_buf = NULL
    cdef Py_ssize_t n = policy_buf.shape[0], i
    cdef int grid_h = policy_buf.shape[2], grid_w = policy_buf.shape[3], area = board_x * board_y, p
    cdef double m[NUM_MULTIPLIERS]
    # What the row loop reads and writes (see RowJob): the inputs' row-major data (shapes checked below).
    cdef RowJob job
    job.start, job.end = 0, n
    job.pol = <const float*>policy_buf.buf
    job.pass_logits = <const float*>pass_buf.buf
    job.value_logits = <const float*>value_buf.buf
    job.score_logits = <const float*>score_buf.buf
    job.legal_rows = <const unsigned char*>legal_buf.buf
    job.undo = <const int64_t*>undo_buf.buf
    job.white_rows = <const unsigned char*>_row_vector(held, white, ITEM_BYTE, n, "white")
    job.optimism_rows = <const float*>_row_vector(held, optimism, ITEM_FLOAT32, n, "optimism")
    job.temperature_rows = <const float*>_row_vector(held, temperature, ITEM_FLOAT32, n, "temperature")
    job.hacks_rows = <const unsigned char*>_row_vector(held, hacks, ITEM_BYTE, n, "hacks")
    job.want_rows = <const unsigned char*>_row_vector(held, want_ownership, ITEM_BYTE, n, "want_ownership")
    job.sym_rows = <const int64_t*>_row_vector(held, symmetries, ITEM_INT64, n, "symmetries")
    job.allow_rows = NULL
    job.globals_rows = NULL
    job.own_in = NULL
    job.m = m
    job.grid = <Py_ssize_t>grid_h * grid_w
    job.legal_width = legal_buf.shape[1]
    job.globals_width = 0
    job.own_channels = 0
    job.value_width = value_buf.shape[1]
    job.channels = policy_buf.shape[1]
    job.optimistic = 1 if mix_optimism else 0   # the policy channel mixed in
    job.board_x, job.board_y, job.grid_w, job.area, job.version = board_x, board_y, grid_w, area, version
    job.score_columns, job.pass_columns = score_buf.shape[1], pass_buf.shape[1]
    job.mix_optimism, job.cache_scalars, job.has_own = mix_optimism, cache_scalars, False
    job.from_globals = allow_no_result is None
    if job.from_globals:
        if global_features is None:
            raise ValueError("postprocess_rows needs allow_no_result or the rows' global features")
        globals_buf = hold(held, global_features, ITEM_FLOAT32, 2, "global_features")
        job.globals_rows = <const float*>globals_buf.buf
        job.globals_width = globals_buf.shape[1]
        if globals_buf.shape[0] != n or job.globals_width < NUM_GLOBAL_FEATURES_V7:
            raise ValueError(f"global features of shape ({globals_buf.shape[0]}, {job.globals_width}) for {n} rows")
    else:
        job.allow_rows = <const unsigned char*>_row_vector(held, allow_no_result, ITEM_BYTE, n, "allow_no_result")
    if not (0 < board_x <= grid_w and 0 < board_y <= grid_h):
        raise ValueError(f"board {board_x}x{board_y} does not fit the network's {grid_w}x{grid_h} outputs")
    if undo_buf.shape[1] != job.grid:
        raise ValueError(f"symmetry table has {undo_buf.shape[1]} points per row, the outputs {job.grid}")
    if mix_optimism and (job.channels < 2 or job.pass_columns < 2):
        raise ValueError("policy optimism needs the net's optimistic policy channel")
    if job.channels < 1 or job.pass_columns < 1 or job.value_width < 3:
        raise ValueError("the policy needs a channel, the pass logits a column and the value head three")
    if job.score_columns < (SCORE_COLUMNS_V9 if version >= 9 else SCORE_COLUMNS_OLD):
        raise ValueError(f"a version {version} net's score-value head needs more than {job.score_columns} columns")
    for array_rows in (pass_buf.shape[0], value_buf.shape[0], score_buf.shape[0], legal_buf.shape[0]):
        if array_rows != n:
            raise ValueError(f"postprocess_rows: an input has {array_rows} rows, the policy {n}")
    if job.legal_width != area + 1:
        raise ValueError(f"legal mask has {job.legal_width} entries per row, the board {area} + pass")
    for i in range(n):
        if not 0 <= job.sym_rows[i] < undo_buf.shape[0]:
            raise ValueError(f"symmetry {job.sym_rows[i]} out of range")
        if job.want_rows[i]:
            job.has_own = ownership is not None
    if len(multipliers) != NUM_MULTIPLIERS:
        raise ValueError(f"postprocess_rows takes {NUM_MULTIPLIERS} multipliers, got {len(multipliers)}")
    for p in range(NUM_MULTIPLIERS):
        m[p] = multipliers[p]
    values = np.empty((n, NUM_VALUE_COLUMNS), np.float64)
    # In a PolicyBlock: the NN cache and the search tree's nodes share these rows as they are (policy_rows.pxd).
    block = PolicyBlock(n, area + 1)
    probs = np.ndarray((n, area + 1), np.float32, buffer=block)
    job.values_out = <double*>hold(held, values, ITEM_FLOAT64, 2, "values").buf
    job.probs_out = (<PolicyBlock>block).rows.data
    scalars = np.empty((n, NUM_CACHE_SCALAR_COLUMNS), np.float64) if cache_scalars else None
    job.scalars_out = NULL
    if cache_scalars:
        job.scalars_out = <double*>hold(held, scalars, ITEM_FLOAT64, 2, "scalars").buf
    own = None
    job.own_out = NULL
    if job.has_own:
        own_buf = hold(held, ownership, ITEM_FLOAT32, 4, "ownership")
        if own_buf.shape[0] != n or own_buf.shape[2] != grid_h or own_buf.shape[3] != grid_w:
            raise ValueError(f"ownership shape ({own_buf.shape[0]}, {own_buf.shape[1]}, {own_buf.shape[2]}, "
                             f"{own_buf.shape[3]}) does not match the policy's")
        job.own_in = <const float*>own_buf.buf
        job.own_channels = own_buf.shape[1]
        own = np.empty((n, area), np.float32)
        job.own_out = <float*>hold(held, own, ITEM_FLOAT32, 2, "ownership rows").buf
    if n == 0:
        return (values, probs, own, scalars) if cache_scalars else (values, probs, own)
    with nogil:
        _run_split(&job, threads)
    if job.status == NO_LEGAL_MOVE:
        raise ValueError(f"a position has no legal move (not even pass): row {job.failed_row}")
    if job.status == NONFINITE_POLICY:
        raise FloatingPointError("non-finite policy sum")
    if job.status == NONFINITE_VALUE:
        raise FloatingPointError("non-finite network value output")
    return (values, probs, own, scalars) if cache_scalars else (values, probs, own)
