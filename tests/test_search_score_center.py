"""The score utility's centre for a root averaged over several symmetries, against KataGo 1.17.2.

KataGo centres the dynamic score utility on one plain evaluation of a fresh root (computeRootNNEvaluation,
before the root node exists), not on the root's evaluation averaged over rootNumSymmetriesToSample
symmetries. The expected visits are `katago gtp`'s (g170-b6c96, KataGo's gtp_example.cfg, one thread,
nnRandomize=false, 300 visits) for `kata-search B` on a 13x13 Japanese game after 66 moves.
"""
from __future__ import annotations

from support.gtp import feed, make_engine
from support.paths import CONFIGS, G170_B6

MOVES = ("F12 N7 N11 B3 D1 K5 K11 M4 J5 K8 G9 A9 E3 K9 B11 H2 D3 G10 L4 B13 D11 M1 L8 H4 K6 A6 A3 G1 N10 F4 G11 C11 "
         "L1 D7 M7 C5 H11 J11 J2 N13 J12 G4 F5 H10 B5 M2 L7 F13 N5 M12 C1 D8 E4 G3 H5 K2 E13 F3 F10 J8 H13 C6 L10 "
         "D12").split()
OVERRIDE = ("logDir=,logAllGTPCommunication=false,logSearchInfo=false,numSearchThreads=1,nnRandomize=false,"
            "maxVisits=300,rootNumSymmetriesToSample=8")
# KataGo's root children: (move, visits); with the averaged root's score as the centre kata gave 76 / 122 / 50
KATAGO_CHILDREN = {"E6": 48, "C10": 180, "B2": 19}


def test_a_root_averaged_over_symmetries_centres_the_score_on_its_plain_evaluation():
    engine, out, _ = make_engine(override=OVERRIDE, model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    colors = ["b", "w"] * len(MOVES)
    feed(engine, ["boardsize 13", "komi 9", "kata-set-rules japanese"]
         + [f"play {c} {m}" for c, m in zip(colors, MOVES)] + ["kata-search b", "debug_moves"])
    engine.stop_background()
    visits = {}
    for line in out.getvalue().splitlines():
        words = line.split()
        if len(words) > 2 and words[0] in KATAGO_CHILDREN and words[1] == ":" and "N" in words:
            visits[words[0]] = int(words[words.index("N") + 1])
    assert visits == KATAGO_CHILDREN
