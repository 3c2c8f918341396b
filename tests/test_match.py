"""`kata match`: bots from a KataGo match config, pairings, games with tiny random nets and the
rollout engine, SGF files, the results table / JSON, and clear errors for bad configs."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from katacli._core.game_state import GameState
from katacli.cli import app, normalize_argv
from katacli.config import Config, ConfigError
from katacli.game.coords import BLACK
from katacli.game.sgf import load_sgf
from katacli.match.results import MatchResults, MoveTimes, elo_of_score, move_times_due, wilson_interval
from katacli.match.settings import MatchSettings
from support.match import TINY_GAMES_CONFIG, write_tiny_net
from support.processes import HAS_PROC, wait_until_gone, worker_pids

BASE = TINY_GAMES_CONFIG + """maxMovesPerGame = 60
maxVisits = 8
"""


def write_config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "match.cfg"
    path.write_text(BASE + text)
    return path


def hit_move_limit(sgf_path: Path) -> bool:
    """A game stopped at maxMovesPerGame (60 here: a 5x5 rollout game can get there) has no RE, as KataGo's."""
    return "stopped at maxMovesPerGame" in sgf_path.read_text()


def has_result_or_hit_move_limit(sgf_path: Path) -> bool:
    return bool(load_sgf(str(sgf_path)).result) != hit_move_limit(sgf_path)


def kata_match(*args: str):
    return CliRunner().invoke(app, normalize_argv(["match", *args]))


def test_settings_follow_katago_keys(tmp_path):
    net = write_tiny_net(tmp_path / "a.bin.gz", 1)
    cfg = Config.from_text(BASE + f"numBots = 3\nbotName0 = a\nbotName1 = b\nbotName2 = r\nnnModelFile = {net}\n"
                           "nnModelFile2 = rollouts\nmaxVisits1 = 30\nsecondaryBots = 1,2\nnumGamesTotal = 6\n"
                           "extraPairs = 2-1\nextraPairsAreOneSidedBW = true\n")
    s = MatchSettings.from_config(cfg)
    assert [b.name for b in s.bots] == ["a", "b", "r"]
    assert [b.params.max_visits for b in s.bots] == [8, 30, 8]
    assert s.bots[2].uses_rollouts and s.bots[0].model == str(net)
    # 1 and 2 are both secondary: they meet only through the one-sided extra pair.
    assert sorted(s.pairings) == [(0, 1), (0, 2), (1, 0), (2, 0), (2, 1)]


def test_include_bots_past_num_bots_include_nothing_as_katago(tmp_path):
    cfg = Config.from_text(BASE + "numBots = 3\nbotName0 = a\nbotName1 = b\nbotName2 = c\nnnModelFile = rollouts\n"
                                  "numGamesTotal = 2\nincludeBots = 0,2,5\n")
    assert sorted(MatchSettings.from_config(cfg).pairings) == [(0, 2), (2, 0)]


@pytest.mark.parametrize("text, message", [
    ("numBots = 2\nbotName0 = a\nbotName2 = b\nnnModelFile = rollouts\nnumGamesTotal = 2\n", "botName1 is missing"),
    ("numBots = 2\nbotName0 = a\nnnModelFile = rollouts\nnumGamesTotal = 2\n", "botName1 is missing"),
    ("numBots = 2\nbotName0 = a\nbotName1 = b\nnnModelFile0 = rollouts\nnnModelFile1 = nowhere.bin.gz\n"
     "numGamesTotal = 2\n", "model file not found: nowhere.bin.gz"),
    ("numBots = 2\nbotName0 = a\nbotName1 = b\nnnModelFile = rollouts\n", "numGamesTotal is required"),
    ("numBots = 1\nbotName = a\nnnModelFile = rollouts\nnumGamesTotal = 2\n", "no games to play: with one bot"),
    ("numBots = 2\nbotName0 = a\nbotName1 = b\nnnModelFile = rollouts\nnumGamesTotal = 2\nsecondaryBots = 0,1\n",
     "leave no pair of bots"),
    ("numBots = 2\nbotName0 = a\nbotName1 = b\nnnModelFile0 = rollouts\nnnModelFile1 = /no/such.bin.gz\n"
     "numGamesTotal = 2\n", "nnModelFile1 for bot b: model file not found"),
    ("numBots = 2\nbotName0 = a\nbotName1 = a\nnnModelFile = rollouts\nnumGamesTotal = 2\n", "must differ"),
    ("numBots = 2\nbotName0 = a\nbotName1 = b\nnnModelFile = rollouts\nnumGamesTotal = 2\nkomiAuto = true\n",
     "need a bot with a network"),
    ("numBots = 2\nbotName0 = a\nbotName1 = b\nnnModelFile = rollouts\nnumGamesTotal = 2\nmaxVisits1 = abc\n",
     "line 20, as maxVisits1"),   # the key as written, beside the value's line
])
def test_bad_configs_give_one_line_errors(tmp_path, text, message):
    base = BASE.replace("komiMean = 6.5\n", "") if "komiAuto" in text else BASE
    with pytest.raises(ConfigError, match=message):
        MatchSettings.from_config(Config.from_text(base + text))
    (tmp_path / "bad.cfg").write_text(base + text)
    done = kata_match("-config", str(tmp_path / "bad.cfg"))
    assert done.exit_code == 1 and message in done.stderr and "Traceback" not in done.output
    assert len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("processes", [1, 2])
