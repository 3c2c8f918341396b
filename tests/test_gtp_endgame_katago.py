"""How a game ends in `kata gtp`, against KataGo 1.17.2's answers to the same commands (g170-b6c96, KataGo's
gtp_example.cfg, one search thread, nnRandomize=false, no move temperature, 50 visits).

The position: a finished 7x7 game where Black (columns A-D) is pass-alive around a dead White stone at A4.
* cleanupBeforePass (PlayUtils::maybeCleanupBeforePass) captures the dead stone instead of passing in the
  game's final phase: area scoring, or territory scoring's last cleanup phase, once the button is taken;
* a "pass for ko" of the cleanup phase is written by printsgf as a pass with its point marked, not as a move
  (which would replay as a ko capture);
* cleanupBeforePass = true with friendlyPass = true is refused, as KataGo refuses it.
"""
from __future__ import annotations

import pytest

from katacli.config import ConfigError
from support.gtp import feed, make_engine
from support.paths import CONFIGS, G170_B6

OVERRIDE = ("logDir=,logAllGTPCommunication=false,numSearchThreads=1,nnRandomize=false,chosenMoveTemperature=0,"
            "chosenMoveTemperatureEarly=0,maxVisits=50")
BLACK_AREA = "B1 B2 B3 B4 B5 B6 B7 C1 C2 C3 C4 C5 C6 C7 D1 D2 D3 D4 D5 D6 D7 A2 A6".split()
WHITE_AREA = "E1 E2 E3 E4 E5 E6 E7 F1 F2 F3 F4 F5 F6 F7 G2 G6".split()


def _set_position(black: list[str], white: list[str]) -> str:
    return "set_position " + " ".join([f"b {p}" for p in black] + [f"w {p}" for p in white])


def _answers(commands: list[str], override: str = "") -> list[str]:
    engine, out, _ = make_engine(override=OVERRIDE + override, model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    feed(engine, commands)
    engine.stop_background()
    return [line for line in out.getvalue().splitlines() if line.startswith(("=", "?"))]


DEAD_STONE = _set_position(BLACK_AREA, WHITE_AREA + ["A4"])


@pytest.mark.parametrize("rules,passes,override", [
    ("japanese", 4, ",cleanupBeforePass=true,preventCleanupPhase=false"),   # the last cleanup phase
    ("aga-button", 2, ",cleanupBeforePass=true"),                           # the button taken
    ("aga-button\nkata-set-rule friendlyPassOk false", 2, ""),              # automatic: no friendly pass
], ids=["japanese-final-phase", "button-taken", "button-no-friendly-pass"])
def test_cleanup_before_pass_captures_the_dead_stone(rules, passes, override):
    commands = ["boardsize 7", "komi 0", *f"kata-set-rules {rules}".split("\n"), DEAD_STONE]
    commands += ["play b pass", "play w pass"] * (passes // 2) + ["genmove b"]
    assert _answers(commands, override)[-1] == "= A5"   # KataGo's answer (before, kata passed)


def test_a_pass_for_ko_in_the_cleanup_phase_is_written_as_katago_writes_it():
    black = [p for p in BLACK_AREA if p != "D4"]
    commands = ["boardsize 7", "komi 0", "kata-set-rules japanese",
                _set_position(black, WHITE_AREA[:3] + WHITE_AREA[4:] + ["A4", "D4"]),
                "play b pass", "play w pass", "play b E4", "play w D4", "printsgf"]
    record = _answers(commands, ",preventCleanupPhase=false")[-1]
    assert record.endswith(";B[];W[];B[ed];W[]TR[dd]C[Pass for ko])"), record


def test_cleanup_before_pass_and_friendly_pass_together_are_refused():
    with pytest.raises((ConfigError, SystemExit)):
        make_engine(override=OVERRIDE + ",cleanupBeforePass=true,friendlyPass=true", model=G170_B6, scripted=False,
                    config=[str(CONFIGS / "gtp_example.cfg")])


@pytest.mark.parametrize("moves, records", [
    # White's second move in a row (E5) resets the history in the cleanup phase, after a pass for ko: the
    # record starts there. kata answered "internal error: list index out of range", then wrote Black's E2 as a
    # pass for ko (the indices counted from the game's first move).
    (["play W B2", "play W E5"], [";W[ee])", ";W[ee];B[ef];W[eg];B[eh];W[ei])"]),
    # A pass for ko after the reset is in the new history.
    (["play W E5", "play B C2", "play W B2"], [";W[ee];B[ch];W[]TR[bh]C[Pass for ko])",
                                                ";W[ee];B[ch];W[]TR[bh]C[Pass for ko];B[ef];W[eg];B[eh];W[ei])"]),
], ids=["pass-for-ko-then-reset", "reset-then-pass-for-ko"])
def test_printsgf_after_a_history_reset_in_the_cleanup_phase_writes_katagos_record(moves, records):
    commands = ["boardsize 9", "kata-set-rules japanese", "set_position b B3 b A2 b B1 w C3 w B2 w D2 w C1 w G5",
                "play B pass", "play W pass", *(["play B C2"] if moves[0] == "play W B2" else []), *moves,
                "printsgf", "play B E4", "play W E3", "play B E2", "play W E1", "printsgf"]
    answers = _answers(commands, ",preventCleanupPhase=false")
    printed = [answer for answer in answers if answer.startswith("= (;")]
    assert len(printed) == 2 and all(answer.endswith(record) for answer, record in zip(printed, records)), answers


def test_a_refused_rules_change_keeps_the_game_up_to_the_forbidden_move_as_katago():
    # Under Chinese rules the pass for ko (W B2) is a capture of nothing; the second W B2, a real recapture after
    # White's double move reset the history, then lands on a stone: the change is refused. kata had reset the
    # game already (MoveNum 0, White to move, no moves in printsgf); KataGo checks a move before it resets.
    commands = ["boardsize 9", "kata-set-rules japanese", "set_position b B3 b A2 b B1 w C3 w B2 w D2 w C1 w G5",
                "play B pass", "play W pass", "play B C2", "play W B2", "play W B2", "kata-set-rules chinese",
                "showboard", "printsgf"]
    engine, out, _ = make_engine(override=OVERRIDE + ",preventCleanupPhase=false", model=G170_B6, scripted=False,
                                 config=[str(CONFIGS / "gtp_example.cfg")])
    feed(engine, commands)
    engine.stop_background()
    text = out.getvalue()
    assert "? Could not make the rules change, some earlier moves in the game would now become illegal." in text
    assert "= MoveNum: 4 HASH: 527B86881097051D826EC4CCF2154594" in text and "Next player: Black" in text
    assert text.rstrip().endswith("AB[bg][ah][bi]AW[ge][cg][bh][dh][ci];B[];W[];B[ch];W[bh])")


def test_printsgf_after_a_double_pass_move_in_the_cleanup_phase_writes_katagos_record():
    commands = ["boardsize 9", "kata-set-rules japanese", "set_position b B3 b A2 b B1 w C3 w B2 w D2 w C1 w G5",
                "play B pass", "play W pass", "play B C2", "play W B2", "play W pass", "printsgf"]
    assert _answers(commands, ",preventCleanupPhase=false")[-1].endswith("AB[bg][ah][ch][bi]AW[ge][cg][dh][ci];W[])")
