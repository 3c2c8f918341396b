"""When `kata gtp` starts a fresh search tree, as KataGo 1.17.2's GTP engine does (each expected answer is
`katago gtp`'s to the same commands: g170-b6c96, KataGo's gtp_example.cfg, numSearchThreads=1,
nnRandomize=false, maxVisits=60).

* avoid / allow lists that differ from the last search's (Search::setAvoidMoveUntilByLoc): a tree
  built without them holds visits to moves now forbidden, and one built with them lacks moves now allowed;
* a switch between the genmove and the analysis parameters (Search::setParams, called by the GTP engine
  on each switch): a genmove right after `lz-analyze` searches maxVisits afresh, not the analysis tree's
  hundreds of visits with its analysisWideRootNoise.
"""
from __future__ import annotations

import time

import pytest

from support.gtp import feed, make_engine
from support.paths import CONFIGS, G170_B6

OVERRIDE = "logDir=,logAllGTPCommunication=false,maxVisits=60,numSearchThreads=1,nnRandomize=false"
START = ["boardsize 9", "komi 7", "play b e5"]


def _run(commands: list[str], analyze_seconds: float = 0.0) -> list[str]:
    """The engine's non-empty output lines; ``analyze_seconds``: the first command (an analysis that runs
    until the next one) runs that long first."""
    engine, out, _ = make_engine(override=OVERRIDE, model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    feed(engine, START + commands[:1])
    time.sleep(analyze_seconds)
    feed(engine, commands[1:])
    engine.stop_background()
    return [line for line in out.getvalue().splitlines() if line.strip()]


@pytest.mark.parametrize("commands,katago_last_lines", [
    # a search without restrictions, then one avoiding four points: the old tree's C5 is not played
    (["kata-search_analyze maxmoves 2", "kata-genmove_analyze maxmoves 2 avoid w c5,g5,e7,e3 1"], ["play C3"]),
    # a search avoiding C5 (and three more), then a plain genmove: C5 is allowed again
    (["kata-search_analyze maxmoves 1 avoid w c5,g5,e7,e3 1", "genmove w"], ["= C5"]),
    # a search allowed only G6 and C4, then one avoiding them and six more points
    (["kata-search_analyze maxmoves 1 allow w g6,c4 1", "kata-genmove_analyze maxmoves 1 avoid w c4,g6,c6,g4,d3,f3,d7,f7 1"],
     ["info move C5", "play C5"]),
], ids=["avoid-after-none", "none-after-avoid", "avoid-after-allow"])
def test_changed_avoid_lists_start_a_fresh_tree(commands, katago_last_lines):
    lines = _run(commands)
    tail = lines[-len(katago_last_lines):]
    assert [line[:len(expected)] for line, expected in zip(tail, katago_last_lines)] == katago_last_lines, lines[-4:]


def test_a_genmove_after_analysis_searches_its_own_visits():
    # (the analysis runs long enough to pass 60 visits: a genmove reusing its tree would report more)
    lines = _run(["lz-analyze w 20", "kata-genmove_analyze w maxmoves 2 rootInfo true"], analyze_seconds=1.5)
    analysis = [line for line in lines if line.startswith("info move") and "rootInfo" not in line]
    words = analysis[-1].split()
    assert sum(int(words[i + 1]) for i, word in enumerate(words) if word == "visits") > 60
    info = lines[-2]
    assert info.startswith("info move ") and " rootInfo visits 60 " in info, info   # not the analysis tree's
    assert lines[-1] == "play C5"


def test_a_genmove_after_a_genmove_still_reuses_the_tree():
    """Same parameters (an even game: no dynamic PDA), no avoid lists: the tree carries over, as in KataGo."""
    engine, out, _ = make_engine(override=OVERRIDE, model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    feed(engine, START + ["genmove w", "genmove b", "genmove w"])
    engine.stop_background()
    stats = engine.bot._searcher.last_stats
    assert stats.visits >= 60 and stats.playouts < stats.visits   # part of the visits came from the old tree
