"""Validation: a share of the data files held out of training, and the losses of the net on their rows.

As KataGo's ``shuffle.sh`` peels off its ``val`` files (5% of the self-play files), a file is held out by a
hash of its name: the first 13 hex digits of the MD5 of the file's base name, read as a fraction of 2^52, at
``1 - validationFraction`` or above (KataGo's ``-only-include-md5-path-prop-lbound 0.95``), so the same files
are held out whichever machine or directory trains, and a file never moves between the two sets.

After each epoch (and at the end of a run) rank 0 evaluates the net it trains, in eval mode and without
augmentation (the same rows, orientation and history each time, so the curve compares like with like),
on the newest ``maxValidationSamples`` rows of the held-out files, and appends the loss terms per row to
``metrics_val.jsonl`` beside ``metrics.jsonl``: the training loss falling while this one rises is overfitting.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
from typing import Iterator, Sequence

import torch

from katacli.train import rows as R
from katacli.train.batch import Batch, expand_rows
from katacli.train.training_net import TrainOutputs

# KataGo's shuffle.py: int(md5(basename).hexdigest()[:13], 16) / 2**52 is a fraction in [0, 1).
_HASH_HEX_DIGITS = 13
_HASH_SCALE = 2.0 ** 52


def path_hash_fraction(path: str) -> float:
    """KataGo's shuffle.py number for a data file: uniform in [0, 1), from the MD5 of its base name."""
    digest = hashlib.md5(os.path.basename(path).encode("utf-8", "surrogateescape")).hexdigest()
    return int(digest[:_HASH_HEX_DIGITS], 16) / _HASH_SCALE


def is_validation_file(path: str, fraction: float) -> bool:
    """Whether ``path`` is held out for validation when ``fraction`` of the files are."""
    return fraction > 0.0 and path_hash_fraction(path) >= 1.0 - fraction


def validation_batches(files: Sequence, max_rows: int, batch_size: int, with_meta: bool) -> Iterator[Batch]:
    """Batches of at most ``batch_size`` rows over the newest ``max_rows`` rows of ``files`` (DataFile records,
    oldest first), newest file first, unaugmented. A file that cannot be read is passed over."""
    remaining = max_rows
    for data_file in reversed(files):
        if remaining <= 0:
            break
        take = min(data_file.rows, remaining)
        if take <= 0:
            continue
        try:
            block = R.read_rows(data_file.path, data_file.rows - take, data_file.rows)
        except R.TrainingFileError:
            continue   # (the training scan reports unreadable files)
        remaining -= len(block)
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
