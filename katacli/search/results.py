"""What a search reports: per-move and root values for kata-analyze, lz-analyze and the analysis engine.

Everything is stored from White's point of view (winrate = White's winning
chance, positive scores favour White), as KataGo stores it. Protocols pick a
perspective with :func:`perspective_sign` -- ``"B"`` / ``"W"`` (or "BLACK" /
"WHITE") for a fixed side, ``None`` for the side to move at the root, KataGo's
``reportAnalysisWinratesAs`` -- and call ``.oriented(sign)``, which returns a
copy with winrates, LCBs, utilities, scores and ownership flipped for Black.

Field names follow KataGo's JSON output (snake_case here):

MoveInfo: move, order, visits (child node visits), edge_visits, weight
(child's weight sum), edge_weight, winrate, lcb (winrate lower bound, KataGo's
"hacked" display LCB), utility, utility_lcb, score_lead (KataGo's "scoreMean"
and "scoreLead"), score_selfplay, score_stdev, no_result, prior,
play_selection_value, pv, pv_visits, pv_edge_visits, is_symmetry_of,
ownership / ownership_stdev (when requested).

RootInfo: visits, weight, winrate, score_lead, score_selfplay, score_stdev,
utility, raw_* (the root's own network evaluation), this_hash, sym_hash,
current_player ("B" / "W").

Self-play's view of a finished search is :class:`RootResult` (the root's values, play
selection weights, searched and raw priors) with a :class:`ChildResult` per visited move,
from :meth:`katacli.search.Searcher.root_result`; they are not oriented (always White's view).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Optional

import numpy as np
from katacli._core.constants import BLACK, WHITE  # noqa: F401  (the core's numbers, defined once)

Point = Optional[tuple]


def perspective_sign(perspective, root_player: int) -> float:
    """+1 to report as White, -1 as Black; perspective None / "SIDETOMOVE" means the root player."""
    if perspective is None:
        return -1.0 if root_player == BLACK else 1.0
    if isinstance(perspective, int):
        return -1.0 if perspective == BLACK else 1.0
    text = str(perspective).strip().upper()
    if text in ("B", "BLACK"):
        return -1.0
    if text in ("W", "WHITE"):
        return 1.0
    if text in ("", "SIDETOMOVE", "SIDE_TO_MOVE", "NONE"):
        return -1.0 if root_player == BLACK else 1.0
    raise ValueError(f"unknown perspective {perspective!r}")


def _flip_winrate(value: float, sign: float) -> float:
    return value if sign > 0 else 1.0 - value


def replaced(record, **changes):
    """``dataclasses.replace`` for this module's frozen records, without re-running ``__init__``: a
    response re-makes every move's record (orientation, order, human prior), and replace() cost ~15 us
    each, most of an analysis response's time."""
    new = object.__new__(type(record))
    new.__dict__.update(record.__dict__)
    new.__dict__.update(changes)
    return new


def _flip(value, sign: float):
    if value is None:
        return None
    return value * sign


@dataclass(frozen=True)
class MoveInfo:
    move: Point
    order: int
    visits: int
    edge_visits: int
    weight: float
    edge_weight: float
    winrate: float
    lcb: float
    utility: float
    utility_lcb: float
    score_lead: float
    score_selfplay: float
    score_stdev: float
    no_result: float
    prior: float
    play_selection_value: float
    pv: list
    pv_visits: list
    pv_edge_visits: list
    is_symmetry_of: Point = None
    ownership: Optional[np.ndarray] = None
    ownership_stdev: Optional[np.ndarray] = None
    human_prior: Optional[float] = None   # the human-SL net's policy for the move (with -human-model)

    @property
    def score_mean(self) -> float:
        """KataGo reports the lead under the legacy name scoreMean."""
        return self.score_lead

    def oriented(self, sign: float) -> "MoveInfo":
        if sign > 0:
            return self
        return replaced(
            self, winrate=_flip_winrate(self.winrate, sign), lcb=_flip_winrate(self.lcb, sign),
            utility=-self.utility, utility_lcb=-self.utility_lcb, score_lead=-self.score_lead,
            score_selfplay=-self.score_selfplay, ownership=_flip(self.ownership, sign),
        )


