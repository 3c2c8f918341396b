"""KataGo's printTree text for a search tree (GTP ``debug_moves``, ``kata evalsgf``).

One line per node, indented by the moves leading to it (four columns per move)::

    : T   3.21c W   5.39c S  -1.23c ( +0.7 L  +0.0) N      60  --  C5 D3 G5
    ---White(^)---
    C5  : T   6.16c W   7.36c S  -0.86c ( +1.0 L  +0.2) LCB   -3.80c P 18.00% WF  32.4 PSV      32 N      32  --  C5 D3

T / W / S: utility, its win/loss part and its score part, in centi-utility; then the score mean and
lead in points; LCB: lower confidence bound of the utility; P: policy prior; WF: weight after noise
pruning and downweighting of bad children; PSV: play selection value; with ``shortterm_errors``,
STWL / STS: the network's short-term win-loss (centi) and score errors averaged over the node's
subtree (White's view, -1 when the network lacks them); N: visits; then the best line.
Values are from ``perspective``'s view. The ``---Black(v)---`` line names who moves at the end of the
printed branch, ``^`` when that is ``perspective``. Below the branch, ``max_depth`` levels of children
are shown.
"""
from __future__ import annotations

import math

from katacli.game.coords import BLACK, WHITE, format_color, format_vertex

MAX_PV_DEPTH = 7  # KataGo's PrintTreeOptions defaults: PV length, visits a node needs to list its children
MIN_VISITS_TO_EXPAND = 1
PREFIX_WIDTH_PER_MOVE = 4
PASS_TEXT_IN_PREFIX = "pss"
CENTI = 100.0


def tree_lines(searcher, branch: list, perspective: int, max_depth: int = 1, shortterm_errors: bool = False,
               max_children: int | None = None, also_branch: bool = False) -> list[str]:
    """The printTree lines of ``searcher``'s tree along ``branch`` (moves from the root, may be empty),
    then ``max_depth`` levels below it; no lines before the first visit. ``max_children``: at most this
    many children of a node (the most visited first). ``also_branch``: the whole tree to ``max_depth``
    as without a branch, and the branch's line followed beyond it (KataGo's alsoBranch, the genmove log
    with logSearchInfoForChosenMove)."""
    root = searcher.root_stats(MAX_PV_DEPTH)
    if root is None:
        return []
    printer = _Printer(searcher, branch, perspective, max_depth, shortterm_errors, max_children, also_branch)
    printer.node("", [], 0, dict(root, edge_visits=root["visits"]), searcher.root_player)
    return printer.lines


class _Printer:
    def __init__(self, searcher, branch: list, perspective: int, max_depth: int, shortterm_errors: bool,
                 max_children: int | None, also_branch: bool):
        self.searcher, self.branch, self.max_depth = searcher, branch, max_depth
        self.max_children, self.also_branch = max_children, also_branch
        self.shortterm_errors = shortterm_errors
        self.perspective = perspective
        self.sign = -1.0 if perspective == BLACK else 1.0
        self.x_size, self.y_size = searcher.tree.x_size, searcher.tree.y_size
        self.lines: list[str] = []

    def node(self, prefix: str, path: list, depth: int, data: dict, pla: int) -> None:
        self.lines.append(self.line(prefix, path, depth, data))
        on_branch = depth < len(self.branch)
        if not on_branch and (depth >= self.max_depth + len(self.branch) or data["edge_visits"] < MIN_VISITS_TO_EXPAND):
            return
        if depth == (0 if self.also_branch else len(self.branch)):
            mark = "^" if pla == self.perspective else "v"
            self.lines.append(f"---{format_color(pla, long=True)}({mark})---")
        # A child's line is its move and then MAX_PV_DEPTH more, as KataGo's getAnalysisData builds it.
        entries = self.searcher.node_analysis(path, MAX_PV_DEPTH + 1) or []
        shown = len(entries) if self.max_children is None else min(len(entries), self.max_children)
        for i, entry in enumerate(entries):
            move = entry["move"]
            branch_move = on_branch and move == self.branch[depth]
            if branch_move or (i < shown and (not on_branch or self.also_branch)):
                # Off the branch, a child of a branch node counts as a level below the whole branch.
                next_depth = depth + 1 if branch_move or not on_branch else len(self.branch) + 1
                self.node(self.extend(prefix, move), path + [move], next_depth, entry, BLACK + WHITE - pla)

    def extend(self, prefix: str, move) -> str:
        text = PASS_TEXT_IN_PREFIX if move is None else format_vertex(move, self.x_size, self.y_size)
        return (prefix + text + " ").ljust(len(prefix) + PREFIX_WIDTH_PER_MOVE)

    def line(self, prefix: str, path: list, depth: int, data: dict) -> str:
        sign = self.sign
        out = prefix + ": "
        if data["visits"] > 0:
            out += "T %6.2fc " % (sign * data["utility"] * CENTI)
            out += "W %6.2fc " % (sign * data["result_utility"] * CENTI)
            out += "S %6.2fc (%+5.1f L %+5.1f) " % (sign * data["score_utility"] * CENTI,
                                                    sign * data["score_mean"], sign * data["lead"])
        if depth > 0 and not math.isnan(data.get("lcb", math.nan)):
            out += "LCB %7.2fc " % (sign * data["lcb"] * CENTI)
        if not math.isnan(data.get("prior", math.nan)):
            out += "P %5.2f%% " % (data["prior"] * CENTI)
        if not math.isnan(data.get("weight_factor", math.nan)):
            out += "WF %5.1f " % data["weight_factor"]
        if depth > 0 and data.get("play_selection_value", -1.0) >= 0:
            out += "PSV %7.0f " % data["play_selection_value"]
        if self.shortterm_errors:
            wl_error, score_error = self.searcher.shortterm_errors(path)
            out += "STWL %6.2fc STS %5.1f " % (wl_error * CENTI, score_error)
        out += "N %7d  --  " % data["visits"]
        return out + " ".join(format_vertex(move, self.x_size, self.y_size) for move in data["pv"])
