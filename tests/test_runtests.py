"""`kata runtests`: every built-in check passes on this build, a wrong result or a crash makes it fail with a
non-zero exit, selection and listing work, and the checks need no test-only dependency."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from katacli.cli import app
from katacli.selfcheck import all_checks, human_checks, reference_checks
from katacli.selfcheck.framework import Check, CheckFailed, run_check

from support.paths import MODELS, REPO, import_script, reference_path
# The bundled data must stay small: it ships inside the package.
MAX_BUNDLED_BYTES = 100_000
PASS_LINE = re.compile(r"^PASS (\S+) +\d+\.\d\ds  ")


def runtests(*args: str):
    return CliRunner().invoke(app, ["runtests", *args])


def test_every_check_passes():
    r = runtests()
    assert r.exit_code == 0, r.output
    passed = [m.group(1) for m in map(PASS_LINE.match, r.stdout.splitlines()) if m]
    assert passed == [c.name for c in all_checks()]
    assert {"rules.ko", "features.reference", "network.reference", "search.rollouts", "network.default",
            "gtp.roundtrip", "human.reference", "human.profiles", "human.search"} <= set(passed)
    assert "kata-raw-human-nn as rank_5k" in r.stdout  # the GTP round trip asked the human net too
    assert f"All {len(passed)} checks passed." in r.stdout


def test_a_wrong_reference_number_fails(tmp_path, monkeypatch):
    with np.load(reference_checks.REFERENCE_PATH) as data:
        arrays = {key: data[key] for key in data.files}
    arrays["2_policy"] = arrays["2_policy"].copy()
    legal = np.nonzero(arrays["2_policy"] >= 0)[0]
    arrays["2_policy"][legal[0]] += 0.01
    broken = tmp_path / "reference.npz"
    np.savez_compressed(broken, **arrays)
    monkeypatch.setattr(reference_checks, "REFERENCE_PATH", broken)
    reference_checks.reference.cache_clear()
    try:
        r = runtests("--only", "network.reference", "--only", "rules.ko")
    finally:
        reference_checks.reference.cache_clear()
    assert r.exit_code == 1
    assert re.search(r"FAIL network\.reference .*policy differs by up to 1\.00e-02", r.stdout)
    assert "PASS rules.ko" in r.stdout and "1 of 2 checks FAILED: network.reference" in r.stdout


def test_a_wrong_human_net_number_fails(tmp_path, monkeypatch):
    with np.load(reference_checks.REFERENCE_PATH) as data:
        arrays = {key: data[key] for key in data.files}
    profiles = json.loads(str(arrays["human_json"]))["profiles"]
    key = "human_2_1_scalars"  # the 9x9 position under the second profile
    arrays[key] = arrays[key].copy()
    arrays[key][0] += 0.01  # whiteWin
    broken = tmp_path / "reference.npz"
    np.savez_compressed(broken, **arrays)
    monkeypatch.setattr(reference_checks, "REFERENCE_PATH", broken)
    reference_checks.reference.cache_clear()
    try:
        r = runtests("--only", "human.reference")
    finally:
        reference_checks.reference.cache_clear()
    assert r.exit_code == 1
    assert re.search(rf"FAIL human\.reference .*s1-g3-t44-b4c32-kata-raw-nn_0 as {profiles[1]}: whiteWin is", r.stdout)


def test_a_net_that_ignores_the_profile_fails(monkeypatch):
    """If every profile read as the same metadata, the human checks would notice."""
    from katacli.nn import human_profile

    same = human_profile.parse_human_profile("rank_5k")
    real = human_profile.parse_human_profile
    monkeypatch.setattr(human_profile, "parse_human_profile", lambda name: same if name else real(name))
    r = runtests("--only", "human.profiles")
    assert r.exit_code == 1 and "give the same policy" in r.stdout, r.stdout


def test_the_search_check_notices_a_move_not_chosen_by_the_human_policy(monkeypatch):
    """Without humanSLChosenMoveProp the search plays its own choice, and the check must say so."""
    from katacli.search import SearchParams

    original = SearchParams.replace

    def without_human_choice(self, **changes):
        changes.pop("human_sl_chosen_move_prop", None)
        return original(self, **changes)

    monkeypatch.setattr(SearchParams, "replace", without_human_choice)
    r = runtests("--only", "human.search")
    assert r.exit_code == 1 and "the human favourite is" in r.stdout, r.stdout


@pytest.mark.needs_shared
def test_make_reference_refuses_a_build_that_misses_katago_human_outputs(tmp_path, capsys):
    cases = reference_path("kata-raw-human-nn.jsonl").read_text().splitlines()[:2]
    (tmp_path / "reference").mkdir()
    (tmp_path / "models").symlink_to(MODELS)
    (tmp_path / "reference" / "kata-raw-human-nn.jsonl").write_text("\n".join(cases) + "\n")
    make_reference = import_script("scripts/make_selfcheck_reference.py")
    make_reference.verify_human_against_katago(tmp_path)
    assert "verified: 2 KataGo kata-raw-human-nn cases" in capsys.readouterr().err
    wrong = json.loads(cases[0])
    wrong["human_sl_profile"] = "rank_9d" if wrong["human_sl_profile"] != "rank_9d" else "rank_20k"
    (tmp_path / "reference" / "kata-raw-human-nn.jsonl").write_text(json.dumps(wrong) + "\n")
    with pytest.raises(SystemExit, match="does not reproduce KataGo's human-SL reference; not recording anything"):
        make_reference.verify_human_against_katago(tmp_path)


def test_missing_reference_data_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(reference_checks, "REFERENCE_PATH", tmp_path / "nothing.npz")
    reference_checks.reference.cache_clear()
    try:
        r = runtests("--only", "features")
    finally:
        reference_checks.reference.cache_clear()
    assert r.exit_code == 1 and "the bundled reference is missing" in r.stdout


def test_crashes_count_as_failures_with_a_traceback_on_request():
    def crashes():
        raise ZeroDivisionError("boom")

    result = run_check(Check("demo.crash", "crashes", crashes))
    assert not result.passed and result.detail == "unexpected ZeroDivisionError: boom"
    assert "Traceback" in result.trace

    def fails():
        raise CheckFailed("wrong answer")

    result = run_check(Check("demo.fail", "fails", fails))
    assert not result.passed and result.detail == "wrong answer" and result.trace == ""


def test_list_and_selection():
    r = runtests("--list")
    assert r.exit_code == 0
    assert [line.split()[0] for line in r.stdout.splitlines()] == [c.name for c in all_checks()]
    r = runtests("--only", "RULES")
    assert r.exit_code == 0 and "4 checks" in r.stdout
    r = runtests("--only", "no-such-check")
    assert r.exit_code == 1 and "no check name contains 'no-such-check'" in r.stderr


def test_bundled_data_is_small():
    for path in (reference_checks.TINY_MODEL_PATH, human_checks.TINY_HUMAN_MODEL_PATH, reference_checks.REFERENCE_PATH):
        assert path.stat().st_size < MAX_BUNDLED_BYTES, path


@pytest.mark.subprocess
def test_checks_need_no_test_dependencies():
    """Load every check with pytest made unimportable, as on a user's machine without it."""
    code = ("import sys; sys.modules['pytest'] = None; sys.modules['_pytest'] = None\n"
            "from katacli.selfcheck import all_checks, run_check\n"
            "names = [c.name for c in all_checks()]\n"
            "assert run_check(next(c for c in all_checks() if c.name == 'rules.scoring')).passed\n"
            "print(len(names))")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(all_checks())


@pytest.mark.parametrize("flag", ["--help"])
def test_help(flag):
    r = runtests(flag)
    assert r.exit_code == 0 and "--only" in r.stdout and "PASS or FAIL" in r.stdout
