"""What KataGo writes about a finished genmove search: the log block (``genmove_debug`` and
``kata-search_debug`` on stderr, ``logSearchInfo`` in the log: katacli.search.search_log's layout, with this
genmove's time and network counts) and the OGS chat line (``ogsChatToStderr``). Both are written before the
friendly-pass and cleanup-before-pass checks, which search again.
"""
from __future__ import annotations

from katacli.game.coords import BLACK, format_vertex
from katacli.gtp.debug_moves import perspective_for
from katacli.search.search_log import network_counts, root_pda, search_log_text

__all__ = ["genmove_log_text", "network_counts", "ogs_chat_line"]


def genmove_log_text(engine, searcher, pla: int, position, move, outcome, elapsed: float) -> str:
    """The log block for a genmove by ``pla`` that searched ``position`` with ``searcher`` (its tree; None
    without one) and chose ``move`` (a point, None for pass)."""
    counts = tuple(now - before for now, before in zip(network_counts(engine.evaluator),
                                                      engine.stats.nn_counts_at_genmove))
    return search_log_text(searcher, position, engine.rules.to_string(), move, elapsed, outcome.new_playouts, counts,
                           _root_pda(engine, pla), perspective_for(engine, pla),
                           chosen_branch=engine.settings.log_search_info_for_chosen_move)


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
    """The last genmove search's playoutDoublingAdvantage from the side to move's view."""
    return root_pda(engine.stats.last_genmove_params, pla)
