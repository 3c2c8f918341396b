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
