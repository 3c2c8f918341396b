"""final_score with a real network, against KataGo 1.17.2's answers to the same commands.

KataGo scores an unfinished game -- and a finished one under area rules with friendlyPassOk, which may end
with dead stones on the board -- by PlayUtils::computeLead: noiseless searches at a few komi values (a
single search's lead is off by a point or two where area scoring moves in 2-point steps). The answers
below are `katago gtp` 1.17.2's (g170-b6c96, KataGo's gtp_example.cfg, numSearchThreads=1,
nnRandomize=false, maxVisits=60), fed the same commands.
"""
from __future__ import annotations

from support.gtp import feed, make_engine
from support.paths import CONFIGS, G170_B6

OVERRIDE = "logDir=,logAllGTPCommunication=false,maxVisits=60,numSearchThreads=1,nnRandomize=false"
GAME = ["E5", "C5", "D7", "G5", "D3", "C3", "C2", "D4", "|", "E4", "D2", "E3", "B2", "G7", "G3", "E2", "C1", "|",
        "G6", "H5", "G2", "H2", "F3", "G1", "F2", "H3", "|", "C6", "B6", "B7", "D6", "C7", "H6", "H7", "B5", "|",
        "H1", "J1", "F5", "J6", "G4", "H4", "D5", "J7", "|", "pass", "|", "pass", "|"]
# After each "|" above, then under Chinese and Japanese rules (the game over: two passes).
KATAGO_SCORES = ["W+1.0", "0", "W+3.0", "W+1.0", "W+2.0", "W+6.0", "W+14.0", "W+2.0", "W+3.0"]


def test_final_score_is_katagos_lead_estimate():
    engine, out, _ = make_engine(override=OVERRIDE, model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    commands, color = ["boardsize 9", "komi 7"], "b"
    for move in GAME:
        if move == "|":
            commands.append("final_score")
            continue
        commands.append(f"play {color} {move}")
        color = "w" if color == "b" else "b"
    commands += ["kata-set-rules chinese", "final_score", "kata-set-rules japanese", "final_score"]
    feed(engine, commands)
    engine.stop_background()
    scores = [line[2:] for line in out.getvalue().splitlines()
              if line.startswith("= ") and line[2:3] in ("B", "W", "0")]
    # (the tromp-taylor game after two passes, W+14.0, is scored from its history, as KataGo does)
    assert scores == KATAGO_SCORES
