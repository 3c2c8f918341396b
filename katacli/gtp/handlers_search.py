"""GTP commands that search: genmove and its variants, analysis streaming, scoring, raw network output.

Searches go through the adapter in :mod:`katacli.gtp.bot`. A blocking
search (genmove) runs in a worker thread so that Ctrl-C still reaches the main
thread; streaming and cancellable commands run as the engine's background task
and stop when the next input line arrives.
"""
from __future__ import annotations

import contextlib
import random
import sys
import threading
import time

from katacli._core.game_state import IllegalMoveError

from katacli.game.coords import BLACK, WHITE, format_vertex
from katacli.game.handicap import handicap_stones_counting_first_moves
from katacli.game.nogo import nogo_has_legal_move, nogo_is_legal
from katacli.gtp.analyze_args import AnalyzeArgsError, parse_analyze_args, parse_raw_nn_args
from katacli.gtp.analyze_info_lines import AnalyzeOptions, InfoLineFormatter
from katacli.gtp.arguments import parse_int64
from katacli.gtp.errors import GtpError
from katacli.gtp.friendly_pass import maybe_friendly_pass
from katacli.gtp.genmove_log import genmove_log_text, network_counts, ogs_chat_line
from katacli.gtp.handlers_game import parse_player
from katacli.gtp.play_policy import (
    board_size_scaling, dynamic_pda_for_white, handicap_game_points_threshold, initial_black_advantage, search_factor,
)
from katacli.gtp.protocol import Command, format_header
from katacli.gtp.rawnn import format_raw_nn
from katacli.gtp.resign import ResignSettings, ResignTracker
from katacli.gtp.scoring import alive_stones, final_score_text
from katacli.gtp.search_types import NO_MOVE, SearchOutcome, SearchRequest
from katacli.nn.human_profile import ProfileNotSetError
from katacli.search.raw_eval import evaluate_raw

CANCELLED = "cancelled"
RESIGN = "resign"
NO_MOVE_ERROR = "genmove returned null location or illegal move"   # KataGo's words
# delayMoveScale: the mean wait is scale / 2 / (prior + this), gamma-distributed with shape 2.
DELAY_PRIOR_OFFSET = 0.10
DELAY_GAMMA_SHAPE = 2.0
MIN_DELAY_SECONDS = 0.0001


# --------------------------------------------------------------------------- building searches


def _no_white_stones(state) -> bool:
    return all(c != WHITE for row in state.colors() for c in row)


def search_for(engine, pla: int) -> int:
    """Make ``pla`` the side to move before a search, as KataGo's bot does when asked to search for the side
    not to move (setPlayerAndClearHistory: the history and the tree are forgotten, even where the position
    is one the tree holds). Returns the handicap stones of the game as it was before: KataGo sets its
    genmove up (dynamic PDA, handicap pattern avoidance) before its bot forgets the history."""
    handicap = handicap_stones_counting_first_moves(engine.session.state)
    if engine.session.search_for(pla) and engine.has_bot:   # (a bot not made yet has no tree)
        engine.bot.forget_tree()
    return handicap


def genmove_params(engine, pla: int, analyzing: bool, handicap: int):
    """The genmove parameters with KataGo's per-move adjustments (dynamic PDA, handicap pattern avoidance);
    ``handicap``: the game's handicap stones before the search's history reset (see search_for)."""
    settings, session = engine.settings, engine.session
    params = engine.params.genmove
    state = session.state
    engine.stats.pda_for_white = dynamic_pda_for_white(
        engine.stats.pda_for_white, settings.dynamic_pda_cap_per_opp_lead, engine.rules, handicap,
        session.x_size, session.y_size, engine.stats.recent_win_loss, _no_white_stones(state))
    changes = {}
    if not settings.static_pda_takes_precedence:
        pda_pla = params.playout_doubling_advantage_pla
        for_white = pda_pla == "W" or (pda_pla is None and pla == WHITE)
        changes["playout_doubling_advantage"] = engine.stats.pda_for_white * (1.0 if for_white else -1.0)
    utility = engine.params.genmove.avoid_repeated_pattern_utility
    if not analyzing:
        opp_advantage = initial_black_advantage(engine.rules, handicap) * (1 if pla == WHITE else -1)
        threshold = handicap_game_points_threshold(board_size_scaling(session.x_size, session.y_size))
        if opp_advantage > threshold:
            utility = settings.handicap_avoid_repeated_pattern_utility
    changes["avoid_repeated_pattern_utility"] = utility
    return params.replace(**changes)


