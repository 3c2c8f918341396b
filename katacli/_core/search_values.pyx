# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True
"""KataGo's utility shapes (see search_values.pxd)."""
from libc.math cimport atan, sqrt, exp, floor, round as c_round, fabs, pow, M_PI
from libc.stdlib cimport malloc, free

# ---- expected score value table ---------------------------------------------------
# The table is built for a 19x19 board and rescaled for other sizes, as KataGo does.
cdef enum:
    SV_ASSUMED_BOARD_LEN = 19
    SV_EXTRA_SCORE_RADIUS = 60            # KataGo's EXTRA_SCORE_DISTR_RADIUS
    SV_MEAN_RADIUS = 19 * 19 + 60
    SV_MEAN_LEN = 2 * SV_MEAN_RADIUS
    SV_STDEV_LEN = 19 * 19 + 60
    SV_STEPS_PER_UNIT = 10                # integration steps per point and per stdev (even)
    SV_BOUND_STDEVS = 5                   # integrate the normal distribution over +-5 stdevs

cdef double* _sv_table = NULL

cdef inline double _score_value_smooth(double score, double center, double scale, double sqrt_board_area) noexcept nogil:
    return atan((score - center) / (scale * sqrt_board_area)) * (2.0 / M_PI)


cdef void sv_init_tables() noexcept nogil:
    global _sv_table
    cdef int min_stdev_steps = -SV_BOUND_STDEVS * SV_STEPS_PER_UNIT
    cdef int max_stdev_steps = SV_BOUND_STDEVS * SV_STEPS_PER_UNIT
    cdef int min_sv_steps = -(SV_MEAN_RADIUS * SV_STEPS_PER_UNIT + SV_STEPS_PER_UNIT // 2
                              + SV_BOUND_STDEVS * SV_STDEV_LEN * SV_STEPS_PER_UNIT)
    cdef int max_sv_steps = -min_sv_steps
    cdef double* normal_pdf
    cdef double* sv_at
    cdef double* table
    cdef int i, mean_idx, stdev_idx, mean_steps
    cdef double x, w_sum, wsv_sum
    if _sv_table != NULL:
        return
    normal_pdf = <double*>malloc((max_stdev_steps - min_stdev_steps + 1) * sizeof(double))
    sv_at = <double*>malloc((max_sv_steps - min_sv_steps + 1) * sizeof(double))
    table = <double*>malloc(SV_MEAN_LEN * SV_STDEV_LEN * sizeof(double))
    for i in range(min_stdev_steps, max_stdev_steps + 1):
        x = <double>i / SV_STEPS_PER_UNIT
        normal_pdf[i - min_stdev_steps] = exp(-0.5 * x * x)
    for i in range(min_sv_steps, max_sv_steps + 1):
        sv_at[i - min_sv_steps] = _score_value_smooth(<double>i / SV_STEPS_PER_UNIT, 0.0, 1.0, SV_ASSUMED_BOARD_LEN)
    for mean_idx in range(SV_MEAN_LEN):
        # Cell centres sit half a point below the integer means, so that rounding picks a cell pair.
        mean_steps = (mean_idx - SV_MEAN_RADIUS) * SV_STEPS_PER_UNIT - SV_STEPS_PER_UNIT // 2
        for stdev_idx in range(SV_STDEV_LEN):
            w_sum = 0.0
            wsv_sum = 0.0
            for i in range(min_stdev_steps, max_stdev_steps + 1):
                w_sum += normal_pdf[i - min_stdev_steps]
                wsv_sum += normal_pdf[i - min_stdev_steps] * sv_at[mean_steps + stdev_idx * i - min_sv_steps]
            table[mean_idx * SV_STDEV_LEN + stdev_idx] = wsv_sum / w_sum
    free(normal_pdf)
    free(sv_at)
    _sv_table = table