def test_nets_and_rollouts_play_a_match(tmp_path, processes):
    """In one process (threads share each network's batches) and in two worker processes."""
    net_a, net_b = write_tiny_net(tmp_path / "net-a.bin.gz", 1), write_tiny_net(tmp_path / "net-b.bin.gz", 2)
    cfg = write_config(tmp_path, f"numBots = 3\nbotName0 = a\nbotName1 = b\nbotName2 = rollouts\n"
                                 f"nnModelFile0 = {net_a}\nnnModelFile1 = {net_b}\nnnModelFile2 = rollouts\n"
                                 f"numGamesTotal = 6\nmaxVisits2 = 16\nnumMatchProcesses = {processes}\n")
    sgfs = tmp_path / "sgfs"
    done = kata_match("-config", str(cfg), "-sgf-output-dir", str(sgfs), "--json", "--seed", "5")
    assert done.exit_code == 0, done.output
    report = json.loads(done.stdout)
    assert report["games"] == 6 and not report["interrupted"]
    assert report["black_wins"] + report["white_wins"] + report["draws"] == 6
    pairs = {(p["bot"], p["opponent"]): p for p in report["pairs"]}
    assert set(pairs) == {("a", "b"), ("a", "rollouts"), ("b", "rollouts")}   # one round: every pair, both colours
    assert all(p["games"] == 2 for p in pairs.values())
    assert set(report["elo"]) == {"a", "b", "rollouts"} and report["elo"]["a"] == 0.0
    files = sorted(sgfs.iterdir())
    assert len(files) == 6 and all(f.suffix == ".sgf" for f in files)
    names = set()
    for f in files:
        game = load_sgf(str(f))
        assert (game.x_size, game.y_size) == (5, 5) and has_result_or_hit_move_limit(f)
        names.add((game.black_name, game.white_name))
        replay = GameState(5, 5, game.rules.to_core_tuple(), BLACK)
        for player, move in game.moves:        # every recorded move is legal where it was played
            assert replay.is_legal(move, player), (f.name, player, move)
            replay.play(move, player)
        # KataGo's comment on each searched move (White's win, loss, no result, score, visits), the result last
        text = f.read_text()
        assert len(re.findall(r";[BW]\[[a-z]*\]C\[\d\.\d\d \d\.\d\d \d\.\d\d -?\d+\.\d v=\d+", text)) == len(game.moves)
        # KataGo's game data as the root comment (kata wrote "match game"): hash, type, each side's search time.
        assert re.search(r"C\[startTurnIdx=0,initTurnNum=0,gameHash=[0-9A-F]{32},gtype=normal,"
                         r"bTimeUsed=[0-9.e-]+,wTimeUsed=[0-9.e-]+[\] ]", text), text[:400]
        assert hit_move_limit(f) or text.rstrip().endswith(f" result={game.result}])")
    assert len(names) == 6


def test_table_output_and_log_file(tmp_path):
    long_name = "r2-a-name-long-enough-that-an-80-column-table-would-cut-it"
    cfg = write_config(tmp_path, f"numBots = 2\nbotName0 = r1\nbotName1 = {long_name}\nnnModelFile = rollouts\n"
                                 "numGamesTotal = 2\nmaxVisits1 = 12\nmaxVisitz = 3\n")
    done = kata_match("-config", str(cfg), "-log-file", str(tmp_path / "match.log"), "--quiet")
    assert done.exit_code == 0, done.output
    assert long_name in done.stdout   # a table written to a file or pipe is not cut to 80 columns
    assert "Unknown config key 'maxVisitz'" in done.stderr and "maxVisits1" not in done.stderr   # a bot's key is read
    assert "Match results: 2 games" in done.stdout and "win rate" in done.stdout
    assert f"r1 (B) vs {long_name} (W)" in (tmp_path / "match.log").read_text() or \
        f"{long_name} (B) vs r1 (W)" in (tmp_path / "match.log").read_text()