def make_request(engine, pla: int, params, options: AnalyzeOptions | None, clock=None, factor: float = 1.0,
                 analysis_params: bool = False) -> SearchRequest:
    analyzing = options is not None
    options = options or AnalyzeOptions()
    return SearchRequest(
        state=engine.session.position_for(pla), pla=pla, params=params, clock=clock, search_factor=factor,
        nogo=engine.nogo, analysis_params=analysis_params, avoid=options.avoid,
        report_interval=options.interval_seconds if analyzing else None,
        min_moves=options.min_moves,
        # KataGo's analysisPVLen counts the moves after the first one; our max_pv_len counts all of them.
        pv_len=engine.settings.analysis_pv_len + 1,
        want_ownership=options.ownership or options.ownership_stdev,
        want_ownership_stdev=options.ownership_stdev,
        want_moves_ownership=options.moves_ownership or options.moves_ownership_stdev,
    )


def make_formatter(engine, pla: int, options: AnalyzeOptions) -> InfoLineFormatter:
    session = engine.session
    start = session.position_for(pla)

    def pv_cutoff(pv) -> int:
        """KataGo prints PVs only up to the end of the current game phase when the cleanup phase is prevented."""
        if not engine.settings.prevent_cleanup_phase:
            return len(pv)
        state, mover = start.copy(), pla
        for i, xy in enumerate(pv):
            phase = state.encore_phase
            try:
                state.play_tolerant(xy, mover)
            except IllegalMoveError:  # a stale PV: print what is playable
                return i
            mover = BLACK + WHITE - mover
            if state.encore_phase != phase:
                return i + 1
        return len(pv)

    return InfoLineFormatter(options, session.x_size, session.y_size, engine.settings.report_winrates_as, pv_cutoff)


def snapshot_printer(engine, formatter: InfoLineFormatter):
    def emit(snapshot) -> None:
        line = formatter.format(snapshot)
        if line is not None:
            engine.out.write(line + "\n")
    return emit


# --------------------------------------------------------------------------- genmove


def _search_for_move(engine, pla: int, handicap: int, options: AnalyzeOptions | None, stop: threading.Event,
                     emit=None) -> SearchOutcome:
    params = genmove_params(engine, pla, analyzing=options is not None, handicap=handicap)
    factor = search_factor(engine.settings.search_factor_when_winning_threshold,
                           engine.settings.search_factor_when_winning, params.win_loss_utility_factor,
                           engine.stats.recent_win_loss, pla)
    engine.stats.last_search_factor = factor
    engine.stats.last_genmove_params = params
    engine.stats.nn_counts_at_genmove = network_counts(engine.evaluator)
    request = make_request(engine, pla, params, options, clock=engine.clocks[pla], factor=factor)
    return engine.bot.genmove(request, stop, emit)


def _decide(engine, pla: int, outcome: SearchOutcome, elapsed: float, debug: bool) -> tuple[str, object]:
    """KataGo's handling of a finished genmove search: resignation, logging, pass hacks. -> (text, move or RESIGN)."""
    settings = engine.settings
    state = engine.session.state
    if outcome.move == NO_MOVE:   # avoid / allow left nothing to play: no move, as KataGo (a pass would be played)
        raise GtpError(NO_MOVE_ERROR)
    engine.stats.recent_win_loss.append(outcome.win_loss)
    resign = ResignTracker(ResignSettings(engine.params.allow_resignation, settings.resign_threshold,
                                          settings.resign_consec_turns, settings.resign_min_score_difference,
                                          settings.resign_min_moves_per_board_area),
                           engine.stats.recent_win_loss)
    resigned = resign.should_resign(
        player=pla, lead=outcome.lead, board_area=state.x_size * state.y_size, num_moves=len(state.moves),
        initial_black_advantage_points=initial_black_advantage(engine.rules, handicap_stones_counting_first_moves(state)))
    elapsed += _delay_move(engine, outcome)   # KataGo's genmove time (cputime, the log) includes the delay
    engine.genmove_time_sum += elapsed
    position = engine.session.position_for(pla)
    if outcome.move != RESIGN and (settings.ogs_chat_to_stderr or settings.log_search_info or debug):
        searcher = engine.bot.search_tree(position)
        if settings.ogs_chat_to_stderr:
            print(ogs_chat_line(engine, searcher, pla, position, outcome.move, outcome), file=sys.stderr, flush=True)
        if settings.log_search_info or debug:
            log_text = genmove_log_text(engine, searcher, pla, position, outcome.move, outcome, elapsed)
            if settings.log_search_info:
                engine.log.write(log_text)
            if debug:
                print(log_text, end="", file=sys.stderr, flush=True)
    if resigned or outcome.move == RESIGN:  # the search resigns only in NoGo, without a legal move
        if outcome.move != RESIGN:
            engine.avoid_patterns.record_genmove(position, pla, outcome.move)  # remembered all the same (KataGo)
        return RESIGN, RESIGN
    legal = (nogo_is_legal(position, outcome.move, pla) if engine.nogo
             else outcome.move is None or position.is_legal(outcome.move, pla))
    if not legal:
        raise GtpError(NO_MOVE_ERROR)
    move = maybe_friendly_pass(engine, position, pla, outcome.move)  # KataGo's order: friendly pass, then cleanup
    move = engine.bot.adjust_pass(position, pla, move)
    engine.avoid_patterns.record_genmove(position, pla, move)  # autoAvoidRepeat (off: does nothing)
    return format_vertex(move, state.x_size, state.y_size), move


