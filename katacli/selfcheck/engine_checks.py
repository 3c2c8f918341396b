"""Self-checks of the parts around the rules and the network: SGF files, configs, search, benchmark, GTP."""
from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path

from katacli.selfcheck.framework import check, expect

BLACK, WHITE = 1, 2

# Black to move: (6, 3) connects the two black stones at (6, 1), (6, 2) to the living group and takes the
# white group's last outside liberty. Anywhere else, White plays there and the two stones are in atari.
KEY_POINT_POSITION = """
XXXXXX.
XOOOOOX
XO.O.OX
XOOOOO.
XXXXXXX
.X.X.X.
X.X.X.X
"""
KEY_POINT = (6, 3)
ROLLOUT_VISITS = 400
NETWORK_VISITS = 24
NETWORK_THREADS = 4
DEFAULT_NET_VISITS = 16
DEFAULT_NET_BOARDS = (5, 19)
SEARCH_SEED = 7
BENCHMARK_VISITS = 30
BENCHMARK_POSITIONS = 2
BENCHMARK_LINE = re.compile(r"^numSearchThreads = +\d+: \d+ / \d+ positions, visits/s = [\d.]+ nnEvals/s = [\d.]+ "
                            r"nnBatches/s = [\d.]+ avgBatchSize = [\d.]+ \([\d.]+ secs\)$")
GTP_VISITS = 8
GTP_TIMEOUT_SECONDS = 120.0
FINAL_SCORE = re.compile(r"^(0|[BW]\+\d+(\.\d+)?)$")


@check("sgf.roundtrip", "SGF games are written and read back unchanged")
def sgf_round_trip() -> str:
    from katacli.game.rules import Rules
    from katacli.game.sgf import SgfGame, read_sgf

    moves = [(BLACK, (3, 3)), (WHITE, (15, 15)), (BLACK, None), (WHITE, (2, 16))]
    game = SgfGame(x_size=19, y_size=19, komi=6.5, rules=Rules.preset("japanese"), moves=moves,
                   black_name="Honinbo Shusaku", white_name="Gennan Inseki", result="B+2")
    again = read_sgf(game.to_sgf())
    expect(again.moves == moves, f"moves read back as {again.moves}")
    expect(again.komi == 6.5 and again.rules == Rules.preset("japanese"), "rules or komi changed")
    expect(again.black_name == "Honinbo Shusaku" and again.result == "B+2", "names or result changed")
    rectangle = read_sgf("(;FF[4]GM[1]SZ[9:13];B[ai];W[])")
    expect((rectangle.x_size, rectangle.y_size) == (9, 13), "a 9x13 SGF board was not read as 9x13")
    expect(rectangle.moves == [(BLACK, (0, 8)), (WHITE, None)], f"9x13 moves read as {rectangle.moves}")
    return "moves, pass, komi, rules, names, result, 9x13 board"


@check("config.generated", "`kata genconfig` configs (also a human-like player's) load in `kata gtp` without "
                           "warnings; bad values are refused")
def generated_config() -> str:
    from katacli.setup.config_writer import GenConfigChoices, check_config_text, render_config
    from katacli.config import Config, ConfigError

    check_config_text(render_config(GenConfigChoices(rules="japanese", max_visits=500, num_search_threads=4)))
    check_config_text(render_config(GenConfigChoices(human_sl_profile="preaz_5k")), has_human_model=True)
    try:
        Config.from_text("maxVisits = -5", mode="gtp").get("maxVisits")
    except ConfigError:
        pass
    else:
        expect(False, "maxVisits = -5 was accepted")
    return "registry, parser, GTP settings, a human-like player's keys"


@check("search.rollouts", "the rollout engine (no network) finds the key point of a local fight")
def rollout_search() -> str:
    from katacli._core.board import GoBoard
    from katacli._core.game_state import GameState
    from katacli.game.rules import Rules
    from katacli.search import Searcher, SearchParams

    rules = Rules.preset("tromp-taylor").to_core_tuple()
    state = GameState(board=GoBoard.from_diagram(KEY_POINT_POSITION), rules=rules, next_player=BLACK)
    searcher = Searcher(state, SearchParams.defaults("gtp").replace(max_visits=ROLLOUT_VISITS), None, seed=SEARCH_SEED)
    stats = searcher.run()
    expect(stats.visits >= ROLLOUT_VISITS, f"the search stopped after {stats.visits} visits")
    best = searcher.best_move()
    expect(best == KEY_POINT, f"best move {best}, expected the key point {KEY_POINT}")
    return f"{stats.visits} visits, {stats.visits / max(stats.seconds, 1e-9):.0f} visits/s"


@check("search.network", "a batched search with the tiny network runs to its visit limit")
def network_search() -> str:
    from katacli._core.game_state import GameState
    from katacli.search import Searcher, SearchParams
    from katacli.selfcheck.reference_checks import tiny_evaluator

    state = GameState(19, 19)
    params = SearchParams.defaults("gtp").replace(max_visits=NETWORK_VISITS, num_search_threads=NETWORK_THREADS)
    searcher = Searcher(state, params, tiny_evaluator(), seed=SEARCH_SEED)
    stats = searcher.run()
    expect(stats.visits == NETWORK_VISITS, f"the search made {stats.visits} visits, expected {NETWORK_VISITS}")
    expect(stats.batches > 0 and stats.average_batch_size > 1,
           f"no batching (average batch {stats.average_batch_size:.2f})")
    move = searcher.best_move()
    expect(move is None or state.is_legal(move, BLACK), f"best move {move} is illegal")
    values = searcher.root_values() or {}
    expect(-1.0 <= values.get("win_loss", 2.0) <= 1.0, f"root win/loss value {values.get('win_loss')} out of range")
    return f"{stats.visits} visits in {stats.batches} batches"


