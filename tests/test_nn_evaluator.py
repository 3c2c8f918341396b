"""The evaluator: batching of mixed board sizes, symmetries, caching, the threaded front end,
and KataGo's postprocessing rules."""
from __future__ import annotations


import numpy as np
import pytest
import torch

from katacli.nn.batching import BatchingEvaluator
from katacli.nn.cache import NNCache
from katacli.nn.description import PostProcessParams
from katacli.nn.evaluator import NNEvaluator, NNRequest, set_cpu_threads
from katacli.nn.postprocess import allow_no_result_from_globals, policy_probabilities, value_outputs
from katacli.nn.symmetry import (
    NUM_SYMMETRIES,
    apply_symmetry,
    compose,
    effective_symmetry,
    invert,
    symmetric_point,
    undo_symmetry,
)

from support.paths import G170_B6, MODELS, TEST_B4, require
from support.threads import run_in_threads

MODEL = MODELS / TEST_B4
G170 = MODELS / G170_B6
TOL = 2e-5


@pytest.fixture(scope="module")
def evaluator():
    return NNEvaluator.from_file(require(MODEL), device="cpu", cache_size_power_of_two=10, seed=1)


def make_request(x_size: int, y_size: int, seed: int, **kwargs) -> NNRequest:
    rng = np.random.default_rng(seed)
    spatial = np.zeros((22, y_size, x_size), np.float32)
    spatial[0] = 1.0
    stones = rng.random((y_size, x_size))
    spatial[1] = stones < 0.15
    spatial[2] = (stones > 0.85)
    global_features = np.zeros(19, np.float32)
    global_features[5] = rng.uniform(-0.4, 0.4)
    legal = np.concatenate(((spatial[1] + spatial[2]).reshape(-1) == 0, [True]))
    fields = dict(board_x=x_size, board_y=y_size, white_to_move=bool(seed % 2), symmetry=seed % NUM_SYMMETRIES)
    fields.update(kwargs)
    return NNRequest(spatial, global_features, legal, **fields)


def assert_same_output(a, b, tol=TOL):
    for field in ("white_win", "white_loss", "no_result", "white_lead", "white_score_mean", "var_time_left",
                  "shortterm_winloss_error", "shortterm_score_error", "policy_pass"):
        assert getattr(a, field) == pytest.approx(getattr(b, field), abs=tol * 100 if "score" in field or "lead" in field else tol)
    assert a.white_score_mean_sq == pytest.approx(b.white_score_mean_sq, rel=1e-4, abs=1e-3)
    np.testing.assert_allclose(a.policy, b.policy, atol=tol)
    np.testing.assert_allclose(a.white_ownership, b.white_ownership, atol=tol)
    assert (a.board_x, a.board_y, a.symmetry) == (b.board_x, b.board_y, b.symmetry)


# ---------------------------------------------------------------------------------------------
# Batching


SIZES = [(19, 19), (9, 9), (13, 13), (9, 13), (13, 9), (7, 7), (19, 19), (9, 9), (9, 13)]


def test_mixed_sizes_batched_equal_one_by_one(evaluator):
    requests = [make_request(x, y, seed) for seed, (x, y) in enumerate(SIZES * 2)]
    batches_before = evaluator.num_batches
    batched = evaluator.evaluate(requests)
    # One batch per distinct (shape, board) - not one per request.
    assert evaluator.num_batches - batches_before == len(set(SIZES))
    for request, out in zip(requests, batched):
        assert (out.board_x, out.board_y) == (request.board_x, request.board_y)
        assert out.policy.shape == out.white_ownership.shape == (request.board_x * request.board_y,)
        assert_same_output(out, evaluator.evaluate_one(request))


def test_max_batch_size_splits_batches():
    ev = NNEvaluator.from_file(require(MODEL), device="cpu", cache_size_power_of_two=None, max_batch_size=3)
    requests = [make_request(9, 9, seed) for seed in range(8)]
    outputs = ev.evaluate(requests)
    assert ev.num_batches == 3 and ev.num_positions_evaluated == 8
    for request, out in zip(requests, outputs):
        assert_same_output(out, ev.evaluate_one(request))


def test_padded_input_matches_exact(evaluator):
    """A 9x13 board given inside a zero-padded 19x19 input gives the same results (KataGo's NN buffers)."""
    exact = make_request(9, 13, seed=4, symmetry=0)
    padded_spatial = np.zeros((22, 19, 19), np.float32)
    padded_spatial[:, :13, :9] = exact.spatial
    for symmetry in (0, 3):
        a = evaluator.evaluate_one(NNRequest(**{**exact.__dict__, "symmetry": symmetry}))
        b = evaluator.evaluate_one(NNRequest(**{**exact.__dict__, "spatial": padded_spatial, "symmetry": symmetry}))
        assert_same_output(a, b, tol=5e-5)


