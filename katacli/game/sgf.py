"""SGF games in and out, following what KataGo's sgf.cpp reads and writes.

Parsing goes through sgfmill's raw layer (``sgf_grammar``): its typed
``Sgf_game`` refuses rectangular boards (``SZ[9:13]``), which KataGo supports.

Reading, as KataGo's ``loadsgf``:
  * SZ absent means 19; ``SZ[X:Y]`` is rectangular; sizes must be 2..max_board_len.
  * RU is parsed by :meth:`Rules.parse` (preset names, JSON, KataGo's compact
    ``koSIMPLEscoreAREA...`` string); KM overrides the komi the rules imply.
    A bad RU or KM is not fatal: it is recorded in ``warnings`` and the field
    is left None, and :meth:`SgfGame.rules_or_default` falls back as KataGo does.
  * AB/AW/AE (with ``aa:cc`` rectangles) only in the root node.
  * The main line is the longest variation (the first one on ties).
  * ``B[]`` is a pass, and so is ``B[tt]`` on boards of size <= 19.
Points are (x, y) with y from the top, like everywhere in katacli.
"""
from __future__ import annotations

import codecs
import os
import re
import stat
from dataclasses import dataclass, field

from sgfmill import sgf_grammar

from katacli.game.coords import BLACK, WHITE, Point, opponent
from katacli.game.handicap import MAX_FIXED_HANDICAP, MIN_FIXED_HANDICAP, fixed_handicap_points
from katacli.game.rules import Rules, RulesError, format_komi, komi_is_int_or_half_int, parse_c_float
from katacli._core.constants import EMPTY, MAX_BOARD_LEN  # noqa: F401  (the core's numbers, defined once)


DEFAULT_BOARD_SIZE = 19
# SGF point letters: a..z are 0..25, A..Z are 26..51, so 52 is the widest writable board.
SGF_POINT_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
# "tt" is the FF[3] pass, only meaningful where (19,19) is not a real point.
LEGACY_PASS = "tt"
LEGACY_PASS_MAX_SIZE = 19
# loadsgf refuses move numbers above this.
MAX_LOADSGF_MOVE_NUMBER = 10_000_000
# loadsgf reads at most this much: far more than any game record, and a path such as /dev/zero
# (or a huge file named by mistake) cannot exhaust the memory.
MAX_SGF_FILE_BYTES = 64 << 20

# Fox (foxwq) and SGFC 2.0 files store komi scaled up; KataGo maps these back.
_FOX_KOMI_FIXES = {550: 5.5, 275: 5.5, 325: 6.5, 650: 6.5, 375: 7.5, 750: 7.5, 350: 7.0, 700: 7.0,
                   0: 0.0, 6.5: 6.5, 7.5: 7.5, 7: 7.0}
_FOX_APPLICATIONS = ("foxwq", "SGFC:2.0")
# Fox game records hold HA without the handicap stones on 19x19; before this date their 6 and 7 stone
# handicaps had the side stones north and south.
FOX_BOARD_LEN = 19
FOX_NEW_HANDICAP_DATE = "2018-01-01"
# GoGoD Chinese games give komi per side (quarter points); KataGo doubles these.
_GOGOD_CHINESE_RULES = ("chinese", "chinese, pair go")

_SETUP_PROPERTIES = (("AB", BLACK), ("AW", WHITE), ("AE", EMPTY))
_WHITESPACE = " \t\r\n\v\f"

Move = tuple[int, "Point | None"]


class SgfError(ValueError):
    """An SGF file that cannot be read (or a game that cannot be written)."""


@dataclass(frozen=True)
class SgfPosition:
    """A position to set up: initial stones, then moves to replay."""

    x_size: int
    y_size: int
    setup: tuple[tuple[int, Point], ...]
    initial_player: int
    moves: tuple[Move, ...]
    next_player: int


