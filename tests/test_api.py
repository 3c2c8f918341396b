"""The Python API (katacli.api): doctests of every module, friendly input and errors, perspectives,
the hook, the engine's tree reuse, and a cheap top-level import. Needs no model file: networks here
are random-weight nets built in memory, searches without one use random playouts."""
from __future__ import annotations

import dataclasses
import doctest
import importlib
import re
import subprocess
import sys

import numpy as np
import pytest

import katacli
from katacli.api import EXPORTS
from katacli.config import ConfigError
from katacli.game.coords import CoordError

API_MODULES = ["katacli.api.args", "katacli.api.game", "katacli.api.network", "katacli.api.analysis",
               "katacli.api.engine", "katacli.api"]


@pytest.mark.parametrize("module_name", API_MODULES)
def test_doctests(module_name):
    module = importlib.import_module(module_name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0, f"{result.failed} doctest(s) failed in {module_name}"


def _public_api_objects():
    """(qualified name, object) for every public function and class the API modules define, and the
    public methods of those classes."""
    for module_name in API_MODULES[:-1]:
        module = importlib.import_module(module_name)
        for name, value in vars(module).items():
            if name.startswith("_") or getattr(value, "__module__", None) != module_name:
                continue
            if not (isinstance(value, type) or callable(value)):
                continue
            yield f"{module_name}.{name}", value
            if isinstance(value, type):
                for attr, member in vars(value).items():
                    if not attr.startswith("_") and (callable(member) or isinstance(member, (property, classmethod))):
                        yield f"{module_name}.{name}.{attr}", member


def test_every_public_name_is_documented():
    undocumented = [name for name, value in _public_api_objects()
                    if not (getattr(value, "__doc__", None) or getattr(getattr(value, "__func__", None), "__doc__", None))]
    assert not undocumented, undocumented


def test_every_public_function_and_class_has_a_doctest_example():
    finder = doctest.DocTestFinder()
    without = []
    for name, value in _public_api_objects():
        if name.count(".") != 3 or not isinstance(value, type) and not callable(value):
            continue  # methods are covered through their class's examples
        if isinstance(value, type) and issubclass(value, Exception):
            continue
        tests = finder.find(value, name)
        if not any(test.examples for test in tests):
            without.append(name)
    assert not without, without


@pytest.mark.subprocess
def test_import_katacli_stays_light():
    code = ("import sys, katacli; g = katacli.Game(9); "
            "print('torch' in sys.modules, 'katacli.search.searcher' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]


def test_top_level_names():
    assert katacli.Game is importlib.import_module("katacli.api.game").Game
    assert set(EXPORTS) <= set(dir(katacli)) | set(katacli.__all__)
    assert {"Game", "analyze", "Engine", "load_network"} <= set(dir(katacli))
    for error in ("IllegalMoveError", "CoordError", "RulesError", "SgfError", "SettingError"):
        assert issubclass(getattr(katacli, error), ValueError), error
    with pytest.raises(AttributeError, match="load_model"):
        katacli.load_model  # noqa: B018  (a wrong guess gets a plain AttributeError)


# ---------------------------------------------------------------------------- Game


def test_game_accepts_what_people_write():
    game = katacli.Game(9, rules="Japanese", komi=6.5)
    game.play("black", "e5").play("White", "C3").play("pass")
    assert game.moves == [("B", "E5"), ("W", "C3"), ("B", "pass")]
    assert game.next_player == "W"
    assert game.board[9 - 5, 4] == 1 and game.board[9 - 3, 2] == 2
    assert game.rules.nice_name() == "Japanese"
    rect = katacli.Game((7, 5))
    assert (rect.x_size, rect.y_size) == (7, 5) and rect.board.shape == (5, 7)


@pytest.mark.parametrize("call, error, text", [
    (lambda g: g.play("red", "E5"), CoordError, "'red'"),
    (lambda g: g.play("B", "Z5"), CoordError, "Z5"),
    (lambda g: g.play("B", "E55"), CoordError, "E55"),
    (lambda g: g.play("B", 44), CoordError, "44"),
    (lambda g: g.undo(), ValueError, "no move to undo"),
    (lambda g: g.truncated(3), ValueError, "0..0"),
    (lambda g: g.vertex_of(9, 0), CoordError, r"Cell \[0, 9\] .* off the 9x9 board"),   # not "(9,0)"
    (lambda g: g.vertex_of(0, -1), CoordError, r"Cell \[-1, 0\]"),
])
def test_game_errors_name_the_bad_value(call, error, text):
    with pytest.raises(error, match=text):
        call(katacli.Game(9))


@pytest.mark.parametrize("kwargs, text", [({"size": "9"}, "'9'"), ({"size": (9, 9, 9)}, "9, 9, 9"),
                                           ({"rules": 5}, "5"), ({"komi": 6.3}, "6.3")])
def test_game_arguments_are_checked(kwargs, text):
    with pytest.raises((TypeError, ValueError), match=text):
        katacli.Game(**kwargs)


def test_game_rejects_unknown_rules_and_sizes():
    from katacli.game.rules import RulesError
    from katacli.game.session import SessionError

    with pytest.raises(RulesError, match="japaneese"):
        katacli.Game(9, rules="japaneese")
    with pytest.raises(SessionError, match="25x25"):
        katacli.Game(25)


def test_game_legality_follows_the_rules():
    game = katacli.Game(5)
    for move in ["B2", "C2", "A3", "D3", "B4", "C4", "C3"]:
        game.play(move)
    game.play("B3")  # White captures the ko stone at C3
    assert not game.is_legal("B", "C3")  # Black may not retake at once
    assert "C3" not in game.legal_moves("B")
    assert game.stone_at("C3") is None and game.stone_at("B3") == "W"


def test_sgf_round_trip_keeps_rules_komi_setup_and_moves(tmp_path):
    game = katacli.Game(9, rules="japanese", komi=5.5).place_handicap(2).play("W", "E5").play("B", "D4")
    path = tmp_path / "game.sgf"
    game.save_sgf(path)
    again = katacli.Game.from_sgf(path)
    assert again.moves == game.moves
    assert again.komi == 5.5 and again.rules == game.rules
    assert np.array_equal(again.board, game.board)
    assert katacli.Game.from_sgf(path, move_number=2).moves == [("W", "E5")]


def test_sgf_errors_are_clear(tmp_path):
    from katacli.game.sgf import SgfError

    with pytest.raises(SgfError, match="not found"):
        katacli.Game.from_sgf(tmp_path / "missing.sgf")
    with pytest.raises(SgfError, match="Illegal move in sgf turn 1 move E5"):
        katacli.Game.from_sgf("(;SZ[9];B[ee];W[ee])")  # the second move is on a stone
    occupied = tmp_path / "occupied.sgf"
    occupied.write_text("(;SZ[9];B[ee];W[ee])")
    with pytest.raises(SgfError, match=f"Illegal move in {re.escape(str(occupied))} turn 1 move E5"):
        katacli.Game.from_sgf(occupied)   # which file, for a script that reads many
    with pytest.raises(SgfError, match="the white stone at A8 leaves a group without liberties"):
        katacli.Game.from_sgf("(;SZ[9]AB[aa]AW[ba][ab];B[cc])")   # a setup without liberties is the file's fault too
    with pytest.raises(SgfError, match="not found"):
        katacli.Game.from_sgf("x" * 5000)   # a name too long for the file system names no file
    # SGF text read from a file that starts with a byte-order mark is still SGF text, not a file name
    assert katacli.Game.from_sgf("\ufeff(;SZ[9];B[ee])").moves == [("B", "E5")]


def test_nogo_games():
    game = katacli.Game(5, rules="nogo")
    assert "pass" not in game.legal_moves()
    with pytest.raises(Exception, match="NoGo"):
        game.play("pass")
    result = katacli.analyze(game.play("C3"), visits=50, seed=1)
    assert result.best_move in game.legal_moves()


# ---------------------------------------------------------------------------- settings


def test_settings_by_katago_name_or_snake_case():
    params = katacli.search_params(visits=30, cpuctExploration=2.0, lcb_stdevs=4.0, min_visit_prop_for_lcb=0.2,
                                   root_noise_enabled=True)
    assert (params.max_visits, params.cpuct_exploration, params.lcb_stdevs) == (30, 2.0, 4.0)
    assert params.min_visit_prop_for_lcb == 0.2 and params.root_noise_enabled


def test_default_search_is_finite_and_a_config_limit_is_kept(tmp_path):
    from katacli.api.analysis import DEFAULT_VISITS

    assert katacli.search_params().max_visits == DEFAULT_VISITS
    cfg = tmp_path / "analysis.cfg"
    cfg.write_text("maxVisits = 77\nnumAnalysisThreads = 1\nnumSearchThreadsPerAnalysisThread = 1\n")
    assert katacli.search_params(cfg).max_visits == 77
    assert katacli.search_params({"maxTime": 2.0}).max_visits > DEFAULT_VISITS


@pytest.mark.parametrize("settings, error, text", [
    ({"maxVisitz": 3}, katacli.SettingError, "did you mean 'maxVisits'"),
    ({"cpuct_exploration": "lots"}, ConfigError, "lots"),
    ({"max_visits": -4}, ConfigError, "-4"),
])
def test_setting_errors_name_key_and_value(settings, error, text):
    with pytest.raises(error, match=text):
        katacli.search_params(**settings)


def test_bad_visits_and_config_types():
    with pytest.raises(ValueError, match="'many'"):
        katacli.search_params(visits="many")
    with pytest.raises(ConfigError, match="not found"):
        katacli.search_params("no-such-file.cfg")
    with pytest.raises(katacli.SettingError, match="int"):
        katacli.search_params(config=5)


# ---------------------------------------------------------------------------- network


@pytest.fixture(scope="module")
def random_net():
    pytest.importorskip("torch")
    return katacli.Network.random(seed=3)


def test_evaluation_perspectives(random_net):
    black_to_move = random_net.evaluate(katacli.Game(9))
    assert black_to_move.winrate == pytest.approx(1.0 - black_to_move.white_winrate)
    assert black_to_move.score_lead == pytest.approx(-black_to_move.white_score_lead)
    assert np.allclose(black_to_move.ownership, -black_to_move.white_ownership)
    total = float(black_to_move.policy.sum()) + black_to_move.pass_policy
    assert total == pytest.approx(1.0, abs=1e-4)
    vertex, prob = black_to_move.top_moves(1)[0]
    assert vertex == black_to_move.best_move and prob == pytest.approx(max(black_to_move.policy.max(),
                                                                           black_to_move.pass_policy))


def test_evaluate_many_equals_one_by_one(random_net):
    games = [katacli.Game(9), katacli.Game(9).play("E5"), katacli.Game(13).play("D4"), katacli.Game((7, 5))]
    batch = random_net.evaluate_many(games, symmetry=0)
    for game, evaluation in zip(games, batch):
        single = random_net.evaluate(game, symmetry=0)
        assert evaluation.next_player == game.next_player
        assert evaluation.winrate == pytest.approx(single.winrate, abs=1e-5)
        assert np.allclose(evaluation.policy, single.policy, atol=1e-5)
    assert batch[2].policy.shape == (13, 13) and batch[3].ownership.shape == (5, 7)
    occupied = batch[1]
    assert occupied.policy[9 - 5, 4] == 0.0  # E5 holds a stone: no probability


def test_load_network_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="missing.bin.gz"):
        katacli.load_network(tmp_path / "missing.bin.gz")
    bad = tmp_path / "bad.bin.gz"
    bad.write_bytes(b"not a model")
    from katacli.nn.model_file_reader import ModelFileError

    with pytest.raises((ModelFileError, OSError)):
        katacli.load_network(bad)
    with pytest.raises(TypeError, match="Network"):
        katacli.analyze(katacli.Game(9), "net.bin.gz")


class _FirstLineHater(katacli.Network):
    """Never plays on the edge: the hook zeroes the policy there and renormalises."""

    def adjust(self, request, output):
        policy = np.array(output.policy).reshape(output.board_y, output.board_x)
        edge = np.ones_like(policy, dtype=bool)
        edge[1:-1, 1:-1] = False
        policy[edge & (policy > 0)] = 0.0
        legal = policy > 0
        policy[legal] /= policy[legal].sum() + max(0.0, output.policy_pass)
        return dataclasses.replace(output, policy=policy.reshape(-1),
                                   policy_pass=output.policy_pass / (policy[legal].sum() + output.policy_pass))


def test_adjust_hook_reaches_evaluations_and_searches(random_net):
    hater = _FirstLineHater(random_net.nn)
    evaluation = hater.evaluate(katacli.Game(7))
    assert evaluation.policy[0, :].sum() == 0 and evaluation.policy[:, 0].sum() == 0
    result = katacli.analyze(katacli.Game(7), hater, visits=40, seed=2)
    searched = [m for m in result.moves if m.visits > 0]
    assert searched and all(m.move == "pass" or m.move[0] not in "AG" and m.move[1:] not in ("1", "7")
                            for m in searched)


# ---------------------------------------------------------------------------- analyze


def test_analyze_with_a_network(random_net):
    game = katacli.Game(9, rules="japanese").play("E5")
    result = katacli.analyze(game, random_net, visits=30, seed=5)
    assert result.next_player == "W" and result.visits == 30
    assert result.winrate == pytest.approx(result.white_winrate)
    assert result.black_winrate == pytest.approx(1 - result.white_winrate)
    assert result.best_move == result.moves[0].move == result.pv[0]
    assert result.policy.shape == (9, 9) and result.ownership.shape == (9, 9)
    assert all(m.visits < result.visits for m in result.moves)
    row = result.table()[0]
    assert row["move"] == result.best_move and isinstance(row["pv"], str)


def test_analyze_black_to_move_flips_values(random_net):
    result = katacli.analyze(katacli.Game(9), random_net, visits=20, seed=5)
    assert result.next_player == "B"
    assert result.winrate == pytest.approx(1 - result.white_winrate)
    assert result.score_lead == pytest.approx(-result.white_score_lead)
    assert np.allclose(result.ownership, -result.white_ownership)
    for move in result.moves:
        assert move.winrate == pytest.approx(1 - move.white_winrate)


def test_analyze_is_repeatable_with_a_seed():
    game = katacli.Game(7).play_moves(["D4", "C3"])
    first = katacli.analyze(game, visits=80, seed=11)
    second = katacli.analyze(game, visits=80, seed=11)
    assert first.table() == second.table()


# ---------------------------------------------------------------------------- Engine


def test_engine_keeps_game_and_search_in_step(random_net):
    engine = katacli.Engine(random_net, size=7, rules="chinese", visits=100, seed="tree-reuse")
    assert engine.game.komi == 7.5 and engine.game.rules.nice_name() == "Chinese"
    assert engine.messages == ["Changed rules to Chinese"]
    engine.play("D4")
    first = engine.genmove()
    assert first.color == "W" and len(engine.game.moves) == 2
    searcher = engine._gtp.bot._searcher
    engine.play("B", "C5")
    engine.analyze(visits=100)
    # The tree was advanced along the two moves, so the new search started with visits in hand.
    assert engine._gtp.bot._searcher is searcher
    assert 0 < searcher.last_stats.leaves_evaluated < 100


def test_engine_genmove_without_playing_and_errors():
    engine = katacli.Engine(None, size=5, visits=30, seed=1)
    choice = engine.genmove("W", play=False)
    assert choice.color == "W" and engine.game.moves == []
    assert choice.score_lead == pytest.approx(choice.white_score_lead)
    with pytest.raises(katacli.CoordError, match="Z9"):
        engine.play("B", "Z9")
    engine.play("B", "C3")
    with pytest.raises(katacli.IllegalMoveError, match="illegal move: W C3"):
        engine.play("W", "C3")
    engine.undo()
    assert engine.game.moves == []
    with pytest.raises(katacli.EngineError, match="cannot undo"):
        engine.undo()


def test_engine_set_game_and_sgf():
    game = katacli.Game(9, rules="japanese", komi=0.5).play_moves(["E5", "C3"])
    engine = katacli.Engine(None, visits=20, seed=2).set_game(game)
    assert engine.game.moves == game.moves and engine.game.komi == 0.5
    assert engine.next_player == "B"
    assert katacli.Game.from_sgf(engine.to_sgf()).moves == game.moves
    engine.load_sgf("(;GM[1]SZ[5]KM[2.5];B[cc])")
    assert engine.game.moves == [("B", "C3")] and engine.game.komi == 2.5
    # kata gtp's loadsgf, log lines included: no RU keeps the engine's rules, the file's komi is said
    assert engine.game.rules.scoring.name == "TERRITORY"
    assert any("Sgf has no rules" in line for line in engine.messages), engine.messages
    assert any("Changing komi to 2.5" in line for line in engine.messages), engine.messages
    from katacli.game.sgf import SgfError

    with pytest.raises(SgfError, match="the white stone at A4 leaves a group without liberties"):
        engine.load_sgf("(;SZ[5]AB[aa]AW[ba][ab];B[cc])")
    assert engine.game.moves == [("B", "C3")]   # unchanged
    assert engine.load_sgf("(;GM[1]SZ[5]KM[2.5];B[cc];W[dd])", move_number=2).game.moves == [("B", "C3")]


def test_engine_takes_a_rules_object_with_its_komi():
    from katacli.game.rules import Rules

    engine = katacli.Engine(None, size=5, rules=Rules.parse("japanese").with_komi(3.5), visits=10)
    assert engine.game.komi == 3.5 and engine.game.rules.nice_name() == "Japanese"
    assert katacli.Engine(None, size=5, rules="aga", komi=2, visits=10).game.komi == 2


def test_engine_with_config_settings_and_set_param():
    engine = katacli.Engine(None, {"maxVisits": 25, "allowResignation": False}, size=5, seed=4)
    assert engine.genmove().visits >= 25
    engine.set_param("max_visits", 12)
    assert engine._gtp.params.genmove.max_visits == 12
    with pytest.raises(katacli.SettingError):
        katacli.Engine(None, max_vists=3)


@pytest.mark.parametrize("how", ["argument", "config"])
def test_engine_nogo(how):
    if how == "argument":
        engine = katacli.Engine(None, size=5, rules="nogo", visits=40, seed=9)
    else:
        engine = katacli.Engine(None, {"rules": "nogo"}, size=5, visits=40, seed=9)
    assert engine.game.nogo
    move = engine.genmove().move
    assert move != "pass"
    with pytest.raises(katacli.IllegalMoveError, match="NoGo forbids"):
        engine.play("W", move)


# ---------------------------------------------------------------------------- the layers below


def test_the_first_wrong_guesses_now_work_or_explain_themselves():
    from katacli.game.session import GameSession

    session = GameSession(9, 9, rules="japanese")
    session.play("B", "E5")
    session.play("white", "pass")
    assert session.rules.komi == 6.5 and session.moves == [(1, (4, 4)), (2, None)]
    session.set_rules("chinese")
    assert session.rules.nice_name() == "Chinese" and session.rules.komi == 6.5
    with pytest.raises(CoordError, match="Z5"):
        session.play("B", "Z5")
    pytest.importorskip("torch")
    from katacli.nn.evaluator import NNEvaluator

    with pytest.raises(TypeError, match="from_file"):
        NNEvaluator("net.bin.gz")


# ---------------------------------------------------------------------------- one error vocabulary


@pytest.mark.parametrize("moves, bad, error", [
    ([], ("B", "Z99"), "CoordError"),           # off the board
    ([], ("B", "E5 5"), "CoordError"),          # not a vertex
    ([], ("red", "E5"), "CoordError"),          # not a colour
    (["E5"], ("W", "E5"), "IllegalMoveError"),  # the point is taken
])
def test_engine_play_and_game_play_raise_the_same_errors(moves, bad, error):
    game = katacli.Game(9).play_moves(moves)
    engine = katacli.Engine(None, size=9, visits=10)
    for move in moves:
        engine.play(move)
    with pytest.raises(getattr(katacli, error)) as from_game:
        game.play(*bad)
    with pytest.raises(getattr(katacli, error)) as from_engine:
        engine.play(*bad)
    assert str(from_engine.value) == str(from_game.value)
    assert engine.game.moves == game.moves  # neither changed


def test_every_error_a_user_mistake_raises_is_a_value_error():
    """docs/python-api.md: ``except ValueError`` catches them all but the two about model files."""
    for name in ("CoordError", "IllegalMoveError", "RulesError", "SgfError", "ConfigError", "SettingError",
                 "EngineError"):
        assert issubclass(getattr(katacli, name), ValueError), name
    with pytest.raises(ValueError, match="maxVisits"):
        katacli.search_params(maxVisits="lots")


def test_load_network_says_a_folder_is_a_folder(tmp_path):
    with pytest.raises(IsADirectoryError, match="is a directory, not a model file"):
        katacli.load_network(tmp_path)
    with pytest.raises(FileNotFoundError, match="model file not found"):
        katacli.load_network(tmp_path / "no-such.bin.gz")


def test_load_network_compiles_when_asked_and_not_by_default_on_the_cpu():
    from support.paths import BUNDLED_TINY_MODEL

    assert not katacli.load_network(BUNDLED_TINY_MODEL, device="cpu").nn.runner.compiled   # auto: CUDA only
    assert katacli.load_network(BUNDLED_TINY_MODEL, device="cpu", compile=True).nn.runner.compiled
    assert not katacli.load_network(BUNDLED_TINY_MODEL, device="cpu", compile=False).nn.runner.compiled


def test_a_cuda_device_without_a_gpu_is_a_clear_error():
    import torch

    from support.paths import BUNDLED_TINY_MODEL

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="no CUDA GPU is available to PyTorch here"):
        katacli.load_network(BUNDLED_TINY_MODEL, device="cuda")


