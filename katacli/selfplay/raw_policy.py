"""Raw network evaluations of game positions, and moves sampled from the policy.

Self-play uses the bare network (no search) to open games with a few policy moves,
place handicap stones, pick fork moves and continue side positions. Requests go
through the shared :class:`~katacli.nn.batching.BatchingEvaluator`, so they are
batched with the searches' leaves.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Optional, Union

import numpy as np

from katacli._core.features import encode_v7
from katacli._core.game_state import GameState
from katacli.game.coords import WHITE, point_of_flat
from katacli.nn.batching import BatchingEvaluator
from katacli.nn.evaluator import NNEvaluator, NNRequest
from katacli.nn.postprocess import NNOutput
from katacli.selfplay.records import Move

NUM_SPATIAL = 22
NUM_GLOBAL = 19
# Below this a probability counts as zero in entropies (KataGo's 1e-30 guard).
MIN_ENTROPY_PROB = 1e-30
# Returned by the move choosers when no move qualifies (None already means pass).
NO_MOVE = object()


@dataclass
class Policy:
    """Legal moves with their network probabilities (pass included when legal)."""

    moves: list[Move]
    probs: np.ndarray   # float64, same order as moves

    def entropy(self) -> float:
        p = self.probs[self.probs >= MIN_ENTROPY_PROB]
        return float((p * -np.log(p)).sum())   # (a lone move: +0.0 as KataGo's sum of -p log p, not -0.0)


class NetEvaluator:
    """Evaluates GameStates with one network (through a batching front end or directly)."""

    def __init__(self, evaluator: Union[BatchingEvaluator, NNEvaluator], model_name: str = "", driver=None):
        """``driver``: the SearchDriver(s) that step searches on this net (katacli.search.stepping), or None:
        searches run in the threads that ask for them."""
        self.evaluator = evaluator
        self.model_name = model_name
        self.driver = driver

    def request(self, state: GameState, *, draw_equivalent_wins_for_white: float = 0.5,
                playout_doubling_advantage: float = 0.0) -> NNRequest:
        spatial = np.zeros((NUM_SPATIAL, state.y_size, state.x_size), np.float32)
        global_features = np.zeros(NUM_GLOBAL, np.float32)
        legal = np.zeros(state.x_size * state.y_size + 1, np.uint8)
        encode_v7(state, 0, spatial, global_features, legal,
                  draw_equivalent_wins_for_white=draw_equivalent_wins_for_white,
                  playout_doubling_advantage=playout_doubling_advantage)
        return NNRequest(spatial, global_features, legal.astype(bool), state.x_size, state.y_size,
                         white_to_move=state.next_player == WHITE)

    def evaluate(self, state: GameState, **kwargs) -> NNOutput:
        request = self.request(state, **kwargs)
        if isinstance(self.evaluator, BatchingEvaluator):
            return self.evaluator.evaluate(request)
        return self.evaluator.evaluate_one(request)

    def policy(self, state: GameState, output: Optional[NNOutput] = None, allow_pass: bool = True,
               **kwargs) -> Policy:
        """The legal moves' probabilities (illegal moves are marked -1 by the evaluator)."""
        output = output if output is not None else self.evaluate(state, **kwargs)
        x_size = state.x_size
        moves: list[Move] = []
        probs = []
        for idx in np.flatnonzero(output.policy >= 0.0):
            moves.append(point_of_flat(int(idx), x_size, state.y_size))
            probs.append(float(output.policy[idx]))
        if allow_pass and output.policy_pass >= 0.0:
            moves.append(None)
            probs.append(float(output.policy_pass))
        return Policy(moves, np.array(probs, np.float64))


@dataclass
class RawEval:
    """The raw network's view of a position (White's values), as self-play records it."""

    white_win: float
    white_loss: float
    no_result: float
    white_score_mean: float
    policy: Policy


def raw_eval_of(state: GameState, output: NNOutput, net: "NetEvaluator") -> RawEval:
    return RawEval(output.white_win, output.white_loss, output.no_result, output.white_score_mean,
                   net.policy(state, output))


def choose_with_temperature(rng: random.Random, weights: np.ndarray, temperature: float) -> int:
    """Index drawn with probability proportional to weight^(1/temperature) (temperature 0: the largest)."""
    if len(weights) == 0:
        raise ValueError("no moves to choose from")
    if temperature <= 0.0:
        return int(np.argmax(weights))
    w = np.asarray(weights, np.float64)
    positive = w > 0
    if not positive.any():
        return rng.randrange(len(w))
    logw = np.full(len(w), -np.inf)
    logw[positive] = np.log(w[positive]) / temperature
    scaled = np.exp(logw - logw.max())
    return _weighted_index(rng, scaled)


def _weighted_index(rng: random.Random, weights: np.ndarray) -> int:
    total = float(weights.sum())
    r = rng.random() * total
    cumulative = np.cumsum(weights)
    return int(min(np.searchsorted(cumulative, r, side="right"), len(weights) - 1))


def random_policy_move(rng: random.Random, policy: Policy, temperature: float, ban: object = NO_MOVE):
    """A move sampled from the policy at a temperature, never ``ban`` (KataGo's chooseRandomPolicyMove);
    NO_MOVE when there is no candidate."""
    keep = [i for i, m in enumerate(policy.moves) if policy.probs[i] > 0.0 and m != ban]
    if not keep:
        return NO_MOVE
    idx = choose_with_temperature(rng, policy.probs[keep], temperature)
    return policy.moves[keep[idx]]


def random_legal_move(rng: random.Random, state: GameState, ban: object = NO_MOVE):
    moves = [m for m in state.legal_moves() if m != ban]
    return rng.choice(moves) if moves else NO_MOVE


def random_forking_move(rng: random.Random, state: GameState, policy: Policy, ban: Move):
    """KataGo's fork move: 70% the policy at temperature 1, 25% at temperature 2, 5% any legal move."""
    r = rng.random()
    if r < 0.70:
        return random_policy_move(rng, policy, 1.0, ban)
    if r < 0.95:
        return random_policy_move(rng, policy, 2.0, ban)
    return random_legal_move(rng, state, ban)


def opening_move(rng: random.Random, policy: Policy, temperature: float) -> Move:
    """A policy-initialisation move: policy^(1/T), rarely (0.02%) a uniformly random legal move."""
    positive = [i for i, p in enumerate(policy.probs) if p > 0]
    if not positive:
        raise RuntimeError("the network gives every legal move probability zero")
    if rng.random() < 0.0002:
        return policy.moves[rng.choice(positive)]
    weights = np.array([math.pow(policy.probs[i], 1.0 / temperature) for i in positive])
    return policy.moves[positive[_weighted_index(rng, weights)]]
