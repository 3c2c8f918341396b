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

from katacli.nn.batch import NNBatch, NNBatchOutput, accepts_batches, filled
from katacli.nn.request import NNRequest
from katacli._core.constants import NUM_SYMMETRIES  # noqa: F401  (the core's numbers, defined once)

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


# prepare_arrays' remembered batches before it starts over (lanes times batch sizes times settings).
MAX_PLAIN_BATCHES = 64


def _evaluate_many_of(evaluator):
    return getattr(evaluator, "evaluate_many", None) or evaluator.evaluate


def human_net_usable(human_evaluator, params) -> bool:
    """KataGo's condition for using a human-SL net: a profile is set, or the net needs none."""
    return human_evaluator is not None and (
        params.human_profile.is_set or not getattr(human_evaluator, "needs_metadata", False))


def human_net_needed_in_tree(human_evaluator, params) -> bool:
    """Every node (not just the root) needs the human policy: playouts below the root may follow it."""
    return human_net_usable(human_evaluator, params) and (
        params.human_sl_pla_explore_prob_weightless > 0 or params.human_sl_pla_explore_prob_weightful > 0
        or params.human_sl_opp_explore_prob_weightless > 0 or params.human_sl_opp_explore_prob_weightful > 0)


class NetworkLeafEvaluator:
    """Evaluates a SearchTree's waiting leaves with a network evaluator (see the module docstring).

    With a human-SL net (``human_evaluator``, KataGo's -human-model) the root, and every leaf when
    the human explore probabilities below the root are set, is also evaluated by it; both nets' batches
    go out together. Nets that take SGF metadata get the row of ``params.humanSLProfile``.
    """

    def __init__(self, evaluator, seed: Optional[int] = None, human_evaluator=None):
        self.evaluator = evaluator
        self.human_evaluator = human_evaluator
        self._evaluate_many = _evaluate_many_of(evaluator)
        self._human_evaluate_many = _evaluate_many_of(human_evaluator) if human_evaluator is not None else None
        self._evaluate_batch = evaluator.evaluate_batch if accepts_batches(evaluator) else None
        self._rng = random.Random(seed)
        self.num_evals = 0
        self.num_batches = 0
        # prepare_arrays' batches without the root, the anti-mirror shift or metadata, by their views' id and
        # settings: the views are the tree's buffers, refilled in place for every batch of their lane and size,
        # so one NNBatch serves them all (an NNBatch is never changed).
        self._plain_batches: dict[tuple, tuple] = {}
        self._plain_batches_tree = None
        # The score mean of the root's plain evaluation (one symmetry, cached), made beside a root averaged
        # over several symmetries: the score utility's centre comes from it (KataGo's computeRootNNEvaluation).
        self.root_plain_score_mean: Optional[float] = None

    def evaluate_with_human(self, tree, num_leaves: int, params, root_human_only: bool = False):
        """(main outputs, human outputs or None): per leaf, the human entry is None where not needed.

        ``root_human_only``: evaluate just the human net, for the (already evaluated) root.
        """
        if tree.draws_leaf_symmetries and (tree.leaf_symmetry[:num_leaves] >= 0).any():
            # Requests carry real-board features; Searcher._tree_draws_symmetries keeps trees off this path.
            raise RuntimeError("leaves filled in a drawn orientation cannot go to the network as requests")
        human_usable = human_net_usable(self.human_evaluator, params)
        human_everywhere = human_net_needed_in_tree(self.human_evaluator, params)
        meta_rows = _MetadataRows(params, tree.x_size * tree.y_size)
        main_requests: list[NNRequest] = []
        human_requests: list[NNRequest] = []
        main_groups: list[tuple[int, int]] = []   # (first request, count) per leaf
        human_groups: list[Optional[tuple[int, int]]] = []
        plain_root = None   # the index of the root's plain request, beside its symmetry samples
        for i in range(num_leaves):
            key, is_root, white = tree.leaf_info(i)
            num_syms = min(NUM_SYMMETRIES, params.root_num_symmetries_to_sample) if is_root else 1
            symmetries = self._rng.sample(range(NUM_SYMMETRIES), num_syms) if num_syms > 1 else [None]
            ownership = tree.leaf_needs_ownership(i)
            leaf = (tree, i, key, is_root, white, symmetries, params, ownership)
            if not root_human_only:
                main_groups.append((len(main_requests), len(symmetries)))
                main_requests += _leaf_requests(*leaf, meta_rows.get(self.evaluator, white))
                if num_syms > 1:
                    plain_root = len(main_requests)
                    main_requests += _leaf_requests(tree, i, key, is_root, white, [None], params, ownership,
                                                    meta_rows.get(self.evaluator, white))
            if human_usable and (is_root or human_everywhere):
                human_groups.append((len(human_requests), len(symmetries)))
                human_requests += _leaf_requests(*leaf, meta_rows.get(self.human_evaluator, white))
            else:
                human_groups.append(None)
        outputs = list(self._evaluate_many(main_requests)) if main_requests else []
        if plain_root is not None:
            self.root_plain_score_mean = float(outputs[plain_root].white_score_mean)
        human_outputs = list(self._human_evaluate_many(human_requests)) if human_requests else []
        self.num_evals += len(main_requests) + len(human_requests)
        self.num_batches += 1
        main = [_one_or_average(outputs, group) for group in main_groups]
        human = [None if group is None else _one_or_average(human_outputs, group) for group in human_groups]
        return main, (human if human_requests else None)


    def evaluate_arrays(self, tree, num_leaves: int, params) -> Optional[NNBatchOutput]:
        """The batch's answers as whole arrays (the fast path), or None where it does not apply: an
        evaluator without evaluate_batch, a human-SL net to consult, or a root averaged over symmetries."""
        batch = self.prepare_arrays(tree, num_leaves, params)
        return None if batch is None else self.run_arrays(batch)

    def prepare_arrays(self, tree, num_leaves: int, params) -> Optional[NNBatch]:
        """The tree's waiting leaves as one NNBatch (views of the tree's buffers for its current lane), or
        None where the array path does not apply (see evaluate_arrays). Call with the tree locked;
        run_arrays may then run on another thread while the tree collects another lane."""
        if self._evaluate_batch is None:
            return None
        n = num_leaves
        any_root, any_mirror_hack = tree.batch_flags(n)
        if (human_net_usable(self.human_evaluator, params)
                and (any_root or human_net_needed_in_tree(self.human_evaluator, params))):
            return None
        if any_root and params.root_num_symmetries_to_sample > 1:
            return None
        views = tree.batch_arrays(n)
        needs_metadata = getattr(self.evaluator, "needs_metadata", False)
        plain = not (any_root or any_mirror_hack or needs_metadata)
        if tree is not self._plain_batches_tree:   # (a new tree: the old one's buffers are let go)
            self._plain_batches.clear()
            self._plain_batches_tree = tree
        if plain:   # the usual batch: the one made for these views and settings before, if any
            key = (id(views), params.policy_optimism, params.nn_policy_temperature, params.enable_passing_hacks,
                   tree.keep_ownership, tree.draws_leaf_symmetries)
            made = self._plain_batches.get(key)
            if made is not None and made[0] is views:
                self.num_evals += n
                self.num_batches += 1
                return made[1]
        spatial, global_features, legal, keys, white, is_root, mirror_hack, symmetries = views
        if any_root:
            optimism = np.where(is_root, params.root_policy_optimism, params.policy_optimism)
        else:
            optimism = filled(n, float(params.policy_optimism), np.float64)
        # As leaf_needs_ownership: the root, every node when the tree keeps ownership, the anti-mirror shift.
        if tree.keep_ownership:
            include_ownership = filled(n, True, np.bool_)
        elif any_root or any_mirror_hack:
            include_ownership = is_root | mirror_hack
        else:
            include_ownership = filled(n, False, np.bool_)
        meta = None
        if needs_metadata:
            rows = _MetadataRows(params, tree.x_size * tree.y_size)
            meta = np.stack([rows.get(self.evaluator, w) for w in white.tolist()])
        batch = NNBatch(
            spatial=spatial, global_features=global_features, legal_mask=legal, board_x=tree.x_size,
            board_y=tree.y_size, white_to_move=white, policy_optimism=optimism, include_ownership=include_ownership,
            policy_temperature=params.nn_policy_temperature, enable_passing_hacks=params.enable_passing_hacks,
            cache_keys=keys, meta=meta, applied_symmetries=symmetries if tree.draws_leaf_symmetries else None)
        if plain:
            if len(self._plain_batches) >= MAX_PLAIN_BATCHES:
                self._plain_batches.clear()
            self._plain_batches[key] = (views, batch)
        self.num_evals += n
        self.num_batches += 1
        return batch

    def run_arrays(self, batch: NNBatch) -> NNBatchOutput:
        """The network's answers for a batch from prepare_arrays."""
        return self._evaluate_batch(batch)

    @property
    def launches_async(self) -> bool:
        """Whether the evaluator can queue a batch and return at once (launch_arrays)."""
        return bool(getattr(self.evaluator, "launches_async", False)) and hasattr(self.evaluator, "submit_batch")

    def launch_arrays(self, batch: NNBatch):
        """Queue a batch from prepare_arrays on the device; the returned PendingBatch's result() answers it."""
        return self.evaluator.submit_batch(batch)