def _delay_move(engine, outcome: SearchOutcome) -> float:
    """delayMoveScale's wait before answering (a human-like pace); -> the seconds it waited."""
    scale, limit = engine.params.delay_move_scale, engine.params.delay_move_max
    if scale <= 0 or limit <= 0:
        return 0.0
    mean_wait = 0.5 * scale / (max(0.0, outcome.move_prior) + DELAY_PRIOR_OFFSET)
    wait = random.gammavariate(DELAY_GAMMA_SHAPE, 1.0) * mean_wait / DELAY_GAMMA_SHAPE
    start = time.monotonic()
    time.sleep(max(min(wait, limit), MIN_DELAY_SECONDS))
    return time.monotonic() - start


def _play_chosen(engine, pla: int, move) -> None:
    if move == RESIGN:
        return
    engine.session.play(pla, move)
    engine.ponder_requested = True


def _nogo_stuck(engine, pla: int) -> bool:
    return engine.nogo and not nogo_has_legal_move(engine.session.position_for(pla), pla)


def cmd_genmove(engine, command: Command) -> str | None:
    if len(command.args) != 1:
        raise GtpError(f"Expected one argument for {command.name} but got '{command.arg_text}'")
    pla = parse_player(command.args[0])
    play = command.name in ("genmove", "genmove_debug")
    debug = command.name.endswith("_debug")
    handicap = search_for(engine, pla)
    if _nogo_stuck(engine, pla):
        return RESIGN
    if command.name == "kata-search_cancellable":
        _require_profile(engine, engine.params.genmove)   # answered now: the search runs in the background
        _start_cancellable(engine, command, pla, handicap, None)
        return None
    text, _, _ = generate_move(engine, pla, play=play, debug=debug, handicap=handicap)
    return text


def generate_move(engine, pla: int, *, play: bool, debug: bool = False,
                  handicap: int | None = None) -> tuple[str, object, SearchOutcome | None]:
    """genmove's work: search, then KataGo's decision (resignation, cleanup before pass), then play the move
    when ``play``. -> (GTP text, move (x, y) / None for pass / RESIGN, the search outcome or None in a lost NoGo).
    ``handicap``: from search_for, where the caller made ``pla`` the side to move already."""
    before = search_for(engine, pla)
    handicap = before if handicap is None else handicap
    if _nogo_stuck(engine, pla):
        return RESIGN, RESIGN, None
    started = time.monotonic()
    outcome = engine.run_in_worker(lambda stop: _search_for_move(engine, pla, handicap, None, stop))
    text, move = _decide(engine, pla, outcome, time.monotonic() - started, debug)
    if play:
        _play_chosen(engine, pla, move)
    return text, move, outcome


def _require_profile(engine, params) -> None:
    """A human-SL main net without humanSLProfile cannot search: say so as a ``?`` answer (genmove's), before a
    streaming command's ``=`` header, after which a failure could only end the response empty."""
    evaluator = engine.evaluator
    if evaluator is not None and evaluator.needs_metadata and not params.human_profile.is_set:
        raise ProfileNotSetError()


