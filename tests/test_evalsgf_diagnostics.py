"""`kata evalsgf`'s -print-graph, -print-sharp-score, -print-root-ending-bonus and -print-avg-shortterm-error:
the search_results walks behind them, the printed formats, and a side-by-side with KataGo 1.17.2's own output
(tests/evalsgf_reference/, recorded with the shared b7c96 net; that part skips without ../shared)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from katacli._core import search_results as sr
from katacli._core.game_state import GameState
from katacli.cli import app, normalize_argv
from katacli.search import Searcher

from support.fakes import MaterialEvaluator
from support.paths import BUNDLED_TINY_MODEL as TINY_MODEL
from support.paths import TEST_TRANSFORMER, TRANSCRIPTS, model_path
from test_search_core import plain_params

GAME = TRANSCRIPTS / "game.sgf"  # 9x9, setup stones, 9 moves
REFERENCE = Path(__file__).parent / "evalsgf_reference" / "b7c96-game-m9-v100.txt"
# The search settings the reference was recorded with (its header), as a katacli config.
REFERENCE_CONFIG = """numSearchThreads = 1
maxVisits = 30
searchRandSeed = abc
nnRandSeed = abc
nnRandomize = false
rootNumSymmetriesToSample = 1
"""
REFERENCE_ARGS = ["-m", "9", "-v", "100", "-t", "1", "-print-graph", "-print-sharp-score", "-print-root-ending-bonus",
                  "-print-avg-shortterm-error", "-print-max-depth", "2", "-override-config", "rootEndingBonusPoints=0.5"]
EDGE_LINE = re.compile(r"^(\d+) -> (\d+)$")
BONUS_LINE = re.compile(r"^(\S+) visits (\d+) edgeVisits (\d+) utilityNoBonus (-?\d+\.\d\d)c "
                        r"utilityWithBonus (-?\d+\.\d\d)c endingScoreBonus (-?\d+\.\d\d)$")
SHORTTERM_PART = re.compile(r" STWL +(-?\d+\.\d\d)c STS +(-?\d+\.\d) N ")


def evalsgf(*args: str):
    model = [] if "-model" in args else ["-model", str(TINY_MODEL)]
    return CliRunner().invoke(app, normalize_argv(["evalsgf", str(GAME), *args, *model]))


def searched(visits: int, graph: bool = True, shortterm_errors: bool = False, size: int = 5) -> Searcher:
    searcher = Searcher(GameState(size), plain_params(use_graph_search=graph),
                        MaterialEvaluator(shortterm_errors=shortterm_errors), seed=5)
    searcher.run(max_visits=visits)
    return searcher


# ---- the walks ---------------------------------------------------------------------------------
@pytest.mark.parametrize("graph", [False, True])
def test_graph_edges_number_every_node_once_from_the_root(graph):
    searcher = searched(1500, graph=graph)
    count, edges = searcher.graph_edges()
    assert count == searcher.tree.node_count()
    children = [child for _, child in edges]
    assert set(children) == set(range(1, count))  # every node but the root (0) has a parent
    if graph:
        # 1500 visits on an empty 5x5 board transpose: some nodes have several parents.
        assert len(edges) > count - 1
    else:
        assert len(edges) == count - 1 and len(set(children)) == len(children)
        # Reversed post order numbers a parent before its children.
        assert all(parent < child for parent, child in edges)
    # Edges are grouped by parent, parents in numbering order.
    parents = [parent for parent, _ in edges]
    assert parents == sorted(parents)


def test_graph_edges_before_and_after_the_first_visit():
    searcher = Searcher(GameState(5), plain_params(), MaterialEvaluator(), seed=5)
    assert searcher.graph_edges() == (0, [])  # no root node yet
    searcher.run(max_visits=1)
    assert searcher.graph_edges() == (1, [])


def _root_and_only_child(searcher):
    (child,) = sr.root_child_stats(searcher.tree)
    root_weight = sr.root_values(searcher.tree, pruned=False)["weight"]
    return child, root_weight - child["weight"]


def test_sharp_score_with_one_child_weighs_child_and_root_by_their_weights():
    searcher = searched(2)
    child, parent_weight = _root_and_only_child(searcher)
    _, (selection_value,) = sr.play_selection(searcher.tree, 1.0)
    root_score = searcher.root_raw_values()["score_mean"]
    child_score = sr.node_stats(searcher.tree, [child["move"]])["score_mean"]
    expected = (selection_value * child_score + parent_weight * root_score) / (selection_value + parent_weight)
    assert searcher.sharp_score() == pytest.approx(expected, rel=1e-9)


def test_sharp_score_of_a_lone_root_is_its_value():
    lone = searched(1)
    assert lone.sharp_score() == pytest.approx(lone.root_values(pruned=False)["score_mean"])


@pytest.mark.parametrize("visits", [1, 2])
def test_shortterm_errors_average_the_node_and_its_children(visits):
    searcher = searched(visits, shortterm_errors=True)
    raw = searcher.root_raw_values()
    if visits == 1:
        assert searcher.shortterm_errors([]) == pytest.approx((raw["st_wl_error"], raw["st_score_error"]))
        return
    child, parent_weight = _root_and_only_child(searcher)
    child_wl, child_score = searcher.shortterm_errors([child["move"]])  # a leaf: its own errors
    share = child["weight"] / (child["weight"] + parent_weight)
    expected = ((1 - share) * raw["st_wl_error"] + share * child_wl, (1 - share) * raw["st_score_error"] + share * child_score)
    assert searcher.shortterm_errors([]) == pytest.approx(expected, rel=1e-9)


def test_shortterm_errors_without_the_heads_or_the_node():
    searcher = searched(20)
    assert searcher.shortterm_errors([]) == (-1.0, -1.0)  # KataGo: the network lacks short-term error heads
    assert searcher.shortterm_errors([(0, 0), (0, 1), (0, 2), (0, 3)]) == (0.0, 0.0)  # not in the tree


def test_root_ending_bonus_rows_follow_the_root_children():
    searcher = searched(50)
    rows = searcher.root_ending_bonus()
    children = sr.root_child_stats(searcher.tree)
    assert [r["move"] for r in rows] == [c["move"] for c in children]
    assert [(r["visits"], r["edge_visits"]) for r in rows] == [(c["visits"], c["edge_visits"]) for c in children]
    for row in rows:  # no bonus, no change; the bonus shifts the utility by the score utility's difference
        assert (row["utility_with_bonus"] == row["utility"]) == (row["bonus"] == 0.0)


# ---- the command -----------------------------------------------------------------------------------
@pytest.mark.parametrize("flag, pattern", [
    ("-print-sharp-score", r"^White sharp score -?\d"),
    ("-print-root-ending-bonus", r"^Ending bonus \(ROOT position\)$"),
    ("-print-avg-shortterm-error", r"^: T .* STWL +-?\d+\.\d\dc STS +-?\d+\.\d N "),
    ("-print-graph", r"^0 -> \d+$"),
])
def test_each_flag_prints_its_lines_and_only_when_asked(flag, pattern):
    plain = evalsgf("-m", "9", "-v", "12")
    flagged = evalsgf("-m", "9", "-v", "12", flag)
    assert plain.exit_code == 0 and flagged.exit_code == 0, flagged.output
    assert not re.search(pattern, plain.output, re.M)
    assert re.search(pattern, flagged.output, re.M), flagged.output


def test_printed_graph_and_ending_bonus_agree_with_the_tree_summary():
    result = evalsgf("-m", "9", "-v", "30", "-print-graph", "-print-root-ending-bonus")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    nodes = int(next(line for line in lines if line.startswith("True number of tree nodes: ")).split()[-1])
    edges = [tuple(map(int, m.groups())) for m in map(EDGE_LINE.match, lines) if m]
    assert {child for _, child in edges} == set(range(1, nodes))
    assert lines[lines.index(f"{edges[-1][0]} -> {edges[-1][1]}") + 1] == ""  # a blank line ends the graph
    bonus = [BONUS_LINE.match(line) for line in lines[lines.index("Ending bonus (ROOT position)") + 1:]]
    rows = bonus[:next(i for i, m in enumerate(bonus) if m is None)]
    assert rows and sum(int(m.group(2)) for m in rows) == 29  # the root's children hold every visit but its own


def test_rollouts_have_no_shortterm_errors():
    result = evalsgf("-m", "9", "-v", "10", "-print-avg-shortterm-error", "-model", "rollouts")
    assert result.exit_code == 0, result.output
    assert "STWL -100.00c STS  -1.0 N " in result.output


# ---- side by side with KataGo ------------------------------------------------------------------------
def _reference_sections() -> tuple[list[str], list[str]]:
    lines = [line for line in REFERENCE.read_text().splitlines() if not line.startswith("#")]
    split = lines.index("[log]")
    return lines[lines.index("[stdout]") + 1:split], lines[split + 1:]


def test_matches_katago_graph_sharp_score_shortterm_errors_and_ending_bonus(tmp_path):
    net = model_path(TEST_TRANSFORMER)
    config = tmp_path / "reference.cfg"
    config.write_text(REFERENCE_CONFIG)
    result = evalsgf(*REFERENCE_ARGS, "-config", str(config), "-model", str(net))
    assert result.exit_code == 0, result.output
    ours = result.output.splitlines()
    stdout, log = _reference_sections()

    # The graph: same numbering, same edges (a few nodes shared by transpositions).
    assert [line for line in ours if EDGE_LINE.match(line)] == [line for line in stdout if EDGE_LINE.match(line)]
    sharp = float(next(line for line in stdout if line.startswith("White sharp score ")).split()[-1])
    ours_sharp = float(next(line for line in ours if line.startswith("White sharp score ")).split()[-1])
    assert ours_sharp == pytest.approx(sharp, abs=2e-4)  # the nets' float32 arithmetic differs slightly

    def bonus_rows(lines):
        return [BONUS_LINE.match(line).groups() for line in lines if BONUS_LINE.match(line)]

    theirs_rows, ours_rows = bonus_rows(log), bonus_rows(ours)
    assert [r[:3] for r in ours_rows] == [r[:3] for r in theirs_rows]
    for mine, theirs in zip(ours_rows, theirs_rows):
        assert [float(v) for v in mine[3:]] == pytest.approx([float(v) for v in theirs[3:]], abs=0.011)

    def shortterm_by_prefix(lines):
        return {line.split(":")[0]: tuple(map(float, SHORTTERM_PART.search(line).groups()))
                for line in lines if SHORTTERM_PART.search(line)}

    def lines_by_prefix(lines):
        return {line.split(":")[0]: line.split("  --  ")[1] for line in lines if SHORTTERM_PART.search(line)}

    # The same tree nodes with the same best lines (a child's: its move and seven more).
    assert lines_by_prefix(ours) == lines_by_prefix(log)
    theirs_st, ours_st = shortterm_by_prefix(log), shortterm_by_prefix(ours)
    assert ours_st.keys() == theirs_st.keys()
    for prefix, values in theirs_st.items():
        assert ours_st[prefix] == pytest.approx(values, abs=0.011), prefix
