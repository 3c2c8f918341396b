"""The GTP engine's pattern avoidance: its SGF or saved-move table, and the autoAvoidRepeat bookkeeping.

KataGo's gtp.cpp loads the avoidSgfPattern* table or, with autoAvoidRepeatDir, the saved moves (not
both) before answering; every genmove records its position and move; the records are saved a chunk
at a time at the commands that start a new position (boardsize, clear_board, set_position, the
handicap commands, loadsgf) and always at quit; clear_board after a save reloads the table.
"""
from __future__ import annotations

import random
from typing import Callable, Optional

from katacli.search.auto_pattern_avoidance import AutoAvoidRecorder, GenmoveSample, load_and_prune
from katacli.search.pattern_avoidance import PatternAvoidanceError, PatternBonusTable, load_sgf_pattern_table

Log = Callable[[str], None]
DETERMINISTIC_NAMES = "forDeterministicTesting"


class GtpPatternAvoidance:
    """The table searches steer away from (None: no external table), and the genmove records to save."""

    def __init__(self, table: Optional[PatternBonusTable], recorder: Optional[AutoAvoidRecorder],
                 startup_log: list[str]):
        self.table = table
        self.recorder = recorder
        self.startup_log = startup_log   # written to the engine log once it exists

    @classmethod
    def load(cls, settings, deterministic: bool = False) -> "GtpPatternAvoidance":
        """From GtpSettings; PatternAvoidanceError (one line naming the file or directory) when unusable."""
        lines: list[str] = []
        table = load_sgf_pattern_table(list(settings.sgf_patterns), lines.append)
        recorder = None
        if settings.auto_avoid is not None:
            if table is not None:
                raise PatternAvoidanceError(
                    "Providing both sgf avoid patterns and auto avoid patterns is not implemented right now")
            settings.auto_avoid.check_complete()
            table = load_and_prune(settings.auto_avoid, lines.append)
            # File names differ from run to run even with searchRandSeed (KataGo's unseeded seedRand), so that
            # runs never overwrite each other's moves; forDeterministicTesting fixes them, as in KataGo.
            recorder = AutoAvoidRecorder(settings.auto_avoid, random.Random(DETERMINISTIC_NAMES if deterministic else None))
        return cls(table, recorder, lines)

    @classmethod
    def off(cls) -> "GtpPatternAvoidance":
        return cls(None, None, [])

    def record_genmove(self, state, pla: int, move) -> None:
        """genmove chose `move` (None: pass) for `pla` on `state` (the position it searched)."""
        if self.recorder is not None:
            self.recorder.record(GenmoveSample(state.board(), pla, len(state.moves), move))

    def maybe_save(self, force: bool, log: Log, alert: Log) -> None:
        """Save the waiting genmove samples when due; ``alert``: a line for the log and the user's stderr."""
        if self.recorder is not None:
            error = self.recorder.maybe_save(force, log)
            if error is not None:   # the moves are not saved: said where a user sees it, not only in the log
                alert(f"ERROR: {error}")

    def reload_if_saved(self, log: Log) -> None:
        """At clear_board: the saved moves, this run's included, become the table (KataGo's)."""
        if self.recorder is not None and self.recorder.should_reload:
            try:
                self.table = load_and_prune(self.recorder.settings, log)
            except PatternAvoidanceError as exc:
                log(f"ERROR: {exc}")
            self.recorder.should_reload = False
