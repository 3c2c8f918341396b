"""`kata genconfig`: the written config (from the key registry, accepted by `kata gtp` without warnings),
the interactive wizard and its re-asking, --non-interactive flags, overwriting, and bad paths and values."""
from __future__ import annotations

import io
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner

from katacli.setup.config_writer import (
    GenConfigChoices, cache_gb_for_size, cache_size_for_gb, check_config_text, render_config,
)
from katacli.cli import app, normalize_argv
from katacli.config import Config

from support.paths import BUNDLED_TINY_MODEL as TINY_MODEL
FAST_TUNING = ["--tune-visits", "8", "--tune-positions", "1"]


def kata(*args: str, input: str | None = None):
    """`kata genconfig ARGS`; without -model, for the rollout engine (no tuning: fast). The default network's
    tuning has its own test."""
    model = [] if "-model" in args else ["-model", "rollouts"]
    return CliRunner().invoke(app, normalize_argv(["genconfig", *model, *args]), input=input)


def settings(path: Path) -> dict[str, str]:
    """The keys a config file sets (comments skipped)."""
    return Config.from_file(path, mode="gtp").as_dict()


def assert_loads_cleanly_in_gtp(path: Path) -> None:
    from katacli.cli_support import load_config
    from katacli.gtp.runtime_params import GtpRuntimeParams
    from katacli.setup.engine_settings import GtpSettings

    stream = io.StringIO()
    cfg = load_config(str(path), None, mode="gtp", warn_unknown=False)
    assert cfg.warn_unknown_keys(stream) == [] and stream.getvalue() == ""
    GtpSettings.from_config(cfg)
    GtpRuntimeParams.from_config(cfg)


# --------------------------------------------------------------------------- the written config


def test_rendered_config_comments_come_from_the_registry():
    from katacli import config_keys

    text = render_config(GenConfigChoices(rules="japanese", max_time=10.0, num_search_threads=6))
    check_config_text(text)
    assert config_keys.get_spec("numSearchThreads").description in text.replace("\n# ", " ")
    assert "\nrules = japanese\n" in text and "\nmaxTime = 10.0\n" in text
    assert "\n# maxVisits = 500\n" in text  # an unchosen limit is shown commented out


def test_cache_size_follows_memory():
    assert cache_size_for_gb(3.0) == 19
    assert cache_gb_for_size(19) <= 3.0 < cache_gb_for_size(20)
    assert cache_size_for_gb(1e-6) == 10  # never below KataGo's floor
    assert cache_size_for_gb(64) == 23


def test_non_interactive_defaults_for_the_rollout_engine(tmp_path):
    out = tmp_path / "gtp.cfg"
    r = kata("-output", str(out), "--non-interactive")
    assert r.exit_code == 0, r.output
    assert "Skipping tuning" in r.stdout and f"kata gtp -model 'rollouts' -config '{out}'" in r.stdout
    keys = settings(out)
    assert keys["rules"] == "tromp-taylor" and keys["numSearchThreads"] == "1"
    assert keys["allowResignation"] == "true" and "maxVisits" not in keys
    # Written as KataGo's genconfig writes them (human-friendly speed-ups, lag allowance).
    assert keys["lagBuffer"] == "1.0"
    assert keys["searchFactorAfterOnePass"] == "0.5" and keys["searchFactorAfterTwoPass"] == "0.25"
    assert keys["searchFactorWhenWinning"] == "0.4" and keys["searchFactorWhenWinningThreshold"] == "0.95"
    assert_loads_cleanly_in_gtp(out)


def test_non_interactive_flags_reach_the_config(tmp_path):
    out = tmp_path / "gtp.cfg"
    r = kata("-output", str(out), "--non-interactive", "--rules", "Japanese", "--komi", "6.5", "--max-visits", "300",
             "--ponder", "--max-ponder-time", "30", "--no-resign", "--cache-gb", "1", "--threads", "6")
    assert r.exit_code == 0, r.output
    keys = settings(out)
    assert keys["rules"] == "japanese" and keys["ignoreGTPAndForceKomi"] == "6.5"
    assert keys["maxVisits"] == "300" and keys["ponderingEnabled"] == "true" and keys["maxTimePondering"] == "30.0"
    assert keys["allowResignation"] == "false" and keys["numSearchThreads"] == "6"
    assert keys["nnCacheSizePowerOfTwo"] == str(cache_size_for_gb(1))
    assert_loads_cleanly_in_gtp(out)


