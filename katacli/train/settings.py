"""Training settings: every knob of ``kata train``, read from a ``.cfg`` file and the command line.

Each setting is a config key of :mod:`katacli.config_keys.train_keys` (type, range, default and a
one-line description, written there once); :class:`TrainSettings` declares one field per key and is
built from the registry like every other settings class. Command-line flags override the file.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass, field
from typing import Any, Optional, TextIO

from katacli import config_keys
from katacli.config import Config, ConfigError
from katacli.config_keys.fields import ANY_MODE, build_settings, config_field, fields_by_key
from katacli.config_keys.spec import Enabled
from katacli.config_keys.train_keys import NUM_TD_VALUE_HEADS, TRAIN_KEYS


def _key(key: str, **extra: Any) -> Any:
    """A field read from ``key``, whose default is the registry's (the same in every mode)."""
    return config_field(key, default_mode=ANY_MODE, **extra)


@dataclass
class TrainSettings:
    data_dir: str = _key("dataDir")
    output_dir: str = _key("outputDir")
    export_dir: str = _key("exportDir")
    export_prefix: str = _key("exportPrefix")
    model_kind: str = _key("modelKind")
    init_model: str = _key("initModel")
    max_samples: int = _key("maxSamples")
    batch_size: int = _key("batchSize")
    samples_per_epoch: int = _key("samplesPerEpoch")
    window_min_rows: int = _key("windowMinRows")
    window_max_rows: int = _key("windowMaxRows")
    window_expand_per_row: float = _key("windowExpandPerRow")
    window_taper_exponent: float = _key("windowTaperExponent")
    validation_fraction: float = _key("validationFraction")
    max_validation_samples: int = _key("maxValidationSamples")
    random_symmetries: bool = _key("randomSymmetries")
    history_dropout: bool = _key("historyDropout")
    max_train_samples_per_new_row: float = _key("maxTrainSamplesPerNewRow")
    max_train_bucket_samples: int = _key("maxTrainBucketSamples")
    data_poll_seconds: float = _key("dataPollSeconds")
    optimizer: str = _key("optimizer")
    lr_scale: float = _key("lrScale")
    lr_schedule: str = _key("lrSchedule")
    lr_warmup_samples: int = _key("lrWarmupSamples")
    head_lr_factor: float = _key("headLrFactor")
    noreg_lr_factor: float = _key("noregLrFactor")
    gnorm_clip_scale: float = _key("gnormClipScale")
    lookahead_k: int = _key("lookaheadK")
    lookahead_alpha: float = _key("lookaheadAlpha")
    swa_scale: float = _key("swaScale")
    swa_period_samples: int = _key("swaPeriodSamples")
    soft_policy_weight_scale: float = _key("softPolicyWeightScale")
    value_loss_scale: float = _key("valueLossScale")
    td_value_loss_scales: tuple[float, float, float] = _key("tdValueLossScales", convert=tuple)
    seki_loss_scale: float = _key("sekiLossScale")
    variance_time_loss_scale: float = _key("varianceTimeLossScale")
    disable_optimistic_policy: bool = _key("disableOptimisticPolicy")
    checkpoint_every_samples: int = _key("checkpointEverySamples")
    export_every_samples: int = _key("exportEverySamples")
    metrics_every_samples: int = _key("metricsEverySamples")
    seed: int = _key("seed")
    device: str = _key("device")
    mixed_precision: str = _key("mixedPrecision")
    compile: Enabled = _key("compile")
    num_cpu_threads: int = _key("numCpuThreads")
    # Parsed lrSchedule: (from samples, lr scale) points.
    lr_points: list[tuple[int, float]] = field(default_factory=list)
    # modelKind came from the user (flag or config), not the default: a resumed run of another kind says so.
    model_kind_given: bool = False

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
        # Each run of other characters one dash, none at the end: the name is followed by -s<samples>-...
        return re.sub(r"[^A-Za-z0-9_-]+", "-", base).rstrip("-") or f"kata-{architecture}"


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
        if not 0.0 <= points[-1][1] <= MAX_LR_SCALE:   # NaN too
            raise ValueError(f"the scale {scale} is out of range [0, {MAX_LR_SCALE:g}] (as lrScale)")
    if not points:
        raise ValueError("no (samples,scale) points; write e.g. (0,1.0),(20M,0.5)")
    if points[0][0] != 0:
        raise ValueError("the first point must start at 0 samples")
    if any(b[0] <= a[0] for a, b in zip(points, points[1:])):
        raise ValueError("sample counts must increase from point to point")
    return points


# lrScale's bound, which each of lrSchedule's scales (lrScale by samples) keeps too.
MAX_LR_SCALE = config_keys.get_spec("lrScale").maximum

# Config key -> TrainSettings field, for flags given by key.
FIELD_OF_KEY: dict[str, str] = fields_by_key(TrainSettings)


def settings_from_config(cfg: Config, overrides: Optional[dict[str, Any]] = None) -> TrainSettings:
    """Settings from ``cfg``, then ``overrides`` (config key -> value, e.g. from flags; None values skipped).

    Raises :class:`ConfigError` for a bad value.
    """
    settings = build_settings(TrainSettings, cfg, ANY_MODE)
    if len(settings.td_value_loss_scales) != NUM_TD_VALUE_HEADS:
        raise ConfigError(f"Invalid value for 'tdValueLossScales': expected {NUM_TD_VALUE_HEADS} comma-separated "
                          f"numbers, got {len(settings.td_value_loss_scales)}")
    for key, value in (overrides or {}).items():
        if value is None:
            continue
        spec = config_keys.get_spec(key)
        if spec.kind in (config_keys.ValueKind.INT, config_keys.ValueKind.FLOAT) and (
                value != value   # NaN: no range holds it
                or (spec.minimum is not None and value < spec.minimum)
                or (spec.maximum is not None and value > spec.maximum)):
            raise ConfigError(f"{key} = {value} is out of range [{spec.minimum}, {spec.maximum}]")
        setattr(settings, FIELD_OF_KEY[key], value)
    settings.model_kind_given = "modelKind" in cfg or (overrides or {}).get("modelKind") is not None
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
    return cfg.unknown_keys()


def warn_unknown_train_keys(cfg: Config, stream: Optional[TextIO] = None) -> None:
    """After :func:`settings_from_config`: a warning for each key kata train does not know, and for each key of
    another command (maxVisits, numSearchThreads: a search config given to training by mistake)."""
    stream = stream or sys.stderr
    for key in unknown_train_keys(cfg):
        print(f"WARNING: Unknown config key '{key}' in {cfg.origin(key)}; kata train ignores it", file=stream)
    cfg.warn_unused_keys("kata train", stream)


def describe_keys() -> str:
    """A commented listing of every training key with its default (for docs and --help), usable as a config
    file as it is: a key without a default (a folder to name) is commented out, as an empty value is refused."""
    lines = []
    for spec in TRAIN_KEYS:
        default = ",".join(str(v) for v in spec.default) if isinstance(spec.default, tuple) else spec.default
        shown = str(default).lower() if isinstance(default, bool) else default
        setting = f"{spec.name} = {shown}" if str(shown) != "" else f"# {spec.name} = "
        lines.append(f"# {spec.description}\n{setting}")
    return "\n".join(lines)

