"""Training settings: every knob of ``kata train``, read from a ``.cfg`` file and the command line.

Each setting is a config key (camelCase, as KataGo's configs spell keys) with a type, range,
default and a one-line description; command-line flags override the file. Defaults follow
KataGo's ``train.py`` and ``shuffle.py`` (per-sample learning rate 3e-5 x lrScale, SGD with
momentum 0.9, lookahead 6/0.5, SWA over 8 snapshots, a warmup over the first 2M samples, a
power-law window over the newest rows); small experiments mostly shrink the sample counts.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, Optional, TextIO

from katacli import config_keys
from katacli.config import Config, ConfigError

MODEL_KIND_DEFAULT = "b6c96"
BIG_INT = 10**15


@dataclass(frozen=True)
class TrainKey:
    key: str
    field: str
    kind: str  # int, float, bool, str, choice, floats3
    default: Any
    help: str
    minimum: Optional[float] = None
    maximum: Optional[float] = None
    choices: tuple[str, ...] = ()


def _k(key, field_name, kind, default, help_text, minimum=None, maximum=None, choices=()):
    return TrainKey(key, field_name, kind, default, help_text, minimum, maximum, tuple(choices))


TRAIN_KEYS: tuple[TrainKey, ...] = (
    # -- what to train on and where to write
    _k("dataDir", "data_dir", "str", "", "Directory of training files (.h5/.npz, searched recursively)."),
    _k("outputDir", "output_dir", "str", "", "Directory for checkpoints, metrics.jsonl and the loss plot."),
    _k("exportDir", "export_dir", "str", "", "Directory to export .bin.gz models into (selfplay watches it); empty: no export."),
    _k("exportPrefix", "export_prefix", "str", "", "Exported model names start with this (default kata-<architecture>, e.g. kata-b6c96)."),
    _k("modelKind", "model_kind", "str", MODEL_KIND_DEFAULT, "Architecture of a fresh net: b6c96, b10c128, b18c384nbt, ..."),
    _k("initModel", "init_model", "str", "", "Start a fresh run from this KataGo .bin.gz net instead of random weights."),
    _k("maxSamples", "max_samples", "int", 0, "Stop after this many training samples in total (0: run until interrupted).", 0, BIG_INT),
    # -- batches and the data window
    _k("batchSize", "batch_size", "int", 256, "Rows per batch on each process (the global batch is this times the world size).", 1, 1 << 16),
    _k("samplesPerEpoch", "samples_per_epoch", "int", 1_000_000, "Samples between rescans of the data dir (new window, new shuffle).", 1, BIG_INT),
    _k("windowMinRows", "window_min_rows", "int", 250_000, "The window over the newest rows is at least this big (KataGo shuffle -min-rows).", 1, BIG_INT),
    _k("windowMaxRows", "window_max_rows", "int", 0, "Cap on the window size (0: none).", 0, BIG_INT),
    _k("windowExpandPerRow", "window_expand_per_row", "float", 0.4, "Window growth per new row beyond windowMinRows (-expand-window-per-row).", 0.0, 1.0),
    _k("windowTaperExponent", "window_taper_exponent", "float", 0.675, "Power law of the window growth (-taper-window-exponent).", 0.01, 1.0),
    _k("randomSymmetries", "random_symmetries", "bool", True, "Train each batch in a random board symmetry."),
    _k("historyDropout", "history_dropout", "bool", True, "Randomly hide move history (2% per step), as KataGo does."),
    _k("maxTrainSamplesPerNewRow", "max_train_samples_per_new_row", "float", 0.0,
       "Throttle for training beside a running self-play: each new data row allows this many samples, an epoch waits "
       "until it has enough (KataGo -max-train-bucket-per-new-data); 0: no limit.", 0.0, 1e6),
    _k("maxTrainBucketSamples", "max_train_bucket_samples", "int", 0,
       "Cap on the allowance that builds up while data comes faster than training (0: none).", 0, BIG_INT),
    _k("dataPollSeconds", "data_poll_seconds", "float", 10.0, "While throttled, look for new data this often.", 0.01, 3600.0),
    # -- optimizer and schedule
    _k("optimizer", "optimizer", "choice", "sgd", "sgd (momentum 0.9, KataGo's default) or adamw.", choices=("sgd", "adamw")),
    _k("lrScale", "lr_scale", "float", 1.0, "Multiplier on KataGo's per-sample learning rate of 3e-5.", 0.0, 1000.0),
    _k("lrSchedule", "lr_schedule", "str", "", "Piecewise lrScale by samples, e.g. (0,1.0),(20M,0.5),(40M,0.25) (replaces lrScale)."),
    _k("lrWarmupSamples", "lr_warmup_samples", "int", 2_000_000, "Length of KataGo's stepped LR warmup from 1/20 to 1 (0: no warmup).", 0, BIG_INT),
    _k("headLrFactor", "head_lr_factor", "float", 0.5, "LR factor for the output heads.", 0.0, 100.0),
    _k("noregLrFactor", "noreg_lr_factor", "float", 1.0, "LR factor for biases and norm parameters.", 0.0, 100.0),
    _k("gnormClipScale", "gnorm_clip_scale", "float", 1.0, "Multiplier on KataGo's gradient-norm clipping threshold.", 0.0, 1e9),
    _k("lookaheadK", "lookahead_k", "int", 6, "Lookahead optimizer: sync the slow weights every k steps (0: off).", 0, 1000),
    _k("lookaheadAlpha", "lookahead_alpha", "float", 0.5, "Lookahead step towards the fast weights.", 0.01, 1.0),
    _k("swaScale", "swa_scale", "float", 8.0, "Exported nets average about this many SWA snapshots (0: export the raw net).", 0.0, 1e6),
    _k("swaPeriodSamples", "swa_period_samples", "int", 0, "Samples between SWA snapshots (0: half of samplesPerEpoch).", 0, BIG_INT),
    # -- loss scales
    _k("softPolicyWeightScale", "soft_policy_weight_scale", "float", 8.0, "Scale of the soft policy losses.", 0.0, 1000.0),
    _k("valueLossScale", "value_loss_scale", "float", 0.6, "Scale of the game-result loss.", 0.0, 1000.0),
    _k("tdValueLossScales", "td_value_loss_scales", "floats3", (0.6, 0.6, 0.6), "Scales of the long/mid/short-term value losses.", 0.0, 1000.0),
    _k("sekiLossScale", "seki_loss_scale", "float", 1.0, "Scale of the seki loss.", 0.0, 1000.0),
    _k("varianceTimeLossScale", "variance_time_loss_scale", "float", 1.0, "Scale of the variance-time loss.", 0.0, 1000.0),
    _k("disableOptimisticPolicy", "disable_optimistic_policy", "bool", False, "Train optimistic policies as plain (half-weight) policies."),
    # -- bookkeeping
    _k("checkpointEverySamples", "checkpoint_every_samples", "int", 0, "Samples between checkpoints (0: once per epoch).", 0, BIG_INT),
    _k("exportEverySamples", "export_every_samples", "int", 0, "Samples between exports (0: once per epoch).", 0, BIG_INT),
    _k("metricsEverySamples", "metrics_every_samples", "int", 25_600, "Most samples between metrics.jsonl lines (lines come after 1, 2, 4, ... batches until then).", 1, BIG_INT),
    _k("seed", "seed", "int", -1, "Seed of data order, augmentation and new weights (-1: random, then stored in the checkpoint).", -1, 2**62),
    # -- hardware
    _k("device", "device", "choice", "auto", "auto (CUDA when present), cpu or cuda.", choices=("auto", "cpu", "cuda")),
    _k("mixedPrecision", "mixed_precision", "choice", "auto", "auto (bf16 on CUDA if supported, else fp16), off, bf16, fp16; CUDA only.",
       choices=("auto", "off", "bf16", "fp16")),
    _k("compile", "compile", "bool", False, "torch.compile the net (faster on GPUs, slow to start)."),
    _k("numCpuThreads", "num_cpu_threads", "int", 0, "Torch CPU threads (0: torch's default).", 0, 1024),
)
TRAIN_KEYS_BY_NAME = {k.key: k for k in TRAIN_KEYS}


@dataclass
class TrainSettings:
    data_dir: str = ""
    output_dir: str = ""
    export_dir: str = ""
    export_prefix: str = ""
    model_kind: str = MODEL_KIND_DEFAULT
    init_model: str = ""
    max_samples: int = 0
    batch_size: int = 256
    samples_per_epoch: int = 1_000_000
    window_min_rows: int = 250_000
    window_max_rows: int = 0
    window_expand_per_row: float = 0.4
    window_taper_exponent: float = 0.675
    random_symmetries: bool = True
    history_dropout: bool = True
    max_train_samples_per_new_row: float = 0.0
    max_train_bucket_samples: int = 0
    data_poll_seconds: float = 10.0
    optimizer: str = "sgd"
    lr_scale: float = 1.0
    lr_schedule: str = ""
    lr_warmup_samples: int = 2_000_000
    head_lr_factor: float = 0.5
    noreg_lr_factor: float = 1.0
    gnorm_clip_scale: float = 1.0
    lookahead_k: int = 6
    lookahead_alpha: float = 0.5
    swa_scale: float = 8.0
    swa_period_samples: int = 0
    soft_policy_weight_scale: float = 8.0
    value_loss_scale: float = 0.6
    td_value_loss_scales: tuple[float, float, float] = (0.6, 0.6, 0.6)
    seki_loss_scale: float = 1.0
    variance_time_loss_scale: float = 1.0
    disable_optimistic_policy: bool = False
    checkpoint_every_samples: int = 0
    export_every_samples: int = 0
    metrics_every_samples: int = 25_600
    seed: int = -1
    device: str = "auto"
    mixed_precision: str = "auto"
    compile: bool = False
    num_cpu_threads: int = 0
    # Parsed lrSchedule: (from samples, lr scale) points.
    lr_points: list[tuple[int, float]] = field(default_factory=list)

    @property
    def checkpoint_interval(self) -> int:
        return self.checkpoint_every_samples or self.samples_per_epoch

    @property
    def export_interval(self) -> int:
        return self.export_every_samples or self.samples_per_epoch

    @property
    def swa_period(self) -> int:
        return self.swa_period_samples or max(1, self.samples_per_epoch // 2)

    def export_prefix_for(self, architecture: str) -> str:
        """``exportPrefix``, or ``kata-<architecture>`` (e.g. kata-b6c96), as a valid model name."""
        base = self.export_prefix or f"kata-{architecture}"
        return re.sub(r"[^A-Za-z0-9_-]", "-", base)


_COUNT_SUFFIXES = {"": 1, "K": 10**3, "M": 10**6, "B": 10**9, "G": 10**9}
_SCHEDULE_POINT = re.compile(r"\(\s*([0-9.]+)\s*([KMBG]?)\s*,\s*([0-9.eE+-]+)\s*\)", re.IGNORECASE)


def parse_lr_schedule(text: str) -> list[tuple[int, float]]:
    """``(0,1.0),(20M,0.5)`` -> [(0, 1.0), (20000000, 0.5)]; raises ValueError with the reason."""
    points = []
    leftover = _SCHEDULE_POINT.sub("", text).replace(",", "").replace(";", "").strip()
    if leftover:
        raise ValueError(f"cannot parse {leftover!r}; write points like (0,1.0),(20M,0.5)")
    for count, suffix, scale in _SCHEDULE_POINT.findall(text):
        points.append((int(float(count) * _COUNT_SUFFIXES[suffix.upper()]), float(scale)))
    if not points:
        raise ValueError("no (samples,scale) points; write e.g. (0,1.0),(20M,0.5)")
    if points[0][0] != 0:
        raise ValueError("the first point must start at 0 samples")
    if any(b[0] <= a[0] for a, b in zip(points, points[1:])):
        raise ValueError("sample counts must increase from point to point")
    return points


def _read_key(cfg: Config, spec: TrainKey) -> Any:
    lo, hi = spec.minimum, spec.maximum
    if spec.kind == "int":
        return cfg.get_int(spec.key, spec.default, minimum=lo, maximum=hi)
    if spec.kind == "float":
        return cfg.get_float(spec.key, spec.default, minimum=lo, maximum=hi)
    if spec.kind == "bool":
        return cfg.get_bool(spec.key, spec.default)
    if spec.kind == "choice":
        return cfg.get_str(spec.key, spec.default, choices=spec.choices, ignore_case=True).lower()
    if spec.kind == "floats3":
        values = cfg.get_list_of_floats(spec.key, list(spec.default), minimum=lo, maximum=hi)
        if len(values) != 3:
            raise ConfigError(f"Invalid value for '{spec.key}': expected 3 comma-separated numbers, got {len(values)}")
        return tuple(values)
    return cfg.get_str(spec.key, spec.default)


def settings_from_config(cfg: Config, overrides: Optional[dict[str, Any]] = None) -> TrainSettings:
    """Settings from ``cfg``, then ``overrides`` (config key -> value, e.g. from flags; None values skipped).

    Raises :class:`ConfigError` for a bad value.
    """
    values = {spec.field: _read_key(cfg, spec) for spec in TRAIN_KEYS}
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        spec = TRAIN_KEYS_BY_NAME[key]
        if spec.kind in ("int", "float") and ((spec.minimum is not None and value < spec.minimum)
                                              or (spec.maximum is not None and value > spec.maximum)):
            raise ConfigError(f"{key} = {value} is out of range [{spec.minimum}, {spec.maximum}]")
        values[spec.field] = value
    settings = TrainSettings(**values)
    if settings.lr_schedule:
        try:
            settings.lr_points = parse_lr_schedule(settings.lr_schedule)
        except ValueError as exc:
            raise ConfigError(f"Invalid value for 'lrSchedule': {exc}") from None
        if settings.lr_scale != 1.0:
            raise ConfigError("set either lrScale or lrSchedule, not both")
    return settings


def unknown_train_keys(cfg: Config) -> list[str]:
    """Keys in ``cfg`` that neither the training settings nor the engine key registry know."""
    return [key for key in cfg.keys() if key not in TRAIN_KEYS_BY_NAME and not config_keys.is_known(key)]


def warn_unknown_train_keys(cfg: Config, stream: Optional[TextIO] = None) -> None:
    stream = stream or sys.stderr
    for key in unknown_train_keys(cfg):
        print(f"WARNING: Unknown config key '{key}' in {cfg.origin(key)}; kata train ignores it", file=stream)


def describe_keys() -> str:
    """A commented listing of every training key with its default (for docs and --help)."""
    lines = []
    for spec in TRAIN_KEYS:
        default = ",".join(str(v) for v in spec.default) if isinstance(spec.default, tuple) else spec.default
        lines.append(f"# {spec.help}\n{spec.key} = {str(default).lower() if isinstance(default, bool) else default}")
    return "\n".join(lines)

