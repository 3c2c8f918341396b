"""GTP commands that set up and change the game: size, stones, moves, handicap, komi, SGF.

Each handler takes (engine, command) and returns the response text, or raises
GtpError with KataGo's message.
"""
from __future__ import annotations

import os
import stat

from katacli._core.game_state import IllegalMoveError

from katacli.engine_common import network_supported_rules
from katacli.game.board_text import showboard_text
from katacli.game.coords import BLACK, WHITE, CoordError, OffBoardError, format_vertex, parse_color, parse_vertex
from katacli.game.nogo import NOGO_RULES_JSON, nogo_is_legal
from katacli.game.rules import RulesError, format_komi, parse_komi
from katacli.game.session import MAX_BOARD_LEN, MIN_BOARD_LEN, SessionError
from katacli.game.sgf import SgfError, load_sgf, with_result_comment, write_sgf
from katacli.gtp.arguments import parse_int
from katacli.gtp.errors import GtpError
from katacli.gtp.identity import identity_answer
from katacli.gtp.protocol import Command

# place_free_handicap places at most this many stones, and at most a quarter of the board.
MAX_FREE_HANDICAP = 30
FREE_HANDICAP_BOARD_FRACTION = 4
SET_POSITION_USAGE = "Expected a space-separated sequence of <COLOR> <VERTEX> pairs but got '{}'"


# --------------------------------------------------------------------------- basics


def _identity(engine, command: Command) -> str:
    text, is_error = identity_answer(command.name, command.kata_args, engine.options.override_version)
    if is_error:
        raise GtpError(text)
    return text


cmd_protocol_version = cmd_name = cmd_version = cmd_known_command = cmd_list_commands = _identity


def cmd_quit(engine, command: Command) -> str:
    engine.save_avoid_patterns(force=True)
    engine.quit_requested = True
    engine.log.write("Quit requested by controller")
    return ""


# --------------------------------------------------------------------------- board


def _parse_board_size(args: list[str]) -> tuple[int, int] | None:
    if len(args) == 1:
        if ":" in args[0]:
            pieces = args[0].split(":")
            sizes = [parse_int(p) for p in pieces]
            return (sizes[0], sizes[1]) if len(sizes) == 2 and None not in sizes else None
        size = parse_int(args[0])
        return (size, size) if size is not None else None
    if len(args) == 2:
        x, y = parse_int(args[0]), parse_int(args[1])
        return (x, y) if x is not None and y is not None else None
    return None


def set_board_size(engine, x_size: int, y_size: int) -> None:
    """KataGo keeps the game when the size does not change; a new size starts an empty board."""
    if (x_size, y_size) != (engine.session.x_size, engine.session.y_size):
        engine.session.set_size(x_size, y_size)
        engine.new_game_position()
        engine.bot.on_new_board(x_size, y_size)


def cmd_boardsize(engine, command: Command) -> str:
    size = _parse_board_size(command.args)
    if size is None:
        raise GtpError(f"Expected int argument for boardsize or pair of ints but got '{command.arg_text}'")
    x_size, y_size = size
    if x_size < MIN_BOARD_LEN or y_size < MIN_BOARD_LEN:
        raise GtpError("unacceptable size")
    if x_size > MAX_BOARD_LEN or y_size > MAX_BOARD_LEN:
        raise GtpError(f"unacceptable size (the largest supported board is {MAX_BOARD_LEN}x{MAX_BOARD_LEN})")
    engine.save_avoid_patterns()
    set_board_size(engine, x_size, y_size)
    return ""


def cmd_clear_board(engine, command: Command) -> str:
    engine.save_avoid_patterns()
    engine.avoid_patterns.reload_if_saved(engine.log.write)
    engine.session.clear_board()
    engine.new_game_position()
    return ""


def cmd_showboard(engine, command: Command) -> str:
    rules = NOGO_RULES_JSON if engine.nogo else engine.rules.to_json_string(include_komi=True)
    return showboard_text(engine.session.state, rules)


def cmd_komi(engine, command: Command) -> str:
    if len(command.args) != 1:
        raise GtpError(f"Expected single float argument for komi but got '{command.arg_text}'")
    try:
        komi = parse_komi(command.args[0])
    except RulesError as exc:
        raise GtpError(str(exc)) from None
    if engine.settings.forced_komi is not None:
        komi = engine.settings.forced_komi
    if komi != engine.rules.komi:   # as KataGo's setKomiIfNew: an unchanged komi keeps a running ponder
        engine.stop_background()
        engine.session.set_komi(komi)
    # Some controllers send komi before every move; keep pondering through it.
    engine.ponder_requested = bool(engine.session.state.moves)
    return ""


