"""`debug_moves`: KataGo's printTree view of the search tree, the board along a line, raw network stats."""
from __future__ import annotations

import re

import pytest

from support.gtp import feed, make_engine, model_path

G170 = "g170-b6c96-s175395328-d26788732.bin.gz"
NUMBER = r"[-+ ]*\d+\.\d+"
ROOT_LINE = re.compile(rf"^: T {NUMBER}c W {NUMBER}c S {NUMBER}c \({NUMBER} L {NUMBER}\) N +(\d+)  --  \S")
CHILD_LINE = re.compile(
    rf"^(\S+ +): T {NUMBER}c W {NUMBER}c S {NUMBER}c \({NUMBER} L {NUMBER}\) LCB {NUMBER}c P +\d+\.\d\d% "
    rf"WF +(\d+\.\d) PSV +(\d+) N +(\d+)  --  (\S.*)$")


def debug_output(lines, override="", model=None) -> list[str]:
    """Each response in full (debug_moves ends its text with a newline, as KataGo's does)."""
    engine, out, _ = make_engine(override=f"searchRandSeed=debug,numSearchThreads=1,{override}".strip(","),
                                 model=model, scripted=False)
    feed(engine, lines)
    return [block.lstrip("\n") for block in out.getvalue().split("\n\n") if block.strip()]


def test_root_and_its_children_after_a_search():
    blocks = debug_output(["boardsize 7", "play b D4", "kata-search w", "debug_moves"], override="maxVisits=50")
    text = blocks[-1]
    assert text.startswith("= MoveNum: 1 HASH: ")
    lines = text[2:].splitlines()
    assert lines[1].split() == list("ABCDEFG") and lines[5].startswith(" 4 . . . X1. . .")
    root = ROOT_LINE.match(lines[9])
    assert root, lines[9]
    assert lines[10] == "---White(^)---"  # White to move, values from White's view
    children = [CHILD_LINE.match(line) for line in lines[11:]]
    assert children and all(children), lines[11:]
    for child in children:
        prefix, move = child.group(1), child.group(5).split()[0]
        assert len(prefix) == 4 and prefix.strip() in (move, "pss" if move == "pass" else move)
    # Every visit but the root's own went to a child.
    assert sum(int(c.group(4)) for c in children) == int(root.group(1)) - 1


def test_a_line_of_moves_shows_each_node_and_the_board_after_it():
    blocks = debug_output(["boardsize 7", "play b D4", "kata-search w", "debug_moves"], override="maxVisits=80")
    best = CHILD_LINE.match(blocks[-1].splitlines()[11]).group(5).split()
    engine_lines = ["boardsize 7", "play b D4", "kata-search w", f"debug_moves {best[0]}"]
    text = debug_output(engine_lines, override="maxVisits=80")[-1]
    lines = text[2:].splitlines()
    assert lines[0].startswith("MoveNum: 2 ")
    assert ROOT_LINE.match(lines[9]) and CHILD_LINE.match(lines[10])
    assert lines[10].startswith(best[0].ljust(4) + ": ")
    assert lines[11] == "---Black(v)---"
    assert all(line.startswith(best[0].ljust(4)) and CHILD_LINE.match(line[4:]) for line in lines[12:])


def test_the_view_follows_report_analysis_winrates_as():
    lines = ["boardsize 7", "play b D4", "kata-search w", "debug_moves"]
    white = debug_output(lines, override="maxVisits=30")[-1].splitlines()
    black = debug_output(lines, override="maxVisits=30,reportAnalysisWinratesAs=BLACK")[-1].splitlines()
    assert white[10] == "---White(^)---" and black[10] == "---White(v)---"
    utility = lambda line: float(re.search(r"T +(-?\d+\.\d+)c", line).group(1))
    for row in (9, 11):  # the root, the first child
        assert utility(black[row]) == pytest.approx(-utility(white[row]), abs=0.011)


def test_before_a_search_only_the_board_and_bad_lines():
    blocks = debug_output(["boardsize 7", "play b D4", "debug_moves", "debug_moves D4", "debug_moves Z",
                           "debug_moves C3 D5"])
    assert blocks[2].startswith("= MoveNum: 1 ") and len(blocks[2].splitlines()) == 9
    assert blocks[3] == "= "  # D4 is taken: no board, and no tree yet
    assert blocks[4] == "? Invalid move sequence"
    assert blocks[5].startswith("= MoveNum: 3 ")
    assert "---" not in blocks[5]


def test_rawstats_without_a_network_adds_nothing():
    with_stats = debug_output(["boardsize 7", "debug_moves C3 rawstats"])[-1]
    assert with_stats == debug_output(["boardsize 7", "debug_moves C3"])[-1]


def test_rawstats_with_a_network():
    model_path(G170)
    text = debug_output(["boardsize 9", "play b E5", "kata-search w", "debug_moves C3 rawstats"],
                        override="maxVisits=30", model=G170)[-1]
    lines = text.splitlines()
    assert lines[-3].startswith("Policy: ") and lines[-2].startswith("White winloss: ")
    assert lines[-1].startswith("White lead: ")
    assert len(re.findall(r"\d+\.\d\d% ", lines[-3])) == 8
    assert len(re.findall(r"-?\d+\.\d\dc ", lines[-2])) == 8
    assert len(lines[-1].split()) == 2 + 8
    assert all(0.0 <= float(p.rstrip("%")) <= 100.0 for p in lines[-3].split()[1:])
