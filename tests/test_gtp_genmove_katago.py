"""genmove's decisions against KataGo 1.17.2's answers to the same commands (g170-b6c96, the shipped
gtp_example.cfg, one search thread, nnRandomize=false, no move temperature):

* the values a genmove records (resignation, play faster when winning, dynamic PDA, the OGS chat line) are
  the root's own (KataGo's getRootValues), not analysis' pruned ones (kata's played E5 where KataGo resigned);
* a genmove for the side not to move sets up its dynamic PDA from the game before the history reset (a 4-stone
  handicap: KataGo's PDA 2.75, kata's 0.38 when it counted the stones on the reset history);
* every search for the side not to move starts a fresh tree, as KataGo's setPlayerAndClearHistory, even where
  the position is the one the last tree searched.
"""
from __future__ import annotations

import re

from support.gtp import feed, make_engine
from support.paths import CONFIGS, G170_B6

OVERRIDE = ("logDir=,logAllGTPCommunication=false,numSearchThreads=1,nnRandomize=false,chosenMoveTemperature=0,"
            "chosenMoveTemperatureEarly=0,")


def _run(commands: list[str], override: str) -> tuple[list[str], str]:
    engine, out, _ = make_engine(override=OVERRIDE + override, model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    feed(engine, commands)
    engine.stop_background()
    return out.getvalue().splitlines(), out.getvalue()


def _chat(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("MALKOVICH:")]


def test_resignation_looks_at_the_roots_own_values_as_katago(capsys):
    commands = ["boardsize 9", "komi 40", "genmove b"]
    lines, _ = _run(commands, "maxVisits=100,rules=chinese,resignConsecTurns=1,resignThreshold=-0.929,"
                              "ogsChatToStderr=true")
    assert lines[-2] == "= resign"   # KataGo's answer (win-loss -0.9292); kata played E5 on the pruned -0.9290
    assert _chat(capsys) == [
        "MALKOVICH:Visits 100 Winrate 3.54% ScoreLead -9.4 ScoreStdev 17.8 (PDA 2.75) PV E5 F7 D7 G6 G4 H4 H3"]
    lines, _ = _run(commands, "maxVisits=100,rules=chinese,resignConsecTurns=1,resignThreshold=-0.93")
    assert lines[-2] == "= E5"


def test_a_genmove_out_of_turn_takes_its_dynamic_pda_from_the_game_before_the_reset(capsys):
    lines, _ = _run(["boardsize 13", "komi 0.5", "fixed_handicap 4", "play w D7", "genmove w"],
                    "maxVisits=60,ogsChatToStderr=true")
    assert lines[-2] == "= G3"
    assert _chat(capsys) == [
        "MALKOVICH:Visits 60 Winrate 11.58% ScoreLead -15.0 ScoreStdev 21.6 (PDA 2.75) PV G3 K7 F11 E3"]


def test_each_search_for_the_side_not_to_move_starts_a_fresh_tree():
    commands = ["boardsize 3", "komi 0.5"] + [f"play w {p}" for p in "A2 A3 B1 B2 B3 C1 C2".split()]
    commands += ["kata-genmove_analyze b rootInfo true"] * 5
    _, text = _run(commands, "maxVisits=30")
    got = re.findall(r"rootInfo visits (\d+) utility (\S+)|^play (\S+)", text, re.M)
    utilities = [u for _, u, _ in got if u]
    plays = [p for _, _, p in got if p]
    # KataGo 1.17.2: the third search (the position of the second, history reset again) is a fresh tree.
    assert utilities == ["-1.081", "-1.081", "-1.081", "-1.17759", "-1.17759"]
    assert plays == ["pass", "pass", "resign", "resign", "resign"]