@pytest.mark.subprocess
def test_the_log_goes_to_stdout_with_log_to_stdout_and_names_stdout_cannot_encode_are_escaped(tmp_path):
    # match_example.cfg's logToStdout = true: KataGo's match logs on stdout (kata logged on stderr). A bot
    # name stdout cannot encode (PYTHONIOENCODING=ascii here; Windows' code page in a redirect) raised
    # UnicodeEncodeError after the games were played, and the results were lost.
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = 中文 é\nbotName1 = r2\nnnModelFile = rollouts\n"
                                 "numGamesTotal = 2\nlogToStdout = true\n")
    result = subprocess.run([sys.executable, "-m", "katacli.cli", "match", "-config", str(cfg)], capture_output=True,
                            env={**__import__("os").environ, "PYTHONIOENCODING": "ascii"}, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    out = result.stdout.decode("ascii")
    assert "game 1: " in out and "game 2: " in out and "Match results: 2 games" in out
    assert "\\u4e2d\\u6587 \\xe9" in out and "Traceback" not in result.stderr.decode()


def test_another_commands_key_is_warned_about_as_katago_does(tmp_path):
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = r1\nbotName1 = r2\nnnModelFile = rollouts\n"
                                 "numGamesTotal = 2\nmaxVisits1 = 12\nnumAnalysisThreads = 4\n")
    done = kata_match("-config", str(cfg), "--quiet")
    assert done.exit_code == 0, done.output
    unused = [line for line in done.stderr.splitlines() if "Unused key" in line]
    assert len(unused) == 1 and "'numAnalysisThreads'" in unused[0], done.stderr


def test_keys_no_bot_reads_are_warned_about_and_the_match_plays_as_katago_does(tmp_path):
    # Left over from a bigger match (bot 2's keys, its pattern key), a match-wide key given a bot's index,
    # the plain network key every bot overrides: KataGo plays and names each as an Unused key.
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = r1\nbotName1 = r2\nnnModelFile0 = rollouts\n"
                                 "nnModelFile1 = rollouts\nnnModelFile = rollouts\nnumGamesTotal = 2\n"
                                 "botName2 = r3\nmaxVisits2 = 30\navoidSgfPatternUtility2 = 0.1\nkomiMean1 = 7\n"
                                 "maxVisits1 = 12\nmaxVisits0 = 10\n")
    done = kata_match("-config", str(cfg), "--quiet")
    assert done.exit_code == 0, done.output
    unused = sorted(re.findall(r"Unused key '(\w+)'", done.stderr))
    # maxVisits (BASE's): both bots read their own
    assert unused == ["avoidSgfPatternUtility2", "botName2", "komiMean1", "maxVisits", "maxVisits2",
                      "nnModelFile"], done.stderr
    assert "Match results: 2 games" in done.stdout


def test_a_log_file_that_cannot_be_written_is_a_one_line_error(tmp_path):
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = r1\nbotName1 = r2\nnnModelFile = rollouts\nnumGamesTotal = 2\n")
    for log_file in (tmp_path, tmp_path / "missing" / "match.log"):   # a directory, a missing folder
        done = kata_match("-config", str(cfg), "-log-file", str(log_file), "--quiet")
        assert done.exit_code == 1 and done.stderr.startswith("error: -log-file: cannot write "), done.output
        assert done.exception is None or isinstance(done.exception, SystemExit)
    a_file = tmp_path / "a_file"
    a_file.write_text("")
    done = kata_match("-config", str(cfg), "-sgf-output-dir", str(a_file), "--quiet")   # refused before any game
    assert done.exit_code == 1 and "-sgf-output-dir: " in done.stderr and "is a file" in done.stderr, done.output


def test_the_average_move_time_is_logged_when_katagos_match_logs_it(tmp_path):
    assert [n for n in range(1, 21) if move_times_due(n)] == [1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20]
    times = MoveTimes()
    times.add("b", "a", (1.5, 3.0), (3, 2))
    times.add("a", "b", (1.0, 0.5), (2, 1))
    assert times.lines() == ["Avg move time used by a 1 4 moves", "Avg move time used by b 0.5 4 moves"]
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = r1\nbotName1 = r2\nnnModelFile = rollouts\nnumGamesTotal = 3\n")
    done = kata_match("-config", str(cfg), "-log-file", str(tmp_path / "match.log"), "--quiet")
    assert done.exit_code == 0, done.output
    lines = (tmp_path / "match.log").read_text().splitlines()
    assert sum("Avg move time used by r1 " in line for line in lines) == 3   # after games 1, 2 and 3
    assert re.search(r"Avg move time used by r2 [0-9.e-]+ \d+ moves", lines[-1])