@pytest.mark.parametrize("model", ["test-b3c48nbt.bin.gz", "b7c96h3tfrs-test5-cnorm.bin.gz"])
def test_evaluate_gives_kata_raw_nn_priors_for_nets_with_an_optimistic_policy(model):
    # kata-raw-nn (KataGo's and kata gtp's) mixes in the optimistic policy at rootPolicyOptimism (0.2); so must
    # Network.evaluate, whose docs name it as the same thing.
    import json

    from support.paths import model_path, reference_path
    from support.reference_games import reference_game

    net = katacli.load_network(model_path(model), symmetry=0)
    cases = [json.loads(line) for line in reference_path("kata-raw-nn.jsonl").read_text().splitlines()]
    checked = 0
    for case in cases:
        if case["model_file"] != model or case["query"] != "kata-raw-nn 0":
            continue
        game = reference_game(case)
        if game is None:
            continue
        got = net.evaluate(game, symmetry=0).policy.reshape(-1)
        want = np.array([np.nan if p is None else p for p in case["expected"][0]["policy"]])
        legal = ~np.isnan(want)
        assert np.abs(got[legal] - want[legal]).max() <= 1e-4, case["id"]
        checked += 1
        if checked == 5:
            break
    assert checked >= 3
    plain = net.evaluate(katacli.Game(19), symmetry=0, policy_optimism=0.0).policy
    assert not np.allclose(plain, net.evaluate(katacli.Game(19), symmetry=0).policy)


