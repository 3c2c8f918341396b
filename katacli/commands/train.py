"""``kata train``: train a KataGo network on self-play data and export it for self-play.

See :mod:`katacli.train` for the pieces and :mod:`katacli.train.distributed` for torchrun.
"""

from __future__ import annotations

import sys
import time
from typing import List, Optional

import typer

from katacli.cli_support import (
    EXIT_CONFIG_ERROR, OVERRIDE_CONFIG_HELP, load_config, report_error_and_exit, write_failure_message,
)
from katacli.config import ConfigError

EXIT_INTERRUPTED = 130

HELP = """Train a KataGo network on self-play data (HDF5 or KataGo .npz rows) and export it.

A run lives in OUTPUT_DIR: the first start creates a fresh net (-model-kind, default b6c96)
or starts from an existing one (-init-model); later starts resume exactly from
OUTPUT_DIR/checkpoint.pt. Each epoch rescans DATA_DIR and trains on a shuffled window over
its newest rows, like KataGo's shuffle.py + train.py. Every exportEverySamples samples the
net is written to EXPORT_DIR as <prefix>-s<samples>-d<rows>.bin.gz (what `kata selfplay
-models-dir` watches). Progress goes to OUTPUT_DIR/metrics.jsonl and loss_curves.png.

Ctrl-C finishes the current step and saves a checkpoint (press twice to abort at once); it
exports nothing. To export the net a checkpoint holds, run the same command with -max-samples at
or below the samples trained: it exports that net (unless it is already) and stops.

Examples:

  kata train -data-dir selfplay/ -output-dir train/b6 -export-dir models/ -max-samples 5000000

  kata train -data-dir D -output-dir T -config train.cfg -override-config "lrScale=0.5,batchSize=128"

  torchrun --standalone --nproc_per_node=4 -m katacli.cli train -data-dir D -output-dir T -export-dir M

`kata train -list-keys` prints every config key with its default.
"""


def _rich_console():
    try:
        from rich.console import Console

        return Console(stderr=True, soft_wrap=True)   # whole lines in a log file
    except ImportError:  # pragma: no cover - rich is a dependency
        return None


class _ProgressDisplay:
    """A rich progress bar on a terminal; occasional plain lines otherwise."""

    PLAIN_LINE_SECONDS = 30.0

    def __init__(self, console, enabled: bool):
        self.console = console
        self.bar = None
        self.task = None
        self._last_plain = 0.0
        if enabled and console is not None and console.is_terminal:
            from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("[bold]train"), BarColumn(), TextColumn("{task.completed:,.0f} samples"),
                                TextColumn("{task.fields[info]}"), TimeElapsedColumn(), console=console, transient=False)

    def __enter__(self):
        if self.bar is not None:
            self.bar.start()
        return self

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.stop()
        return False

    def log(self, message: str) -> None:
        if self.console is not None:
            self.console.print(message, highlight=False, markup=False)
        else:
            print(message, file=sys.stderr)

    def __call__(self, samples: int, max_samples: int, metrics: dict) -> None:
        info = ""
        if metrics:
            info = f"loss {metrics['loss']:.3f}  {metrics['samples_per_sec']:.0f} samples/s  lr {metrics['lr']:.2e}"
        if self.bar is not None:
            if self.task is None:
                self.task = self.bar.add_task("train", total=max_samples or None, completed=samples, info=info)
            self.bar.update(self.task, completed=samples, info=info)
        elif metrics and time.monotonic() - self._last_plain >= self.PLAIN_LINE_SECONDS:
            self._last_plain = time.monotonic()
            # The figures are the last metrics line's, which may be a few batches behind the count.
            self.log(f"{metrics['samples']} samples  {info}")