def test_non_interactive_tuning_with_a_network(tmp_path):
    out = tmp_path / "gtp.cfg"
    r = kata("-model", str(TINY_MODEL), "-output", str(out), "--non-interactive", *FAST_TUNING)
    assert r.exit_code == 0, r.output
    assert "TUNING NOW" in r.stdout and "Tuning using 8 visits." in r.stdout and "(recommended)" in r.stdout
    keys = settings(out)
    threads = int(keys["numSearchThreads"])
    assert f"Using {threads} numSearchThreads!" in r.stdout
    assert "nnMaxBatchSize" not in keys   # follows numSearchThreads, as KataGo's genconfig leaves it
    assert "Chosen by `kata genconfig`" in out.read_text().replace("\n# ", " ")
    assert f"kata gtp -model '{TINY_MODEL}' -config '{out}'" in r.stdout
    assert_loads_cleanly_in_gtp(out)


def test_katagos_default_model_is_named_when_no_model_is_given(tmp_path, monkeypatch):
    # Without -model genconfig tunes for the network `kata gtp` would use: KataGo's default_model.bin.gz when
    # set up (its help said "katacli's built-in network"), and says so as kata gtp does.
    import shutil

    home = tmp_path / "home"
    (home / ".katago").mkdir(parents=True)
    shutil.copy(TINY_MODEL, home / ".katago" / "default_model.bin.gz")
    monkeypatch.setenv("HOME", str(home))
    r = CliRunner().invoke(app, normalize_argv(["genconfig", "-output", str(tmp_path / "gtp.cfg"), "--non-interactive",
                                                *FAST_TUNING]))
    assert r.exit_code == 0, r.output
    assert f"No -model given: using KataGo's default network {home / '.katago' / 'default_model.bin.gz'}" in r.stdout


# --------------------------------------------------------------------------- the wizard

# KataGo's questions in KataGo's order (so answers piped to katago genconfig work): no komi or resignation.
WIZARD_ANSWERS = [
    "chinez", "chinese",     # a typo is re-asked
    "maybe", "y",            # add a limit? (bad answer re-asked)
    "moves", "seconds",      # what to limit
    "0", "15",               # seconds per move (0 refused)
    "y", "",                 # ponder, without a limit
    "2.5gb",                 # cache
]


def test_interactive_wizard(tmp_path):
    out = tmp_path / "gtp.cfg"
    r = kata("-output", str(out), "--resign-threshold", "-0.8", input="\n".join(WIZARD_ANSWERS) + "\n")
    assert r.exit_code == 0, r.output
    for section in ("RULES", "SEARCH LIMITS", "GPUS AND RAM", "PERFORMANCE TUNING", "DONE"):
        assert section in r.stdout
    assert "Could not parse rules: chinez" in r.stdout
    assert "Please answer y or n" in r.stdout
    assert 'Please specify one of "visits", "playouts" or "seconds"' in r.stdout
    keys = settings(out)
    assert keys["rules"] == "chinese" and keys["maxTime"] == "15.0" and keys["ponderingEnabled"] == "true"
    assert "maxTimePondering" not in keys and "ignoreGTPAndForceKomi" not in keys
    assert keys["allowResignation"] == "true" and keys["resignThreshold"] == "-0.8"   # the flag, not a question
    assert keys["nnCacheSizePowerOfTwo"] == str(cache_size_for_gb(2.5))
    assert_loads_cleanly_in_gtp(out)


def test_interactive_wizard_with_tuning(tmp_path):
    out = tmp_path / "gtp.cfg"
    answers = ["japanese", "y", "visits", "", "n", "", "8", "2"]  # tune with 8 visits, 2 s per move
    r = kata("-model", str(TINY_MODEL), "-output", str(out), "--tune-positions", "1", input="\n".join(answers) + "\n")
    assert r.exit_code == 0, r.output
    assert "if you intend to do a 2 second search" in r.stdout
    keys = settings(out)
    assert keys["maxVisits"] == "500" and keys["resignThreshold"] == "-0.9"
    assert_loads_cleanly_in_gtp(out)