cdef double expected_white_score_value(double mean, double stdev, double center, double scale,
                                       double sqrt_board_area) noexcept nogil:
    cdef double scale_factor = SV_ASSUMED_BOARD_LEN / (scale * sqrt_board_area)
    cdef double mean_scaled = (mean - center) * scale_factor
    cdef double stdev_scaled = stdev * scale_factor
    cdef double mean_rounded = c_round(mean_scaled)
    cdef double stdev_floored = floor(stdev_scaled)
    cdef int m0 = <int>mean_rounded + SV_MEAN_RADIUS
    cdef int s0 = <int>stdev_floored
    cdef int m1 = m0 + 1, s1 = s0 + 1
    cdef double lambda_mean, lambda_stdev, a00, a01, a10, a11, b0, b1
    if m0 < 0:
        m0 = 0
        m1 = 0
    if m1 >= SV_MEAN_LEN:
        m0 = SV_MEAN_LEN - 1
        m1 = SV_MEAN_LEN - 1
    if s0 < 0:
        s0 = 0
        s1 = 0
    if s1 >= SV_STDEV_LEN:
        s0 = SV_STDEV_LEN - 1
        s1 = SV_STDEV_LEN - 1
    lambda_mean = mean_scaled - mean_rounded + 0.5
    lambda_stdev = stdev_scaled - stdev_floored
    a00 = _sv_table[m0 * SV_STDEV_LEN + s0]
    a01 = _sv_table[m0 * SV_STDEV_LEN + s1]
    a10 = _sv_table[m1 * SV_STDEV_LEN + s0]
    a11 = _sv_table[m1 * SV_STDEV_LEN + s1]
    b0 = a00 + lambda_stdev * (a01 - a00)
    b1 = a10 + lambda_stdev * (a11 - a10)
    return b0 + lambda_mean * (b1 - b0)


cdef double score_stdev(double score_mean, double score_mean_sq) noexcept nogil:
    cdef double variance = score_mean_sq - score_mean * score_mean
    if variance <= 0.0:
        return 0.0
    return sqrt(variance)


cdef double score_value_derivative(double score, double center, double scale, double sqrt_board_area) noexcept nogil:
    cdef double adjusted = score - center
    cdef double k = scale * sqrt_board_area
    return k / (k * k + adjusted * adjusted) * (2.0 / M_PI)


# ---- utility ----------------------------------------------------------------------
# The static score utility always uses centre 0 and this scale.
cdef double STATIC_SCORE_SCALE = 2.0


cdef double result_utility(const SearchConfig* c, double win_loss, double no_result) noexcept nogil:
    return win_loss * c.win_loss_utility_factor + no_result * c.no_result_utility_for_white


cdef double score_utility(const SearchConfig* c, double score_mean, double score_mean_sq) noexcept nogil:
    cdef double stdev = score_stdev(score_mean, score_mean_sq)
    cdef double static_value = 0.0, dynamic_value = 0.0
    if c.static_score_utility_factor != 0.0:
        static_value = expected_white_score_value(score_mean, stdev, 0.0, STATIC_SCORE_SCALE, c.sqrt_board_area)
    if c.dynamic_score_utility_factor != 0.0:
        dynamic_value = expected_white_score_value(score_mean, stdev, c.recent_score_center,
                                                   c.dynamic_score_center_scale, c.sqrt_board_area)
    return static_value * c.static_score_utility_factor + dynamic_value * c.dynamic_score_utility_factor


cdef double score_utility_diff(const SearchConfig* c, double score_mean, double score_mean_sq, double delta) noexcept nogil:
    cdef double stdev = score_stdev(score_mean, score_mean_sq)
    cdef double static_diff = 0.0, dynamic_diff = 0.0
    if delta == 0.0:
        return 0.0
    if c.static_score_utility_factor != 0.0:
        static_diff = (expected_white_score_value(score_mean + delta, stdev, 0.0, STATIC_SCORE_SCALE, c.sqrt_board_area)
                       - expected_white_score_value(score_mean, stdev, 0.0, STATIC_SCORE_SCALE, c.sqrt_board_area))
    if c.dynamic_score_utility_factor != 0.0:
        dynamic_diff = (
            expected_white_score_value(score_mean + delta, stdev, c.recent_score_center, c.dynamic_score_center_scale,
                                       c.sqrt_board_area)
            - expected_white_score_value(score_mean, stdev, c.recent_score_center, c.dynamic_score_center_scale,
                                         c.sqrt_board_area))
    return static_diff * c.static_score_utility_factor + dynamic_diff * c.dynamic_score_utility_factor


