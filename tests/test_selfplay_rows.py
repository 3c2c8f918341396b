"""Training rows of real self-play games: written, read back, and checked against the games.

Every main row must decode to the position of its turn (the packed input planes equal
encode_v7 of the replayed position) and carry that turn's targets; side-position rows
carry their own search and no outcome targets.
"""
from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from katacli._core.features import encode_v7
from katacli.data import GT, TrainingFile, join_game_hash, list_training_files, unpack_planes, write_h5
from katacli.data.schema import score_distr_mid
from katacli.game.coords import BLACK, WHITE
from katacli.selfplay.finish import white_scoring
from katacli.selfplay.output import GameOutput
from katacli.selfplay.records import ValueTargets
from katacli.selfplay.rows import (
    c_round,
    game_rows,
    random_round,
    scale_policy_target,
    td_value,
    variance_arrival_time,
)

from support.selfplay import play_games, tiny_settings

POS_LEN = 9


@pytest.fixture(scope="module")
def games():
    settings = tiny_settings("sidePositionProb=0.25,cheapSearchProb=0.5,policySurpriseDataWeight=0.3,"
                             "valueSurpriseDataWeight=0.1,taxRules=NONE,scoringRules=AREA")
    return play_games(settings, 3, seed=11)


def sign_for(pla: int) -> float:
    return 1.0 if pla == WHITE else -1.0


def pla_view(v: ValueTargets, pla: int) -> list[float]:
    if pla == WHITE:
        return [v.win, v.loss, v.no_result, v.score]
    return [v.loss, v.win, v.no_result, -v.score]


def policy_plane(target: dict) -> np.ndarray:
    plane = np.zeros(POS_LEN * POS_LEN + 1, np.int16)
    for move, value in target.items():
        plane[POS_LEN * POS_LEN if move is None else move[1] * POS_LEN + move[0]] = value
    return plane