@dataclass
class SgfGame:
    """One game record. Build one directly to write it, or get one from :func:`read_sgf`."""

    x_size: int = DEFAULT_BOARD_SIZE
    y_size: int = DEFAULT_BOARD_SIZE
    komi: float | None = None  # KM; None when absent (or unreadable, see warnings)
    rules: Rules | None = None  # RU with KM's komi; None when absent (or unreadable)
    handicap: int = 0
    setup: list[tuple[int, Point]] = field(default_factory=list)  # (BLACK | WHITE | EMPTY, (x, y))
    first_player: int = BLACK
    moves: list[Move] = field(default_factory=list)  # (colour, (x, y) or None for pass)
    result: str | None = None  # RE, e.g. "B+R", "W+3.5", "0", "Void"
    black_name: str = ""
    white_name: str = ""
    root_properties: dict[str, list[str]] = field(default_factory=dict)  # decoded, unescaped
    # Written as C[] (not read back): a comment on the root node, and one per move ("" for none).
    root_comment: str = ""
    move_comments: list[str] = field(default_factory=list)
    # Written as TR[] after move i (not read back): KataGo marks a pass-for-ko's point this way.
    move_triangles: dict[int, Point] = field(default_factory=dict)
    # Written as a last node with only C[] (not read back): KataGo's match SGFs leave a resigning player's
    # move out but keep its search's comment so.
    final_comment: str = ""
    warnings: list[str] = field(default_factory=list)
    file_name: str | None = None

    def position_at(self, move_number: int | None = None) -> SgfPosition:
        """`loadsgf FILE [moveNumber]`: the position before move `move_number` (1-based); all moves if None
        or past the end."""
        played = len(self.moves)
        if move_number is not None:
            if move_number < 1 or move_number - 1 > MAX_LOADSGF_MOVE_NUMBER:
                raise SgfError("Invalid value for moveNumber for loadsgf")
            played = min(move_number - 1, played)
        moves = tuple(self.moves[:played])
        next_player = opponent(moves[-1][0]) if moves else self.first_player
        return SgfPosition(self.x_size, self.y_size, tuple(self.setup), self.first_player, moves, next_player)

    def rules_or_default(self, default: Rules) -> tuple[Rules, str | None]:
        """KataGo's getRulesOrWarn: the SGF's rules, else `default` (with the SGF komi when readable),
        plus the warning KataGo would log (None when the SGF had usable rules)."""
        has_ru = "RU" in self.root_properties
        has_km = "KM" in self.root_properties
        if has_ru and self.rules is not None:
            if has_km and self.komi is None:
                return self.rules, f"There was an error parsing komi, using default komi with rules: {self.rules}"
            return self.rules, None
        rules = default.with_komi(self.komi) if self.komi is not None else default
        if has_ru:
            ru_text = " ".join(self.root_properties["RU"])
            return rules, (
                f"WARNING: using default rules {rules} because could not parse sgf rules: "
                f"Could not parse rules in sgf: {ru_text}"
            )
        if not has_km:
            return rules, f"Sgf has no rules or komi, using default rules: {rules}"
        if self.komi is None:
            return rules, f"Sgf has no rules, also there was an error parsing komi, using default rules: {rules}"
        return rules, f"Sgf has no rules, using default rules with SGF-specified komi: {rules}"

    def winner(self) -> int | None:
        """BLACK or WHITE from RE (KataGo: prefix b+/black+/w+/white+), else None."""
        text = (self.result or "").lower()
        if text.startswith(("b+", "black+")):
            return BLACK
        if text.startswith(("w+", "white+")):
            return WHITE
        return None

    def to_sgf(self, nice_rules_name: bool = False) -> str:
        return write_sgf(self, nice_rules_name)


# ---- reading ------------------------------------------------------------------

def game_result_tag(state) -> str:
    """SGF RE of a finished game (KataGo's WriteSgf::gameResultNoSgfTag): "B+3.5", "W+R", "0" for a
    draw, "Void" for no result; "" while the game goes on."""
    if not state.is_game_finished:
        return ""
    if state.is_no_result:
        return "Void"
    if state.is_resignation and state.winner in (BLACK, WHITE):
        return ("B" if state.winner == BLACK else "W") + "+R"
    if state.winner not in (BLACK, WHITE):
        return "0"
    return ("B" if state.winner == BLACK else "W") + "+" + format_komi(abs(state.final_white_minus_black_score))


def values_comment(win: float, loss: float, no_result: float, score: float, visits: int) -> str:
    """KataGo's writeSgf comment on a searched move: White's win, loss and no-result probabilities, the score,
    the visits ("0.54 0.46 0.00 1.0 v=8")."""
    return f"{win:.2f} {loss:.2f} {no_result:.2f} {score:.1f} v={visits}"


