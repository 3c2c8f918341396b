"""The core's one-pass batch postprocessing (katacli/_core/nn_postprocess) against the numpy reference
(katacli.nn.postprocess): the same answers to float32 rounding (exp and the softmax sum's order)."""
import numpy as np
import pytest

from katacli._core.nn_postprocess import postprocess_rows
from katacli.nn.batch import VALUE_COLUMNS
from katacli.nn.description import PostProcessParams
from katacli.nn.postprocess import (
    mix_policy_optimism, policy_probabilities, postprocess_multipliers, value_outputs, white_ownership,
)
from katacli.nn.symmetry import apply_symmetries, gather_indices

# float32 softmax of a few hundred entries: exp and the order of the sum move the last bits only.
POLICY_RTOL = 1e-5
POLICY_ATOL = 1e-8
OWNERSHIP_ATOL = 2e-7
PARAMS = PostProcessParams(output_scale_multiplier=1.25, lead_multiplier=15.0)


def _inputs(rng, n, grid_h, grid_w, board_x, board_y, channels):
    area = board_x * board_y
    return dict(
        policy=(rng.normal(size=(n, channels, grid_h, grid_w)) * 3).astype(np.float32),
        policy_pass=rng.normal(size=(n, channels)).astype(np.float32),
        value=rng.normal(size=(n, 3)).astype(np.float32),
        score_value=(rng.normal(size=(n, 6)) * 2).astype(np.float32),
        ownership=rng.normal(size=(n, 1, grid_h, grid_w)).astype(np.float32),
        legal=rng.random((n, area + 1)) < 0.8, white=rng.random(n) < 0.5,
        optimism=np.where(rng.random(n) < 0.5, 0.0, 1.0).astype(np.float32),
        temperature=np.where(rng.random(n) < 0.5, 1.0, 1.3).astype(np.float32),
        hacks=rng.random(n) < 0.5, allow_no_result=rng.random(n) < 0.5, want=rng.random(n) < 0.5,
        symmetries=rng.integers(0, 8, n).astype(np.int64))


def _core(x, board_x, board_y, version, channels, params=PARAMS, **options):
    h, w = x["policy"].shape[2:]
    return postprocess_rows(
        x["policy"], x["policy_pass"], x["value"], x["score_value"], x["ownership"], x["legal"].view(np.uint8),
        x["white"].view(np.uint8), x["optimism"], x["temperature"], x["hacks"].view(np.uint8),
        x["allow_no_result"].view(np.uint8), x["want"].view(np.uint8), x["symmetries"], gather_indices(h, w, True),
        board_x, board_y, version, channels >= 2, postprocess_multipliers(params), **options)


def _numpy(x, board_x, board_y, version, channels, params=PARAMS):
    n, area = len(x["white"]), board_x * board_y
    policy = apply_symmetries(x["policy"], x["symmetries"], undo=True)[:, :, :board_y, :board_x].reshape(n, -1, area)
    logits, pass_logits = mix_policy_optimism(policy, x["policy_pass"], x["optimism"], channels)
    probs, pass_probs = policy_probabilities(logits, pass_logits, x["legal"][:, :area], x["legal"][:, area],
                                             x["temperature"], params.output_scale_multiplier, x["hacks"])
    outputs = value_outputs(x["value"], x["score_value"], x["white"], x["allow_no_result"], version, params)
    values = np.stack([getattr(outputs, name) for name in VALUE_COLUMNS], axis=1).astype(np.float64)
    own = apply_symmetries(x["ownership"], x["symmetries"], undo=True)[:, 0, :board_y, :board_x].reshape(n, area)
    return values, probs, pass_probs, white_ownership(own, x["white"], params.output_scale_multiplier)


@pytest.mark.parametrize("n, grid, board, version, channels", [
    (1, (19, 19), (19, 19), 8, 1), (16, (19, 19), (19, 19), 14, 2), (64, (19, 19), (19, 19), 11, 2),
    (8, (19, 19), (13, 9), 10, 2), (5, (13, 9), (9, 13), 9, 2), (6, (9, 9), (9, 9), 15, 4)])
