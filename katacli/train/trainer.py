"""The training loop: data stream -> net -> KataGo loss -> optimizer, with checkpoints and exports.

:func:`run_training` is what ``kata train`` calls. A run lives in its output directory: the
first start writes ``initial_model.bin.gz`` (a fresh net of ``modelKind`` or a copy of
``initModel``); every start afterwards resumes from ``checkpoint.pt`` exactly where it
stopped (weights, optimizer, data position, RNG states), so ``kata train`` can be killed and
restarted at will. Training stops after ``maxSamples`` samples or on Ctrl-C / SIGTERM, which
finish the current step and save a checkpoint first.
"""

from __future__ import annotations

import contextlib
import math
import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, NamedTuple, Optional

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

from katacli.data.files import remove_stale_partials
from katacli.nn.torch_model import KataGoModel, load_model
from katacli.nn.model_file_reader import ModelFileError
from katacli.train import checkpoint as ckpt
from katacli.train.bad_steps import BadStepTracker
from katacli.train.batch import Batch
from katacli.train.distributed import (
    DistributedContext, any_rank_true, barrier, broadcast_int, broadcast_object, first_line, gather_objects,
    is_peer_lost,
)
from katacli.train.exporting import (
    architecture_name, export_name, export_path, export_to_models_dir, model_with_weights, nonfinite_outputs,
    write_model_atomically,
)
from katacli.train.losses import KataGoLoss, LossScales
from katacli.train.metrics import VALIDATION_METRICS_FILE, MetricsLog, RunningMetrics, metrics_due
from katacli.train.validation import evaluate, newest_rows, validation_batches
from katacli.train.training_net import TrainingNet, TrainOutputs, UnsupportedModelError, check_trainable
from katacli.train.optim import Lookahead, Schedule, SwaAverage, build_optimizer, fused_optimizer_supported
from katacli.train.prefetch import Prefetcher
from katacli.train.rows import TrainingFileError
from katacli.config_keys.spec import Enabled
from katacli.train.settings import TrainSettings
from katacli.train.window import DataScanner, DataStream, NoTrainingDataError, no_training_rows

MAX_SEED = 2**62
# Gradients that are not finite skip the step; this many in a row means training diverged (checked at
# metrics lines, checkpoints and exports, where the device-side count is read).
MAX_CONSECUTIVE_BAD_STEPS = 20
# An epoch starts when the train bucket holds this share of an epoch's samples (KataGo).
EPOCH_BUCKET_FRACTION = 0.99
# While waiting for data, check for Ctrl-C this often.
STOP_CHECK_SECONDS = 0.2
# Redrawing the loss plot costs a fraction of a second; do it at most this often (and at the end).
PLOT_INTERVAL_SECONDS = 60.0


class TrainingError(Exception):
    """A problem the user has to fix (bad settings, unusable data or model, ...)."""


@dataclass
class TrainResult:
    samples: int
    exported: list[str] = field(default_factory=list)
    interrupted: bool = False
    last_metrics: dict = field(default_factory=dict)


class StepResult(NamedTuple):
    """One step's outcome; the tensors stay on the training device (reading them would wait for the GPU)."""

    terms: dict[str, torch.Tensor]  # loss terms summed over rows, and the total as "loss"
    gnorm: torch.Tensor  # gradient norm before clipping
    finite: torch.Tensor  # bool: the gradients were finite (otherwise the step changed no weights)
    lr: float  # per-sample learning rate


# What the data can raise when an epoch begins mid-run (files deleted, a file of another board edge added).
_DATA_ERRORS = (NoTrainingDataError, TrainingFileError)


# Set on an error every training process raises alike (settings, data agreed between ranks): one says it.
RAISED_ON_EVERY_RANK = "raised_on_every_rank"


def mark_raised_on_every_rank(exc: Exception) -> Exception:
    setattr(exc, RAISED_ON_EVERY_RANK, True)
    return exc


def _error_of(action: Callable[[], None], errors: tuple = _DATA_ERRORS) -> Optional[Exception]:
    """Run ``action``; the error of ``errors`` it raised, if any (to be agreed between ranks before raising)."""
    try:
        action()
    except errors as exc:
        return exc
    return None


class _Interrupted(Exception):
    """Stop requested before the first batch."""


class AbortedBySecondInterrupt(KeyboardInterrupt):
    """A second Ctrl-C while the training loop was already stopping: leave without saving."""


class _StopFlag:
    """Set by Ctrl-C / SIGTERM; the loop stops after the current step. A second Ctrl-C aborts."""

    def __init__(self, requested: bool = False):
        self.requested = requested
        self._previous = {}

    def _handle(self, signum, frame):
        if self.requested and signum == signal.SIGINT:
            raise AbortedBySecondInterrupt
        self.requested = True

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        return False