def test_rows_round_trip_to_positions_and_targets(games, tmp_path):
    for game_index, game in enumerate(games):
        rows = game_rows(game, POS_LEN, random.Random(game_index))
        path = write_h5(tmp_path / f"g{game_index}.h5", rows)
        with TrainingFile(path) as f:
            back = f.read()
            assert f.num_games == (1 if f.num_rows else 0)
        for name in rows:
            assert np.array_equal(back[name], rows[name])
        inputs = unpack_planes(back["binaryInputNCHWPacked"], POS_LEN)
        g = back["globalTargetsNC"]

        expected_main = sum(int(t.target_weight) for t in game.turns)
        expected_side = sum(int(sp.target_weight) for sp in game.side_positions)
        assert all(t.target_weight == int(t.target_weight) for t in game.turns)  # resolved to whole rows
        assert g.shape[0] == expected_main + expected_side

        state = game.start_state.copy()
        row = 0
        final = game.final_value
        for i, turn in enumerate(game.turns):
            for _ in range(int(turn.target_weight)):
                spatial = np.zeros((22, POS_LEN, POS_LEN), np.float32)
                global_ = np.zeros(19, np.float32)
                encode_v7(state, turn.player, spatial, global_,
                          draw_equivalent_wins_for_white=game.draw_equivalent_wins_for_white)
                assert np.array_equal(inputs[row], spatial), (game_index, i)
                assert np.array_equal(back["globalInputNC"][row], global_)
                assert g[row, GT.TURN_IDX] == game.start_turn_idx + i
                assert join_game_hash(g[row, GT.GAME_HASH:GT.GAME_HASH + 6]) == game.game_hash
                assert np.array_equal(back["policyTargetsNCMove"][row, 0], policy_plane(turn.targets.policy_target))
                assert g[row, GT.POLICY_WEIGHT] == 1.0
                if i + 1 < len(game.turns):
                    nxt = policy_plane(game.turns[i + 1].targets.policy_target)
                    assert np.array_equal(back["policyTargetsNCMove"][row, 1], nxt)
                    assert g[row, GT.NEXT_POLICY_WEIGHT] == 1.0
                else:
                    assert (back["policyTargetsNCMove"][row, 1] == 1).all() and g[row, GT.NEXT_POLICY_WEIGHT] == 0
                np.testing.assert_allclose(g[row, GT.WIN:GT.WIN + 4], pla_view(final, turn.player), rtol=1e-6,
                                           atol=1e-5)
                np.testing.assert_allclose(g[row, GT.TD_SEARCH:GT.TD_SEARCH + 4],
                                           pla_view(turn.targets.value, turn.player), rtol=1e-5, atol=1e-5)
                assert g[row, GT.FINAL_SCORE] == pytest.approx(sign_for(turn.player) * final.score, abs=1e-4)
                assert g[row, GT.OWNERSHIP_WEIGHT] == 1.0 and g[row, GT.DATA_VERSION] == 3
                assert g[row, GT.UNREDUCED_VISITS] == turn.targets.unreduced_visits
                distr = back["scoreDistrN"][row].astype(int)
                assert distr.sum() == 100
                centre = np.flatnonzero(distr).mean() - score_distr_mid(POS_LEN) + 0.5
                assert abs(centre - sign_for(turn.player) * final.score) <= 1.0
                own = back["valueTargetsNCHW"][row, 0, :state.y_size, :state.x_size]
                expected_own = np.where(game.final_ownership == turn.player, 1,
                                        np.where(game.final_ownership == 0, 0, -1))
                assert np.array_equal(own, expected_own)
                assert (back["valueTargetsNCHW"][row, :, state.y_size:, :] == 0).all()  # padding stays empty
                row += 1
            state.play(turn.move, turn.player)

        for sp in game.side_positions:
            for _ in range(int(sp.target_weight)):
                spatial = np.zeros((22, POS_LEN, POS_LEN), np.float32)
                global_ = np.zeros(19, np.float32)
                encode_v7(sp.state, sp.player, spatial, global_,
                          draw_equivalent_wins_for_white=game.draw_equivalent_wins_for_white)
                assert np.array_equal(inputs[row], spatial)
                assert g[row, GT.OWNERSHIP_WEIGHT] == 0 and g[row, GT.FUTURE_POS_WEIGHT] == 0
                assert g[row, GT.GAME_FINISHED] == 0 and g[row, GT.NEXT_POLICY_WEIGHT] == 0
                np.testing.assert_allclose(g[row, GT.WIN:GT.WIN + 4], pla_view(sp.targets.value, sp.player),
                                           rtol=1e-5, atol=1e-5)
                assert back["scoreDistrN"][row].sum() == 100
                row += 1


def test_future_board_targets(games):
    game = max(games, key=lambda g: len(g.turns))
    game.turns[0].target_weight = 1.0
    rows = game_rows(game, POS_LEN, random.Random(0))
    state = game.start_state.copy()
    boards = [np.array(state.colors())]
    for t in game.turns:
        state.play(t.move, t.player)
        boards.append(np.array(state.colors()))
    first = game.turns[0]
    for channel, offset in ((2, 8), (3, 32)):
        board = boards[min(offset, len(boards) - 1)]
        expected = np.where(board == first.player, 1, np.where(board == 0, 0, -1))
        assert np.array_equal(rows["valueTargetsNCHW"][0, channel, :7, :7], expected)


def test_cheap_searches_get_no_rows_without_surprise():
    settings = tiny_settings("cheapSearchProb=1.0,cheapSearchTargetWeight=0.0,policySurpriseDataWeight=0,"
                             "valueSurpriseDataWeight=0,sidePositionProb=0")
    game = play_games(settings, 1, seed=4)[0]
    assert all(t.was_cheap_search for t in game.turns)
    assert game_rows(game, POS_LEN)["globalTargetsNC"].shape[0] == 0


# ---------------------------------------------------------------------------- target arithmetic


