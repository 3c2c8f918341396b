"""A network stand-in with a GPU's timing, to see on a CPU whether self-play fills GPU batches.

:class:`SimulatedGpuEvaluator` answers batches as :class:`~katacli.nn.evaluator.NNEvaluator`
does for :class:`~katacli.nn.batching.BatchingEvaluator` (``evaluate_uncached``, the cache
calls, the counters), but instead of running a network it sleeps for what a GPU call would
take -- a fixed launch latency plus a cost per position -- with the GIL released, as a CUDA
call is. The Python around it is what the real evaluator's is: the batch's inputs are
stacked, outputs are postprocessed vectorised and one ``NNOutput`` is made per position, and
requests of different board sizes run as separate calls, as NNEvaluator runs them.

The answers are cheap but game-like, so games last as real ones do: the policy is uniform
over legal points (pass gets a small share) and the value follows the material balance
seen in the V7 features (stones of the side to move minus the opponent's, plus its komi).
"""
from __future__ import annotations

import threading
import time
from typing import Optional, Sequence

import numpy as np

from katacli.nn.postprocess import NNOutput

# A GPU batch call of a small net: kernel launches and the copies both ways.
DEFAULT_LATENCY_S = 0.002
# And the cost that grows with the batch (b6c96 on 9x9 in FP16 is of this order).
DEFAULT_PER_POSITION_S = 5e-6
# V7 layout: channels 1/2 hold the mover's / the opponent's stones; global 5 is the mover's komi / 20.
PLA_STONE_CHANNEL = 1
OPP_STONE_CHANNEL = 2
SELF_KOMI_GLOBAL = 5
KOMI_SCALE = 20.0
# Points of lead per logistic unit of the win probability, and the score spread reported.
SCORE_SCALE = 4.0
SCORE_STDEV = 5.0
# Pass gets this share of one legal point's policy.
PASS_WEIGHT = 0.1


class SimulatedGpuEvaluator:
    """An NNEvaluator stand-in whose batch call costs ``latency_s + per_position_s * n`` of sleep."""

    def __init__(self, latency_s: float = DEFAULT_LATENCY_S, per_position_s: float = DEFAULT_PER_POSITION_S,
                 max_batch_size: int = 256, model_name: str = "simulated-gpu"):
        if latency_s < 0 or per_position_s < 0:
            raise ValueError("simulated GPU latencies must be >= 0")
        self.latency_s = latency_s
        self.per_position_s = per_position_s
        self.max_batch_size = max(1, int(max_batch_size))
        self.model_name = model_name
        self.needs_metadata = False
        self.num_positions_evaluated = 0
        self.num_batches = 0
        # One GPU: batches from several server threads queue for it, as CUDA calls on one stream do.
        self._device = threading.Lock()
        self._stats = threading.Lock()

    # The cache calls BatchingEvaluator makes: this stand-in has no cache (every leaf costs a slot).
    def lookup_cache(self, request) -> Optional[NNOutput]:
        return None

    def store_cache(self, request, result) -> None:
        pass

    def evaluate(self, requests: Sequence) -> list[NNOutput]:
        return self.evaluate_uncached(requests)

    def evaluate_uncached(self, requests: Sequence) -> list[NNOutput]:
        """As NNEvaluator: one network call per input shape and board size, at most max_batch_size each."""
        groups: dict[tuple, list[int]] = {}
        for i, request in enumerate(requests):
            groups.setdefault((request.spatial.shape, request.board_x, request.board_y), []).append(i)
        outputs: list = [None] * len(requests)
        for indices in groups.values():
            for start in range(0, len(indices), self.max_batch_size):
                chunk = indices[start:start + self.max_batch_size]
                for i, output in zip(chunk, self._run_batch([requests[i] for i in chunk])):
                    outputs[i] = output
        return outputs

    def _run_batch(self, requests: Sequence) -> list[NNOutput]:
        n = len(requests)
        spatial = np.stack([r.spatial for r in requests])
        komi = np.array([float(r.global_features[SELF_KOMI_GLOBAL]) for r in requests], np.float64)
        with self._device:
            time.sleep(self.latency_s + self.per_position_s * n)  # sleeping releases the GIL
        with self._stats:
            self.num_batches += 1
            self.num_positions_evaluated += n
        mover_lead = (spatial[:, PLA_STONE_CHANNEL].sum(axis=(1, 2), dtype=np.float64)
                      - spatial[:, OPP_STONE_CHANNEL].sum(axis=(1, 2), dtype=np.float64) + komi * KOMI_SCALE)
        white = np.array([bool(r.white_to_move) for r in requests])
        white_lead = np.where(white, mover_lead, -mover_lead)
        white_win = 1.0 / (1.0 + np.exp(-white_lead / SCORE_SCALE))
        outputs = []
        for i, request in enumerate(requests):
            area = request.board_x * request.board_y
            legal = np.asarray(request.legal_mask, dtype=bool)
            board_legal = legal[:area]
            pass_legal = bool(legal[area]) if legal.shape[0] > area else True
            pass_w = PASS_WEIGHT if pass_legal else 0.0
            total = float(board_legal.sum()) + pass_w
            policy = np.where(board_legal, np.float32(1.0 / total), np.float32(-1.0))
            lead, win = float(white_lead[i]), float(white_win[i])
            outputs.append(NNOutput(
                white_win=win, white_loss=1.0 - win, no_result=0.0, white_lead=lead, white_score_mean=lead,
                white_score_mean_sq=lead * lead + SCORE_STDEV ** 2, var_time_left=-1.0,
                shortterm_winloss_error=-1.0, shortterm_score_error=-1.0, policy=policy,
                policy_pass=pass_w / total if pass_legal else -1.0,
                white_ownership=np.zeros(area, np.float32) if request.include_ownership else None,
                board_x=request.board_x, board_y=request.board_y, symmetry=0,
            ))
        return outputs
