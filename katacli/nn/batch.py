"""Whole batches as arrays: :class:`NNBatch` in, :class:`NNBatchOutput` out.

The search's hot path: a tree's batch buffers go to the evaluator as whole arrays and the answers
come back as whole arrays (value columns, policy rows, ownership rows where wanted), with no object
per position (:class:`~katacli.nn.request.NNRequest` / :class:`~katacli.nn.postprocess.NNOutput`
remain the per-position API). The NN cache stores rows of answer arrays (:func:`cached_rows`).
Torch-free, like :mod:`katacli.nn.request`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple, Optional

import numpy as np

from katacli._core.nn_postprocess import CACHE_EXTRA_COLUMNS
from katacli._core.policy_rows import shared_policy, views_one_block
from katacli.nn.postprocess import NNOutput

# The value columns of NNBatchOutput.values, in the order the search core reads them
# (katacli/_core/search_apply.pxd).
VALUE_COLUMNS = ("white_win", "white_loss", "no_result", "white_score_mean", "white_score_mean_sq", "white_lead",
                 "var_time_left", "shortterm_winloss_error", "shortterm_score_error")
SHORTTERM_WINLOSS_COLUMN = VALUE_COLUMNS.index("shortterm_winloss_error")
UINT64_BITS = 64


def accepts_batches(evaluator) -> bool:
    """Whether an evaluator takes whole :class:`NNBatch` arrays (``evaluate_batch``): one that has the
    method, unless its ``accepts_batches`` says otherwise (a wrapper whose inner evaluator has none)."""
    return bool(getattr(evaluator, "accepts_batches", hasattr(evaluator, "evaluate_batch")))


# filled()'s arrays kept before it starts over (batch sizes times settings: a few dozen in practice).
MAX_FILLED_ARRAYS = 512
_filled: dict[tuple, np.ndarray] = {}


def filled(n: int, value, dtype) -> np.ndarray:
    """A read-only array of n copies of value, made once per (n, value, dtype): per-row settings that are
    the same for a whole batch, asked for at every batch."""
    key = (n, value, dtype)
    array = _filled.get(key)
    if array is None:
        if len(_filled) > MAX_FILLED_ARRAYS:
            _filled.clear()
        array = np.full(n, value, dtype)
        array.flags.writeable = False
        _filled[key] = array
    return array


class RowSettings(NamedTuple):
    """What the postprocessing needs to know of each of n rows (NNEvaluator.postprocess_arrays): passed
    positionally as one tuple, since a batch of one row pays for every keyword argument."""

    white: np.ndarray               # bool [n]: White to move
    optimism: np.ndarray            # [n] policy optimism
    temperature: np.ndarray         # [n] policy temperature
    hacks: np.ndarray               # bool [n]: passing hacks
    allow_no_result: Optional[np.ndarray]   # bool [n], or None: read from global_features
    want_ownership: np.ndarray      # bool [n]: rows whose ownership is kept
    global_features: Optional[np.ndarray] = None   # [n, 19] V7 global features


@dataclass
class NNBatch:
    """n positions of one board size, as arrays (row i is position i; see NNRequest for each field).

    ``legal_mask`` bool ``[n, area + 1]`` (last column: pass). ``policy_optimism`` float64 ``[n]``;
    ``policy_temperature`` and ``enable_passing_hacks`` hold for the whole batch. ``cache_keys``
    uint64 ``[n, 2]`` (low word, high word) or None to bypass the cache. ``meta`` ``[n, M]`` for
    nets that take SGF metadata. ``symmetry`` None: the evaluator's choice per position.
    ``applied_symmetries`` int8 ``[n]``: the orientation each row's spatial features are already in (a
    search tree that fills them so, sparing the evaluator the gather), -1 for a row in the real board's
    orientation (the evaluator picks one); None: every row is in the real board's orientation.
    """

    spatial: np.ndarray
    global_features: np.ndarray
    legal_mask: np.ndarray
    board_x: int
    board_y: int
    white_to_move: np.ndarray
    policy_optimism: np.ndarray
    include_ownership: np.ndarray
    policy_temperature: float = 1.0
    enable_passing_hacks: bool = False
    cache_keys: Optional[np.ndarray] = None
    meta: Optional[np.ndarray] = None
    symmetry: Optional[int] = None
    applied_symmetries: Optional[np.ndarray] = None
    _row_settings: Optional["RowSettings"] = field(default=None, init=False, repr=False, compare=False)

    def __len__(self) -> int:
        return self.spatial.shape[0]

    def key_ints(self) -> list[int]:
        """The cache keys as ints (as NNRequest.cache_key holds them)."""
        return [(high << UINT64_BITS) | low for low, high in self.cache_keys.tolist()]

    def row_settings(self) -> "RowSettings":
        """The per-row settings NNEvaluator.postprocess_arrays takes (besides the legal mask and board)."""
        settings = self._row_settings
        if settings is None:   # (made once: a search's batch for a lane and size serves all its batches)
            n = len(self)
            # (no-result read from the global features in the postprocessing's C loop, as
            # katacli.nn.postprocess.allow_no_result_from_globals reads it for one position)
            settings = self._row_settings = RowSettings(
                self.white_to_move, self.policy_optimism, filled(n, float(self.policy_temperature), np.float32),
                filled(n, bool(self.enable_passing_hacks), np.bool_), None, self.include_ownership,
                self.global_features)
        return settings

    def rows(self, indices) -> "NNBatch":
        """The batch of the given rows (copies)."""
        def take(a):
            return None if a is None else a[indices]
        return NNBatch(self.spatial[indices], self.global_features[indices], self.legal_mask[indices], self.board_x,
                       self.board_y, self.white_to_move[indices], self.policy_optimism[indices],
                       self.include_ownership[indices], self.policy_temperature, self.enable_passing_hacks,
                       take(self.cache_keys), take(self.meta), self.symmetry, take(self.applied_symmetries))

    def slice(self, start: int, end: int) -> "NNBatch":
        """Rows start:end (views)."""
        return self.rows(slice(start, end))


@dataclass(slots=True)  # no per-object __dict__: the NN cache keeps every answered batch's object
class NNBatchOutput:
    """Answers for n positions, from White's point of view, in the real board's orientation.

    ``values`` float64 ``[n, 9]`` (VALUE_COLUMNS), ``policy`` float32 ``[n, area]`` (-1 where illegal),
    ``policy_pass`` float32 ``[n]``, ``ownership`` float32 ``[n, area]`` or None, with
    ``ownership_rows`` bool ``[n]`` saying which rows hold one. Arrays are read-only (cached rows are
    shared). ``cache_scalars``: the rows' scalars as the NN cache keeps them (see CACHED_SCALARS), where
    the postprocessing made them already; None: cached_rows makes them.
    """

    values: np.ndarray
    policy: np.ndarray
    policy_pass: np.ndarray
    ownership: Optional[np.ndarray]
    ownership_rows: np.ndarray
    symmetry: np.ndarray
    policy_optimism: np.ndarray
    board_x: int
    board_y: int
    cache_scalars: Optional[np.ndarray] = None

    def __len__(self) -> int:
        return self.values.shape[0]

    def has_ownership(self, i: int) -> bool:
        return self.ownership is not None and bool(self.ownership_rows[i])

    def output(self, i: int) -> NNOutput:
        """Row i as an NNOutput (its arrays are views of this batch's)."""
        v = self.values[i].tolist()
        ownership = None
        if self.has_ownership(i):
            ownership = self.ownership[i]
            if not self.ownership_rows.all():  # a copy, so that one row does not keep the batch's ownership alive
                ownership = ownership.copy()
        return NNOutput(
            white_win=v[0], white_loss=v[1], no_result=v[2], white_score_mean=v[3], white_score_mean_sq=v[4],
            white_lead=v[5], var_time_left=v[6], shortterm_winloss_error=v[7], shortterm_score_error=v[8],
            policy=self.policy[i], policy_pass=float(self.policy_pass[i]),
            white_ownership=ownership,
            board_x=self.board_x, board_y=self.board_y, symmetry=int(self.symmetry[i]),
            policy_optimism=float(self.policy_optimism[i]),
        )

    def outputs(self) -> list[NNOutput]:
        return [self.output(i) for i in range(len(self))]


# A cached block's scalars: the value columns, then the pass prior, symmetry, policy optimism and whether
# the row holds ownership (all exact in float64), in the columns the postprocessing fills them in.
CACHED_COLUMN = dict(CACHE_EXTRA_COLUMNS)
NUM_CACHED_SCALAR_COLUMNS = len(VALUE_COLUMNS) + len(CACHED_COLUMN)
if sorted(CACHED_COLUMN.values()) != list(range(len(VALUE_COLUMNS), NUM_CACHED_SCALAR_COLUMNS)):
    raise ImportError("katacli/_core/nn_postprocess's cache columns do not follow VALUE_COLUMNS: rebuild the core")
# A cached row -- the NN cache's value for a position a batch evaluated -- is an exact tuple of these:
# the batch's per-row scalars (one array per batch: its seven small arrays would cost ~110 bytes of
# header each, and a search's batches are small), its shared policy rows (the board points' priors,
# possibly followed by the pass prior's column: read row j as [j, :area]), its ownership rows or None,
# the row's index and the board. Only ints, arrays and None: Python's garbage collector leaves such a
# tuple alone, where an object per cached position made every full collection walk the whole cache
# (about 100 ms for 57,000 positions; the cache holds up to a million).
CACHED_SCALARS, CACHED_POLICY, CACHED_OWNERSHIP, CACHED_INDEX, CACHED_BOARD_X, CACHED_BOARD_Y = range(6)


def cached_rows(block: NNBatchOutput) -> list[tuple]:
    """The NN cache's entries for every row of an answered batch (see CACHED_SCALARS)."""
    n = len(block)
    scalars = block.cache_scalars
    if scalars is None:
        scalars = np.empty((n, NUM_CACHED_SCALAR_COLUMNS), np.float64)
        scalars[:, : len(VALUE_COLUMNS)] = block.values
        scalars[:, CACHED_COLUMN["policy_pass"]] = block.policy_pass
        scalars[:, CACHED_COLUMN["symmetry"]] = block.symmetry
        scalars[:, CACHED_COLUMN["policy_optimism"]] = block.policy_optimism
        scalars[:, CACHED_COLUMN["has_ownership"]] = block.ownership_rows if block.ownership is not None else False
        scalars.flags.writeable = False
        ownership = block.ownership if bool(block.ownership_rows.any()) else None
    else:   # the postprocessing's: its ownership is there only if a row wants it
        ownership = block.ownership
    policy, board_x, board_y = block.policy, block.board_x, block.board_y
    rows = policy.base
    if isinstance(rows, np.ndarray) and rows.shape == (n, policy.shape[1] + 1) and views_one_block(policy, rows):
        # The block's rows with their pass column (the array the policy view was cut from): keeping them
        # instead of the view is one array object fewer per batch in the cache (readers cut [:area]).
        policy = rows
    return [(scalars, policy, ownership, j, board_x, board_y) for j in range(n)]


def is_cached_row(entry) -> bool:
    """Whether a cache entry is a batch's row (cached_rows), not an NNOutput of the per-request API."""
    return type(entry) is tuple


def cached_row_has_ownership(row: tuple) -> bool:
    return row[CACHED_OWNERSHIP] is not None and bool(row[CACHED_SCALARS][row[CACHED_INDEX],
                                                                        CACHED_COLUMN["has_ownership"]])


def cached_row_output(row: tuple) -> NNOutput:
    """A cached row as an NNOutput (its policy a view of the batch's)."""
    scalars, policy, ownership_rows, i, board_x, board_y = row
    values = scalars[i].tolist()
    ownership = None
    if cached_row_has_ownership(row):
        # A copy, so that one row does not keep the batch's ownership alive.
        ownership = ownership_rows[i] if len(ownership_rows) == 1 else ownership_rows[i].copy()
    return NNOutput(
        **dict(zip(VALUE_COLUMNS, values)),   # the value columns are named as NNOutput's fields
        policy=policy[i, :board_x * board_y], policy_pass=values[CACHED_COLUMN["policy_pass"]],
        white_ownership=ownership,
        board_x=board_x, board_y=board_y, symmetry=int(values[CACHED_COLUMN["symmetry"]]),
        policy_optimism=values[CACHED_COLUMN["policy_optimism"]],
    )


def with_shared_policy(block: NNBatchOutput) -> NNBatchOutput:
    """The block with its policy and pass priors copied into one reference-counted block (shared_policy):
    the NN cache keeps its rows, and search tree nodes evaluated from them share those rows instead of
    copying every legal move's prior (policy_rows.pxd). A block the postprocessing made is returned as it is."""
    if views_one_block(block.policy, block.policy_pass):
        return block
    policy, policy_pass = shared_policy(block.policy, block.policy_pass)
    # Built directly: dataclasses.replace costs more than the rest of a small batch's bookkeeping.
    return NNBatchOutput(values=block.values, policy=policy, policy_pass=policy_pass, ownership=block.ownership,
                         ownership_rows=block.ownership_rows, symmetry=block.symmetry,
                         policy_optimism=block.policy_optimism, board_x=block.board_x, board_y=block.board_y,
                         cache_scalars=block.cache_scalars)


def empty_output(n: int, area: int, with_ownership: bool, board_x: int, board_y: int) -> NNBatchOutput:
    """A writable output of n rows, to be filled in."""
    return NNBatchOutput(
        values=np.zeros((n, len(VALUE_COLUMNS)), np.float64), policy=np.zeros((n, area), np.float32),
        policy_pass=np.zeros(n, np.float32),
        ownership=np.zeros((n, area), np.float32) if with_ownership else None,
        ownership_rows=np.zeros(n, bool), symmetry=np.zeros(n, np.int64), policy_optimism=np.zeros(n, np.float64),
        board_x=board_x, board_y=board_y)


def copy_row(dst: NNBatchOutput, i: int, entry) -> None:
    """Row i of dst from a cache entry: a cached row (cached_rows), or an NNOutput (stored by the
    per-request API)."""
    if is_cached_row(entry):
        scalars, policy, ownership, j = entry[:4]
        row = scalars[j]
        dst.values[i] = row[: len(VALUE_COLUMNS)]
        dst.policy[i] = policy[j, :dst.policy.shape[1]]
        dst.policy_pass[i] = row[CACHED_COLUMN["policy_pass"]]
        if dst.ownership is not None and cached_row_has_ownership(entry):
            dst.ownership[i] = ownership[j]
            dst.ownership_rows[i] = True
        dst.symmetry[i] = int(row[CACHED_COLUMN["symmetry"]])
        dst.policy_optimism[i] = row[CACHED_COLUMN["policy_optimism"]]
        return
    dst.values[i] = [getattr(entry, name) for name in VALUE_COLUMNS]
    dst.policy[i] = entry.policy
    dst.policy_pass[i] = entry.policy_pass
    if dst.ownership is not None and entry.white_ownership is not None:
        dst.ownership[i] = entry.white_ownership
        dst.ownership_rows[i] = True
    dst.symmetry[i] = entry.symmetry
    dst.policy_optimism[i] = entry.policy_optimism


def concatenate_outputs(blocks: list[NNBatchOutput]) -> NNBatchOutput:
    """The rows of several outputs (of one board size), in order, as one."""
    first = blocks[0]
    with_ownership = any(b.ownership is not None for b in blocks)
    ownership = None
    if with_ownership:
        area = first.policy.shape[1]
        ownership = np.concatenate([b.ownership if b.ownership is not None else np.zeros((len(b), area), np.float32)
                                    for b in blocks])
        ownership.flags.writeable = False
    policy = np.concatenate([b.policy for b in blocks])
    policy.flags.writeable = False
    return NNBatchOutput(
        values=np.concatenate([b.values for b in blocks]), policy=policy,
        policy_pass=np.concatenate([b.policy_pass for b in blocks]), ownership=ownership,
        ownership_rows=np.concatenate([b.ownership_rows for b in blocks]),
        symmetry=np.concatenate([b.symmetry for b in blocks]),
        policy_optimism=np.concatenate([b.policy_optimism for b in blocks]), board_x=first.board_x,
        board_y=first.board_y)
