"""Searcher.root_result / child_results: self-play's typed view of a finished search.

Each field must be exactly what the tree holds (read here straight from the core's
search_results), so that self-play's training rows do not change with the typed API.
"""
import dataclasses
import hashlib
import random

import numpy as np
import pytest

from katacli._core import search_results as sr
from katacli._core.game_state import GameState
from katacli.game.coords import point_of_flat
from katacli.search import SearchParams, Searcher
from katacli.search.results import ChildResult, RootResult, position_hashes, symmetric_point
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
    assert (root.pruned_win_loss, root.pruned_lead) == (pruned["win_loss"], pruned["lead"])

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


def _reference_hashes(colors, player, ko_point):
    """rootInfo's thisHash / symHash spelled out point by point: each symmetry's board as digits, row by row."""
    y_size, x_size = len(colors), len(colors[0])
    hashes = []
    for sym in range(8 if x_size == y_size else 4):
        grid = {symmetric_point((x, y), x_size, y_size, sym): colors[y][x] for y in range(y_size) for x in range(x_size)}
        rows, cols = (x_size, y_size) if sym & 4 else (y_size, x_size)
        text = "".join(str(grid[(x, y)]) for y in range(rows) for x in range(cols))
        ko = symmetric_point(ko_point, x_size, y_size, sym) if ko_point is not None else None
        hashes.append(hashlib.blake2b(f"{text}|{player}|{ko}".encode(), digest_size=16).hexdigest().upper())
    return hashes[0], min(hashes)


@pytest.mark.parametrize("x_size, y_size", [(19, 19), (9, 9), (13, 7), (2, 5), (1, 1)])
def test_position_hashes_are_the_digit_strings_hashes(x_size, y_size):
    rng = random.Random(x_size * 100 + y_size)
    for _ in range(20):
        colors = [[rng.choice((0, 0, 1, 2)) for _ in range(x_size)] for _ in range(y_size)]
        ko = (rng.randrange(x_size), rng.randrange(y_size)) if rng.random() < 0.5 else None
        player = rng.choice((1, 2))
        assert position_hashes(colors, player, ko) == _reference_hashes(colors, player, ko)
    square = [[1, 0], [0, 0]]
    rotated = [[0, 0], [0, 1]]
    assert position_hashes(square, 1, None)[1] == position_hashes(rotated, 1, None)[1]   # symHash: symmetric twins
    assert position_hashes(square, 1, None)[0] != position_hashes(rotated, 1, None)[0]
