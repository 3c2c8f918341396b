"""Every variation of an SGF, node by node (what KataGo's Sgf keeps for iterAllUniquePositions).

:func:`katacli.game.sgf.read_sgf` keeps the main line only and refuses setup stones after
the root; start positions for self-play come from all branches, and a branch may place
stones or change the player to move anywhere. This reader keeps, per node, its setup
(AB/AW/AE), PL, and moves (B before W, as KataGo reads a node), plus the file's hash
that KataGo's exclude lists name.
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from sgfmill import sgf_grammar

from katacli.game.coords import BLACK, WHITE, Point
from katacli.game.sgf import (
    MAX_BOARD_LEN,
    Move,
    SgfError,
    _board_size,
    _decode,
    _encoding_of,
    _parse_move_point,
    _setup_stones,
    read_file_bytes,
)

# KataGo names an SGF by the first 128 bits of the SHA-256 of its text, as 32 hex digits.
FILE_HASH_HEX_DIGITS = 32


@dataclass
class SgfNode:
    setup: list[tuple[int, Point]]     # (BLACK | WHITE | EMPTY, (x, y)), AB then AW then AE
    player: int | None                 # PL, when given and readable
    moves: list[Move]                  # B then W
    comment: str = ""                  # C, where given (pattern avoidance skips nodes marked %SKIP%)


@dataclass
class SgfVariation:
    """A run of nodes, then the branches that follow it (none at a leaf)."""

    nodes: list[SgfNode] = field(default_factory=list)
    children: list["SgfVariation"] = field(default_factory=list)


@dataclass
class SgfTree:
    x_size: int
    y_size: int
    root: SgfVariation
    file_hash: str        # FILE_HASH_HEX_DIGITS lowercase hex digits (KataGo's Sgf::hash)
    file_name: str | None = None
    black_name: str = ""  # PB and PW of the root node
    white_name: str = ""


def parse_player(text: str) -> int | None:
    lowered = text.strip().lower()
    if lowered in ("b", "black"):
        return BLACK
    if lowered in ("w", "white"):
        return WHITE
    return None


def _node_of(raw: dict, encoding: str, x_size: int, y_size: int) -> SgfNode:
    props = {key: [_decode(v, encoding) for v in values] for key, values in raw.items() if key}
    player = parse_player(props["PL"][0]) if len(props.get("PL", ())) == 1 else None
    moves: list[Move] = []
    for key, color in (("B", BLACK), ("W", WHITE)):
        for text in props.get(key, []):
            moves.append((color, _parse_move_point(text, x_size, y_size)))
    return SgfNode(_setup_stones(props, x_size, y_size), player, moves, "\n".join(props.get("C", [])))


def read_sgf_tree(data: bytes, file_name: str | None = None, max_board_len: int = MAX_BOARD_LEN) -> SgfTree:
    """Parse the first game in `data` with all its variations. Raises SgfError naming the file."""
    where = file_name or "<sgf>"
    try:
        tree = sgf_grammar.parse_sgf_game(data)
    except ValueError as e:
        raise SgfError(f"{where}: malformed SGF: {e}") from None
    try:
        root_raw = tree.sequence[0]
        encoding = _encoding_of(root_raw)
        root_props = {key: [_decode(v, encoding) for v in values] for key, values in root_raw.items() if key}
        x_size, y_size = _board_size(root_props, max_board_len)
        root = SgfVariation()
        # Built without recursion: variations can nest as deep as a game is long.
        pending = [(tree, root)]
        while pending:
            raw_tree, variation = pending.pop()
            variation.nodes = [_node_of(node, encoding, x_size, y_size) for node in raw_tree.sequence]
            for raw_child in raw_tree.children:
                child = SgfVariation()
                variation.children.append(child)
                pending.append((raw_child, child))
    except SgfError as e:
        raise SgfError(f"{where}: {e}") from None
    digest = hashlib.sha256(data).hexdigest()[:FILE_HASH_HEX_DIGITS]
    return SgfTree(x_size, y_size, root, digest, file_name, _single_or_empty(root_props, "PB"),
                   _single_or_empty(root_props, "PW"))


def _single_or_empty(props: dict[str, list[str]], key: str) -> str:
    values = props.get(key, [])
    return values[0] if values else ""


def load_sgf_tree(path: str, max_board_len: int = MAX_BOARD_LEN) -> SgfTree:
    return read_sgf_tree(read_file_bytes(path), file_name=path, max_board_len=max_board_len)
