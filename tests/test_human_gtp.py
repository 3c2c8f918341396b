"""Human-SL nets through `kata gtp -human-model`: KataGo 1.17.2's recorded kata-raw-human-nn answers,
profiles set at run time, and KataGo's errors.

``../shared/reference/kata-raw-human-nn.jsonl`` holds 120 cases recorded with ``katago gtp -model
g170-... -human-model human/test-b3c48nbt-humanmeta.bin.gz`` under 12 profiles; each is replayed
command by command (the last one sets the profile with kata-set-param) and every number compared
within the reference README's tolerances.
"""
from __future__ import annotations

import json

import pytest

from test_gtp_rawnn import assert_blocks_match, parse_blocks  # the layout and number checks of kata-raw-nn
from support.gtp import feed, make_engine
from support.paths import G170_B6 as MAIN_MODEL
from support.paths import HUMAN_TEST as HUMAN_MODEL
from support.paths import model_path, reference_path

REFERENCE = reference_path("kata-raw-human-nn.jsonl", module=True)
pytestmark = pytest.mark.needs_shared
HUMAN_SCALAR_LINES = [
    ("whiteWin", r"-?\d+\.\d{6}"), ("whiteLoss", r"-?\d+\.\d{6}"), ("noResult", r"-?\d+\.\d{6}"),
    ("whiteScore", r"-?\d+\.\d{3}"), ("whiteScoreSq", r"-?\d+\.\d{3}"),
    ("shorttermWinlossError", r"-?\d+\.\d{3}"), ("shorttermScoreError", r"-?\d+\.\d{3}"),
]
CASES = [json.loads(line) for line in REFERENCE.read_text().splitlines() if line.strip()]


def ask(engine, out, line: str) -> str:
    before = len(out.getvalue())
    feed(engine, [line])
    return out.getvalue()[before:]


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kata_raw_human_nn_matches_katago(case):
    assert case["model_file"] == HUMAN_MODEL
    engine, out, err = make_engine(model=MAIN_MODEL, human_model=HUMAN_MODEL)
    feed(engine, case["commands"])
    assert "?" not in out.getvalue(), out.getvalue()
    answer = ask(engine, out, "77 " + case["query"])
    assert answer.startswith("=77 ") and answer.endswith("\n\n"), answer
    session = engine.session
    blocks = parse_blocks(answer[len("=77 "):-2], session.x_size, session.y_size, HUMAN_SCALAR_LINES)
    assert_blocks_match(blocks, case["expected"], score_keys=("whiteScore", "shorttermWinlossError",
                                                               "shorttermScoreError"), score_sq_key="whiteScoreSq")


def test_profiles_change_the_human_policy_but_not_the_main_net():
    engine, out, _ = make_engine(model=MAIN_MODEL, human_model=HUMAN_MODEL, override="humanSLProfile=rank_20k")
    feed(engine, ["boardsize 9", "clear_board", "play b E5"])
    weak = ask(engine, out, "kata-raw-human-nn 0")
    main_before = ask(engine, out, "kata-raw-nn 0")
    assert ask(engine, out, "kata-set-param humanSLProfile rank_9d") == "= \n\n"
    assert ask(engine, out, "kata-get-param humanSLProfile") == "= rank_9d\n\n"
    strong = ask(engine, out, "kata-raw-human-nn 0")
    assert weak.startswith("= symmetry 0") and strong.startswith("= symmetry 0") and weak != strong
    assert ask(engine, out, "kata-raw-nn 0") == main_before


def test_kata_get_models_lists_the_human_net_after_the_main_one():
    engine, out, _ = make_engine(model=MAIN_MODEL, human_model=HUMAN_MODEL, override="useFP16=false")
    models = json.loads(ask(engine, out, "kata-get-models").removeprefix("= "))
    assert [m["name"] for m in models] == [str(model_path(MAIN_MODEL)), str(model_path(HUMAN_MODEL))]   # as given
    assert [m["usesHumanSLProfile"] for m in models] == [False, True]
    assert [m["usingFP16"] for m in models] == ["false", "false"]   # the setting, as KataGo reports it


