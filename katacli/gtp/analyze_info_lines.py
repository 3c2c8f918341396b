"""The ``info ...`` lines of lz-analyze, kata-analyze and Sabaki's analyze, exactly as KataGo prints them.

The search hands over a :class:`katacli.search.results.SearchAnalysis` (values
from White's point of view, as KataGo keeps them); this module orients it for
the reporting side and turns it into one output line:

* ``lz-analyze``: integers, winrate/prior/lcb times 10000, rounded half away from zero.
* ``kata-analyze``: C++ default float output (``%g``, 6 significant digits).
* ``analyze`` (Sabaki): the same fields with C++ ``showpoint`` (``%#g``), so
  every number has a decimal point.

Values are reported for the side to move unless ``reportAnalysisWinratesAs``
names a colour.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from katacli.c_numbers import round_half_away
from katacli.game.coords import Point, format_vertex

LZ_SCALE = 10000.0
# Per-move ownership is rounded to 1e-6 before printing, as KataGo does.
MOVES_OWNERSHIP_ROUNDING = 1_000_000.0
# RootInfo.raw_st_wr_error is on the winrate scale (the analysis engine's); GTP prints the network's own.
RAW_ST_WR_ERROR_SCALE = 2.0


@dataclass(frozen=True)
class AnalyzeOptions:
    """What an analysis command asked for (see :mod:`katacli.gtp.analyze_args`)."""

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


class InfoLineFormatter:
    """Formats search snapshots (:class:`katacli.search.results.SearchAnalysis`) for one analysis command."""

    def __init__(self, options: AnalyzeOptions, x_size: int, y_size: int, perspective: str | None,
                 pv_cutoff: Callable[[Sequence[Point | None]], int] | None = None):
        """``perspective``: "B", "W" or None (side to move), KataGo's reportAnalysisWinratesAs.
        ``pv_cutoff(pv)`` gives how many PV moves to print (KataGo stops PVs at the end of the game
        phase when the cleanup phase is prevented); None prints them all."""
        self.options = options
        self.x_size = x_size
        self.y_size = y_size
        self.perspective = perspective
        self.pv_cutoff = pv_cutoff
        self.fmt = "%#g" if not (options.lz or options.kata) else "%g"

    # ------------------------------------------------------------------ helpers
    def _num(self, value: float) -> str:
        return self.fmt % value

    def _vertex(self, xy: Point | None) -> str:
        return format_vertex(xy, self.x_size, self.y_size)

    def _pv_parts(self, move) -> tuple[list[str], list[str], list[str]]:
        length = len(move.pv)
        if self.pv_cutoff is not None and any(p is None for p in move.pv):
            length = self.pv_cutoff(move.pv)
        pv = [self._vertex(p) for p in move.pv[:length]]
        return pv, [str(v) for v in move.pv_visits[:length]], [str(v) for v in move.pv_edge_visits[:length]]

    def _board_values(self, values, rounding: float | None = None) -> str:
        out = []
        for v in values:
            v = float(v)
            if rounding is not None:
                v = round_half_away(v * rounding) / rounding
            out.append(" " + self._num(v))
        return "".join(out)

    # ------------------------------------------------------------------ lines
    def format(self, analysis) -> str | None:
        """The info line (without newline), or None when there is nothing to report yet."""
        analysis = analysis.oriented(self.perspective)
        moves = analysis.moves[: self.options.max_moves]
        if not moves:
            return None
        if self.options.lz and not self.options.kata:
            return " ".join(self._lz_move(move) for move in moves)
        if analysis.root is None:
            return None
        line = " ".join(self._kata_move(move) for move in moves)
        if self.options.root_info:
            line += self._root_info(analysis.root)
        if self.options.ownership and analysis.ownership is not None:
            line += " ownership" + self._board_values(analysis.ownership)
        if self.options.ownership_stdev and analysis.ownership_stdev is not None:
            line += " ownershipStdev" + self._board_values(analysis.ownership_stdev)
        return line

    def _lz_move(self, move) -> str:
        pv, pv_visits, pv_edge_visits = self._pv_parts(move)
        text = (f"info move {self._vertex(move.move)} visits {move.visits}"
                f" winrate {round_half_away(move.winrate * LZ_SCALE):g}"
                f" prior {round_half_away(move.prior * LZ_SCALE):g}"
                f" lcb {round_half_away(move.lcb * LZ_SCALE):g} order {move.order} pv " + " ".join(pv))
        if self.options.pv_visits:
            text += " pvVisits " + " ".join(pv_visits)
        if self.options.pv_edge_visits:
            text += " pvEdgeVisits " + " ".join(pv_edge_visits)
        return text

    def _kata_move(self, move) -> str:
        num = self._num
        text = (
            f"info move {self._vertex(move.move)} visits {move.visits} edgeVisits {move.edge_visits}"
            f" utility {num(move.utility)} winrate {num(move.winrate)} scoreMean {num(move.score_lead)}"
            f" scoreStdev {num(move.score_stdev)} scoreLead {num(move.score_lead)}"
            f" scoreSelfplay {num(move.score_selfplay)}"
        )
        if self.options.no_result_value:
            text += f" noResultValue {num(move.no_result)}"
        text += f" prior {num(move.prior)} lcb {num(move.lcb)} utilityLcb {num(move.utility_lcb)}"
        text += f" weight {num(move.weight)}"
        if move.is_symmetry_of is not None:
            text += f" isSymmetryOf {self._vertex(move.is_symmetry_of)}"
        pv, pv_visits, pv_edge_visits = self._pv_parts(move)
        text += f" order {move.order} pv " + " ".join(pv)
        if self.options.pv_visits:
            text += " pvVisits " + " ".join(pv_visits)
        if self.options.pv_edge_visits:
            text += " pvEdgeVisits " + " ".join(pv_edge_visits)
        if self.options.moves_ownership and move.ownership is not None:
            text += " movesOwnership" + self._board_values(move.ownership, MOVES_OWNERSHIP_ROUNDING)
        if self.options.moves_ownership_stdev and move.ownership_stdev is not None:
            text += " movesOwnershipStdev" + self._board_values(move.ownership_stdev, MOVES_OWNERSHIP_ROUNDING)
        return text

    def _root_info(self, root) -> str:
        num = self._num
        text = (
            f" rootInfo visits {root.visits} utility {num(root.utility)} winrate {num(root.winrate)}"
            f" scoreMean {num(root.score_lead)} scoreStdev {num(root.score_stdev)} scoreLead {num(root.score_lead)}"
            f" scoreSelfplay {num(root.score_selfplay)} weight {num(root.weight)}"
        )
        if root.raw_st_wr_error is not None:
            # The search reports the analysis engine's halved (winrate-scale) error; GTP prints the raw one.
            text += (f" rawStWrError {num(root.raw_st_wr_error * RAW_ST_WR_ERROR_SCALE)}"
                     f" rawStScoreError {num(root.raw_st_score_error)} rawVarTimeLeft {num(root.raw_var_time_left)}")
        return text
