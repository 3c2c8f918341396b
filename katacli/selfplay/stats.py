"""The counters of a self-play run that the progress display reads (kept light: no torch import)."""
from __future__ import annotations

import time
from dataclasses import dataclass, field

# How often a run wakes to refresh progress and notice stop requests, seconds.
TICK_SECONDS = 0.25


@dataclass
class RunStats:
    """Counters the progress display reads (updated from several threads; plain ints are fine under the GIL)."""

    started_at: float = field(default_factory=time.monotonic)
    games_started: int = 0
    games_finished: int = 0
    games_dropped: int = 0      # stopped before they ended (not written)
    moves_played: int = 0
    rows_written: int = 0       # rows in complete files
    rows_produced: int = 0      # rows built, including those still buffered
    files_written: int = 0
    current_model: str = ""
    queued_games: int = 0
    stopping: bool = False

    @property
    def games_in_progress(self) -> int:
        return max(0, self.games_started - self.games_finished - self.games_dropped)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def rate(self, count: int) -> float:
        elapsed = self.elapsed
        return count / elapsed if elapsed > 0 else 0.0