# ---------------------------------------------------------------------------------------------
# Symmetries


def test_symmetry_helpers_agree():
    grid = np.arange(5 * 5).reshape(5, 5)
    for s in range(NUM_SYMMETRIES):
        assert np.array_equal(undo_symmetry(apply_symmetry(grid, s), s), grid)
        assert compose(s, invert(s)) == 0
        transformed = apply_symmetry(grid, s)
        for y in range(5):
            for x in range(5):
                tx, ty = symmetric_point(x, y, 5, 5, s)
                assert transformed[ty, tx] == grid[y, x]
        for t in range(NUM_SYMMETRIES):
            assert np.array_equal(apply_symmetry(apply_symmetry(grid, s), t), apply_symmetry(grid, compose(s, t)))
    assert [invert(s) for s in range(8)] == [0, 1, 2, 3, 4, 6, 5, 7]


def test_symmetry_works_on_torch_tensors():
    grid = torch.arange(12).reshape(1, 3, 4)
    for s in range(NUM_SYMMETRIES):
        assert np.array_equal(apply_symmetry(grid, s).numpy(), apply_symmetry(grid.numpy(), s))


def test_rectangular_inputs_are_not_transposed():
    """KataGo transposes only square inputs: on 9x13, symmetry s and s+4 are the same."""
    grid = np.arange(13 * 9).reshape(13, 9)
    for s in range(4):
        assert effective_symmetry(s + 4, 13, 9) == s
        assert np.array_equal(apply_symmetry(grid, s + 4), apply_symmetry(grid, s))
    assert effective_symmetry(6, 9, 9) == 6


def test_symmetries_of_a_rectangular_board(evaluator):
    base = make_request(9, 13, seed=8)
    outs = evaluator.evaluate([NNRequest(**{**base.__dict__, "symmetry": s}) for s in range(8)])
    for s in range(4):
        assert outs[s + 4].symmetry == s + 4
        np.testing.assert_allclose(outs[s + 4].policy, outs[s].policy, atol=1e-6)
        np.testing.assert_allclose(outs[s + 4].white_ownership, outs[s].white_ownership, atol=1e-6)
        assert outs[s + 4].white_win == pytest.approx(outs[s].white_win, abs=1e-6)
    assert np.abs(outs[1].policy - outs[0].policy).max() > 1e-6  # flips do change things


def test_symmetries_map_outputs_back_to_the_real_board():
    """Symmetry s of a position equals symmetry 0 of the transformed position, mapped back.

    With a net that has learned something (g170), a lone White stone is owned by White
    from every orientation, so ownership must come back to the stone's real point.
    """
    ev = NNEvaluator.from_file(require(G170), device="cpu", cache_size_power_of_two=None)
    spatial = np.zeros((22, 9, 9), np.float32)
    spatial[0] = 1.0
    spatial[2, 2, 6] = 1.0  # an opponent (White) stone at x=6, y=2; Black to move
    legal = np.ones(82, bool)
    legal[2 * 9 + 6] = False
    g = np.zeros(19, np.float32)
    g[5] = -7.5 / 20
    for s in range(NUM_SYMMETRIES):
        out = ev.evaluate_one(NNRequest(spatial, g, legal, 9, 9, False, symmetry=s))
        assert out.policy[2 * 9 + 6] == -1.0
        assert out.ownership_at(6, 2) > 0.5
        moved_spatial = np.ascontiguousarray(apply_symmetry(spatial, s))
        moved_legal = np.append(apply_symmetry(legal[:81].reshape(9, 9), s).reshape(-1), True)
        moved = ev.evaluate_one(NNRequest(moved_spatial, g, moved_legal, 9, 9, False, symmetry=0))
        np.testing.assert_allclose(undo_symmetry(moved.policy.reshape(9, 9), s).reshape(-1), out.policy, atol=1e-5)
        np.testing.assert_allclose(
            undo_symmetry(moved.white_ownership.reshape(9, 9), s).reshape(-1), out.white_ownership, atol=1e-5
        )
        assert moved.white_win == pytest.approx(out.white_win, abs=1e-5)


# ---------------------------------------------------------------------------------------------
# Cache


