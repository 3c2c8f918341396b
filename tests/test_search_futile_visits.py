"""Futile-visit pruning (futileVisitsThreshold) in a search limited by visits alone, against KataGo 1.17.2.

KataGo bounds the visits a search has left by its visit and playout limits on every playout (and by its
clock only when it has time controls), so root moves that could no longer reach the threshold share of the
best move's visits stop getting visits near the end. kata saw no bound at all without a clock (0 visits left)
and put every visit but the first on one move (Q3 199). The expected visits are `katago gtp`'s (g170-b6c96,
KataGo's gtp_example.cfg, one thread, nnRandomize=false, 200 visits) for `kata-search b` after Q16 D4.
"""
from __future__ import annotations

import pytest

from support.gtp import feed, make_engine
from support.paths import CONFIGS, G170_B6

pytestmark = pytest.mark.needs_shared

OVERRIDE = ("logDir=,logAllGTPCommunication=false,logSearchInfo=false,numSearchThreads=1,nnRandomize=false,"
            "maxVisits=200,ponderingEnabled=false")
# KataGo's root children (move: visits) with futileVisitsThreshold 0.9, and without it (both engines).
KATAGO_PRUNED = {"Q3": 168, "R4": 25, "Q4": 6}
KATAGO_PLAIN = {"Q3": 157, "R4": 34, "Q4": 8}


def root_child_visits(override: str) -> dict[str, int]:
    engine, out, _ = make_engine(override=override, model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    feed(engine, ["boardsize 19", "komi 7.5", "play B Q16", "play W D4", "kata-search b", "debug_moves"])
    engine.stop_background()
    visits = {}
    for line in out.getvalue().splitlines():
        words = line.split()
        if len(words) > 2 and words[1] == ":" and "N" in words:
            visits[words[0]] = int(words[words.index("N") + 1])
    return visits


@pytest.mark.parametrize("threshold, expected", [(0.9, KATAGO_PRUNED), (None, KATAGO_PLAIN)])
def test_a_visit_limited_search_prunes_futile_moves_as_katago(threshold, expected):
    override = OVERRIDE + (f",futileVisitsThreshold={threshold}" if threshold is not None else "")
    assert root_child_visits(override) == expected
