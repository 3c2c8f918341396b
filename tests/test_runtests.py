"""`kata runtests`: every built-in check passes on this build, a wrong result or a crash makes it fail with a
non-zero exit, selection and listing work, and the checks need no test-only dependency."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from katacli.cli import app
from katacli.selfcheck import all_checks, reference_checks
from katacli.selfcheck.framework import Check, CheckFailed, run_check

REPO = Path(__file__).resolve().parents[1]
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
    assert {"rules.ko", "features.reference", "network.reference", "search.rollouts", "gtp.roundtrip"} <= set(passed)
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
    for path in (reference_checks.TINY_MODEL_PATH, reference_checks.REFERENCE_PATH):
        assert path.stat().st_size < MAX_BUNDLED_BYTES, path


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
