"""`kata match` and `kata gatekeeper` games from KataGo's start and hint positions (startPosesFromSgfDir,
hintPosesDir and their companions, read at start-up by self-play's loader): games start there, a hint
position's turn studies the hint with four times the visits, and unreadable files stop the command at
start-up with one line naming them."""
from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from katacli.cli import app, normalize_argv
from katacli.config import Config, ConfigError
from katacli.game.sgf import load_sgf
from katacli.match.game import MatchBot, start_game
from katacli.match.settings import MatchSettings
from katacli.game.coords import BLACK as BLACK_PLAYER, WHITE as WHITE_PLAYER
from katacli.selfplay.searching import HINT_VISITS_FACTOR
from support.match import TINY_GAMES_CONFIG

VISITS = 8
BASE = TINY_GAMES_CONFIG + f"""maxMovesPerGame = 12
maxVisits = {VISITS}
numBots = 2
botName0 = r1
botName1 = r2
nnModelFile = rollouts
numGamesTotal = 4
"""
# A 5x5 game with two setup stones: every position drawn from it keeps them as the start board.
SOURCE_SGF = "(;GM[1]FF[4]SZ[5]KM[6.5]RU[Chinese]AB[aa][ee];W[cc];B[bd];W[db])"
SETUP_STONES = {(0, 0), (4, 4)}
# A hint position (KataGo's JSON line): 5x5, Black to move after two moves, hinted move A1.
HINT_LINE = ('{"board":"...../...../...../...../...../","hintLoc":"A1","initialTurnNumber":0,'
             '"moveLocs":["C3","D4"],"movePlas":["B","W"],"nextPla":"B","weight":1.0,"xSize":5,"ySize":5}')


def _positions(tmp_path: Path) -> tuple[Path, Path]:
    sgfs, hints = tmp_path / "sgfs-in", tmp_path / "hints"
    sgfs.mkdir()
    hints.mkdir()
    (sgfs / "source.sgf").write_text(SOURCE_SGF)
    (hints / "one.hintposes.txt").write_text(HINT_LINE + "\n")
    return sgfs, hints


def kata(*args: str):
    return CliRunner().invoke(app, normalize_argv(list(args)))


def test_match_games_start_from_the_sgf_positions(tmp_path):
    sgfs, _ = _positions(tmp_path)
    cfg = tmp_path / "m.cfg"
    cfg.write_text(BASE + f"startPosesFromSgfDir = {sgfs}\nstartPosesProb = 1.0\n")
    out = tmp_path / "games"
    done = kata("match", "-config", str(cfg), "-sgf-output-dir", str(out), "--json", "--seed", "3")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["games"] == 4
    source_moves = load_sgf(str(sgfs / "source.sgf")).moves
    for path in sorted(out.iterdir()):
        game = load_sgf(str(path))
        assert {xy for _, xy in game.setup} == SETUP_STONES, path.name  # the start board, not an empty one
        # The game goes on from a position along the source's moves.
        assert any(game.moves[:k] == source_moves[:k] and (k == len(game.moves) or k == len(source_moves)
                                                             or game.moves[k] != source_moves[k])
                   for k in range(len(source_moves) + 1))


def test_ordinary_games_without_the_keys():
    settings = MatchSettings.from_config(Config.from_text(BASE))
    assert settings.positions.start is None and settings.positions.hints is None
    start = start_game(settings, random.Random(1), *_bots(settings))
    assert not start.state.initial_stones() and not start.state.moves


def _bots(settings: MatchSettings) -> tuple[MatchBot, MatchBot]:
    return tuple(MatchBot(spec, None, random.Random(i)) for i, spec in enumerate(settings.bots))


def test_a_hint_position_is_studied_with_four_times_the_visits(tmp_path):
    _, hints = _positions(tmp_path)
    settings = MatchSettings.from_config(Config.from_text(BASE + f"hintPosesDir = {hints}\nhintPosesProb = 1.0\n"))
    black, white = _bots(settings)
    start = start_game(settings, random.Random(2), black, white)
    state = start.state
    assert [xy for _, xy in state.moves] == [(2, 2), (3, 1)] and start.hint_applies(state)
    _, _, _, plain_visits = white.choose(state.copy())   # the same position without the hint
    _, _, _, hint_visits = black.choose(state, (start.hint_move,))
    assert (plain_visits, hint_visits) == (VISITS, VISITS * HINT_VISITS_FACTOR)


