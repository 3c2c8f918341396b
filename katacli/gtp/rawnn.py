"""``kata-raw-nn``: one raw network evaluation per symmetry, printed exactly as KataGo prints it.

The position is evaluated for the player asked; when that is not the player to
move, the history is rebuilt with them to move (ko and pass history reset),
as KataGo does. Each symmetry's block ends with a blank line, so ``all`` gives
eight blocks separated by blank lines (KataGo's format; the last one is trimmed).
"""
from __future__ import annotations

import dataclasses
from typing import Sequence

import numpy as np

from cython_ext.features import encode_v7

NUM_SPATIAL_FEATURES = 22
NUM_GLOBAL_FEATURES = 19
NAN_POLICY_TEXT = "    NAN "


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
    spatial = np.zeros((NUM_SPATIAL_FEATURES, y_size, x_size), np.float32)
    global_features = np.zeros(NUM_GLOBAL_FEATURES, np.float32)
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


def _policy_cell(prob: float) -> str:
    return NAN_POLICY_TEXT if prob < 0 else "%8.6f " % prob


def format_raw_nn(outputs: Sequence, x_size: int, y_size: int, human: bool = False) -> str:
    """KataGo's rawNN text for these outputs (``human``: the kata-raw-human-nn field names)."""
    lines: list[str] = []
    for out in outputs:
        lines.append(f"symmetry {out.symmetry}")
        lines.append("whiteWin %.6f" % out.white_win)
        lines.append("whiteLoss %.6f" % out.white_loss)
        lines.append("noResult %.6f" % out.no_result)
        if human:
            lines.append("whiteScore %.3f" % out.white_score_mean)
            lines.append("whiteScoreSq %.3f" % out.white_score_mean_sq)
        else:
            lines.append("whiteLead %.3f" % out.white_lead)
            lines.append("whiteScoreSelfplay %.3f" % out.white_score_mean)
            lines.append("whiteScoreSelfplaySq %.3f" % out.white_score_mean_sq)
            lines.append("varTimeLeft %.3f" % out.var_time_left)
        lines.append("shorttermWinlossError %.3f" % out.shortterm_winloss_error)
        lines.append("shorttermScoreError %.3f" % out.shortterm_score_error)
        lines.append("policy")
        policy = np.asarray(out.policy, dtype=np.float64).reshape(y_size, x_size)
        for row in policy:
            lines.append("".join(_policy_cell(p) for p in row))
        lines.append("policyPass " + _policy_cell(float(out.policy_pass)))
        lines.append("whiteOwnership")
        ownership = np.asarray(out.white_ownership, dtype=np.float64).reshape(y_size, x_size)
        for row in ownership:
            lines.append("".join("%9.7f " % v for v in row))
        lines.append("")
    return "\n".join(lines).strip()