@dataclass(frozen=True)
class RootInfo:
    visits: int
    weight: float
    winrate: float
    score_lead: float
    score_selfplay: float
    score_stdev: float
    utility: float
    current_player: str
    raw_winrate: Optional[float] = None
    raw_lead: Optional[float] = None
    raw_score_selfplay: Optional[float] = None
    raw_score_selfplay_stdev: Optional[float] = None
    raw_no_result_prob: Optional[float] = None
    raw_st_wr_error: Optional[float] = None
    raw_st_score_error: Optional[float] = None
    raw_var_time_left: Optional[float] = None
    # The human-SL net's evaluation of the root (with -human-model), White's view like the rest.
    human_winrate: Optional[float] = None
    human_score_mean: Optional[float] = None
    human_score_stdev: Optional[float] = None
    human_st_wr_error: Optional[float] = None
    human_st_score_error: Optional[float] = None
    this_hash: str = ""
    sym_hash: str = ""

    @property
    def score_mean(self) -> float:
        return self.score_lead

    def oriented(self, sign: float) -> "RootInfo":
        if sign > 0:
            return self
        return dataclasses.replace(
            self, winrate=_flip_winrate(self.winrate, sign), score_lead=-self.score_lead,
            score_selfplay=-self.score_selfplay, utility=-self.utility,
            raw_winrate=None if self.raw_winrate is None else _flip_winrate(self.raw_winrate, sign),
            raw_lead=_flip(self.raw_lead, sign), raw_score_selfplay=_flip(self.raw_score_selfplay, sign),
            human_winrate=None if self.human_winrate is None else _flip_winrate(self.human_winrate, sign),
            human_score_mean=_flip(self.human_score_mean, sign),
        )


@dataclass(frozen=True)
class SearchAnalysis:
    """A snapshot of a search: root values, per-move values (best first), optional ownership and policy."""

    root: Optional[RootInfo]
    moves: list
    root_player: int
    x_size: int
    y_size: int
    ownership: Optional[np.ndarray] = None         # row-major board points
    ownership_stdev: Optional[np.ndarray] = None
    policy: Optional[np.ndarray] = None            # raw network policy: board points then pass, -1 illegal
    human_policy: Optional[np.ndarray] = None      # the human-SL net's, same layout (with -human-model)
    perspective: float = 1.0                       # +1: White's view, -1: Black's

    def oriented(self, perspective) -> "SearchAnalysis":
        """A copy reported from perspective ("B", "W" or None for the side to move)."""
        sign = perspective_sign(perspective, self.root_player)
        rel = sign * self.perspective
        if rel > 0:
            return dataclasses.replace(self, perspective=sign)
        return dataclasses.replace(
            self, root=None if self.root is None else self.root.oriented(rel),
            moves=[m.oriented(rel) for m in self.moves], ownership=_flip(self.ownership, rel), perspective=sign,
        )

    @property
    def best(self) -> Optional[MoveInfo]:
        return self.moves[0] if self.moves else None


# ---- a finished search's root, as self-play records it ----------------------------------------
@dataclass(frozen=True)
class ChildResult:
    """One root move the search visited (White's view): what self-play's q-value targets need."""

    move: Point
    visits: int           # the child node's visits
    weight: float         # the child node's weight sum
    utility: float
    win_loss: float       # win minus loss after the move
    score_mean: float     # self-play score after the move


@dataclass(frozen=True)
class RootResult:
    """A search's root (White's view): the training targets self-play takes from one search
    (KataGo's extractSearchTargetsThisTurn reads the same values off the tree)."""

    visits: int
    # The root node's own averages (KataGo's getNodeValues).
    win: float
    loss: float
    no_result: float
    score_mean: float
    # The root's lead and win-loss (KataGo's getRootValues): what resignation, visit reduction and komi
    # estimation look at (the pruned values, getPrunedRootValues, are for analysis only).
    win_loss: float
    lead: float
    # (move, weight) of each move the chosen move is drawn from: visits after forced-playout pruning,
    # chosenMovePrune/Subtract and LCB as configured (the policy target before scaling), best first.
    play_selection: tuple[tuple[Point, float], ...]
    # (move, prior) of each legal move as the search used it (root noise and policy temperature
    # included), board points row-major then pass: what policy surprise is measured against.
    search_priors: tuple[tuple[Point, float], ...]
    # The root's own network evaluation, and its raw priors, highest first.
    raw_win: float
    raw_loss: float
    raw_no_result: float
    raw_score_mean: float
    raw_priors: tuple[tuple[Point, float], ...]
    children: tuple[ChildResult, ...]   # visited moves in KataGo's analysis order


