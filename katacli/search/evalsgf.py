"""``kata evalsgf``'s work: search one position of an SGF and print what KataGo's evalsgf prints.

The position is the SGF's setup stones and its first ``move_num`` moves (main line), then the
``extra_moves``. Printed, in KataGo's order: the rules, the encore phase and the board (and the board
at the end of ``print_branch``); after the search, what the ``print_*`` options ask for; then the
time taken, root visits, network rows and batches, the number of tree nodes, the best line and the
tree (katacli.search.print_tree) along ``print_branch``, ``print_max_depth`` levels deep.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

from katacli.c_numbers import round_half_away
from katacli.game.board_text import board_diagram
from katacli.game.coords import BLACK, WHITE, CoordError, format_vertex, parse_vertex
from katacli.game.rules import KOMI_CLIP_RADIUS, Rules, RulesError
from katacli.game.session import GameSession, SessionError
from katacli.game.sgf import SgfError, SgfGame, game_result_tag
from katacli.search.print_tree import tree_lines

PV_PRINT_LEN = 25
CENTI = 100.0
MILLI = 1000.0
# -print-dirichlet-shape prints the alphas scaled to this total concentration, as KataGo does.
PRINTED_DIRICHLET_CONCENTRATION = 10.83
# -print-lead: visits of each komi probe (KataGo's evalsgf passes 20 to computeLead).
LEAD_PROBE_VISITS = 20
COLOR_CHARS = {BLACK: "X", WHITE: "O"}
# KataGo's default rules for an SGF without RU (Rules::getTrompTaylorish).
DEFAULT_RULES = "tromp-taylor"


class EvalSgfError(ValueError):
    """A request that cannot be carried out (bad move number, illegal extra move, ...): one line."""


@dataclass
class EvalSgfRequest:
    move_num: int
    move_num_end: Optional[int] = None
    print_branch: list = field(default_factory=list)  # (x, y) / None moves, parsed by parse_moves
    extra_moves: list = field(default_factory=list)
    avoid_moves: list = field(default_factory=list)
    override_komi: Optional[float] = None
    override_rules: Optional[str] = None
    print_ownership: bool = False
    print_root_nn_values: bool = False
    print_policy: bool = False
    print_log_policy: bool = False
    print_max_depth: int = 1
    print_dirichlet_shape: bool = False
    print_score_now: bool = False
    print_lead: bool = False
    print_json: bool = False
    print_sharp_score: bool = False
    print_root_ending_bonus: bool = False
    print_avg_shortterm_error: bool = False
    print_graph: bool = False
    raw_nn: bool = False
    dump_npz_input_to: Optional[str] = None
    hint_loc: list = field(default_factory=list)  # at most one move, parsed by parse_moves


def parse_moves(text: str, x_size: int, y_size: int, what: str) -> list:
    """A space-separated move sequence (e.g. "D4 Q16 pass") as points; EvalSgfError names ``what``."""
    try:
        return [parse_vertex(word, x_size, y_size) for word in text.split()]
    except CoordError as exc:
        raise EvalSgfError(f"{what}: {exc}") from None


def initial_rules(game: SgfGame, request: EvalSgfRequest, say: Callable[[str], None]) -> Rules:
    """The SGF's rules (KataGo's getRulesOrWarn, saying its warning), or -override-rules: those rules whole,
    komi included (the preset's usual komi, or the one the rules text gives), as KataGo takes them."""
    rules, warning = game.rules_or_default(Rules.preset(DEFAULT_RULES))
    if warning:
        say(warning)
    if request.override_rules is not None:
        try:
            rules = Rules.parse(request.override_rules)
        except RulesError as exc:
            raise EvalSgfError(f"-override-rules: {exc}") from None
    return rules


def set_up(game: SgfGame, rules: Rules, move_num: int, request: EvalSgfRequest) -> GameSession:
    """The position to search: setup stones, ``move_num`` moves, the extra moves (which must be legal)."""
    if request.override_komi is not None:
        area = game.x_size * game.y_size
        if abs(request.override_komi) > area + KOMI_CLIP_RADIUS:
            raise EvalSgfError("Invalid komi, too much greater than the area of the board")
        try:
            rules = rules.with_komi(request.override_komi)
        except RulesError as exc:   # not a half-integer, or NaN
            raise EvalSgfError(f"-override-komi: {exc}") from None
    if move_num < 0:
        raise EvalSgfError(f"Move num {move_num} requested but must be non-negative")
    if move_num > len(game.moves):
        raise EvalSgfError(f"Move num {move_num} requested but sgf has only {len(game.moves)}")
    session = GameSession(x_size=game.x_size, y_size=game.y_size, rules=rules, prevent_encore=False)
    try:
        session.set_sgf_position(game.position_at(move_num + 1), source=game.file_name)
    except (SgfError, SessionError) as exc:
        raise EvalSgfError(str(exc)) from None
    for xy in request.extra_moves:
        pla = session.next_player
        if not session.state.is_legal(xy, pla):
            vertex = format_vertex(xy, game.x_size, game.y_size)
            raise EvalSgfError(f"Extra illegal move for {'X' if pla == BLACK else 'O'}: {vertex}")
        session.play(pla, xy)
    return session


def position_text(session: GameSession, branch: list) -> list[str]:
    """Rules, encore phase and board; the board at the end of ``branch`` too. EvalSgfError for an illegal branch."""
    state = session.state
    lines = [f"Rules: {session.rules}", f"Encore phase {state.encore_phase}"]
    lines += board_diagram(state.colors(), state.moves, state.board().pos_hash) + [""]
    if branch:
        copy = state.copy()
        pla = copy.next_player
        for xy in branch:
            if not copy.is_legal(xy, pla):
                vertex = format_vertex(xy, state.x_size, state.y_size)
                raise EvalSgfError(f"Branch Illegal move for {'X' if pla == BLACK else 'O'}: {vertex}")
            copy.play(xy, pla)
            pla = BLACK + WHITE - pla
        lines += board_diagram(copy.colors(), copy.moves, copy.board().pos_hash) + [""]
    return lines


def search_report(searcher, evaluator, session: GameSession, request: EvalSgfRequest, perspective: int,
                  seconds: float) -> list[str]:
    """Everything printed after the search."""
    state = session.state
    lines: list[str] = []
    sign = -1.0 if perspective == BLACK else 1.0
    # The search root's own evaluation, as KataGo prints it (no second network call: NN rows counts the search's).
    ownership = searcher.root_raw_ownership() if evaluator is not None else None
    if request.print_ownership and ownership is not None:
        lines.append("Ownership map (ROOT position):")
        for y in range(state.y_size):
            row = ownership[y * state.x_size:(y + 1) * state.x_size]
            lines.append("".join("%6.1f " % (sign * v * CENTI) for v in row))
        lines.append("")
    raw = searcher.root_raw_values()
    if request.print_root_nn_values and raw is not None:
        stdev = math.sqrt(max(0.0, raw["score_mean_sq"] - raw["score_mean"] ** 2))
        lines += [f"White win: {_g(raw['win'])}", f"White loss: {_g(raw['loss'])}",
                  f"White noresult: {_g(raw['no_result'])}", f"White score mean {_g(raw['score_mean'])}",
                  f"White score stdev {_g(stdev)}", f"Var time left {_g(raw['var_time_left'])}",
                  f"Shortterm winloss error {_g(raw['st_wl_error'])}",
                  f"Shortterm score error {_g(raw['st_score_error'])}"]
    if request.print_sharp_score:
        sharp = searcher.sharp_score()
        if sharp is not None:
            lines.append(f"White sharp score {_g(sharp)}")
    policies = [("Root policy: ", searcher.root_policy())]
    if request.print_policy or request.print_log_policy:
        policies.append(("Root human policy: ", searcher.analysis(max_pv_len=1, include_policy=True).human_policy))
    if request.print_policy:
        for title, policy in policies:
            if policy is not None:
                lines += [title] + _policy_grid(policy, state.x_size, state.y_size, "  -  ",
                                                lambda p: "%5.2f" % (p * CENTI))
    if request.print_log_policy:
        for title, policy in policies:
            if policy is not None:
                lines += [title] + _policy_grid(policy, state.x_size, state.y_size, "  _  ",
                                                lambda p: "%+5.2f" % math.log(p) if p > 0 else " -inf")
    if request.print_dirichlet_shape:
        lines += _dirichlet_shape_lines(searcher.root_policy(), state.x_size, state.y_size)
    if request.print_score_now:
        lines += score_now_lines(state)
    if request.print_root_ending_bonus:
        lines += ending_bonus_lines(searcher, state.x_size, state.y_size)
    rows = getattr(evaluator, "num_positions_evaluated", 0)
    batches = getattr(evaluator, "num_batches", 0)
    pv = searcher.principal_variation(PV_PRINT_LEN)
    lines += [f"Time taken: {_g(seconds)}", f"Root visits: {searcher.root_visits}", f"NN rows: {rows}",
              f"NN batches: {batches}", f"NN avg batch size: {_g(rows / batches if batches else 0.0)}",
              f"True number of tree nodes: {searcher.tree.node_count()}",
              "PV: " + " ".join(format_vertex(m, state.x_size, state.y_size) for m in pv), "Tree:"]
    lines += tree_lines(searcher, request.print_branch, perspective, request.print_max_depth,
                        shortterm_errors=request.print_avg_shortterm_error)
    return lines


def ending_bonus_lines(searcher, x_size: int, y_size: int) -> list[str]:
    """-print-root-ending-bonus: each root child's utility (White's view) without and with the score
    bonus rootEndingBonusPoints gives it (KataGo's printRootEndingScoreValueBonus)."""
    lines = ["Ending bonus (ROOT position)"]
    for row in searcher.root_ending_bonus():
        lines.append("%s visits %d edgeVisits %d utilityNoBonus %.2fc utilityWithBonus %.2fc endingScoreBonus %.2f" % (
            format_vertex(row["move"], x_size, y_size), row["visits"], row["edge_visits"], row["utility"] * CENTI,
            row["utility_with_bonus"] * CENTI, row["bonus"]))
    return lines


def graph_lines(searcher) -> list[str]:
    """-print-graph: one ``parent -> child`` line per edge of the search graph, nodes numbered from the
    root (0) as KataGo numbers them; a position reached by several move orders has several edges in."""
    _, edges = searcher.graph_edges()
    return [f"{parent} -> {child}" for parent, child in edges] + [""]


def _dirichlet_shape_lines(root_policy, x_size: int, y_size: int) -> list[str]:
    """The root noise's alphas scaled to KataGo's printed concentration (board points only, as KataGo)."""
    from katacli.search.root_policy import dirichlet_alpha_shape

    if root_policy is None:
        return []
    board = np.asarray(root_policy[:x_size * y_size], np.float64)
    alpha = dirichlet_alpha_shape(board) * PRINTED_DIRICHLET_CONCENTRATION
    no_pass_share = -1.0  # pass takes no share of the noise's shape: printed as "-"
    return ([f"Dirichlet alphas with {PRINTED_DIRICHLET_CONCENTRATION:g} total concentration: "]
            + _policy_grid(np.append(alpha, no_pass_share), x_size, y_size, "  -  ", lambda a: "%5.4f" % a))


def score_now_lines(state) -> list[str]:
    """The game ended and scored as it stands (KataGo's endAndScoreGameNow): area, komi, bonus, result."""
    scored = state.copy()
    rows, _ = scored.area_now()
    scored.end_and_score_now()
    lines = ["Score now (ROOT position):"]
    lines += ["".join(COLOR_CHARS.get(c, ".") for c in row) for row in rows]
    lines += ["", f"Komi: {_g(scored.komi)}", f"WBonus: {_g(scored.white_bonus_score)}",
              "Final: " + (f"RE[{game_result_tag(scored)}]" if scored.is_game_finished else "")]
    return lines


def network_debug_lines(output, x_size: int, y_size: int) -> list[str]:
    """One network output as KataGo's NNOutput::debugPrint shows it (White's view; policy and
    ownership in thousandths)."""
    lines = [f"Win {output.white_win * CENTI:.2f}c", f"Loss {output.white_loss * CENTI:.2f}c",
             f"NoResult {output.no_result * CENTI:.2f}c", f"ScoreMean {output.white_score_mean:.2f}",
             f"ScoreMeanSq {output.white_score_mean_sq:.1f}", f"Lead {output.white_lead:.2f}",
             f"VarTimeLeft {output.var_time_left:.1f}",
             f"STWinlossError {output.shortterm_winloss_error * CENTI:.2f}c",
             f"STScoreError {output.shortterm_score_error:.2f}", f"OptimismUsed {output.policy_optimism:.2f}",
             "Policy", "Pass%4d " % _permille(output.policy_pass)]
    for y in range(y_size):
        lines.append("".join("   - " if p < 0 else "%4d " % _permille(p)
                             for p in output.policy[y * x_size:(y + 1) * x_size]))
    for y in range(y_size):
        lines.append("".join("%5d " % _permille(v) for v in output.white_ownership[y * x_size:(y + 1) * x_size]))
    lines.append("")
    return lines


def _permille(x: float) -> int:
    """Thousandths, rounded as C rounds (halves away from zero)."""
    return int(round_half_away(x * MILLI))


def _policy_grid(policy, x_size: int, y_size: int, illegal: str, cell) -> list[str]:
    lines = []
    for y in range(y_size):
        lines.append("".join((illegal if p < 0 else cell(float(p))) + " "
                             for p in policy[y * x_size:(y + 1) * x_size]))
    pass_prob = float(policy[x_size * y_size])
    lines.append("Pass " + (cell(pass_prob) if pass_prob >= 0 else illegal))
    return lines


def _g(x: float) -> str:
    """A number as C++ streams print it by default (6 significant digits)."""
    return "%g" % x


def raw_nn_lines(evaluator, human_evaluator, params, session: GameSession) -> list[str]:
    """-raw-nn: the position, then each network's single evaluation (symmetry 0, uncached)."""
    from katacli.search.raw_eval import evaluate_raw

    state = session.state
    lines = [f"Rules: {session.rules}", f"Encore phase {state.encore_phase}"]
    lines += board_diagram(state.colors(), state.moves, state.board().pos_hash)
    for net in (evaluator, human_evaluator):
        if net is None:
            continue
        profile = params.human_profile if getattr(net, "needs_metadata", False) else None
        if profile is not None and not profile.is_set:
            raise EvalSgfError("-raw-nn: the human model needs a humanSLProfile in the config")
        output = evaluate_raw(net, state, state.next_player, [0], 0.0, profile=profile)[0]
        lines += network_debug_lines(output, state.x_size, state.y_size)
    return lines


def lead_lines(params, evaluator, state, seed: Optional[int]) -> list[str]:
    """-print-lead: White's lead found by short noiseless searches at several komis (KataGo's computeLead)."""
    from katacli.search import Searcher
    from katacli.search.fair_komi import CachedProbe, lead_by_komi, noiseless_params

    probe_params = noiseless_params(params, LEAD_PROBE_VISITS)

    def probe(komi: float) -> tuple[float, float]:
        position = state.copy()
        position.set_komi(komi)
        searcher = Searcher(position, probe_params, evaluator, seed=seed)
        searcher.run()
        values = searcher.root_values(pruned=False)
        return (values["lead"], values["win_loss"]) if values else (0.0, 0.0)

    return [f"LEAD: {_g(lead_by_komi(CachedProbe(probe, state.x_size, state.y_size), state))}"]


def dump_network_input(path: str, evaluator, params, state) -> list[str]:
    """-dump-npz-input-to: the root's network input (symmetry 0, the root's policy optimism) as
    binaryInputNCHW / globalInputNC in an npz file, then the network's output for it."""
    from katacli.search.raw_eval import evaluate_raw, position_request

    request = position_request(state, state.next_player, 0, params.root_policy_optimism)
    try:
        with open(path, "wb") as out:
            np.savez(out, binaryInputNCHW=request.spatial[np.newaxis], globalInputNC=request.global_features[np.newaxis])
    except OSError as exc:
        raise EvalSgfError(f"-dump-npz-input-to: cannot write {path}: {exc.strerror or exc}") from None
    lines = [f"Wrote to {path}"]
    if evaluator is not None:
        output = evaluate_raw(evaluator, state, state.next_player, [0], params.root_policy_optimism)[0]
        lines += network_debug_lines(output, state.x_size, state.y_size)
    return lines


def run_evalsgf(game: SgfGame, request: EvalSgfRequest, params, evaluator, human_evaluator, perspective_setting,
                seed: Optional[int], say: Callable[[str], None],
                search_json: Optional[Callable[[object, object, int], Optional[str]]] = None) -> None:
    """Search each move number from request.move_num to request.move_num_end and ``say`` the report lines.

    ``search_json(searcher, state, perspective)``: the line -print-json prints (the analysis engine's
    JSON, which lives in a layer above this one).
    """
    from katacli.search import Searcher
    from katacli.search.restrictions import MoveRestrictions

    rules = initial_rules(game, request, say)
    last = max(request.move_num, request.move_num_end if request.move_num_end is not None else request.move_num)
    set_up(game, rules, request.move_num, request)  # errors before any network work
    if last > len(game.moves):   # -move-num-end past the game: said before searching the positions before it
        raise EvalSgfError(f"-move-num-end: move num {last} requested but sgf has only {len(game.moves)}")
    if (request.raw_nn or request.print_lead) and evaluator is None:
        raise EvalSgfError(f"{'-raw-nn' if request.raw_nn else '-print-lead'} needs a network (-model)")
    for move_num in range(request.move_num, last + 1):
        session = set_up(game, rules, move_num, request)
        state = session.state
        if request.raw_nn:
            for line in raw_nn_lines(evaluator, human_evaluator, params, session):
                say(line)
            continue
        perspective = {"B": BLACK, "W": WHITE}.get(perspective_setting, state.next_player)
        for line in position_text(session, request.print_branch):
            say(line)
        searcher = Searcher(state, params, evaluator, seed=seed, human_evaluator=human_evaluator)
        if request.hint_loc:
            searcher.set_root_hint(request.hint_loc[0])
        if request.avoid_moves:
            restrictions = MoveRestrictions(state.x_size, state.y_size)
            for pla in (BLACK, WHITE):
                restrictions.avoid(pla, request.avoid_moves, 1)
            searcher.set_restrictions(restrictions)
        if request.print_json and request.print_ownership:
            searcher.set_keep_ownership(True)  # the JSON's ownership is the search's, not the raw net's
        started = time.monotonic()
        searcher.run()
        for line in search_report(searcher, evaluator, session, request, perspective, time.monotonic() - started):
            say(line)
        if request.print_lead:
            for line in lead_lines(params, evaluator, state, seed):
                say(line)
        if request.print_graph:
            for line in graph_lines(searcher):
                say(line)
        if request.print_json and search_json is not None:
            text = search_json(searcher, state, perspective)
            if text is not None:
                say(text)
        if request.dump_npz_input_to:
            for line in dump_network_input(request.dump_npz_input_to, evaluator, params, state):
                say(line)
