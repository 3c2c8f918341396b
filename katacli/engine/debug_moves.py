"""``debug_moves [MOVE ...] [rawstats]``: KataGo's debugging view of the search tree.

The answer has up to three parts, in KataGo's layout:

* the board after the given moves (played from the position to move, colours alternating),
  when they are all legal, as ``showboard`` draws it;
* the tree, as KataGo's printTree with depth 1: a line for the root, a line for each node along
  the given moves, a ``---Black(^)---`` line naming who moves at the end of the line (``^`` when
  values are from that player's view), then a line per searched move there::

      D4  : T  12.34c W  10.00c S   2.34c ( +1.2 L  +1.1) LCB    8.00c P 25.00% WF  30.0 PSV      31 N      30  --  D4 E5

  T / W / S: utility, its win/loss part and its score part, in centi-utility; the score mean and
  lead in points; LCB: lower confidence bound of the utility; P: policy prior; WF: weight after
  noise pruning and downweighting of bad children; PSV: play selection value; N: visits; then
  the best line. Values are from the side to move at the root, or as reportAnalysisWinratesAs says;
* with ``rawstats``, the raw network under all 8 symmetries: the policy of the last given move
  (from the position before it), and White's win-loss and lead after the moves.

Before any search there is no tree, and only the board is shown.
"""
from __future__ import annotations

import math

from cython_ext.history import IllegalMoveError

from katacli.engine.board_text import board_diagram
from katacli.engine.errors import GtpError
from katacli.engine.protocol import Command
from katacli.engine.rawnn import evaluate_raw
from katacli.game.coords import BLACK, WHITE, CoordError, format_color, format_vertex, parse_vertex

RAWSTATS_WORD = "rawstats"
MAX_PV_DEPTH = 7  # KataGo's PrintTreeOptions defaults: PV length, visits needed to list a node's children
MIN_VISITS_TO_EXPAND = 1
PREFIX_WIDTH_PER_MOVE = 4
PASS_TEXT_IN_PREFIX = "pss"
NUM_SYMMETRIES = 8
CENTI = 100.0


def cmd_debug_moves(engine, command: Command) -> str:
    words = [word for word in command.args if word != RAWSTATS_WORD]
    raw_stats = len(words) != len(command.args)
    session = engine.session
    try:
        branch = [parse_vertex(word, session.x_size, session.y_size) for word in words]
    except CoordError:
        raise GtpError("Invalid move sequence") from None
    lines: list[str] = []
    after = _play_branch(session.state, branch)
    if after is not None:
        state = after[0]
        lines += board_diagram(state.colors(), state.moves, state.board().pos_hash)
    searcher = engine.bot.search_tree(session.state)
    if searcher is not None:
        lines += _tree_lines(engine, searcher, branch)
    text = "".join(line + "\n" for line in lines)  # KataGo ends each printed line, the last one too
    if raw_stats:
        text += _raw_stats(engine, branch)
    return text


def _play_branch(state, branch):
    """(position after the moves, the position before the last one) or None if a move is illegal."""
    state = state.copy()
    before = state
    pla = state.next_player
    for xy in branch:
        before = state.copy()
        try:
            state.play_tolerant(xy, pla, False)
        except IllegalMoveError:
            return None
        pla = BLACK + WHITE - pla
    return state, before


# --------------------------------------------------------------------------- the tree


def _perspective(engine, root_player: int) -> int:
    view = engine.settings.report_winrates_as
    return BLACK if view == "B" else WHITE if view == "W" else root_player


def _tree_lines(engine, searcher, branch) -> list[str]:
    root, levels = searcher.branch_analysis(branch, MAX_PV_DEPTH)
    if root is None:
        return []
    x_size, y_size = searcher.tree.x_size, searcher.tree.y_size
    perspective = _perspective(engine, searcher.root_player)
    sign = -1.0 if perspective == BLACK else 1.0
    fmt = _LineFormat(sign, x_size, y_size)
    lines = [fmt.line("", 0, root, child_visits=root["visits"])]
    prefix, pla, visits = "", searcher.root_player, root["visits"]
    for depth in range(len(branch) + 1):
        if depth == len(branch):
            if visits < MIN_VISITS_TO_EXPAND:
                break
            mark = "^" if pla == perspective else "v"
            lines.append(f"---{format_color(pla, long=True)}({mark})---")
            for entry in levels[depth] if depth < len(levels) else []:
                lines.append(fmt.line(_extend(prefix, entry["move"], x_size, y_size), depth + 1, entry))
            break
        if depth >= len(levels):
            break
        entry = next((e for e in levels[depth] if e["move"] == branch[depth]), None)
        if entry is None:
            break
        prefix = _extend(prefix, entry["move"], x_size, y_size)
        lines.append(fmt.line(prefix, depth + 1, entry))
        pla, visits = BLACK + WHITE - pla, entry["edge_visits"]
    return lines


def _extend(prefix: str, move, x_size: int, y_size: int) -> str:
    text = PASS_TEXT_IN_PREFIX if move is None else format_vertex(move, x_size, y_size)
    return (prefix + text + " ").ljust(len(prefix) + PREFIX_WIDTH_PER_MOVE)


class _LineFormat:
    def __init__(self, sign: float, x_size: int, y_size: int):
        self.sign, self.x_size, self.y_size = sign, x_size, y_size

    def line(self, prefix: str, depth: int, data: dict, child_visits: int | None = None) -> str:
        sign = self.sign
        visits = data["visits"] if child_visits is None else child_visits
        out = prefix + ": "
        if visits > 0:
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
        out += "N %7d  --  " % visits
        return out + " ".join(format_vertex(move, self.x_size, self.y_size) for move in data["pv"])


# --------------------------------------------------------------------------- rawstats


def _raw_stats(engine, branch) -> str:
    evaluator = engine.evaluator
    if evaluator is None:
        return ""
    session = engine.session
    after = _play_branch(session.state, branch)
    if after is None:
        return "illegal move sequence"
    state, before = after
    pla = session.state.next_player if len(branch) % 2 == 0 else BLACK + WHITE - session.state.next_player
    prev_pla = BLACK + WHITE - pla
    analysis = engine.params.analysis
    profile = analysis.human_profile
    symmetries = list(range(NUM_SYMMETRIES))
    outputs = evaluate_raw(evaluator, state, pla, symmetries, 0.0, _pda(analysis, pla), profile=profile)
    policy = "Policy: "
    if branch:
        last = branch[-1]
        previous = evaluate_raw(evaluator, before, prev_pla, symmetries, 0.0, _pda(analysis, prev_pla),
                                profile=profile)
        for out in previous:
            prob = out.policy_pass if last is None else out.policy[last[1] * session.x_size + last[0]]
            policy += "%.2f%% " % (CENTI * prob)
    win_loss = "White winloss: " + "".join("%.2fc " % (CENTI * (o.white_win - o.white_loss)) for o in outputs)
    lead = "White lead: " + "".join("%.2f " % o.white_lead for o in outputs)
    return "\n".join([policy, win_loss, lead]).strip()


def _pda(analysis, pla: int) -> float:
    pda = analysis.playout_doubling_advantage
    if analysis.playout_doubling_advantage_pla not in (None, "B" if pla == BLACK else "W"):
        pda = -pda
    return pda
