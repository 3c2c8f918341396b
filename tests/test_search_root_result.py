"""Searcher.root_result / child_results: self-play's typed view of a finished search.

Each field must be exactly what the tree holds (read here straight from the core's
search_results), so that self-play's training rows do not change with the typed API.
"""
import dataclasses

import numpy as np
import pytest

from katacli._core import search_results as sr
from katacli._core.board import GoBoard
from katacli._core.game_state import GameState
from katacli.game.coords import parse_color, parse_vertex, point_of_flat
from katacli.search import SearchParams, Searcher
from katacli.search.results import ChildResult, RootResult, position_hashes
from support.fakes import MaterialEvaluator

TROMP_TAYLOR_7 = (1, 0, 0, True, False, 0, False, 7.5)


def searched(noise: bool, visits: int = 60) -> Searcher:
    params = SearchParams().replace(root_noise_enabled=noise, root_dirichlet_noise_weight=0.25,
                                    root_symmetry_pruning=False, chosen_move_temperature=0.0,
                                    chosen_move_temperature_early=0.0)
    searcher = Searcher(GameState(7, 7, TROMP_TAYLOR_7), params, MaterialEvaluator(), seed=3)
    searcher.run(max_visits=visits)
    return searcher


@pytest.mark.parametrize("noise", [False, True])
def test_root_result_is_the_trees_values(noise):
    searcher = searched(noise)
    tree = searcher.tree
    root = searcher.root_result()
    assert isinstance(root, RootResult)
    assert root.visits == tree.root_visits == 60

    node, pruned = sr.root_values(tree, False), sr.root_values(tree, True)
    assert (root.win, root.loss, root.no_result, root.score_mean) == (
        node["win"], node["loss"], node["no_result"], node["score_mean"])
    assert (root.win_loss, root.lead) == (node["win_loss"], node["lead"])   # KataGo's getRootValues
    assert (root.win_loss, root.lead) != (pruned["win_loss"], pruned["lead"])

    moves, values = sr.play_selection(tree, 0.0)
    assert root.play_selection == tuple(zip(moves, values)) and moves

    searched_policy = sr.root_policy(tree, True)
    expected = [(point_of_flat(i, 7, 7), float(p)) for i, p in enumerate(searched_policy) if p >= 0]
    assert list(root.search_priors) == expected
    assert sum(p for _, p in root.search_priors) == pytest.approx(1.0, abs=1e-4)

    raw = sr.root_raw_values(tree)
    assert (root.raw_win, root.raw_loss, root.raw_no_result, root.raw_score_mean) == (
        raw["win"], raw["loss"], raw["no_result"], raw["score_mean"])
    raw_moves, raw_priors = tree.root_edges()
    assert [m for m, _ in root.raw_priors] == raw_moves
    assert np.array_equal(np.array([p for _, p in root.raw_priors], np.float32), raw_priors)

    # Root noise changes the priors the search used, never the raw ones.
    raw_by_move = dict(root.raw_priors)
    largest_change = max(abs(p - raw_by_move[m]) for m, p in root.search_priors)
    assert (largest_change > 1e-3) == noise


def test_child_results_are_the_visited_root_moves():
    searcher = searched(noise=False)
    data = [d for d in sr.analysis_data(searcher.tree, 1, 0) if d["visits"] > 0]
    children = searcher.child_results()
    assert children and all(isinstance(c, ChildResult) for c in children)
    assert [(c.move, c.visits, c.weight, c.utility, c.win_loss, c.score_mean) for c in children] == [
        (d["move"], d["visits"], d["weight"], d["utility"], d["win_loss"], d["score_mean"]) for d in data]
    assert tuple(children) == searcher.root_result().children
    # A plain tree: the root's own evaluation plus one visit per child visit.
    assert sum(c.visits for c in children) + 1 == searcher.root_visits


