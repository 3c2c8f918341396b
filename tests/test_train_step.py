"""The training step without host synchronisation (fused optimizer, device-side metrics and bad-step
skips, channels-last on request) trains exactly what a plain, synchronous step does; bad steps are
skipped and a long run of them still stops training; a short bf16 run on a GPU learns and exports."""
from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path

import pytest
import torch

from katacli.config_keys.spec import Enabled

from katacli.nn.torch_model import load_model
from katacli.train import checkpoint as ckpt
from katacli.train.losses import KataGoLoss, LossScales
from katacli.train.optim import Schedule, build_optimizer
from katacli.train.settings import TrainSettings
from katacli.train.synthetic import write_synthetic_files
from katacli.train.trainer import MAX_CONSECUTIVE_BAD_STEPS, Trainer, TrainingError, run_training
from katacli.train.training_net import TrainingNet
from support.torch_threads import one_cpu_thread  # noqa: F401  (autouse fixture)

BOARD = 9
STEPS = 7
LOOKAHEAD_K = 3
# float32 sums of a few thousand terms: the fused update rounds differently from the plain one in the
# last bits only; a changed loss, LR, clip or skip rule moves the numbers by far more than this.
LOSS_RTOL = 1e-5
WEIGHT_ATOL = 1e-6
# Channels-last convolutions sum in another order: still within float32 noise of the NCHW step.
CHANNELS_LAST_RTOL = 1e-4


def make_settings(tmp_path: Path, **overrides) -> TrainSettings:
    write_synthetic_files(str(tmp_path / "data"), 64, BOARD, seed=3)
    base = TrainSettings(
        data_dir=str(tmp_path / "data"), output_dir=str(tmp_path / "run"), model_kind="b2c16", batch_size=16,
        seed=7, lr_warmup_samples=0, lr_scale=5.0, samples_per_epoch=10**9, window_min_rows=10**6,
        lookahead_k=LOOKAHEAD_K, swa_period_samples=32, metrics_every_samples=64, checkpoint_every_samples=10**9,
        export_every_samples=10**9, device="cpu")
    return replace(base, **overrides)


def plain_steps(settings: TrainSettings, batches) -> tuple[list[float], dict[str, torch.Tensor]]:
    """The step as it was written before: per-parameter SGD, gradient norm read every step, skip on the host."""
    model = load_model(ckpt.initial_model_path(settings.output_dir))
    net = TrainingNet(model, seed=settings.seed).train()
    schedule = Schedule(settings, 1)
    optimizer = build_optimizer(net, schedule, fused=False)
    params = list(net.parameters())
    slow = [p.detach().clone() for p in params]
    loss_fn = KataGoLoss(LossScales(settings.soft_policy_weight_scale, settings.value_loss_scale,
                                    tuple(settings.td_value_loss_scales), settings.seki_loss_scale,
                                    settings.variance_time_loss_scale, settings.disable_optimistic_policy))
    losses, samples = [], 0
    for step, batch in enumerate(batches, start=1):
        schedule.apply(optimizer, samples)
        total, _ = loss_fn(net(batch.spatial, batch.global_inputs, batch.meta, batch.mask_full), batch)
        optimizer.zero_grad(set_to_none=True)
        total.backward()
        gnorm = float(torch.nn.utils.clip_grad_norm_(net.parameters(), schedule.gnorm_cap(samples)))
        if math.isfinite(gnorm):
            optimizer.step()
        if step % LOOKAHEAD_K == 0:
            with torch.no_grad():
                for p, s in zip(params, slow):
                    s.add_(p - s, alpha=settings.lookahead_alpha)
                    p.copy_(s)
        samples += len(batch)
        losses.append(float(total.detach()))
    return losses, net.state_dict()


def trainer_steps(settings: TrainSettings, channels_last: bool = False):
    trainer = Trainer(settings, log=lambda _m: None)
    trainer.channels_last = channels_last
    trainer._setup()
    batches, losses = [], []
    for _ in range(STEPS):
        batch = trainer.stream.next_batch(trainer.samples)
        batches.append(batch)
        losses.append(trainer.train_step(batch).terms["loss"])
    return trainer, batches, [float(v) for v in losses]


