"""Validation: a share of the data files held out of training, and the losses of the net on their rows.

As KataGo's ``shuffle.sh`` peels off its ``val`` files (5% of the self-play files), a file is held out by a
hash of its name: the first 13 hex digits of the MD5 of the file's base name, read as a fraction of 2^52, at
``1 - validationFraction`` or above (KataGo's ``-only-include-md5-path-prop-lbound 0.95``), so the same files
are held out whichever machine or directory trains, and a file never moves between the two sets.

After each epoch's last step (and at the end of a run) rank 0 evaluates the net it trains, in eval mode and
without augmentation, on the newest ``maxValidationSamples`` rows of the held-out files (the same rows,
orientation and history each time while no newer held-out files arrive, so the curve compares like with
like), and appends the loss terms per row to ``metrics_val.jsonl`` beside ``metrics.jsonl``: the training
loss falling while this one rises is overfitting. The split itself (which files) lives with the data
scan, in katacli.train.window.
"""
from __future__ import annotations

import contextlib
from typing import Iterator, Sequence

import torch

from katacli.train import rows as R
from katacli.train.batch import Batch, expand_rows
from katacli.train.training_net import TrainOutputs
from katacli.train.window import DataFile


def newest_rows(files: Sequence[DataFile], max_rows: int) -> list[tuple[DataFile, int]]:
    """(file, rows taken from its end) over the newest ``max_rows`` rows of ``files`` (oldest first), newest
    file first: what one validation reads."""
    plan, remaining = [], max_rows
    for data_file in reversed(files):
        if remaining <= 0:
            break
        take = min(data_file.rows, remaining)
        if take > 0:
            plan.append((data_file, take))
            remaining -= take
    return plan


def validation_batches(plan: Sequence[tuple[DataFile, int]], batch_size: int, with_meta: bool) -> Iterator[Batch]:
    """Batches of at most ``batch_size`` unaugmented rows over a :func:`newest_rows` plan. A file that cannot
    be read is passed over (the training scan reports unreadable files)."""
    for data_file, take in plan:
        try:
            block = R.read_rows(data_file.path, data_file.rows - take, data_file.rows)
        except R.TrainingFileError:
            continue
        for start in range(0, len(block), batch_size):
            yield expand_rows(block.take(slice(start, start + batch_size)), with_meta)


def evaluate(net, loss, batches: Iterator[Batch], device, amp_dtype=None, channels_last: bool = False) -> tuple[int, dict]:
    """(rows, loss terms per row, "loss" among them) of ``net`` (a TrainingNet, put in eval mode meanwhile) on
    ``batches`` under ``loss`` (a KataGoLoss, its evaluation scales)."""
    sums: dict[str, torch.Tensor] = {}
    rows = 0
    was_training = net.training
    net.eval()
    autocast = (torch.autocast(device_type=device.type, dtype=amp_dtype) if amp_dtype is not None
                else contextlib.nullcontext())
    try:
        with torch.no_grad():
            for batch in batches:
                batch = batch.to(device)
                spatial = batch.spatial.contiguous(memory_format=torch.channels_last) if channels_last else batch.spatial
                with autocast:
                    out = net(spatial, batch.global_inputs, batch.meta, batch.mask_full)
                total, terms = loss(TrainOutputs(*(t.float() for t in out)), batch, training=False)
                terms["loss"] = total
                for name, value in terms.items():
                    sums[name] = sums[name] + value.double() if name in sums else value.double()
                rows += len(batch)
    finally:
        net.train(was_training)
    return rows, ({name: float(value) / rows for name, value in sums.items()} if rows else {})