def with_result_comment(comments: list[str], result: str) -> list[str]:
    """Move comments with the game's result added to the last one, as KataGo's writeSgf writes a finished
    game ("... result=W+7.5"); ``comments`` has one entry per move (at least one)."""
    last = " ".join(c for c in (comments[-1], f"result={result}") if c)
    return comments[:-1] + [last]


def passes_for_ko(state, moves, play) -> dict[int, Point]:
    """Move index -> point, for the moves that were a "pass for ko" in the encore (territory scoring's
    cleanup phases), found by replaying ``moves`` on ``state`` (a GameState at the game's start, changed)
    with ``play(state, player, move)``."""
    found = {}
    for i, (player, move) in enumerate(moves):
        if move is not None and state.is_pass_for_ko(move, player):
            found[i] = move
        play(state, player, move)
    return found


def with_passes_for_ko(game: SgfGame, ko_passes: dict[int, Point]) -> SgfGame:
    """The record with each "pass for ko" of the encore (move index -> the ko point) written as KataGo writes
    it: a pass, its point marked TR, "Pass for ko". Written as a move there, it would replay as a capture."""
    if not ko_passes:
        return game
    moves = list(game.moves)
    comments = list(game.move_comments) + [""] * (len(moves) - len(game.move_comments))
    for i in ko_passes:
        moves[i] = (moves[i][0], None)
        comments[i] = "Pass for ko" + (" " + comments[i] if comments[i] else "")
    game.moves, game.move_comments = moves, comments
    game.move_triangles = {**game.move_triangles, **ko_passes}
    return game


def final_setup(setup) -> list[tuple[int, Point]]:
    """AB/AW/AE entries applied in order: the stones that remain, as (colour, (x, y))."""
    points: dict = {}
    for color, xy in setup:
        if color in (BLACK, WHITE):
            points[xy] = color
        else:
            points.pop(xy, None)
    return [(color, xy) for xy, color in points.items()]


def invalid_sgf_line(path, exc: SgfError) -> str:
    """KataGo's log line for a file a folder scan skips: "Invalid SGF <path>: <why>" (the path said once: most
    SgfErrors begin with it)."""
    return f"Invalid SGF {path}: {str(exc).removeprefix(f'{path}: ')}"


def load_sgf(path: str, max_board_len: int = MAX_BOARD_LEN) -> SgfGame:
    return read_sgf(read_file_bytes(path), file_name=path, max_board_len=max_board_len)


