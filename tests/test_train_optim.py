"""Optimizer pieces and settings: KataGo's parameter groups, LR schedule and warmup, clipping
threshold, weight decay, lookahead, SWA, and reading the training config keys."""
from __future__ import annotations

import math
import re
from dataclasses import replace

import pytest
import torch

from katacli.config import Config, ConfigError
from katacli.nn.torch_model import KataGoModel
from katacli.train.training_net import TrainingNet
from katacli.train.optim import Lookahead, Schedule, SwaAverage, build_optimizer, parameter_groups
from katacli.config_keys.train_keys import TRAIN_KEYS
from katacli.train.settings import (
    FIELD_OF_KEY,
    TrainSettings,
    describe_keys,
    parse_lr_schedule,
    settings_from_config,
    unknown_train_keys,
)


def test_parameter_groups_follow_katago():
    net = TrainingNet(KataGoModel.from_config("b2c16", seed=0), seed=0)
    groups = {name: group for group, params in parameter_groups(net).items() for name, _ in params}
    assert groups["model.trunk.initial_conv.weight"] == "input"
    assert groups["model.trunk.initial_matmul.weight"] == "input"
    assert groups["model.trunk.blocks.0.regular_conv.weight"] == "normal"
    assert groups["model.trunk.blocks.0.pre.bias"] == "noreg"
    assert groups["model.policy_head.p2_conv.weight"] == "output"
    assert groups["model.policy_head.gpool_to_pass.bias"] == "output_noreg"
    assert groups["model.policy_head.p1_norm.bias"] == "output_noreg"
    assert groups["score_belief_out.weight"] == "output" and groups["td_value.bias"] == "output_noreg"
    assert len(groups) == len(list(net.parameters()))


def test_learning_rate_warmup_and_schedule():
    s = TrainSettings(batch_size=256, lr_warmup_samples=2_000_000, lookahead_k=0)
    sched = Schedule(s, world_size=1)
    assert math.isclose(sched.per_sample_lr(0), 0.00003 / 20)
    assert math.isclose(sched.per_sample_lr(1_999_999), 0.00003 / 1.4)
    assert math.isclose(sched.per_sample_lr(2_000_000), 0.00003)
    stepped = Schedule(replace(s, lr_points=parse_lr_schedule("(0,2.0),(5M,0.5)"), lr_warmup_samples=0), 1)
    assert math.isclose(stepped.per_sample_lr(4_999_999), 0.00006)
    assert math.isclose(stepped.per_sample_lr(5_000_000), 0.000015)
    # Lookahead takes larger steps so the averaged step keeps the same size; heads learn at half rate.
    with_lookahead = Schedule(replace(s, lookahead_k=6, lookahead_alpha=0.5), 1)
    assert with_lookahead.group_lr_factor("normal") == 2.0 and with_lookahead.group_lr_factor("output") == 1.0


def test_clipping_and_weight_decay_scale_with_the_global_batch():
    s = TrainSettings(batch_size=128, lr_scale=0.25)
    sched = Schedule(s, world_size=2)  # global batch 256
    assert math.isclose(sched.gnorm_cap(0), 2500.0 / math.sqrt(0.25))
    assert math.isclose(sched.weight_decay("normal"), 0.000001)
    assert math.isclose(sched.weight_decay("noreg"), 0.00000001)
    adamw = Schedule(replace(s, optimizer="adamw", batch_size=512), world_size=2)
    assert math.isclose(adamw.weight_decay("normal"), 0.005 * 2.0)


def test_optimizer_applies_the_schedule():
    net = TrainingNet(KataGoModel.from_config("b2c16", seed=0), seed=0)
    sched = Schedule(TrainSettings(batch_size=256, lr_warmup_samples=0, lookahead_k=0, head_lr_factor=0.5), 1)
    opt = build_optimizer(net, sched)
    assert isinstance(opt, torch.optim.SGD) and opt.defaults["momentum"] == 0.9
    sched.apply(opt, 0)
    lrs = {g["group_name"]: g["lr"] for g in opt.param_groups}
    assert math.isclose(lrs["normal"], 0.00003) and math.isclose(lrs["output"], 0.000015)


def test_lookahead_moves_slow_weights_halfway_every_k_steps():
    p = torch.nn.Parameter(torch.zeros(2))
    la = Lookahead([p], k=2, alpha=0.5)
    with torch.no_grad():
        p.add_(1.0)
    la.step()
    assert not la.in_sync and torch.equal(p, torch.ones(2))
    with torch.no_grad():
        p.add_(1.0)
    la.step()
    assert la.in_sync and torch.equal(p, torch.full((2,), 1.0))  # halfway from 0 to 2


def test_swa_is_an_exponential_average_of_snapshots():
    model = torch.nn.Linear(1, 1, bias=False)
    swa = SwaAverage(model, scale=4.0, period_samples=10)
    with torch.no_grad():
        model.weight.fill_(8.0)
    swa.after_step(10, in_sync=True)  # first snapshot copies
    with torch.no_grad():
        model.weight.fill_(0.0)
    swa.after_step(5, in_sync=True)  # period not reached
    assert swa.average["weight"].item() == 8.0
    swa.after_step(5, in_sync=True)
    assert swa.average["weight"].item() == 6.0 and swa.snapshots == 2


def test_settings_from_config_and_flags():
    cfg = Config.from_text("batchSize = 64\nlrScale = 0.5\ntdValueLossScales = 0.5,0.6,0.7\noptimizer = AdamW\n"
                           "maxRows = 3\n")
    s = settings_from_config(cfg, {"batchSize": 32, "dataDir": None})
    assert s.batch_size == 32 and s.lr_scale == 0.5 and s.td_value_loss_scales == (0.5, 0.6, 0.7)
    assert s.optimizer == "adamw"
    assert unknown_train_keys(cfg) == ["maxRows"]
    assert not s.model_kind_given   # the default kind: a resumed run of another kind goes on
    assert settings_from_config(cfg, {"modelKind": "b4c32"}).model_kind_given
    assert settings_from_config(Config.from_text("modelKind = b4c32\n")).model_kind_given
    with pytest.raises(ConfigError, match="lrScale"):
        settings_from_config(Config.from_text("lrScale = -1\n"))
    with pytest.raises(ConfigError, match="either lrScale or lrSchedule"):
        settings_from_config(Config.from_text("lrScale = 2\nlrSchedule = (0,1)\n"))
    with pytest.raises(ConfigError, match="3 comma-separated"):
        settings_from_config(Config.from_text("tdValueLossScales = 1,2\n"))


def test_lr_schedule_text():
    assert parse_lr_schedule("(0,12.0),(20M,9.0);(1.5B,6)") == [(0, 12.0), (20_000_000, 9.0), (1_500_000_000, 6.0)]
    for bad in ("(5,1.0)", "(0,1),(0,2)", "nonsense", ""):
        with pytest.raises(ValueError):
            parse_lr_schedule(bad)


def test_every_key_is_documented_with_its_default():
    text = describe_keys()
    for spec in TRAIN_KEYS:
        assert re.search(rf"^(# )?{spec.name} = ", text, re.M) and spec.description
    # The listing is a config file as it is (-list-keys > train.cfg): keys without a default commented out.
    listed = Config.from_text(text)
    assert "dataDir" not in listed and listed.as_dict()["batchSize"] == "256"
    defaults = TrainSettings()
    for spec in TRAIN_KEYS:
        assert getattr(defaults, FIELD_OF_KEY[spec.name]) == spec.default, spec.name
