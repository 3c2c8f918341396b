"""benchmarks/compare_katago_search.py without KataGo: the position list, the set-up commands, reading
``debug_moves`` answers (recorded from `kata gtp`, KataGo's printTree layout) and the tree walk."""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))

from search_parity import (PositionError, TreeView, divergence_table, find_divergence,  # noqa: E402
                           load_positions, max_visit_difference, parse_debug_moves, parse_position)

# `debug_moves` after kata-search b, 200 visits, 9x9 B E5 W C4 (g170-b6c96), board diagram included.
ROOT = """MoveNum: 2 HASH: C1EC0CBB0A2E8F225B3E09633D0EC276
   A B C D E F G H J
 9 . . . . . . . . .
 5 . . . . X1. . . .
: T   2.53c W   2.09c S   0.03c ( -0.0 L  +0.4) N     200  --  D3 C6 D7 G5 G3 F7
---Black(^)---
D3  : T   4.34c W   3.75c S   0.24c ( +0.1 L  +0.6) LCB   -1.65c P 24.46% WF 127.3 PSV     126 N     126  --  D3 C6 D7
C6  : T   0.08c W  -0.74c S  -0.27c ( -0.2 L  +0.3) LCB  -13.50c P 21.83% WF  27.5 PSV      27 N      28  --  C6 E3 F3
D4  : T   0.94c W   0.65c S  -0.26c ( -0.2 L  +0.3) LCB  -10.40c P 11.95% WF  22.7 PSV      18 N      23  --  D4 C5 D6
C5  : T   0.19c W  -0.26c S  -0.24c ( -0.2 L  +0.0) LCB  -19.02c P 11.31% WF  10.9 PSV      11 N      11  --  C5 D5 D4
D6  : T  -5.89c W  -4.00c S  -0.61c ( -0.4 L  -0.0) LCB  -23.14c P 16.73% WF   9.6 PSV      10 N      10  --  D6 E3 F3
E3  : T -11.51c W  -9.12c S  -2.39c ( -1.7 L  -0.6) LCB -361.51c P  3.55% WF   1.0 PSV       1 N       1  --  E3
"""
BRANCH_D4 = """: T   2.53c W   2.09c S   0.03c ( -0.0 L  +0.4) N     200  --  D3 C6 D7 G5 G3 F7
D4  : T   0.94c W   0.65c S  -0.26c ( -0.2 L  +0.3) LCB  -10.40c P 11.95% WF  22.7 PSV      18 N      23  --  D4 C5 D6
---White(v)---
D4  C5  : T  -1.44c W  -0.80c S  -0.42c ( -0.3 L  +0.3) LCB   11.45c P 57.76% WF  17.2 PSV      17 N      17  --  C5 D6 C6
D4  D3  : T  10.53c W   7.11c S   0.46c ( +0.3 L  +0.6) LCB   57.61c P 16.38% WF   3.9 PSV       4 N       4  --  D3 C5 C3
D4  C3  : T  10.32c W   8.73c S   1.59c ( +1.0 L  +0.8) LCB  360.32c P 15.01% WF   1.0 PSV       1 N       1  --  C3
"""


def _shifted(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new)


def test_parse_root_and_branch():
    root = parse_debug_moves(ROOT)
    assert root.node.visits == 200 and root.node.prior is None and root.node.move == ""
    assert list(root.children) == ["D3", "C6", "D4", "C5", "D6", "E3"]
    d3 = root.children["D3"]
    assert (d3.visits, d3.prior, d3.utility, d3.winloss, d3.score) == (126, 24.46, 4.34, 3.75, 0.24)
    assert d3.pv[:3] == ("D3", "C6", "D7")
    branch = parse_debug_moves(BRANCH_D4)
    assert branch.node.move == "D4" and branch.node.visits == 23
    assert {m: c.visits for m, c in branch.children.items()} == {"C5": 17, "D3": 4, "C3": 1}


def test_no_tree_parses_empty():
    view = parse_debug_moves("MoveNum: 0 HASH: 00\n   A B C\n 3 . . .\n")
    assert view.node is None and view.children == {}


def test_visit_difference_counts_missing_children():
    a = parse_debug_moves(ROOT)
    b = parse_debug_moves(_shifted(ROOT, "N       1  --  E3", "N       0  --  E3").replace(
        "E3  : T", "XX  : T"))
    assert max_visit_difference(a.children, a.children) == 0
    assert max_visit_difference(a.children, b.children) == 1  # E3 1 vs absent, XX 0 vs absent


