"""Training batches: compact rows expanded to float tensors, plus KataGo's data augmentation.

Augmentation is a pure function of a seed, so a run resumed from a checkpoint (or split
over DDP ranks) sees exactly the same batches:

* one random board symmetry per global batch (KataGo picks one per batch too);
* random history dropout: each of the 5 history steps is cut off with a 2% chance per
  step, all later ones with it, and the ladder features of missing turns fall back to
  the most recent known ones (KataGo's ``apply_history_matrices``).
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Optional

import numpy as np
import torch

from katacli.nn.symmetry import NUM_SYMMETRIES, apply_symmetry
from katacli.train import rows as R

# Chance that history is cut off at each step back (KataGo keeps each step with 98%).
HISTORY_STOP_PROBABILITY = 0.02
NUM_HISTORY_STEPS = 5
# V7 spatial features: locations of moves 1..5 turns ago, and ladder features now / 1 / 2 turns ago.
MOVE_HISTORY_CHANNELS = (9, 10, 11, 12, 13)
LADDER_NOW, LADDER_PREV, LADDER_PREV2 = 14, 15, 16
# V7 global features 0..4 say which history moves are present.
GLOBAL_HISTORY_SLICE = slice(0, NUM_HISTORY_STEPS)


@dataclass
class Batch:
    """One batch of float32 tensors in KataGo's training layouts (player to move's view)."""

    spatial: torch.Tensor  # [N, 22, pos, pos]
    global_inputs: torch.Tensor  # [N, 19]
    policy_targets: torch.Tensor  # [N, 2, pos*pos+1] visit counts
    global_targets: torch.Tensor  # [N, 80]
    score_distribution: torch.Tensor  # [N, 2*(pos*pos+60)], sums to 100
    value_targets: torch.Tensor  # [N, 5, pos, pos]
    meta: Optional[torch.Tensor] = None  # [N, 192] SGF metadata, when the net uses it
    mask_full: bool = True  # every position of every row is on the board

    def __len__(self) -> int:
        return int(self.global_targets.shape[0])

    def to(self, device: torch.device, non_blocking: bool = False) -> "Batch":
        """The batch on ``device``; each tensor keeps its memory layout (channels-last stays channels-last)."""
        moved = {f.name: getattr(self, f.name) for f in fields(self)}
        for name, value in moved.items():
            if isinstance(value, torch.Tensor):
                moved[name] = value.to(device, non_blocking=non_blocking)
        return Batch(**moved)

    def staged_for_gpu(self) -> "Batch":
        """A host copy ready for an asynchronous upload: board inputs in the channels-last layout of the net on
        the GPU (converted here, on the CPU, not by a kernel per step) and every tensor in pinned memory, which
        ``to(..., non_blocking=True)`` copies without stalling the host."""
        staged = {f.name: getattr(self, f.name) for f in fields(self)}
        staged["spatial"] = self.spatial.contiguous(memory_format=torch.channels_last)
        for name, value in staged.items():
            if isinstance(value, torch.Tensor):
                staged[name] = value.pin_memory()
        return Batch(**staged)


def expand_rows(block: R.RowBlock, with_meta: bool = False) -> Batch:
    """Float tensors for the rows of ``block`` (no augmentation)."""
    pos = block.pos_len
    a = block.arrays
    spatial = R.unpack_binary_inputs(a[R.BINARY_INPUTS], pos)
    meta = None
    if with_meta:
        if not block.has(R.METADATA_INPUTS):
            raise R.TrainingFileError(f"this network needs SGF metadata rows ({R.METADATA_INPUTS}), the data has none")
        meta = torch.from_numpy(a[R.METADATA_INPUTS].astype(np.float32))
    return Batch(
        spatial=torch.from_numpy(spatial),
        global_inputs=torch.from_numpy(np.ascontiguousarray(a[R.GLOBAL_INPUTS], dtype=np.float32)),
        policy_targets=torch.from_numpy(a[R.POLICY_TARGETS].astype(np.float32)),
        global_targets=torch.from_numpy(np.ascontiguousarray(a[R.GLOBAL_TARGETS], dtype=np.float32)),
        score_distribution=torch.from_numpy(a[R.SCORE_DISTRIBUTION].astype(np.float32)),
        value_targets=torch.from_numpy(a[R.VALUE_TARGETS].astype(np.float32)),
        meta=meta,
        mask_full=bool(spatial[:, 0].min() > 0) if len(spatial) else True,
    )


def history_keep_mask(rng: np.random.Generator, num_rows: int) -> np.ndarray:
    """float32 ``[N, 5]``: 1 where history step k is kept (a cut-off removes every older step too)."""
    stops = rng.random((num_rows, NUM_HISTORY_STEPS)) < HISTORY_STOP_PROBABILITY
    return (np.cumsum(stops, axis=1) == 0).astype(np.float32)


def drop_history(batch: Batch, keep: torch.Tensor) -> Batch:
    """Hide the history steps that ``keep`` ([N, 5]) marks as missing."""
    spatial = batch.spatial.clone()
    k = keep.view(-1, NUM_HISTORY_STEPS, 1, 1)
    for step, channel in enumerate(MOVE_HISTORY_CHANNELS):
        spatial[:, channel] *= k[:, step]
    now, prev, prev2 = (batch.spatial[:, c] for c in (LADDER_NOW, LADDER_PREV, LADDER_PREV2))
    # Without the previous turn, ladder status of earlier turns is taken to be today's.
    spatial[:, LADDER_PREV] = torch.where(k[:, 0] > 0, prev, now)
    spatial[:, LADDER_PREV2] = torch.where(k[:, 1] > 0, prev2, spatial[:, LADDER_PREV])
    global_inputs = batch.global_inputs.clone()
    global_inputs[:, GLOBAL_HISTORY_SLICE] *= keep
    return replace(batch, spatial=spatial, global_inputs=global_inputs)


def apply_batch_symmetry(batch: Batch, symmetry: int) -> Batch:
    """Rotate/reflect every board-shaped part of the batch (the pass entry of policies stays last)."""
    if symmetry == 0:
        return batch
    n, c, pos, _ = batch.spatial.shape
    policy = batch.policy_targets
    board_policy = apply_symmetry(policy[:, :, :-1].reshape(n, policy.shape[1], pos, pos), symmetry)
    policy = torch.cat((board_policy.reshape(n, policy.shape[1], pos * pos), policy[:, :, -1:]), dim=2)
    return replace(
        batch,
        spatial=apply_symmetry(batch.spatial, symmetry).contiguous(),
        policy_targets=policy.contiguous(),
        value_targets=apply_symmetry(batch.value_targets, symmetry).contiguous(),
    )


def augment(batch: Batch, seed_sequence: np.random.SeedSequence, rank_slice: slice, global_rows: int,
            symmetries: bool = True, history_dropout: bool = True) -> Batch:
    """Augment this rank's share (``rank_slice`` of a global batch of ``global_rows``) of one batch.

    The random draws are made for the whole global batch from ``seed_sequence`` and sliced, so
    any split of the global batch over ranks gives the same rows.
    """
    rng = np.random.default_rng(seed_sequence)
    symmetry = int(rng.integers(NUM_SYMMETRIES))
    keep = history_keep_mask(rng, global_rows)[rank_slice]
    if history_dropout:
        batch = drop_history(batch, torch.from_numpy(keep))
    if symmetries:
        batch = apply_batch_symmetry(batch, symmetry)
    return batch
