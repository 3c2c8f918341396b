"""The pieces of benchmarks/compare_katago_search.py that need no engine: the position list, GTP set-up
commands, reading ``debug_moves`` trees and comparing two searches.

Position list (JSON), one object per position::

    {"positions": [
      {"name": "9x9-after-pass", "size": 9, "rules": "japanese", "komi": 6.5,
       "handicap": [], "moves": ["B E5", "W C4", "B pass"], "to_move": "W"}
    ]}

* ``size``: an int for a square board, or ``"WxH"`` (columns x rows, e.g. ``"7x9"``) for a rectangle.
* ``rules``: any name ``kata-set-rules`` takes (tromp-taylor, chinese, japanese, korean, aga, ...).
* ``komi``: a number; ``handicap``: vertices of Black's handicap stones (``set_free_handicap``), optional.
* ``moves``: ``"B D4"`` / ``"W pass"`` strings, played in order after the handicap stones.
* ``to_move``: optional ``"B"``/``"W"``; by default the colour that did not play last (White after handicap
  stones alone, Black on an empty board).

A search is compared on the chosen move and on every root child's visit count; the first differing node of
the two trees is found by walking ``debug_moves`` outputs (see ``find_divergence``).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

COLOURS = ("B", "W")
# A visit count this far apart still counts as the same search (issue 28: "within 2").
VISIT_TOLERANCE = 2
# Children whose utilities differ by at most this (in printTree's centi-units, printed with two decimals)
# count as evaluated alike: the two engines' network arithmetic differs in the last float bits.
UTILITY_TOLERANCE_CENTI = 0.02
# How many differing children per level are opened when looking for a deeper divergence.
CHILDREN_PROBED = 3
MAX_WALK_DEPTH = 30

_STATS = re.compile(
    r"^(?P<prefix>.*?):\s+T\s+(?P<t>-?[\d.]+)c\s+W\s+(?P<w>-?[\d.]+)c\s+S\s+(?P<s>-?[\d.]+)c"
    r".*?(?:P\s+(?P<p>[\d.]+)%\s+)?(?:WF.*?)?N\s+(?P<n>\d+)\s+--\s*(?P<pv>.*)$")
_HEADER = re.compile(r"^---(Black|White)\([\^v]\)---$")


class PositionError(ValueError):
    """A position list that cannot be used; the message names the position and the field."""


@dataclass(frozen=True)
class Position:
    name: str
    x_size: int
    y_size: int
    rules: str
    komi: float
    moves: tuple[tuple[str, str], ...]
    handicap: tuple[str, ...] = ()
    to_move: str = "B"

    def setup_commands(self) -> list[str]:
        """GTP commands that put an engine into this position (both engines take the same ones)."""
        size = (f"boardsize {self.x_size}" if self.x_size == self.y_size
                else f"rectangular_boardsize {self.x_size} {self.y_size}")
        commands = [size, "clear_board", f"kata-set-rules {self.rules}", f"komi {self.komi:g}"]
        if self.handicap:
            commands.append("set_free_handicap " + " ".join(self.handicap))
        commands += [f"play {colour} {vertex}" for colour, vertex in self.moves]
        return commands


def _size(entry: dict, where: str) -> tuple[int, int]:
    size = entry.get("size")
    if isinstance(size, int) and not isinstance(size, bool):
        return size, size
    if isinstance(size, str) and re.fullmatch(r"\d+x\d+", size):
        x, y = size.split("x")
        return int(x), int(y)
    raise PositionError(f"{where}: size must be an int or 'WxH', not {size!r}")


def parse_position(entry: dict, index: int) -> Position:
    where = f"position {index} ({entry.get('name', 'unnamed')})" if isinstance(entry, dict) else f"position {index}"
    if not isinstance(entry, dict):
        raise PositionError(f"{where}: expected an object")
    for key in ("name", "rules", "komi", "moves"):
        if key not in entry:
            raise PositionError(f"{where}: missing '{key}'")
    if not isinstance(entry["komi"], (int, float)) or isinstance(entry["komi"], bool):
        raise PositionError(f"{where}: komi must be a number")
    x_size, y_size = _size(entry, where)
    moves = []
    for move in entry["moves"]:
        parts = move.split() if isinstance(move, str) else []
        if len(parts) != 2 or parts[0].upper() not in COLOURS:
            raise PositionError(f"{where}: a move must read 'B D4' or 'W pass', not {move!r}")
        moves.append((parts[0].upper(), parts[1].upper()))
    handicap = tuple(str(v).upper() for v in entry.get("handicap", []))
    if "to_move" in entry:
        to_move = str(entry["to_move"]).upper()
        if to_move not in COLOURS:
            raise PositionError(f"{where}: to_move must be 'B' or 'W'")
    elif moves:
        to_move = "W" if moves[-1][0] == "B" else "B"
    else:
        to_move = "W" if handicap else "B"
    return Position(str(entry["name"]), x_size, y_size, str(entry["rules"]), float(entry["komi"]),
                    tuple(moves), handicap, to_move)


def load_positions(path: Path) -> list[Position]:
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise PositionError(f"cannot read the position list {path}: {exc}") from None
    entries = data.get("positions") if isinstance(data, dict) else None
    if not isinstance(entries, list) or not entries:
        raise PositionError(f"{path}: expected an object with a non-empty 'positions' list")
    return [parse_position(entry, i) for i, entry in enumerate(entries)]


# ---- what both comparison scripts (compare_katago_search.py, compare_katago_analysis_search.py) take
DEFAULT_POSITIONS = Path(__file__).resolve().parent / "search_parity_positions.json"


def add_comparison_arguments(parser: argparse.ArgumentParser, config_help: str) -> None:
    """The KataGo binary, the network and config both engines get, the positions and the visits."""
    parser.add_argument("--katago", required=True, help="path of a katago binary (KataGo 1.17.2)")
    parser.add_argument("--model", required=True, help="network file for both engines")
    parser.add_argument("--config", required=True, help=config_help)
    parser.add_argument("--positions", type=Path, default=DEFAULT_POSITIONS, help="position list (JSON)")
    parser.add_argument("--random", type=int, default=0, metavar="N",
                        help="compare N random positions (from --seed) instead of the list")
    parser.add_argument("--seed", type=int, default=1, help="seed of the --random positions")
    parser.add_argument("--visits", type=int, default=200, help="maxVisits of every search, both engines")


def comparison_positions(args: argparse.Namespace) -> list[Position]:
    """The positions add_comparison_arguments' arguments name; a missing file or a bad count or list
    ends the script with a one-line error."""
    for path, what in ((args.katago, "katago binary"), (args.model, "model"), (args.config, "config")):
        if not Path(path).is_file():
            sys.exit(f"error: the {what} {path} does not exist")
    if args.visits < 1:
        sys.exit("error: --visits must be at least 1")
    if args.random < 0:
        sys.exit("error: --random must be a count of positions")
    try:
        if args.random:
            from random_positions import random_parity_positions  # imports katacli: only when asked

            return [parse_position(entry, i) for i, entry in enumerate(random_parity_positions(args.random, args.seed))]
        return load_positions(args.positions)
    except PositionError as exc:
        sys.exit(f"error: {exc}")


@dataclass(frozen=True)
class NodeStats:
    """One printTree line: utility, win-loss and score utility (centi-units, for the player in the header's
    perspective), the prior (percent, None on the root line) and visits."""

    move: str
    utility: float
    winloss: float
    score: float
    prior: float | None
    visits: int
    pv: tuple[str, ...]


@dataclass
class TreeView:
    """``debug_moves [branch]``: the node at the end of the branch and its children by move."""

    node: NodeStats | None
    children: dict[str, NodeStats] = field(default_factory=dict)


def parse_debug_moves(text: str) -> TreeView:
    """Read a ``debug_moves`` answer (KataGo's printTree with depth 1, after the optional board diagram)."""
    node, children, in_children = None, {}, False
    for line in text.splitlines():
        line = line.strip()
        if _HEADER.match(line):
            in_children = True
            continue
        match = _STATS.match(line)
        if not match:
            continue
        prefix = match["prefix"].split()
        stats = NodeStats(prefix[-1].upper() if prefix else "", float(match["t"]), float(match["w"]),
                          float(match["s"]), float(match["p"]) if match["p"] else None, int(match["n"]),
                          tuple(match["pv"].split()))
        if in_children:
            children[stats.move] = stats
        else:
            node = stats  # the root line, then one per branch move: the last one is the node asked for
    return TreeView(node, children)


def visit_differences(a: dict[str, NodeStats], b: dict[str, NodeStats]) -> dict[str, tuple[int, int]]:
    """{move: (visits in a, visits in b)} for every child whose counts differ (a missing child has 0)."""
    out = {}
    for move in sorted(set(a) | set(b)):
        na = a[move].visits if move in a else 0
        nb = b[move].visits if move in b else 0
        if na != nb:
            out[move] = (na, nb)
    return out


def max_visit_difference(a: dict[str, NodeStats], b: dict[str, NodeStats]) -> int:
    return max((abs(na - nb) for na, nb in visit_differences(a, b).values()), default=0)


@dataclass
class Divergence:
    """The deepest node, along the most visited differing line, whose children's visit counts differ."""

    path: tuple[str, ...]
    a: TreeView
    b: TreeView


def _subtree_differs(a: NodeStats | None, b: NodeStats | None, view_a: TreeView, view_b: TreeView) -> bool:
    if visit_differences(view_a.children, view_b.children):
        return True
    return a is not None and b is not None and abs(a.utility - b.utility) > UTILITY_TOLERANCE_CENTI


def find_divergence(fetch_a, fetch_b, root_a: TreeView, root_b: TreeView) -> Divergence | None:
    """Walk both trees from the root to where the visit counts diverge deepest.

    ``fetch_a(path)`` / ``fetch_b(path)`` give the TreeView of a node (``debug_moves`` with that branch).
    At each differing node the most visited children present in both trees whose own children differ
    (visits, or utility beyond float noise) are opened, up to CHILDREN_PROBED of them; the walk goes into
    the first such child. It stops at a node none of whose children differ below it: there the two searches
    split although the children they share were evaluated alike (a selection difference), or a child
    exists in one tree only. None when the root's children match exactly.
    """
    if not visit_differences(root_a.children, root_b.children):
        return None
    path: tuple[str, ...] = ()
    view_a, view_b = root_a, root_b
    for _ in range(MAX_WALK_DEPTH):
        shared = [m for m in view_a.children if m in view_b.children]
        shared.sort(key=lambda m: -min(view_a.children[m].visits, view_b.children[m].visits))
        deeper = None
        for move in [m for m in shared if min(view_a.children[m].visits, view_b.children[m].visits) > 1][
                :CHILDREN_PROBED]:
            child_a, child_b = fetch_a(path + (move,)), fetch_b(path + (move,))
            if _subtree_differs(view_a.children[move], view_b.children[move], child_a, child_b) and \
                    visit_differences(child_a.children, child_b.children):
                deeper = (move, child_a, child_b)
                break
        if deeper is None:
            return Divergence(path, view_a, view_b)
        path += (deeper[0],)
        view_a, view_b = deeper[1], deeper[2]
    return Divergence(path, view_a, view_b)


def divergence_table(div: Divergence, names: tuple[str, str], rows: int = 8) -> list[str]:
    """Lines showing the children at a divergence side by side: visits, prior and utility of each engine."""
    a, b = div.a.children, div.b.children
    moves = sorted(set(a) | set(b), key=lambda m: -max(a[m].visits if m in a else 0, b[m].visits if m in b else 0))
    first, second = names
    lines = [f"    at {' '.join(div.path) or 'root'}: {'move':5s} {'N ' + first:>9s} {'N ' + second:>9s}"
             f" {'P ' + first:>9s} {'P ' + second:>9s} {'T ' + first:>10s} {'T ' + second:>10s}"]
    for move in moves[:rows]:
        cells = []
        for side in (a, b):
            cells.append(side[move] if move in side else None)
        n = [f"{c.visits:9d}" if c else f"{'-':>9s}" for c in cells]
        p = [f"{c.prior:8.2f}%" if c and c.prior is not None else f"{'-':>9s}" for c in cells]
        t = [f"{c.utility:9.2f}c" if c else f"{'-':>10s}" for c in cells]
        marker = " <" if (cells[0].visits if cells[0] else 0) != (cells[1].visits if cells[1] else 0) else ""
        lines.append(f"    {'':{len(' '.join(div.path) or 'root') + 5}s}{move:5s} {n[0]} {n[1]} {p[0]} {p[1]} "
                     f"{t[0]} {t[1]}{marker}")
    return lines
