"""KataGo's search log block (its PlayUtils::printGenmoveLog): what `kata gtp` writes for genmove_debug,
kata-search_debug and logSearchInfo, and the analysis engine for logSearchInfo::

    MoveNum: 26 HASH: ...              the searched position, the chosen point marked '@' (none in analysis)
     ...
    koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1komi0.5
    Time taken: 0.35                   (GTP only: the analysis engine times no move)
    Root visits: 100
    New playouts: 100
    NN rows: 92                        network rows and batches (GTP: this genmove's; analysis: the engine's)
    NN batches: 92
    NN avg batch size: 1
    PV: D3 E3 D4 B3
    Tree:
    : T -98.71c W -91.95c ...          printTree, one level, at most 10 children
"""
from __future__ import annotations

import math
from typing import Optional

from katacli.game.board_text import board_diagram
from katacli.game.coords import BLACK, WHITE, format_vertex, parse_color
from katacli.search.print_tree import tree_lines

LOG_PV_LEN = 25          # the PV line's length (KataGo's printGenmoveLog)
LOG_TREE_CHILDREN = 10   # children listed under the root


def search_log_text(searcher, position, rules_text: str, move, time_taken: Optional[float], new_playouts: int,
                    nn_counts: tuple[int, int], pda: float, perspective: int, chosen_branch: bool = False) -> str:
    """The log block of a search of ``position`` with ``searcher`` (its tree; None without one) that chose
    ``move`` (a point, or None: a pass, or no move chosen (analysis); nothing marked). ``time_taken`` None leaves out its line;
    ``nn_counts``: (rows, batches) of the network to report; ``pda``: the root's playoutDoublingAdvantage from
    the side to move's view (root_pda); ``chosen_branch``: logSearchInfoForChosenMove, the chosen move's line
    (a pass's too) followed further."""
    x_size, y_size = position.x_size, position.y_size
    board = position.board()
    lines = board_diagram(position.colors(), position.moves, board.pos_hash, mark=move)
    lines.append("")  # printBoard's closing blank line
    lines.append(rules_text)
    if time_taken is not None:
        lines.append(f"Time taken: {time_taken:g}")
    root = searcher.root_stats(LOG_PV_LEN) if searcher is not None else None
    lines.append(f"Root visits: {root['visits'] if root else 0}")
    lines.append(f"New playouts: {new_playouts}")
    rows, batches = nn_counts
    lines.append(f"NN rows: {rows}")
    lines.append(f"NN batches: {batches}")
    lines.append(f"NN avg batch size: {_c_double(rows / batches if batches else math.nan)}")
    if pda != 0.0:
        lines.append(f"PlayoutDoublingAdvantage: {_c_double(pda)}")
    pv = root["pv"] if root else []
    lines.append("PV: " + " ".join(format_vertex(m, x_size, y_size) for m in pv))
    lines.append("Tree:")
    if searcher is not None:
        lines += tree_lines(searcher, [move] if chosen_branch else [], perspective, max_children=LOG_TREE_CHILDREN,
                            also_branch=chosen_branch)
    return "".join(line + "\n" for line in lines)


def root_pda(params, root_player: int) -> float:
    """A search's playoutDoublingAdvantage from the side to move's view, as KataGo prints it (``params``:
    SearchParams, or None)."""
    if params is None or params.playout_doubling_advantage == 0.0:
        return 0.0
    pda_pla = params.playout_doubling_advantage_pla
    pda_for = parse_color(pda_pla) if pda_pla else root_player
    if root_player == BLACK + WHITE - pda_for:
        return -params.playout_doubling_advantage
    return params.playout_doubling_advantage


def network_counts(evaluator) -> tuple[int, int]:
    """(rows, batches) the network has run so far: its calls, through a BatchingEvaluator to the net it serves."""
    inner = getattr(evaluator, "evaluator", None)
    if inner is not None and hasattr(inner, "num_positions_evaluated"):
        evaluator = inner
    return (getattr(evaluator, "num_positions_evaluated", 0) or 0, getattr(evaluator, "num_batches", 0) or 0)


def _c_double(value: float) -> str:
    """A double as C++'s ostream writes it by default (6 significant digits; NaN as -nan, glibc's 0/0)."""
    return "-nan" if math.isnan(value) else f"{value:g}"
