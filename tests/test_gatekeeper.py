"""`kata gatekeeper`: candidates are played against the accepted net and moved (whole files or
directories) into accepted/ or rejected/ by KataGo's rule; old, unreadable and half-written
candidates are handled without ever accepting a broken file."""
from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from katacli.cli import app, normalize_argv
from katacli.config import Config
from katacli.match.gatekeeper import Gatekeeper
from katacli.setup.engine_settings import NNSettings
from support.match import TINY_GAMES_CONFIG, write_tiny_net

CONFIG_GAME_THREADS = 2   # TINY_GAMES_CONFIG's numGameThreads
CONFIG = TINY_GAMES_CONFIG + """maxMovesPerGame = 50
numGamesPerGating = 4
maxVisits = 4
"""


def make_dirs(tmp_path: Path) -> dict:
    dirs = {name: tmp_path / name for name in ("test", "accepted", "rejected", "sgfs", "selfplay")}
    for d in dirs.values():
        d.mkdir()
    write_tiny_net(dirs["accepted"] / "base.bin.gz", 1)
    return dirs


def keeper(dirs: dict, required: float, **kw) -> Gatekeeper:
    cfg = Config.from_text(CONFIG)
    return Gatekeeper(cfg, NNSettings.from_config(cfg, "gtp"), dirs["test"], dirs["accepted"], dirs["rejected"],
                      dirs["sgfs"], dirs["selfplay"], required, seed=3, settle_seconds=0.2, poll_seconds=0.1, **kw)


@pytest.mark.parametrize("processes", [1, 2])
def test_accepts_by_the_required_share_and_moves_directories(tmp_path, processes):
    dirs = make_dirs(tmp_path)
    time.sleep(0.01)
    write_tiny_net(dirs["test"] / "cand-a" / "model.bin.gz", 2)        # a directory export, KataGo style
    outcomes = keeper(dirs, required=0.0, num_processes=processes).run(quit_if_no_nets=True)
    assert [(o.candidate, o.accepted) for o in outcomes] == [("cand-a", True)]
    assert (dirs["accepted"] / "cand-a" / "model.bin.gz").is_file() and not list(dirs["test"].iterdir())
    assert all((dirs["selfplay"] / "cand-a" / sub).is_dir() for sub in ("sgfs", "tdata", "vadata"))
    # Any finished game decides a share of 0: the rest are not played (as KataGo); the finished ones are kept.
    games = outcomes[0].results.games
    assert 1 <= games and len(list((dirs["sgfs"] / "cand-a").glob("*.sgf"))) == games
    if processes == 1:
        assert games <= CONFIG_GAME_THREADS   # stopped at the first game recorded; the other thread's dropped


@pytest.mark.parametrize("required, accepted", [(0.0, True), (1.01, False)])
def test_a_decided_gating_stops_as_katago(tmp_path, required, accepted):
    """One game thread: the first finished game already decides a required share of 0 (won) or above 1
    (lost, with 3 left it cannot reach 4.04 points), so the other three are not played."""
    dirs = make_dirs(tmp_path)
    time.sleep(0.01)
    write_tiny_net(dirs["test"] / "cand-d.bin.gz", 14)
    cfg = Config.from_text(CONFIG.replace(f"numGameThreads = {CONFIG_GAME_THREADS}", "numGameThreads = 1"))
    k = Gatekeeper(cfg, NNSettings.from_config(cfg, "gtp"), dirs["test"], dirs["accepted"], dirs["rejected"],
                   dirs["sgfs"], dirs["selfplay"], required, seed=3, settle_seconds=0.2, poll_seconds=0.1)
    (outcome,) = k.run(quit_if_no_nets=True)
    assert outcome.accepted == accepted and outcome.results.games == 1
    assert len(list((dirs["sgfs"] / "cand-d.bin.gz").glob("*.sgf"))) == 1


def test_rejects_below_the_required_share(tmp_path):
    dirs = make_dirs(tmp_path)
    time.sleep(0.01)
    write_tiny_net(dirs["test"] / "cand-b.bin.gz", 3)
    (dirs["test"] / "cand-b.json").write_text("{}")            # kata train's summary beside its export
    (outcome,) = keeper(dirs, required=1.01).run(quit_if_no_nets=True)
    assert not outcome.accepted and "scored" in outcome.reason
    assert (dirs["rejected"] / "cand-b.bin.gz").is_file() and not (dirs["accepted"] / "cand-b.bin.gz").exists()
    assert (dirs["rejected"] / "cand-b.json").is_file() and not list(dirs["test"].iterdir())