def test_cache_hit_returns_same_result(evaluator):
    request = make_request(9, 9, seed=21, cache_key=0xDEADBEEF12345678, symmetry=None)
    first = evaluator.evaluate_one(request)
    hits = evaluator.cache.hits
    evaluated = evaluator.num_positions_evaluated
    second = evaluator.evaluate_one(request)
    assert second is first
    assert not first.policy.flags.writeable and not first.white_ownership.flags.writeable
    assert evaluator.cache.hits == hits + 1
    assert evaluator.num_positions_evaluated == evaluated
    # Other settings are other cache entries.
    other = evaluator.evaluate_one(NNRequest(**{**request.__dict__, "policy_optimism": 0.5}))
    assert other is not first


def test_ownership_left_out_when_not_wanted_and_such_entries_miss_for_requests_that_want_it(evaluator):
    key = 0x5EED0FF1CE
    without = make_request(9, 9, seed=23, cache_key=key, include_ownership=False)
    with_ownership = NNRequest(**{**without.__dict__, "include_ownership": True})
    lean = evaluator.evaluate_one(without)
    assert lean.white_ownership is None
    assert evaluator.evaluate_one(without) is lean                     # served from the cache
    evaluated = evaluator.num_positions_evaluated
    full = evaluator.evaluate_one(with_ownership)                       # the cached entry lacks it
    assert evaluator.num_positions_evaluated == evaluated + 1
    assert full.white_ownership is not None and full.white_ownership.shape == (81,)
    np.testing.assert_array_equal(full.policy, lean.policy)
    assert full.white_win == lean.white_win
    assert evaluator.evaluate_one(without) is full                      # a richer entry serves both
    # In one batch with requests that want it, a lean output does not keep the batch's map alive.
    mixed = evaluator.evaluate_uncached([make_request(9, 9, seed=24), make_request(9, 9, seed=25, include_ownership=False)])
    assert mixed[0].white_ownership.base is None and mixed[1].white_ownership is None


def test_uncached_requests_are_recomputed(evaluator):
    request = make_request(9, 9, seed=22)
    assert evaluator.evaluate_one(request) is not evaluator.evaluate_one(request)


def test_cache_table_replacement():
    cache = NNCache(size_power_of_two=2)
    assert cache.capacity == 4
    cache.put(1, "a")
    cache.put(1 + 4, "b")  # same slot: replaces
    assert cache.get(1) is None and cache.get(5) == "b"
    cache.put((1 << 100) + 2, "wide", extra_key=("x", 1))  # 128-bit hashes work
    assert cache.get((1 << 100) + 2, extra_key=("x", 1)) == "wide"
    assert cache.get((1 << 100) + 2, extra_key=("x", 2)) is None
    assert len(cache) == 2
    cache.clear()
    assert len(cache) == 0
    with pytest.raises(ValueError):
        NNCache(size_power_of_two=-1)


def test_cache_is_thread_safe():
    cache = NNCache(size_power_of_two=8)

    def worker(offset):
        for i in range(2000):
            cache.put(offset + i, offset + i)
            value = cache.get(offset + i)
            assert value is None or value == offset + i

    run_in_threads(lambda k: worker(k * 10000), 4)
    assert len(cache) <= 256


# ---------------------------------------------------------------------------------------------
# Threaded batching front end


def test_batching_evaluator_from_many_threads(evaluator):
    requests = [make_request(9, 9, seed=100 + i) for i in range(24)]
    expected = evaluator.evaluate_uncached(requests)
    results = [None] * len(requests)
    batches_before = evaluator.num_batches
    with BatchingEvaluator(evaluator, max_batch_size=8, max_wait_ms=20) as front:
        def worker(k):
            for i in range(k, len(requests), 4):
                results[i] = front.evaluate(requests[i])

        run_in_threads(worker, 4)
    for got, want in zip(results, expected):
        assert_same_output(got, want)
    assert evaluator.num_batches - batches_before < len(requests)


def test_batching_evaluator_reports_errors(evaluator):
    bad = make_request(9, 9, seed=1)
    bad.legal_mask = np.ones(5, bool)
    with BatchingEvaluator(evaluator) as front:
        future = front.submit(bad)
        with pytest.raises(ValueError, match="legal mask"):
            future.result(timeout=30)
        assert front.evaluate(make_request(9, 9, seed=2)).board_x == 9  # still serving
    with pytest.raises(RuntimeError, match="closed"):
        front.submit(bad)


# ---------------------------------------------------------------------------------------------
# Postprocessing