def read_file_bytes(path: str) -> bytes:
    """A game record file's bytes; SgfError naming the file when it cannot be read or is far too large."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device could block or never end
            raise SgfError(f"{path}: not a regular file")
        with open(path, "rb") as f:
            data = f.read(MAX_SGF_FILE_BYTES + 1)
    except SgfError:
        raise
    except FileNotFoundError:
        raise SgfError(f"Could not open file {path} - does not exist or invalid permissions?") from None   # KataGo's
    except (OSError, ValueError) as e:  # ValueError: a path with a NUL byte
        raise SgfError(f"{path}: cannot read file: {getattr(e, 'strerror', None) or e}") from None
    if len(data) > MAX_SGF_FILE_BYTES:
        raise SgfError(f"{path}: larger than {MAX_SGF_FILE_BYTES >> 20} MB, not a game record")
    return data


def read_sgf(data: str | bytes, file_name: str | None = None, max_board_len: int = MAX_BOARD_LEN) -> SgfGame:
    """Parse the first game in `data`. Raises SgfError naming the file and the problem."""
    where = file_name or "<sgf>"
    raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
    try:
        tree = sgf_grammar.parse_sgf_game(raw)
    except ValueError as e:
        raise SgfError(f"{where}: malformed SGF: {e}") from None
    try:
        return _build_game(tree, file_name, max_board_len)
    except SgfError as e:
        raise SgfError(f"{where}: {e}") from None


def _build_game(tree, file_name: str | None, max_board_len: int) -> SgfGame:
    root_raw = tree.sequence[0]
    encoding = _encoding_of(root_raw)
    root = {key: [_decode(v, encoding) for v in values] for key, values in root_raw.items() if key}
    game = SgfGame(root_properties=root, file_name=file_name)
    game.x_size, game.y_size = _board_size(root, max_board_len)
    game.setup = _setup_stones(root, game.x_size, game.y_size) or _fox_handicap_stones(tree, root)
    game.moves = _main_line_moves(tree, encoding, game.x_size, game.y_size)
    game.first_player = _first_player(root, game.setup, game.moves)
    game.result = root["RE"][0] if "RE" in root else None
    game.black_name = root.get("PB", [""])[0]
    game.white_name = root.get("PW", [""])[0]
    _read_rules_and_komi(game, root)
    if "HA" in root:
        handicap = _parse_int(_single(root, "HA"))
        if handicap is None:
            game.warnings.append(f"Could not parse handicap value in sgf: {root['HA']}")
        else:
            game.handicap = handicap
    return game


def _fox_handicap_stones(tree, root: dict[str, list[str]]) -> list[tuple[int, Point]]:
    """The handicap stones of a Fox (foxwq) game record, which has HA but not the stones (White moves first):
    KataGo's fixed placement, the side stones of 6 and 7 north and south in games before 2018, as KataGo
    reads such files. Empty for any other file."""
    applications = " ".join(root.get("AP", []))
    is_fox = "foxwq" in applications or ("GNU Go:3.8" in applications and root.get("GN", ["-"])[0] == "")
    if (not is_fox or len(tree.sequence) < 2 or root.get("SZ") != ["19"] or "B" in root or "W" in root
            or "W" not in tree.sequence[1] or "B" in tree.sequence[1]):
        return []
    handicap = _parse_int(root["HA"][0]) if len(root.get("HA", [])) == 1 else None
    if handicap is None or not MIN_FIXED_HANDICAP <= handicap <= MAX_FIXED_HANDICAP:
        return []
    points = fixed_handicap_points(FOX_BOARD_LEN, FOX_BOARD_LEN, handicap)
    date = root.get("DT", [""])[0]
    if handicap in (6, 7) and re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", date) and date < FOX_NEW_HANDICAP_DATE:
        points = [(y, x) for x, y in points]   # transposed: the side stones north and south
    return [(BLACK, xy) for xy in sorted(points, key=lambda xy: (xy[1], xy[0]))]


def _encoding_of(root_raw: dict) -> str:
    """The CA text encoding, if it is one that keeps ASCII as ASCII (the file's coordinates and numbers are
    ASCII whatever it says: KataGo reads them as bytes); else UTF-8 (CA[UTF-16], CA[base64], a typo)."""
    for value in root_raw.get("CA", []):
        try:
            name = codecs.lookup(sgf_grammar.simpletext_value(value).decode("ascii").strip()).name
            if _ASCII_PROBE.decode(name, errors="replace") == _ASCII_PROBE.decode("ascii"):   # as _decode decodes
                return name
        except (LookupError, UnicodeError, ValueError):   # unknown, not a text encoding (base64), no "replace" (idna)
            pass
    return "utf-8"


_ASCII_PROBE = bytes(range(0x20, 0x7F)) + b"\t\r\n"


def _decode(raw_value: bytes, encoding: str) -> str:
    return sgf_grammar.text_value(raw_value).decode(encoding, errors="replace")


def _single(props: dict[str, list[str]], key: str) -> str:
    values = props[key]
    if len(values) != 1:
        raise SgfError(f"SGF property is not a singleton: {key}")
    return values[0]


def _parse_int(text: str) -> int | None:
    stripped = text.strip(_WHITESPACE)
    sign, digits = (stripped[0], stripped[1:]) if stripped[:1] in ("+", "-") else ("", stripped)
    return int(sign + digits) if digits.isascii() and digits.isdigit() else None


def _board_size(root: dict[str, list[str]], max_board_len: int) -> tuple[int, int]:
    if "SZ" not in root:
        return DEFAULT_BOARD_SIZE, DEFAULT_BOARD_SIZE
    text = _single(root, "SZ")
    pieces = text.split(":") if ":" in text else [text, text]
    sizes = [_parse_int(p) for p in pieces]
    if len(sizes) != 2 or None in sizes:
        raise SgfError(f"Could not parse board size in sgf: {text}")
    x_size, y_size = sizes
    if x_size <= 1 or y_size <= 1:
        raise SgfError(f"Board size in sgf is <= 1: {text}")
    if x_size > max_board_len or y_size > max_board_len:
        raise SgfError(f"Board size in sgf is > {max_board_len}, the largest supported: {text}")
    return x_size, y_size


def _point_index(letter: str) -> int:
    return SGF_POINT_LETTERS.find(letter) if len(letter) == 1 else -1


def _parse_point(text: str, x_size: int, y_size: int) -> Point:
    x, y = (_point_index(text[0]), _point_index(text[1])) if len(text) == 2 else (-1, -1)
    if not (0 <= x < x_size and 0 <= y < y_size):
        raise SgfError(f"Invalid location: {text}")
    return (x, y)


def _parse_move_point(text: str, x_size: int, y_size: int) -> Point | None:
    if text == "" or (text == LEGACY_PASS and min(x_size, y_size) <= LEGACY_PASS_MAX_SIZE):
        return None
    if len(text) != 2 or _point_index(text[0]) < 0 or _point_index(text[1]) < 0:
        raise SgfError(f"Invalid location: {text}")
    x, y = _point_index(text[0]), _point_index(text[1])
    if x >= x_size or y >= y_size:
        raise SgfError(f"Move out of bounds: {x},{y}")
    return (x, y)


def _setup_stones(props: dict[str, list[str]], x_size: int, y_size: int) -> list[tuple[int, Point]]:
    stones = []
    for key, color in _SETUP_PROPERTIES:
        for text in props.get(key, []):
            corners = text.split(":")
            if len(corners) > 2 or (len(corners) == 2 and len(text) != 5):
                raise SgfError(f"Invalid location rect: {text}")
            (x1, y1), (x2, y2) = (_parse_point(c, x_size, y_size) for c in (corners[0], corners[-1]))
            if x1 > x2 or y1 > y2:
                raise SgfError(f"Invalid location or location rect: {text}")
            stones.extend((color, (x, y)) for x in range(x1, x2 + 1) for y in range(y1, y2 + 1))
    return stones


def _main_line_sequences(tree) -> list[list[dict]]:
    """The node sequences of the longest variation (the first one among equally long ones), root first."""
    depths: dict[int, int] = {}

    def depth(subtree) -> int:
        if id(subtree) not in depths:
            depths[id(subtree)] = len(subtree.sequence) + max((depth(c) for c in subtree.children), default=0)
        return depths[id(subtree)]

    # Fill depths bottom-up without deep recursion (long games nest one tree per variation point).
    stack, order = [tree], []
    while stack:
        subtree = stack.pop()
        order.append(subtree)
        stack.extend(subtree.children)
    for subtree in reversed(order):
        depth(subtree)

    sequences = []
    while True:
        sequences.append(tree.sequence)
        if not tree.children:
            return sequences
        tree = max(tree.children, key=depth)  # max() keeps the first of equal depths


def _main_line_moves(tree, encoding: str, x_size: int, y_size: int) -> list[Move]:
    """The main line's moves. As KataGo reads them, stone placements are refused in a sequence's later
    nodes, and left unread in the first node of a variation (only the root's set the board up)."""
    moves: list[Move] = []
    for sequence in _main_line_sequences(tree):
        for index, node in enumerate(sequence):
            if index > 0 and any(key in node for key, _ in _SETUP_PROPERTIES):
                raise SgfError(
                    "Found stone placements after the root, game records that are not simply ordinary play "
                    "not currently supported"
                )
            for key, color in (("B", BLACK), ("W", WHITE)):  # KataGo takes a node's B before its W
                for raw_value in node.get(key, []):
                    moves.append((color, _parse_move_point(_decode(raw_value, encoding), x_size, y_size)))
    return moves


def _first_player(root: dict[str, list[str]], setup, moves) -> int:
    """Who moves first: the first move's colour, else PL, else White after black-only setup stones."""
    if moves:
        return moves[0][0]
    if "PL" in root and len(root["PL"]) == 1:
        player = root["PL"][0].lower()
        if player in ("b", "black"):
            return BLACK
        if player in ("w", "white"):
            return WHITE
    if setup and all(color == BLACK for color, _ in setup):
        return WHITE
    return BLACK


def _read_komi(root: dict[str, list[str]]) -> float:
    text = _single(root, "KM")
    komi = parse_c_float(text)
    if komi is None:
        raise SgfError("Could not parse komi in sgf")
    if not komi_is_int_or_half_int(komi):
        ru = root.get("RU", [""])[0].lower()
        is_gogod_chinese = root.get("US", [""])[0].startswith("GoGoD") and ru in _GOGOD_CHINESE_RULES
        if is_gogod_chinese and komi_is_int_or_half_int(komi * 2):
            komi *= 2
        else:
            raise SgfError("Komi in sgf is not integer or half-integer")
    if any(app in _FOX_APPLICATIONS for app in root.get("AP", [])):
        if komi not in _FOX_KOMI_FIXES:
            raise SgfError(f"Currently no case implemented for foxwq or SGFC komi: {format_komi(komi)}")
        komi = _FOX_KOMI_FIXES[komi]
    return komi


def _read_rules_and_komi(game: SgfGame, root: dict[str, list[str]]) -> None:
    if "KM" in root:
        try:
            game.komi = _read_komi(root)
            Rules(komi=game.komi)  # also within KataGo's user komi range
        except (SgfError, RulesError) as e:
            game.komi = None
            game.warnings.append(f"Bad komi {root['KM']}: {e}")
    if "RU" in root:
        try:
            rules = Rules.parse(_single(root, "RU"))
            game.rules = rules.with_komi(game.komi) if game.komi is not None else rules
        except (SgfError, RulesError) as e:
            game.warnings.append(f"Could not parse rules in sgf: {root['RU']}: {e}")


# ---- writing ------------------------------------------------------------------

def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("]", "\\]")


def _format_point(xy: Point | None, x_size: int, y_size: int) -> str:
    if xy is None:
        return ""  # pass, written as B[] like KataGo
    x, y = xy
    if not (0 <= x < x_size and 0 <= y < y_size):
        raise SgfError(f"Point {xy} is off the {x_size}x{y_size} board")
    return SGF_POINT_LETTERS[x] + SGF_POINT_LETTERS[y]


def write_sgf(game: SgfGame, nice_rules_name: bool = False) -> str:
    """The game as an SGF string in KataGo's layout (root properties, then one node per move).

    KM is `game.komi`, else the rules' komi; RU is KataGo's compact rules string
    (or its preset name with nice_rules_name). PL is written only for a game
    without moves whose first player a reader could not infer from the setup
    stones; with moves, the first move's colour is the first player.
    """
    x_size, y_size = game.x_size, game.y_size
    if max(x_size, y_size) > len(SGF_POINT_LETTERS):
        raise SgfError(f"Writing SGF coordinates for boards larger than {len(SGF_POINT_LETTERS)} is not possible")
    out = ["(;FF[4]GM[1]"]
    out.append(f"SZ[{x_size}]" if x_size == y_size else f"SZ[{x_size}:{y_size}]")
    if not (game.black_name + game.white_name).isascii():
        out.append("CA[UTF-8]")
    out.append(f"PB[{_escape(game.black_name)}]PW[{_escape(game.white_name)}]")
    out.append(f"HA[{game.handicap}]")
    komi = game.komi if game.komi is not None else (game.rules.komi if game.rules is not None else None)
    if komi is not None:
        out.append(f"KM[{format_komi(komi)}]")
    if game.rules is not None:
        out.append(f"RU[{game.rules.nice_name() if nice_rules_name else game.rules.to_string_no_komi()}]")
    if game.result:
        out.append(f"RE[{_escape(game.result)}]")
    # With moves, readers take the first mover from them, so PL only matters for a bare position.
    if not game.moves and _first_player({}, game.setup, game.moves) != game.first_player:
        out.append(f"PL[{'B' if game.first_player == BLACK else 'W'}]")
    for key, color in _SETUP_PROPERTIES:
        points = [_format_point(xy, x_size, y_size) for c, xy in game.setup if c == color]
        if points:
            out.append(key + "".join(f"[{p}]" for p in points))
    if game.root_comment:
        out.append(f"C[{_escape(game.root_comment)}]")
    for i, (color, xy) in enumerate(game.moves):
        if color not in (BLACK, WHITE):
            raise SgfError(f"Not a player colour in move list: {color!r}")
        out.append(f";{'B' if color == BLACK else 'W'}[{_format_point(xy, x_size, y_size)}]")
        if i in game.move_triangles:
            out.append(f"TR[{_format_point(game.move_triangles[i], x_size, y_size)}]")
        comment = game.move_comments[i] if i < len(game.move_comments) else ""
        if comment:
            out.append(f"C[{_escape(comment)}]")
    if game.final_comment:
        out.append(f";C[{_escape(game.final_comment)}]")
    out.append(")")
    return "".join(out)
