"""The Python API's examples: the new-user quick start (short, documented names only) and the three
example scripts, each run as a user would run them. Without ../shared the runs use random playouts or
random-weight networks; with it the quick start also runs on a real network."""
from __future__ import annotations

import ast
import csv
import io
import subprocess
import sys

import pytest

import katacli
from support.paths import G170_B6, MODELS, REPO, require

EXAMPLES = REPO / "examples"
DOCS = REPO / "docs" / "python-api.md"
QUICKSTART = EXAMPLES / "quickstart.py"
# The bar for the new-user task: load a net, set up a position, search, read the answer.
MAX_QUICKSTART_LINES = 15
NET = MODELS / G170_B6
SGF_9 = "(;GM[1]FF[4]SZ[9]KM[6.5]RU[japanese];B[ee];W[cc];B[gc];W[gg])"
SGF_7 = "(;GM[1]FF[4]SZ[7]KM[7.5];B[dd];W[cc])"
RUN_TIMEOUT = 300


def run_example(name: str, *args: str) -> subprocess.CompletedProcess:
    result = subprocess.run([sys.executable, str(EXAMPLES / name), *args], capture_output=True, text=True,
                            timeout=RUN_TIMEOUT, cwd=REPO)
    assert result.returncode == 0, result.stderr
    return result


def _code_lines(path) -> list[str]:
    """Lines of code: no blank lines, comments, shebang or the module docstring."""
    tree = ast.parse(path.read_text())
    docstring = tree.body[0]
    skip = set(range(docstring.lineno, docstring.end_lineno + 1)) if isinstance(docstring, ast.Expr) else set()
    return [line for number, line in enumerate(path.read_text().splitlines(), start=1)
            if number not in skip and line.strip() and not line.strip().startswith("#")]


def test_quickstart_is_short_and_uses_only_the_documented_api():
    lines = _code_lines(QUICKSTART)
    assert len(lines) < MAX_QUICKSTART_LINES, lines
    tree = ast.parse(QUICKSTART.read_text())
    imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert imported == {"argparse", "katacli"}
    assert not any(isinstance(node, ast.ImportFrom) for node in ast.walk(tree))
    used = {node.attr for node in ast.walk(tree)
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "katacli"}
    docs = DOCS.read_text()
    assert used and used <= set(katacli.__all__)
    for name in used:
        assert f"katacli.{name}" in docs, name


@pytest.mark.subprocess
def test_quickstart_without_a_network():
    out = run_example("quickstart.py", "rollouts").stdout
    assert out.startswith("B to move: best ") and "win rate" in out and "PV" in out


def test_quickstart_with_the_default_network():
    out = run_example("quickstart.py").stdout
    assert out.startswith("B to move: best ") and "win rate" in out and "PV" in out


@pytest.mark.subprocess
@pytest.mark.needs_shared
def test_quickstart_with_a_network():
    require(NET)
    out = run_example("quickstart.py", str(NET)).stdout
    words = out.split()
    assert words[:4] == ["B", "to", "move:", "best"] and words[4].rstrip(",") in katacli.Game(9).legal_moves()


@pytest.mark.subprocess
def test_batch_evaluate_writes_one_row_per_position(tmp_path):
    games = tmp_path / "games"
    (games / "more").mkdir(parents=True)
    (games / "a.sgf").write_text(SGF_9)
    (games / "more" / "b.sgf").write_text(SGF_7)
    (games / "broken.sgf").write_text("not an sgf")
    out = tmp_path / "positions.csv"
    result = run_example("batch_evaluate_sgf.py", str(games), "--random-net", "b2c16", "--out", str(out),
                         "--batch-size", "3")
    assert "skipping" in result.stderr and "broken.sgf" in result.stderr
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    assert len(rows) == 5 + 3
    assert [r["move_number"] for r in rows[:5]] == ["0", "1", "2", "3", "4"]
    assert rows[1]["next_player"] == "W" and rows[1]["last_move"] == "B E5"
    for r in rows:
        assert float(r["winrate"]) == pytest.approx(float(r["black_winrate"]) if r["next_player"] == "B"
                                                    else 1 - float(r["black_winrate"]), abs=2e-6)


@pytest.mark.subprocess
def test_batch_evaluate_every_nth_position(tmp_path):
    path = tmp_path / "a.sgf"
    path.write_text(SGF_9)
    out = run_example("batch_evaluate_sgf.py", str(path), "--random-net", "b2c16", "--every", "2").stdout
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [r["move_number"] for r in rows] == ["0", "2", "4"]


@pytest.mark.subprocess
def test_custom_search_hook_keeps_the_search_off_the_edge():
    out = run_example("custom_search_hook.py", "--random-net", "b2c16", "--edge-factor", "0", "--visits", "40").stdout
    plain, adjusted = out.split("\n\n")
    moves = [line.split()[0] for line in adjusted.splitlines()[2:]]
    assert moves and all(m[0] not in "AJ" and m[1:] not in ("1", "9") for m in moves)
    assert len(plain.splitlines()) > 2


@pytest.mark.subprocess
def test_winrate_plot_writes_a_png(tmp_path):
    sgf = tmp_path / "game.sgf"
    sgf.write_text(SGF_7)
    png = tmp_path / "curve.png"
    out = run_example("winrate_plot.py", str(sgf), "--visits", "20", "--out", str(png)).stdout
    lines = out.strip().splitlines()
    assert len(lines) == 3 and lines[1].split()[:3] == ["1", "B", "D4"]
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.subprocess
@pytest.mark.parametrize("name", ["quickstart.py", "batch_evaluate_sgf.py", "custom_search_hook.py", "distill_openings.py",
                                  "winrate_plot.py"])
def test_examples_explain_themselves(name):
    assert "usage:" in run_example(name, "--help").stdout