def test_rows_match_the_numpy_reference(n, grid, board, version, channels):
    rng = np.random.default_rng(n * 100 + version)
    (h, w), (bx, by) = grid, board
    x = _inputs(rng, n, h, w, bx, by, channels)
    values, probs, own = _core(x, bx, by, version, channels)
    want_values, want_probs, want_pass, want_own = _numpy(x, bx, by, version, channels)
    area = bx * by
    np.testing.assert_array_equal(values, want_values)
    np.testing.assert_allclose(probs[:, :area], want_probs, rtol=POLICY_RTOL, atol=POLICY_ATOL)
    np.testing.assert_allclose(probs[:, area], want_pass, rtol=POLICY_RTOL, atol=POLICY_ATOL)
    assert ((probs == -1.0) == ~x["legal"]).all()
    np.testing.assert_allclose(own[x["want"]], want_own[x["want"]], atol=OWNERSHIP_ATOL, rtol=0)
    assert (own[~x["want"]] == 0).all()  # tanh only for the rows that keep ownership
    np.testing.assert_allclose(np.where(probs < 0, 0, probs).sum(axis=1), 1.0, rtol=1e-5)


def test_passing_hacks_cap_the_pass_prior():
    rng = np.random.default_rng(3)
    x = _inputs(rng, 2, 9, 9, 9, 9, 1)
    x["policy"][:] = -20.0
    x["policy_pass"][:] = 20.0
    x["legal"][:] = True
    x["hacks"][:] = [True, False]
    _, probs, _ = _core(x, 9, 9, 8, 1)
    assert probs[0, 81] == pytest.approx(19.0 / 20.0, rel=1e-5)  # at most 19x the other moves' sum
    assert probs[1, 81] > 0.999


def test_the_softmax_exp_keeps_float32_precision():
    """The core's own exp (vectorized, not libm's) over logits from the maximum to 100 below it."""
    rng = np.random.default_rng(5)
    x = _inputs(rng, 1, 19, 19, 19, 19, 1)
    x["legal"][:] = True
    x["hacks"][:] = False
    x["symmetries"][:] = 0
    x["temperature"][:] = 1.0
    logits = -np.linspace(0.0, 100.0, 361).astype(np.float32)
    x["policy"][0, 0] = logits.reshape(19, 19)
    x["policy_pass"][:] = -3.0
    params = PostProcessParams(output_scale_multiplier=1.0, lead_multiplier=15.0)
    _, probs, _ = _core(x, 19, 19, 15, 1, params=params)
    everything = np.concatenate([logits, [-3.0]]).astype(np.float64)
    # Each prior over the top one (logit 0, exp exactly 1) is its exp: the sum's rounding cancels out, the
    # exp's error (an ulp) and the two divisions' (half an ulp each) remain.
    ratio = probs[0].astype(np.float64) / probs[0, 0]
    normal = everything > -60.0   # priors that are not float32 denormals
    np.testing.assert_allclose(ratio[normal], np.exp(everything[normal]), rtol=2.5e-7, atol=0)
    assert (probs[0, ~normal] >= 0).all() and (probs[0, ~normal] < 1e-26).all()


def test_every_prior_rounding_to_zero_gives_uniform():
    rng = np.random.default_rng(4)
    x = _inputs(rng, 1, 9, 9, 9, 9, 1)
    x["legal"][:] = False
    x["legal"][0, [3, 5]] = True
    x["hacks"][:] = False
    x["policy"][0, 0, 0, 3] = x["policy"][0, 0, 0, 5] = -1e38  # exp(-inf - max) for both legal moves
    x["symmetries"][:] = 0
    x["temperature"][:] = 1e-3
    _, probs, _ = _core(x, 9, 9, 8, 1)
    assert probs[0, 3] == probs[0, 5] == 0.5


def test_errors_are_one_line():
    rng = np.random.default_rng(5)
    x = _inputs(rng, 2, 9, 9, 9, 9, 2)
    bad = dict(x, legal=x["legal"].copy())
    bad["legal"][1] = False
    with pytest.raises(ValueError, match="no legal move"):
        _core(bad, 9, 9, 8, 2)
    bad = dict(x, value=x["value"].copy())
    bad["value"][0, 0] = np.nan
    with pytest.raises(FloatingPointError, match="non-finite"):
        _core(bad, 9, 9, 8, 2)
    for bad_logit in (np.nan, np.inf):   # a broken net's policy: refused, never a silent answer
        bad = dict(x, policy=x["policy"].copy(), legal=x["legal"].copy())
        bad["legal"][0, 4] = True
        bad["policy"][0, :, 0, 4] = bad_logit
        with pytest.raises(FloatingPointError, match="non-finite"):
            _core(bad, 9, 9, 8, 2)
    with pytest.raises(ValueError, match="does not fit"):
        _core(x, 10, 9, 8, 2)
    with pytest.raises(ValueError, match="optimistic policy channel"):
        _core(dict(x, policy=x["policy"][:, :1].copy()), 9, 9, 8, 2)