def cmd_get_komi(engine, command: Command) -> str:
    return format_komi(engine.rules.komi)


# --------------------------------------------------------------------------- moves


def parse_move_vertex(engine, text: str):
    """A vertex for play/genmove-style commands; off-board machine vertices are illegal, not unparseable."""
    try:
        return parse_vertex(text, engine.session.x_size, engine.session.y_size)
    except OffBoardError:
        raise GtpError("illegal move") from None
    except CoordError:
        raise GtpError(f"Could not parse vertex: '{text}'") from None


def parse_player(text: str) -> int:
    try:
        return parse_color(text)
    except CoordError:
        raise GtpError(f"Could not parse color: '{text}'") from None


def cmd_play(engine, command: Command) -> str:
    if len(command.args) != 2:
        raise GtpError(f"Expected two arguments for play but got '{command.arg_text}'")
    pla = parse_player(command.args[0])
    xy = parse_move_vertex(engine, command.args[1])
    engine.ponder_requested = True
    if engine.nogo and not nogo_is_legal(engine.session.state, xy, pla):
        raise GtpError("illegal move")
    try:
        engine.session.play(pla, xy)
    except IllegalMoveError:
        raise GtpError("illegal move") from None
    return ""


def cmd_undo(engine, command: Command) -> str:
    if not engine.session.undo():
        raise GtpError("cannot undo")
    engine.new_game_position()  # KataGo replays the game into a fresh tree
    return ""


def cmd_set_position(engine, command: Command) -> str:
    args = command.args
    usage = SET_POSITION_USAGE.format(command.arg_text)
    if len(args) % 2 != 0:
        raise GtpError(usage)
    stones = []
    for color_text, vertex_text in zip(args[0::2], args[1::2]):
        try:
            pla = parse_color(color_text)
        except CoordError:
            raise GtpError(f"{usage}: could not parse color: '{color_text}'") from None
        try:
            xy = parse_vertex(vertex_text, engine.session.x_size, engine.session.y_size)
        except CoordError:
            xy = None
        if xy is None:
            raise GtpError(f"{usage}: could not parse vertex: '{vertex_text}'")
        stones.append((pla, xy))
    engine.save_avoid_patterns()
    try:
        engine.session.set_position(stones, BLACK)
    except SessionError:
        raise GtpError("Illegal stone placements - overlapping stones or stones with no liberties?") from None
    engine.new_game_position()
    return ""


# --------------------------------------------------------------------------- handicap


def _handicap_count(command: Command, what: str) -> int:
    if len(command.args) != 1:
        raise GtpError(f"Expected one argument for {what} but got '{command.arg_text}'")
    count = parse_int(command.args[0])
    if count is None:
        raise GtpError(f"Could not parse number of handicap stones: '{command.args[0]}'")
    if count < 2:
        raise GtpError(f"Number of handicap stones less than 2: '{command.args[0]}'")
    return count


def _stones_in_board_order(engine) -> str:
    session = engine.session
    points = [(x, y) for y in range(session.y_size) for x in range(session.x_size)
              if session.state.color_at((x, y)) != 0]
    return " ".join(format_vertex(p, session.x_size, session.y_size) for p in points)


def cmd_fixed_handicap(engine, command: Command) -> str:
    count = _handicap_count(command, "fixed_handicap")
    if not engine.session.is_board_empty():
        raise GtpError("Board is not empty")
    engine.save_avoid_patterns()
    try:
        engine.session.place_fixed_handicap(count)
    except SessionError as exc:
        raise GtpError(f"{exc}, try place_free_handicap") from None
    engine.new_game_position()
    return _stones_in_board_order(engine)


