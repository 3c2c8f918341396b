"""The root's policy before a search and the move choice after it, as KataGo shapes them: policy
temperature and Dirichlet noise at the root (maybeAddPolicyNoiseAndTemp), the self-play hint, the
early-game interpolation of temperatures, and choosing a move index with temperature
(chooseIndexWithTemperature). Pure functions of arrays and numbers; the Searcher applies them."""
from __future__ import annotations

import math
import random

import numpy as np

# At or below this temperature a move choice is the argmax (no sampling).
TEMPERATURE_ARGMAX_THRESHOLD = 1e-4
# Share of the root policy moved onto a self-play hint move (about what root noise would give it).
ROOT_HINT_POLICY_SHARE = 0.02
# Log-policy cap of the Dirichlet alpha shape (moves above 1% count as 1%).
DIRICHLET_LOG_POLICY_CAP = 0.01
# The board length the temperature half-lives are stated for.
HALFLIFE_BOARD_LEN = 19.0


def interpolate_early(turn_number: int, board_area: int, halflife: float, early_value: float, value: float) -> float:
    """A setting that starts at ``early_value`` and decays towards ``value`` with a half-life of
    ``halflife`` turns on 19x19 (shorter on smaller boards, by the board's side length)."""
    halflives = turn_number / halflife * HALFLIFE_BOARD_LEN / math.sqrt(board_area)
    return value + (early_value - value) * math.pow(0.5, halflives)


def tempered(probs: np.ndarray, temperature: float) -> np.ndarray:
    """The positive entries raised to 1/temperature and renormalised; the others unchanged."""
    positive = probs > 0
    log_max = math.log(probs.max())
    probs = np.where(positive, np.exp((np.log(np.where(positive, probs, 1.0)) - log_max) / temperature), probs)
    return probs / probs[positive].sum() * positive + np.where(positive, 0.0, probs)


def dirichlet_alpha_shape(probs: np.ndarray) -> np.ndarray:
    """How root Dirichlet noise spreads its concentration over the legal moves (``probs`` >= 0): half
    uniform, half by how far each move's log policy (capped at 1%) is above the mean (KataGo's
    computeDirichletAlphaDistribution). Sums to 1 over the legal moves; -1 where illegal."""
    probs = np.asarray(probs, np.float64)
    legal = probs >= 0
    count = int(legal.sum())
    if count == 0:
        raise ValueError("no legal move to spread Dirichlet noise over")
    log_policy = np.log(np.minimum(DIRICHLET_LOG_POLICY_CAP, np.where(legal, probs, 0.0)) + 1e-20)
    alpha = np.where(legal, np.maximum(0.0, log_policy - log_policy[legal].mean()), 0.0)
    total = alpha.sum()
    uniform = 1.0 / count
    alpha = np.full(len(probs), uniform) if total <= 0.0 else 0.5 * (alpha / total + uniform)
    return np.where(legal, alpha, -1.0)


def dirichlet_noised(probs: np.ndarray, seed: int, total_concentration: float, weight: float) -> np.ndarray:
    """``probs`` (every entry a legal move) mixed with Dirichlet noise of the given total
    concentration, shaped by dirichlet_alpha_shape, drawn from a generator seeded with ``seed``."""
    n = len(probs)
    alpha = dirichlet_alpha_shape(probs)
    rng = np.random.default_rng(seed)
    draws = rng.gamma(np.maximum(alpha * total_concentration, 1e-300))
    draws = draws / draws.sum() if draws.sum() > 0 else np.full(n, 1.0 / n)
    return draws * weight + probs * (1.0 - weight)


def with_hint(probs: np.ndarray, hint_index: int) -> np.ndarray:
    """About as much policy as noise would give the hint move, taken evenly from every legal move."""
    moved = probs.sum() * ROOT_HINT_POLICY_SHARE
    probs = probs * (1.0 - ROOT_HINT_POLICY_SHARE)
    probs[hint_index] += moved
    return probs


def choose_index_with_temperature(rng: random.Random, relative_probs, temperature: float,
                                  only_below_prob: float = 1.0) -> int:
    """KataGo's chooseIndexWithTemperature: argmax near zero temperature, else sample the tempered values."""
    values = [max(0.0, float(v)) for v in relative_probs]
    max_value = max(values)
    total = sum(values)
    if max_value <= 0.0:
        return 0
    if temperature <= TEMPERATURE_ARGMAX_THRESHOLD and only_below_prob >= 1.0:
        best = 0
        for i in range(1, len(values)):
            if values[i] > values[best]:
                best = i
        return best
    log_max = math.log(max_value)
    log_threshold = min(0.0, math.log(max(1e-50, only_below_prob)) + math.log(total) - log_max)
    processed = []
    for v in values:
        if v <= 0.0:
            processed.append(0.0)
            continue
        log_rel = math.log(v) - log_max
        if log_rel <= log_threshold:
            log_rel = (log_rel - log_threshold) / max(temperature, 1e-300) + log_threshold
        processed.append(math.exp(log_rel))
    r = rng.random() * sum(processed)
    for i, w in enumerate(processed):
        r -= w
        if r < 0.0:
            return i
    return len(processed) - 1