@pytest.mark.parametrize("n, threads", [(200, 2), (203, 3), (64, 8), (3, 8), (1, 4), (0, 2)])
def test_rows_split_over_threads_give_the_same_answers_bit_for_bit(n, threads):
    rng = np.random.default_rng(n + threads)
    x = _inputs(rng, n, 19, 19, 19, 19, 2)
    one = _core(x, 19, 19, 14, 2, cache_scalars=True)
    split = _core(x, 19, 19, 14, 2, cache_scalars=True, threads=threads)
    for a, b in zip(one, split):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("threads", [1, 4])
def test_the_first_failing_row_is_reported_whatever_the_split(threads):
    rng = np.random.default_rng(9)
    x = _inputs(rng, 100, 9, 9, 9, 9, 2)
    x["legal"][[70, 90]] = False   # rows in the last ranges fail; the earliest is named
    x["value"][95, 0] = np.nan
    with pytest.raises(ValueError, match="no legal move.*row 70"):
        _core(x, 9, 9, 8, 2, threads=threads)


def test_batch_symmetries_are_randrange_draws():
    """A batch's random symmetries are the draws per-request evaluation makes (randrange), in order."""
    import random
    import threading
    from types import SimpleNamespace

    from katacli.nn.evaluator import NNEvaluator

    fake = SimpleNamespace(default_symmetry=None, _rng=random.Random(7), _rng_lock=threading.Lock())
    drawn = NNEvaluator._batch_symmetries(fake, 500, None)
    expected = random.Random(7)
    assert drawn.tolist() == [expected.randrange(8) for _ in range(500)]
    assert fake._rng.random() == expected.random()  # no draw more or less


def _core_cached(x, board_x, board_y, version, channels, allow_from_globals=None):
    """_core with the NN cache's scalars, allow_no_result read from global features when they are given."""
    h, w = x["policy"].shape[2:]
    allow = None if allow_from_globals is not None else x["allow_no_result"].view(np.uint8)
    return postprocess_rows(
        x["policy"], x["policy_pass"], x["value"], x["score_value"], x["ownership"], x["legal"], x["white"],
        x["optimism"], x["temperature"], x["hacks"], allow, x["want"], x["symmetries"], gather_indices(h, w, True),
        board_x, board_y, version, channels >= 2, postprocess_multipliers(PARAMS),
        global_features=allow_from_globals, cache_scalars=True)


def test_cache_scalars_hold_each_rows_values_pass_symmetry_optimism_and_ownership_flag():
    from katacli.nn.batch import CACHED_COLUMN, NUM_CACHED_SCALAR_COLUMNS

    rng = np.random.default_rng(11)
    x = _inputs(rng, 12, 9, 9, 9, 9, 2)
    values, probs, own, scalars = _core_cached(x, 9, 9, 14, 2)
    assert scalars.shape == (12, NUM_CACHED_SCALAR_COLUMNS)
    np.testing.assert_array_equal(scalars[:, :len(VALUE_COLUMNS)], values)
    np.testing.assert_array_equal(scalars[:, CACHED_COLUMN["policy_pass"]], probs[:, 81].astype(np.float64))
    np.testing.assert_array_equal(scalars[:, CACHED_COLUMN["symmetry"]], x["symmetries"])
    np.testing.assert_array_equal(scalars[:, CACHED_COLUMN["policy_optimism"]], x["optimism"].astype(np.float64))
    np.testing.assert_array_equal(scalars[:, CACHED_COLUMN["has_ownership"]], x["want"])
    x["want"][:] = False   # no row keeps ownership: none is made, and no row says it has one
    _, _, own, scalars = _core_cached(x, 9, 9, 14, 2)
    assert own is None and not scalars[:, CACHED_COLUMN["has_ownership"]].any()


