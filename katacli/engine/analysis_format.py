"""The ``info ...`` lines of lz-analyze, kata-analyze and Sabaki's analyze, exactly as KataGo prints them.

The search hands over an :class:`AnalysisSnapshot` (values from White's point
of view, as KataGo keeps them); this module turns it into one output line:

* ``lz-analyze``: integers, winrate/prior/lcb times 10000, rounded half away from zero.
* ``kata-analyze``: C++ default float output (``%g``, 6 significant digits).
* ``analyze`` (Sabaki): the same fields with C++ ``showpoint`` (``%#g``), so
  every number has a decimal point.

Values are reported for the side to move unless ``reportAnalysisWinratesAs``
names a colour.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Sequence

from katacli.game.coords import BLACK, WHITE, Point, format_vertex

LZ_SCALE = 10000.0
# Per-move ownership is rounded to 1e-6 before printing, as KataGo does.
MOVES_OWNERSHIP_ROUNDING = 1_000_000.0
TINY = 1e-20  # keeps the LCB scale finite when every utility factor is zero


@dataclass
class MoveAnalysis:
    """One root child. Values are from White's point of view."""

    move: Point | None
    visits: int  # visits of the child node
    edge_visits: int  # visits the root sent along this move
    win_loss: float  # in [-1, 1]
    utility: float
    utility_lcb: float
    radius: float  # LCB radius in utility units
    score_mean: float  # "selfplay" score
    score_stdev: float
    lead: float
    no_result: float
    prior: float
    weight: float
    order: int
    pv: list[Point | None] = field(default_factory=list)
    pv_visits: list[int] = field(default_factory=list)
    pv_edge_visits: list[int] = field(default_factory=list)
    is_symmetry_of: Point | None = None
    has_symmetry_of: bool = False
    ownership: Sequence[float] | None = None  # row-major, White's point of view
    ownership_stdev: Sequence[float] | None = None


@dataclass
class RootAnalysis:
    visits: int
    win_loss: float
    utility: float
    score_mean: float
    score_stdev: float
    lead: float
    weight: float
    # Raw network outputs at the root; None when there is no network.
    raw_st_wr_error: float | None = None
    raw_st_score_error: float | None = None
    raw_var_time_left: float | None = None


@dataclass
class AnalysisSnapshot:
    moves: list[MoveAnalysis]
    root: RootAnalysis | None
    ownership: Sequence[float] | None = None  # row-major, White's point of view
    ownership_stdev: Sequence[float] | None = None


@dataclass(frozen=True)
class AnalyzeOptions:
    """What an analysis command asked for (see :mod:`katacli.engine.analyze_args`)."""

    lz: bool = False  # lz-analyze style integers
    kata: bool = False  # kata-analyze; neither lz nor kata means Sabaki's analyze
    interval_seconds: float = 1e28
    min_moves: int = 0
    max_moves: int = 10_000_000
    root_info: bool = False
    ownership: bool = False
    ownership_stdev: bool = False
    moves_ownership: bool = False
    moves_ownership_stdev: bool = False
    pv_visits: bool = False
    pv_edge_visits: bool = False
    no_result_value: bool = False
    # player -> {point or None (pass): depth until which the search avoids it}
    avoid: dict = field(default_factory=dict)

    @property
    def wants_ownership(self) -> bool:
        return self.ownership or self.ownership_stdev or self.moves_ownership or self.moves_ownership_stdev


def round_half_away(value: float) -> float:
    """C's round(): halves go away from zero (Python's round() goes to even)."""
    if math.isnan(value) or math.isinf(value):
        return value
    return math.copysign(math.floor(abs(value) + 0.5), value)


def reports_for_black(perspective: str | None, pla: int) -> bool:
    """Whether values are flipped to Black's view: asked for Black, or side to move and Black moves."""
    return perspective == "B" or (perspective not in ("B", "W") and pla == BLACK)


def hacked_lcb_winrate(move: MoveAnalysis, pla: int, radius_scale: float) -> float:
    """KataGo's winrate "LCB" for lz-analyze users: the utility LCB radius applied to the winrate."""
    winrate = 0.5 * (1.0 + move.win_loss)
    if pla == WHITE:
        return winrate - move.radius * radius_scale
    return winrate + move.radius * radius_scale


def lcb_radius_scale(win_loss_factor: float, static_score_factor: float, dynamic_score_factor: float) -> float:
    """How much of the utility LCB radius counts for the winrate (halved: winrate spans 0..1, not -1..1)."""
    return 0.5 * win_loss_factor / (win_loss_factor + static_score_factor + dynamic_score_factor + TINY)