def test_is_over_and_legality_for_either_side():
    # Territory scoring without a cleanup phase (KataGo's GTP default) ends at the two passes, as area scoring.
    assert katacli.Game(9, rules="japanese").play_moves(["E5", "pass", "pass"]).is_over
    assert katacli.Game(9, rules="chinese").play_moves(["E5", "pass", "pass"]).is_over
    assert not katacli.Game(9, rules="japanese").play_moves(["E5", "pass"]).is_over
    # The side not to move: legal as if it moved now (GTP's play accepts it too).
    game = katacli.Game(9)
    assert game.is_legal("W", "D4") and len(game.legal_moves("W")) == 82
    assert not game.play("B", "D4").is_legal("W", "D4")


@pytest.mark.parametrize("visits", [0, -5, 2.5, True])
def test_engine_visit_limits_are_checked_as_analyze_checks_them(visits):
    with pytest.raises(ValueError, match="visits must be a positive whole number"):
        katacli.Engine(None, size=5, seed=1).analyze(visits=visits)
    with pytest.raises(ValueError, match="visits must be a positive whole number"):
        katacli.Engine(None, size=5, seed=1, visits=visits)


def test_an_untraced_network_gives_the_same_numbers():
    # trace=False (for scripts that load many networks: traces keep TorchScript state) changes no result.
    from support.paths import model_path

    game = katacli.Game(9).play("E5")
    traced_net = katacli.load_network(model_path("test-b4c32.bin.gz"), symmetry=0, device="cpu")
    plain_net = katacli.load_network(model_path("test-b4c32.bin.gz"), symmetry=0, device="cpu", trace=False)
    assert traced_net.nn.runner._traced is not None and plain_net.nn.runner._traced is None
    traced, plain = traced_net.evaluate(game), plain_net.evaluate(game)
    assert np.allclose(traced.policy, plain.policy, atol=1e-5) and abs(traced.winrate - plain.winrate) < 1e-5


