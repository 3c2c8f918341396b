"""Graph search (useGraphSearch): transpositions share one node, values agree with the tree search,
cycles and ko/superko/encore histories stay consistent, tree reuse keeps the graph, and
useGraphSearch=false keeps a plain tree."""
import itertools

import pytest

from katacli._core.game_state import GameState
from katacli._core import search_results as sr

from katacli.config import Config
from katacli.search import SearchParams, Searcher
from support.fakes import MaterialEvaluator

from test_search_core import BLACK, WHITE, plain_params, state_from


def searched(state, visits, seed=5, **params):
    searcher = Searcher(state, plain_params(**params), MaterialEvaluator(), seed=seed)
    searcher.run(max_visits=visits)
    return searcher


def transposed_lines(tree, depth=3):
    """Pairs of distinct three-move lines in the tree that reach the same position: (a, b, c) and
    (c, b, a), Black's two moves swapped around White's."""
    pairs = []
    for first in sr.analysis_data(tree, 1):
        for second in sr.analysis_data(tree, 1, path=[first["move"]]) or []:
            for third in sr.analysis_data(tree, 1, path=[first["move"], second["move"]]) or []:
                a, b, c = first["move"], second["move"], third["move"]
                if None in (a, b, c) or a == c:
                    continue
                if sr.node_identity(tree, [c, b, a]) is not None:
                    pairs.append(([a, b, c], [c, b, a]))
    return pairs


def edge_visits(tree, line):
    """Edge visits of the last move of line, counted at its parent."""
    entries = sr.analysis_data(tree, 1, path=line[:-1])
    return next(e["edge_visits"] for e in entries if e["move"] == line[-1])


def test_transpositions_share_one_node_with_edge_visits_per_parent():
    searcher = searched(GameState(5), 1500, use_graph_search=True)
    tree = searcher.tree
    pairs = transposed_lines(tree)
    assert pairs, "a 1500-visit search on an empty 5x5 board transposes somewhere"
    for line1, line2 in pairs:
        assert sr.node_identity(tree, line1) == sr.node_identity(tree, line2)
        # One node, one visit count; each parent's edge counts only the playouts that came its way.
        stats1, stats2 = sr.node_stats(tree, line1), sr.node_stats(tree, line2)
        assert stats1 == stats2
        edges = edge_visits(tree, line1), edge_visits(tree, line2)
        # An edge catches up with the node's visits but never passes them (no cycle here), and every
        # visit of the node came down one of its two parent edges (catch-ups add edge visits only).
        assert max(edges) <= stats1["visits"] <= sum(edges)
    assert tree.node_count() == tree.table_node_count() + 1     # every node but the root is in the table
    assert tree.check_invariants() and tree.total_virtual_losses() == 0


def test_tree_search_keeps_transpositions_apart():
    searcher = searched(GameState(5), 1500, use_graph_search=False)
    tree = searcher.tree
    pairs = transposed_lines(tree)
    assert pairs
    assert all(sr.node_identity(tree, l1) != sr.node_identity(tree, l2) for l1, l2 in pairs)
    assert tree.table_node_count() == 0
    assert tree.node_count() == searcher.root_values()["visits"]   # one new node per visit in a plain tree


def test_graph_search_needs_fewer_nodes_for_the_same_visits():
    graph = searched(GameState(5), 1200, use_graph_search=True).tree
    tree = searched(GameState(5), 1200, use_graph_search=False).tree
    assert graph.root_visits == tree.root_visits == 1200
    assert graph.node_count() < tree.node_count()


POSITIONS = {
    "empty 7x7": (GameState(7), BLACK),
    "capture race 5x5": (state_from("""
        .XO..
        XO.O.
        .XO..
        ..X..
        .....
    """), BLACK),
    "white to move 6x6": (state_from("""
        ......
        .XX...
        ..O.O.
        ...X..
        ......
        ......
    """, to_move=WHITE, komi=6.5), WHITE),
}


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_root_values_match_the_tree_search_within_noise(name):
    state, _ = POSITIONS[name]
    values = {}
    for graph in (True, False):
        searcher = searched(state.copy(), 1000, use_graph_search=graph, num_search_threads=2)
        values[graph] = searcher.root_values()
        assert values[graph]["visits"] == 1000
    assert values[True]["win_loss"] == pytest.approx(values[False]["win_loss"], abs=0.08)
    assert values[True]["score_mean"] == pytest.approx(values[False]["score_mean"], abs=1.0)


