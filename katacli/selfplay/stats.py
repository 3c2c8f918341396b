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
    finished_game_moves: int = 0  # the moves_played of the games finished so far
    rows_written: int = 0       # rows in complete files
    rows_produced: int = 0      # rows built, including those still buffered
    files_written: int = 0
    current_model: str = ""
    queued_games: int = 0
    stopping: bool = False
    # The network's side (every model this run loaded): positions evaluated and the batches they
    # went in. Their ratio, the average batch, says whether games keep the device busy.
    nn_positions: int = 0
    nn_batches: int = 0

    @property
    def rows_per_move(self) -> float:
        """Training rows per move played, over the finished games (rows come at a game's end, so
        moves/s times this is the steady rows/s a short window of a run cannot show)."""
        return self.rows_produced / self.finished_game_moves if self.finished_game_moves else 0.0

    @property
    def average_batch(self) -> float:
        return self.nn_positions / self.nn_batches if self.nn_batches else 0.0

    @property
    def games_in_progress(self) -> int:
        return max(0, self.games_started - self.games_finished - self.games_dropped)

    @property
    def elapsed(self) -> float:
        return time.monotonic() - self.started_at

    def rate(self, count: int) -> float:
        elapsed = self.elapsed
        return count / elapsed if elapsed > 0 else 0.0
