"""One network call for positions of several board sizes.

Self-play mixes board sizes (KataGo's bSizes: 9 to 19 in one run). Batched by size, a GPU's batch
splits into as many small calls as there are sizes in flight (an average batch of about 20 where
one size gives over 100). KataGo instead lays every board into one buffer of the largest size,
with the on-board feature marking the board, and so does :func:`evaluate_mixed`: each batch's rows
are put into their symmetric orientation in their own shape (exactly as a call of their own would),
placed in the top-left corner of a zero canvas of the largest shape, run together with the
network's masking on, and their outputs are cropped back to their own shape before the usual
postprocessing. Off-board points carry no features and are masked out of every layer and pooling,
so the answers equal separate calls' up to float rounding.

On a CPU padding only adds work, so batchers use it on CUDA (see
:class:`~katacli.nn.batching.BatchingEvaluator`).
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from katacli.nn.batch import NNBatch, NNBatchOutput
from katacli.nn.symmetry import apply_symmetries


def evaluate_mixed(evaluator, batches: list[NNBatch], canvas: Optional[tuple[int, int]] = None) -> list[NNBatchOutput]:
    """Each batch's answers (as ``evaluator.evaluate_batch`` gives them), the network rows of all of
    them run together, at most ``evaluator.max_batch_size`` per call. ``canvas``: (height, width) to pad
    to at least (a batcher passes the largest it has seen, so that a GPU sees few input shapes and
    captures few CUDA graphs); None: the largest of these batches."""
    plans = [evaluator.plan_batch(batch) for batch in batches]
    todo = [plan for plan in plans if plan.misses]
    blocks = {}
    if todo:
        raw = _run_padded(evaluator, todo, canvas)
        start = 0
        for plan in todo:
            rows = plan.rows
            n, (h, w) = len(rows), rows.spatial.shape[2:]
            own = [out[start:start + n, :, :h, :w] if out.ndim == 4 else out[start:start + n] for out in raw]
            start += n
            blocks[id(plan)] = evaluator.postprocess_arrays(own, rows.legal_mask, rows.board_x, rows.board_y,
                                                            plan.symmetries, rows.row_settings())
    return [evaluator.finish_batch(plan, blocks.get(id(plan))) for plan in plans]


def _run_padded(evaluator, plans, canvas: Optional[tuple[int, int]]) -> list[np.ndarray]:
    """The network's raw outputs for every plan's rows, in order, inputs padded to the largest shape."""
    channels = plans[0].rows.spatial.shape[1]
    height = max([plan.rows.spatial.shape[2] for plan in plans] + ([canvas[0]] if canvas else []))
    width = max([plan.rows.spatial.shape[3] for plan in plans] + ([canvas[1]] if canvas else []))
    total = sum(len(plan.rows) for plan in plans)
    spatial = np.zeros((total, channels, height, width), np.float32)
    start = 0
    for plan in plans:
        rows = plan.rows
        n, (h, w) = len(rows), rows.spatial.shape[2:]
        spatial[start:start + n, :, :h, :w] = apply_symmetries(rows.spatial.astype(np.float32, copy=False),
                                                              plan.input_symmetries)
        start += n
    global_features = np.concatenate([plan.rows.global_features for plan in plans]).astype(np.float32, copy=False)
    metas = [plan.rows.meta for plan in plans]
    meta = None if metas[0] is None else np.concatenate(metas).astype(np.float32, copy=False)
    evaluator.require_metadata(meta)
    pieces = []
    for begin, end in evaluator.call_bounds(total):
        evaluator.count_network_call(end - begin)
        pieces.append(evaluator._forward(spatial[begin:end], global_features[begin:end],
                                         None if meta is None else meta[begin:end], False))
    return [np.concatenate(parts) if len(pieces) > 1 else parts[0] for parts in zip(*pieces)]
