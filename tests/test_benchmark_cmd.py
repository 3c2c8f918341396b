"""`kata benchmark` and its core (katacli.tuning): positions, result lines, the Elo model, automatic
tuning, and the command's output and errors. Searches are tiny (a few visits, one or two positions)."""
from __future__ import annotations

import json
import re
import threading

import pytest
from typer.testing import CliRunner

from katacli.tuning import BenchmarkResult, benchmark_params, benchmark_positions, recommend, run_benchmark
from katacli.search.benchmark_positions import (
    MAX_BENCHMARK_BOARD_LEN, MIN_BENCHMARK_BOARD_LEN, BenchmarkError, bundled_game, positions_from_game,
    spread_move_numbers,
)
from katacli.tuning.recommend import (
    ELO_PER_SPEED_DOUBLING, autotune_candidates, autotune_threads, elo_effect, thread_cost_elo,
)
from katacli.tuning.runner import BatchSizePolicy, parse_thread_list
from katacli.cli import app, normalize_argv
from katacli.search import SearchParams

from support.paths import BUNDLED_TINY_MODEL as TINY_MODEL
from support.paths import MODELS, TEST_B4, require

SHARED_MODEL = MODELS / TEST_B4
RESULT_LINE = re.compile(r"^numSearchThreads = +(\d+): (\d+) / (\d+) positions, visits/s = [\d.]+ nnEvals/s = [\d.]+ "
                         r"nnBatches/s = [\d.]+ avgBatchSize = ([\d.]+) \([\d.]+ secs\)")


def kata(*args: str):
    return CliRunner().invoke(app, normalize_argv(["benchmark", *args]))


def result(threads: int, visits_per_second: float, seconds: float = 10.0) -> BenchmarkResult:
    return BenchmarkResult(num_threads=threads, total_positions=10, positions_searched=10,
                           total_visits=int(visits_per_second * seconds), total_seconds=seconds)


# --------------------------------------------------------------------------- positions


def test_every_bundled_size_gives_positions_spread_over_the_game():
    for board_len in range(MIN_BENCHMARK_BOARD_LEN, MAX_BENCHMARK_BOARD_LEN + 1):
        game = bundled_game(board_len)
        assert (game.x_size, game.y_size) == (board_len, board_len)
        assert len(game.moves) > board_len * board_len // 2  # a whole game, not a few moves
        positions = benchmark_positions(board_len, 3)
        assert [len(p.moves) for p in positions] == spread_move_numbers(len(game.moves), 3)


def test_spread_move_numbers():
    assert spread_move_numbers(100, 4) == [12, 37, 62, 87]
    assert spread_move_numbers(3, 10) == [0, 1, 2]
    assert spread_move_numbers(0, 5) == [0]


def test_unsupported_board_size_and_bad_count():
    with pytest.raises(BenchmarkError, match="board size 6"):
        bundled_game(6)
    with pytest.raises(BenchmarkError, match="at least 1"):
        positions_from_game(bundled_game(9), 0)


# --------------------------------------------------------------------------- core and result lines


def test_result_line_is_katagos_format():
    r = BenchmarkResult(num_threads=8, total_positions=10, positions_searched=10, total_visits=8000,
                        total_seconds=16.0, nn_evals=7200, nn_batches=1000)
    assert r.summary_line() == ("numSearchThreads =  8: 10 / 10 positions, visits/s = 500.00 nnEvals/s = 450.00 "
                                "nnBatches/s = 62.50 avgBatchSize = 7.20 (16.0 secs)")
    assert r.summary_line(is_baseline=True).endswith("(16.0 secs) (EloDiff baseline)")
    assert r.summary_line(elo_diff=-12.4).endswith("(EloDiff -12)")
    assert r.progress_line() == "numSearchThreads =  8: 10 / 10 positions, visits/s = 500.00 (16.0 secs)"
    r.pipelined = True   # searchPipelining chose two batches in flight: said after KataGo's fields
    assert r.summary_line(elo_diff=5).endswith("(16.0 secs) (EloDiff +5) (pipelined: two batches in flight)")


def test_run_benchmark_with_rollouts_counts_visits_and_reports_progress():
    positions = benchmark_positions(9, 2)
    seen = []
    params = benchmark_params(SearchParams.defaults("benchmark"), 20, 1)
    r = run_benchmark(positions, params, None, on_progress=lambda partial: seen.append(partial.positions_searched),
                      seed=1)
    assert (r.positions_searched, r.total_positions) == (2, 2)
    assert r.total_visits >= 40 and r.nn_evals == 0 and r.average_batch_size == 0.0
    assert seen == [1, 2]
    stop = threading.Event()
    stop.set()
    assert run_benchmark(positions, params, None, stop=stop).positions_searched == 0


