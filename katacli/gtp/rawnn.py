"""``kata-raw-nn``: one raw network evaluation per symmetry, printed exactly as KataGo prints it.

The evaluation is :func:`katacli.search.raw_eval.evaluate_raw`'s. Each symmetry's block ends with a
blank line, so ``all`` gives eight blocks separated by blank lines (KataGo's format; the last one is
trimmed).
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

NAN_POLICY_TEXT = "    NAN "


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