class AnalysisFormatter:
    """Formats snapshots for one analysis command."""

    def __init__(self, options: AnalyzeOptions, pla: int, x_size: int, y_size: int, perspective: str | None,
                 radius_scale: float, pv_cutoff: Callable[[Sequence[Point | None]], int] | None = None):
        """``pv_cutoff(pv)`` gives how many PV moves to print (KataGo stops PVs at the end of the game phase
        when the cleanup phase is prevented); None prints them all."""
        self.options = options
        self.pla = pla
        self.x_size = x_size
        self.y_size = y_size
        self.flip = reports_for_black(perspective, pla)
        self.radius_scale = radius_scale
        self.pv_cutoff = pv_cutoff
        self.fmt = "%#g" if not (options.lz or options.kata) else "%g"

    # ------------------------------------------------------------------ helpers
    def _num(self, value: float) -> str:
        return self.fmt % value

    def _vertex(self, xy: Point | None) -> str:
        return format_vertex(xy, self.x_size, self.y_size)

    def _pv_parts(self, move: MoveAnalysis) -> tuple[list[str], list[str], list[str]]:
        length = len(move.pv)
        if self.pv_cutoff is not None and any(p is None for p in move.pv):
            length = self.pv_cutoff(move.pv)
        pv = [self._vertex(p) for p in move.pv[:length]]
        return pv, [str(v) for v in move.pv_visits[:length]], [str(v) for v in move.pv_edge_visits[:length]]

    def _selected_moves(self, snapshot: AnalysisSnapshot) -> list[MoveAnalysis]:
        return snapshot.moves[: self.options.max_moves]

    def _board_values(self, values: Sequence[float], negate: bool, rounding: float | None = None) -> str:
        out = []
        for v in values:
            v = -v if negate else v
            if rounding is not None:
                v = round_half_away(v * rounding) / rounding
            out.append(" " + self._num(v))
        return "".join(out)

    # ------------------------------------------------------------------ lines
    def format(self, snapshot: AnalysisSnapshot) -> str | None:
        """The info line (without newline), or None when there is nothing to report yet."""
        if self.options.lz and not self.options.kata:
            return self._format_lz(snapshot)
        return self._format_kata(snapshot)

    def _format_lz(self, snapshot: AnalysisSnapshot) -> str | None:
        moves = self._selected_moves(snapshot)
        if not moves:
            return None
        chunks = []
        for move in moves:
            winrate = 0.5 * (1.0 + move.win_loss)
            lcb = hacked_lcb_winrate(move, self.pla, self.radius_scale)
            if self.flip:
                winrate, lcb = 1.0 - winrate, 1.0 - lcb
            pv, pv_visits, pv_edge_visits = self._pv_parts(move)
            parts = [
                "info", "move", self._vertex(move.move),
                "visits", str(move.visits),
                "winrate", "%g" % round_half_away(winrate * LZ_SCALE),
                "prior", "%g" % round_half_away(move.prior * LZ_SCALE),
                "lcb", "%g" % round_half_away(lcb * LZ_SCALE),
                "order", str(move.order),
                "pv", " ".join(pv),
            ]
            text = " ".join(parts)
            if self.options.pv_visits:
                text += " pvVisits " + " ".join(pv_visits)
            if self.options.pv_edge_visits:
                text += " pvEdgeVisits " + " ".join(pv_edge_visits)
            chunks.append(text)
        return " ".join(chunks)

    def _format_kata(self, snapshot: AnalysisSnapshot) -> str | None:
        if snapshot.root is None:
            return None
        moves = self._selected_moves(snapshot)
        if not moves:
            return None
        sign = -1.0 if self.flip else 1.0
        num = self._num
        chunks = []
        for move in moves:
            winrate = 0.5 * (1.0 + move.win_loss)
            lcb = hacked_lcb_winrate(move, self.pla, self.radius_scale)
            if self.flip:
                winrate, lcb = 1.0 - winrate, 1.0 - lcb
            lead = sign * move.lead
            text = (
                f"info move {self._vertex(move.move)} visits {move.visits} edgeVisits {move.edge_visits}"
                f" utility {num(sign * move.utility)} winrate {num(winrate)} scoreMean {num(lead)}"
                f" scoreStdev {num(move.score_stdev)} scoreLead {num(lead)}"
                f" scoreSelfplay {num(sign * move.score_mean)}"
            )
            if self.options.no_result_value:
                text += f" noResultValue {num(move.no_result)}"
            text += f" prior {num(move.prior)} lcb {num(lcb)} utilityLcb {num(sign * move.utility_lcb)}"
            text += f" weight {num(move.weight)}"
            if move.has_symmetry_of:
                text += f" isSymmetryOf {self._vertex(move.is_symmetry_of)}"
            pv, pv_visits, pv_edge_visits = self._pv_parts(move)
            text += f" order {move.order} pv " + " ".join(pv)
            if self.options.pv_visits:
                text += " pvVisits " + " ".join(pv_visits)
            if self.options.pv_edge_visits:
                text += " pvEdgeVisits " + " ".join(pv_edge_visits)
            if self.options.moves_ownership and move.ownership is not None:
                text += " movesOwnership" + self._board_values(move.ownership, self.flip, MOVES_OWNERSHIP_ROUNDING)
            if self.options.moves_ownership_stdev and move.ownership_stdev is not None:
                text += " movesOwnershipStdev" + self._board_values(
                    move.ownership_stdev, False, MOVES_OWNERSHIP_ROUNDING)
            chunks.append(text)
        line = " ".join(chunks)
        if self.options.root_info:
            line += self._root_info(snapshot.root, sign)
        if self.options.ownership and snapshot.ownership is not None:
            line += " ownership" + self._board_values(snapshot.ownership, self.flip)
        if self.options.ownership_stdev and snapshot.ownership_stdev is not None:
            line += " ownershipStdev" + self._board_values(snapshot.ownership_stdev, False)
        return line

    def _root_info(self, root: RootAnalysis, sign: float) -> str:
        num = self._num
        winrate = 0.5 * (1.0 + root.win_loss)
        if self.flip:
            winrate = 1.0 - winrate
        lead = sign * root.lead
        text = (
            f" rootInfo visits {root.visits} utility {num(sign * root.utility)} winrate {num(winrate)}"
            f" scoreMean {num(lead)} scoreStdev {num(root.score_stdev)} scoreLead {num(lead)}"
            f" scoreSelfplay {num(sign * root.score_mean)} weight {num(root.weight)}"
        )
        if root.raw_st_wr_error is not None:
            text += (f" rawStWrError {num(root.raw_st_wr_error)} rawStScoreError {num(root.raw_st_score_error)}"
                     f" rawVarTimeLeft {num(root.raw_var_time_left)}")
        return text
