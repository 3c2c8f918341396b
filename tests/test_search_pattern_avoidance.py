"""Pattern avoidance with KataGo 1.17.2's semantics: the local pattern hash (search_patterns), its
bonus table and how the search applies it (avoidRepeatedPatternUtility), the SGF shapes
(avoidSgf<N>Pattern*), GTP's saved moves (autoAvoidRepeat*) and the errors for unusable files."""
import os
import random
import subprocess

import pytest

from katacli._core import search_results as sr
from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli.config import Config
from katacli.search import Searcher
from katacli.search.auto_pattern_avoidance import AutoAvoidSettings, load_and_prune
from katacli.search.pattern_avoidance import (
    PatternAvoidanceError, PatternBonusTable, SgfPatternSet, load_sgf_pattern_table, move_pattern_hash,
    sgf_pattern_sets_from_config,
)
from support.fakes import MaterialEvaluator
from support.gtp import python_cli
from test_search_core import BLACK, WHITE, plain_params

NO_PATTERN = (0, 0)
UTILITY = 0.5


# ---- the hash ---------------------------------------------------------------------------------------
def _sym_xy(x, y, x_size, y_size, symmetry):
    """KataGo's symmetry of a point: flip y (bit 1), flip x (bit 2), then transpose (bit 4)."""
    if symmetry & 2:
        x = x_size - 1 - x
    if symmetry & 1:
        y = y_size - 1 - y
    return (y, x) if symmetry & 4 else (x, y)


def _transformed(board, symmetry, flip_colors):
    x_size, y_size = board.x_size, board.y_size
    out = GoBoard(y_size, x_size) if symmetry & 4 else GoBoard(x_size, y_size)
    for x in range(x_size):
        for y in range(y_size):
            c = board.color_at((x, y))
            if c:
                out.set_stone(_sym_xy(x, y, x_size, y_size, symmetry), 3 - c if flip_colors else c)
    return out


