"""``debug_moves [MOVE ...] [rawstats]``: KataGo's debugging view of the search tree.

The answer has up to three parts, in KataGo's layout:

* the board after the given moves (played from the position to move, colours alternating),
  when they are all legal, as ``showboard`` draws it;
* the tree, as KataGo's printTree with depth 1 (see katacli.search.print_tree): a line for the
  root, one for each node along the given moves, then one per searched move at the end of the line;
* with ``rawstats``, the raw network under all 8 symmetries: the policy of the last given move
  (from the position before it), and White's win-loss and lead after the moves.

Before any search there is no tree, and only the board is shown.
"""
from __future__ import annotations

from katacli._core.game_state import IllegalMoveError

from katacli.game.board_text import board_diagram
from katacli.game.coords import BLACK, WHITE, CoordError, flat_index, parse_vertex
from katacli.gtp.errors import GtpError
from katacli.gtp.protocol import Command
from katacli.search.print_tree import tree_lines
from katacli.search.raw_eval import evaluate_raw
from katacli._core.constants import NUM_SYMMETRIES  # noqa: F401  (the core's numbers, defined once)

RAWSTATS_WORD = "rawstats"
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
        lines += tree_lines(searcher, branch, perspective_for(engine, searcher.root_player))
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


def perspective_for(engine, root_player: int) -> int:
    """Whose view printed values take: reportAnalysisWinratesAs, or the side to move at the root."""
    view = engine.settings.report_winrates_as
    return BLACK if view == "B" else WHITE if view == "W" else root_player


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
            prob = out.policy_pass if last is None else out.policy[flat_index(last, session.x_size, session.y_size)]
            policy += "%.2f%% " % (CENTI * prob)
    win_loss = "White winloss: " + "".join("%.2fc " % (CENTI * (o.white_win - o.white_loss)) for o in outputs)
    lead = "White lead: " + "".join("%.2f " % o.white_lead for o in outputs)
    return "\n".join([policy, win_loss, lead]).strip()


def _pda(analysis, pla: int) -> float:
    pda = analysis.playout_doubling_advantage
    if analysis.playout_doubling_advantage_pla not in (None, "B" if pla == BLACK else "W"):
        pda = -pda
    return pda