@pytest.mark.subprocess
def test_worker_processes_leave_the_match_count_to_their_parent(tmp_path):
    # Each worker logged its own "N games finished" (1, 2, 1, 3 in a 4-game match), to the log file only.
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = r1\nbotName1 = r2\nnnModelFile = rollouts\n"
                                 "numGamesTotal = 4\nnumMatchProcesses = 2\nlogGamesEvery = 1\n")
    done = kata_match("-config", str(cfg), "-log-file", str(tmp_path / "match.log"), "--quiet")
    assert done.exit_code == 0, done.output
    lines = [line for line in (tmp_path / "match.log").read_text().splitlines() if line.endswith("games finished")]
    assert [line.split(" INFO ", 1)[1] for line in lines] == [f"{n} games finished" for n in (1, 2, 3, 4)]
    assert not any("[worker" in line for line in lines)   # the parent's count of the whole match


def test_results_statistics():
    r = MatchResults(["x", "y"])
    for _ in range(9):
        r.add("x", "y", 1)
    r.add("y", "x", 0)
    (pair,) = [t.as_dict() for t in r.pairs.values()]
    assert (pair["wins"], pair["losses"], pair["draws"]) == (9, 0, 1) and pair["win_rate"] == 0.95
    low, high = wilson_interval(9.5, 10)
    assert low < 0.95 < high <= 1.0 and pair["win_rate_95"] == [low, high]
    assert pair["elo_diff"] == pytest.approx(400 * __import__("math").log10(19))
    assert elo_of_score(0.5) == 0.0 and elo_of_score(1.0) > 1000
    sweep = MatchResults(["x", "y"])
    for _ in range(3):
        sweep.add("x", "y", 1)
    (swept,) = [t.as_dict() for t in sweep.pairs.values()]
    assert swept["elo_diff"] is None and swept["elo_diff_95"][1] is None and swept["elo_diff_95"][0] is not None
    assert 0 < sweep.bot_elos()["x"] - sweep.bot_elos()["y"] < 1000   # finite, thanks to the virtual draw
    assert r.bot_elos()["y"] < 0 == r.bot_elos()["x"]


def test_a_bot_left_out_by_include_bots_needs_no_model_file():
    """KataGo's match_example.cfg defines many bots and plays a few: an unplayed bot's network is never read
    (kata refused the whole match for its missing file)."""
    cfg = Config.from_text(BASE + "numBots = 3\nbotName0 = a\nbotName1 = b\nbotName2 = c\nnnModelFile0 = rollouts\n"
                           "nnModelFile1 = rollouts\nnnModelFile2 = /no/such.bin.gz\nincludeBots = 0,1\n"
                           "numGamesTotal = 2\n")
    settings = MatchSettings.from_config(cfg)
    assert sorted(settings.pairings) == [(0, 1), (1, 0)]


def test_the_sgf_handicap_counts_black_s_first_moves_as_katago_s_match():
    """A handicap game set up with one stone and Black to move (numExtraBlackFixed = 1): KataGo writes HA[2]
    (its SGF counts Black's first move as a handicap stone); kata wrote HA[0]."""
    from katacli._core.board import GoBoard
    from katacli._core.game_state import GameState
    from katacli.match.game import MatchGame

    board = GoBoard(9, 9)
    board.set_stone((4, 4), 1)
    state = GameState(9, 9, board=board)
    state.play((2, 4), 1)
    state.play((6, 6), 2)
    assert "HA[2]" in MatchGame("a", "b", state, hit_move_limit=True).sgf()


def test_a_bot_against_itself_scores_black_s_wins_and_white_s_losses():
    """extraPairs = 0-0: every win went to the one name (100% for a bot playing itself, B+R B+R W+R B+R)."""
    r = MatchResults(["solo"])
    for winner in (1, 1, 2, 1):
        r.add("solo", "solo", winner)
    (pair,) = [t.as_dict() for t in r.pairs.values()]
    assert (pair["wins"], pair["losses"], pair["draws"]) == (3, 1, 0)
    assert (r.black_wins, r.white_wins) == (3, 1)