cdef double approx_score_utility_derivative(const SearchConfig* c, double score_mean) noexcept nogil:
    return (score_value_derivative(score_mean, 0.0, STATIC_SCORE_SCALE, c.sqrt_board_area) * c.static_score_utility_factor
            + score_value_derivative(score_mean, c.recent_score_center, c.dynamic_score_center_scale, c.sqrt_board_area)
            * c.dynamic_score_utility_factor)


cdef double utility_radius(const SearchConfig* c) noexcept nogil:
    return c.win_loss_utility_factor + c.static_score_utility_factor + c.dynamic_score_utility_factor


cdef double eval_weight(const SearchConfig* c, double score_mean, double st_wl_error, double st_score_error) noexcept nogil:
    cdef double uncertainty, powered, baseline
    if not c.use_uncertainty or not c.nn_has_shortterm_error or st_wl_error < 0.0 or st_score_error < 0.0:
        return 1.0
    uncertainty = (c.win_loss_utility_factor * st_wl_error
                   + approx_score_utility_derivative(c, score_mean) * st_score_error)
    if c.uncertainty_exponent == 1.0:
        powered = uncertainty
    elif c.uncertainty_exponent == 0.5:
        powered = sqrt(uncertainty)
    else:
        powered = pow(uncertainty, c.uncertainty_exponent)
    baseline = c.uncertainty_coeff / c.uncertainty_max_weight
    return c.uncertainty_coeff / (powered + baseline)


cdef double terminal_weight(const SearchConfig* c) noexcept nogil:
    if c.use_uncertainty and c.nn_has_shortterm_error:
        return c.uncertainty_max_weight
    return 1.0


# ---- Student t (3 degrees of freedom) cdf table --------------------------------------
cdef enum:
    T3_TABLE_SIZE = 2000
cdef double T3_MIN_Z = -50.0
cdef double T3_MAX_Z = 50.0
cdef double _t3_table[T3_TABLE_SIZE]

cdef double _t3_cdf_exact(double t) noexcept nogil:
    # Closed form for 3 degrees of freedom.
    cdef double s = sqrt(3.0)
    return 0.5 + (t / (s * (1.0 + t * t / 3.0)) + atan(t / s)) / M_PI

cdef void _t3_init() noexcept nogil:
    cdef int i
    for i in range(T3_TABLE_SIZE):
        if i == 0:
            _t3_table[i] = 0.0
        elif i == T3_TABLE_SIZE - 1:
            _t3_table[i] = 1.0
        else:
            _t3_table[i] = _t3_cdf_exact(T3_MIN_Z + i * (T3_MAX_Z - T3_MIN_Z) / (T3_TABLE_SIZE - 1))


cdef double t3_cdf(double z) noexcept nogil:
    cdef double d = (T3_TABLE_SIZE - 1) * (z - T3_MIN_Z) / (T3_MAX_Z - T3_MIN_Z)
    cdef int idx
    cdef double lam
    if d <= 0.0:
        return 0.0
    idx = <int>d
    if idx >= T3_TABLE_SIZE - 1:
        return 1.0
    lam = d - idx
    return _t3_table[idx] + lam * (_t3_table[idx + 1] - _t3_table[idx])


with nogil:
    sv_init_tables()
    _t3_init()


# ---- Python access (tests, reporting) ------------------------------------------------
def py_expected_white_score_value(double mean, double stdev, double center, double scale, double sqrt_board_area):
    return expected_white_score_value(mean, stdev, center, scale, sqrt_board_area)

def py_t3_cdf(double z):
    return t3_cdf(z)
