"""examples/distill_openings.py: searches of openings become policy targets; only the policy moves."""
from __future__ import annotations

import sys

import numpy as np
import torch

from support.paths import BUNDLED_TINY_MODEL, REPO
from support.torch_threads import one_cpu_thread  # noqa: F401  (autouse fixture)

sys.path.insert(0, str(REPO / "examples"))
import distill_openings  # noqa: E402


def _cross_entropy_and_value(model_path, rows):
    from katacli.nn.torch_model import load_model

    model = load_model(str(model_path))
    ce, values = [], []
    with torch.no_grad():
        for items in distill_openings.encode(rows).values():
            spatial, global_features, legal, target = (torch.from_numpy(np.stack(x)) for x in zip(*items))
            out = model(spatial, global_features, None, mask_full=True)
            n = spatial.shape[0]
            logits = torch.cat([out.policy[:, 0].reshape(n, -1), out.policy_pass[:, :1]], 1).masked_fill(~legal, -1e9)
            ce.append(float(-(target * torch.log_softmax(logits, 1)).sum(1).mean()))
            values.append(torch.softmax(out.value, 1))
    return float(np.mean(ce)), torch.cat(values)


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
