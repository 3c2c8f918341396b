"""Synthetic training rows: random positions with random but valid KataGo targets.

For tests, benchmarks and smoke runs of ``kata train`` without self-play. Positions come
from random legal games featurized by the Cython core (``encode_v7``); every target
respects KataGo's layout and invariants (policy counts only on legal moves, a score
distribution summing to 100, one-hot results consistent with the score, ownership only on
the board, weights set as for a finished self-play game).

    python3 -m katacli.train.synthetic OUT_DIR --rows 2000 --board 9 [--files 4] [--format npz|h5]
"""

from __future__ import annotations

import argparse
import os
from typing import Optional

import numpy as np

from katacli.train import rows as R

NUM_SPATIAL_FEATURES = 22
NUM_GLOBAL_FEATURES = 19
DATA_FORMAT_VERSION = 3
MAX_RANDOM_MOVES_FRACTION = 0.6  # of the board area
MAX_POLICY_MOVES = 4  # moves that get visits in a random policy target
MAX_VISITS_PER_MOVE = 200
KOMI = 7.5
SCORE_NOISE = 3.0
# A plausible spread of the "variance time" target (turns until the result settles).
VARIANCE_TIME_RANGE = (5.0, 60.0)
QVALUE_INT_LIMIT = 32000  # q-value targets are fixed point: win-loss x 32000, score x 60


def _random_policy(rng: np.random.Generator, legal: np.ndarray, width: int) -> np.ndarray:
    """Visit counts on a few legal moves (indices of the pos*pos+1 move vector)."""
    target = np.zeros(width, np.int16)
    choices = np.flatnonzero(legal)
    picked = rng.choice(choices, size=min(len(choices), int(rng.integers(1, MAX_POLICY_MOVES + 1))), replace=False)
    target[picked] = rng.integers(1, MAX_VISITS_PER_MOVE, size=len(picked))
    return target


