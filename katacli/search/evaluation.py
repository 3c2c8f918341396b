"""Turning a tree's batch of leaves into network requests, and the answers back into evaluations.

The search core writes each waiting leaf's V7 features, legal mask and cache key
into the tree's batch buffers; :class:`NetworkLeafEvaluator` wraps them as
:class:`~katacli.nn.evaluator.NNRequest` objects (views, no copies) and sends the
whole batch in one call to the evaluator:

* an :class:`~katacli.nn.evaluator.NNEvaluator` (``evaluate(requests)``), or
* a shared :class:`~katacli.nn.batching.BatchingEvaluator` (``evaluate_many``),
  which merges the batches of many concurrent searches into larger network calls,
* or anything with either method returning NNOutput-like objects (tests use fakes).

Per KataGo, the root is evaluated with rootPolicyOptimism and, when
rootNumSymmetriesToSample > 1, as the average over that many distinct random
symmetries; other leaves use policyOptimism and the evaluator's random symmetry.
"""
from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional, Sequence

import numpy as np

from katacli.nn.evaluator import NNRequest

NUM_SYMMETRIES = 8


@dataclass
class AveragedOutput:
    """The mean of several evaluations of one position (KataGo's averageMultipleSymmetries)."""

    white_win: float
    white_loss: float
    no_result: float
    white_lead: float
    white_score_mean: float
    white_score_mean_sq: float
    var_time_left: float
    shortterm_winloss_error: float
    shortterm_score_error: float
    policy: np.ndarray
    policy_pass: float
    white_ownership: Optional[np.ndarray]

    @classmethod
    def of(cls, outputs: Sequence) -> "AveragedOutput":
        def mean(name: str) -> float:
            return float(np.mean([getattr(o, name) for o in outputs]))

        policy = np.mean([np.asarray(o.policy, np.float64) for o in outputs], axis=0)
        illegal = np.asarray(outputs[0].policy) < 0
        policy[illegal] = -1.0
        policy_pass = mean("policy_pass") if outputs[0].policy_pass >= 0 else -1.0
        owners = [o.white_ownership for o in outputs if getattr(o, "white_ownership", None) is not None]
        ownership = np.mean(owners, axis=0).astype(np.float32) if owners else None
        return cls(
            white_win=mean("white_win"), white_loss=mean("white_loss"), no_result=mean("no_result"),
            white_lead=mean("white_lead"), white_score_mean=mean("white_score_mean"),
            white_score_mean_sq=mean("white_score_mean_sq"), var_time_left=mean("var_time_left"),
            shortterm_winloss_error=mean("shortterm_winloss_error"), shortterm_score_error=mean("shortterm_score_error"),
            policy=policy.astype(np.float32), policy_pass=policy_pass, white_ownership=ownership,
        )


class NetworkLeafEvaluator:
    """Evaluates a SearchTree's waiting leaves with a network evaluator (see the module docstring)."""

    def __init__(self, evaluator, seed: Optional[int] = None):
        self.evaluator = evaluator
        self._evaluate_many = getattr(evaluator, "evaluate_many", None) or evaluator.evaluate
        self._rng = random.Random(seed)
        self.num_evals = 0
        self.num_batches = 0

    def evaluate(self, tree, num_leaves: int, params) -> list:
        requests: list[NNRequest] = []
        groups: list[tuple[int, int]] = []   # (first request, count) per leaf
        spatial, global_features, legal = tree.spatial, tree.global_features, tree.legal
        for i in range(num_leaves):
            key, is_root, white = tree.leaf_info(i)
            optimism = params.root_policy_optimism if is_root else params.policy_optimism
            num_syms = min(NUM_SYMMETRIES, params.root_num_symmetries_to_sample) if is_root else 1
            symmetries = self._rng.sample(range(NUM_SYMMETRIES), num_syms) if num_syms > 1 else [None]
            groups.append((len(requests), len(symmetries)))
            for symmetry in symmetries:
                requests.append(NNRequest(
                    spatial=spatial[i], global_features=global_features[i], legal_mask=legal[i].view(np.bool_),
                    board_x=tree.x_size, board_y=tree.y_size, white_to_move=white, symmetry=symmetry,
                    policy_optimism=optimism, policy_temperature=params.nn_policy_temperature,
                    enable_passing_hacks=params.enable_passing_hacks,
                    # Sampled symmetries must each really run the network.
                    cache_key=key if symmetry is None else None,
                ))
        outputs = list(self._evaluate_many(requests))
        self.num_evals += len(requests)
        self.num_batches += 1
        return [outputs[start] if count == 1 else AveragedOutput.of(outputs[start:start + count])
                for start, count in groups]
