"""Training metrics: running sums, ``metrics.jsonl`` lines and the loss-curve plot.

Every line of ``metrics.jsonl`` is one JSON object: ``samples`` (trained so far), ``epoch``,
``lr`` (per-sample learning rate), ``samples_per_sec``, ``loss`` (the total KataGo loss per
row) and each loss term per row (``p0loss`` policy, ``p1loss`` opponent policy, ``vloss``
game result, ``tdvloss1-3`` td values, ``oloss`` ownership, ``sbpdfloss``/``sbcdfloss`` score
belief, ``leadloss``, ...), ``policy_accuracy``, ``gnorm`` (gradient norm before clipping)
and ``window_rows``. Lines come ever less often as a run goes on (:func:`metrics_due`); the
plot is redrawn during training, each line a point on the curves. The plot (``loss_curves.png``) needs matplotlib; without it the plot
is skipped with one notice.
"""

from __future__ import annotations

import json
import math
import os
from typing import Optional

import torch

from katacli.atomic_files import append_whole, atomic_output

METRICS_FILE = "metrics.jsonl"
VALIDATION_METRICS_FILE = "metrics_val.jsonl"   # (katacli.train.validation)
PLOT_FILE = "loss_curves.png"
# Curves drawn on the plot besides the total.
PLOTTED_TERMS = ("p0loss", "p1loss", "vloss", "tdvloss3", "oloss", "sbpdfloss", "leadloss", "skloss")
PLOT_SIZE_INCHES = (10, 6)
PLOT_DPI = 100
METRICS_FILE_MODE = 0o644
MARKER_SIZE = 3


def metrics_due(samples: int, last_emitted: int, run_start: int, every: int, batch: int) -> bool:
    """Whether a metrics line is due after ``samples``.

    Lines come after 1, 2, 4, 8, ... batches of this run, then every ``every`` samples
    (metricsEverySamples; KataGo prints every 100 batches): a short run still draws a curve
    and the early, fast-moving part of a long one is not a single point.
    """
    interval = min(every, max(batch, last_emitted - run_start))
    return samples - last_emitted >= interval


class RunningMetrics:
    """Sums of loss terms (each already summed over rows), the rows they cover and the gradient norms.

    Terms and norms stay tensors on the training device: each step adds them there with one stacked
    add, and only :meth:`per_row` (at a metrics line) reads them back, so steps never wait on the GPU.
    """

    def __init__(self):
        self.names: list[str] = []
        self.sums: Optional[torch.Tensor] = None  # [len(names)], one entry per term
        self.rows = 0
        self.gnorm_sum: torch.Tensor | float = 0.0
        self.steps = 0

    def add(self, terms: dict[str, torch.Tensor], rows: int, gnorm: torch.Tensor | float) -> None:
        """``gnorm``: this step's gradient norm, zero for a step whose gradients were not finite."""
        values = torch.stack([terms[name] for name in terms])
        if self.sums is None:
            self.names, self.sums = list(terms), values
        else:
            self.sums = self.sums + values
        self.rows += rows
        self.gnorm_sum = self.gnorm_sum + (gnorm.double() if isinstance(gnorm, torch.Tensor) else gnorm)
        self.steps += 1

    def per_row(self) -> dict[str, float]:
        """Each term per row and the mean gradient norm, read back from the device in one transfer."""
        if self.rows == 0 or self.sums is None:
            return {}
        gnorm = torch.as_tensor(self.gnorm_sum, dtype=torch.float64, device=self.sums.device).reshape(1)
        values = torch.cat((self.sums.double(), gnorm)).tolist()
        out = {name: value / self.rows for name, value in zip(self.names, values)}
        out["gnorm"] = values[-1] / max(self.steps, 1)
        return out

    def reset(self) -> None:
        self.__init__()


class MetricsLog:
    """Appends lines to ``metrics.jsonl`` (or ``file_name``) in ``output_dir`` and redraws the plot."""

    def __init__(self, output_dir: str, log=print, file_name: str = METRICS_FILE):
        self.path = os.path.join(output_dir, file_name)
        self.plot_path = os.path.join(output_dir, PLOT_FILE)
        self.log = log
        self._plot_notice_given = False

    def append(self, record: dict) -> None:
        """One whole line, even when the process is killed or the disk fills up meanwhile."""
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, METRICS_FILE_MODE)
        try:
            append_whole(fd, (json.dumps(record, sort_keys=False) + "\n").encode(), self.path)
        finally:
            os.close(fd)

    def truncate_after(self, samples: int) -> None:
        """Drop lines past ``samples`` (written after the checkpoint a run resumes from), atomically."""
        if not os.path.exists(self.path):
            return
        kept = [r for r in read_metrics(self.path) if r.get("samples", 0) <= samples]
        with atomic_output(self.path) as temp:
            with open(temp, "w") as f:
                for record in kept:
                    f.write(json.dumps(record) + "\n")

    def plot(self) -> Optional[str]:
        try:
            return plot_loss_curves(self.path, self.plot_path)
        except ImportError:
            if not self._plot_notice_given:
                self._plot_notice_given = True
                self.log("matplotlib is not installed; skipping the loss plot (pip install matplotlib)")
            return None


def read_metrics(path: str) -> list[dict]:
    records = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError:
                continue  # a line cut short by a crash
    return records


def plot_loss_curves(metrics_path: str, png_path: str) -> Optional[str]:
    """Draw total loss and the main terms per row against samples; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = read_metrics(metrics_path) if os.path.exists(metrics_path) else []
    if not records:
        return None
    samples = [r["samples"] for r in records]
    fig, (ax_total, ax_terms) = plt.subplots(1, 2, figsize=PLOT_SIZE_INCHES)
    ax_total.plot(samples, [r["loss"] for r in records], color="black", marker="o", markersize=MARKER_SIZE,
                  label="training")
    validation_path = os.path.join(os.path.dirname(metrics_path), VALIDATION_METRICS_FILE)
    validation = read_metrics(validation_path) if os.path.exists(validation_path) else []
    if validation:   # (validationFraction > 0: held-out files, evaluated after each epoch)
        ax_total.plot([r["samples"] for r in validation], [r["loss"] for r in validation], color="tab:red",
                      marker="s", markersize=MARKER_SIZE,
                      # (KataGo's evaluation weighs the seki term by a fixed scale, training by a moving one: the
                      # two totals differ by that term even without overfitting; compare the curves' trends)
                      label="validation (seki term at its fixed scale)")
        ax_total.legend(fontsize="small")
    ax_total.set_title("total loss per row")
    for name in PLOTTED_TERMS:
        values = [r.get(name) for r in records]
        if any(v is not None and math.isfinite(v) and v > 0 for v in values):
            ax_terms.plot(samples, [v if v and v > 0 else float("nan") for v in values], label=name,
                          marker="o", markersize=MARKER_SIZE)
    ax_terms.set_title("loss terms per row")
    if ax_terms.get_lines():  # no positive term yet (e.g. a test's synthetic metrics): an empty panel
        ax_terms.set_yscale("log")
        ax_terms.legend(fontsize="small")
    for ax in (ax_total, ax_terms):
        ax.set_xlabel("training samples")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    try:
        with atomic_output(png_path) as temp:
            fig.savefig(temp, dpi=PLOT_DPI, format="png")
    finally:
        plt.close(fig)
    return png_path
