"""The genmove log (genmove_debug / kata-search_debug on stderr, logSearchInfo in the log) and the OGS chat
line, in KataGo's printGenmoveLog layout; compared line by line with KataGo 1.17.2 by
benchmarks/compare_katago_search.py, which reads its tree."""
from __future__ import annotations

import re

from support.gtp import feed, make_engine
from support.paths import TEST_B4
from test_gtp_debug_moves import CHILD_LINE, ROOT_LINE

SETUP = ["boardsize 7", "play b D4", "play w C3"]


def genmove_log(capsys, command: str, override: str = "") -> tuple[str, list[str]]:
    engine, out, _ = make_engine(override=f"searchRandSeed=log,numSearchThreads=1,maxVisits=60,{override}".strip(","),
                                 scripted=False)
    feed(engine, SETUP + [command])
    move = out.getvalue().strip().split("\n\n")[-1].removeprefix("= ")
    return move, capsys.readouterr().err.splitlines()


def test_the_log_block_has_katago_s_lines_in_order(capsys):
    move, lines = genmove_log(capsys, "kata-search_debug b")
    assert lines[0].startswith("MoveNum: 2 HASH: ") and lines[1].split() == list("ABCDEFG")
    board = lines[2:9]
    assert lines[9] == ""  # printBoard's closing blank line
    column, row = "ABCDEFG".index(move[0]), 7 - int(move[1:])
    assert board[row][3 + 2 * column] == "@"  # the chosen point, still empty
    assert lines[10] == "koPOSITIONALscoreAREAtaxNONEsui1komi7.5"  # Tromp-Taylor, the engine's start rules
    assert re.fullmatch(r"Time taken: [\d.e-]+", lines[11])
    assert lines[12] == "Root visits: 60" and lines[13] == "New playouts: 60"
    assert re.fullmatch(r"NN rows: \d+", lines[14]) and re.fullmatch(r"NN batches: \d+", lines[15])
    assert lines[16].startswith("NN avg batch size: ")
    assert lines[17].startswith(f"PV: {move}")
    assert lines[18] == "Tree:" and ROOT_LINE.match(lines[19]) and lines[20] == "---Black(^)---"
    children = lines[21:]
    assert 1 <= len(children) <= 10 and all(CHILD_LINE.match(line) for line in children)
    assert children[0].startswith(move.ljust(4))


def test_the_chosen_move_s_line_is_followed_when_asked(capsys):
    move, lines = genmove_log(capsys, "genmove_debug b", override="logSearchInfoForChosenMove=true")
    tree = lines[lines.index("Tree:") + 1:]
    assert tree[1] == "---Black(^)---"
    # Ten children of the root at most, then the chosen move's own children under it (two moves of prefix).
    deeper = [line for line in tree[2:] if line.startswith(move.ljust(4)) and len(line) > 8 and line[4] != ":"]
    assert deeper and all(CHILD_LINE.match(line[4:]) for line in deeper)
    assert len([line for line in tree[2:] if line[4] == ":"]) <= 10


def test_ogs_chat_line(capsys):
    move, lines = genmove_log(capsys, "genmove b", override="ogsChatToStderr=true")
    chat = [line for line in lines if line.startswith("MALKOVICH:")]
    assert len(chat) == 1
    assert re.fullmatch(rf"MALKOVICH:Visits 60 Winrate \d+\.\d\d% ScoreLead -?\d+\.\d ScoreStdev \d+\.\d PV {move}( \S+)*",
                        chat[0]), chat[0]


def test_network_counts_are_this_genmove_s(capsys):
    """KataGo clears its network counts as each genmove starts: a search the tree already holds runs none."""
    engine, _, _ = make_engine(override="searchRandSeed=log,numSearchThreads=1,maxVisits=60", scripted=False,
                               model=TEST_B4)
    feed(engine, SETUP + ["kata-search_debug b"])
    first = capsys.readouterr().err.splitlines()
    feed(engine, ["kata-search_debug b"])
    again = capsys.readouterr().err.splitlines()
    rows = next(int(line.split()[-1]) for line in first if line.startswith("NN rows: "))
    assert 0 < rows <= 60
    assert "New playouts: 0" in again and "NN rows: 0" in again and "NN avg batch size: -nan" in again


def test_genmove_time_counts_the_move_delay(capsys):
    """KataGo reads its genmove timer after delayMoveScale's wait: `cputime` (what twogtp and gomill report per
    engine) and the log's "Time taken" include it."""
    move, lines = genmove_log(capsys, "genmove_debug b", override="delayMoveScale=100,delayMoveMax=0.3")
    taken = float(next(line for line in lines if line.startswith("Time taken: ")).split()[-1])
    assert taken >= 0.3
    engine, out, _ = make_engine(override="delayMoveScale=100,delayMoveMax=0.3", scripted=True)
    feed(engine, ["boardsize 7", "genmove b", "cputime"])
    assert float(out.getvalue().strip().split("\n\n")[-1].removeprefix("= ")) >= 0.3
