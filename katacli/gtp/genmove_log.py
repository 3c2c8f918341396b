"""What KataGo writes about a finished genmove search: the log block (``genmove_debug`` and
``kata-search_debug`` on stderr, ``logSearchInfo`` in the log) and the OGS chat line
(``ogsChatToStderr``), in KataGo's layout::

    MoveNum: 26 HASH: ...              the searched position, the chosen point marked '@'
     ...
    koSITUATIONALscoreAREAtaxNONEsui0whbN-1fpok1komi0.5
    Time taken: 0.35
    Root visits: 100
    New playouts: 100
    NN rows: 92                        network rows and batches this genmove ran (cache hits not counted)
    NN batches: 92
    NN avg batch size: 1
    PV: D3 E3 D4 B3
    Tree:
    : T -98.71c W -91.95c ...          printTree, one level, at most 10 children

Both are written before the friendly-pass and cleanup-before-pass checks, which search again.
"""
from __future__ import annotations

import math

from katacli.game.board_text import board_diagram
from katacli.game.coords import BLACK, WHITE, format_vertex, parse_color
from katacli.gtp.debug_moves import perspective_for
from katacli.search.print_tree import tree_lines

LOG_PV_LEN = 25          # the PV line's length (KataGo's printGenmoveLog)
LOG_TREE_CHILDREN = 10   # children listed under the root


def genmove_log_text(engine, searcher, pla: int, position, move, outcome, elapsed: float) -> str:
    """The log block for a genmove by ``pla`` that searched ``position`` with ``searcher`` (its tree; None
    without one) and chose ``move`` (a point, None for pass)."""
    x_size, y_size = position.x_size, position.y_size
    board = position.board()
    lines = board_diagram(position.colors(), position.moves, board.pos_hash, mark=move)
    lines.append("")  # printBoard's closing blank line
    lines.append(engine.rules.to_string())
    lines.append(f"Time taken: {elapsed:g}")
    root = searcher.root_stats(LOG_PV_LEN) if searcher is not None else None
    lines.append(f"Root visits: {root['visits'] if root else 0}")
    lines.append(f"New playouts: {outcome.new_playouts}")
    rows, batches = (now - before for now, before in zip(network_counts(engine.evaluator),
                                                           engine.stats.nn_counts_at_genmove))
    lines.append(f"NN rows: {rows}")
    lines.append(f"NN batches: {batches}")
    lines.append(f"NN avg batch size: {_c_double(rows / batches if batches else math.nan)}")
    pda = _root_pda(engine, pla)
    if pda != 0.0:
        lines.append(f"PlayoutDoublingAdvantage: {_c_double(pda)}")
    pv = root["pv"] if root else []
    lines.append("PV: " + " ".join(format_vertex(m, x_size, y_size) for m in pv))
    lines.append("Tree:")
    if searcher is not None:
        chosen_branch = engine.settings.log_search_info_for_chosen_move
        lines += tree_lines(searcher, [move] if chosen_branch else [], perspective_for(engine, pla),
                            max_children=LOG_TREE_CHILDREN, also_branch=chosen_branch)
    return "".join(line + "\n" for line in lines)


def ogs_chat_line(engine, searcher, pla: int, position, move, outcome) -> str:
    """``MALKOVICH:Visits ... PV ...``: what gtp2ogs shows the opponent (ogsChatToStderr)."""
    winrate = 0.5 * (1.0 + outcome.win_loss)
    lead = outcome.lead
    if perspective_for(engine, pla) == BLACK:
        winrate, lead = 1.0 - winrate, -lead
    text = (f"MALKOVICH:Visits {outcome.visits} Winrate {winrate * 100:.2f}% ScoreLead {lead:.1f} "
            f"ScoreStdev {outcome.score_stdev:.1f}")
    pda = _root_pda(engine, pla)
    if pda != 0.0:
        text += f" (PDA {pda:.2f})"
    pv = []
    if searcher is not None:
        pv_len = engine.settings.analysis_pv_len
        pv = next((entry["pv"] for entry in searcher.node_analysis([], pv_len) or [] if entry["move"] == move), [])
    return text + " PV " + " ".join(format_vertex(m, position.x_size, position.y_size) for m in pv)


def _root_pda(engine, pla: int) -> float:
    """The search's playoutDoublingAdvantage from the side to move's view, as KataGo prints it."""
    params = engine.stats.last_genmove_params
    if params is None or params.playout_doubling_advantage == 0.0:
        return 0.0
    pda_pla = params.playout_doubling_advantage_pla
    pda_for = parse_color(pda_pla) if pda_pla else pla
    return -params.playout_doubling_advantage if pla == BLACK + WHITE - pda_for else params.playout_doubling_advantage


def network_counts(evaluator) -> tuple[int, int]:
    """(rows, batches) the network has run so far (KataGo clears its counts as each genmove starts)."""
    return (getattr(evaluator, "num_positions_evaluated", 0) or 0, getattr(evaluator, "num_batches", 0) or 0)


def _c_double(value: float) -> str:
    """A double as C++'s ostream writes it by default (6 significant digits; NaN as -nan, glibc's 0/0)."""
    return "-nan" if math.isnan(value) else f"{value:g}"