def _check_writable_dir(flag: str, directory: str) -> None:
    """A directory the run can write into (made later if missing): not a file, and writable where it exists or
    where it would be made."""
    path = Path(directory)
    existing = next((p for p in (path, *path.parents) if p.exists()), None)
    if existing is not None and not existing.is_dir():
        where = "" if existing == path else f": {existing}"
        raise TrainingError(f"{flag} {directory}{where} is a file, not a directory")
    if existing is not None and not os.access(existing, os.W_OK | os.X_OK):
        raise TrainingError(f"{flag} {directory}: cannot write in {existing} (no permission)")


class Trainer:
    def __init__(self, settings: TrainSettings, ctx: Optional[DistributedContext] = None,
                 log: Callable[[str], None] = print, progress=None):
        self.s = settings
        self.ctx = ctx or DistributedContext()
        self.log = log if self.ctx.is_main else (lambda *_: None)
        self.progress = progress if self.ctx.is_main else None
        self._lock_file = None   # the output folder's lock while run() runs (main rank)
        self.samples = 0
        self.exported: list[str] = []
        self._export_unlisted = False   # an export made since the last checkpoint, which does not list it yet
        self._from_init_model = False   # the run's net came from -init-model (its kind, not modelKind's)
        self._validated_at = -1   # the sample count of the last validation
        self._no_validation_files_said = False
        # KataGo's train bucket: samples allowed by the data seen so far (used with maxTrainSamplesPerNewRow).
        self.bucket = {"level": float(settings.samples_per_epoch), "rows_at_fill": -1}
        self._last_plot_time = -math.inf  # the first metrics line draws the plot at once
        # Channels-last (NHWC) is what cuDNN's convolutions use natively; on the CPU NCHW stays.
        self.channels_last = self.ctx.device.type == "cuda"
        self.bad_steps = BadStepTracker()
        self._raise_agreed(_error_of(self._check_settings, _DATA_ERRORS + (TrainingError,)))

    # ------------------------------------------------------------------------------ setup

    def _check_settings(self) -> None:
        s = self.s
        if not s.data_dir:
            raise TrainingError("no data directory: pass -data-dir (or set dataDir)")
        if not s.output_dir:
            raise TrainingError("no output directory: pass -output-dir (or set outputDir)")
        if s.init_model and not os.path.isfile(s.init_model):
            raise TrainingError(f"initial model {s.init_model} does not exist")
        if not os.path.isdir(s.data_dir):
            what = "is not a directory" if os.path.exists(s.data_dir) else "does not exist"
            raise TrainingError(f"data directory {s.data_dir} {what}")
        # Where the run writes: found out now, not after the first steps (and not as "run again to go on").
        for flag, directory in (("-output-dir", s.output_dir), ("-export-dir", s.export_dir)):
            if directory:
                _check_writable_dir(flag, directory)
        # A count only: the data stream's own scan reports unreadable files, once -- unless there are no rows,
        # when the run ends here and the skipped files are the reason.
        skipped: list[str] = []
        files = DataScanner(s.data_dir, skipped.append, s.validation_fraction).scan()
        rows = sum(f.rows for f in files if not f.validation)
        if not rows:
            for line in skipped:
                self.log(line)
            raise no_training_rows(s.data_dir, files)
        global_batch = s.batch_size * self.ctx.world_size
        if rows < global_batch:   # the window could never fill a batch: say so before the run's first file
            raise NoTrainingDataError(f"{s.data_dir} has {rows} rows, fewer than one global batch of {global_batch}; "
                                      "generate more data or lower batchSize")

    def _note_ignored_model_kind(self, model: KataGoModel) -> None:
        """A run started from -init-model trains that net's architecture: a modelKind (a shared config's,
        -model-kind) naming another is ignored, at the first start and at every restart alike."""
        if self.s.model_kind_given and self.s.model_kind != architecture_name(model):
            self.log(f"note: modelKind = {self.s.model_kind} is ignored: this run trains the {architecture_name(model)} "
                     "net it started from (-init-model)")

    def _fresh_model(self, seed: int) -> KataGoModel:
        if self.s.init_model:
            try:
                return load_model(self.s.init_model)
            except (ModelFileError, OSError, ValueError) as exc:
                raise TrainingError(f"cannot load initial model {self.s.init_model}: {exc}") from None
        try:
            return KataGoModel.from_config(self.s.model_kind, seed=seed)
        except ValueError as exc:
            raise TrainingError(str(exc)) from None

    def _setup(self) -> None:
        if self.ctx.is_main:
            os.makedirs(self.s.output_dir, exist_ok=True)
            self._lock_file = lock_output_dir(self.s.output_dir)   # first: a refused run touches nothing
        self._load_run()
        if not self.s.export_dir:
            self.log("note: no -export-dir: this run saves checkpoints but exports no network")

    def _load_run(self) -> None:
        s, ctx = self.s, self.ctx
        if ctx.is_main:
            # Temporary files of a killed run (checkpoint, exports) are never finished files: drop them.
            for directory in (s.output_dir, s.export_dir):
                if directory:
                    remove_stale_partials(Path(directory))
        barrier(ctx)
        path = ckpt.checkpoint_path(s.output_dir)
        state = ckpt.load_checkpoint(path) if os.path.exists(path) else None
        if state is not None:
            seed = int(state["seed"])
            try:
                model = load_model(ckpt.initial_model_path(s.output_dir))
            except (ModelFileError, OSError) as exc:
                raise TrainingError(f"{s.output_dir} has a checkpoint but its {ckpt.INITIAL_MODEL_FILE} is unusable: {exc}") from None
            self.log(f"resuming from {path} at {int(state['samples'])} samples")
            if s.init_model:
                self.log(f"note: -init-model is ignored, {s.output_dir} already holds a run")
            self._from_init_model = bool(state.get("from_init_model", False))
            if self._from_init_model:
                self._note_ignored_model_kind(model)
            elif s.model_kind_given and s.model_kind != architecture_name(model):
                raise TrainingError(f"the run in {s.output_dir} trains a {architecture_name(model)} net; it cannot "
                                    f"continue as {s.model_kind} (use a new -output-dir for a {s.model_kind} run)")
            if state.get("optimizer_name", s.optimizer) != s.optimizer:
                raise TrainingError(f"the run in {s.output_dir} was trained with optimizer = {state['optimizer_name']}; "
                                    f"it cannot continue with {s.optimizer} (use a new -output-dir)")
        else:
            seed = s.seed if s.seed >= 0 else random.SystemRandom().randrange(MAX_SEED)
            seed = broadcast_int(seed, ctx)
            model = self._fresh_model(seed)
            self._from_init_model = bool(s.init_model)
            if self._from_init_model:
                self._note_ignored_model_kind(model)
            try:
                check_trainable(model)   # before the run's first file: a net it cannot train leaves nothing behind
            except UnsupportedModelError as exc:
                raise TrainingError(str(exc)) from None
            if ctx.is_main:
                write_model_atomically(model, ckpt.initial_model_path(s.output_dir))
            barrier(ctx)
            self.log(f"new run: {model.name} ({sum(p.numel() for p in model.parameters())} parameters), seed {seed}")
        if s.num_cpu_threads:
            torch.set_num_threads(s.num_cpu_threads)
        self.seed = seed
        try:
            net = TrainingNet(model, seed=seed)
        except UnsupportedModelError as exc:
            raise TrainingError(str(exc)) from None
        if state is not None:
            try:
                net.load_state_dict(state["net"])
            except (RuntimeError, KeyError) as exc:
                raise ckpt.CheckpointError(f"{path} does not fit {ckpt.INITIAL_MODEL_FILE} of {s.output_dir}: {exc}") from None
        memory_format = torch.channels_last if self.channels_last else torch.preserve_format
        self.net = net.to(ctx.device, memory_format=memory_format).train()
        self.schedule = Schedule(s, ctx.world_size)
        self.fused = fused_optimizer_supported(ctx.device)
        self.optimizer = build_optimizer(self.net, self.schedule, fused=self.fused)
        self.lookahead = Lookahead(self.net.parameters(), s.lookahead_k, s.lookahead_alpha) if s.lookahead_k > 0 else None
        self.swa = SwaAverage(self.net.model, s.swa_scale, s.swa_period) if s.swa_scale > 0 and ctx.is_main else None
        self.loss = KataGoLoss(LossScales(s.soft_policy_weight_scale, s.value_loss_scale, tuple(s.td_value_loss_scales),
                                          s.seki_loss_scale, s.variance_time_loss_scale, s.disable_optimistic_policy))
        self.amp_dtype, self.scaler = self._mixed_precision()
        self.stream = DataStream(
            s.data_dir, s.batch_size, ctx.world_size, ctx.rank, seed, s.samples_per_epoch, s.window_min_rows,
            s.window_expand_per_row, s.window_taper_exponent, s.window_max_rows, with_meta=model.needs_metadata,
            symmetries=s.random_symmetries, history_dropout=s.history_dropout, log=self.log,
            validation_fraction=s.validation_fraction)
        self.metrics_log = MetricsLog(s.output_dir, self.log) if ctx.is_main else None
        self.validation_log = (MetricsLog(s.output_dir, self.log, VALIDATION_METRICS_FILE)
                               if ctx.is_main and s.validation_fraction > 0 else None)
        if state is not None:
            self._restore(state)
            self._agree_on_restored_window()
        else:   # lines of a run killed before its first checkpoint
            for log in (self.metrics_log, self.validation_log):
                if log is not None:
                    log.truncate_after(0)
        forward_net = self.net
        if ctx.is_distributed:
            forward_net = DistributedDataParallel(self.net, device_ids=[ctx.device.index] if ctx.device.type == "cuda" else None)
        self.eager_forward_net = forward_net
        self.compiled = Enabled(s.compile).resolve(ctx.device.type == "cuda")
        if self.compiled:   # (compiled at the first step; _forward falls back to eager if that fails)
            self.log("torch.compile: the first step compiles the net (a minute or two for big nets; "
                     "compile = false in the config skips it)")
            forward_net = torch.compile(forward_net)
        self.forward_net = forward_net
        self._compile_pending = self.compiled   # the first step compiles (or falls back)

    def _mixed_precision(self):
        choice, device = self.s.mixed_precision, self.ctx.device
        if device.type != "cuda" or choice == "off":
            return None, None
        if choice == "auto":
            choice = "bf16" if torch.cuda.is_bf16_supported() else "fp16"
        if choice == "bf16":
            return torch.bfloat16, None
        return torch.float16, torch.amp.GradScaler("cuda")

    def _restore(self, state: dict) -> None:
        self.samples = int(state["samples"])
        self.optimizer.load_state_dict(state["optimizer"])
        if self.lookahead is not None and state.get("lookahead") is not None:
            self.lookahead.load_state_dict(state["lookahead"])
        if self.swa is not None and state.get("swa") is not None:
            self.swa.load_state_dict(state["swa"])
        if self.scaler is not None and state.get("scaler") is not None:
            self.scaler.load_state_dict(state["scaler"])
        self.loss.load_state_dict(state["loss"])
        self.stream.load_state_dict(state["data"])
        self.exported = list(state.get("exported", []))
        self.bucket = dict(state.get("bucket", self.bucket))
        ckpt.restore_rng_states(state["rng"])
        for log in (self.metrics_log, self.validation_log):
            if log is not None:
                log.truncate_after(self.samples)
        self._validated_at = self.samples
        before = state.get("validation_fraction", 0.0)
        if before != self.s.validation_fraction:   # a file changes sides only this way: say so
            self.log(f"note: validationFraction was {before:g} and is {self.s.validation_fraction:g} now: "
                     + ("files trained on before are validated from here" if self.s.validation_fraction > before
                        else "files held out before are trained on from here"))

    def _agree_on_restored_window(self) -> None:
        """Under torchrun, a resumed run's window as every rank can read it: if a file of it is gone on any
        rank, every rank begins a new epoch (one rank alone would rescan while the others trained); otherwise
        each reads its rows now, the ranks agreeing on unreadable files as at an epoch's start."""
        stream, ctx = self.stream, self.ctx
        if not ctx.is_distributed or stream.state.epoch < 0:
            return
        if any_rank_true(stream.rescan_forced, ctx):
            stream.force_rescan()
            return
        self._agree_on_window(stream.load_window)

    # ------------------------------------------------------------------------------ validation

    def validate(self, epoch: int) -> Optional[dict]:
        """Rank 0: the net's losses per row on the newest held-out rows (validationFraction), after ``epoch``,
        appended to metrics_val.jsonl and logged; None where there is nothing to validate (or on another rank)."""
        if self.validation_log is None or self._validated_at == self.samples:
            return None
        self._validated_at = self.samples
        files = [f for f in self.stream.scan() if f.validation]
        if not files:
            if not self._no_validation_files_said:
                self._no_validation_files_said = True
                self.log(f"no validation files yet (validationFraction = {self.s.validation_fraction}): "
                         "validation waits for them")
            return None
        plan = newest_rows(files, self.s.max_validation_samples)
        batches = validation_batches(plan, self.s.batch_size, self.stream.with_meta)
        rows, per_row = evaluate(self.net, self.loss, batches, self.ctx.device, self.amp_dtype, self.channels_last)
        if not rows:
            return None
        record = {"samples": self.samples, "epoch": epoch, "rows": rows, "loss": per_row.pop("loss"), **per_row,
                  "files": len(plan), "time": time.time()}
        self.validation_log.append(record)
        self.log(f"validation at {self.samples} samples: loss {record['loss']:.4f} over {rows} held-out rows")
        return record

    # ------------------------------------------------------------------------------ saving

    def save_checkpoint(self, data_state: dict) -> None:
        if not self.ctx.is_main:
            return
        state = {
            "samples": self.samples,
            "seed": self.seed,
            "net": self.net.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "optimizer_name": self.s.optimizer,
            "lookahead": self.lookahead.state_dict() if self.lookahead else None,
            "swa": self.swa.state_dict() if self.swa else None,
            "scaler": self.scaler.state_dict() if self.scaler else None,
            "loss": self.loss.state_dict(),
            "data": self.stream.portable(data_state),
            "exported": self.exported,
            "from_init_model": self._from_init_model,
            "validation_fraction": self.s.validation_fraction,
            "bucket": self.bucket,
            "rng": ckpt.capture_rng_states(),
        }
        ckpt.save_checkpoint(ckpt.checkpoint_path(self.s.output_dir), state)
        self._export_unlisted = False

    def export_model(self) -> Optional[str]:
        if not self.ctx.is_main or not self.s.export_dir:
            return None
        # Export the SWA average once it has snapshots; otherwise the lookahead's committed weights.
        if self.swa is not None and self.swa.snapshots > 0:
            weights = self.swa.average
        elif self.lookahead is not None and not self.lookahead.in_sync:
            weights = self._lookahead_slow_model_state()
        else:
            weights = None
        model = model_with_weights(self.net.model, weights)
        broken = [] if model.meta_encoder_version else nonfinite_outputs(model)
        if broken:
            raise TrainingError(f"training diverged: the net's {', '.join(broken)} outputs are not finite, so it is "
                                "not exported; lower lrScale / lrSchedule and train again from an earlier export "
                                "(-init-model, a new -output-dir) or afresh")
        path = export_to_models_dir(model, self.s.export_dir, self._export_name(), {
            "samples": self.samples, "data_rows": self.stream.state.total_rows_seen,
            "swa_snapshots": self.swa.snapshots if self.swa else 0, "time": time.time()})
        self.exported.append(os.path.abspath(path))   # (a restart may run from another directory)
        self._export_unlisted = True
        self.log(f"exported {path}")
        return path

    def _export_name(self) -> str:
        """The name the net at this sample count is exported under."""
        prefix = self.s.export_prefix_for(architecture_name(self.net.model))
        return export_name(prefix, self.samples, self.stream.state.total_rows_seen)

    def _final_export_missing(self) -> bool:
        """Whether exports are asked for and the net at this sample count has none in the export folder."""
        if not self.ctx.is_main or not self.s.export_dir:
            return False
        return not os.path.exists(export_path(self.s.export_dir, self._export_name()))

    def _lookahead_slow_model_state(self) -> dict:
        slow_by_param = {id(p): slow for p, slow in zip(self.lookahead.params, self.lookahead.slow)}
        state = self.net.model.state_dict(keep_vars=True)
        return {name: slow_by_param.get(id(t), t).detach() for name, t in state.items()}

    # ------------------------------------------------------------------------------ training

    def train_step(self, batch: Batch) -> StepResult:
        """One optimizer step on this rank's batch. Nothing here waits for the GPU: a step with non-finite
        gradients is skipped on the device (fused optimizer, or GradScaler's own check under fp16)."""
        batch = batch.to(self.ctx.device, non_blocking=True)
        lr = self.schedule.apply(self.optimizer, self.samples)
        autocast = (torch.autocast(device_type=self.ctx.device.type, dtype=self.amp_dtype)
                    if self.amp_dtype is not None else contextlib.nullcontext())
        with autocast:
            out = self._forward(batch)
        out = TrainOutputs(*(t.float() for t in out))  # no copy for outputs already in float32
        total, terms = self.loss(out, batch)
        terms["loss"] = total.detach()
        # DDP averages gradients over ranks; scaling by the world size keeps them sums over the global batch.
        scaled = total * self.ctx.world_size
        self.optimizer.zero_grad(set_to_none=True)
        if self.scaler is not None:
            self.scaler.scale(scaled).backward()
            self.scaler.unscale_(self.optimizer)
        else:
            scaled.backward()
        gnorm = torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.schedule.gnorm_cap(self.samples)).detach()
        finite = torch.isfinite(gnorm)
        if self.scaler is not None:
            self.scaler.step(self.optimizer)  # skips the step itself when gradients overflowed
            self.scaler.update()
        elif self.fused:
            self.optimizer.found_inf = (~finite).float()  # the fused kernels skip the update when this is 1
            self.optimizer.step()
        elif bool(finite):
            self.optimizer.step()
        if self.lookahead is not None:
            self.lookahead.step()
        self.samples += self.stream.global_batch
        if self.swa is not None:
            self.swa.after_step(self.stream.global_batch, self.lookahead is None or self.lookahead.in_sync)
        return StepResult(terms, gnorm, finite, lr)

    def _forward(self, batch: Batch):
        """The net's outputs for a batch. The first call of a compiled net compiles it: if that fails (no
        Triton or compiler for this GPU, an operator inductor cannot take), training goes on eagerly."""
        args = (batch.spatial, batch.global_inputs, batch.meta, batch.mask_full)
        if not self._compile_pending:
            return self.forward_net(*args)
        self._compile_pending = False
        try:
            return self.forward_net(*args)
        except Exception as exc:   # noqa: BLE001 -- any compile failure; a real error is raised again eagerly
            self.log(f"torch.compile failed ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                     "training without it (compile = false in the config skips the attempt)")
            self.compiled = False
            self.forward_net = self.eager_forward_net
            return self.forward_net(*args)

    def _check_divergence(self) -> None:
        """Fail if a long run of steps had non-finite gradients since the last check (reads the device)."""
        longest = self.bad_steps.longest_since_last_check()
        if longest >= MAX_CONSECUTIVE_BAD_STEPS:
            raise TrainingError(f"training diverged: {longest} steps in a row had non-finite gradients; "
                                "lower lrScale or check the data")

    def _sum_over_ranks(self, running: RunningMetrics) -> dict[str, float]:
        if self.ctx.is_distributed and running.sums is not None:
            rows = torch.tensor([running.rows], dtype=torch.float64, device=running.sums.device)
            t = torch.cat((running.sums.double(), rows))
            dist.all_reduce(t)
            running.sums = t[:-1]
            running.rows = int(t[-1].item())
        return running.per_row()

    def run(self) -> TrainResult:
        try:
            return self._run()
        except BaseException:
            # A new run that fails before its first checkpoint (data the net cannot read, ...) leaves no
            # initial net behind (the next attempt starts afresh anyway); a run with a checkpoint keeps all.
            if self._lock_file is not None and not os.path.exists(ckpt.checkpoint_path(self.s.output_dir)):
                with contextlib.suppress(OSError):
                    os.remove(ckpt.initial_model_path(self.s.output_dir))
            raise
        finally:
            if self._lock_file is not None:
                self._lock_file.close()   # releases the output folder's lock
                self._lock_file = None

    def _run(self) -> TrainResult:
        self._setup()
        s = self.s
        max_samples = s.max_samples
        if max_samples and self.samples >= max_samples:
            if self._final_export_missing():
                # The last run stopped between its final checkpoint and export (a full disk, a kill), or had
                # no -export-dir: export what it trained, so running the same command again finishes the job.
                self.log(f"already trained {self.samples} samples (maxSamples {max_samples}); exporting the net, "
                         "which the last run did not")
                if self.export_model() is not None:
                    self.save_checkpoint(self.stream.state_dict())   # so that it lists the export
            else:
                self.log(f"already trained {self.samples} samples (maxSamples {max_samples}); nothing to do")
            return TrainResult(self.samples, self.exported)
        running = RunningMetrics()
        run_start = self.samples
        last = {"metrics": self.samples, "checkpoint": self.samples, "export": self.samples}
        window_time = time.perf_counter()
        window_samples = self.samples
        last_metrics: dict = {}
        lr = 0.0
        prefetch = Prefetcher(self.stream, Batch.staged_for_gpu if self.ctx.device.type == "cuda" else None)
        interrupted = False
        resume_state: Optional[dict] = None  # where a checkpoint must say the data stream is
        trained_taken = False   # whether the batch last taken has been trained (for a stop mid-step)
        try:
            with _StopFlag() as stop:
                if not self._prepare_epoch(stop):
                    raise _Interrupted
                prefetch.request(self.samples)
                while prefetch.pending is not None:
                    batch = prefetch.take()
                    trained_taken = False
                    after = self.samples + self.stream.global_batch
                    if not max_samples or after < max_samples:
                        # Begin the next batch's epoch (main thread: it may wait for data and talk to other
                        # ranks), then let the worker assemble that batch while this one trains.
                        try:
                            ready = self._prepare_epoch(stop, after)
                        except _DATA_ERRORS as exc:   # data gone or unusable: keep what this run trained
                            prefetch.close()
                            self._save_before_error_of(prefetch.state_before_taken(), last["checkpoint"], exc)
                            raise
                        if not ready:
                            interrupted = True
                            resume_state = prefetch.state_before_taken()  # this batch stays untrained
                            self.log("interrupted while waiting for data: saving a checkpoint")
                            break
                        prefetch.request(after)
                    step = self.train_step(batch)
                    trained_taken = True
                    if self.stream.state.epoch > 0 and self.samples == self.stream.state.epoch_start_samples:
                        self.validate(self.stream.state.epoch - 1)   # that epoch's last step is done (rank 0)
                    lr = step.lr
                    self.bad_steps.record(step.finite)
                    running.add(step.terms, len(batch), torch.where(step.finite, step.gnorm, 0.0))
                    if self.progress is not None:
                        self.progress(self.samples, max_samples, last_metrics)
                    if metrics_due(self.samples, last["metrics"], run_start, s.metrics_every_samples,
                                   self.stream.global_batch):
                        self._check_divergence()
                        last_metrics = self._emit_metrics(running, lr, window_samples, window_time)
                        window_samples, window_time = self.samples, time.perf_counter()
                        last["metrics"] = self.samples
                    if self.samples // s.checkpoint_interval > last["checkpoint"] // s.checkpoint_interval:
                        self._check_divergence()
                        self.save_checkpoint(prefetch.resume_state())
                        last["checkpoint"] = self.samples
                    if self.samples // s.export_interval > last["export"] // s.export_interval:
                        self._check_divergence()
                        self.export_model()
                        last["export"] = self.samples
                    if any_rank_true(stop.requested, self.ctx):
                        interrupted = True
                        self.log("interrupted: saving a checkpoint")
                        break
        except _Interrupted:
            interrupted = True
        except RuntimeError as exc:
            if not is_peer_lost(exc, self.ctx):
                raise
            prefetch.close()
            # The last finished step's state: a step a peer's loss broke off never reached the optimizer.
            data_state = prefetch.resume_state() if trained_taken else prefetch.state_before_taken()
            self._stop_after_peer_lost(data_state, last["checkpoint"], exc)
        finally:
            prefetch.close()
        self._check_divergence()
        if running.rows:
            last_metrics = self._emit_metrics(running, lr, window_samples, window_time)
        data_state = resume_state or prefetch.resume_state()
        # A Ctrl-C now only asks for what is being done anyway (a second one still aborts): the checkpoint and
        # the export are written whole, not left half made.
        with _StopFlag(requested=interrupted):
            if last["checkpoint"] != self.samples or interrupted:
                self.save_checkpoint(data_state)   # first: a failing export below loses no training
            if not interrupted and last["export"] != self.samples:
                self.export_model()
            if self._export_unlisted:   # (also one made in the loop right after that sample count's checkpoint)
                self.save_checkpoint(data_state)   # again, so the checkpoint lists the export (the run's last word)
            if not interrupted:
                self.validate(self.stream.state.epoch)
            if self.metrics_log is not None:
                self.metrics_log.plot()
        barrier(self.ctx)
        return TrainResult(self.samples, self.exported, interrupted, last_metrics)

    def _stop_after_peer_lost(self, data_state: Optional[dict], last_checkpoint: int, exc: RuntimeError) -> None:
        """Another training process stopped (killed, crashed) and a collective operation failed: rank 0
        checkpoints what was trained since the last checkpoint (checkpointEverySamples' worth at most) and every
        rank ends with one line instead of the communication library's traceback."""
        saved = ""
        if self.ctx.is_main and self.samples != last_checkpoint and data_state is not None:
            self._check_divergence()   # as before every checkpoint: a diverged net is not saved over a sound one
            self.save_checkpoint(data_state)
            saved = f"; the {self.samples} samples trained so far are saved in {self.s.output_dir}"
        raise TrainingError(f"another training process stopped ({first_line(exc)}){saved}: run the same command "
                            "again to go on") from None

    def _save_before_error_of(self, data_state: dict, last_checkpoint: int, exc: Exception) -> None:
        """The data failed at an epoch's start (files gone, another board edge): checkpoint the samples trained
        since the last checkpoint before the error ends the run, and say so in its message."""
        if self.samples == last_checkpoint:
            return
        self._check_divergence()   # as before every checkpoint: a diverged net is not saved over a sound one
        self.save_checkpoint(data_state)
        note = (f" (the {self.samples} samples trained so far are saved in {self.s.output_dir}: run the same "
                "command again once the data is mended)")
        exc.args = (f"{exc.args[0] if exc.args else exc}{note}", *exc.args[1:])

    def _prepare_epoch(self, stop: "_StopFlag", samples: Optional[int] = None) -> bool:
        """Begin the next epoch if the next batch needs one: rank 0 rescans the data and, when training is
        throttled by new data, waits until enough has arrived; every rank then starts the same window.
        Returns False if a stop was requested while waiting."""
        samples = self.samples if samples is None else samples
        if not self.stream.epoch_due(samples):
            return True
        s, ctx = self.s, self.ctx
        per_epoch = float(s.samples_per_epoch)
        waited = False
        while True:
            files, ready = None, True
            if ctx.is_main:
                files = self.stream.scan()
                if s.max_train_samples_per_new_row > 0:
                    self._fill_bucket(sum(f.rows for f in files))
                    ready = self.bucket["level"] >= EPOCH_BUCKET_FRACTION * per_epoch
            files, ready, self.bucket = broadcast_object((files, ready, self.bucket), ctx)
            if ready:
                break
            if not waited:
                waited = True
                self.log(f"waiting for new data: {self.bucket['level']:.0f} samples allowed, an epoch needs {per_epoch:.0f} "
                         f"(maxTrainSamplesPerNewRow = {s.max_train_samples_per_new_row})")
            deadline = time.monotonic() + s.data_poll_seconds
            while time.monotonic() < deadline and not stop.requested:
                time.sleep(min(STOP_CHECK_SECONDS, s.data_poll_seconds))
            if any_rank_true(stop.requested, ctx):
                return False
        if s.max_train_samples_per_new_row > 0:
            self.bucket["level"] -= per_epoch
        self._begin_epoch_on_every_rank(samples, files)
        return True

    def _raise_agreed(self, error: Optional[Exception]) -> None:
        """Raise this rank's setup error, if any. Under torchrun every rank stops if one cannot start, and
        rank 0 says why: the error itself where every rank hit it alike, else each failing rank's own (a folder
        one node lacks), by rank."""
        if not self.ctx.is_distributed:
            if error is not None:
                raise error
            return
        messages = gather_objects(None if error is None else str(error), self.ctx)
        failed = [(rank, message) for rank, message in enumerate(messages) if message is not None]
        if not failed:
            return
        if error is not None and len(failed) == len(messages) and len({m for _, m in failed}) == 1:
            raise mark_raised_on_every_rank(error)
        raise mark_raised_on_every_rank(TrainingError("; ".join(f"rank {rank}: {message}" for rank, message in failed)))

    def _begin_epoch_on_every_rank(self, samples: int, files: list) -> None:
        """Begin the epoch with the same window on every rank (see _agree_on_window)."""
        self._agree_on_window(lambda: self.stream.begin_epoch(samples, files))

    def _agree_on_window(self, load: Callable[[], None]) -> None:
        """Run ``load`` (each rank reads its window's rows itself) and make the ranks agree on the window: a
        file one rank cannot read (a network file system that shows it late, a file deleted between two reads)
        is left out by every rank, and a data error on any rank ends the run on every rank alike (the first
        such rank's error), so that rank 0 saves what was trained and the message says so truly."""
        ctx = self.ctx
        error = _error_of(load)
        if not ctx.is_distributed:
            if error is not None:
                raise error
            return
        while True:   # each round can only shrink the window, so the ranks agree within a few
            reports = gather_objects((error, [part.path for part in self.stream.state.window]), ctx)
            failed = [(rank, err) for rank, (err, _) in enumerate(reports) if err is not None]
            if failed:
                rank, first = failed[0]
                raise mark_raised_on_every_rank(error if error is not None else type(first)(f"{first} (on rank {rank})"))
            windows = [paths for _, paths in reports]
            readable_everywhere = set(windows[0]).intersection(*map(set, windows[1:]))
            if all(len(paths) == len(readable_everywhere) for paths in windows):
                return
            for path in sorted(set().union(*map(set, windows)) - readable_everywhere):
                lacking = [str(rank) for rank, paths in enumerate(windows) if path not in set(paths)]
                self.log(f"leaving {path} out of this epoch's window: rank {', '.join(lacking)} cannot read it")
            agreed = [path for path in windows[0] if path in readable_everywhere]
            own = [part.path for part in self.stream.state.window]
            error = _error_of(lambda: self.stream.restrict_window(agreed)) if own != agreed else None

    def _fill_bucket(self, total_rows: int) -> None:
        b = self.bucket
        if b["rows_at_fill"] < 0 or total_rows < b["rows_at_fill"]:
            b["rows_at_fill"] = total_rows  # first fill, or data was deleted: count from here
        new_rows = total_rows - b["rows_at_fill"]
        if new_rows > 0:
            b["rows_at_fill"] = total_rows
            cap = max(self.s.max_train_bucket_samples or float("inf"), float(self.s.samples_per_epoch))
            b["level"] = min(cap, b["level"] + new_rows * self.s.max_train_samples_per_new_row)

    def _emit_metrics(self, running: RunningMetrics, lr: float, window_samples: int, window_time: float) -> dict:
        per_row = self._sum_over_ranks(running)
        running.reset()
        elapsed = max(time.perf_counter() - window_time, 1e-9)
        record = {
            "samples": self.samples,
            "epoch": self.stream.state.epoch,
            "lr": lr,
            "samples_per_sec": (self.samples - window_samples) / elapsed,
            "loss": per_row.pop("loss", float("nan")),
            **per_row,
            "window_rows": self.stream.window_rows,
            "time": time.time(),
        }
        if self.metrics_log is not None:
            self.metrics_log.append(record)
            if time.monotonic() - self._last_plot_time >= PLOT_INTERVAL_SECONDS:
                self.metrics_log.plot()
                self._last_plot_time = time.monotonic()
        return record


LOCK_FILE = ".kata-train.lock"


def lock_output_dir(output_dir: str):
    """Hold ``output_dir`` for this run (the open lock file; closing it, or the process ending however it
    ends, releases it): a second `kata train` on the same folder would interleave the metrics and write over
    the checkpoint and exports. None where the system has no file locks."""
    try:
        import fcntl
    except ImportError:   # Windows: no flock
        return None
    handle = open(os.path.join(output_dir, LOCK_FILE), "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.seek(0)
        holder = handle.read().strip()
        handle.close()
        raise TrainingError(f"another kata train{f' (pid {holder})' if holder else ''} is training in "
                            f"{output_dir}; wait for it, or give this run its own -output-dir") from None
    handle.seek(0)
    handle.truncate()
    handle.write(str(os.getpid()))
    handle.flush()
    return handle


def run_training(settings: TrainSettings, ctx: Optional[DistributedContext] = None,
                 log: Callable[[str], None] = print, progress=None) -> TrainResult:
    return Trainer(settings, ctx, log, progress).run()
