"""A deterministic stand-in for a network evaluator (tests of the search and of the protocols).

:class:`MaterialEvaluator` answers any batch of NNRequests without a model: the
policy is uniform over legal board points (pass gets ``pass_weight`` of a point's
share), and the value comes from the material balance seen in the V7 features --
stones of the player to move minus the opponent's, plus that player's komi --
squashed into a win probability. Captures therefore look good and losing stones
bad, which is enough to check that the search finds obvious tactics.
"""
from __future__ import annotations

import math
import threading
from typing import Sequence

import numpy as np

from katacli.nn.postprocess import NNOutput

# V7 feature layout: channels 1/2 are the mover's / opponent's stones, global 5 is self komi / 20.
PLA_STONE_CHANNEL = 1
OPP_STONE_CHANNEL = 2
SELF_KOMI_GLOBAL = 5
KOMI_SCALE = 20.0


class MaterialEvaluator:
    """Evaluates NNRequests from material balance; thread-safe, counts what it does."""

    def __init__(self, score_scale: float = 2.0, pass_weight: float = 0.1, score_stdev: float = 5.0,
                 shortterm_errors: bool = False):
        self.score_scale = score_scale        # points of lead per logistic unit
        self.pass_weight = pass_weight
        self.score_stdev = score_stdev
        self.shortterm_errors = shortterm_errors
        self.num_positions_evaluated = 0
        self.num_batches = 0
        self._lock = threading.Lock()

    def evaluate(self, requests: Sequence) -> list:
        with self._lock:
            self.num_positions_evaluated += len(requests)
            self.num_batches += 1
        return [self._one(r) for r in requests]

    def evaluate_many(self, requests: Sequence) -> list:
        return self.evaluate(requests)

    # The parts of NNEvaluator that BatchingEvaluator uses: no cache here.
    def evaluate_uncached(self, requests: Sequence) -> list:
        return self.evaluate(requests)

    def lookup_cache(self, request):
        return None

    def store_cache(self, request, result) -> None:
        pass

    def _one(self, request) -> NNOutput:
        area = request.board_x * request.board_y
        spatial = np.asarray(request.spatial)[:, :request.board_y, :request.board_x]
        lead_for_mover = (float(spatial[PLA_STONE_CHANNEL].sum()) - float(spatial[OPP_STONE_CHANNEL].sum())
                          + float(request.global_features[SELF_KOMI_GLOBAL]) * KOMI_SCALE)
        white_lead = lead_for_mover if request.white_to_move else -lead_for_mover
        white_win = 1.0 / (1.0 + math.exp(-white_lead / self.score_scale))
        legal = np.asarray(request.legal_mask, dtype=bool)
        board_legal = legal[:area]
        pass_legal = bool(legal[area]) if legal.shape[0] > area else True
        weights = board_legal.astype(np.float64)
        pass_w = self.pass_weight if pass_legal else 0.0
        total = weights.sum() + pass_w
        policy = np.where(board_legal, weights / total, -1.0).astype(np.float32)
        ownership = np.zeros(area, np.float32)
        return NNOutput(
            white_win=white_win, white_loss=1.0 - white_win, no_result=0.0, white_lead=white_lead,
            white_score_mean=white_lead, white_score_mean_sq=white_lead * white_lead + self.score_stdev ** 2,
            var_time_left=-1.0, shortterm_winloss_error=0.1 if self.shortterm_errors else -1.0,
            shortterm_score_error=1.0 if self.shortterm_errors else -1.0, policy=policy,
            policy_pass=float(pass_w / total) if pass_legal else -1.0, white_ownership=ownership,
            board_x=request.board_x, board_y=request.board_y, symmetry=0,
        )


def row_by_row_tiny_net(symmetry=0):
    """The bundled tiny net as an NNEvaluator that runs one row per forward pass: its answers do not depend
    on what shares a batch, so batched and lone searches can be compared bit for bit. ``symmetry`` None:
    random orientations (which search trees then draw themselves)."""
    from katacli.nn.evaluator import NNEvaluator
    from support.paths import BUNDLED_TINY_MODEL

    class RowByRowEvaluator(NNEvaluator):
        def _forward(self, spatial, global_features, meta, mask_full):
            rows = [super(RowByRowEvaluator, self)._forward(
                spatial[i:i + 1], global_features[i:i + 1], None if meta is None else meta[i:i + 1], mask_full)
                for i in range(spatial.shape[0])]
            return [np.concatenate(parts) for parts in zip(*rows)]

    return RowByRowEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", seed=3, default_symmetry=symmetry,
                                       cache_size_power_of_two=None)


def launching_row_by_row_tiny_net(symmetry=0, delay: float = 0.002):
    """row_by_row_tiny_net whose network launches its calls as a CUDA net with graphs does
    (``launches_async``): launch copies the inputs and returns; waiting runs the rows after ``delay``.
    The answers are row_by_row_tiny_net's, whatever shares a call or how many calls are in flight."""
    import time

    import threading

    evaluator = row_by_row_tiny_net(symmetry)
    plain = evaluator.runner
    lock = threading.Lock()
    in_flight = [0]
    evaluator.most_calls_in_flight = 0   # the most launched calls not yet waited for at once

    class Call:
        def __init__(self, args):
            self.args, self.ready_at, self.outputs = args, time.monotonic() + delay, None
            with lock:
                in_flight[0] += 1
                evaluator.most_calls_in_flight = max(evaluator.most_calls_in_flight, in_flight[0])

        def done(self):
            return time.monotonic() >= self.ready_at

        def wait(self):
            time.sleep(max(0.0, self.ready_at - time.monotonic()))
            if self.outputs is None:
                self.outputs = evaluator._forward(*self.args)
                with lock:
                    in_flight[0] -= 1
            return self.outputs

        def settle(self):
            self.wait()

    class LaunchingRunner:
        is_cuda = cuda_graphs = True   # what NNEvaluator.launches_async asks

        def __call__(self, *args):
            return plain(*args)

        def __getattr__(self, name):
            return getattr(plain, name)

        def launch(self, spatial, global_features, meta, mask_full):
            return Call((spatial.copy(), global_features.copy(), None if meta is None else meta.copy(), mask_full))

    evaluator.runner = LaunchingRunner()
    return evaluator