# Each answer is accepted or refused as KataGo's genconfig accepts or refuses it, so that piped answers stay in
# step: a refused one is asked again and takes the next line.
@pytest.mark.parametrize("parser, text, accepted", [
    ("seconds", "1e20", False), ("seconds", "9.9e19", True), ("seconds", "0", False), ("seconds", "0.0005", True),
    ("seconds", "1_000", False), ("seconds", "inf", False), ("seconds", "nan", False), ("seconds", " 45.5 ", True),
    ("visits", "1_000", False), ("visits", "1e3", False), ("visits", "1000000000", True),
    ("visits", "1000000001", False), ("visits", "+7", True), ("tuning visits", "1", True),
    ("gigabytes", "1000000", False), ("gigabytes", "999999", True), ("gigabytes", "0", False),
    ("gigabytes", "2GB", True), ("seconds per move", "1000000", True), ("seconds per move", "1000001", False),
])
def test_wizard_numbers_are_read_as_katago_reads_them(parser, text, accepted):
    from katacli.commands import genconfig

    parse = {
        "seconds": genconfig.parse_number(float, 0.0, genconfig.MAX_SECONDS, above_low=True, below_high=True),
        "visits": genconfig.parse_number(int, 1, genconfig.MAX_LIMIT),
        "tuning visits": genconfig.parse_number(int, 1, genconfig.MAX_LIMIT),
        "gigabytes": genconfig.parse_gigabytes,
        "seconds per move": genconfig.parse_number(float, 0.0, genconfig.MAX_SECONDS_PER_MOVE, above_low=True),
    }[parser]
    if accepted:
        parse(text)
    else:
        with pytest.raises(ValueError):
            parse(text)


def test_a_refused_ponder_limit_keeps_later_answers_in_step(tmp_path):
    out = tmp_path / "gtp.cfg"
    # korean, a limit of seconds (default), ponder with a limit: 0 and 1e20 refused, 45.5 taken; then the cache
    answers = ["korean", "y", "second", "", "y", "0", "1e20", "45.5", "3"]
    r = kata("-output", str(out), input="\n".join(answers) + "\n")
    assert r.exit_code == 0, r.output
    assert r.stdout.count("Must be above 0 and below 1e+20") == 2
    keys = settings(out)
    assert keys["maxTimePondering"] == "45.5" and keys["nnCacheSizePowerOfTwo"] == str(cache_size_for_gb(3))


@pytest.mark.parametrize("rules", [
    "koSIMPLEscoreTERRITORYtaxALLsui1", '{"ko":"POSITIONAL","scoring":"TERRITORY","hasButton":true}', "Chinese",
])
def test_custom_rules_answers_are_written_as_given(tmp_path, rules):
    # The short form and JSON keys are case-sensitive: lowercasing them made the finished config unloadable.
    out = tmp_path / "gtp.cfg"
    r = kata("-output", str(out), input="\n".join([rules, "n", "", "n", ""]) + "\n")
    assert r.exit_code == 0, r.output
    assert settings(out)["rules"] == (rules.lower() if rules == "Chinese" else rules)
    assert_loads_cleanly_in_gtp(out)