# Positions where ko captures and passes can bring a position back: simple ko (Japanese) allows
# the repetition, superko (Tromp-Taylor, Chinese) bans it depending on the path, Japanese rules
# add the encore.
KO_FIGHT = """
    .XO.
    XO.O
    .XO.
    ....
"""
DOUBLE_KO = """
    .XO.O
    XO.OX
    .XO.X
    XXOOX
    .X.O.
"""


@pytest.mark.parametrize("diagram,rules", list(itertools.product([KO_FIGHT, DOUBLE_KO],
                                                                  ["japanese", "tromp-taylor", "chinese"])))
@pytest.mark.parametrize("rep_bound", [3, 11])
def test_ko_loops_neither_hang_nor_double_count(diagram, rules, rep_bound):
    state = state_from(diagram, rules=rules)
    searcher = searched(state, 1500, use_graph_search=True, graph_search_rep_bound=rep_bound,
                        num_search_threads=4)
    tree = searcher.tree
    assert tree.root_visits == 1500
    assert tree.total_virtual_losses() == 0
    assert tree.check_invariants()
    assert tree.node_count() == tree.table_node_count() + 1
    legal = set(state.legal_moves())
    assert searcher.best_move() in legal | {None}


def test_tree_reuse_keeps_the_graph_and_frees_the_rest():
    searcher = searched(GameState(5), 1000, use_graph_search=True)
    move = searcher.best_move()
    kept_visits = sr.node_stats(searcher.tree, [move])["visits"]
    assert searcher.advance(move)
    tree = searcher.tree
    assert tree.root_visits == kept_visits
    assert tree.node_count() == tree.table_node_count() + 1   # nothing unreachable left in the table
    assert tree.check_invariants()
    searcher.run(max_visits=kept_visits + 300)
    assert tree.root_visits == kept_visits + 300
    assert tree.check_invariants() and tree.total_virtual_losses() == 0


@pytest.mark.parametrize("mode", ["gtp", "analysis", "selfplay", "benchmark"])
@pytest.mark.parametrize("text,graph,rep_bound", [
    ("", True, 11),                                          # KataGo's defaults, every mode here
    ("useGraphSearch = false\n", False, 11),
    ("graphSearchRepBound = 5\ngraphSearchCatchUpLeakProb = 0.25\n", True, 5),
])
def test_config_keys_reach_the_search_core(mode, text, graph, rep_bound):
    cfg = Config.from_text("numSearchThreads = 1\n" + text, mode=mode)
    params = SearchParams.from_config(cfg)
    assert cfg.check_unsupported_keys() == []          # honoured now: no start-up warning
    searcher = Searcher(GameState(5), params, MaterialEvaluator(), seed=1)
    searcher.run(max_visits=60)
    assert searcher.tree.graph_search is graph and params.graph_search_rep_bound == rep_bound
    assert (searcher.tree.table_node_count() > 0) is graph


def test_switching_graph_search_off_clears_to_a_plain_tree():
    searcher = searched(GameState(5), 300, use_graph_search=True)
    assert searcher.tree.graph_search and searcher.tree.table_node_count() > 0
    searcher.set_params(plain_params(use_graph_search=False))
    searcher.run(max_visits=300)
    assert not searcher.tree.graph_search and searcher.tree.table_node_count() == 0
    assert searcher.tree.node_count() == 300


@pytest.mark.parametrize("leak", [0.0, 1.0])
def test_catch_up_leak_keeps_counts_consistent(leak):
    searcher = searched(GameState(5), 800, use_graph_search=True, graph_search_catch_up_leak_prob=leak)
    assert searcher.tree.root_visits == 800
    assert searcher.tree.check_invariants() and searcher.tree.total_virtual_losses() == 0


def test_graph_search_analysis_and_ownership_survive_the_graph():
    searcher = searched(GameState(5), 800, use_graph_search=True, num_search_threads=4)
    info = searcher.analysis(max_pv_len=20, include_ownership=True)
    assert info.moves and all(len(m.pv) <= 20 for m in info.moves)
    assert sr.tree_ownership(searcher.tree) is not None
