"""TorchScript traces (katacli.nn.traced) compute what the eager network computes, for every shared net."""
from __future__ import annotations

import logging

import numpy as np
import pytest
import torch

from katacli.nn.evaluator import NNEvaluator, NNRequest
from katacli.nn.torch_model import load_model
from katacli.nn.traced import TracedForward

from support.paths import SHARED_NETS as NETS
from support.paths import BUNDLED_TINY_MODEL
from support.paths import model_path as need


def inputs(batch: int, height: int, width: int, board: tuple[int, int], seed: int):
    """Random stones on a board of ``board`` (x, y) in the top-left corner of a height x width input."""
    gen = torch.Generator().manual_seed(seed)
    spatial = torch.zeros(batch, 22, height, width)
    bx, by = board
    spatial[:, 0, :by, :bx] = 1.0
    stones = torch.rand(batch, by, bx, generator=gen)
    spatial[:, 1, :by, :bx] = (stones < 0.2).float()
    spatial[:, 2, :by, :bx] = (stones > 0.8).float()
    global_features = torch.zeros(batch, 19)
    global_features[:, 5] = torch.rand(batch, generator=gen) - 0.5
    return spatial, global_features


@pytest.mark.parametrize("name", NETS)
def test_trace_matches_eager_across_batch_sizes_and_padding(name):
    net = load_model(need(name)).fused().eval()
    traced = TracedForward(net)
    cases = [(9, 9, (9, 9), True), (13, 13, (9, 11), False), (19, 19, (19, 19), True)]
    with torch.inference_mode():
        for height, width, board, mask_full in cases:
            for batch in (1, 3, 8):  # the trace is recorded at one batch size and must serve all
                spatial, global_features = inputs(batch, height, width, board, seed=batch * 7 + height)
                want = net(spatial, global_features, None, mask_full=mask_full)
                got = traced(spatial, global_features, None, mask_full)
                assert len(got) == len(want)
                for g, w in zip(got, want):
                    torch.testing.assert_close(g, w, atol=2e-5, rtol=1e-5)
    assert not traced.failed
    assert len(traced._traces) == len(cases)  # one trace per input shape, reused across batch sizes


def test_evaluator_traces_on_cpu_and_can_be_told_not_to():
    path = need("test-b4c32.bin.gz")
    traced = NNEvaluator.from_file(path, device="cpu", cache_size_power_of_two=None)
    eager = NNEvaluator.from_file(path, device="cpu", cache_size_power_of_two=None, trace=False)
    assert isinstance(traced.runner._traced, TracedForward) and eager.runner._traced is None
    rng = np.random.default_rng(3)
    spatial = np.zeros((22, 9, 9), np.float32)
    spatial[0] = 1
    spatial[1] = rng.random((9, 9)) < 0.2
    request = NNRequest(spatial, np.zeros(19, np.float32), np.ones(82, bool), 9, 9, white_to_move=False, symmetry=3)
    a, b = traced.evaluate_one(request), eager.evaluate_one(request)
    np.testing.assert_allclose(a.policy, b.policy, atol=1e-6)
    assert a.white_win == pytest.approx(b.white_win, abs=1e-6)


def test_a_net_that_cannot_be_traced_runs_eagerly(caplog):
    class Untraceable(torch.nn.Module):
        def forward(self, spatial, global_features, meta=None, mask_full=None):
            # The batch size becomes a constant in a trace: the check on another batch size must catch it.
            return [spatial.reshape(int(spatial.shape[0]), -1).sum(1) * float(spatial.shape[0])]

    forward = TracedForward(Untraceable())
    spatial, global_features = inputs(2, 9, 9, (9, 9), seed=1)
    with caplog.at_level(logging.WARNING, logger="katacli.nn"):
        out = forward(spatial, global_features, None, True)
    torch.testing.assert_close(out[0], spatial.reshape(2, -1).sum(1) * 2.0)
    assert forward.failed and "running it eagerly" in caplog.text


def test_warm_up_builds_the_trace_without_counting_evaluations():
    tiny = BUNDLED_TINY_MODEL
    evaluator = NNEvaluator.from_file(tiny, device="cpu")
    assert isinstance(evaluator.runner._traced, TracedForward) and not evaluator.runner._traced._traces
    evaluator.warm_up(9, 7)
    shapes = {key[:3] for key in evaluator.runner._traced._traces}
    assert (22, 7, 9) in shapes  # the 9x7 trace now exists; the first real 9x7 evaluation reuses it
    assert evaluator.num_positions_evaluated == 0 and evaluator.num_batches == 0