def child_result_from_data(data: dict) -> ChildResult:
    """A ChildResult from one entry of the core's analysis data."""
    return ChildResult(move=data["move"], visits=data["visits"], weight=data["weight"], utility=data["utility"],
                       win_loss=data["win_loss"], score_mean=data["score_mean"])


# ---- builders used by the Searcher ----------------------------------------------------------
def hacked_lcb_winrate(params, win_loss: float, radius: float, mover: int) -> float:
    """KataGo's display LCB: the utility LCB radius scaled onto the winrate (PlayUtils::getHackedLCBForWinrate)."""
    winrate = 0.5 * (1.0 + win_loss)
    total = (params.win_loss_utility_factor + params.static_score_utility_factor
             + params.dynamic_score_utility_factor + 1e-20)
    scale = 0.5 * params.win_loss_utility_factor / total
    return winrate - radius * scale if mover == WHITE else winrate + radius * scale


def move_info_from_data(params, data: dict, order: int, mover: int) -> MoveInfo:
    return MoveInfo(
        move=data["move"], order=order, visits=data["visits"], edge_visits=data["edge_visits"],
        weight=data["weight"], edge_weight=data["edge_weight"], winrate=0.5 * (1.0 + data["win_loss"]),
        lcb=hacked_lcb_winrate(params, data["win_loss"], data["radius"], mover), utility=data["utility"],
        utility_lcb=data["lcb"], score_lead=data["lead"], score_selfplay=data["score_mean"],
        score_stdev=data["score_stdev"], no_result=data["no_result"], prior=data["prior"],
        play_selection_value=data["play_selection_value"], pv=list(data["pv"]), pv_visits=list(data["pv_visits"]),
        pv_edge_visits=list(data["pv_edge_visits"]),
    )


def symmetric_point(point: Point, x_size: int, y_size: int, symmetry: int) -> Point:
    """KataGo's symmetry of a point: flip y (bit 1), flip x (bit 2), then transpose (bit 4)."""
    if point is None:
        return None
    x, y = point
    if symmetry & 2:
        x = x_size - 1 - x
    if symmetry & 1:
        y = y_size - 1 - y
    if symmetry & 4:
        x, y = y, x
    return (x, y)


def duplicate_for_symmetries(moves: list, symmetries: list, x_size: int, y_size: int, avoided=None) -> list:
    """Spread moves explored once under root symmetry pruning over all their symmetric twins."""
    if len(symmetries) <= 1:
        return moves
    out = []
    done = set()
    for info in moves:
        for sym in symmetries:
            sym_move = symmetric_point(info.move, x_size, y_size, sym)
            if sym_move in done or (avoided is not None and sym_move in avoided):
                continue
            done.add(sym_move)
            out.append(replaced(
                info, move=sym_move, is_symmetry_of=info.move if sym != 0 else None,
                pv=[symmetric_point(p, x_size, y_size, sym) for p in info.pv],
                ownership=None if info.ownership is None else _sym_map(info.ownership, x_size, y_size, sym),
                ownership_stdev=None if info.ownership_stdev is None else _sym_map(info.ownership_stdev, x_size, y_size, sym),
            ))
    return out


def _sym_map(values: np.ndarray, x_size: int, y_size: int, symmetry: int) -> np.ndarray:
    out = np.zeros_like(values)
    for y in range(y_size):
        for x in range(x_size):
            sx, sy = symmetric_point((x, y), x_size, y_size, symmetry)
            out[sy * x_size + sx] = values[y * x_size + x]
    return out


def position_hashes(state) -> tuple[str, str]:
    """(thisHash, symHash) of a position (a ``GameState``) as KataGo's analysis engine writes them: its Zobrist
    hash of the stones, the simple-ko point and the player to move, and the smallest of that over the board's
    8 symmetries (hash1 then hash0, 16 uppercase hex digits each), so they match KataGo's for the same position."""
    this_hash, sym_hash = state.sym_hashes()
    return f"{this_hash:032X}", f"{sym_hash:032X}"