def test_overwriting_a_linked_config_writes_through_the_link_and_keeps_its_mode(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    target = real / "gtp.cfg"
    target.write_text("numSearchThreads = 3\n")
    target.chmod(0o640)
    link = tmp_path / "gtp.cfg"
    link.symlink_to(target)
    r = kata("-output", str(link), "--non-interactive", "--force")
    assert r.exit_code == 0, r.output
    assert link.is_symlink() and "rules = tromp-taylor" in target.read_text()
    assert (target.stat().st_mode & 0o777) == 0o640


def test_an_unreadable_config_being_overwritten_is_noted_then_tuned(tmp_path):
    out = tmp_path / "gtp.cfg"
    out.write_text("numSearchThreads = 9000\n")
    answers = ["y", "aga", "n", "", "n", "", "8", "2"]
    r = kata("-model", str(TINY_MODEL), "-output", str(out), "--tune-positions", "1", input="\n".join(answers) + "\n")
    assert r.exit_code == 0, r.output
    assert "does not set numSearchThreads or could not be read" in r.stdout and "TUNING NOW" in r.stdout


def test_closed_stdin_writes_nothing(tmp_path):
    out = tmp_path / "gtp.cfg"
    r = kata("-output", str(out), input="japanese\n")
    assert r.exit_code == 1
    assert "Stdin was closed" in r.stderr and not out.exists()


# --------------------------------------------------------------------------- overwriting and bad input


def test_existing_file_needs_confirmation_or_force(tmp_path):
    out = tmp_path / "gtp.cfg"
    out.write_text("numSearchThreads = 5\n")
    r = kata("-output", str(out), "--non-interactive")
    assert r.exit_code == 1 and "already exists; pass --force" in r.stderr
    r = kata("-output", str(out), input="n\n")
    assert r.exit_code == 0 and "alternate file path" in r.stdout
    assert out.read_text() == "numSearchThreads = 5\n"
    r = kata("-output", str(out), "--non-interactive", "--force")
    assert r.exit_code == 0 and "rules = tromp-taylor" in out.read_text()


def test_overwriting_can_keep_the_old_thread_count(tmp_path):
    out = tmp_path / "gtp.cfg"
    out.write_text("numSearchThreads = 5\n")
    # overwrite; rules, no limit (and its note), no pondering, cache; keep the 5 threads
    answers = ["y", "aga", "n", "", "n", "", "y"]
    r = kata("-model", str(TINY_MODEL), "-output", str(out), input="\n".join(answers) + "\n")
    assert r.exit_code == 0, r.output
    assert "already sets numSearchThreads = 5" in r.stdout and "TUNING NOW" not in r.stdout
    assert settings(out)["numSearchThreads"] == "5"


@pytest.mark.parametrize("args, message", [
    (["--rules", "foo"], "Could not parse rules: foo"),
    (["--max-visits", "0"], "--max-visits must be from 1"),
    (["--max-visits", "10", "--max-time", "5"], "at most one of"),
    (["--komi", "7.3"], "--komi: Komi must be a whole or half number"),
    (["--devices", "a,b"], "Invalid device index"),
    (["--threads", "0"], "--threads must be from 1"),
    (["--resign-threshold", "2"], "--resign-threshold: Must be from -1 to 0"),
    (["--resign-threshold", "0.5"], "--resign-threshold: Must be from -1 to 0"),
    (["--cache-gb", "0"], "--cache-gb: Must be above 0 and below 1e+06"),
    (["--cache-gb", "-1"], "--cache-gb: Must be above 0 and below 1e+06"),
    (["-model", "/no/such/net.bin.gz"], "model file not found"),
])
def test_bad_flags_are_one_clear_line(tmp_path, args, message):
    out = tmp_path / "gtp.cfg"
    r = kata("-output", str(out), "--non-interactive", *args)
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith("error: ") and message in r.stderr, r.stderr
    assert "Traceback" not in r.output and not out.exists()


def test_unwritable_output(tmp_path):
    r = kata("-output", str(tmp_path / "missing" / "gtp.cfg"), "--non-interactive")
    assert r.exit_code == 1 and "does not exist" in r.stderr
    r = kata("-output", str(tmp_path), "--non-interactive")
    assert r.exit_code == 1 and "is a directory" in r.stderr
    if os.geteuid() == 0:
        return  # root may write anywhere: the permission case cannot be shown
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        r = kata("-output", str(locked / "gtp.cfg"), "--non-interactive")
        assert r.exit_code == 1 and "permission denied" in r.stderr
    finally:
        locked.chmod(0o700)


# --------------------------------------------------------------------------- human-like play (-human-model)

TINY_HUMAN_MODEL = TINY_MODEL.with_name("tiny-b2c16-human.bin.gz")


def assert_loads_cleanly_with_human_model(path: Path) -> list[str]:
    """As `kata gtp -model TINY -human-model TINY_HUMAN -config path`: no warning; the engine's answers to
    kata-get-param humanSLProfile and humanSLChosenMoveProp."""
    from support.gtp import feed, make_engine

    engine, out, err = make_engine(model=str(TINY_MODEL), human_model=str(TINY_HUMAN_MODEL), config=[str(path)])
    feed(engine, ["kata-get-param humanSLProfile", "kata-get-param humanSLChosenMoveProp"])
    assert "WARNING" not in err.getvalue(), err.getvalue()
    # What decides kata gtp's startup warning about a -human-model that would go unused:
    assert "humanSLProfile" in Config.from_file(path, mode="gtp")
    return out.getvalue().split("\n\n")[:2]


def test_rendered_human_config_needs_the_human_model():
    from katacli.setup.config_writer import GeneratedConfigError

    text = render_config(GenConfigChoices(rules="japanese", human_sl_profile="preaz_3d"))
    check_config_text(text, has_human_model=True)
    with pytest.raises(GeneratedConfigError, match="only works with a human SL model"):
        check_config_text(text)
    assert "\nhumanSLProfile = preaz_3d\n" in text and "\nhumanSLChosenMoveProp = 1.0\n" in text
    assert "\nhumanSLChosenMoveIgnorePass = true\n" in text and "\n# humanSLRootExploreProbWeightless = 0.0\n" in text
    assert "kata gtp -model NET.bin.gz -human-model HUMAN_NET.bin.gz -config THIS_FILE" in text
    plain = render_config(GenConfigChoices(rules="japanese"))
    assert "humanSL" not in plain and "-human-model" not in plain


def test_non_interactive_human_player_tuned_with_both_nets(tmp_path):
    out = tmp_path / "human.cfg"
    r = kata("-model", str(TINY_MODEL), "-human-model", str(TINY_HUMAN_MODEL), "-output", str(out),
             "--non-interactive", "--human-profile", "rank_3k_5d", *FAST_TUNING)
    assert r.exit_code == 0, r.output
    assert f"Searching with the human SL network {TINY_HUMAN_MODEL} too (rank_3k_5d)." in r.stdout
    assert f"-human-model '{TINY_HUMAN_MODEL}' -config '{out}'" in r.stdout
    keys = settings(out)
    assert keys["humanSLProfile"] == "rank_3k_5d" and keys["humanSLChosenMoveProp"] == "1.0"
    assert keys["chosenMoveTemperature"] == "0.7"
    assert f"with the human SL network {TINY_HUMAN_MODEL}" in out.read_text()
    assert assert_loads_cleanly_with_human_model(out) == ["= rank_3k_5d", "= 1.0"]


def test_a_profile_without_the_human_net_still_writes_a_human_config(tmp_path):
    out = tmp_path / "human.cfg"
    r = kata("-output", str(out), "--non-interactive", "--human-profile", "proyear_1990")
    assert r.exit_code == 0, r.output
    assert f"kata gtp -model 'rollouts' -human-model 'HUMAN_NET.bin.gz' -config '{out}'" in r.stdout
    assert settings(out)["humanSLProfile"] == "proyear_1990"
    assert_loads_cleanly_with_human_model(out)


def test_interactive_human_player(tmp_path):
    out = tmp_path / "human.cfg"
    # rules, no limit (and its note), no pondering, then imitate a human (default yes): a bad profile is
    # re-asked with KataGo's message; then the cache.
    answers = ["japanese", "n", "", "n", "", "rank_30k", "preaz_9d", ""]
    r = kata("-model", str(TINY_MODEL), "-human-model", str(TINY_HUMAN_MODEL), "-output", str(out),
             "--threads", "2", input="\n".join(answers) + "\n")
    assert r.exit_code == 0, r.output
    assert "HUMAN-LIKE PLAY" in r.stdout and "Unknown human SL network profile: rank_30k" in r.stdout
    assert settings(out)["humanSLProfile"] == "preaz_9d"
    assert_loads_cleanly_with_human_model(out)


def test_interactive_no_to_imitation_plays_at_full_strength(tmp_path):
    out = tmp_path / "gtp.cfg"
    answers = ["japanese", "n", "", "n", "n", ""]
    r = kata("-model", str(TINY_MODEL), "-human-model", str(TINY_HUMAN_MODEL), "-output", str(out),
             "--threads", "2", input="\n".join(answers) + "\n")
    assert r.exit_code == 0, r.output
    assert f"Not imitating: {TINY_HUMAN_MODEL} will not be used" in r.stdout
    assert f"kata gtp -model '{TINY_MODEL}' -config '{out}'" in r.stdout
    assert "humanSLProfile" not in settings(out)
    assert_loads_cleanly_in_gtp(out)


def test_without_a_human_net_the_wizard_only_hints(tmp_path):
    out = tmp_path / "gtp.cfg"
    answers = ["japanese", "n", "", "n", ""]
    r = kata("-output", str(out), input="\n".join(answers) + "\n")
    assert r.exit_code == 0, r.output
    assert "run kata genconfig\nwith -human-model" in r.stdout and "Imitate a human?" not in r.stdout
    assert "humanSLProfile" not in settings(out)


@pytest.mark.parametrize("args, message", [
    (["--human-profile", "rank_30k"], "Unknown human SL network profile: rank_30k (known kinds: rank_5k"),
    (["--human-profile", "proyear_1700"], "Unknown human SL network profile: proyear_1700"),
    (["--human-profile", "_"], "Please name a profile, e.g. rank_5k"),
    (["-human-model", str(TINY_HUMAN_MODEL), "--human-profile", "rank_5k"], "-human-model needs a main network too"),
    (["-model", str(TINY_MODEL), "-human-model", str(TINY_HUMAN_MODEL)], "pass --human-profile too"),
    (["-model", str(TINY_MODEL), "-human-model", "/no/such/human.bin.gz", "--human-profile", "rank_5k"],
     "model file not found"),
])
def test_bad_human_flags_are_one_clear_line(tmp_path, args, message):
    out = tmp_path / "gtp.cfg"
    r = kata("-output", str(out), "--non-interactive", *args)
    assert r.exit_code == 1, r.output
    assert r.stderr.startswith("error: ") and message in r.stderr, r.stderr
    assert "Traceback" not in r.output and not out.exists()