def register(app: typer.Typer) -> None:
    @app.command("train", help=HELP, no_args_is_help=False)
    def train(
        data_dir: Optional[str] = typer.Option(None, "--data-dir", metavar="DIR",
                                               help="Training data: .h5/.npz files, searched recursively (config: dataDir)."),
        output_dir: Optional[str] = typer.Option(None, "--output-dir", metavar="DIR",
                                                 help="Run directory: checkpoint, metrics.jsonl, loss plot (config: outputDir)."),
        model_kind: Optional[str] = typer.Option(None, "--model-kind", metavar="NAME",
                                                 help="Architecture of a new net, e.g. b6c96, b10c128, b18c384nbt (config: modelKind)."),
        init_model: Optional[str] = typer.Option(None, "--init-model", metavar="FILE",
                                                 help="Start a new run from this .bin.gz net (version 15+) instead (config: initModel)."),
        max_samples: Optional[int] = typer.Option(None, "--max-samples", metavar="N",
                                                  help="Stop after N training samples in total, counting earlier runs (config: maxSamples)."),
        export_dir: Optional[str] = typer.Option(None, "--export-dir", metavar="DIR",
                                                 help="Export .bin.gz models here, e.g. selfplay's -models-dir (config: exportDir)."),
        config: Optional[List[str]] = typer.Option(None, "--config", metavar="FILE",
                                                   help="Training config file (.cfg); may be repeated. See -list-keys."),
        override_config: Optional[List[str]] = typer.Option(
            None, "--override-config", metavar="KEY=VALUE,...",
            help=OVERRIDE_CONFIG_HELP.replace("maxVisits=200, numSearchThreads=8", "lrScale=0.5, swaScale=0")),
        batch_size: Optional[int] = typer.Option(None, "--batch-size", metavar="N", help="Rows per batch per process (config: batchSize)."),
        lr_scale: Optional[float] = typer.Option(None, "--lr-scale", metavar="X", help="Learning-rate multiplier (config: lrScale)."),
        seed: Optional[int] = typer.Option(None, "--seed", metavar="N", help="Seed of a new run (config: seed)."),
        device: Optional[str] = typer.Option(None, "--device", metavar="auto|cpu|cuda", help="Where to train (config: device)."),
        quiet: bool = typer.Option(False, "--quiet", help="No progress bar; a status line every 30 seconds instead."),
        list_keys: bool = typer.Option(False, "--list-keys", help="Print every training config key with its default and exit."),
    ) -> None:
        from katacli.config_keys.train_keys import TRAIN_DEVICES
        from katacli.train.settings import describe_keys, settings_from_config, warn_unknown_train_keys

        if list_keys:
            print(describe_keys())
            raise typer.Exit()
        cfg = load_config(config, override_config, mode=None, warn_unknown=False)
        flags = {
            "dataDir": data_dir, "outputDir": output_dir, "modelKind": model_kind, "initModel": init_model,
            "maxSamples": max_samples, "exportDir": export_dir, "batchSize": batch_size, "lrScale": lr_scale,
            "seed": seed, "device": device.lower() if device else None,
        }
        if device is not None and device.lower() not in TRAIN_DEVICES:
            report_error_and_exit(f"-device must be auto, cpu or cuda, not {device!r}")
        try:
            settings = settings_from_config(cfg, flags)
        except ConfigError as exc:
            report_error_and_exit(str(exc))
        warn_unknown_train_keys(cfg)
        _run(settings, quiet)


def _run(settings, quiet: bool) -> None:
    from katacli.train.checkpoint import CheckpointError
    from katacli.train.distributed import DeviceError, first_line, is_peer_lost, setup_distributed, teardown_distributed
    from katacli.train.rows import TrainingFileError
    from katacli.train.trainer import RAISED_ON_EVERY_RANK, AbortedBySecondInterrupt, TrainingError, run_training
    from katacli.train.window import NoTrainingDataError

    console = _rich_console()
    user_errors = (TrainingError, NoTrainingDataError, TrainingFileError, CheckpointError, DeviceError, ConfigError)
    try:
        ctx = setup_distributed(settings.device)
    except DeviceError as exc:
        report_error_and_exit(str(exc))
    finished = False
    try:
        with _ProgressDisplay(console, enabled=not quiet and ctx.is_main) as display:
            result = run_training(settings, ctx, log=display.log, progress=display)
        finished = True
    except user_errors as exc:
        # Under torchrun one process says what every process hit alike; another's own trouble names it.
        if ctx.is_main or not getattr(exc, RAISED_ON_EVERY_RANK, False):
            report_error_and_exit(f"{_rank_prefix(ctx)}{exc}", EXIT_CONFIG_ERROR)
        raise SystemExit(EXIT_CONFIG_ERROR)
    except OSError as exc:  # disk full, output directory not writable, ...
        report_error_and_exit(write_failure_message(exc, "training"))
    except RuntimeError as exc:
        if not is_peer_lost(exc, ctx):
            raise
        report_error_and_exit(f"{_rank_prefix(ctx)}another training process stopped ({first_line(exc)})")
    except KeyboardInterrupt as exc:
        if not ctx.is_main:   # torchrun passes a Ctrl-C to every process: rank 0 says what happened
            raise SystemExit(EXIT_INTERRUPTED)
        if isinstance(exc, AbortedBySecondInterrupt):
            print("aborted without saving (second Ctrl-C)", file=sys.stderr)
        else:   # before the training loop (loading data, building the net): nothing trained yet
            print("interrupted before training began: nothing to save", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED)
    finally:
        teardown_distributed(finished)
    if ctx.is_main:
        line = f"trained {result.samples} samples"
        if result.last_metrics:
            line += f", loss {result.last_metrics['loss']:.4f}"
        if result.exported:
            line += f"; latest export {result.exported[-1]}"
        print(line, file=sys.stderr)
    if result.interrupted:
        raise SystemExit(EXIT_INTERRUPTED)


def _rank_prefix(ctx) -> str:
    """"rank N: " before a message of a process other than rank 0 in a distributed run."""
    return f"rank {ctx.rank}: " if ctx.is_distributed and not ctx.is_main else ""