@pytest.mark.parametrize("keys, named", [
    ("startPosesFromSgfDir = {missing}\nstartPosesProb = 1.0\n", "{missing}"),
    ("hintPosesDir = {missing}\nhintPosesProb = 1.0\n", "{missing}"),
    ("startPosesFromSgfDir = {sgfs}\nstartPosesProb = 1.0\nstartPosesSgfExcludes = {missing}\n", "{missing}"),
    ("startPosesProb = 0.5\n", "startPosesFromSgfDir"),
    ("hintPosesProb = 0.5\n", "hintPosesDir"),
])
@pytest.mark.parametrize("command", ["match", "gatekeeper"])
def test_unreadable_or_missing_positions_stop_at_start_up(tmp_path, keys, named, command):
    sgfs, _ = _positions(tmp_path)
    missing = tmp_path / "no-such-place"
    cfg = tmp_path / "bad.cfg"
    cfg.write_text(BASE + "numGamesPerGating = 2\n" + keys.format(missing=missing, sgfs=sgfs))
    if command == "match":
        with pytest.raises(ConfigError, match=named.format(missing=missing)):
            MatchSettings.from_config(Config.from_text(cfg.read_text()))
        done = kata("match", "-config", str(cfg))
    else:  # before any candidate is looked at (the test directory is empty)
        dirs = {name: tmp_path / name for name in ("t", "a", "r", "s")}
        done = kata("gatekeeper", "-config", str(cfg), "-test-models-dir", str(dirs["t"]), "-accepted-models-dir",
                    str(dirs["a"]), "-rejected-models-dir", str(dirs["r"]), "-sgf-output-dir", str(dirs["s"]),
                    "-quit-if-no-nets-to-test")
    assert done.exit_code == 1, done.output
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and named.format(missing=missing) in lines[0] and "Traceback" not in done.output


# ---- GameRunner's other key: clearBotBeforeSearch -------------------------------------------------------
@pytest.mark.parametrize("text, clears", [("", False), ("clearBotBeforeSearch = false\n", False),
                                          ("clearBotBeforeSearch = true\n", True)])
def test_clear_bot_before_search_drops_the_tree_before_every_move(text, clears, monkeypatch):
    from katacli.match.game import play_game
    from katacli.search import Searcher

    cfg = Config.from_text(BASE + text)
    settings = MatchSettings.from_config(cfg)
    assert settings.clear_bot_before_search is clears and (not text or "clearBotBeforeSearch" in cfg.used_keys())
    cleared = []
    original = Searcher.clear
    monkeypatch.setattr(Searcher, "clear", lambda self: (cleared.append(1), original(self)))
    black, white = _bots(settings)
    game = play_game(settings, start_game(settings, random.Random(4), black, white), black, white, lambda: False)
    searches = len(game.state.moves) + (1 if game.state.is_resignation else 0)
    assert len(cleared) == (searches if clears else 0)


# ---- loadForMatch's other keys: compensateKomiVisits, policy openings -----------------------------------
@pytest.mark.parametrize("text, visits", [("", 100), ("compensateKomiVisits = 37\n", 37)])
def test_compensate_komi_visits_takes_katago_match_default(text, visits):
    assert MatchSettings.from_config(Config.from_text(BASE + text)).compensate_komi_visits == visits


def test_policy_opening_keys_without_init_games_with_policy_are_announced(tmp_path):
    cfg = tmp_path / "p.cfg"
    cfg.write_text(BASE + "policyInitAreaProp = 0.04\n")
    done = kata("match", "-config", str(cfg), "--quiet")
    assert done.exit_code == 0, done.output
    warnings = [line for line in done.stderr.splitlines() if "policyInitAreaProp" in line]
    assert len(warnings) == 1 and warnings[0].startswith("warning: config key 'policyInitAreaProp' has no effect")
    assert MatchSettings.from_config(Config.from_text(cfg.read_text())).policy_openings is None


