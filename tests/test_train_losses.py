"""KataGo's loss: term formulas on hand-made outputs, weights, sums over rows."""
from __future__ import annotations

import math

import torch

from katacli.train import rows as R
from katacli.train.batch import expand_rows
from katacli.train.losses import KataGoLoss, LossScales, cross_entropy, huber
from katacli.train.training_net import TrainOutputs
from katacli.train.synthetic import synthetic_rows

BOARD = 9
AREA = BOARD * BOARD


def random_outputs(n: int, seed: int = 0) -> TrainOutputs:
    g = torch.Generator().manual_seed(seed)

    def r(*shape, scale=1.0):
        return torch.randn(*shape, generator=g) * scale

    belief = torch.log_softmax(r(n, 2 * (AREA + 60)), dim=1)
    return TrainOutputs(
        policy_logits=r(n, 6, AREA + 1), value_logits=r(n, 3), td_value_logits=r(n, 3, 3), td_score=r(n, 3, scale=5),
        ownership_pretanh=r(n, 1, BOARD, BOARD), scoring=r(n, 1, BOARD, BOARD), futurepos_pretanh=r(n, 2, BOARD, BOARD),
        seki_logits=r(n, 4, BOARD, BOARD), score_mean=r(n, scale=5), score_stdev=r(n).abs() + 1, lead=r(n, scale=5),
        variance_time=r(n).abs() + 1, shortterm_value_error=r(n).abs() * 0.1, shortterm_score_error=r(n).abs() * 10,
        score_belief_logprobs=belief,
    )


def take(out: TrainOutputs, idx) -> TrainOutputs:
    return TrainOutputs(*(t[idx] for t in out))


def test_huber_and_cross_entropy():
    x = torch.tensor([0.0, 1.0, 5.0])
    assert torch.allclose(huber(x, torch.zeros(3), 2.0), torch.tensor([0.0, 0.5, 2.0 + 2.0 * 3.0]))
    probs = torch.tensor([[0.25, 0.75]])
    assert math.isclose(float(cross_entropy(torch.log(probs), probs, 1)), -(0.25 * math.log(0.25) + 0.75 * math.log(0.75)),
                        rel_tol=1e-6)


def test_loss_is_a_sum_over_rows():
    b = expand_rows(synthetic_rows(4, BOARD, seed=1))
    out = random_outputs(4)
    loss = KataGoLoss()
    total, terms = loss(out, b, training=False)
    parts = [loss(take(out, slice(i, i + 1)), expand_rows(synthetic_rows(4, BOARD, seed=1).take([i])), training=False)
             for i in range(4)]
    assert torch.allclose(total, sum(p[0] for p in parts), rtol=1e-5)
    for name in terms:
        assert torch.allclose(terms[name], sum(p[1][name] for p in parts), rtol=1e-4, atol=1e-6), name


def test_zero_weight_rows_add_nothing():
    rows = synthetic_rows(3, BOARD, seed=2)
    rows.arrays[R.GLOBAL_TARGETS][1, R.GT_ROW_WEIGHT] = 0.0
    b = expand_rows(rows)
    out = random_outputs(3, seed=3)
    loss = KataGoLoss()
    with_zero, terms = loss(out, b, training=False)
    keep = [0, 2]
    without, terms_without = loss(take(out, keep), expand_rows(rows.take(keep)), training=False)
    assert torch.allclose(with_zero, without, rtol=1e-5)


def test_perfect_predictions_zero_the_value_and_td_terms():
    b = expand_rows(synthetic_rows(5, BOARD, seed=4))
    out = random_outputs(5)
    gt = b.global_targets
    td_targets = torch.stack([gt[:, s] for s in R.GT_TD_VALUE], dim=1)
    out = out._replace(value_logits=torch.log(gt[:, R.GT_VALUE] + 1e-12), td_value_logits=torch.log(td_targets + 1e-30),
                       td_score=gt[:, list(R.GT_TD_SCORE)], score_mean=gt[:, R.GT_SCORE], lead=gt[:, R.GT_LEAD])
    _, terms = KataGoLoss()(out, b, training=False)
    for name in ("vloss", "tdvloss1", "tdvloss2", "tdvloss3", "tdsloss", "smloss", "leadloss"):
        assert abs(float(terms[name])) < 1e-4, name