def test_gtp_benchmark_line():
    from katacli.tuning import gtp_benchmark_line

    line = gtp_benchmark_line(SearchParams.defaults("gtp"), None, 10, 9, seed=1)
    assert RESULT_LINE.match(line).group(2, 3) == ("10", "10")
    with pytest.raises(BenchmarkError):
        gtp_benchmark_line(SearchParams.defaults("gtp"), None, 10, 25)


def test_thread_list_parsing():
    assert parse_thread_list("1, 2,4,,8") == [1, 2, 4, 8]
    for bad, message in (("1,x,3", "'x' is not a whole number"), ("0", "must be 1 to 4096"),
                         ("5000", "must be 1 to 4096"), (" , ", "at least one")):
        with pytest.raises(ValueError, match=message):
            parse_thread_list(bad)


def test_batch_size_policy():
    assert BatchSizePolicy().size_for(1) == 8  # kata gtp's default nnMaxBatchSize: at least 8 ...
    assert BatchSizePolicy().size_for(13) == 16  # ... and the thread count rounded up to a multiple of 4
    assert BatchSizePolicy(half=True).size_for(7) == 4
    assert BatchSizePolicy(fixed=3).size_for(32) == 3
    with pytest.raises(ValueError):
        BatchSizePolicy(fixed=3, half=True)


# --------------------------------------------------------------------------- the Elo model


def test_elo_model_matches_katagos_rule_of_thumb():
    assert thread_cost_elo(1, 800) == pytest.approx(7.0)
    assert round(thread_cost_elo(1, 5000)) == 2
    # Twice the speed at the same thread count is worth ELO_PER_SPEED_DOUBLING, minus a slightly smaller thread cost.
    gain = elo_effect(result(4, 200), 5.0) - elo_effect(result(4, 100), 5.0)
    assert ELO_PER_SPEED_DOUBLING < gain < ELO_PER_SPEED_DOUBLING + 4 * 7


def test_recommendation_weighs_speed_against_threads():
    # Same speed: the extra threads only cost strength.
    assert recommend([result(1, 100), result(8, 100)]).best.num_threads == 1
    # 16 threads are much faster: worth it.
    rec = recommend([result(1, 100), result(16, 800)], seconds_per_move=5.0)
    assert rec.best.num_threads == 16
    text = "\n".join(rec.explanation())
    assert "each speed doubling gains perhaps ~250 Elo" in text
    assert "numSearchThreads =  1: (baseline)\n" in text
    assert re.search(r"numSearchThreads = 16: +\+\d+ Elo \(recommended\)", text)
    data = rec.to_dict()
    assert data["recommended_threads"] == 16 and data["results"][0]["elo_vs_baseline"] == 0


def test_autotune_finds_the_peak_and_raises_the_ceiling():
    def measure_with_peak(peak):
        def measure(threads):  # speed grows until `peak` threads, then drops
            speed = 100 * min(threads, peak) / (1 + max(0, threads - peak) / 4)
            return result(threads, speed)
        return measure

    measured = autotune_threads(measure_with_peak(6), 5.0)
    assert recommend(measured, 5.0).best.num_threads in (5, 6, 8)
    assert [r.num_threads for r in measured] == sorted(r.num_threads for r in measured)
    assert len(measured) < len([c for c in autotune_candidates() if c <= 32])  # a search, not a sweep
    rounds = []
    measured = autotune_threads(measure_with_peak(80), 1000.0, on_round=rounds.append)
    assert len(rounds) >= 2 and max(r.num_threads for r in measured) > 32


# --------------------------------------------------------------------------- the command


def test_rollout_engine_with_model_rollouts():
    r = kata("-model", "rollouts", "-v", "20", "-n", "2", "-t", "1,2")
    assert r.exit_code == 0, r.output
    assert "benchmarking the rollout engine" in r.stdout
    lines = [m for m in map(RESULT_LINE.match, r.stdout.splitlines()) if m]
    assert [m.group(1) for m in lines] == ["1", "2"]
    assert "(EloDiff baseline)" in r.stdout and "(recommended)" in r.stdout
    assert "Benchmark summary" in r.stdout


def test_rollout_engine_without_thread_list_measures_the_configured_count(tmp_path):
    cfg = tmp_path / "gtp.cfg"
    cfg.write_text("numSearchThreads = 3\nlogToStderr = false\n")
    r = kata("-model", "rollouts", "-config", str(cfg), "-v", "10", "-n", "1")
    assert r.exit_code == 0, r.output
    assert "currently set to use numSearchThreads = 3" in r.stdout
    assert [m.group(1) for m in map(RESULT_LINE.match, r.stdout.splitlines()) if m] == ["3"]