def cmd_place_free_handicap(engine, command: Command) -> str:
    count = _handicap_count(command, "place_free_handicap")
    if not engine.session.is_board_empty():
        raise GtpError("Board is not empty")
    session = engine.session
    count = min(count, MAX_FREE_HANDICAP, session.x_size * session.y_size // FREE_HANDICAP_BOARD_FRACTION)
    engine.save_avoid_patterns()
    points = engine.bot.choose_free_handicap(session.state, count)
    session.set_position([(BLACK, p) for p in points], WHITE)
    engine.new_game_position()
    return _stones_in_board_order(engine)


def cmd_set_free_handicap(engine, command: Command) -> str:
    session = engine.session
    if not session.is_board_empty():
        raise GtpError("Board is not empty")
    points = []
    for text in command.args:
        try:
            xy = parse_vertex(text, session.x_size, session.y_size)
        except CoordError:
            xy = None
        if xy is None:
            raise GtpError(f"Invalid handicap location: {text}")
        points.append(xy)
    engine.save_avoid_patterns()
    try:
        session.set_position([(BLACK, p) for p in points], WHITE)
    except SessionError:
        raise GtpError("Handicap placement is invalid") from None
    engine.new_game_position()
    return ""


# --------------------------------------------------------------------------- SGF


def cmd_loadsgf(engine, command: Command) -> str:
    args = command.args
    if len(args) not in (1, 2):
        raise GtpError(f"Expected one or two arguments for loadsgf but got '{command.arg_text}'")
    move_number = None
    if len(args) == 2:
        move_number = parse_int(args[1])
        if move_number is None or not 1 <= move_number <= 10_000_001:
            raise GtpError("Invalid value for moveNumber for loadsgf")
    try:
        load_sgf_game(engine, load_sgf(args[0]), move_number, args[0])
    except (SgfError, SessionError, RulesError) as exc:
        raise GtpError(f"Could not load sgf: {exc}") from None
    return ""


def load_sgf_game(engine, game, move_number: int | None, source: str | None) -> None:
    """loadsgf's work on a read record (``source``: its file name for errors): the position before
    ``move_number`` (None: the whole game) under the record's rules, as the network takes them, with what
    KataGo logs about them. Raises SgfError, SessionError or RulesError, the game unchanged."""
    position = game.position_at(move_number)
    rules, warning = game.rules_or_default(engine.rules)
    if warning:
        engine.log.info(warning)
    if engine.options.model_path is not None:
        supported = network_supported_rules(rules)
        if supported != rules:
            engine.log.warn(f"Rules {rules.to_json_string()} from sgf not supported by neural net, using "
                            f"{supported.to_json_string()} instead")
            rules = supported
    if engine.settings.forced_komi is not None:
        rules = rules.with_komi(engine.settings.forced_komi)
    session = engine.make_session(position.x_size, position.y_size, rules)
    session.set_sgf_position(position, source=source)
    if not rules.equals_ignoring_komi(engine.rules.with_komi(rules.komi)):
        engine.log.info(f"Changing rules to {rules.to_json_string()}")
    if rules.komi != engine.rules.komi:
        engine.log.info(f"Changing komi to {format_komi(rules.komi)}")
    engine.save_avoid_patterns()
    if (position.x_size, position.y_size) != (engine.session.x_size, engine.session.y_size):
        engine.bot.on_new_board(position.x_size, position.y_size)
    engine.session = session
    engine.new_game_position()


def cmd_printsgf(engine, command: Command) -> str:
    if len(command.args) > 1:
        raise GtpError(f"Expected zero or one argument for print but got '{command.arg_text}'")
    text = current_game_sgf(engine)
    if not command.args or command.args[0] == "-":
        return text
    path = command.args[0]
    try:
        if os.path.exists(path) and stat.S_ISFIFO(os.stat(path).st_mode):  # opening one blocks until read
            raise OSError(f"{path} is a pipe")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    except (OSError, ValueError):  # ValueError: a NUL byte in the path
        raise GtpError(f"Could not open or write to file: {path}") from None
    return ""


def current_game_sgf(engine) -> str:
    state = engine.session.state
    game = engine.session.sgf_record()
    if state.is_game_finished:
        game.result = _game_result_text(engine, state)
        if game.moves:
            comments = list(game.move_comments) + [""] * (len(game.moves) - len(game.move_comments))
            game.move_comments = with_result_comment(comments, game.result)
    return write_sgf(game, nice_rules_name=True)


def _game_result_text(engine, state) -> str:
    from katacli.gtp.scoring import final_winner_and_score

    if state.is_no_result:
        return "Void"
    if state.is_resignation:
        return "B+R" if state.winner == BLACK else "W+R"
    _, white_minus_black = final_winner_and_score(engine)
    if white_minus_black < 0:
        return f"B+{-white_minus_black:g}"
    if white_minus_black > 0:
        return f"W+{white_minus_black:g}"
    return "0"