def assert_same_weights(actual: dict, expected: dict, atol: float) -> None:
    for name, value in expected.items():
        torch.testing.assert_close(actual[name].float(), value.float(), rtol=0, atol=atol, msg=name)


def test_steps_match_a_plain_synchronous_step(tmp_path):
    settings = make_settings(tmp_path)
    trainer, batches, losses = trainer_steps(settings)
    assert trainer.fused  # the CPU has fused SGD too, so this checks the path GPUs take
    expected_losses, expected_weights = plain_steps(settings, batches)
    assert losses == pytest.approx(expected_losses, rel=LOSS_RTOL)
    assert losses[-1] < losses[0]
    assert_same_weights(trainer.net.state_dict(), expected_weights, WEIGHT_ATOL)


def test_channels_last_trains_the_same_net(tmp_path):
    settings = make_settings(tmp_path)
    _, _, losses = trainer_steps(settings)
    trainer, _, losses_cl = trainer_steps(replace(settings, output_dir=str(tmp_path / "run_cl")), channels_last=True)
    assert trainer.net.model.trunk.initial_conv.weight.is_contiguous(memory_format=torch.channels_last)
    assert losses_cl == pytest.approx(losses, rel=CHANNELS_LAST_RTOL)


def test_a_bad_step_changes_no_weight_and_is_counted(tmp_path):
    trainer = Trainer(make_settings(tmp_path, lookahead_k=0, swa_scale=0.0), log=lambda _m: None)
    trainer._setup()
    good = trainer.stream.next_batch(0)
    trainer.train_step(good)  # momentum is non-zero from here on
    before = {k: v.clone() for k, v in trainer.net.state_dict().items()}
    momentum = [trainer.optimizer.state[p]["momentum_buffer"].clone() for p in trainer.net.parameters()]
    bad = replace(good, global_inputs=torch.full_like(good.global_inputs, float("nan")))
    step = trainer.train_step(bad)
    assert not bool(step.finite)
    assert_same_weights(trainer.net.state_dict(), before, atol=0.0)
    for p, m in zip(trainer.net.parameters(), momentum):
        assert torch.equal(trainer.optimizer.state[p]["momentum_buffer"], m)
    tracker = trainer.bad_steps
    for finite in (False, False, True, False):
        tracker.record(torch.tensor(finite))
    assert tracker.longest_since_last_check() == 2
    assert tracker.longest_since_last_check() == 1  # the run still going on counts again at the next check


def poison(monkeypatch, every: int) -> None:
    """Make every ``every``-th batch's inputs NaN (so its gradients are not finite)."""
    original = Trainer.train_step
    counter = {"steps": 0}

    def train_step(self, batch):
        counter["steps"] += 1
        if counter["steps"] % every == 0:
            batch = replace(batch, global_inputs=torch.full_like(batch.global_inputs, float("nan")))
        return original(self, batch)

    monkeypatch.setattr(Trainer, "train_step", train_step)


def test_a_long_run_of_bad_steps_stops_training(tmp_path, monkeypatch):
    poison(monkeypatch, every=1)
    settings = make_settings(tmp_path, max_samples=16 * (MAX_CONSECUTIVE_BAD_STEPS + 8))
    with pytest.raises(TrainingError, match=f"diverged: {MAX_CONSECUTIVE_BAD_STEPS}"):
        run_training(settings, log=lambda _m: None)


def test_scattered_bad_steps_are_skipped_and_training_goes_on(tmp_path, monkeypatch):
    poison(monkeypatch, every=2)
    steps = MAX_CONSECUTIVE_BAD_STEPS + 4
    result = run_training(make_settings(tmp_path, max_samples=16 * steps), log=lambda _m: None)
    assert result.samples == 16 * steps
    assert all(math.isfinite(v) for v in ckpt.load_checkpoint(ckpt.checkpoint_path(str(tmp_path / "run")))["net"]
               ["model.trunk.initial_conv.weight"].flatten().tolist())