def test_walk_finds_the_deeper_split():
    """The other tree spent two of D4's visits on D3 instead of C5: the walk goes from the root into D4."""
    other_root = _shifted(_shifted(ROOT, "N     126  --  D3 C6 D7", "N     125  --  D3 C6 D7"),
                          "N      23  --  D4 C5 D6", "N      24  --  D4 C5 D6")
    other_d4 = _shifted(_shifted(BRANCH_D4, "N      17  --  C5", "N      16  --  C5"), "N       4  --  D3 C5",
                        "N       6  --  D3 C5")
    mine = {(): parse_debug_moves(ROOT), ("D4",): parse_debug_moves(BRANCH_D4)}
    theirs = {(): parse_debug_moves(other_root), ("D4",): parse_debug_moves(other_d4)}

    def fetch(trees):
        return lambda path: trees.get(tuple(path), TreeView(None))

    div = find_divergence(fetch(mine), fetch(theirs), mine[()], theirs[()])
    assert div.path == ("D4",)
    table = divergence_table(div, ("kata", "katago"))
    assert any("C5" in line and line.endswith("<") for line in table)
    assert find_divergence(fetch(mine), fetch(mine), mine[()], mine[()]) is None


def test_positions_and_setup_commands(tmp_path):
    pos = parse_position({"name": "r", "size": "7x9", "rules": "aga", "komi": 7, "handicap": ["c3", "e7"],
                          "moves": ["W d4", "B pass"]}, 0)
    assert (pos.x_size, pos.y_size, pos.to_move) == (7, 9, "W")
    assert pos.setup_commands() == ["rectangular_boardsize 7 9", "clear_board", "kata-set-rules aga", "komi 7",
                                    "set_free_handicap C3 E7", "play W D4", "play B PASS"]
    assert parse_position({"name": "h", "size": 9, "rules": "chinese", "komi": 0.5, "handicap": ["C3", "G7"],
                           "moves": []}, 0).to_move == "W"
    assert parse_position({"name": "e", "size": 9, "rules": "chinese", "komi": 7, "moves": []}, 0).to_move == "B"
    with pytest.raises(PositionError, match="size"):
        parse_position({"name": "x", "size": "9by9", "rules": "chinese", "komi": 7, "moves": []}, 0)
    with pytest.raises(PositionError, match="'B D4'"):
        parse_position({"name": "x", "size": 9, "rules": "chinese", "komi": 7, "moves": ["D4"]}, 0)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"positions": []}))
    with pytest.raises(PositionError, match="non-empty"):
        load_positions(bad)


def test_shipped_position_set_is_varied():
    positions = load_positions(REPO / "benchmarks" / "search_parity_positions.json")
    assert {p.rules for p in positions} >= {"chinese", "japanese", "tromp-taylor", "aga"}
    assert {(p.x_size, p.y_size) for p in positions} >= {(9, 9), (13, 13), (19, 19), (7, 9), (6, 6)}
    assert any(p.handicap for p in positions) and {p.to_move for p in positions} == {"B", "W"}
    assert any(p.moves and p.moves[-1][1] == "PASS" for p in positions)


def test_random_positions_are_reproducible_varied_and_legal():
    """--random N: the same list from the same seed, the shapes the parity goal names, every move legal."""
    from katacli import Game
    from random_positions import random_parity_positions

    entries = random_parity_positions(60, seed=202)
    assert entries == random_parity_positions(60, seed=202)
    assert entries != random_parity_positions(60, seed=203)
    positions = [parse_position(entry, i) for i, entry in enumerate(entries)]
    assert len({p.name for p in positions}) == len(positions)
    assert any(p.x_size != p.y_size for p in positions) and any(p.x_size == 6 for p in positions)
    assert any(p.handicap for p in positions) and any(p.moves and p.moves[-1][1] == "PASS" for p in positions)
    assert len({p.rules for p in positions}) >= 6
    for p in positions:
        game = Game((p.x_size, p.y_size), rules=p.rules, komi=p.komi)
        if p.handicap:
            game.setup(black=p.handicap, next_player="W")
        for colour, vertex in p.moves:
            game.play(colour, vertex.lower() if vertex == "PASS" else vertex)  # raises on an illegal move
        assert game.next_player == p.to_move


def test_analysis_queries_set_up_the_position():
    """compare_katago_analysis_search.py: handicap stones become initial stones; a position without moves
    names the player to move."""
    from compare_katago_analysis_search import query_for

    handicap = parse_position({"name": "h", "size": 19, "rules": "japanese", "komi": 0.5,
                               "handicap": ["D4", "Q16"], "moves": []}, 0)
    query = query_for(handicap, 300, 4)
    assert query["initialStones"] == [["B", "D4"], ["B", "Q16"]] and query["initialPlayer"] == "W"
    assert (query["id"], query["maxVisits"], query["boardXSize"], query["rules"]) == ("q4", 300, 19, "japanese")
    played = parse_position({"name": "p", "size": "7x9", "rules": "chinese", "komi": 7, "moves": ["B C3", "W pass"]}, 1)
    query = query_for(played, 100, 0)
    assert query["moves"] == [["B", "C3"], ["W", "PASS"]] and "initialPlayer" not in query
    assert (query["boardXSize"], query["boardYSize"]) == (7, 9)
