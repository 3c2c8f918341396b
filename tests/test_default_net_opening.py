"""benchmarks/default_net_opening.py: lines counted from the nearest edge, and a real net's opening judged sane."""
from __future__ import annotations

import sys

import pytest

from support.paths import G170_B6, REPO, model_path

sys.path.insert(0, str(REPO / "benchmarks"))
import default_net_opening as opening_bench  # noqa: E402

import katacli  # noqa: E402


@pytest.mark.parametrize("row, column, size, line", [
    (0, 0, 19, 1), (0, 9, 19, 1), (18, 18, 19, 1), (1, 5, 19, 2), (2, 3, 19, 3), (3, 15, 19, 4),
    (9, 9, 19, 10), (4, 4, 9, 5), (8, 4, 9, 1), (6, 2, 9, 3),
])
def test_lines_count_from_the_nearest_edge(row, column, size, line):
    assert opening_bench.line_of(row, column, size) == line


@pytest.mark.parametrize("size, lines", [(9, (3, 4, 5)), (11, (3, 4, 5)), (13, (3, 4)), (19, (3, 4))])
def test_the_centre_counts_as_sane_only_below_13x13(size, lines):
    assert opening_bench.good_lines(size) == lines


@pytest.mark.needs_shared
def test_g170_opens_on_the_third_or_fourth_line():
    net = katacli.load_network(str(model_path(G170_B6)), device="cpu")
    result = opening_bench.opening(net, 19)
    assert result["best_line"] in (3, 4) and result["sane"]
    assert sum(result["policy_per_line"].values()) == pytest.approx(1.0, abs=0.02)  # lines 1-5 hold nearly all
    assert result["policy_per_line"][3] > result["policy_per_line"][2]


def test_bad_board_sizes_are_refused_with_a_message(capsys):
    with pytest.raises(SystemExit):
        opening_bench.main(["--boards", "30"])
    assert "board sizes must be" in capsys.readouterr().err


@pytest.mark.needs_shared
def test_a_search_of_g170s_opening_puts_its_visits_on_the_third_and_fourth_lines():
    net = katacli.load_network(str(model_path(G170_B6)), device="cpu")
    result = opening_bench.searched_opening(net, 9, 50)
    shares = result["visits_per_line"]
    assert sum(shares.values()) == pytest.approx(1.0)
    assert shares[3] + shares[4] + shares[5] > 0.8 and shares[1] == 0.0


def test_bad_visit_counts_are_refused_with_a_message(capsys):
    with pytest.raises(SystemExit):
        opening_bench.main(["--search-visits", "0"])
    assert "visit counts must be at least 1" in capsys.readouterr().err


def test_the_packaged_default_net_opens_19x19_on_the_third_or_fourth_line():
    """The default net was trained on boards 7-13; its refinement (benchmarks/default_net.md) moved its
    19x19 opening off the 2nd line: the best point and the largest share by line are on lines 3-4."""
    result = opening_bench.opening(katacli.load_default_network(), 19)
    assert result["best_line"] in (3, 4) and result["sane"]
    lines = result["policy_per_line"]
    assert max(lines, key=lines.get) in (3, 4)
    assert lines[3] + lines[4] > 1.5 * lines[2]
