"""Steps skipped for non-finite gradients, counted on the training device.

A step whose gradient norm is not finite changes no weights (the fused optimizer skips it on the
device); a long enough run of them means training diverged. The count lives on the device and is
read back only at check points (metrics lines, checkpoints, exports, the end of a run), so steps
never wait for the GPU; the longest run since the last check is what the check compares.
"""

from __future__ import annotations

from typing import Optional

import torch


class BadStepTracker:
    def __init__(self) -> None:
        self._streak: Optional[torch.Tensor] = None  # bad steps in a row, up to the latest step
        self._longest: Optional[torch.Tensor] = None  # the longest streak since the last check

    def record(self, finite: torch.Tensor) -> None:
        """Add one step; ``finite``: a bool tensor, whether its gradients were finite."""
        if self._streak is None:
            self._streak = torch.zeros((), dtype=torch.int64, device=finite.device)
            self._longest = self._streak.clone()
        self._streak = torch.where(finite, 0, self._streak + 1)
        self._longest = torch.maximum(self._longest, self._streak)

    def longest_since_last_check(self) -> int:
        """The longest run of bad steps since the last call (one read from the device); a run still going on
        counts again, whole, at the next check."""
        if self._longest is None:
            return 0
        longest = int(self._longest)
        self._longest = self._streak.clone()
        return longest
