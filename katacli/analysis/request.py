"""One position to analyse: a single turn of a query, with everything its search and its response need.

A query with ``analyzeTurns: [3, 7]`` becomes two :class:`AnalysisRequest` objects.
Each goes through QUEUED -> RUNNING -> DONE, or is TERMINATED on the way
(a terminate action, or the engine quitting). Whoever moves a request out of
QUEUED owns writing its final response: the worker that started it, or the
terminate action, which writes ``noResults`` for requests never started.
"""
from __future__ import annotations

import enum
import threading
from dataclasses import dataclass, field
from typing import Optional

from katacli.search.params import SearchParams
from katacli.search.restrictions import MoveRestrictions

# How long before the first report when only reportDuringSearchEvery is given: the same period.
NEVER_SECONDS = 1e30


class RequestStatus(enum.Enum):
    QUEUED = "queued"
    RUNNING = "running"
    TERMINATED = "terminated"
    DONE = "done"


@dataclass(frozen=True)
class ReportOptions:
    """What the response should contain (the query's include* flags and PV length)."""

    perspective: Optional[str]          # "B", "W" or None: side to move
    pv_len: int
    include_ownership: bool = False
    include_ownership_stdev: bool = False
    include_moves_ownership: bool = False
    include_moves_ownership_stdev: bool = False
    include_policy: bool = False
    include_pv_visits: bool = False
    include_no_result_value: bool = False

    @property
    def wants_tree_ownership(self) -> bool:
        """Any ownership output needs per-node ownership kept in the tree."""
        return (self.include_ownership or self.include_ownership_stdev
                or self.include_moves_ownership or self.include_moves_ownership_stdev)


@dataclass(eq=False)
class AnalysisRequest:
    internal_id: int
    query_id: str
    turn_number: int
    priority: int
    state: object                       # katacli._core.game_state.GameState at this turn (owned by the request)
    params: SearchParams
    report: ReportOptions
    restrictions: Optional[MoveRestrictions] = None
    report_every: float = NEVER_SECONDS  # seconds between isDuringSearch reports
    first_report_after: float = NEVER_SECONDS
    prevent_encore: bool = True
    status: RequestStatus = RequestStatus.QUEUED
    stop_event: threading.Event = field(default_factory=threading.Event)

    @property
    def reports_during_search(self) -> bool:
        return self.report_every < NEVER_SECONDS or self.first_report_after < NEVER_SECONDS
