"""Response objects: a search snapshot as the JSON KataGo's analysis engine writes.

Field names, which fields appear when, the perspective flip and the rounding
follow KataGo's ``Search::getAnalysisJson``: most numbers keep about nine
significant digits, ownership is rounded to 1e-6, visits are integers, and
rootInfo's ``weight`` is left unrounded. Values are turned to the
``reportAnalysisWinratesAs`` perspective (the query's ``overrideSettings`` may
change it); raw network values appear only when a network evaluated the root.
"""
from __future__ import annotations

from operator import attrgetter
from typing import Optional

from katacli.analysis.protocol import round_dynamic, round_dynamic_many, round_static
from katacli.analysis.request import AnalysisRequest, ReportOptions
from katacli.game.coords import BLACK, WHITE, format_vertex

# KataGo's PVs hold the move itself plus analysisPVLen more.
PV_FIRST_MOVE = 1


def no_results_response(request: AnalysisRequest) -> dict:
    """The final response of a request terminated before anything was searched."""
    return {"id": request.query_id, "turnNumber": request.turn_number, "isDuringSearch": False, "noResults": True}


def pv_length_up_to_phase_end(state, pv: list, prevent_encore: bool) -> int:
    """How much of a PV KataGo prints: with the cleanup phase prevented, a PV with a pass stops
    before the move that would change the game phase (e.g. the second pass under territory rules)."""
    if not prevent_encore or all(point is not None for point in pv):
        return len(pv)
    board, mover, phase = state.copy(), state.next_player, state.encore_phase
    for index, point in enumerate(pv):
        try:
            board.play_tolerant(point, mover)
        except ValueError:
            return len(pv)  # KataGo would keep going; the rest cannot change the phase here
        mover = BLACK + WHITE - mover
        if board.encore_phase != phase:
            return index
    return len(pv)


def _vertex(point, state) -> str:
    return format_vertex(point, state.x_size, state.y_size)


# The numbers of a moveInfo rounded with roundDynamic, read from every move at once and rounded in one call.
_MOVE_NUMBERS = attrgetter("weight", "edge_weight", "utility", "winrate", "score_lead", "score_selfplay",
                           "score_stdev", "prior", "lcb", "utility_lcb", "play_selection_value")


def _move_infos(moves, state, report: ReportOptions, prevent_encore: bool) -> list[dict]:
    if not moves:
        return []
    rounded = round_dynamic_many([_MOVE_NUMBERS(info) for info in moves])
    width = len(rounded) // len(moves)
    return [_move_info(info, rounded[k * width:(k + 1) * width], state, report, prevent_encore)
            for k, info in enumerate(moves)]


def _move_info(info, numbers: list, state, report: ReportOptions, prevent_encore: bool) -> dict:
    """One moveInfo; ``numbers``: its _MOVE_NUMBERS already rounded."""
    weight, edge_weight, utility, winrate, lead, selfplay, stdev, prior, lcb, utility_lcb, selection = numbers
    out = {
        "move": _vertex(info.move, state),
        "visits": info.visits,
        "edgeVisits": info.edge_visits,
        "weight": weight,
        "edgeWeight": edge_weight,
        "utility": utility,
        "winrate": winrate,
        # scoreMean carries the lead, as KataGo reports it for older tools.
        "scoreMean": lead,
        "scoreLead": lead,
        "scoreSelfplay": selfplay,
        "scoreStdev": stdev,
        "prior": prior,
        "lcb": lcb,
        "utilityLcb": utility_lcb,
        "order": info.order,
        "playSelectionValue": selection,
    }
    if info.human_prior is not None:
        out["humanPrior"] = round_dynamic(info.human_prior)
    if report.include_no_result_value:
        out["noResultValue"] = round_dynamic(info.no_result)
    if info.is_symmetry_of is not None:
        out["isSymmetryOf"] = _vertex(info.is_symmetry_of, state)
    length = pv_length_up_to_phase_end(state, info.pv, prevent_encore)
    out["pv"] = [_vertex(point, state) for point in info.pv[:length]]
    if report.include_pv_visits:
        out["pvVisits"] = list(info.pv_visits[:length])
        out["pvEdgeVisits"] = list(info.pv_edge_visits[:length])
    if report.include_moves_ownership and info.ownership is not None:
        out["ownership"] = round_static(info.ownership)
    if report.include_moves_ownership_stdev and info.ownership_stdev is not None:
        out["ownershipStdev"] = round_static(info.ownership_stdev)
    return out


