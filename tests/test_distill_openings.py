"""examples/distill_openings.py: searches of openings become policy targets; only the policy moves."""
from __future__ import annotations

import sys

import numpy as np
import torch

from support.paths import BUNDLED_TINY_MODEL, REPO
from support.torch_threads import one_cpu_thread  # noqa: F401  (autouse fixture)

sys.path.insert(0, str(REPO / "examples"))
import distill_openings  # noqa: E402


def _outputs(model_path, rows):
    """Per row size group: (log policy over points then pass, search target, value softmax)."""
    from katacli.nn.torch_model import load_model

    model = load_model(str(model_path))
    groups = []
    with torch.no_grad():
        for items in distill_openings.encode(rows).values():
            spatial, global_features, legal, target, _ = (torch.from_numpy(np.stack(x)) for x in zip(*items))
            out = model(spatial, global_features, None, mask_full=True)
            log_policy = torch.log_softmax(distill_openings.policy_logits(out, legal), 1)
            groups.append((log_policy, target, torch.softmax(out.value, 1)))
    return groups


def _cross_entropy_and_value(model_path, rows):
    groups = _outputs(model_path, rows)
    ce = [float(-(target * log_policy).sum(1).mean()) for log_policy, target, _ in groups]
    return float(np.mean(ce)), torch.cat([value for _, _, value in groups])


def _policy_kl(model_path, reference_path, rows):
    """Mean KL(reference policy || model policy) over the rows."""
    kls = []
    for (log_p, _, _), (log_q, _, _) in zip(_outputs(reference_path, rows), _outputs(model_path, rows)):
        kls.append(float((log_p.exp() * (log_p - log_q)).clamp_min(0).sum(1).mean()))
    return float(np.mean(kls))


def test_openings_are_searched_into_targets_and_the_policy_learns_them(tmp_path):
    rows = distill_openings.generate(str(BUNDLED_TINY_MODEL), [7, 9], 10, 24, seed=3)
    assert len(rows) == 10
    for row in rows:
        assert row["size"] in (7, 9) and len(row["moves"]) <= max(distill_openings.OPENING_DEPTHS)
        assert abs(sum(share for _, share in row["target"]) - 1.0) < 1e-6
    out = tmp_path / "distilled.bin.gz"
    history = distill_openings.fine_tune(str(BUNDLED_TINY_MODEL), rows, str(out), epochs=3, lr=3e-3, seed=1)
    assert len(history) == 3 and history[-1]["policy"] < history[0]["policy"]
    before_ce, before_value = _cross_entropy_and_value(BUNDLED_TINY_MODEL, rows)
    after_ce, after_value = _cross_entropy_and_value(out, rows)
    assert after_ce < before_ce - 0.05   # the written net's policy is closer to the search
    assert float((after_value - before_value).abs().max()) < 0.1   # its value head stayed where it was
    from katacli.nn.model_file_reader import check_model_file

    assert check_model_file(out).name == check_model_file(BUNDLED_TINY_MODEL).name + distill_openings.NAME_SUFFIX
    lines = distill_openings.line_profile(str(out), 9)
    assert set(lines) == {1, 2, 3, 4, 5} and 0.5 < sum(lines.values()) <= 1.0 + 1e-6   # (pass has the rest)


def test_anchored_boards_keep_the_original_policy_while_the_others_learn(tmp_path):
    rows = distill_openings.generate(str(BUNDLED_TINY_MODEL), [7, 9], 12, 24, seed=5)
    small = [row for row in rows if row["size"] == 7]
    nine = [row for row in rows if row["size"] == 9]
    assert small and nine
    free, held, all_held = (tmp_path / f"{name}.bin.gz" for name in ("free", "held", "all_held"))
    for out, anchors in ((free, ()), (held, (7,)), (all_held, (7, 9))):
        distill_openings.fine_tune(str(BUNDLED_TINY_MODEL), rows, str(out), epochs=3, lr=3e-3, seed=1,
                                   anchor_sizes=frozenset(anchors))
    drift_free = _policy_kl(free, BUNDLED_TINY_MODEL, small)
    assert drift_free > 0.05
    # Held everywhere, the targets are the net's own outputs: only Adam's steps on rounding noise move it.
    assert _policy_kl(all_held, BUNDLED_TINY_MODEL, rows) < drift_free / 4
    # Held on 7x7 only: the 9x9 policy learns its search targets, 7x7 moves less than unheld.
    assert _cross_entropy_and_value(held, nine)[0] < _cross_entropy_and_value(BUNDLED_TINY_MODEL, nine)[0] - 0.05
    assert _policy_kl(held, BUNDLED_TINY_MODEL, small) < drift_free
