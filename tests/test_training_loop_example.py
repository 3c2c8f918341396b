"""examples/training_loop.py: self-play -> train -> gatekeeper -> match on 5x5 and 6x6, then a
rerun with more generations continues where the first run stopped."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from support.paths import REPO

pytestmark = pytest.mark.subprocess  # every test here starts processes
TINY = ["--boards", "5,6", "--games", "4", "--visits", "8", "--train-samples", "128", "--batch-size", "16",
        "--window-rows", "40", "--gating-games", "2", "--match-games", "1", "--game-threads", "2",
        "--model-kind", "b2c16", "--rollout-visits", "8"]


def run_loop(work: Path, generations: int, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(REPO / "examples" / "training_loop.py"), "--work-dir", str(work),
                           "--generations", str(generations), *TINY, *extra], capture_output=True, text=True,
                          timeout=900)


def test_loop_runs_gates_measures_and_resumes(tmp_path):
    work = tmp_path / "loop"
    first = run_loop(work, 1)
    assert first.returncode == 0, first.stderr[-3000:]
    progress = json.loads((work / "progress.json").read_text())
    assert progress["done"]["1"] == ["selfplay", "train", "gate", "elo"]
    row = progress["rows"][1]
    assert row["generation"] == 1 and row["gating"] in ("accepted", "rejected")
    moved = list((work / "models").glob("*.bin.gz")) + list((work / "rejected").glob("*.bin.gz"))
    assert len(moved) == 2 and not list((work / "candidates").iterdir())   # gen0 + the gated candidate
    if row["gating"] == "accepted":
        report = json.loads((work / "elo" / "gen1.json").read_text())
        assert report["games"] == 4 and row["vs_rollouts"]["games"] == 2
    assert "gen  accepted net" in first.stdout

    second = run_loop(work, 2, "--match-seconds", "0.02")   # Elo games at equal time per move
    assert second.returncode == 0, second.stderr[-3000:]
    assert "generation 1:" not in second.stdout        # done steps are not repeated
    assert "generation 2: self-play" in second.stdout
    rows = json.loads((work / "results.json").read_text())["rows"]
    assert [r["generation"] for r in rows] == [0, 1, 2]

    # The run records its options and step times, so benchmarks/default_net_record.py can describe it.
    progress = json.loads((work / "progress.json").read_text())
    assert [start["argv"][:2] for start in progress["starts"]] == [["--work-dir", str(work)]] * 2
    assert set(progress["finished"]["2"]) == {"selfplay", "train", "gate", "elo"}
    record = subprocess.run([sys.executable, str(REPO / "benchmarks" / "default_net_record.py"), "--work-dir",
                             str(work)], capture_output=True, text=True, timeout=300)
    assert record.returncode == 0, record.stderr
    assert "--work-dir default-net-run --generations 2" in record.stdout and str(work) not in record.stdout
    assert "| 2 | " in record.stdout and "generations: 2 run of 2 planned (finished)" in record.stdout

    # A second part continues from the first part's last accepted net, its generations numbered on.
    spec = __import__("importlib.util").util.spec_from_file_location(
        "default_net_record", REPO / "benchmarks" / "default_net_record.py")
    recorder = __import__("importlib.util").util.module_from_spec(spec)
    sys.modules[spec.name] = recorder
    spec.loader.exec_module(recorder)
    last = recorder.newest_accepted(rows)
    part1 = recorder.build_record(work, work / "models" / last["model"], None, None, None)
    (tmp_path / "part1.json").write_text(json.dumps(part1))
    work2 = tmp_path / "loop2"
    third = run_loop(work2, 3, "--start-from", str(work / "models" / last["model"]), "--start-generation", "2",
                     f"--start-elo={last['elo']}", "--first-games", "6")   # '=': the Elo may be negative
    assert third.returncode == 0, third.stderr[-3000:]
    assert "generation 3: self-play" in third.stdout and "-max-games-total 6" in third.stdout
    rows2 = json.loads((work2 / "results.json").read_text())["rows"]
    assert [r["generation"] for r in rows2] == [2, 3] and rows2[0]["elo"] == last["elo"]
    # Its sample count starts again, so its nets are named apart from the first part's (no collision).
    trained = {p.name for d in ("models", "rejected") for p in (work2 / d).glob("*.bin.gz")} - {last["model"]}
    assert trained and all(name.startswith("kata-b2c16-from2-s") for name in trained), trained
    both = subprocess.run([sys.executable, str(REPO / "benchmarks" / "default_net_record.py"), "--work-dir",
                           str(work2), "--previous-part", str(tmp_path / "part1.json")],
                          capture_output=True, text=True, timeout=300)
    assert both.returncode == 0, both.stderr
    assert "| 1 | " in both.stdout and "| 3 | " in both.stdout and str(tmp_path) not in both.stdout
    assert f"--start-from default-net-run/models/{last['model']}" in both.stdout