@pytest.mark.parametrize("setting", [{"nnRandomize": False}, {"nn_cache_size_power_of_two": 10}])
def test_network_settings_given_to_a_search_are_refused_not_ignored(setting):
    # The recipe for repeatable results says nnRandomize=false; passed to analyze() it changed nothing.
    with pytest.raises(katacli.SettingError, match="is a network setting.*load_network"):
        katacli.analyze(katacli.Game(9), None, visits=10, **setting)
    with pytest.raises(katacli.SettingError, match="is a network setting"):
        katacli.Engine(None, size=9, **setting)


def test_wrong_argument_types_are_clear_errors():
    net = katacli.Network.random("b2c16", seed=1)
    with pytest.raises(TypeError, match="analyze\\(\\) takes a katacli.Game"):
        katacli.analyze(None, net)
    with pytest.raises(TypeError, match="evaluate takes katacli.Game"):
        net.evaluate("E5")
    with pytest.raises(TypeError, match="seed must be a whole number"):
        katacli.analyze(katacli.Game(5), None, visits=5, seed="abc")
    with pytest.raises(ValueError, match="not NoGo"):
        net.evaluate(katacli.Game(5, rules="nogo"))
    with pytest.raises(ValueError, match="device must be"):
        katacli.load_network("whatever.bin.gz", device="tpu")