def test_policy_respects_legal_mask(evaluator):
    request = make_request(13, 13, seed=31)
    request.legal_mask[-1] = False  # pass illegal
    out = evaluator.evaluate_one(request)
    legal = request.legal_mask[:-1]
    assert np.all(out.policy[~legal] == -1.0)
    assert np.all(out.policy[legal] >= 0)
    assert out.policy_pass == -1.0
    assert out.policy[legal].sum() == pytest.approx(1.0, abs=1e-5)


def test_short_legal_mask_means_pass_is_legal(evaluator):
    request = make_request(9, 9, seed=32)
    request.legal_mask = request.legal_mask[:-1].copy()
    out = evaluator.evaluate_one(request)
    assert out.policy_pass > 0
    assert out.policy[out.policy >= 0].sum() + out.policy_pass == pytest.approx(1.0, abs=1e-5)


def test_one_batch_may_mix_masks_with_and_without_the_pass_entry(evaluator):
    short, full = make_request(9, 9, seed=33), make_request(9, 9, seed=34)
    short.legal_mask = short.legal_mask[:-1].copy()
    full.legal_mask[-1] = False
    short_out, full_out = evaluator.evaluate_uncached([short, full])
    assert short_out.policy_pass > 0 and full_out.policy_pass == -1.0
    assert full_out.policy[full_out.policy >= 0].sum() == pytest.approx(1.0, abs=1e-5)


def test_policy_temperature_flattens():
    logits = np.array([[2.0, 0.0, -1.0]], np.float32)
    ones = np.ones((1, 3), bool)
    sharp, _ = policy_probabilities(logits, np.array([0.0], np.float32), ones, np.array([True]), np.array([1.0]))
    flat, _ = policy_probabilities(logits, np.array([0.0], np.float32), ones, np.array([True]), np.array([4.0]))
    assert flat[0, 0] < sharp[0, 0] and flat[0, 2] > sharp[0, 2]
    expected = np.exp([2.0, 0.0, -1.0, 0.0]) / np.exp([2.0, 0.0, -1.0, 0.0]).sum()
    np.testing.assert_allclose(sharp[0], expected[:3], rtol=1e-6)


def test_passing_hacks_cap_pass():
    logits = np.array([[0.0, 0.0]], np.float32)
    legal = np.ones((1, 2), bool)
    args = (logits, np.array([20.0], np.float32), legal, np.array([True]), np.array([1.0]))
    _, plain = policy_probabilities(*args)
    _, capped = policy_probabilities(*args, passing_hacks=np.array([True]))
    assert plain[0] > 0.99
    assert capped[0] == pytest.approx(19.0 * 2 / (19.0 * 2 + 2), rel=1e-5)  # pass <= 19x the other moves


def test_value_perspective_and_no_result():
    logits = np.array([[1.0, -1.0, 0.5], [1.0, -1.0, 0.5]])
    score = np.array([[0.2, 0.1, 0.3, -0.5, 0.0, 0.0]] * 2)
    white = np.array([True, False])
    params = PostProcessParams()
    out = value_outputs(logits, score, white, np.array([False, False]), 15, params)
    assert out.no_result.tolist() == [0.0, 0.0]
    assert out.white_win[0] == pytest.approx(out.white_loss[1])
    assert out.white_win[0] + out.white_loss[0] == pytest.approx(1.0)
    assert out.white_lead[0] == pytest.approx(0.3 * 20, rel=1e-6) and out.white_lead[1] == pytest.approx(-0.3 * 20, rel=1e-6)
    allowed = value_outputs(logits, score, white, np.array([True, True]), 15, params)
    assert allowed.no_result[0] > 0.1
    # Scores are conditional on a result: scaled down by the no-result probability.
    assert allowed.white_lead[0] == pytest.approx(out.white_lead[0] * (1 - allowed.no_result[0]), rel=1e-5)
    old = value_outputs(logits, score[:, :4], white, np.array([False, False]), 8, params)
    assert old.var_time_left.tolist() == [-1.0, -1.0] and old.shortterm_score_error.tolist() == [-1.0, -1.0]


def test_no_result_rule_from_global_features():
    g = np.zeros(19, np.float32)
    assert allow_no_result_from_globals(g)  # simple ko
    g[6] = 1.0
    assert not allow_no_result_from_globals(g)  # positional/situational ko, area scoring
    g[9] = 1.0
    assert allow_no_result_from_globals(g)  # territory scoring


def test_fixed_and_random_default_symmetry():
    fixed = NNEvaluator.from_file(require(MODEL), device="cpu", default_symmetry=5, cache_size_power_of_two=None)
    request = make_request(9, 9, seed=40, symmetry=None)
    assert fixed.evaluate_one(request).symmetry == 5
    rand = NNEvaluator.from_file(require(MODEL), device="cpu", seed=3, cache_size_power_of_two=None)
    seen = {o.symmetry for o in rand.evaluate([request] * 40)}
    assert len(seen) > 4 and seen <= set(range(8))