def cmd_genmove_analyze(engine, command: Command) -> str | None:
    session = engine.session
    try:
        pla, options = parse_analyze_args(command.name, command.args, session.next_player, session.x_size,
                                          session.y_size)
    except AnalyzeArgsError:
        raise GtpError("Could not parse genmove_analyze arguments or arguments out of range: "
                       f"'{command.arg_text}'") from None
    handicap = search_for(engine, pla)
    _require_profile(engine, engine.params.genmove)
    engine.out.write(format_header(command.id))
    if _nogo_stuck(engine, pla):
        engine.out.write(f"play {RESIGN}\n\n")
        return None
    if command.name == "kata-search_analyze_cancellable":
        _start_cancellable(engine, command, pla, handicap, options)
        return None
    emit = snapshot_printer(engine, make_formatter(engine, pla, options))
    started = time.monotonic()
    with _response_already_started(engine, command):
        outcome = engine.run_in_worker(lambda stop: _search_for_move(engine, pla, handicap, options, stop, emit))
        text, move = _decide(engine, pla, outcome, time.monotonic() - started, debug=False)
    engine.out.write(f"play {text}\n\n")
    if command.name in ("genmove_analyze", "lz-genmove_analyze", "kata-genmove_analyze"):
        _play_chosen(engine, pla, move)
    return None


class _ResponseEnded(GtpError):
    """Raised after a failure in a command whose ``=`` header was already printed and whose response
    has been closed with a blank line (the message went to the log)."""

    response_ended = True


@contextlib.contextmanager
def _response_already_started(engine, command: Command):
    """Failures after the ``=`` header cannot become ``? message``: like KataGo, end the response with a
    blank line and report the problem on stderr / in the log."""
    try:
        yield
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        engine.log.info(f"{command.name} failed: {exc}")
        engine.out.write("\n")
        raise _ResponseEnded(str(exc)) from None


def _start_cancellable(engine, command: Command, pla: int, handicap: int, options: AnalyzeOptions | None) -> None:
    """kata-search_cancellable / kata-search_analyze_cancellable: any input line cancels the search."""
    answered = threading.Lock()
    prefix = "play " if options is not None else ""
    emit = snapshot_printer(engine, make_formatter(engine, pla, options)) if options else None

    def answer(text: str | None) -> None:
        """The move (or "cancelled"); None: the search found no move to play, KataGo's empty ending."""
        if not answered.acquire(blocking=False):
            return
        if text is None:
            engine.log.info(f"{command.name}: {NO_MOVE_ERROR}")
            if options is not None:
                engine.out.write("\n")
            else:
                engine.out.response(command.id, NO_MOVE_ERROR, is_error=True)
        elif options is not None:
            engine.out.write(f"{prefix}{text}\n\n")
        else:
            engine.out.response(command.id, text)

    def run(stop: threading.Event) -> None:
        started = time.monotonic()
        outcome = _search_for_move(engine, pla, handicap, options, stop, emit)
        if stop.is_set():
            return  # cancelled: answered by on_stopped
        try:
            text, _ = _decide(engine, pla, outcome, time.monotonic() - started, debug=False)
        except GtpError:
            text = None
        answer(text)

    engine.start_background(run, on_stopped=lambda: answer(CANCELLED))


# --------------------------------------------------------------------------- analysis and pondering


def cmd_analyze(engine, command: Command) -> None:
    session = engine.session
    try:
        pla, options = parse_analyze_args(command.name, command.args, session.next_player, session.x_size,
                                          session.y_size)
    except AnalyzeArgsError:
        raise GtpError(f"Could not parse analyze arguments or arguments out of range: '{command.arg_text}'") from None
    search_for(engine, pla)
    params = engine.params.analysis
    _require_profile(engine, params)
    emit = snapshot_printer(engine, make_formatter(engine, pla, options))
    request = make_request(engine, pla, params, options, analysis_params=True)
    engine.out.write(format_header(command.id))
    engine.start_background(lambda stop: engine.bot.analyze(request, stop, emit),
                            on_stopped=lambda: engine.out.write("\n"))
    return None


def start_pondering(engine) -> None:
    state = engine.session.state
    if engine.nogo and not nogo_has_legal_move(state, state.next_player):
        return
    # The last genmove's search factor (searchFactorWhenWinning...) shortens pondering too, as KataGo's ponder.
    request = make_request(engine, state.next_player, engine.params.genmove, None,
                           factor=engine.stats.last_search_factor)
    engine.start_background(lambda stop: engine.bot.ponder(request, stop), pondering=True)