@pytest.mark.parametrize("human, override, command, error", [
    (False, "", "kata-raw-human-nn 0", "Cannot run kata-raw-human-nn, -human-model was not provided"),
    (True, "", "kata-raw-human-nn 0", "Cannot run kata-raw-human-nn, humanSLProfile parameter was not set"),
    (True, "", "kata-set-param humanSLProfile rank_30k", "Unknown human SL network profile: rank_30k"),
    (True, "", "kata-set-param humanSLProfile proyear_1700", "Unknown human SL network profile: proyear_1700"),
    (False, "", "kata-set-param humanSLProfile rank_1d",   # KataGo names the model by its file
     "Could not set params: WARNING: humanSLProfile is specified as config param but model(s) don't use it: "
     + str(model_path(MAIN_MODEL))),
    (False, "", "kata-set-param humanSLChosenMoveProp 0.5", "only works with a human SL model"),
])
def test_human_errors_keep_the_engine_running(human, override, command, error):
    engine, out, _ = make_engine(model=MAIN_MODEL, human_model=HUMAN_MODEL if human else None, override=override)
    answer = ask(engine, out, "5 " + command)
    assert answer.startswith("?5 ") and error in answer, answer
    assert ask(engine, out, "6 name") == "=6 KataGo\n\n"
    if human:
        assert ask(engine, out, "kata-get-param humanSLProfile") == "= \n\n"


def test_a_human_net_as_the_main_model_without_a_profile_asks_for_one():
    engine, out, err = make_engine(model=HUMAN_MODEL, scripted=False, override="maxVisits=4")
    feed(engine, ["boardsize 7", "clear_board"])
    answer = ask(engine, out, "3 genmove b")
    assert answer.startswith("?3 SGFMetadata is required for this network") and "humanSLProfile" in answer, answer
    assert "Traceback" not in err.getvalue()
    # The streaming searches answer the same, not an empty "=" (a GUI would wait for its play line)
    for n, command in enumerate(("kata-genmove_analyze b", "lz-genmove_analyze b 10", "kata-analyze b 10",
                                 "kata-search_analyze_cancellable b", "kata-search_cancellable b"), start=10):
        answer = ask(engine, out, f"{n} {command}")
        assert answer.startswith(f"?{n} SGFMetadata is required for this network"), (command, answer)
    assert ask(engine, out, "kata-set-param humanSLProfile rank_5k") == "= \n\n"
    assert ask(engine, out, "genmove b").startswith("= ")


def test_a_human_net_as_the_main_model_takes_the_profile():
    """KataGo allows the human net as -model: humanSLProfile then feeds the main net."""
    engine, out, _ = make_engine(model=HUMAN_MODEL, override="humanSLProfile=preaz_3d")
    feed(engine, ["boardsize 7", "clear_board"])
    answer = ask(engine, out, "kata-raw-nn 0")
    assert answer.startswith("= symmetry 0\nwhiteWin "), answer


# --------------------------------------------------------------------------- KataGo's human configs


HUMAN_CONFIGS = ("gtp_human5k_example.cfg", "gtp_human9d_search_example.cfg")


@pytest.mark.subprocess
@pytest.mark.parametrize("config_name", HUMAN_CONFIGS)
def test_katago_human_configs_load_and_play_as_a_process(config_name, tmp_path):
    """configs/ holds KataGo's two human-SL example configs (same keys and values, katacli's comments):
    `kata gtp -model M -human-model H -config C` starts without a warning and plays a short game."""
    from katacli.gtp.client import GtpClient
    from support.gtp import REPO, model_path, python_cli

    config = REPO / "configs" / config_name
    # Quick answers and logs out of the checkout; everything else exactly as the file says.
    overrides = f"delayMoveScale=0,logDir={tmp_path},maxVisits=24"
    args = ["gtp", "-model", str(model_path(MAIN_MODEL)), "-human-model", str(model_path(HUMAN_MODEL)),
            "-config", str(config), "-override-config", overrides]
    stderr_file = tmp_path / "stderr.txt"
    with open(stderr_file, "w") as stderr:
        engine = GtpClient(python_cli() + args, stderr=stderr)
        try:
            assert engine.command("boardsize 9") == ""
            assert engine.command("kata-get-param humanSLProfile") in ("preaz_5k", "preaz_9d")
            for color in ("b", "w", "b", "w"):
                move = engine.command(f"genmove {color}")
                assert move.lower() != "resign" and len(move) >= 2, move
            assert engine.command("kata-raw-human-nn 0").startswith("symmetry 0")
        finally:
            assert engine.close() == 0
    text = stderr_file.read_text()
    assert "WARNING" not in text and "Traceback" not in text, text