def test_invalid_requests(evaluator):
    with pytest.raises(ValueError, match="symmetry"):
        evaluator.evaluate_one(make_request(9, 9, seed=1, symmetry=8))
    with pytest.raises(ValueError, match="does not fit"):
        evaluator.evaluate_one(make_request(9, 9, seed=1, board_x=10))
    with pytest.raises(ValueError, match="precision"):
        NNEvaluator.from_file(require(MODEL), device="cpu", precision="int8")


def test_set_cpu_threads():
    before = torch.get_num_threads()
    try:
        set_cpu_threads(1, num_interop_threads=1)
        assert torch.get_num_threads() == 1
    finally:
        set_cpu_threads(before)


@pytest.mark.parametrize("items, parts, expected", [
    ([1, 2, 3, 4, 5], 2, [[1, 2, 3], [4, 5]]),
    ([1, 2], 4, [[1], [2]]),
    ([1, 2, 3], 1, [[1, 2, 3]]),
    ([1, 2, 3, 4, 5, 6], 3, [[1, 2], [3, 4], [5, 6]]),
])
def test_batches_split_into_even_consecutive_pieces(items, parts, expected):
    from katacli.nn.evaluator import _split_evenly

    assert _split_evenly(items, parts) == expected


def test_a_batch_split_over_threads_gives_the_whole_batchs_results():
    whole = NNEvaluator.from_file(require(MODEL), device="cpu", cache_size_power_of_two=None)
    split = NNEvaluator.from_file(require(MODEL), device="cpu", cache_size_power_of_two=None)
    split.set_parallel_threads(3)
    split.min_piece_flops = 0   # split however little work a piece holds (this net is tiny)
    batch = [make_request(9, 9, seed=40 + i) for i in range(7)] + [make_request(13, 13, seed=50)]
    for a, b in zip(whole.evaluate_uncached(batch), split.evaluate_uncached(batch)):
        assert_same_output(a, b)
    # One logical batch per shape, however many pieces ran.
    assert split.num_batches == whole.num_batches == 2
    assert split.num_positions_evaluated == whole.num_positions_evaluated == 8


def test_a_batch_is_split_only_into_pieces_worth_a_thread():
    evaluator = NNEvaluator.from_file(require(MODEL), device="cpu", cache_size_power_of_two=None)
    assert evaluator.piece_count(64, 361) == 1                      # one thread: never split
    evaluator.set_parallel_threads(2)
    per_position = evaluator.flops_per_point * 361
    assert per_position > 0
    enough = int(evaluator.min_piece_flops // per_position) + 1     # positions that make one piece worth it
    assert evaluator.piece_count(enough - 1, 361) == 1
    assert evaluator.piece_count(2 * enough, 361) == 2
    assert evaluator.piece_count(100 * enough, 361) == 2             # never more than parallel_threads
    evaluator.min_piece_flops = 0
    assert evaluator.piece_count(2, 361) == 2


def test_a_big_batchs_postprocessing_split_over_threads_gives_the_same_answers(evaluator, monkeypatch):
    from katacli.nn import evaluator as evaluator_module

    batch = [make_request(19, 19, seed=300 + i, include_ownership=bool(i % 3)) for i in range(200)]
    monkeypatch.setattr(evaluator_module, "POSTPROCESS_MAX_THREADS", 1)
    one = evaluator.evaluate_uncached(batch)
    monkeypatch.setattr(evaluator_module, "POSTPROCESS_MAX_THREADS", 4)
    monkeypatch.setattr(evaluator_module, "usable_cpu_count", lambda: 4)
    assert evaluator_module.postprocess_threads(len(batch)) == 3
    split = evaluator.evaluate_uncached(batch)
    fields = ("white_win", "white_loss", "no_result", "white_lead", "white_score_mean", "white_score_mean_sq",
              "var_time_left", "shortterm_winloss_error", "shortterm_score_error", "policy_pass", "symmetry")
    for a, b in zip(one, split):
        assert [getattr(a, f) for f in fields] == [getattr(b, f) for f in fields]
        assert np.array_equal(a.policy, b.policy)
        assert (a.white_ownership is None) == (b.white_ownership is None)
        if a.white_ownership is not None:
            assert np.array_equal(a.white_ownership, b.white_ownership)
    assert sum(o.white_ownership is not None for o in one) == sum(1 for i in range(200) if i % 3)
