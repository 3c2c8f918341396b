"""Start and hint positions for self-play: KataGo's PositionSample lines, unique SGF positions, weighted draws,
loading errors, and games that start from the drawn positions."""
from __future__ import annotations

import json
import math
import random
from collections import Counter
from pathlib import Path

import pytest

from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import KoRule, Rules
from katacli.game.sgf import SgfError
from katacli.game.sgf_variations import read_sgf_tree
from katacli.selfplay.position_pools import (
    PositionLoadError,
    StartPositionSettings,
    WeightedPositions,
    load_position_pools,
)
from katacli.selfplay.sgf_positions import ExcludesError, read_excludes, unique_positions
from katacli.selfplay.start_positions import PositionLineError, PositionSample

E = 0


def sample(**changes) -> PositionSample:
    base = dict(x_size=3, y_size=3, stones=((BLACK, E, E), (E, WHITE, E), (E, E, E)), next_player=BLACK,
                moves=((BLACK, (0, 2)), (WHITE, None)), initial_turn_number=2)
    base.update(changes)
    return PositionSample(**base)


# ---------------------------------------------------------------------------- JSON lines

def test_json_line_is_katago_format():
    line = sample().to_json_line()
    # KataGo's nlohmann::json: keys sorted, no spaces, weight always written, metadata / trainingWeight
    # only when set.
    assert line == ('{"board":"X../.O./.../","hintLoc":"null","initialTurnNumber":2,"moveLocs":["A1","pass"],'
                    '"movePlas":["B","W"],"nextPla":"B","weight":1.0,"xSize":3,"ySize":3}')


@pytest.mark.parametrize("changes", [
    {},
    {"has_hint": True, "hint_move": (2, 0)},
    {"has_hint": True, "hint_move": None},            # a pass hint
    {"weight": 0.25, "metadata": "game 12 branch 3", "training_weight": 0.36},
    {"moves": (), "next_player": WHITE, "initial_turn_number": 0},
    {"x_size": 4, "y_size": 2, "stones": ((E, E, E, BLACK), (WHITE, E, E, E)), "moves": ((BLACK, (3, 1)),)},
])
def test_json_line_round_trip(changes):
    s = sample(**changes)
    assert PositionSample.from_json_line(s.to_json_line()) == s


def test_reads_a_katago_line_with_optional_fields_left_out():
    # Built from the documented format: coordinate labels, spaced stones, row numbers, '' as "no hint".
    line = json.dumps({"xSize": 5, "ySize": 3, "board": "A B C D E/3 X . . . O/2 . . x . ./1 . o . . ./",
                       "nextPla": "W", "moveLocs": ["E1", "C3"], "movePlas": ["W", "B"], "initialTurnNumber": 7,
                       "hintLoc": "''"})
    s = PositionSample.from_json_line(line)
    assert s.stones == ((BLACK, E, E, E, WHITE), (E, E, BLACK, E, E), (E, WHITE, E, E, E))
    assert s.moves == ((WHITE, (4, 2)), (BLACK, (2, 0))) and s.next_player == WHITE
    assert not s.has_hint and s.weight == 1.0 and s.training_weight == 1.0 and s.metadata == ""
    assert s.current_turn_number == 9
    assert PositionSample.from_json_line(line.replace("''", "d2")).hint_move == (3, 1)