@pytest.mark.parametrize("x_size,y_size", [(9, 9), (19, 19), (13, 7), (5, 11)])
def test_a_symmetry_or_colour_swap_of_the_table_entry_is_the_hash_of_the_transformed_position(x_size, y_size):
    rng = random.Random(x_size * 100 + y_size)
    for _ in range(12):
        board = GoBoard(x_size, y_size)
        for _ in range(rng.randint(0, x_size * y_size // 2)):
            p, c = (rng.randrange(x_size), rng.randrange(y_size)), rng.choice([BLACK, WHITE])
            if board.is_legal(p, c):
                board.play(p, c)
        board = _transformed(board, 0, False)   # no ko point: set stones only
        move = rng.choice([(x, y) for x in range(x_size) for y in range(y_size) if board.color_at((x, y)) == 0])
        pla = rng.choice([BLACK, WHITE])
        for symmetry in range(8):
            for flip in (False, True):
                other = _transformed(board, symmetry, flip)
                expected = move_pattern_hash(other, _sym_xy(*move, x_size, y_size, symmetry), 3 - pla if flip else pla)
                assert move_pattern_hash(board, move, pla, symmetry, flip) == expected


def _diagram(*rows):
    return GoBoard.from_diagram("\n".join(rows))


EMPTY_9 = ["........."] * 9


def _with(rows, x, y, c):
    rows = list(rows)
    rows[y] = rows[y][:x] + c + rows[y][x + 1:]
    return rows


@pytest.mark.parametrize("name,board_a,move_a,pla_a,board_b,move_b,pla_b,same", [
    # Plain identity: nothing changes.
    ("same position", EMPTY_9, (2, 2), BLACK, EMPTY_9, (2, 2), BLACK, True),
    # The move's place is part of the hash: the same empty surroundings elsewhere differ ...
    ("other place, same shape", EMPTY_9, (4, 4), BLACK, EMPTY_9, (4, 3), BLACK, False),
    # ... but a symmetric place on a symmetric board is a different hash too (lookups are exact; only
    # table entries are added under all symmetries).
    ("mirrored place", EMPTY_9, (2, 2), BLACK, EMPTY_9, (6, 2), BLACK, False),
    ("player", EMPTY_9, (4, 4), BLACK, EMPTY_9, (4, 4), WHITE, False),
    ("stone inside the 9x9 window", EMPTY_9, (4, 4), BLACK, _with(EMPTY_9, 8, 8, "X"), (4, 4), BLACK, False),
    ("stone colour inside the window", _with(EMPTY_9, 8, 8, "O"), (4, 4), BLACK, _with(EMPTY_9, 8, 8, "X"), (4, 4),
     BLACK, False),
    ("stone outside the window", EMPTY_9, (0, 0), BLACK, _with(EMPTY_9, 5, 5, "X"), (0, 0), BLACK, True),
])
def test_what_the_hash_sees(name, board_a, move_a, pla_a, board_b, move_b, pla_b, same):
    a = move_pattern_hash(_diagram(*board_a), move_a, pla_a)
    b = move_pattern_hash(_diagram(*board_b), move_b, pla_b)
    assert (a == b) == same, name


def test_atari_marks_count_even_when_the_liberty_lies_outside_the_window():
    # A black stone at the window's left edge, surrounded inside it; its last liberty is outside.
    board = GoBoard(19, 19)
    for xy, c in [((6, 10), BLACK), ((6, 9), WHITE), ((6, 11), WHITE), ((7, 10), WHITE)]:
        board.set_stone(xy, c)
    in_atari = move_pattern_hash(board, (10, 10), BLACK)
    board.set_stone((5, 10), BLACK)   # outside the window: joins the chain and gives it liberties
    assert move_pattern_hash(board, (10, 10), BLACK) != in_atari
    board.set_stone((5, 10), 0)
    board.set_stone((4, 4), BLACK)    # outside the window, unrelated
    assert move_pattern_hash(board, (10, 10), BLACK) == in_atari


def test_board_size_is_part_of_the_hash_and_edges_clip_the_window():
    # A corner move sees only the board: the same empty corner on 9x9 and 13x13 still differs by size.
    assert move_pattern_hash(GoBoard(9, 9), (0, 0), BLACK) != move_pattern_hash(GoBoard(13, 13), (0, 0), BLACK)


def test_passes_and_ko_captures_have_no_pattern():
    assert move_pattern_hash(GoBoard(9, 9), None, BLACK) == NO_PATTERN
    board = _diagram(".XO......", "XO.O.....", ".XO......", *EMPTY_9[3:])
    board.play((2, 1), BLACK)            # captures the white stone at (1, 1): a ko
    assert move_pattern_hash(board, (1, 1), WHITE) == NO_PATTERN   # White's retake would be a ko capture
    assert move_pattern_hash(board, (8, 8), WHITE) != NO_PATTERN


def test_table_counts_each_shape_once_per_game_and_signs_by_player():
    table, seen = PatternBonusTable(), PatternBonusTable()
    board = GoBoard(9, 9)
    table.add_move(board, (4, 3), BLACK, UTILITY, seen, True)
    table.add_move(board, (4, 3), BLACK, UTILITY, seen, True)   # again in the same game: ignored
    assert table.get(board, (4, 3), BLACK) == UTILITY
    assert table.get(board, (4, 5), BLACK) == UTILITY           # a mirror image
    assert table.get(board, (4, 3), WHITE) == -UTILITY          # the colour-swapped shape, White's penalty
    assert table.get(board, (4, 2), BLACK) == 0.0


# ---- the search -------------------------------------------------------------------------------------
def _corner_game():
    """19x19: Black took the lower right corner point, White answered far away; Black to move."""
    state = GameState(19)
    state.play((18, 18), BLACK)
    state.play((3, 15), WHITE)
    return state


def _root_moves(state, utility, table=None, visits=400):
    searcher = Searcher(state, plain_params(avoid_repeated_pattern_utility=utility), MaterialEvaluator(), seed=3)
    searcher.set_external_pattern_table(table)
    searcher.run(max_visits=visits)
    return {d["move"]: d for d in sr.analysis_data(searcher.tree, 1)}, searcher.choose_move()


def test_repeating_a_shape_of_this_game_costs_utility_and_changes_the_move():
    # The upper left corner point repeats Black's first move's shape (a symmetry of it, empty around).
    plain, plain_move = _root_moves(_corner_game(), 0.0)
    avoiding, avoiding_move = _root_moves(_corner_game(), UTILITY)
    assert max(plain, key=lambda m: plain[m]["visits"]) == (0, 0)
    assert avoiding[(0, 0)]["visits"] < plain[(0, 0)]["visits"] / 10
    assert avoiding_move != plain_move
    # White's utility of the repeat rises by the penalty (Black's falls).
    assert avoiding[(0, 0)]["utility"] - plain[(0, 0)]["utility"] == pytest.approx(UTILITY, abs=0.05)


def test_the_opponents_repeats_are_not_penalised():
    state = _corner_game()
    state.play((15, 3), BLACK)
    # White to move: White's only earlier shape was (3, 15), Black's corner move is not White's to avoid.
    plain, _ = _root_moves(state, 0.0)
    avoiding, _ = _root_moves(state, UTILITY)
    assert avoiding[(0, 0)]["utility"] == pytest.approx(plain[(0, 0)]["utility"])


def test_an_external_table_steers_both_ways():
    board = _corner_game().board()
    penalty, seen = PatternBonusTable(), PatternBonusTable()
    penalty.add_move(board, (1, 0), BLACK, UTILITY, seen, True)
    plain, _ = _root_moves(_corner_game(), 0.0)
    avoiding, _ = _root_moves(_corner_game(), 0.0, penalty)
    assert avoiding[(1, 0)]["visits"] < plain[(1, 0)]["visits"]
    favour, seen = PatternBonusTable(), PatternBonusTable()
    favour.add_move(board, (2, 0), BLACK, -UTILITY, seen, True)   # negative utility: attract
    attracted, move = _root_moves(_corner_game(), 0.0, favour)
    assert move == (2, 0)
    assert plain[(2, 0)]["visits"] < attracted[(2, 0)]["visits"]


# ---- SGF directories --------------------------------------------------------------------------------
def _sgf(path, moves, pb="alice", pw="bob", size=9, comment_at=None):
    nodes = "".join(f";{c}[{m}]" + ("C[%SKIP%]" if i == comment_at else "") for i, (c, m) in enumerate(moves))
    path.write_text(f"(;GM[1]FF[4]SZ[{size}]PB[{pb}]PW[{pw}]{nodes})")
    return path


def _aged(path, seconds_ago):
    t = 1_700_000_000 - seconds_ago
    os.utime(path, (t, t))


def _table(tmp_path, log=None, **kw):
    patterns = SgfPatternSet.of((str(tmp_path),), UTILITY, **kw)
    return load_sgf_pattern_table([patterns], (log if log is not None else []).append)


EMPTY = GoBoard(9, 9)


def test_newest_files_first_each_older_one_weighted_by_lambda(tmp_path):
    for name, move, age in [("new", "ee", 0), ("mid", "cb", 10), ("old", "db", 20)]:
        _aged(_sgf(tmp_path / f"{name}.sgf", [("B", move)]), age)
    table = _table(tmp_path, decay=0.5)
    assert [table.get(EMPTY, m, BLACK) for m in [(4, 4), (2, 1), (3, 1)]] == [UTILITY, UTILITY / 2, UTILITY / 4]
    limited = _table(tmp_path, max_files=2)
    assert [limited.get(EMPTY, m, BLACK) for m in [(4, 4), (2, 1), (3, 1)]] == [UTILITY, UTILITY, 0.0]


def test_shape_count_matches_katagos_avoidcorners_run(tmp_path):
    # KataGo's tests/results/gtp/avoidcorners.log: a 4-4, a 4-3, a 3-3 and a 4-5 opening move give
    # "Added 48 shapes to penalize repeats for bot 0 from tests/data/cornermoves.sgf".
    path = tmp_path / "cornermoves.sgf"
    path.write_text("(;GM[1]FF[4]SZ[19]KM[6.5];B[pd];W[pq];B[cq];W[de])")
    log = []
    table = load_sgf_pattern_table([SgfPatternSet.of((str(path),), 0.3, decay=0.0, max_files=100)],
                                   log.append)
    assert log == [f"Added 48 shapes to penalize repeats for bot 0 from {path}"] and len(table) == 48
    empty = GoBoard(19, 19)
    penalised = {(15, 3), (3, 15), (15, 2), (2, 15), (2, 2), (16, 16), (3, 4), (4, 3)}
    for xy in penalised:
        assert table.get(empty, xy, BLACK) == 0.3 and table.get(empty, xy, WHITE) == -0.3
    assert table.get(empty, (4, 16), BLACK) == 0.0   # E3, what KataGo's black played there


def test_allowed_names_and_min_turn_number_and_skip_comments(tmp_path):
    _sgf(tmp_path / "g.sgf", [("B", "ee"), ("W", "cb"), ("B", "db"), ("W", "fb")], comment_at=3)
    after_b1 = _diagram(*_with(EMPTY_9, 4, 4, "X"))
    only_bob = _table(tmp_path, allowed_names=("bob",))
    assert only_bob.get(EMPTY, (4, 4), BLACK) == 0.0
    assert only_bob.get(after_b1, (2, 1), WHITE) == -UTILITY       # a penalty for White
    late = _table(tmp_path, min_turn_number=3)                     # moves 3 and later only
    assert late.get(EMPTY, (4, 4), BLACK) == 0.0 and late.get(after_b1, (2, 1), WHITE) == 0.0
    board = _diagram(*_with(_with(EMPTY_9, 4, 4, "X"), 2, 1, "O"))
    assert late.get(board, (3, 1), BLACK) == UTILITY
    everything = _table(tmp_path)                                  # the 4th move is marked %SKIP%
    board.play((3, 1), BLACK)
    assert everything.get(board, (5, 1), WHITE) == 0.0


def test_a_broken_file_is_skipped_and_logged_an_illegal_move_stops(tmp_path):
    _sgf(tmp_path / "good.sgf", [("B", "ee")])
    (tmp_path / "broken.sgf").write_text("(;GM[1]SZ[9];B[ee")
    log = []
    table = _table(tmp_path, log=log)
    assert table.get(EMPTY, (4, 4), BLACK) == UTILITY
    assert any(line.startswith(f"Invalid SGF {tmp_path / 'broken.sgf'}") for line in log)
    _sgf(tmp_path / "illegal.sgf", [("B", "ee"), ("W", "ee")])
    with pytest.raises(PatternAvoidanceError, match="illegal.sgf"):
        _table(tmp_path)
    with pytest.raises(PatternAvoidanceError, match="does not exist"):
        _table(tmp_path / "missing")


def test_config_groups_and_bot_indices():
    cfg = Config.from_text("avoidSgfPatternUtility = 0.1\navoidSgfPatternDirs = a\navoidSgfPatternLambda = 0.9\n"
                           "avoidSgf2PatternUtility = 0.2\navoidSgf2PatternDirs = b,c\n"
                           "avoidSgf2PatternUtility1 = 0.3\navoidSgf3PatternDirs = unused\n", mode="gtp")
    bot0 = sgf_pattern_sets_from_config(cfg, 0)
    assert [(s.dirs, s.utility, s.decay) for s in bot0] == [(("a",), 0.1, 0.9), (("b", "c"), 0.2, 1.0)]
    assert [s.utility for s in sgf_pattern_sets_from_config(cfg, 1)] == [0.1, 0.3]
    with pytest.raises(PatternAvoidanceError, match="avoidSgfPatternDirs"):
        sgf_pattern_sets_from_config(Config.from_text("avoidSgfPatternUtility = 0.1\n", mode="gtp"))


# ---- autoAvoidRepeat --------------------------------------------------------------------------------
AUTO_KEYS = ("autoAvoidRepeatUtility=0.5,autoAvoidRepeatLambda=1.0,autoAvoidRepeatMinTurnNumber=0,"
             "autoAvoidRepeatMaxTurnNumber=100,autoAvoidRepeatMaxPoses=1000,autoAvoidRepeatSaveChunkSize=1")


def _gtp(*overrides, commands="boardsize 9\nclear_board\ngenmove b\nquit\n"):
    override = ",".join(("maxVisits=60,numSearchThreads=1,searchRandSeed=patterns",) + overrides)
    return subprocess.run(python_cli() + ["gtp", "-model", "rollouts", "-override-config", override],
                          input=commands, capture_output=True, text=True, timeout=300)


def _moves(done):
    return [line[2:] for line in done.stdout.splitlines() if line.startswith("= ") and len(line) > 2]


@pytest.mark.subprocess
def test_auto_avoid_repeat_saves_moves_and_a_second_engine_avoids_them(tmp_path):
    auto = tmp_path / "auto"
    auto.mkdir()   # KataGo too needs the directory to exist at start-up
    first = _gtp(f"autoAvoidRepeatDir={auto}", AUTO_KEYS)
    assert first.returncode == 0, first.stderr
    saved = list((auto / "9x9").glob("*_poses.txt"))
    assert len(saved) == 1 and saved[0].name.endswith("_poses.txt") and len(saved[0].stem) == 16 + len("_poses")
    line = saved[0].read_text()
    assert line.startswith('{"board":".........') and f'"hintLoc":"{_moves(first)[0]}"' in line
    again_plain = _gtp()                       # the same engine without the saved moves plays the same
    assert _moves(again_plain) == _moves(first)
    second = _gtp(f"autoAvoidRepeatDir={auto}", AUTO_KEYS)
    assert second.returncode == 0, second.stderr
    assert _moves(second) != _moves(first)     # steered away from the shape it played before
    assert len(list((auto / "9x9").glob("*_poses.txt"))) == 2


@pytest.mark.subprocess
def test_auto_avoid_repeat_reloads_at_clear_board_after_a_full_chunk(tmp_path):
    # Chunks of one move: each clear_board saves the last genmove and reloads, so no opening repeats.
    done = _gtp(f"autoAvoidRepeatDir={tmp_path}", AUTO_KEYS,
                commands="boardsize 9\nclear_board\n" + "genmove b\nclear_board\n" * 3 + "quit\n")
    assert done.returncode == 0, done.stderr
    moves = _moves(done)
    assert len(moves) == 3 and len(set(moves)) == 3
    assert len(list((tmp_path / "9x9").glob("*_poses.txt"))) == 3


def test_auto_avoid_loading_prunes_beyond_max_poses_and_needs_its_settings(tmp_path):
    size_dir = tmp_path / "9x9"
    size_dir.mkdir()
    for i, (move, age) in enumerate([("E5", 0), ("C2", 10), ("D2", 20)]):
        path = size_dir / f"{i:016x}_poses.txt"
        path.write_text('{"board":"' + "........./" * 9 + f'","hintLoc":"{move}","initialTurnNumber":0,"moveLocs":[],'
                        '"movePlas":[],"nextPla":"B","weight":1.0,"xSize":9,"ySize":9}\n')
        _aged(path, age)
    keys = AUTO_KEYS.replace("autoAvoidRepeatLambda=1.0", "autoAvoidRepeatLambda=0.5").replace(",", "\n")
    cfg = Config.from_text(f"autoAvoidRepeatDir = {tmp_path}\n{keys}\nautoAvoidRepeatMaxPoses9x9 = 2\n", mode="gtp")
    log = []
    table = load_and_prune(AutoAvoidSettings.from_config(cfg), log.append)
    assert [table.get(EMPTY, m, BLACK) for m in [(4, 4), (2, 7)]] == [UTILITY, UTILITY / 2]
    assert sorted(p.name for p in size_dir.iterdir()) == [f"{0:016x}_poses.txt", f"{1:016x}_poses.txt"]
    with pytest.raises(PatternAvoidanceError, match="autoAvoidRepeatUtility was not specified"):
        load_and_prune(AutoAvoidSettings.from_config(Config.from_text(f"autoAvoidRepeatDir = {tmp_path}\n",
                                                                      mode="gtp")), log.append)


@pytest.mark.subprocess
def test_gtp_start_up_errors_are_one_line(tmp_path):
    (tmp_path / "illegal.sgf").write_text("(;GM[1]SZ[9];B[ee];W[ee])")
    done = _gtp(f"avoidSgfPatternDirs={tmp_path}", "avoidSgfPatternUtility=0.1", commands="name\nquit\n")
    assert done.returncode == 1 and done.stdout == ""
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: avoidSgfPatternDirs: ") and "illegal.sgf" in lines[0]
    missing = _gtp(f"autoAvoidRepeatDir={tmp_path / 'none'}", AUTO_KEYS, commands="name\nquit\n")
    assert missing.returncode == 1 and missing.stderr.strip().splitlines() == [
        f"error: autoAvoidRepeatDir: cannot read directory {tmp_path / 'none'}: No such file or directory"]
    # Only the folder set (gtp_example.cfg's commented keys are no defaults): KataGo stops later (at its first
    # save, or its next start); kata at once, rather than playing a game whose moves it then cannot save.
    bare = _gtp(f"autoAvoidRepeatDir={tmp_path}", commands="name\nquit\n")
    assert bare.returncode == 1 and bare.stdout == "" and bare.stderr.strip().splitlines() == [
        "error: autoAvoidRepeatUtility was not specified in the config (autoAvoidRepeatDir needs it)"]


@pytest.mark.subprocess
def test_auto_avoid_turn_limits_missing_for_the_size_played_are_an_error_the_user_sees(tmp_path):
    """The turn limits given for 19x19 only, a 9x9 game: the moves cannot be saved; said on stderr (KataGo
    stops with that error), not only in a log file, and the game goes on."""
    keys = AUTO_KEYS.replace("MinTurnNumber=0", "MinTurnNumber19x19=0").replace("MaxTurnNumber=100",
                                                                                 "MaxTurnNumber19x19=100")
    done = _gtp(f"autoAvoidRepeatDir={tmp_path}", keys, "logToStderr=false")
    assert done.returncode == 0 and len(_moves(done)) == 1
    assert "ERROR: autoAvoidRepeatMinTurnNumber was not specified in the config" in done.stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.needs_shared
def test_with_a_network_the_opening_leaves_the_avoided_corner_points(tmp_path):
    # KataGo's avoidcorners run: with its four corner moves avoided (utility 0.3), Black's first move on
    # an empty 19x19 board is none of the 4-4, 4-3, 3-3 or 4-5 points the plain search likes.
    import torch

    from katacli.nn.evaluator import NNEvaluator
    from support.paths import G170_B6, model_path

    path = tmp_path / "cornermoves.sgf"
    path.write_text("(;GM[1]FF[4]SZ[19];B[pd];W[pq];B[cq];W[de])")
    table = load_sgf_pattern_table([SgfPatternSet.of((str(path),), 0.3, decay=0.0)], [].append)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        evaluator = NNEvaluator.from_file(model_path(G170_B6), seed=0)
        # As KataGo's run: flatter root priors and a smaller utility stdev scale, so that other moves get tried.
        params = plain_params(max_visits=300, num_search_threads=1, root_policy_temperature=1.5,
                              root_policy_temperature_early=1.5, cpuct_utility_stdev_scale=0.4)
        chosen = {}
        for name, ext in (("plain", None), ("avoiding", table)):
            searcher = Searcher(GameState(19), params, evaluator, seed=5)
            searcher.set_external_pattern_table(ext)
            searcher.run()
            chosen[name] = searcher.choose_move()
    finally:
        torch.set_num_threads(old_threads)

    def corner_line(xy):   # the point's distance lines from the nearest edges, as (smaller, larger)
        x, y = xy
        return tuple(sorted((min(x, 18 - x) + 1, min(y, 18 - y) + 1)))

    avoided = {(4, 4), (3, 4), (3, 3), (4, 5)}
    assert corner_line(chosen["plain"]) in avoided
    assert corner_line(chosen["avoiding"]) not in avoided


def test_an_sgf_pattern_group_without_a_utility_is_not_read_and_warned_unused():
    # KataGo reads avoidSgfPattern* only when avoidSgfPatternUtility is set: the rest is "Unused key".
    from katacli.config import Config
    from katacli.search.pattern_avoidance import sgf_pattern_sets_from_config

    cfg = Config({"avoidSgfPatternDirs": "/tmp", "avoidSgfPatternLambda": "0.5"}, mode="gtp")
    assert sgf_pattern_sets_from_config(cfg) == []
    assert cfg.unused_keys() == ["avoidSgfPatternDirs", "avoidSgfPatternLambda"]
