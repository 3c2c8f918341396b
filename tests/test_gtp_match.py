"""examples/gtp_match.py: whole games between `kata gtp` and another GTP engine, scored by both."""
from __future__ import annotations

import shlex
import shutil
import sys
from pathlib import Path

import pytest

from katacli.game.rules import Rules

from support.gtp import python_cli
from support.paths import import_script

pytestmark = pytest.mark.subprocess  # every test here starts processes

GNUGO = shutil.which("gnugo") or shutil.which("/usr/games/gnugo")


def load_match_module():
    return import_script("examples/gtp_match.py")


def kata_command(seed: int, visits: int) -> str:
    return shlex.join(python_cli() + ["gtp", "-model", "rollouts", "-override-config", f"maxVisits={visits},searchRandSeed={seed}"])


def test_kata_against_kata_plays_to_the_end_and_both_agree_on_the_score(tmp_path, capsys):
    match = load_match_module()
    status = match.main(["--black", kata_command(1, 40), "--white", kata_command(2, 80), "--games", "2",
                         "--size", "5", "--sgf-dir", str(tmp_path), "--require-agreement"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "2 game(s), 0 score disagreement(s)" in out
    games = [line for line in out.splitlines() if line.startswith("game ")]
    assert len(games) == 2 and all("scores agree" in line for line in games), out
    # Colours alternate (the second engine is Black in game 2), and every game is saved as SGF.
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == ["game001.sgf", "game002.sgf"]
    first, second = ((tmp_path / name).read_text() for name in ("game001.sgf", "game002.sgf"))
    # RU: the rules the engines played under (KataGo's default, Tromp-Taylor), readable back.
    tromp_taylor = "RU[koPOSITIONALscoreAREAtaxNONEsui1]"
    assert first.startswith(f"(;FF[4]GM[1]SZ[5]KM[7.5]{tromp_taylor}PB[A: ")
    assert second.startswith(f"(;FF[4]GM[1]SZ[5]KM[7.5]{tromp_taylor}PB[B: ")
    assert Rules.parse("koPOSITIONALscoreAREAtaxNONEsui1") == Rules.preset("tromp-taylor")


class _PassingEngine:
    """A GTP engine stand-in that passes at once and counts the board as ``score``."""

    def __init__(self, name: str, score: str):
        self.name, self.score = name, score

    def command(self, line: str, timeout=None) -> str:
        if line.startswith("genmove"):
            return "pass"
        if line == "final_score":
            return self.score
        return "false" if line.startswith("known_command") else ""


def test_the_referee_decides_a_game_ended_by_passes():
    # The GNU Go moonshot took each result from Black's engine, the weak network under test at times, which
    # counted impossible scores (W+95 on 9x9): a referee engine counts instead.
    match = load_match_module()
    kata, gnugo = _PassingEngine("kata", "W+95"), _PassingEngine("gnugo", "W+8")
    assert match.play_game(1, kata, gnugo, 9, 7.5, 10).result == "W+95"   # Black's count, by default
    judged = match.play_game(2, kata, gnugo, 9, 7.5, 10, referee=gnugo)
    assert judged.result == "W+8" and not judged.scores_agree


@pytest.mark.skipif(GNUGO is None, reason="GNU Go is not installed (apt-get install gnugo)")
def test_kata_against_gnugo():
    match = load_match_module()
    gnugo = f"{GNUGO} --mode gtp --chinese-rules --capture-all-dead --level 1"
    records = match.run_match(kata_command(5, 100), gnugo, games=1, size=7, komi=7.5, max_moves=150,
                              alternate=False, sgf_dir=None, rules="chinese", log=lambda _: None)
    game = records[0]
    assert match.RESULT_RE.match(game.result)
    assert game.scores_agree, game.scores


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