@pytest.mark.subprocess
def test_human_only_search_keys_start_the_process_with_a_human_model(tmp_path):
    """Keys that need -human-model (humanSLCpuctExploration) are accepted by `kata gtp` when it has one: the
    config check that runs before the first answer knows about the human net too."""
    import subprocess

    from support.gtp import model_path, python_cli

    args = python_cli() + ["gtp", "-model", str(model_path(MAIN_MODEL)), "-human-model", str(model_path(HUMAN_MODEL)),
                           "-override-config", f"humanSLCpuctExploration=0.5,humanSLProfile=rank_5k,logDir={tmp_path}"]
    result = subprocess.run(args, input="boardsize 9\nkata-get-param humanSLProfile\nquit\n",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n\n")[:2] == ["= ", "= rank_5k"]


def test_human_search_keys_can_be_changed_at_run_time():
    engine, out, _ = make_engine(model=MAIN_MODEL, human_model=HUMAN_MODEL, override="humanSLProfile=rank_5k")
    for key, value in (("humanSLChosenMoveProp", "0.5"), ("humanSLRootExploreProbWeightless", "0.25"),
                       ("humanSLCpuctPermanent", "2"), ("humanSLChosenMoveIgnorePass", "true")):
        assert ask(engine, out, f"kata-set-param {key} {value}") == "= \n\n", key
    params = json.loads(ask(engine, out, "kata-get-params")[2:])
    assert params["humanSLChosenMoveProp"] == 0.5 and params["humanSLRootExploreProbWeightless"] == 0.25
    assert params["humanSLCpuctPermanent"] == 2 and params["humanSLChosenMoveIgnorePass"] is True
    assert engine.params.genmove.human_sl_chosen_move_prop == 0.5
    assert ask(engine, out, "kata-set-param humanSLChosenMoveProp 1.5").startswith("? ")


@pytest.mark.subprocess
@pytest.mark.parametrize("command", ["gtp", "analysis", "benchmark"])
def test_a_corrupt_human_model_is_a_one_line_error(command, tmp_path):
    import subprocess

    from support.gtp import model_path, python_cli

    broken = tmp_path / "broken-human.bin.gz"
    broken.write_bytes(b"\x1f\x8b\x08\x00 this is not a network")
    args = python_cli() + [command, "-model", str(model_path(MAIN_MODEL)), "-human-model", str(broken)]
    if command == "benchmark":
        args += ["-t", "1", "-v", "2", "-n", "1"]
    result = subprocess.run(args, input="kata-raw-human-nn 0\nquit\n" if command == "gtp" else "",
                            capture_output=True, text=True, timeout=120)
    assert result.returncode != 0
    lines = [line for line in result.stderr.splitlines() if "broken-human.bin.gz" in line]
    assert lines and "Traceback" not in result.stderr, result.stderr


def test_a_profile_no_loaded_net_uses_is_warned_about_at_start_up():
    """KataGo's start-up warning: humanSLProfile set, but neither -model nor -human-model takes SGF metadata
    (a forgotten or wrong -human-model would silently play at full strength)."""
    from katacli.cli_support import unused_profile_startup_warning
    from katacli.nn.model_file_reader import check_model_file

    main, human = check_model_file(model_path(MAIN_MODEL)), check_model_file(model_path(HUMAN_MODEL))
    assert unused_profile_startup_warning(True, (main, None)) == (
        f"WARNING: humanSLProfile is specified as config param but model(s) don't use it: {main.path}")
    assert unused_profile_startup_warning(True, (main, main)).endswith(f"{main.path} and {main.path}")
    assert unused_profile_startup_warning(True, (main, human)) is None
    assert unused_profile_startup_warning(False, (main, None)) is None


@pytest.mark.parametrize("profile", ["proyear_1_990", "proyear_\u0661\u0669\u0669\u0660"])
def test_a_profile_year_is_ascii_digits_as_katago_reads_it(profile):
    from katacli.nn.human_profile import HumanProfileError, parse_human_profile

    with pytest.raises(HumanProfileError, match="Unknown human SL network profile"):
        parse_human_profile(profile)
    assert parse_human_profile("proyear_+1990").is_set and parse_human_profile("proyear_01990").is_set


def test_kata_gtp_warns_at_start_up_about_a_profile_without_a_human_net(tmp_path):
    import subprocess

    from support.gtp import python_cli

    args = python_cli() + ["gtp", "-model", str(model_path(MAIN_MODEL)), "-override-config",
                           f"humanSLProfile=rank_5k,logDir={tmp_path}"]
    result = subprocess.run(args, input="quit\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert ("WARNING: humanSLProfile is specified as config param but model(s) don't use it: "
            f"{model_path(MAIN_MODEL)}") in result.stderr