def test_old_and_broken_candidates_are_rejected_without_games(tmp_path):
    dirs = make_dirs(tmp_path)
    old = write_tiny_net(dirs["test"] / "old.bin.gz", 4)
    base_time = os.stat(dirs["accepted"] / "base.bin.gz").st_mtime
    os.utime(old, (base_time - 100, base_time - 100))
    # copied within the second of the accepted one, a little before it: KataGo compares whole seconds
    same_second = write_tiny_net(dirs["test"] / "same-second.bin.gz", 7)
    second = os.stat(dirs["accepted"] / "base.bin.gz").st_mtime_ns // 1_000_000_000 * 1_000_000_000
    os.utime(dirs["accepted"] / "base.bin.gz", ns=(second + 600_000_000, second + 600_000_000))
    os.utime(same_second, ns=(second + 100_000_000, second + 100_000_000))
    broken = dirs["test"] / "broken.bin.gz"
    broken.write_bytes(b"\x1f\x8b not really a network")
    outcomes = keeper(dirs, required=0.0).run(quit_if_no_nets=True)
    assert {o.candidate: o.accepted for o in outcomes} == {"old.bin.gz": False, "broken.bin.gz": False,
                                                           "same-second.bin.gz": True}
    reasons = {o.candidate: o.reason for o in outcomes}
    assert "older than" in reasons["old.bin.gz"] and "cannot be loaded" in reasons["broken.bin.gz"]
    assert "scored" in reasons["same-second.bin.gz"]   # played, not rejected as older
    assert sorted(p.name for p in dirs["rejected"].iterdir()) == ["broken.bin.gz", "old.bin.gz"]