def test_rollout_search_has_a_root_result_too():
    rollouts = Searcher(GameState(7, 7, TROMP_TAYLOR_7), SearchParams(), None, seed=3)
    rollouts.run(max_visits=40)
    root = rollouts.root_result()
    assert root.visits == 40 and root.children
    assert {m for m, _ in root.raw_priors} == {m for m, _ in root.search_priors}


def test_no_result_before_a_search_and_results_are_frozen():
    searcher = Searcher(GameState(7, 7, TROMP_TAYLOR_7), SearchParams(), MaterialEvaluator(), seed=3)
    assert searcher.root_result() is None and searcher.child_results() == []
    searcher.run(max_visits=5)
    root = searcher.root_result()
    with pytest.raises(dataclasses.FrozenInstanceError):
        root.visits = 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        root.children[0].visits = 0


# rootInfo's thisHash / symHash as KataGo 1.17.2's analysis engine wrote them for these positions (g170 net, one
# visit): (board size, initial stones, moves, player to move first, thisHash, symHash). Simple-ko points, White to
# move, symmetric twins and non-square boards (whose transposed symmetries KataGo includes) among them.
KATAGO_ROOT_HASHES = [
    ((9, 9), [], [], "B", "1521075FDD85FFE1B074F776AFC4E49D", "1521075FDD85FFE1B074F776AFC4E49D"),
    ((19, 19), [], ["B Q16", "W D4", "B C16", "W R4"], "B",
     "5A39F3CDF599360E7C397B5CDDB1925E", "523A8DDEFA00747054E456B7A037ADE7"),
    ((19, 19), [], ["B Q16", "W D4", "B C16"], "B",
     "F0E83F1DFDF8861CC9A452444A92B8C4", "04C91F03196FCC737808730E5C010E41"),
    ((13, 7), ["B C3", "W D5", "B K2"], ["W E4"], "W",
     "3695738D984F3A68DFE4A1E41D922E6F", "14850B43B117E600C8617BE4482391D9"),
    ((7, 11), [], ["B B2", "W C6"], "B", "13CB767B6A55E44059472997A8B2AFA5", "13CB767B6A55E44059472997A8B2AFA5"),
    ((9, 9), [], ["B D5", "W E5", "B C4", "W F4", "B D3", "W E3", "B E4"], "B",
     "1B9453DB3F1F691A75B153B0460167CF", "1B9453DB3F1F691A75B153B0460167CF"),
    ((9, 9), [], ["B D5", "W E5", "B C4", "W F4", "B D3", "W E3", "B E4", "W D4"], "B",   # White took a ko
     "AC8414A1DEA20F8E4B926D59ADCB296E", "1160B8E6B14224044FC88E35C4A5ED44"),
    ((9, 9), [], ["B D5", "W E5", "B C4", "W F4", "B D3", "W E3", "B E4", "W D4", "B A1"], "B",
     "C471B19784954F3899969046C4C2A40A", "123E3C829B74DE4067616A8435A9415D"),
    ((9, 9), ["B C3", "W G7"], [], "W", "F771AB2B5E5F3850F1E00248ADED4360", "C08261D2D8E5B9310DFE9B61B4B9C826"),
    ((9, 9), ["B G7", "W C3"], [], "W", "E9CAAAE29FF713CC473E2A4A91EB21A0", "C08261D2D8E5B9310DFE9B61B4B9C826"),
]


@pytest.mark.parametrize("size, stones, moves, first, this_hash, sym_hash", KATAGO_ROOT_HASHES)
def test_position_hashes_are_katagos(size, stones, moves, first, this_hash, sym_hash):
    x_size, y_size = size
    board = GoBoard(x_size, y_size)
    for stone in stones:
        color, vertex = stone.split()
        board.set_stone(parse_vertex(vertex, x_size, y_size), parse_color(color))
    state = GameState(x_size, y_size, TROMP_TAYLOR_7, next_player=parse_color(first), board=board)
    for move in moves:
        color, vertex = move.split()
        state.play(parse_vertex(vertex, x_size, y_size), parse_color(color))
    assert position_hashes(state) == (this_hash, sym_hash)