@pytest.mark.subprocess
def test_ctrl_c_keeps_only_whole_sgf_files(tmp_path):
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = r1\nbotName1 = r2\nnnModelFile = rollouts\n"
                                 "numGamesTotal = 100000\n")
    sgfs = tmp_path / "sgfs"
    proc = subprocess.Popen([sys.executable, "-m", "katacli.cli", "match", "-config", str(cfg), "-sgf-output-dir",
                             str(sgfs), "--json", "-override-config", "maxVisits=30,bSizes=7,maxMovesPerGame=120"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(sgfs.glob("*.sgf"))) < 2 and proc.poll() is None:
        time.sleep(0.2)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err   # stopped cleanly, status 0 as KataGo's match ("Exited cleanly after signal")
    report = json.loads(out)
    assert report["interrupted"] and report["games"] >= 2
    files = list(sgfs.iterdir())
    assert len(files) == report["games"] and all(f.suffix == ".sgf" for f in files)
    for f in files:
        assert has_result_or_hit_move_limit(f)


@pytest.mark.subprocess
def test_sigkill_leaves_only_whole_sgf_files_and_a_rerun_cleans_up(tmp_path):
    cfg = write_config(tmp_path, "numBots = 2\nbotName0 = r1\nbotName1 = r2\nnnModelFile = rollouts\n"
                                 "numGamesTotal = 100000\n")
    sgfs = tmp_path / "sgfs"
    proc = subprocess.Popen([sys.executable, "-m", "katacli.cli", "match", "-config", str(cfg), "-sgf-output-dir",
                             str(sgfs), "--quiet"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and len(list(sgfs.glob("*.sgf"))) < 3 and proc.poll() is None:
        time.sleep(0.05)
    workers = worker_pids(proc) if HAS_PROC else []
    proc.kill()
    proc.wait(timeout=60)
    # The kernel kills the workers with their parent, but one can still be finishing a system call
    # (creating its next game's .partial file) when the parent is reaped: wait until they are gone.
    wait_until_gone(workers)
    finished = list(sgfs.glob("*.sgf"))
    assert len(finished) >= 3
    for f in finished:
        assert has_result_or_hit_move_limit(f)
    (sgfs / f".match-x.sgf.{proc.pid}.partial").write_text("(;FF[4]")   # as if cut off mid-write
    rerun = kata_match("-config", str(cfg), "-sgf-output-dir", str(sgfs), "--quiet", "-override-config",
                       "numGamesTotal=1")
    assert rerun.exit_code == 0, rerun.output
    leftovers = sorted(f.name for f in sgfs.iterdir() if f.suffix != ".sgf" or f.name.startswith("."))
    assert not leftovers, f"left after the rerun: {leftovers} (killed run's pid {proc.pid}, workers {workers})"


from support.paths import CONFIGS  # noqa: E402  (beside the tests that use it)


@pytest.mark.parametrize("name", ["match_example.cfg", "gatekeeper_example.cfg"])
def test_shipped_configs_are_complete_and_known(tmp_path, name):
    import re

    from katacli.config_keys import is_known
    from katacli.match.settings import unknown_keys

    cfg = Config.from_file(CONFIGS / name, mode="gtp")
    assert unknown_keys(cfg) == []
    for line in (CONFIGS / name).read_text().splitlines():   # commented-out settings name real keys
        m = re.match(r"^#\s*([A-Za-z][A-Za-z0-9]*)\s*=", line.strip())
        if m:
            assert is_known(m.group(1)) or is_known(re.sub(r"\d+$", "", m.group(1))), m.group(1)
    net = write_tiny_net(tmp_path / "n.bin.gz", 1)
    for key, value in (("numBots", "2"), ("botName0", "x"), ("botName1", "y"), ("nnModelFile0", str(net)),
                       ("nnModelFile1", "rollouts")):
        cfg.set(key, value)
    settings = MatchSettings.from_config(cfg, num_games_key="numGamesPerGating" if "gatekeeper" in name
                                         else "numGamesTotal")
    assert len(settings.bots) == 2 and settings.num_games_total > 0


@pytest.mark.subprocess
def test_a_corrupt_bot_network_is_a_one_line_error_before_any_game(tmp_path):
    import subprocess
    import sys

    broken = tmp_path / "broken.bin.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00 not a network at all")
    config = tmp_path / "m.cfg"
    config.write_text("numBots = 2\nbotName0 = a\nbotName1 = b\nnnModelFile0 = rollouts\n"
                      f"nnModelFile1 = {broken}\nnumGamesTotal = 2\n")
    result = subprocess.run([sys.executable, "-m", "katacli.cli", "match", "-config", str(config),
                             "-sgf-output-dir", str(tmp_path / "sgfs")], capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    assert "nnModelFile1 for bot b" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not list(tmp_path.glob("sgfs/*.sgf"))