def _root_info(root, has_network: bool) -> dict:
    out = {
        "visits": root.visits,
        "weight": float(root.weight),
        "winrate": round_dynamic(root.winrate),
        "scoreSelfplay": round_dynamic(root.score_selfplay),
        "scoreLead": round_dynamic(root.score_lead),
        "scoreStdev": round_dynamic(root.score_stdev),
        "utility": round_dynamic(root.utility),
        "thisHash": root.this_hash,
        "symHash": root.sym_hash,
        "currentPlayer": root.current_player,
    }
    if has_network and root.raw_winrate is not None:
        out.update({
            "rawWinrate": round_dynamic(root.raw_winrate),
            "rawLead": round_dynamic(root.raw_lead),
            "rawScoreSelfplay": round_dynamic(root.raw_score_selfplay),
            "rawScoreSelfplayStdev": round_dynamic(root.raw_score_selfplay_stdev),
            "rawNoResultProb": round_dynamic(root.raw_no_result_prob),
            "rawStWrError": round_dynamic(root.raw_st_wr_error),
            "rawStScoreError": round_dynamic(root.raw_st_score_error),
            "rawVarTimeLeft": round_dynamic(root.raw_var_time_left),
        })
    if root.human_winrate is not None:
        out.update({
            "humanWinrate": round_dynamic(root.human_winrate),
            "humanScoreMean": round_dynamic(root.human_score_mean),
            "humanScoreStdev": round_dynamic(root.human_score_stdev),
            "humanStWrError": round_dynamic(root.human_st_wr_error),
            "humanStScoreError": round_dynamic(root.human_st_score_error),
        })
    return out


def search_json(searcher, state, report: ReportOptions, *, prevent_encore: bool, has_network: bool) -> Optional[dict]:
    """moveInfos, rootInfo and the asked-for policy and ownership of a search of ``state``: KataGo's
    Search::getAnalysisJson (also printed by ``kata evalsgf -print-json``). None before the root has a visit."""
    analysis = searcher.analysis(
        max_pv_len=report.pv_len + PV_FIRST_MOVE,
        include_ownership=report.include_ownership, include_ownership_stdev=report.include_ownership_stdev,
        include_moves_ownership=report.include_moves_ownership or report.include_moves_ownership_stdev,
        include_policy=report.include_policy,
    )
    if analysis.root is None:
        return None
    analysis = analysis.oriented(report.perspective)
    response = {
        "moveInfos": _move_infos(analysis.moves, state, report, prevent_encore),
        "rootInfo": _root_info(analysis.root, has_network),
    }
    if report.include_policy:
        if analysis.policy is None:
            return None
        response["policy"] = round_dynamic_many(analysis.policy)
        if analysis.human_policy is not None:
            response["humanPolicy"] = round_dynamic_many(analysis.human_policy)
    if report.include_ownership and analysis.ownership is not None:
        response["ownership"] = round_static(analysis.ownership)
    if report.include_ownership_stdev and analysis.ownership_stdev is not None:
        response["ownershipStdev"] = round_static(analysis.ownership_stdev)
    return response


def analysis_response(request: AnalysisRequest, searcher, *, during_search: bool, has_network: bool) -> Optional[dict]:
    """The response for the search's current state, or None when it has nothing to report yet (no root)."""
    body = search_json(searcher, request.state, request.report, prevent_encore=request.prevent_encore,
                       has_network=has_network)
    if body is None:
        return None
    return {"id": request.query_id, "turnNumber": request.turn_number, "isDuringSearch": during_search, **body}