@pytest.mark.parametrize("line, message", [
    ("{not json", "not JSON"),
    ("[1, 2]", "not a JSON object"),
    ('{"xSize":3,"ySize":3}', "missing or mistyped"),
    ('{"xSize":"3","ySize":3,"board":"","nextPla":"B","moveLocs":[],"movePlas":[],"initialTurnNumber":0,'
     '"hintLoc":"null"}', "mistyped field 'xSize'"),
    ('{"xSize":3,"ySize":3,"board":"X../...","nextPla":"B","moveLocs":[],"movePlas":[],"initialTurnNumber":0,'
     '"hintLoc":"null"}', "2 rows"),
    ('{"xSize":3,"ySize":3,"board":"X?./.../...","nextPla":"B","moveLocs":[],"movePlas":[],'
     '"initialTurnNumber":0,"hintLoc":"null"}', "character"),
    ('{"xSize":3,"ySize":3,"board":".../.../...","nextPla":"B","moveLocs":["A1"],"movePlas":[],'
     '"initialTurnNumber":0,"hintLoc":"null"}', "movePlas"),
    ('{"xSize":3,"ySize":3,"board":".../.../...","nextPla":"B","moveLocs":["Z9"],"movePlas":["B"],'
     '"initialTurnNumber":0,"hintLoc":"null"}', "Vertex .Z9. is off"),
    ('{"xSize":3,"ySize":3,"board":"XO./O../...","nextPla":"B","moveLocs":[],"movePlas":[],'
     '"initialTurnNumber":0,"hintLoc":"null"}', "without liberties"),
    ('{"xSize":3,"ySize":3,"board":".../.../...","nextPla":"B","moveLocs":[],"movePlas":[],'
     '"initialTurnNumber":0,"hintLoc":"null","trainingWeight":7}', "trainingWeight"),
    ('{"xSize":25,"ySize":3,"board":"","nextPla":"B","moveLocs":[],"movePlas":[],'
     '"initialTurnNumber":0,"hintLoc":"null"}', "not supported"),
])
def test_bad_lines_say_what_is_wrong(line, message):
    with pytest.raises(PositionLineError, match=message):
        PositionSample.from_json_line(line)


# ---------------------------------------------------------------------------- unique SGF positions

def positions_of(*sgfs: str) -> list[PositionSample]:
    seen: set = set()
    found: list[PositionSample] = []
    for text in sgfs:
        unique_positions(read_sgf_tree(text.encode()), seen, found.append)
    return found


def test_every_variation_and_transpositions_once():
    # Root, a, ab, abc; then c, cb, and cba is abc again (a transposition); then the second file adds one.
    found = positions_of("(;SZ[5](;B[aa];W[bb];B[cc])(;B[cc];W[bb];B[aa]))", "(;SZ[5];B[aa];W[bb];B[dd])")
    assert len(found) == 7
    assert [len(s.moves) for s in found] == [0, 1, 2, 3, 1, 2, 3]
    assert all(s.initial_turn_number == 0 for s in found)
    assert found[-1].moves[-1] == (BLACK, (3, 3))


def test_samples_keep_five_moves_of_history():
    moves = "".join(f";{'BW'[i % 2]}[{c}a]" for i, c in enumerate("abcdefg"))
    last = positions_of(f"(;SZ[7]{moves})")[-1]
    assert len(last.moves) == 5 and last.initial_turn_number == 2 and last.current_turn_number == 7
    # The board is the one five moves back: only the first two stones.
    assert last.stones[0][:3] == (BLACK, WHITE, E) and last.next_player == BLACK


def test_white_first_on_an_empty_board_is_colour_flipped():
    found = positions_of("(;SZ[5];W[cc];B[dd])")
    assert found[1].moves == ((BLACK, (2, 2)),) and found[2].moves == ((BLACK, (2, 2)), (WHITE, (3, 3)))


def test_setup_stones_restart_the_history():
    found = positions_of("(;SZ[5];B[aa];W[bb];AB[cc][dd]PL[W];W[ee])")
    setup, after = found[-2], found[-1]
    assert setup.moves == () and setup.next_player == WHITE
    # 2 moves, plus one for the 2 stones placed (half a turn each); at least the 4 stones on the board.
    assert setup.initial_turn_number == 4
    assert setup.stones[2][2] == BLACK and after.moves == ((WHITE, (4, 4)),)


def test_illegal_move_makes_the_file_unreadable_but_keeps_what_came_before():
    seen: set = set()
    found: list = []
    with pytest.raises(SgfError, match="bad.sgf: illegal move W A5 at turn 1"):
        unique_positions(read_sgf_tree(b"(;SZ[5];B[aa];W[aa])", file_name="bad.sgf"), seen, found.append)
    assert len(found) == 2


