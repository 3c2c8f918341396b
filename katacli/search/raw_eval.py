"""One network evaluation of a position outside any search: uncached, for chosen symmetries.

The position is evaluated for the player asked; when that is not the player to move, the history is
rebuilt with them to move (ko and pass history reset), as KataGo does for kata-raw-nn. Used by
kata-raw-nn / kata-raw-human-nn, debug_moves, evalsgf, the human-net self-checks and the Python API.
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from katacli._core.features import encode_v7

from katacli.nn.description import NUM_GLOBAL_FEATURES_V7, NUM_SPATIAL_FEATURES_V7


def position_request(state, player: int, symmetry: int | None = None, policy_optimism: float = 0.0,
                     playout_doubling_advantage: float = 0.0, meta_profile=None, needs_metadata: bool = False):
    """The NNRequest (uncached) of ``state`` for ``player``; the history is reset when ``player`` is not to move.

    ``needs_metadata``: the net takes SGF metadata, built from ``meta_profile`` (a
    :class:`~katacli.nn.human_profile.HumanProfile`) for the player to move.
    """
    from katacli.nn.evaluator import NNRequest  # torch is imported only when a network is used

    if player != state.next_player:
        state = state.copy()
        state.reset_history_keep_board(player)
    x_size, y_size = state.x_size, state.y_size
    spatial = np.zeros((NUM_SPATIAL_FEATURES_V7, y_size, x_size), np.float32)
    global_features = np.zeros(NUM_GLOBAL_FEATURES_V7, np.float32)
    legal = np.zeros(x_size * y_size + 1, np.uint8)
    encode_v7(state, 0, spatial, global_features, legal, playout_doubling_advantage=playout_doubling_advantage)
    meta = None
    if needs_metadata:
        if meta_profile is None or not meta_profile.is_set:
            raise ValueError("this network needs a humanSLProfile (it is a human-SL net)")
        meta = meta_profile.row(player == 2, x_size * y_size)
    return NNRequest(spatial, global_features, legal.astype(bool), board_x=x_size, board_y=y_size,
                     white_to_move=(player == 2), symmetry=symmetry, policy_optimism=policy_optimism, meta=meta)


def evaluate_raw(evaluator, state, player: int, symmetries: Sequence[int], policy_optimism: float,
                 playout_doubling_advantage: float = 0.0, profile=None) -> list:
    """NNOutputs (White's view, real orientation) of ``state`` for ``player``, one per symmetry, uncached.

    ``profile``: the :class:`~katacli.nn.human_profile.HumanProfile` for nets that take SGF metadata.
    """
    base = position_request(state, player, None, policy_optimism, playout_doubling_advantage, profile,
                            bool(getattr(evaluator, "needs_metadata", False)))
    requests = [dataclasses.replace(base, symmetry=s) for s in symmetries]
    return evaluator.evaluate(requests)
