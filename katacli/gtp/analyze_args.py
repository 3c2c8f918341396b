"""Arguments of the analysis commands (lz-/kata-analyze, analyze, *genmove_analyze, kata-search_analyze*)
and of kata-raw-nn, parsed with KataGo's rules.

Analysis: ``[player] [interval] key value ...`` where the keys are interval,
minmoves, maxmoves, ``avoid|allow PLAYER V1,V2,... UNTILDEPTH`` and, for the
kata-* and Sabaki forms, the boolean display switches (rootInfo, ownership,
...). The interval is in centiseconds.
"""
from __future__ import annotations

from katacli.game.coords import CoordError, parse_color, parse_vertex
from katacli.gtp.analyze_info_lines import AnalyzeOptions
from katacli.gtp.arguments import MAX_USER_INPUT_TIME, parse_bool, parse_double, parse_int
from katacli.gtp.errors import GtpError
from katacli._core.constants import NUM_SYMMETRIES  # noqa: F401  (the core's numbers, defined once)

LZ_COMMANDS = ("lz-analyze", "lz-genmove_analyze")
KATA_COMMANDS = ("kata-analyze", "kata-genmove_analyze", "kata-search_analyze", "kata-search_analyze_cancellable")
CENTISECONDS = 0.01
MAX_MOVES_LIMIT = 1_000_000_000
DEFAULT_INTERVAL_CENTISECONDS = 1e30
ALL_SYMMETRIES = "all"

# kata-* boolean display switches -> AnalyzeOptions field.
_KATA_SWITCHES = {
    "rootInfo": "root_info",
    "ownership": "ownership",
    "ownershipStdev": "ownership_stdev",
    "movesOwnership": "moves_ownership",
    "movesOwnershipStdev": "moves_ownership_stdev",
    "pvVisits": "pv_visits",
    "pvEdgeVisits": "pv_edge_visits",
    "noResultValue": "no_result_value",
}


class AnalyzeArgsError(ValueError):
    """Arguments that do not parse; the command handler words the GTP error."""


def _try_player(text: str) -> int | None:
    try:
        return parse_color(text)
    except CoordError:
        return None


def _parse_interval(text: str) -> float | None:
    value = parse_double(text)
    if value is None or not 0 <= value < MAX_USER_INPUT_TIME:
        return None
    return value


def parse_analyze_args(command: str, args: list[str], default_player: int, x_size: int, y_size: int
                       ) -> tuple[int, AnalyzeOptions]:
    """(player to analyze for, options); raises AnalyzeArgsError."""
    is_lz = command in LZ_COMMANDS
    is_kata = command in KATA_COMMANDS
    player = default_player
    interval = DEFAULT_INTERVAL_CENTISECONDS
    values: dict = {"min_moves": 0, "max_moves": 10_000_000}
    avoid: dict[int, dict] = {}
    got_avoid: set[int] = set()
    got_allow: set[int] = set()

    i = 0
    if i < len(args) and (parsed := _try_player(args[i])) is not None:
        player = parsed
        i += 1
    if i < len(args) and (parsed_interval := _parse_interval(args[i])) is not None:
        interval = parsed_interval
        i += 1

    while i < len(args):
        key = args[i]
        if i + 1 >= len(args):
            raise AnalyzeArgsError(f"missing value for {key}")
        value = args[i + 1]
        i += 2
        if key == "interval" and (parsed_interval := _parse_interval(value)) is not None:
            interval = parsed_interval
        elif key in ("avoid", "allow"):
            if i + 2 > len(args):
                raise AnalyzeArgsError(f"{key} needs a player, moves and a depth")
            moves_text, depth_text = args[i], args[i + 1]
            i += 2
            depth = parse_int(depth_text)
            avoid_player = _try_player(value)
            if depth is None or depth < 1 or avoid_player is None:
                raise AnalyzeArgsError(f"bad {key} specification")
            points = []
            for piece in moves_text.split(","):
                piece = piece.strip()
                if not piece:
                    continue
                try:
                    points.append(parse_vertex(piece, x_size, y_size))
                except CoordError:
                    raise AnalyzeArgsError(f"bad vertex {piece}") from None
            # One command may not mix avoid and allow for a player, nor give allow twice.
            if key == "allow" and (avoid_player in got_avoid or avoid_player in got_allow):
                raise AnalyzeArgsError("allow given twice or together with avoid")
            if key == "avoid" and avoid_player in got_allow:
                raise AnalyzeArgsError("avoid given together with allow")
            table = avoid.setdefault(avoid_player, {})
            if key == "allow":
                for y in range(y_size):
                    for x in range(x_size):
                        table[(x, y)] = depth
                table[None] = depth
                for point in points:
                    table[point] = 0
                got_allow.add(avoid_player)
            else:
                for point in points:
                    table[point] = depth
                got_avoid.add(avoid_player)
        elif key in ("minmoves", "maxmoves") and (count := parse_int(value)) is not None \
                and 0 <= count < MAX_MOVES_LIMIT:
            values["min_moves" if key == "minmoves" else "max_moves"] = count
        elif is_kata and key in _KATA_SWITCHES and (flag := parse_bool(value)) is not None:
            values[_KATA_SWITCHES[key]] = flag
        else:
            raise AnalyzeArgsError(f"unknown or bad key {key}")

    # Only positive depths matter; a table of zeros avoids nothing.
    avoid = {pla: {p: d for p, d in table.items() if d > 0} for pla, table in avoid.items()}
    options = AnalyzeOptions(lz=is_lz, kata=is_kata, interval_seconds=interval * CENTISECONDS, avoid=avoid,
                             **values)
    return player, options


def parse_raw_nn_args(args: list[str], default_player: int, default_optimism: float, allow_optimism: bool
                      ) -> tuple[int, list[int], float]:
    """``[COLOR] SYMMETRY [OPTIMISM]`` -> (player, symmetries, optimism); GtpError with KataGo's messages."""
    i = 0
    player = default_player
    if i < len(args) and (parsed := _try_player(args[i].strip().lower())) is not None:
        player = parsed
        i += 1
    if i >= len(args):
        raise GtpError("Expected a symmetry argument 'all' or index [0-7]")
    text = args[i].strip().lower()
    symmetry = parse_int(text)
    if text == ALL_SYMMETRIES:
        symmetries = list(range(NUM_SYMMETRIES))
    elif symmetry is not None and 0 <= symmetry < NUM_SYMMETRIES:
        symmetries = [symmetry]
    else:
        raise GtpError(f"Expected a symmetry argument 'all' or index [0-7] but got '{args[i]}'")
    i += 1
    optimism = default_optimism
    if allow_optimism and i < len(args):
        value = parse_double(args[i])
        if value is None or not 0.0 <= value <= 1.0:
            raise GtpError(f"Expected an optimism value in [0,1] but got '{args[i]}'")
        optimism = value
        i += 1
    if i < len(args):
        raise GtpError(f"Unexpected extra argument '{args[i]}'")
    return player, symmetries, optimism
