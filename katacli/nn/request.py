"""One position for a network to evaluate: :class:`NNRequest`.

Its own module, free of torch, so that code that only builds requests (the search, whose rollout
engine needs no network) does not pay torch's import time and memory (about 1 s and 200 MB).
:mod:`katacli.nn.evaluator` evaluates them and re-exports the class.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np


@dataclass
class NNRequest:
    """One position to evaluate.

    ``spatial`` float32 ``[22, H, W]`` and ``global_features`` float32 ``[19]`` are KataGo's V7
    input features for the side to move, in the real board's orientation (row 0 is the top
    row, as in KataGo's NN position numbering). Normally H, W = ``board_y``, ``board_x``; a
    larger, zero-padded input with the board in its top-left corner works too.

    ``legal_mask`` bool, row-major ``[board_y * board_x]`` or ``[board_y * board_x + 1]``
    (last entry: pass; assumed legal when absent).
    """

    spatial: np.ndarray
    global_features: np.ndarray
    legal_mask: np.ndarray
    board_x: int
    board_y: int
    white_to_move: bool
    symmetry: Optional[int] = None  # 0..7; None: the evaluator's default (random unless fixed)
    policy_optimism: float = 0.0
    policy_temperature: float = 1.0
    enable_passing_hacks: bool = False
    allow_no_result: Optional[bool] = None  # None: from the global features (simple ko or territory)
    cache_key: Optional[int] = None  # position hash (64/128-bit int); None: bypass the cache
    meta: Optional[np.ndarray] = None  # SGF metadata input, only for nets that need it
    # False: the caller has no use for the ownership map, and the output (cached too) leaves it out
    # (white_ownership None), as KataGo's search asks for it only at the root: on 19x19 it is half
    # of what a cached evaluation costs in memory.
    include_ownership: bool = True