def cmd_stop(engine, command: Command) -> str:
    return ""  # the background work already stopped when this line arrived


def cmd_clear_cache(engine, command: Command) -> str:
    engine.bot.clear_cache()
    return ""


# --------------------------------------------------------------------------- scoring


def cmd_final_score(engine, command: Command) -> str:
    return final_score_text(engine)


def cmd_final_status_list(engine, command: Command) -> str:
    if len(command.args) != 1:
        raise GtpError(f"Expected one argument for final_status_list but got '{command.arg_text}'")
    mode = command.args[0]
    if mode not in ("alive", "seki", "dead"):
        raise GtpError("Argument to final_status_list must be 'alive' or 'seki' or 'dead'")
    if mode == "seki":
        return ""
    alive = alive_stones(engine)
    session = engine.session
    colors = session.state.colors()
    wanted = [(x, y) for y in range(session.y_size) for x in range(session.x_size)
              if colors[y][x] != 0 and ((x, y) in alive) == (mode == "alive")]
    return " ".join(format_vertex(p, session.x_size, session.y_size) for p in wanted)


# --------------------------------------------------------------------------- raw network and benchmark


def cmd_kata_raw_nn(engine, command: Command) -> str:
    session = engine.session
    try:
        pla, symmetries, optimism = parse_raw_nn_args(command.args, session.next_player,
                                                      engine.params.genmove.root_policy_optimism, True)
    except GtpError as exc:
        raise GtpError(f"{exc} for kata-raw-nn (expected an optional color, a symmetry 'all' or index [0-7], "
                       "and an optional optimism [0-1])") from None
    evaluator = engine.evaluator
    if evaluator is None:
        raise GtpError("kata-raw-nn needs a neural network: start the engine with -model")
    if evaluator.needs_metadata and not engine.params.analysis.human_profile.is_set:
        raise GtpError("Cannot run kata-raw-nn, the model needs the humanSLProfile parameter to be set")
    return _raw_nn_text(engine, evaluator, pla, symmetries, optimism, human=False)


def _raw_nn_text(engine, evaluator, pla: int, symmetries, optimism: float, human: bool) -> str:
    """kata-raw-nn / kata-raw-human-nn: the net on the current position for ``pla``, as KataGo prints it
    (the analysis parameters' playout doubling advantage, from ``pla``'s side, and humanSLProfile)."""
    session, analysis = engine.session, engine.params.analysis
    pda = analysis.playout_doubling_advantage
    if analysis.playout_doubling_advantage_pla not in (None, "B" if pla == BLACK else "W"):
        pda = -pda
    outputs = evaluate_raw(evaluator, session.state, pla, symmetries, optimism, pda, profile=analysis.human_profile)
    return format_raw_nn(outputs, session.x_size, session.y_size, human=human)


def cmd_kata_raw_human_nn(engine, command: Command) -> str:
    session = engine.session
    params = engine.params.genmove
    try:
        pla, symmetries, optimism = parse_raw_nn_args(command.args, session.next_player,
                                                      params.root_policy_optimism, False)
    except GtpError as exc:
        raise GtpError(f"{exc} for kata-raw-human-nn (expected an optional color followed by a symmetry "
                       "'all' or index [0-7])") from None
    human = engine.human_evaluator
    if human is None:
        raise GtpError("Cannot run kata-raw-human-nn, -human-model was not provided")
    from katacli.search.evaluation import human_net_usable

    if not human_net_usable(human, params):
        raise GtpError("Cannot run kata-raw-human-nn, humanSLProfile parameter was not set")
    return _raw_nn_text(engine, human, pla, symmetries, optimism, human=True)


def cmd_kata_benchmark(engine, command: Command) -> str | None:
    if len(command.args) != 1:
        raise GtpError(f"Expected one argument for kata-benchmark but got '{command.arg_text}'")
    visits = parse_int64(command.args[0])
    if visits is None or visits < 1:
        raise GtpError(f"Could not parse number of visits: {command.args[0]}")
    x_size, y_size = engine.session.x_size, engine.session.y_size
    if x_size != y_size:
        raise GtpError(f"Current board size is {x_size}x{y_size}, no built-in benchmarks for rectangular boards")
    engine.out.write(format_header(command.id))
    params = engine.params.genmove
    with _response_already_started(engine, command):
        line = engine.run_in_worker(lambda stop: engine.bot.benchmark(params, visits, x_size, stop))
    engine.out.write(line + "\n\n")
    return None
