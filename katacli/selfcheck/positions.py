"""Setting positions up from GTP commands and encoding them for the network (shared by the checks and
scripts/make_selfcheck_reference.py), the way KataGo's GTP engine answers ``kata-raw-nn``."""
from __future__ import annotations

import numpy as np

NUM_SPATIAL_FEATURES = 22
NUM_GLOBAL_FEATURES = 19
# KataGo's GTP engine evaluates kata-raw-nn with rootPolicyOptimism, 0.2 unless configured.
GTP_ROOT_POLICY_OPTIMISM = 0.2


def replay(commands: list[str]):
    """A GameSession after GTP set-up commands (see katacli.game.session.session_from_gtp_setup)."""
    from katacli.game.session import session_from_gtp_setup

    return session_from_gtp_setup(commands)


def query_player(query: str, to_move: int) -> int:
    """The player a ``kata-raw-nn [COLOR] SYM`` (or ``kata-raw-human-nn``) query evaluates for."""
    from katacli.game.coords import parse_color

    args = query.split()[1:]
    return parse_color(args[0]) if len(args) == 2 else to_move


def query_player_and_symmetry(query: str, to_move: int) -> tuple[int, int]:
    """``kata-raw-nn SYM`` or ``kata-raw-nn COLOR SYM`` -> (player, symmetry)."""
    return query_player(query, to_move), int(query.split()[-1])


def encode(state, player: int):
    """(spatial [22, H, W], global [19], legal [H*W+1] bool, the state evaluated) for ``player`` to move."""
    from katacli._core.features import encode_v7

    if player != state.next_player:
        state = state.copy()
        state.reset_history_keep_board(player)  # as KataGo does for kata-raw-nn with another colour
    spatial = np.zeros((NUM_SPATIAL_FEATURES, state.y_size, state.x_size), np.float32)
    global_features = np.zeros(NUM_GLOBAL_FEATURES, np.float32)
    legal = np.zeros(state.x_size * state.y_size + 1, np.uint8)
    encode_v7(state, 0, spatial, global_features, legal)
    return spatial, global_features, legal.astype(bool), state


def evaluate(evaluator, spatial, global_features, legal, state, player: int, symmetry: int, profile=None):
    """The network's outputs, uncached; ``profile`` (a HumanProfile) for nets that take SGF metadata."""
    from katacli.nn.evaluator import NNRequest

    meta = None if profile is None else profile.row(player == 2, state.x_size * state.y_size)
    request = NNRequest(spatial, global_features, legal, board_x=state.x_size, board_y=state.y_size,
                        white_to_move=player == 2, symmetry=symmetry, policy_optimism=GTP_ROOT_POLICY_OPTIMISM,
                        meta=meta)
    return evaluator.evaluate_uncached([request])[0]


def output_vector(out) -> dict[str, np.ndarray]:
    """The outputs a reference records, as arrays."""
    return {
        "scalars": np.array([out.white_win, out.white_loss, out.no_result, out.white_lead, out.white_score_mean,
                             out.white_score_mean_sq, out.var_time_left, out.shortterm_winloss_error,
                             out.shortterm_score_error, out.policy_pass], np.float64),
        "policy": np.asarray(out.policy, np.float64),
        "ownership": np.asarray(out.white_ownership, np.float64),
    }


SCALAR_NAMES = ("whiteWin", "whiteLoss", "noResult", "whiteLead", "whiteScoreSelfplay", "whiteScoreSelfplaySq",
                "varTimeLeft", "shorttermWinlossError", "shorttermScoreError", "policyPass")
