"""Progress of a self-play run: a live rich panel on a terminal, periodic log lines otherwise."""
from __future__ import annotations

import sys
import time
from typing import Optional

from rich.console import Console
from rich.live import Live
from rich.table import Table

from katacli.selfplay.stats import RunStats

# Without a terminal, print a status line at most this often, seconds.
PLAIN_REPORT_SECONDS = 30.0
LIVE_REFRESH_PER_SECOND = 4


def format_duration(seconds: float) -> str:
    seconds = int(seconds)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def status_table(stats: RunStats) -> Table:
    table = Table(title="kata selfplay" + ("  (stopping: writing finished games)" if stats.stopping else ""),
                  show_header=False, box=None, padding=(0, 2))
    table.add_column(style="bold")
    table.add_column(justify="right")
    in_flight = stats.games_in_progress
    table.add_row("model", stats.current_model or "-")
    games = f"{stats.games_finished} finished, {in_flight} in progress, {stats.queued_games} waiting to be written"
    if stats.games_dropped:
        games += f", {stats.games_dropped} dropped"
    table.add_row("games", games)
    table.add_row("rows", f"{stats.rows_written} in {stats.files_written} files "
                          f"({stats.rows_produced - stats.rows_written} buffered)")
    table.add_row("moves/s", f"{stats.rate(stats.moves_played):.1f}")
    table.add_row("rows/s", f"{stats.rate(stats.rows_produced):.2f}")
    table.add_row("network", network_text(stats))
    table.add_row("elapsed", format_duration(stats.elapsed))
    return table


def network_text(stats: RunStats) -> str:
    """Positions evaluated per second and the average batch they ran in."""
    return f"{stats.rate(stats.nn_positions):.0f} positions/s, average batch {stats.average_batch:.1f}"


def status_line(stats: RunStats) -> str:
    return (f"[{format_duration(stats.elapsed)}] model {stats.current_model or '-'}: "
            f"{stats.games_finished} games, {stats.rows_written} rows in {stats.files_written} files, "
            f"{stats.rate(stats.moves_played):.1f} moves/s, {stats.rate(stats.rows_produced):.2f} rows/s, "
            f"network {network_text(stats)}")


class ProgressDisplay:
    """Call as on_tick(stats); use as a context manager around the run."""

    def __init__(self, console: Optional[Console] = None, live: Optional[bool] = None):
        self.console = console or Console(file=sys.stderr, soft_wrap=True)   # whole lines in a log file, not cut at 80
        self.live_enabled = self.console.is_terminal if live is None else live
        self._live: Optional[Live] = None
        self._last_plain = 0.0

    def __enter__(self) -> "ProgressDisplay":
        if self.live_enabled:
            self._live = Live(console=self.console, refresh_per_second=LIVE_REFRESH_PER_SECOND, transient=False)
            self._live.__enter__()
        return self

    def __call__(self, stats: RunStats) -> None:
        if self._live is not None:
            self._live.update(status_table(stats))
        elif time.monotonic() - self._last_plain >= PLAIN_REPORT_SECONDS:
            self._last_plain = time.monotonic()
            self.console.print(status_line(stats), highlight=False)

    def finish(self, stats: RunStats) -> None:
        if self._live is not None:
            self._live.update(status_table(stats))
        else:
            self.console.print(status_line(stats), highlight=False)

    def __exit__(self, *exc) -> None:
        if self._live is not None:
            self._live.__exit__(*exc)
            self._live = None
