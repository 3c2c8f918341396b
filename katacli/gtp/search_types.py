"""What the GTP layer asks of a search and what it gets back (see :mod:`katacli.gtp.bot`)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from katacli.search.params import SearchParams
from katacli.search.timecontrol import TimeControls

# Called with a katacli.search.results.SearchAnalysis (White's view) every report interval and once
# when the search ends (analyze: not after a stop request, as KataGo).
SnapshotCallback = Callable[[object], None]


@dataclass
class SearchRequest:
    """One search: the position (a GameState the search may keep), for whom, with what limits."""

    state: object  # katacli._core.game_state.GameState, ``pla`` to move
    pla: int
    params: SearchParams
    clock: TimeControls | None = None  # None: only the params' visit/playout/time limits apply
    search_factor: float = 1.0  # < 1 to think less (KataGo's searchFactorWhenWinning)
    nogo: bool = False
    # Searched with the analysis parameters (lz-analyze, kata-analyze), not the genmove ones
    analysis_params: bool = False
    # player -> {point or None (pass): depth until which the move is not searched}
    avoid: dict = field(default_factory=dict)
    # Analysis reporting
    report_interval: float | None = None  # seconds between snapshots; None: no reports
    min_moves: int = 0  # report at least this many moves, adding unvisited ones by prior
    pv_len: int = 15
    want_ownership: bool = False
    want_ownership_stdev: bool = False
    want_moves_ownership: bool = False


NO_MOVE = "no move"   # a search whose avoid / allow restrictions left no move to play, not even a pass


@dataclass
class SearchOutcome:
    """The result of a genmove-style search. Values are from White's point of view."""

    move: tuple[int, int] | str | None  # None: pass; or "resign", or NO_MOVE
    win_loss: float  # root value in [-1, 1]
    lead: float  # root expected lead for White
    visits: int
    move_prior: float = 0.0  # the network's prior for the move (delayMoveScale uses it)
    new_playouts: int = 0  # playouts this search added (visits - new_playouts came from tree reuse)
    score_stdev: float = 0.0  # the root's score standard deviation