def test_excludes_name_files_by_katago_hash(tmp_path):
    data = b"(;SZ[5];B[aa])"
    tree = read_sgf_tree(data)
    excludes = tmp_path / "excl.txt"
    excludes.write_text(f"# games seen in testing\n{tree.file_hash.upper()}  # first\n\n")
    assert read_excludes([str(excludes)]) == {tree.file_hash}
    excludes.write_text("1234\n")
    with pytest.raises(ExcludesError, match="excl.txt line 1"):
        read_excludes([str(excludes)])


# ---------------------------------------------------------------------------- weighted draws

def test_draws_follow_weight_and_turn_lambda():
    turns_and_weights = ((0, 1.0), (1, 1.0), (2, 3.0), (4, 0.0))
    samples = [sample(moves=(), initial_turn_number=turn, weight=w) for turn, w in turns_and_weights]
    lam = 0.7
    pool = WeightedPositions(samples, lam, "start positions")
    rng = random.Random(5)
    draws = 40000
    counts = Counter(pool.choose(rng).initial_turn_number for _ in range(draws))
    expected = [math.exp(-turn * lam) * w for turn, w in turns_and_weights]
    total = sum(expected)
    for (turn, _), e in zip(turns_and_weights, expected):
        share = e / total
        # Within five binomial standard deviations.
        assert abs(counts[turn] / draws - share) <= 5 * math.sqrt(share * (1 - share) / draws) + 1e-12
    assert counts[4] == 0
    ess = total * total / sum(e * e for e in expected)
    assert pool.effective_sample_size == pytest.approx(ess)


def test_a_lambda_that_overflows_is_refused():
    with pytest.raises(PositionLoadError, match="startPosesTurnWeightLambda"):
        WeightedPositions([sample(initial_turn_number=400)], -10.0, "start positions")


# ---------------------------------------------------------------------------- loading

def sgf_dir(tmp_path, *games: str):
    directory = tmp_path / "sgfs"
    (directory / "sub").mkdir(parents=True)
    for i, text in enumerate(games):
        (directory / ("sub" if i % 2 else "") / f"g{i}.sgf").write_text(text)
    (directory / "notes.txt").write_text("not a game")
    return directory


def test_loads_sgf_dirs_with_excludes_and_counts_bad_files(tmp_path):
    directory = sgf_dir(tmp_path, "(;SZ[5];B[aa];W[bb])", "(;SZ[5];B[cc])", "(;SZ[5];B[aa];W[aa])", "(;SZ[19];B[aa])")
    excluded = read_sgf_tree((directory / "sub" / "g1.sgf").read_bytes()).file_hash
    (tmp_path / "excl.txt").write_text(excluded + "\n")
    settings = StartPositionSettings(sgf_dirs=(str(directory),), sgf_excludes=(str(tmp_path / "excl.txt"),),
                                     start_poses_prob=1.0)
    pools = load_position_pools(settings, max_len=9, rng=random.Random(1))
    # g0: 3 positions; g1 excluded; g2: root and B aa already seen, then fails; g3: 19x19, too large.
    assert len(pools.start) == 3 and pools.start_prob == 1.0
    log = "\n".join(pools.log_lines)
    assert "Found 4 sgf files" in log and "Excluded 1/4" in log and "Invalid SGF" in log and "g2.sgf" in log
    assert "Skipped 2 positions larger than dataBoardLen 9" in log


def test_no_positions_switch_the_logic_off_with_a_warning(tmp_path):
    directory = sgf_dir(tmp_path, "(;SZ[5];B[aa])")
    settings = StartPositionSettings(sgf_dirs=(str(directory),), start_poses_prob=0.5, load_prob=0.0)
    pools = load_position_pools(settings, max_len=9)
    assert pools.start is None and pools.start_prob == 0.0
    assert pools.warnings == ["No start positions loaded, disabling start position logic"]
    assert pools.choose(random.Random(1)) is None