def test_a_file_still_being_written_is_waited_for(tmp_path):
    dirs = make_dirs(tmp_path)
    full = write_tiny_net(tmp_path / "staging" / "growing.bin.gz", 5).read_bytes()
    target = dirs["test"] / "growing.bin.gz"
    target.write_bytes(full[: len(full) // 3])

    def finish_writing() -> None:
        time.sleep(0.5)
        with open(target, "ab") as f:
            f.write(full[len(full) // 3:])

    writer = threading.Thread(target=finish_writing)
    k = keeper(dirs, required=0.0)
    k.settle_seconds = 0.3
    writer.start()
    found = k.settled_candidate()
    writer.join()
    assert found is not None and target.read_bytes() == full
    assert found.path.stat().st_size == len(full)


def test_command_errors_and_empty_directory(tmp_path):
    cfg = tmp_path / "g.cfg"
    cfg.write_text(CONFIG)
    args = ["gatekeeper", "-config", str(cfg), "-test-models-dir", str(tmp_path / "t"), "-accepted-models-dir",
            str(tmp_path / "a"), "-rejected-models-dir", str(tmp_path / "r"), "-sgf-output-dir", str(tmp_path / "s"),
            "-quit-if-no-nets-to-test"]
    empty = CliRunner().invoke(app, normalize_argv(args))
    assert empty.exit_code == 0, empty.output                       # nothing to test: quits as asked
    assert f"no network to test in {tmp_path / 't'}: quitting" in empty.stderr   # and says so (a typo shows)
    write_tiny_net(tmp_path / "t" / "cand.bin.gz", 6)
    bad_prop = CliRunner().invoke(app, normalize_argv(args + ["-required-candidate-win-prop", "2"]))
    assert bad_prop.exit_code == 1 and "between 0 and 1" in bad_prop.stderr
    # How many games to gate with has no default, as in KataGo (kata played 100 without a word)
    unset = CliRunner().invoke(app, normalize_argv(args + ["-override-config", "numGamesPerGating="]))
    assert unset.exit_code == 1 and "Could not find key 'numGamesPerGating'" in unset.stderr
    # Nothing accepted yet (a run's start): the candidate plays a random network, as in KataGo's loop
    first = CliRunner().invoke(app, normalize_argv(args + ["-required-candidate-win-prop", "0"]))
    assert first.exit_code == 0, first.output
    assert "testing cand.bin.gz against a random one" in first.stderr and "against random" in first.stderr
    assert (tmp_path / "a" / "cand.bin.gz").is_file() and not (tmp_path / "t" / "cand.bin.gz").exists()
    assert 1 <= len(list((tmp_path / "s" / "cand.bin.gz").glob("*.sgf"))) <= CONFIG_GAME_THREADS   # decided early


def test_candidates_in_one_batch_folder_are_gated_one_by_one(tmp_path):
    """Exports side by side in a folder under the test folder: each one's own folder moves, as KataGo's (kata
    moved the batch folder whole with the newest, and the other went to rejected/ without a game)."""
    dirs = make_dirs(tmp_path)
    time.sleep(0.01)
    write_tiny_net(dirs["test"] / "batch" / "c1" / "model.bin.gz", 9)
    time.sleep(0.01)
    write_tiny_net(dirs["test"] / "batch" / "c2" / "model.bin.gz", 10)
    outcomes = keeper(dirs, required=0.0).run(quit_if_no_nets=True)
    assert [(o.candidate, o.accepted) for o in outcomes] == [("c2", True), ("c1", True)]
    assert all((dirs["accepted"] / name / "model.bin.gz").is_file() for name in ("c1", "c2"))
    assert all(o.results is not None and o.results.games >= 1 for o in outcomes)   # each played its own games


@pytest.mark.parametrize("test_dir", ["", ".", "loop"])
def test_a_test_folder_holding_the_others_is_refused_and_nothing_moves(tmp_path, monkeypatch, test_dir):
    """An unset shell variable ("" is the current folder) or a parent folder as -test-models-dir: the accepted
    networks were gated as candidates and moved into themselves, and every network was deleted."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "loop").mkdir()
    write_tiny_net(tmp_path / "loop" / "models" / "g1" / "model.bin.gz", 11)
    write_tiny_net(tmp_path / "loop" / "test" / "cand" / "model.bin.gz", 12)
    cfg = tmp_path / "g.cfg"
    cfg.write_text(CONFIG)
    args = ["gatekeeper", "-config", str(cfg), "-test-models-dir", test_dir, "-accepted-models-dir", "loop/models",
            "-rejected-models-dir", "loop/rejected", "-sgf-output-dir", "loop/sgf", "-quit-if-no-nets-to-test"]
    result = CliRunner().invoke(app, normalize_argv(args))
    assert result.exit_code == 1
    assert ("Empty directory specified for -test-models-dir" if not test_dir else "overlap") in result.stderr
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.bin.gz")) == [
        "loop/models/g1/model.bin.gz", "loop/test/cand/model.bin.gz"]


def test_an_accepted_folder_inside_the_rejected_one_is_refused(tmp_path):
    """A rejected network below the accepted folder would become the accepted opponent."""
    from katacli.match.gatekeeper import GatekeeperError

    cfg = Config.from_text(CONFIG)
    with pytest.raises(GatekeeperError, match="overlap"):
        Gatekeeper(cfg, NNSettings.from_config(cfg, "gtp"), tmp_path / "test", tmp_path / "rejected" / "models",
                   tmp_path / "rejected", tmp_path / "sgfs")


def test_a_folder_is_never_moved_into_itself(tmp_path):
    from katacli.match.gatekeeper import GatekeeperError, move_entry

    write_tiny_net(tmp_path / "models" / "g1" / "model.bin.gz", 13)
    with pytest.raises(GatekeeperError, match="inside it"):
        move_entry(tmp_path / "models", tmp_path / "models")
    assert (tmp_path / "models" / "g1" / "model.bin.gz").is_file()


@pytest.mark.subprocess
def test_sigkill_mid_gating_leaves_whole_files_and_a_rerun_finishes(tmp_path):
    """A gatekeeper killed while it plays leaves the candidate where it was (not half moved) and only
    whole SGF files; run again, it gates the candidate to the end."""
    import signal
    import subprocess
    import sys

    from katacli.nn.model_file_reader import check_model_file

    dirs = make_dirs(tmp_path)
    time.sleep(0.01)
    write_tiny_net(dirs["test"] / "cand.bin.gz", 7)
    cfg = tmp_path / "g.cfg"
    cfg.write_text(CONFIG.replace("numGamesPerGating = 4", "numGamesPerGating = 40").replace(
        "maxVisits = 4", "maxVisits = 30"))
    args = [sys.executable, "-m", "katacli.cli", "gatekeeper", "-config", str(cfg), "-test-models-dir",
            str(dirs["test"]), "-accepted-models-dir", str(dirs["accepted"]), "-rejected-models-dir",
            str(dirs["rejected"]), "-sgf-output-dir", str(dirs["sgfs"]), "-quit-if-no-nets-to-test",
            "-required-candidate-win-prop", "0", "--quiet"]
    process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while not list(dirs["sgfs"].rglob("*.sgf")) and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.05)
    assert process.poll() is None, "the gatekeeper finished before it could be killed: make the gating longer"
    process.send_signal(signal.SIGKILL)
    process.wait()
    # The candidate is whole and still waiting; nothing half-moved into accepted/ or rejected/.
    check_model_file(dirs["test"] / "cand.bin.gz")
    assert not (dirs["accepted"] / "cand.bin.gz").exists() and not list(dirs["rejected"].iterdir())
    for sgf in dirs["sgfs"].rglob("*.sgf"):
        text = sgf.read_text()
        assert text.startswith("(;") and text.rstrip().endswith(")"), sgf
    cfg.write_text(CONFIG)  # a short gating this time
    rerun = subprocess.run(args, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr
    assert (dirs["accepted"] / "cand.bin.gz").is_file() and not list(dirs["test"].iterdir())


def test_a_stopped_gating_moves_nothing_and_says_so(tmp_path, caplog):
    dirs = make_dirs(tmp_path)
    time.sleep(0.01)
    write_tiny_net(dirs["test"] / "cand-s.bin.gz", 8)
    k = keeper(dirs, required=0.0)
    with caplog.at_level("INFO", logger="katacli.match"):
        outcomes = k.run(quit_if_no_nets=True, on_tick=lambda *_: k.request_stop())
    assert outcomes == [] and (dirs["test"] / "cand-s.bin.gz").is_file()
    assert any("stopped: cand-s.bin.gz stays in" in record.getMessage() for record in caplog.records)