@pytest.mark.parametrize("extra, expected", [
    ("policyInitAreaProp = 0.04\n", (0.04, 0.0, 1.0, 1.0, 1.0)),   # KataGo's loadForMatch defaults
    ("policyInitAreaProp = 0.1\nstartPosesPolicyInitAreaProp = 0.02\ncompensateAfterPolicyInitProb = 0.2\n"
     "policyInitGammaShape = 2.0\npolicyInitAreaTemperature = 0.5\n", (0.1, 0.02, 0.2, 2.0, 0.5)),
    # KataGo's match reads the gamma shape up to 100 (self-play: up to 10)
    ("policyInitAreaProp = 0.04\npolicyInitGammaShape = 50\n", (0.04, 0.0, 1.0, 50.0, 1.0)),
])
def test_init_games_with_policy_reads_the_opening_keys(extra, expected):
    text = BASE.replace("nnModelFile = rollouts", "nnModelFile0 = rollouts\nnnModelFile1 = rollouts")
    with pytest.raises(ConfigError, match="needs a bot with a network"):   # nobody has a policy to open with
        MatchSettings.from_config(Config.from_text(text + "initGamesWithPolicy = true\n" + extra))
    net = str(_net_path())
    settings = MatchSettings.from_config(Config.from_text(
        text.replace("nnModelFile0 = rollouts", f"nnModelFile0 = {net}") + "initGamesWithPolicy = true\n" + extra))
    o = settings.policy_openings
    assert (o.area_prop, o.start_poses_area_prop, o.compensate_prob, o.gamma_shape, o.temperature) == expected


def test_init_games_with_policy_needs_the_area_prop_one_line_error(tmp_path):
    cfg = tmp_path / "p.cfg"
    cfg.write_text(BASE + "initGamesWithPolicy = true\n")
    with pytest.raises(ConfigError, match="policyInitAreaProp"):
        MatchSettings.from_config(Config.from_text(cfg.read_text()))
    refused = kata("match", "-config", str(cfg))
    assert refused.exit_code == 1 and len(refused.stderr.strip().splitlines()) == 1
    assert "policyInitAreaProp" in refused.stderr and "Traceback" not in refused.output


def test_the_gatekeeper_reads_policy_keys_as_without_effect():
    from katacli.match.settings import read_policy_openings

    cfg = Config.from_text(BASE + "initGamesWithPolicy = true\npolicyInitAreaProp = 0.04\n")
    openings, ignored = read_policy_openings(cfg, gatekeeper=True)
    assert openings is None and set(ignored) == {"initGamesWithPolicy", "policyInitAreaProp"}


class _RecordingPolicyNet:
    """A stand-in network whose policy is uniform over the legal moves but pass (pass when nothing else is
    legal); it notes whose move it chose."""

    def __init__(self, record: list, name: str):
        self.record, self.name = record, name
        self.evaluator, self.model_name = None, name

    def policy(self, state, output=None, allow_pass=True, **kwargs):
        from katacli.selfplay.raw_policy import Policy

        self.record.append((self.name, state.next_player))
        moves = [m for m in state.legal_moves(state.next_player) if m is not None] or [None]
        return Policy(moves, np.full(len(moves), 1.0 / len(moves)))


def _net_path() -> Path:
    from support.match import write_tiny_net

    path = Path(__file__).parent.parent / "build" / "test-nets" / "policy-opening-b2c16.bin.gz"
    return path if path.exists() else write_tiny_net(path, 5)


@pytest.mark.parametrize("black_has_net, white_has_net", [(True, True), (True, False), (False, True)])
def test_policy_openings_play_each_side_with_its_own_network(black_has_net, white_has_net):
    from katacli.game.coords import BLACK, WHITE

    net = str(_net_path())
    text = BASE.replace("nnModelFile = rollouts", f"nnModelFile0 = {net}\nnnModelFile1 = {net}")
    settings = MatchSettings.from_config(Config.from_text(
        text + "initGamesWithPolicy = true\npolicyInitAreaProp = 0.5\ncompensateAfterPolicyInitProb = 0\n"))
    record: list = []
    bots = [MatchBot(spec, _RecordingPolicyNet(record, spec.name) if has else None, random.Random(1))
            for spec, has in zip(settings.bots, (black_has_net, white_has_net))]
    opened = 0
    for seed in range(8):
        start = start_game(settings, random.Random(seed), bots[0], bots[1])
        opened += len(start.state.moves)
        assert start.state.komi == 6.5   # the noised opening komi is put back, and nothing compensated
    assert opened > 0 and len(record) == opened
    chooser = {BLACK: bots[0] if black_has_net else bots[1], WHITE: bots[1] if white_has_net else bots[0]}
    assert all(name == chooser[player].spec.name for name, player in record)
    assert {player for _, player in record} == {BLACK, WHITE}