def test_policy_terms_use_normalised_visits_and_katago_weights():
    b = expand_rows(synthetic_rows(2, BOARD, seed=5))
    out = random_outputs(2, seed=6)
    _, terms = KataGoLoss()(out, b, training=False)
    target = b.policy_targets[:, 0] / b.policy_targets[:, 0].sum(dim=1, keepdim=True)
    expected = -(target * torch.log_softmax(out.policy_logits[:, 0], dim=1)).sum()
    assert torch.allclose(terms["p0loss"], expected, rtol=1e-5)
    opp = b.policy_targets[:, 1] / b.policy_targets[:, 1].sum(dim=1, keepdim=True)
    expected_opp = 0.15 * -(opp * torch.log_softmax(out.policy_logits[:, 1], dim=1)).sum()
    assert torch.allclose(terms["p1loss"], expected_opp, rtol=1e-5)


def test_disabled_optimism_trains_optimistic_channels_as_half_weight_policy():
    b = expand_rows(synthetic_rows(3, BOARD, seed=7))
    out = random_outputs(3, seed=8)
    logits = out.policy_logits.clone()
    logits[:, 4] = logits[:, 0]
    logits[:, 5] = logits[:, 0]
    out = out._replace(policy_logits=logits)
    _, terms = KataGoLoss(LossScales(disable_optimistic_policy=True))(out, b, training=False)
    assert torch.allclose(terms["p0lopt"], 0.5 * terms["p0loss"], rtol=1e-5)
    assert torch.allclose(terms["p0sopt"], 0.5 * terms["p0loss"], rtol=1e-5)


def test_ownership_term_matches_its_formula():
    b = expand_rows(synthetic_rows(2, BOARD, seed=9))
    out = random_outputs(2, seed=10)
    _, terms = KataGoLoss()(out, b, training=False)
    pred = out.ownership_pretanh[:, 0] * 2
    target = (1 + b.value_targets[:, R.VT_OWNERSHIP]) / 2
    bce = torch.nn.functional.softplus(pred) - pred * target
    expected = 1.5 * (bce.sum(dim=(1, 2)) / AREA).sum()
    assert torch.allclose(terms["oloss"], expected, rtol=1e-5)


def test_score_belief_pdf_and_cdf_terms():
    b = expand_rows(synthetic_rows(2, BOARD, seed=11))
    target = b.score_distribution / 100.0
    perfect = random_outputs(2)._replace(score_belief_logprobs=torch.log(target * (1 - 1e-6) + 1e-6 / target.shape[1]))
    _, terms = KataGoLoss()(perfect, b, training=False)
    assert float(terms["sbcdfloss"]) < 1e-4
    assert float(terms["sbpdfloss"]) < 0.01


def test_seki_scale_follows_the_unowned_share_and_is_checkpointed():
    rows = synthetic_rows(4, BOARD, seed=12)
    rows.arrays[R.VALUE_TARGETS][:, R.VT_OWNERSHIP, :3] = 0  # a third of the board unowned
    b = expand_rows(rows)
    out = random_outputs(4)
    loss = KataGoLoss()
    _, first = loss(out, b, training=True)
    state = loss.state_dict()
    assert state["seki_ema_weight"] == 1.0 and 0.2 < state["seki_ema_sum"] < 0.4
    again = KataGoLoss()
    again.load_state_dict(state)
    _, second_a = loss(out, b)
    _, second_b = again(out, b)
    assert torch.equal(second_a["skloss"], second_b["skloss"])