def synthetic_rows(num_rows: int, board_size: int = 9, pos_len: Optional[int] = None, seed: int = 0) -> R.RowBlock:
    """``num_rows`` rows of ``board_size`` games stored at ``pos_len`` (default: the board size)."""
    from katacli._core.features import encode_v7
    from katacli._core.game_state import GameState

    pos_len = pos_len or board_size
    if pos_len < board_size:
        raise ValueError(f"pos_len {pos_len} is smaller than the board ({board_size})")
    rng = np.random.default_rng(seed)
    area = pos_len * pos_len
    distr_mid = area + R.EXTRA_SCORE_DISTR_RADIUS
    spatial_all = np.zeros((num_rows, NUM_SPATIAL_FEATURES, pos_len, pos_len), np.float32)
    global_inputs = np.zeros((num_rows, NUM_GLOBAL_FEATURES), np.float32)
    policy = np.zeros((num_rows, 2, area + 1), np.int16)
    global_targets = np.zeros((num_rows, R.GLOBAL_TARGET_CHANNELS), np.float32)
    score_distr = np.zeros((num_rows, 2 * distr_mid), np.int8)
    value_targets = np.zeros((num_rows, 5, pos_len, pos_len), np.int8)
    qvalues = np.zeros((num_rows, 3, area + 1), np.int16)

    legal = np.zeros(area + 1, np.uint8)
    for i in range(num_rows):
        state = GameState(board_size)
        for _ in range(int(rng.integers(0, int(board_size * board_size * MAX_RANDOM_MOVES_FRACTION) + 1))):
            moves = [m for m in state.legal_moves() if m is not None]
            if not moves:
                break
            state.play(moves[int(rng.integers(len(moves)))], state.next_player)
        encode_v7(state, spatial=spatial_all[i], global_=global_inputs[i], legal=legal)
        on_board = spatial_all[i, 0] > 0
        policy[i, 0] = _random_policy(rng, legal, area + 1)
        searched = policy[i, 0] > 0  # q-value targets exist for the moves the search visited
        qvalues[i, 0, searched] = rng.integers(-QVALUE_INT_LIMIT, QVALUE_INT_LIMIT, size=int(searched.sum()))
        qvalues[i, 1, searched] = rng.integers(-QVALUE_INT_LIMIT, QVALUE_INT_LIMIT, size=int(searched.sum())) // 10
        qvalues[i, 2] = policy[i, 0]
        policy[i, 1] = _random_policy(rng, np.r_[on_board.ravel(), True], area + 1)  # any point or pass
        own, opp = spatial_all[i, 1] > 0, spatial_all[i, 2] > 0
        # Stones keep their owner; empty points go to a random side.
        ownership = np.where(own, 1, np.where(opp, -1, rng.choice((-1, 1), size=on_board.shape))) * on_board
        komi_for_player = KOMI if state.next_player == 2 else -KOMI
        score = float(ownership.sum()) + komi_for_player
        value_targets[i, R.VT_OWNERSHIP] = ownership
        value_targets[i, R.VT_FUTUREPOS] = (own.astype(np.int8) - opp.astype(np.int8))[None]
        value_targets[i, R.VT_SCORING] = ownership * int(R.SCORING_TARGET_SCALE)
        # Half-integer scores land on one index: index k stands for score (k - mid) + 0.5.
        score_distr[i, int(np.floor(score)) + distr_mid] = int(R.SCORE_DISTRIBUTION_TOTAL)

        won = 1.0 if score > 0 else 0.0
        g = global_targets[i]
        g[R.GT_VALUE] = (won, 1.0 - won, 0.0)
        g[R.GT_SCORE] = score
        for value_slice, score_index in zip(R.GT_TD_VALUE, R.GT_TD_SCORE):
            p = float(np.clip(won * 0.8 + 0.1 + rng.normal(0, 0.05), 0.01, 0.99))
            g[value_slice] = (p, 1.0 - p, 0.0)
            g[score_index] = score + rng.normal(0, SCORE_NOISE)
        g[R.GT_FINAL_SCORE] = score
        g[R.GT_LEAD] = score + rng.normal(0, SCORE_NOISE)
        g[R.GT_VARIANCE_TIME] = rng.uniform(*VARIANCE_TIME_RANGE)
        for weight in (R.GT_ROW_WEIGHT, R.GT_POLICY_WEIGHT, R.GT_OWNERSHIP_WEIGHT, R.GT_NEXT_POLICY_WEIGHT,
                       R.GT_LEAD_WEIGHT, R.GT_FUTUREPOS_WEIGHT, R.GT_SCORING_WEIGHT):
            g[weight] = 1.0
        g[R.GT_HISTORY_MASK] = 1.0
        g[R.GT_DATA_VERSION] = DATA_FORMAT_VERSION

    arrays = {
        R.BINARY_INPUTS: R.pack_binary_inputs(spatial_all),
        R.GLOBAL_INPUTS: global_inputs,
        R.POLICY_TARGETS: policy,
        R.GLOBAL_TARGETS: global_targets,
        R.SCORE_DISTRIBUTION: score_distr,
        R.VALUE_TARGETS: value_targets,
        R.QVALUE_TARGETS: qvalues,
    }
    return R.RowBlock(arrays)


def write_synthetic_files(out_dir: str, num_rows: int, board_size: int = 9, num_files: int = 1,
                          file_format: str = "npz", seed: int = 0, pos_len: Optional[int] = None) -> list[str]:
    """Split ``num_rows`` synthetic rows over ``num_files`` files in ``out_dir``; returns their paths."""
    if file_format not in ("npz", "h5"):
        raise ValueError(f"unknown format {file_format!r}; use npz or h5")
    os.makedirs(out_dir, exist_ok=True)
    block = synthetic_rows(num_rows, board_size, pos_len, seed)
    bounds = np.linspace(0, num_rows, num_files + 1).astype(int)
    paths = []
    for k in range(num_files):
        part = block.take(np.arange(bounds[k], bounds[k + 1]))
        path = os.path.join(out_dir, f"synthetic-{seed}-{k:04d}.{file_format}")
        (R.write_npz if file_format == "npz" else R.write_hdf5)(path, part)
        paths.append(path)
    return paths


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description="Write random-position training rows in KataGo's layout.")
    parser.add_argument("out_dir")
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--board", type=int, default=9)
    parser.add_argument("--pos-len", type=int, default=None, help="stored board edge (default: the board size)")
    parser.add_argument("--files", type=int, default=1)
    parser.add_argument("--format", default="npz", choices=("npz", "h5"))
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    for path in write_synthetic_files(args.out_dir, args.rows, args.board, args.files, args.format, args.seed,
                                      args.pos_len):
        print(path)


if __name__ == "__main__":
    main()