def test_a_match_with_policy_openings_plays_whole_games(tmp_path):
    net = _net_path()
    cfg = tmp_path / "m.cfg"
    cfg.write_text(BASE.replace("nnModelFile = rollouts", f"nnModelFile0 = {net}\nnnModelFile1 = rollouts")
                   + "initGamesWithPolicy = true\npolicyInitAreaProp = 0.2\n")
    out = tmp_path / "games"
    done = kata("match", "-config", str(cfg), "-sgf-output-dir", str(out), "--json", "--seed", "4")
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["games"] == 4
    assert "has no effect" not in done.stderr
    # finished with a result, or stopped at maxMovesPerGame (no RE then, as KataGo)
    assert all(load_sgf(str(f)).result or "stopped at maxMovesPerGame" in f.read_text() for f in out.glob("*.sgf"))


def test_a_game_stopped_at_the_move_limit_has_no_result_in_its_sgf():
    # As KataGo's SGFs: scripts that count RE must not take an unfinished game for a win.
    from katacli._core.game_state import GameState
    from katacli.match.game import MatchGame

    state = GameState(9)
    for xy, pla in (((4, 4), 1), ((2, 2), 2), ((6, 6), 1)):
        state.play(xy, pla)
    state.end_and_score_now()
    cut = MatchGame("A", "B", state, hit_move_limit=True).sgf()
    assert "RE[" not in cut and "result=" not in cut and "stopped at maxMovesPerGame; scored as it stood" in cut
    finished = MatchGame("A", "B", state, hit_move_limit=False).sgf()
    assert "RE[W+6.5]" in finished and "result=W+6.5" in finished


# KataGo's match resignation (Play::runGame): after the move, from turn 1 + area / 5, when each of the last
# resignConsecTurns root values (both players', White's view) is below the threshold for the mover.
@pytest.mark.parametrize("values, pla, turn, resigns", [
    ([0.99, 0.99, 0.99], BLACK_PLAYER, 17, True),      # White wins by far three turns running: Black resigns
    ([0.99, 0.99, 0.99], BLACK_PLAYER, 16, False),     # before a fifth of 9x9's points: never
    ([0.99, 0.99, 0.99], WHITE_PLAYER, 17, False),     # the winning side does not resign
    ([0.99, 0.5, 0.99], BLACK_PLAYER, 20, False),      # one turn not lost enough
    ([0.99, 0.99], BLACK_PLAYER, 20, False),           # fewer values than resignConsecTurns
    ([-0.99, -0.99, -0.99], WHITE_PLAYER, 40, True),
])
def test_match_resignation_is_katagos(values, pla, turn, resigns):
    from katacli.gtp.resign import ResignSettings
    from katacli.match.game import resigns_after_move

    settings = ResignSettings(allow_resignation=True, resign_threshold=-0.9, resign_consec_turns=3)
    assert resigns_after_move(settings, values, pla, turn, 81) == resigns
    off = ResignSettings(allow_resignation=False, resign_threshold=-0.9, resign_consec_turns=3)
    assert not resigns_after_move(off, values, pla, turn, 81)


def test_a_resigned_match_game_leaves_the_resigners_move_out_of_its_sgf():
    # KataGo's match SGF: the resigning player's last move omitted, its comment kept on a bare last node.
    from katacli._core.game_state import GameState
    from katacli.match.game import MatchGame

    state = GameState(9)
    for xy, pla in (((4, 4), 1), ((2, 2), 2), ((6, 6), 1)):
        state.play(xy, pla)
    state.set_winner_by_resignation(WHITE_PLAYER)
    text = MatchGame("A", "B", state, hit_move_limit=False, move_comments={2: "0.99 0.01 0.00 22.8 v=10"}).sgf()
    assert text.endswith(";B[ee];W[cc];C[0.99 0.01 0.00 22.8 v=10 result=W+R])") and "RE[W+R]" in text