class _MetadataRows:
    """The SGF-metadata rows of a batch (one per side to move), built only for nets that take them."""

    def __init__(self, params, board_area: int):
        self._params = params
        self._area = board_area
        self._rows: dict[bool, np.ndarray] = {}

    def get(self, net, white_to_move: bool) -> Optional[np.ndarray]:
        if not getattr(net, "needs_metadata", False):
            return None
        if white_to_move not in self._rows:
            self._rows[white_to_move] = self._params.human_profile.row(white_to_move, self._area)
        return self._rows[white_to_move]


def _leaf_requests(tree, i: int, key, is_root: bool, white: bool, symmetries, params, include_ownership: bool,
                   meta: Optional[np.ndarray]) -> list[NNRequest]:
    """The requests for batch leaf i, one per symmetry (views of the tree's buffers, no copies).
    The tree stores ownership only for the root, or for every node when it keeps ownership."""
    optimism = params.root_policy_optimism if is_root else params.policy_optimism
    return [NNRequest(
        spatial=tree.spatial[i], global_features=tree.global_features[i], legal_mask=tree.legal[i].view(np.bool_),
        board_x=tree.x_size, board_y=tree.y_size, white_to_move=white, symmetry=symmetry,
        policy_optimism=optimism, policy_temperature=params.nn_policy_temperature,
        enable_passing_hacks=params.enable_passing_hacks, meta=meta, include_ownership=include_ownership,
        # Sampled symmetries must each really run the network.
        cache_key=key if symmetry is None else None,
    ) for symmetry in symmetries]


def _one_or_average(outputs, group: tuple[int, int]):
    start, count = group
    return outputs[start] if count == 1 else AveragedOutput.of(outputs[start:start + count])
