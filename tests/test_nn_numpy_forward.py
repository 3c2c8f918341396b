"""The numpy forward pass (katacli.nn.numpy_forward) against the torch model and KataGo's own numbers.

``kata analysis`` answers its first queries with it while torch is imported, so its outputs must be the
torch evaluator's: the raw outputs of every shared net it supports are compared with the fused torch
model's (whole boards and boards smaller than the input, where masking matters), and the numpy
evaluator replays KataGo 1.17.2's kata-raw-nn reference cases at the golden test's tolerances.
"""
from __future__ import annotations

import subprocess
import sys
from functools import lru_cache

import numpy as np
import pytest

from katacli.nn.model_file_reader import read_model_file
from katacli.nn.numpy_evaluator import NumpyEvaluator, numpy_worthwhile, use_one_blas_thread
from katacli.nn.numpy_forward import NumpyNet, supports

from support.paths import G170_B6, HUMAN_TEST, SHARED_NETS, TEST_B4, TEST_TRANSFORMER, model_path

pytestmark = pytest.mark.needs_shared
torch = pytest.importorskip("torch")

from katacli.nn.torch_model import KataGoModel  # noqa: E402

# Raw outputs (logits, pre-activation scores) of float32 nets computed in another order.
RAW_TOLERANCE = 2e-4
BATCH = 3
INPUT_LEN = 19
SMALL_BOARD = (11, 13)  # x, y of a board inside the 19x19 input: off-board points are masked
SUPPORTED_NETS = [name for name in SHARED_NETS if name != TEST_TRANSFORMER] + [HUMAN_TEST]


@lru_cache(maxsize=None)
def description(name: str):
    return read_model_file(model_path(name))


def random_inputs(desc, rng, board_x: int, board_y: int):
    spatial = (rng.random((BATCH, desc.num_input_channels, INPUT_LEN, INPUT_LEN)) < 0.3).astype(np.float32)
    on_board = np.zeros((INPUT_LEN, INPUT_LEN), np.float32)
    on_board[:board_y, :board_x] = 1.0
    spatial *= on_board  # every feature is zero off the board, channel 0 is the board itself
    spatial[:, 0] = on_board
    global_features = rng.standard_normal((BATCH, desc.num_input_global_channels)).astype(np.float32)
    meta = None
    if desc.trunk.metadata_encoder is not None:
        meta = rng.standard_normal((BATCH, desc.num_input_meta_channels)).astype(np.float32)
    return spatial, global_features, meta


@pytest.mark.parametrize("name", SUPPORTED_NETS)
@pytest.mark.parametrize("board", [(INPUT_LEN, INPUT_LEN), SMALL_BOARD], ids=["whole", "masked"])
def test_numpy_forward_equals_torch_model(name, board):
    desc = description(name)
    assert supports(desc)
    spatial, global_features, meta = random_inputs(desc, np.random.default_rng(len(name)), *board)
    mask_full = board == (INPUT_LEN, INPUT_LEN)
    model = KataGoModel.from_description(desc).eval().fused()
    with torch.inference_mode():
        expected = model(torch.from_numpy(spatial), torch.from_numpy(global_features),
                         None if meta is None else torch.from_numpy(meta), mask_full=mask_full)
    got = NumpyNet(desc)(spatial, global_features, meta, mask_full)
    for field, ours, theirs in zip(expected._fields, got, expected):
        assert ours.dtype == np.float32 and ours.shape == tuple(theirs.shape), field
        np.testing.assert_allclose(ours, theirs.numpy(), rtol=RAW_TOLERANCE, atol=RAW_TOLERANCE, err_msg=field)


def test_transformer_net_is_left_to_torch():
    desc = description(TEST_TRANSFORMER)
    assert not supports(desc) and not numpy_worthwhile(desc)
    with pytest.raises(ValueError, match="needs torch"):
        NumpyNet(desc)


def test_small_nets_are_worth_running_in_numpy():
    assert numpy_worthwhile(description(G170_B6)) and numpy_worthwhile(description(TEST_B4))


def test_numpy_evaluator_answers_without_importing_torch():
    script = (
        "import sys\n"
        "import numpy as np\n"
        "from katacli.nn.model_file_reader import read_model_file\n"
        "from katacli.nn.numpy_evaluator import NumpyEvaluator\n"
        "from katacli.nn.request import NNRequest\n"
        f"evaluator = NumpyEvaluator(read_model_file({str(model_path(TEST_B4))!r}))\n"
        "spatial = np.zeros((22, 9, 9), np.float32); spatial[0] = 1\n"
        "out = evaluator.evaluate_one(NNRequest(spatial, np.zeros(19, np.float32), np.ones(82, bool), board_x=9,"
        " board_y=9, white_to_move=False))\n"
        "assert abs(out.policy.sum() + out.policy_pass - 1) < 1e-5\n"
        "print('torch' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_one_blas_thread_can_be_chosen():
    assert use_one_blas_thread() in (True, False)  # False only where numpy's BLAS is not OpenBLAS
    if "openblas" in str(np.show_config(mode="dicts")).lower():
        assert use_one_blas_thread()


@lru_cache(maxsize=None)
def numpy_evaluator_for(model_file: str) -> NumpyEvaluator:
    return NumpyEvaluator(description(model_file))


def reference_cases():
    import test_reference_raw_nn

    return test_reference_raw_nn.CASES, test_reference_raw_nn.assert_case_matches


CASES, assert_case_matches = reference_cases()
NUMPY_CASES = [case for case in CASES if supports(description(case["model_file"]))]


def test_reference_cases_include_every_supported_net():
    assert {case["model_file"] for case in NUMPY_CASES} >= {G170_B6, TEST_B4}


@pytest.mark.parametrize("case", NUMPY_CASES, ids=[c["id"] for c in NUMPY_CASES])
def test_numpy_evaluator_matches_katago(case):
    assert_case_matches(case, numpy_evaluator_for(case["model_file"]))