def test_norm_layers_stay_in_the_autocast_dtype(tmp_path):
    """Under autocast a norm layer's float32 parameters must not promote its output to float32 (only for the
    next convolution to cast it back); without autocast nothing changes."""
    settings = make_settings(tmp_path)
    trainer = Trainer(settings, log=lambda _m: None)
    trainer._setup()
    batch = trainer.stream.next_batch(0)
    norm = trainer.net.model.trunk.blocks[0].pre
    seen = []
    norm.register_forward_hook(lambda _m, _i, out: seen.append(out.dtype))
    net = trainer.net
    with torch.no_grad():
        plain = net(batch.spatial, batch.global_inputs, None, False)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = net(batch.spatial, batch.global_inputs, None, False)  # with the board mask: it must not promote
    assert seen == [torch.float32, torch.bfloat16]
    torch.testing.assert_close(low.value_logits.float(), plain.value_logits, rtol=0.1, atol=0.1)


CUDA_STEPS = 12
CUDA_BATCH = 32


@pytest.mark.cuda
def test_a_small_net_learns_on_the_gpu_in_bf16_and_exports(tmp_path):
    # (compile off: auto would compile on CUDA, a minute or two; bench_train.py --compile times that path)
    settings = make_settings(tmp_path, device="cuda", mixed_precision="bf16", batch_size=CUDA_BATCH,
                             export_dir=str(tmp_path / "models"), max_samples=CUDA_BATCH * CUDA_STEPS,
                             metrics_every_samples=CUDA_BATCH, compile=Enabled.FALSE)
    from katacli.train.distributed import setup_distributed

    trainer = Trainer(settings, setup_distributed("cuda"), log=lambda _m: None)
    trainer._setup()
    assert trainer.amp_dtype == torch.bfloat16 and trainer.fused
    assert trainer.net.model.trunk.initial_conv.weight.is_cuda
    batch = trainer.stream.next_batch(0).staged_for_gpu()
    losses = torch.stack([trainer.train_step(batch).terms["loss"] for _ in range(CUDA_STEPS)]).tolist()
    assert all(math.isfinite(v) for v in losses)
    assert losses[-1] < losses[0]  # the same batch over and over: the loss must fall
    path = trainer.export_model()
    exported = load_model(path)
    assert sum(p.numel() for p in exported.parameters()) == sum(p.numel() for p in trainer.net.model.parameters())
    with torch.no_grad():
        out = exported(batch.spatial.float(), batch.global_inputs.float())
    assert all(torch.isfinite(t).all() for t in out if isinstance(t, torch.Tensor))


def test_compile_auto_is_off_on_the_cpu(tmp_path):
    trainer = Trainer(make_settings(tmp_path), log=lambda _m: None)
    trainer._setup()
    assert trainer.s.compile is Enabled.AUTO and not trainer.compiled
    assert trainer.forward_net is trainer.eager_forward_net


def test_a_compile_that_fails_is_logged_and_training_goes_on_eagerly(tmp_path, monkeypatch):
    """torch.compile raises at the first call where it cannot compile (no Triton, no compiler): the step
    runs eagerly instead, with the same loss, and later steps stay eager."""
    def failing_compile(net, **_options):
        def compiled(*_args):
            raise RuntimeError("backend compiler failed\nlong traceback")
        return compiled

    eager = Trainer(make_settings(tmp_path / "eager", compile=Enabled.FALSE), log=lambda _m: None)
    eager._setup()
    expected = float(eager.train_step(eager.stream.next_batch(eager.samples)).terms["loss"])
    monkeypatch.setattr(torch, "compile", failing_compile)
    lines = []
    trainer = Trainer(make_settings(tmp_path / "compiled", compile=Enabled.TRUE), log=lines.append)
    trainer._setup()
    assert trainer.compiled and any("the first step compiles the net" in line for line in lines)
    loss = float(trainer.train_step(trainer.stream.next_batch(trainer.samples)).terms["loss"])
    assert loss == expected
    assert not trainer.compiled and trainer.forward_net is trainer.eager_forward_net
    assert any("torch.compile failed (RuntimeError: backend compiler failed)" in line for line in lines)
    assert math.isfinite(float(trainer.train_step(trainer.stream.next_batch(trainer.samples)).terms["loss"]))
