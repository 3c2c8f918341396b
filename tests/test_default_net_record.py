"""benchmarks/default_net_record.py: the recorded command names no path of the training machine,
and options that are not the run's are refused. (A real run is recorded in test_training_loop_example.)"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def record():
    spec = importlib.util.spec_from_file_location("default_net_record", REPO / "benchmarks" / "default_net_record.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("argv", [
    ["--work-dir", "/somewhere/run", "--kata", "python -m katacli.cli", "--seed", "7"],
    ["--work-dir=/somewhere/run", "--kata=kata", "--seed", "7"],
])
def test_the_command_renames_the_work_dir_and_drops_how_kata_was_started(record, argv):
    command = record.public_command(argv)
    assert command == "python3 examples/training_loop.py --work-dir default-net-run --seed 7"


def test_options_that_did_not_make_the_run_are_refused(record, tmp_path):
    loop = record.load_loop()
    ran = loop.build_parser().parse_args(["--work-dir", str(tmp_path), "--visits", "40", "--boards", "7,9"])
    loop.write_selfplay_config(tmp_path, ran)
    loop.write_configs(tmp_path, ran)
    record.check_configs(loop, ran, tmp_path)  # the run's own options pass
    other = loop.build_parser().parse_args(["--work-dir", str(tmp_path), "--visits", "64", "--boards", "7,9"])
    with pytest.raises(record.RecordError, match="not this run's"):
        record.check_configs(loop, other, tmp_path)


def test_a_directory_that_is_no_run_is_one_clear_error(record, tmp_path, capsys):
    assert record.main(["--work-dir", str(tmp_path)]) == 1
    assert "progress.json not found" in capsys.readouterr().err


@pytest.mark.parametrize("pauses, expected", [
    ([], {1: 3600.0, 11: 7200.0, 12: 9000.0}),
    ([(11, 0.5)], {1: 3600.0, 11: 5400.0, 12: 7200.0}),          # stopped during generation 11
    ([(11, 0.25), (12, 0.25)], {1: 3600.0, 11: 6300.0, 12: 7200.0}),
])
def test_pauses_between_parts_of_a_run_are_not_counted(record, pauses, expected):
    assert record.without_pauses({1: 3600.0, 11: 7200.0, 12: 9000.0}, pauses) == expected


@pytest.mark.parametrize("text", ["11", "x=1", "11=h", "=1"])
def test_a_bad_pause_is_a_usage_error(record, text):
    with pytest.raises(Exception, match="GEN=HOURS"):
        record.pause_arg(text)


# --------------------------------------------------------------------------- a run made in two parts


def tiny_net(path: Path, seed: int) -> Path:
    from katacli.nn.torch_model import KataGoModel
    from katacli.train.exporting import write_model_atomically

    path.parent.mkdir(parents=True, exist_ok=True)
    write_model_atomically(KataGoModel.from_config("b2c16", seed=seed), str(path), path.name.removesuffix(".bin.gz"))
    return path


def earlier_part(record, start_net: Path) -> dict:
    """The record of a first part whose last accepted net (generation 2) is start_net."""
    return {
        "network": {"name": "early", "trained_as": start_net.name, "generation": 2,
                    "sha256": record.sha256_of(start_net), "training_samples": 800, "selfplay_rows": 90},
        "reproduce": {"command": "python3 examples/training_loop.py --work-dir default-net-run --seed 5"},
        "budget": {"selfplay_games": 20, "wall_time_hours": 1.5, "generations_run": 2},
        "elo_curve": [{"generation": g, "model": f"n{g}", "gating": "accepted", "elo": 100.0 * g,
                       "vs_previous": None, "vs_rollouts": None, "hours": 0.5 * g} for g in range(3)],
    }


def second_part(tmp_path: Path, start_net: Path) -> Path:
    work = tmp_path / "part2"
    models = work / "models"
    models.mkdir(parents=True)
    (models / start_net.name).write_bytes(start_net.read_bytes())
    tiny_net(models / "late.bin.gz", seed=2)
    argv = ["--work-dir", str(work), "--model-kind", "b2c16", "--games", "10", "--first-games", "30",
            "--start-from", str(start_net), "--start-generation", "2", "--start-elo", "200", "--seed", "5"]
    rows = [{"generation": 2, "model": start_net.name, "elo": 200.0},
            {"generation": 3, "model": "late.bin.gz", "elo": 260.0, "gating": "accepted",
             "vs_previous": {"wins": 7, "losses": 3, "draws": 0}}]
    progress = {"done": {"3": ["selfplay", "train", "gate", "elo"]}, "rows": rows,
                "starts": [{"time": 1000.0, "argv": argv}], "finished": {"3": {"elo": 1000.0 + 1800.0}}}
    (work / "progress.json").write_text(__import__("json").dumps(progress))
    return work


def test_a_continued_run_is_recorded_on_top_of_its_earlier_part(record, tmp_path):
    start_net = tiny_net(tmp_path / "early-s800.bin.gz", seed=1)
    work = second_part(tmp_path, start_net)
    done = record.build_record(work, work / "models" / "late.bin.gz", None, None, None,
                               previous=earlier_part(record, start_net))
    assert [row["generation"] for row in done["elo_curve"]] == [0, 1, 2, 3]
    assert done["elo_curve"][-1]["elo"] == 260.0
    assert done["elo_curve"][-1]["hours"] == 1.5 + 0.5    # the earlier part's hours, then this part's
    assert done["budget"]["selfplay_games"] == 20 + 30    # the first continued generation plays --first-games
    assert done["budget"]["wall_time_hours"] == 2.0
    parts = done["reproduce"]["parts"]
    assert parts[0] == "python3 examples/training_loop.py --work-dir default-net-run --seed 5"
    assert parts[1].startswith("python3 examples/training_loop.py --work-dir default-net-run-part2 "
                               "--start-from default-net-run/models/early-s800.bin.gz ")
    assert str(tmp_path) not in record.markdown(done) and "argv" not in done["reproduce"]


def test_a_run_that_did_not_start_from_the_earlier_part_is_refused(record, tmp_path):
    start_net = tiny_net(tmp_path / "early-s800.bin.gz", seed=1)
    work = second_part(tmp_path, start_net)
    other = earlier_part(record, tiny_net(tmp_path / "other.bin.gz", seed=3))
    with pytest.raises(record.RecordError, match="did not continue that part"):
        record.build_record(work, work / "models" / "late.bin.gz", None, None, None, previous=other)


def _refinement_log() -> dict:
    line = {str(k): v for k, v in {1: 0.07, 2: 0.45, 3: 0.2, 4: 0.1, 5: 0.07}.items()}
    after = {str(k): v for k, v in {1: 0.05, 2: 0.26, 3: 0.4, 4: 0.15, 5: 0.05}.items()}
    return {"options": {"model": "/training/machine/default.bin.gz", "out": "/tmp/x.bin.gz", "sizes": "19,13",
                        "positions": 3000, "visits": 600, "epochs": 4, "lr": 0.0003, "seed": 2026, "processes": 2,
                        "rows_in": "/tmp/rows.json", "train_sizes": "19", "anchor_sizes": "13",
                        "policy_head_only": True},
            "generated_by": {"model": "/training/machine/default.bin.gz", "sizes": "19,19,13", "positions": 3000,
                             "visits": 600, "seed": 2026, "processes": 2},
            "positions": 3001, "generate_seconds": 540.0, "seconds": 600.0,
            "epochs": [{"policy": 3.1, "value": 0.003, "score": 0.02}],
            "policy_by_line": {"19": {"before": line, "after": after}, "13": {"before": line, "after": after}}}


def test_a_refined_network_is_recorded_on_top_of_the_run_that_made_its_source(record, tmp_path):
    import hashlib
    import shutil

    from support.paths import BUNDLED_TINY_MODEL

    base = record.read_json(REPO / "benchmarks" / "default_net_part2.json")
    net = tmp_path / "distilled.bin.gz"
    shutil.copy(BUNDLED_TINY_MODEL, net)
    refined = record.refined_record(base, "default_net_part2.json", net, _refinement_log())
    assert refined["network"]["sha256"] == hashlib.sha256(net.read_bytes()).hexdigest()
    assert refined["network"]["generation"] == base["network"]["generation"]   # the run's accepted net, refined
    assert refined["refinement"]["from"]["sha256"] == base["network"]["sha256"]
    assert refined["elo_curve"] == base["elo_curve"] and refined["budget"] == base["budget"]
    command = refined["reproduce"]["refine"]
    generate, train = command.split("\n    ")
    assert generate.startswith("python3 examples/distill_openings.py --model default-net-run-part2/models/")
    assert "--sizes 19,19,13 --positions 3000 --visits 600" in generate and "--rows-out distill-rows.json" in generate
    assert "--rows-in distill-rows.json" in train and "--train-sizes 19" in train and "--log-out distill-log.json" in train
    assert "--anchor-sizes 13 --policy-head-only" in train
    assert "/training/machine" not in command and "/tmp" not in command
    assert refined["refinement"]["sizes"] == [19] and refined["refinement"]["anchor_sizes"] == [13]
    assert "--base-record benchmarks/default_net_part2.json" in refined["reproduce"]["then"]
    text = record.markdown(refined)
    assert "then refined by `examples/distill_openings.py`" in text and "## Refinement" in text
    assert "boards 19x19 for 4 epochs" in text and "boards 13x13 held to the original net's own policy" in text
    assert "only the policy head's weights trained" in text
    assert ("- refinement: 3001 opening positions searched at 600 visits (trained on boards 19; boards 13 held), "
            "4 epochs; 0.15 hours generating the positions, 0.02 hours training") in text
    assert "default_net_record.py --base-record benchmarks/default_net_part2.json" in text.split("## Strength")[1]
    assert "| 19x19 | 7% -> 5% | 45% -> 26% | 20% -> 40% | 10% -> 15% | 7% -> 5% |" in text
    assert text.index("| 19x19 |") < text.index("| 13x13 |")
    assert "    " + command in text


@pytest.mark.parametrize("argv, message", [
    ([], "give --work-dir"),
    (["--base-record", "benchmarks/default_net_part2.json"], "needs --net"),
])
def test_refinement_options_come_together(record, argv, message, capsys):
    with pytest.raises(SystemExit):
        record.main(argv)
    assert message in capsys.readouterr().err
