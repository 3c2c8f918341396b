# cython: language_level=3, boundscheck=False, wraparound=False
"""KataGo's Global::roundDynamic over many numbers in one call (katacli.analysis.protocol.round_dynamic is
the one-number reference): an analysis response rounds ~12 numbers per move it reports, and with
includePolicy one per board point, ~1,000 to 1,500 numbers a response.

The arithmetic is the reference's, step by step in double precision (log10, floor, pow and copysign of
the C library that Python's math module calls too); the product ``magnitude * scale`` is stored before
the + 0.5 (a volatile), so that no compiler fuses the two into one multiply-add, which rounds once.
"""
import numpy as np

cdef extern from *:
    """
    #include <math.h>
    static double katacli_round_dynamic(double value, int precision, double zero_threshold) {
        double magnitude = fabs(value);
        if (!(zero_threshold < magnitude && magnitude < HUGE_VAL)) return value;  /* NaN fails both */
        double rounding_magnitude = floor(log10(magnitude)) - precision;
        if (rounding_magnitude >= 0) return copysign(floor(magnitude + 0.5), value);
        double scale = pow(10.0, -rounding_magnitude);
        volatile double scaled = magnitude * scale;  /* rounded before the + 0.5, as in Python */
        return copysign(floor(scaled + 0.5), value) / scale;
    }
    """
    double katacli_round_dynamic(double value, int precision, double zero_threshold) noexcept nogil


def round_dynamic_many(values, int precision, double zero_threshold):
    """[round_dynamic(v, precision) for v in values] as a list of floats; ``values`` any sequence or array
    of numbers (float32 ones are widened exactly, as float() widens them)."""
    cdef const double[::1] src = np.ascontiguousarray(values, np.float64).reshape(-1)
    cdef Py_ssize_t n = src.shape[0], i
    out = np.empty(n, np.float64)
    cdef double[::1] dst = out
    with nogil:
        for i in range(n):
            dst[i] = katacli_round_dynamic(src[i], precision, zero_threshold)
    return out.tolist()
