"""Numbers as KataGo's C++ computes them, where Python differs."""
from __future__ import annotations

import math


def round_half_away(value: float) -> float:
    """C's round(): halves go away from zero (Python's round() goes to even); NaN and infinities pass through."""
    if math.isnan(value) or math.isinf(value):
        return value
    return math.copysign(math.floor(abs(value) + 0.5), value)