def test_allow_no_result_read_from_global_features_as_katago_reads_it():
    from katacli.nn.postprocess import GLOBAL_KO_RULE_NOT_SIMPLE, GLOBAL_TERRITORY_SCORING, allow_no_result_from_globals

    rng = np.random.default_rng(12)
    x = _inputs(rng, 40, 9, 9, 9, 9, 2)
    x["value"][:, 2] = 3.0   # a no-result logit that shows whether it was allowed
    globals_ = np.zeros((40, 19), np.float32)
    globals_[:, GLOBAL_KO_RULE_NOT_SIMPLE] = rng.random(40) < 0.5
    globals_[:, GLOBAL_TERRITORY_SCORING] = rng.random(40) < 0.5
    from_globals = _core_cached(x, 9, 9, 14, 2, allow_from_globals=globals_)
    x["allow_no_result"] = np.array([allow_no_result_from_globals(g) for g in globals_])
    explicit = _core_cached(x, 9, 9, 14, 2)
    np.testing.assert_array_equal(from_globals[0], explicit[0])
    assert (explicit[0][:, 2] > 0).any() and (explicit[0][:, 2] == 0).any()   # both kinds of row were there


@pytest.mark.parametrize("name, bad", [
    ("policy", lambda a: a.astype(np.float64)), ("legal", lambda a: a.astype(np.int32)),
    ("symmetries", lambda a: a.astype(np.int32)), ("value", lambda a: np.asfortranarray(a)),
    ("temperature", lambda a: a[:, None])])
def test_arrays_of_another_type_or_layout_are_refused_by_name(name, bad):
    rng = np.random.default_rng(13)
    x = _inputs(rng, 3, 9, 9, 9, 9, 2)
    x[name] = bad(x[name])
    with pytest.raises(ValueError):
        _core_cached(x, 9, 9, 14, 2)


def test_postprocess_arrays_converts_what_the_c_loop_does_not_take_as_it_is():
    """The evaluator hands arrays over as they are and converts only when the C loop refuses them: any
    type or layout gives the answers of the converted arrays."""
    from katacli.nn.batch import RowSettings
    from katacli.nn.evaluator import NNEvaluator
    from katacli.nn.torch_model import load_model
    from pathlib import Path
    import katacli

    evaluator = NNEvaluator(load_model(Path(katacli.__file__).parent / "selfcheck" / "data" / "tiny-b2c16.bin.gz"),
                            device="cpu")
    rng = np.random.default_rng(14)
    x = _inputs(rng, 4, 9, 9, 9, 9, evaluator.num_policy_channels)
    raw = [x["policy"], x["policy_pass"], x["value"], x["score_value"], x["ownership"]]
    settings = RowSettings(x["white"], x["optimism"].astype(np.float64), x["temperature"], x["hacks"],
                           x["allow_no_result"], x["want"])
    expected = evaluator.postprocess_arrays(raw, x["legal"], 9, 9, x["symmetries"], settings)
    # float64 outputs, a padded grid cropped (not contiguous), int32 symmetries, lists of flags
    wide = np.zeros((4, raw[0].shape[1], 9, 12), np.float32)
    wide[:, :, :, :9] = raw[0]
    odd_raw = [wide[:, :, :, :9], raw[1].astype(np.float64), raw[2], raw[3], raw[4]]
    odd_settings = RowSettings(x["white"].tolist(), x["optimism"], x["temperature"].astype(np.float64),
                               x["hacks"].astype(np.uint8), x["allow_no_result"].tolist(), x["want"])
    got = evaluator.postprocess_arrays(odd_raw, x["legal"].astype(np.int8), 9, 9, x["symmetries"].astype(np.int32),
                                       odd_settings)
    for field in ("values", "policy", "policy_pass", "ownership", "cache_scalars"):
        np.testing.assert_array_equal(getattr(got, field), getattr(expected, field))
    assert got.symmetry.dtype == np.int64 and got.ownership_rows.dtype == np.bool_


def test_postprocess_threads_follow_the_rows_and_the_cores(monkeypatch):
    from katacli.nn import evaluator

    monkeypatch.setattr(evaluator, "usable_cpu_count", lambda: 16)
    rows = evaluator.POSTPROCESS_ROWS_PER_THREAD
    assert [evaluator.postprocess_threads(n) for n in (1, rows - 1, rows, 2 * rows, 100 * rows)] == [
        1, 1, 1, 2, evaluator.POSTPROCESS_MAX_THREADS]
    monkeypatch.setattr(evaluator, "usable_cpu_count", lambda: 1)
    assert evaluator.postprocess_threads(100 * rows) == 1