@check("network.default", "katacli's default network (what the engines use without -model) is installed and plays "
                          "legal moves on 5x5 and 19x19")
def default_network() -> str:
    from katacli._core.game_state import GameState
    from katacli.nets import default_net_path, packaged_default_net
    from katacli.nn.evaluator import NNEvaluator
    from katacli.search import Searcher, SearchParams

    path = packaged_default_net()
    expect(path is not None, f"{default_net_path()} is missing: without -model the engines fall back to rollouts")
    evaluator = NNEvaluator.from_file(path, device="cpu", default_symmetry=0)
    params = SearchParams.defaults("gtp").replace(max_visits=DEFAULT_NET_VISITS)
    for size in DEFAULT_NET_BOARDS:
        state = GameState(size, size)
        searcher = Searcher(state, params, evaluator, seed=SEARCH_SEED)
        searcher.run()
        move = searcher.best_move()
        expect(move is None or state.is_legal(move, BLACK), f"{size}x{size}: best move {move} is illegal")
    return f"{evaluator.model_name} ({path.stat().st_size // 1024} KB)"


@check("benchmark.core", "`kata benchmark`'s core measures the bundled positions")
def benchmark_core() -> str:
    from katacli.tuning import benchmark_params, benchmark_positions, run_benchmark
    from katacli.search import SearchParams

    positions = benchmark_positions(9, BENCHMARK_POSITIONS)
    params = benchmark_params(SearchParams.defaults("benchmark"), BENCHMARK_VISITS, 1)
    result = run_benchmark(positions, params, None, seed=SEARCH_SEED)
    expect(result.positions_searched == BENCHMARK_POSITIONS, f"searched {result.positions_searched} positions")
    expect(result.total_visits >= BENCHMARK_POSITIONS * BENCHMARK_VISITS, f"only {result.total_visits} visits")
    line = result.summary_line()
    expect(BENCHMARK_LINE.match(line) is not None, f"unexpected result line: {line}")
    return f"{result.visits_per_second:.0f} visits/s (rollouts, 9x9)"


def _engine_environment() -> dict:
    """The current environment, with this katacli importable by the child process even when not installed."""
    import katacli

    env = dict(os.environ)
    root = str(Path(katacli.__file__).resolve().parents[1])
    env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


@check("gtp.roundtrip", "`kata gtp -human-model` runs as a process with the tiny networks and answers GTP")
def gtp_round_trip() -> str:
    from katacli.gtp.client import GtpClient, GtpClientError
    from katacli.game.coords import parse_vertex
    from katacli.selfcheck.human_checks import GTP_PROFILE, TINY_HUMAN_MODEL_PATH, check_raw_human_nn
    from katacli.selfcheck.reference_checks import TINY_MODEL_PATH

    # -P: never import a source checkout in the working directory instead of this installation. The human
    # net rides along (one process start for both): its answers are checked after the game commands.
    argv = [sys.executable, "-P", "-m", "katacli.cli", "gtp", "-model", str(TINY_MODEL_PATH),
            "-human-model", str(TINY_HUMAN_MODEL_PATH),
            "-override-config", f"maxVisits={GTP_VISITS}, numSearchThreads=2, humanSLProfile={GTP_PROFILE}"]
    log = tempfile.TemporaryFile(mode="w+")  # a file, not a pipe: a chatty engine can never block on it
    client = GtpClient(argv, name="kata gtp", stderr=log, env=_engine_environment())
    move = score = human = ""
    try:
        expect(client.command("protocol_version", GTP_TIMEOUT_SECONDS) == "2", "protocol_version is not 2")
        client.command("boardsize 9", GTP_TIMEOUT_SECONDS)
        client.command("clear_board", GTP_TIMEOUT_SECONDS)
        client.command("komi 7", GTP_TIMEOUT_SECONDS)
        client.command("play B E5", GTP_TIMEOUT_SECONDS)
        move = client.command("genmove W", GTP_TIMEOUT_SECONDS).strip()
        expect(move.upper() != "E5", "genmove answered an occupied point")
        expect(move.lower() in ("pass", "resign") or parse_vertex(move, 9, 9) is not None,
               f"genmove answered {move!r}")
        score = client.command("final_score", GTP_TIMEOUT_SECONDS).strip()
        expect(FINAL_SCORE.match(score) is not None, f"final_score answered {score!r}")
        human = check_raw_human_nn(client, GTP_TIMEOUT_SECONDS)
    except GtpClientError as exc:
        client.close(GTP_TIMEOUT_SECONDS)
        log.seek(0)
        last_lines = log.read().strip().splitlines()[-1:]
        expect(False, f"{exc}{': ' + last_lines[0] if last_lines else ''}")
    finally:
        status = client.close(GTP_TIMEOUT_SECONDS)
        log.close()
    expect(status == 0, f"the engine exited with status {status}")
    return f"genmove W -> {move}, final_score {score}, {human}"