def test_td_value_extremes():
    values = [ValueTargets(0.2, 0.8, 0.0, -3.0), ValueTargets(0.6, 0.4, 0.0, 1.0), ValueTargets(1.0, 0.0, 0.0, 5.0)]
    assert td_value(values, 0, WHITE, 0.0) == (1.0, 0.0, 0.0, 5.0)            # nowFactor 0: the outcome
    assert td_value(values, 0, BLACK, 1.0) == (0.8, 0.2, 0.0, 3.0)            # nowFactor 1: this search
    win, loss, _, score = td_value(values, 0, WHITE, 0.5)
    assert win == pytest.approx(0.5 * 0.2 + 0.25 * 0.6 + 0.25 * 1.0)
    assert score == pytest.approx(0.5 * -3 + 0.25 * 1 + 0.25 * 5)
    huge = [ValueTargets(1.0, 0.0, 0.0, 1e6)]
    assert td_value(huge, 0, WHITE, 0.0)[3] == 361 + 60


def test_variance_arrival_time():
    values = [ValueTargets(0.5, 0.5, 0, 0), ValueTargets(0.5, 0.5, 0, 0), ValueTargets(1.0, 0.0, 0, 0)]
    assert variance_arrival_time(values, 0) == pytest.approx(2 * 1.0)
    assert variance_arrival_time(values, 2) == 0.0


def test_policy_target_scaling_and_rounding():
    assert scale_policy_target({(0, 0): 2.5, None: 3.5}) == {(0, 0): 3, None: 4}  # C rounding: halves up
    scaled = scale_policy_target({(0, 0): 60000.0, (1, 0): 15000.0})
    assert scaled == {(0, 0): 30000, (1, 0): 7500}
    assert c_round(-2.5) == -3 and c_round(2.4999) == 2


def test_random_round_is_unbiased_and_clamped():
    rng = random.Random(0)
    draws = [random_round(0.3, 120, rng) for _ in range(4000)]
    assert set(draws) == {0, 1} and abs(np.mean(draws) - 0.3) < 0.03
    assert random_round(500.0, 120, rng) == 120 and random_round(-500.0, 120, rng) == -120
    assert random_round(-7.0, 120, rng) == -7


def test_white_scoring_group_tax():
    # White owns the whole left 3x3 region: 3 stones and 6 territory points -> (6-2)/6 each.
    colors = np.zeros((3, 4), np.int8)
    colors[:, 2] = WHITE
    area = np.zeros((3, 4), np.int8)
    area[:, :3] = WHITE
    area[:, 3] = BLACK
    plain = white_scoring(colors, area, group_tax=False)
    assert (plain[:, :3] == 1).all() and (plain[:, 3] == -1).all()
    taxed = white_scoring(colors, area, group_tax=True)
    assert (taxed[:, 2] == 1).all()
    np.testing.assert_allclose(taxed[:, :2], 4.0 / 6.0)
    np.testing.assert_allclose(taxed[:, 3], -1.0 / 3.0)  # Black's 3-point territory, no stones


def test_a_game_over_before_its_first_turn_has_an_sgf_line_and_no_rows(games, tmp_path):
    # A fork can start on a board that is already all pass-alive: the game ends before its first turn.
    # As in KataGo, its SGF is written and it adds no rows (nor a game) to the training data.
    game = games[0]
    over = dataclasses.replace(game, start_state=game.end_state.copy(), turns=[], side_positions=[],
                               start_turn_idx=len(game.end_state.moves))
    assert game_rows(over, POS_LEN, random.Random(1))["globalTargetsNC"].shape[0] == 0
    output = GameOutput(tmp_path, POS_LEN, 1000, 1.0, "0123456789ABCDEF", random.Random(1))
    assert output.add(over) == 0 and output.add(game) > 0
    output.close()
    lines = output.sgf_path.read_text().splitlines()
    assert len(lines) == 2 and lines[0].startswith("(;") and f"startTurnIdx={len(game.end_state.moves)}" in lines[0]
    (path,) = list_training_files(tmp_path / "tdata")
    with TrainingFile(path) as f:
        assert f.num_games == 1 and f.num_rows == output.rows_written