def test_json_output(tmp_path):
    sgf = tmp_path / "game.sgf"
    sgf.write_text("(;GM[1]SZ[9]KM[7];B[ee];W[cc];B[gg];W[cg];B[gc];W[dd])")
    r = kata("-model", "rollouts", "-sgf", str(sgf), "-v", "10", "-n", "3", "-t", "1,4", "--json")
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["board_size"] == [9, 9] and data["positions"] == 3 and data["engine"] == "rollouts"
    assert [x["num_threads"] for x in data["results"]] == [1, 4]
    assert data["recommended_threads"] in (1, 4)
    assert "Testing different numbers of threads (board size 9x9)" in r.stderr
    assert data["peak_resident_mb"] > 10 and "Peak resident memory of this process:" in r.stderr


@pytest.mark.parametrize("model", [TINY_MODEL, pytest.param(SHARED_MODEL, marks=pytest.mark.needs_shared)],
                         ids=["bundled-tiny", "shared-b4c32"])
def test_with_a_network_batches_grow_with_threads(model):
    require(model)
    r = kata("-model", str(model), "-v", "12", "-n", "1", "-t", "1,4", "--boardsize", "9")
    assert r.exit_code == 0, r.output
    batch_sizes = {m.group(1): float(m.group(4)) for m in map(RESULT_LINE.match, r.stdout.splitlines()) if m}
    assert batch_sizes["1"] == 1.0 and batch_sizes["4"] > 1.5
    assert "Loaded model" in r.stdout and "The network runs on:" in r.stdout


def test_half_batch_size_limits_batches():
    r = kata("-model", str(TINY_MODEL), "-v", "12", "-n", "1", "-t", "4", "--boardsize", "9", "--half-batch-size")
    assert r.exit_code == 0, r.output
    (match,) = [m for m in map(RESULT_LINE.match, r.stdout.splitlines()) if m]
    assert float(match.group(4)) <= 2.0


@pytest.mark.parametrize("args, message", [
    (["-model", "/no/such/net.bin.gz"], "model file not found: /no/such/net.bin.gz"),
    (["-t", "1,x,3"], "invalid value: 'x'"),
    (["-t", "0"], "invalid value: 0"),
    (["-t", ","], "at least one valid value"),
    (["-t", "2", "-s"], "Cannot both automatically tune"),
    (["-v", "1"], "Number of visits to use: invalid value 1"),
    (["-n", "0"], "Number of positions per game to use: invalid value 0"),
    (["-time", "0"], "seconds per game move"),
    (["--boardsize", "25"], "Board size to test: invalid value 25"),
    (["--sgf", "/no/such/game.sgf"], "Could not open file /no/such/game.sgf"),
    (["--sgf", "x.sgf", "--boardsize", "9"], "Cannot specify both -sgf and -boardsize"),
    (["--fixed-batch-size", "4", "--half-batch-size"], "Cannot specify both fixed batch size"),
    (["--fixed-batch-size", "0"], "Invalid value for fixed batch size"),
    (["-config", "/no/such.cfg"], "not found"),
])
def test_bad_input_is_one_clear_line(args, message):
    r = kata(*args)
    assert r.exit_code == 1
    assert message in r.stderr and r.stderr.startswith("error: ")
    assert "Traceback" not in r.output


@pytest.mark.parametrize("threads", ["", "  "])
def test_an_empty_thread_list_tunes_as_in_katago(threads):
    # A script's `-t "$THREADS"` with the variable empty: KataGo tunes the thread count.
    from katacli.commands.benchmark import BenchmarkOptions, validate

    options = BenchmarkOptions(model=None, config=None, override_config=None, visits=None, threads=threads,
                               num_positions=1, seconds_per_move=5.0, tune=False, sgf=None, board_size=None,
                               fixed_batch_size=None, half_batch_size=False, as_json=False)
    assert validate(options) is None


def test_unreadable_model_file(tmp_path):
    bad = tmp_path / "broken.bin.gz"
    bad.write_bytes(b"not a network")
    r = kata("-model", str(bad), "-v", "5", "-t", "1")
    assert r.exit_code == 1
    assert "error: -model:" in r.stderr and "not a valid gzip file" in r.stderr and "Traceback" not in r.output


def test_help_explains_the_command():
    r = CliRunner().invoke(app, ["benchmark", "--help"])
    assert r.exit_code == 0
    for flag in ("--threads", "--visits", "--numpositions", "--time", "--json", "--model"):
        assert flag in r.stdout