def test_hint_files_skip_and_count_bad_lines(tmp_path):
    hints = tmp_path / "hints"
    hints.mkdir()
    good = sample(has_hint=True, hint_move=(2, 2)).to_json_line()
    (hints / "a.hintposes.txt").write_text(f"{good}\n\n{{broken\n")
    (hints / "b.bookposes.txt").write_text(sample(weight=2.0).to_json_line() + "\n")
    (hints / "c.txt").write_text("{ignored: not a position file name}\n")
    pools = load_position_pools(StartPositionSettings(hint_dirs=(str(hints),), hint_poses_prob=1.0), max_len=9)
    assert len(pools.hints) == 2 and pools.hint_prob == 1.0
    assert "Skipped 1 unreadable lines of hint position files" in pools.log_lines
    assert any("a.hintposes.txt line 3" in line for line in pools.log_lines)


@pytest.mark.parametrize("make, key, message", [
    (lambda tmp: StartPositionSettings(sgf_dirs=(str(tmp / "missing"),)), "startPosesFromSgfDir",
     "missing does not exist"),
    (lambda tmp: StartPositionSettings(hint_dirs=(str(tmp / "f.txt"),)), "hintPosesDir", "f.txt is not a directory"),
    (lambda tmp: StartPositionSettings(hint_dirs=(str(tmp),)), "hintPosesDir", "cannot read .*gone.hintposes.txt"),
    (lambda tmp: StartPositionSettings(sgf_dirs=(str(tmp),)), "startPosesFromSgfDir", "gone.sgf"),
    (lambda tmp: StartPositionSettings(sgf_dirs=(str(tmp / "empty"),), sgf_excludes=(str(tmp / "no.txt"),)),
     "startPosesSgfExcludes", "cannot read exclude file .*no.txt"),
])
def test_unreadable_directories_and_files_are_named(tmp_path, make, key, message):
    (tmp_path / "f.txt").write_text("")
    (tmp_path / "empty").mkdir()
    (tmp_path / "gone.hintposes.txt").symlink_to(tmp_path / "nowhere")
    (tmp_path / "gone.sgf").symlink_to(tmp_path / "nowhere")
    with pytest.raises(PositionLoadError, match=f"{key}: .*{message}") as info:
        load_position_pools(make(tmp_path), max_len=9)
    assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------- games from samples

def test_game_state_replays_moves_and_drops_the_hint_at_an_illegal_move():
    rules = Rules(ko=KoRule.POSITIONAL).to_core_tuple()
    s = sample(moves=((BLACK, (0, 2)), (WHITE, (2, 0))), has_hint=True, hint_move=(2, 2))
    state, hint_kept = s.game_state(rules)
    assert hint_kept and state.next_player == BLACK and state.color_at((2, 0)) == WHITE
    blocked = sample(moves=((BLACK, (0, 2)), (WHITE, (0, 0))), has_hint=True, hint_move=(2, 2))  # occupied
    state, hint_kept = blocked.game_state(rules)
    assert not hint_kept and len(state.moves) == 1


# ---------------------------------------------------------------------------- against KataGo

KATAGO_CASES = Path(__file__).resolve().parent / "start_positions"


def test_sgf_positions_match_katago_samplesgfs():
    """start_positions/*.sgf (variations and a transposition, White first, a black pass, setup stones and PL
    mid-game, captures, double moves) against start_positions/katago_samplesgfs.startposes.txt, written by
    KataGo 1.17.2: `katago samplesgfs -sgfdir start_positions -outdir out -sample-prob 1
    -turn-weight-lambda 0 -flip-if-pass -for-testing` (the same iterAllUniquePositions self-play uses)."""
    lines = (KATAGO_CASES / "katago_samplesgfs.startposes.txt").read_text().splitlines()
    katago = [PositionSample.from_json_line(line) for line in lines]
    # Each KataGo line reads back and is written again byte for byte.
    assert [s.to_json_line() for s in katago] == lines
    seen: set = set()
    ours: list[PositionSample] = []
    for path in sorted(KATAGO_CASES.glob("*.sgf")):
        unique_positions(read_sgf_tree(path.read_bytes(), file_name=str(path)), seen, ours.append)
    assert len(ours) == len(katago) == 45
    assert Counter(ours) == Counter(katago)