def test_a_missing_example_config_names_katacli_s_own_copy(tmp_path, monkeypatch):
    """The docs name configs/*.cfg, which an installed package's user does not have beside them."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(katacli.ConfigError, match="katacli's copy of analysis_example.cfg is .*analysis_example.cfg"):
        katacli.analyze(katacli.Game(9), None, visits=10, config="configs/analysis_example.cfg")


def test_a_pass_for_ko_is_saved_as_katago_writes_it_so_the_record_reopens():
    # In a territory game's cleanup phase a ko recapture is a "pass for ko". Engine.to_sgf / Game.to_sgf wrote
    # it as the move, and Game.from_sgf of that record failed: "Illegal move in sgf turn 5 move B2".
    engine = katacli.Engine(None, size=9, rules="japanese", preventCleanupPhase=False)
    engine.set_game(katacli.Game(9, rules="japanese").setup(black=["B3", "A2", "B1"],
                                                            white=["C3", "B2", "D2", "C1", "G5"]))
    for color, vertex in [("B", "pass"), ("W", "pass"), ("B", "C2"), ("W", "B2"), ("B", "E5"), ("W", "B2")]:
        engine.play(color, vertex)
    record = engine.to_sgf()
    assert record.endswith(";B[];W[];B[ch];W[]TR[bh]C[Pass for ko];B[ee];W[bh])"), record   # KataGo's printsgf
    assert engine.game.to_sgf() == record
    assert katacli.Game.from_sgf(record).moves[-1] == ("W", "B2")
