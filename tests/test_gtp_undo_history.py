"""What `undo` can take back after each command that replaces the game, as KataGo's GTP engine answers.

KataGo keeps an initial position and the moves played since; every command that sets up a position
(clear_board, boardsize with a new size, set_position, the handicap commands, loadsgf) replaces both,
and undo replays all moves but the last into a fresh search tree. These tests pin the `=` / `?` answers
differential testing against KataGo found, and that undo, like KataGo, starts a fresh tree.
"""
from __future__ import annotations

import pytest

from support.gtp import feed, make_engine

GAME_SGF = "(;FF[4]GM[1]SZ[9]KM[7]RU[Chinese];B[ee];W[cc];B[gg])"


def answers(lines, **kwargs) -> list[str]:
    """The `=` / `?` answer to each line (the first line of each response)."""
    engine, out, _ = make_engine(**kwargs)
    feed(engine, lines)
    engine.stop_background()
    blocks = [block for block in out.getvalue().split("\n\n") if block]
    assert len(blocks) == len(lines)
    return blocks


def marks(lines) -> list[str]:
    return [block[0] for block in answers(lines)]


@pytest.mark.parametrize("setup", [
    "clear_board", "boardsize 7", "set_position b C3 w E5", "set_position", "fixed_handicap 2",
    "place_free_handicap 2", "set_free_handicap C3 G7", "set_free_handicap",
])
def test_setup_commands_leave_nothing_to_undo(setup):
    # The handicap commands need an empty board: the game so far is one pass.
    lines = ["boardsize 9", "play b E5", "undo", "play b pass", setup, "undo"]
    assert marks(lines) == ["=", "=", "=", "=", "=", "?"]


def test_boardsize_with_the_same_size_keeps_the_game():
    got = marks(["boardsize 9", "play b E5", "boardsize 9", "undo", "undo"])
    assert got == ["=", "=", "=", "=", "?"]


def test_set_free_handicap_without_vertices_hands_white_an_empty_board():
    blocks = answers(["boardsize 9", "play b pass", "set_free_handicap", "undo", "showboard"])
    assert [b[0] for b in blocks] == ["=", "=", "=", "?", "="]
    assert blocks[3] == "? cannot undo"
    assert "Next player: White" in blocks[4]


def test_a_failed_setup_keeps_the_moves():
    got = marks(["boardsize 9", "play b E5", "set_free_handicap C3", "fixed_handicap 2",
                 "set_position b E5 b E5", "fixed_handicap 1", "undo", "undo"])
    assert got == ["=", "=", "?", "?", "?", "?", "=", "?"]


def test_undo_after_loadsgf_takes_back_the_file_moves(tmp_path):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(GAME_SGF)
    lines = [f"loadsgf {sgf}", "undo", "undo", "undo", "undo",
             f"loadsgf {sgf} 2", "undo", "undo",
             f"loadsgf {sgf}", "clear_board", "undo"]
    assert marks(lines) == ["=", "=", "=", "=", "?", "=", "=", "?", "=", "=", "?"]


def test_a_failed_loadsgf_keeps_the_game(tmp_path):
    got = marks(["boardsize 9", "play b E5", f"loadsgf {tmp_path / 'missing.sgf'}", "undo", "undo"])
    assert got == ["=", "=", "?", "=", "?"]


def test_undo_replays_under_the_current_rules_and_komi():
    blocks = answers(["boardsize 9", "komi 0.5", "play b E5", "play w C3", "kata-set-rules japanese", "undo",
                      "get_komi", "kata-get-rules"])
    assert blocks[5] == "= " and blocks[6] == "= 0.5"
    assert '"scoring":"TERRITORY"' in blocks[7]


@pytest.mark.parametrize("line, expected", [
    ("known_command  play", "? Expected single argument for known_command but got ' play'"),
    ("known_command play  ", "= true"),
    ("known_command\tplay", "= true"),
    ("known_command play", "= true"),
])
def test_known_command_splits_on_single_spaces_like_katago(line, expected):
    assert answers([line]) == [expected]


class _CountingSearcher:
    """Wraps the real Searcher to count how often the position was set afresh."""

    def __init__(self, inner, counts):
        self._inner, self._counts = inner, counts

    def set_position(self, state):
        self._counts["fresh"] += 1
        return self._inner.set_position(state)

    def __getattr__(self, name):
        return getattr(self._inner, name)


def _fresh_tree_count(lines) -> int:
    """How many searches after the first started from a fresh tree (the real search, rollouts)."""
    engine, out, _ = make_engine(override="maxVisits=20,searchRandSeed=undo", scripted=False)
    feed(engine, ["boardsize 7", "play b D4", "kata-search w"])
    counts = {"fresh": 0}
    engine.bot._searcher = _CountingSearcher(engine.bot._searcher, counts)
    feed(engine, lines)
    assert "?" not in "".join(line[:1] for line in out.getvalue().split("\n\n") if line)
    return counts["fresh"]


def test_undo_starts_a_fresh_search_tree():
    # Without undo the tree follows the game; after undo and the same move again KataGo's tree is new.
    assert _fresh_tree_count(["play w C3", "kata-search b"]) == 0
    assert _fresh_tree_count(["play w C3", "kata-search b", "undo", "play w C3", "kata-search b"]) == 1
    assert _fresh_tree_count(["kata-set-rules japanese", "kata-set-rules chinese", "kata-search w"]) == 1
