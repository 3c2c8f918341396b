"""The training-data layout: KataGo's ``.npz`` arrays, and our ``.h5`` files that hold the same arrays.

This module is the single place that knows dataset names, dtypes, shapes and what
every channel means. The layout is KataGo's (``cpp/dataio/trainingwrite.h``, data
format version 3, V7 inputs), so rows move between the two formats without loss.

Every row is one position, seen from the player to move ("pla"), with the board in
the top-left corner of a ``pos_len`` x ``pos_len`` grid (``dataBoardLen``, 19 by
default); a move's index is ``y * pos_len + x`` and pass is ``pos_len * pos_len``.

========================  =======  ===================================  =====================================
dataset                   dtype    shape (per file)                     content
========================  =======  ===================================  =====================================
binaryInputNCHWPacked     uint8    [N, 22, ceil(L*L/8)]                 V7 spatial inputs, bit-packed per plane
globalInputNC             float32  [N, 19]                              V7 global inputs
policyTargetsNCMove       int16    [N, 2, L*L+1]                        0: search visits (pruned), 1: next move
globalTargetsNC           float32  [N, 80]                              see :data:`GLOBAL_TARGET_CHANNELS` (64 in v2 files)
scoreDistrN               int8     [N, 2*L*L+120]                       final score, one-hot-ish summing to 100
valueTargetsNCHW          int8     [N, 5, L, L]                         see :data:`VALUE_SPATIAL_CHANNELS`
qValueTargetsNCMove       int16    [N, 3, L*L+1]                        per-move win-loss*32000, score*60, visits (*)
metadataInputNC           float32  [N, 192]                             only in files from human-SL data (*)
========================  =======  ===================================  =====================================

(*) optional: older KataGo files lack q-values, and KataGo's shuffler treats them as zero.
Data format version 2 files (channel 63) have 64 global target channels; they are kept
as they are (readers zero-pad them to 80 as KataGo's trainer does).

Packing of ``binaryInputNCHWPacked``: each plane's L*L values are packed 8 to a byte,
the first value in the most significant bit (``np.packbits`` / ``np.unpackbits``
order), the last byte zero-padded.

The ``.h5`` file keeps exactly these datasets at its root, plus a ``katacli`` group
with one table that the npz format has no place for but that is derivable from the
rows (so conversion stays lossless both ways): ``katacli/gameRows`` int64 [G, 2]
giving each game's first row and row count. Rows of one game are contiguous and share
the 128-bit game hash of global target channels 41..46.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
from katacli._core.constants import MAX_BOARD_LEN  # noqa: F401  (the core's numbers, defined once)

# ---------------------------------------------------------------------------- format identity

FORMAT_NAME = "katacli-training-data"
SCHEMA_VERSION = 1
# globalTargetsNC channel 63 of every row written by current KataGo (and by us).
DATA_FORMAT_VERSION = 3
INPUTS_VERSION = 7
H5_SUFFIX = ".h5"
NPZ_SUFFIX = ".npz"
KATACLI_GROUP = "katacli"
GAME_ROWS_DATASET = f"{KATACLI_GROUP}/gameRows"

# ---------------------------------------------------------------------------- sizes

NUM_SPATIAL_INPUTS = 22
NUM_GLOBAL_INPUTS = 19
NUM_POLICY_TARGETS = 2
NUM_GLOBAL_TARGETS = 80
# Data format version 2 (KataGo before reanalysis) wrote only the first 64 channels.
LEGACY_NUM_GLOBAL_TARGETS = 64
NUM_VALUE_SPATIAL_TARGETS = 5
NUM_QVALUE_TARGETS = 3
NUM_METADATA_INPUTS = 192
# The score distribution reaches this many points beyond +-board area (KataGo's NNPos).
EXTRA_SCORE_DISTR_RADIUS = 60
MAX_BOARD_AREA = MAX_BOARD_LEN * MAX_BOARD_LEN
# Score-like targets are clipped to this many points either way.
SCORE_TARGET_CAP = MAX_BOARD_AREA + EXTRA_SCORE_DISTR_RADIUS
# The score distribution of a row sums to this.
SCORE_DISTR_TOTAL = 100
# Fixed-point scales of the integer targets.
QVALUE_WINLOSS_SCALE = 32000.0
QVALUE_SCORE_SCALE = 60.0
QVALUE_INT_LIMIT = 32000
SCORING_TARGET_SCALE = 120
# Policy targets are visit counts scaled so the largest stays below int16's range.
POLICY_TARGET_MAX = 30000


def policy_size(pos_len: int) -> int:
    return pos_len * pos_len + 1


def packed_plane_bytes(pos_len: int) -> int:
    return (pos_len * pos_len + 7) // 8


def score_distr_len(pos_len: int) -> int:
    return 2 * pos_len * pos_len + 2 * EXTRA_SCORE_DISTR_RADIUS


def score_distr_mid(pos_len: int) -> int:
    """Index of the bucket for scores in [0, 1) (bucket i holds score i - mid + 0.5, rounded)."""
    return pos_len * pos_len + EXTRA_SCORE_DISTR_RADIUS


# ---------------------------------------------------------------------------- datasets


@dataclass(frozen=True)
class Field:
    """One per-row array: name (KataGo's npz key), dtype, row shape as a function of pos_len."""

    name: str
    dtype: np.dtype
    row_shape: Callable[[int], tuple[int, ...]]
    description: str
    required: bool = True  # False: may be absent (metadata input only exists for human-SL data)

    def shape(self, num_rows: int, pos_len: int) -> tuple[int, ...]:
        return (num_rows, *self.row_shape(pos_len))


FIELDS: dict[str, Field] = {
    f.name: f
    for f in (
        Field("binaryInputNCHWPacked", np.dtype(np.uint8),
              lambda L: (NUM_SPATIAL_INPUTS, packed_plane_bytes(L)),
              "V7 spatial input planes, bit-packed (np.unpackbits order), board top-left in an L x L grid"),
        Field("globalInputNC", np.dtype(np.float32), lambda L: (NUM_GLOBAL_INPUTS,), "V7 global inputs"),
        Field("policyTargetsNCMove", np.dtype(np.int16), lambda L: (NUM_POLICY_TARGETS, policy_size(L)),
              "C0: this turn's search visits after forced-playout pruning (all 1 when unweighted); "
              "C1: the next turn's (opponent's) target; index y*L+x, pass last"),
        Field("globalTargetsNC", np.dtype(np.float32), lambda L: (NUM_GLOBAL_TARGETS,),
              "value/score targets, weights and metadata; see GLOBAL_TARGET_CHANNELS"),
        Field("scoreDistrN", np.dtype(np.int8), lambda L: (score_distr_len(L),),
              "final score of the player to move as a distribution summing to 100"),
        Field("valueTargetsNCHW", np.dtype(np.int8), lambda L: (NUM_VALUE_SPATIAL_TARGETS, L, L),
              "spatial value targets; see VALUE_SPATIAL_CHANNELS"),
        Field("qValueTargetsNCMove", np.dtype(np.int16), lambda L: (NUM_QVALUE_TARGETS, policy_size(L)),
              "per-move search results: C0 win-loss*32000, C1 score*60, C2 visits (capped at 32000)",
              required=False),
        Field("metadataInputNC", np.dtype(np.float32), lambda L: (NUM_METADATA_INPUTS,),
              "SGF metadata input of human-SL nets", required=False),
    )
}
REQUIRED_FIELDS = tuple(name for name, f in FIELDS.items() if f.required)
# What our self-play writes, like KataGo's (which never writes metadataInputNC either).
SELFPLAY_FIELDS = REQUIRED_FIELDS + ("qValueTargetsNCMove",)

# ---------------------------------------------------------------------------- channel meanings

# globalTargetsNC: index -> (name, meaning). Values are from the point of view of the player to move.
GLOBAL_TARGET_CHANNELS: dict[int, tuple[str, str]] = {
    0: ("win", "game outcome: win (draws blended by drawEquivalentWinsForWhite)"),
    1: ("loss", "game outcome: loss"),
    2: ("noResult", "game outcome: no result"),
    3: ("score", "game outcome: final score"),
    4: ("tdWinLong", "td value target, nowFactor 1/(1+area*0.176): win"),
    5: ("tdLossLong", "same: loss"),
    6: ("tdNoResultLong", "same: no result"),
    7: ("tdScoreLong", "same: score"),
    8: ("tdWinMid", "td value target, nowFactor 1/(1+area*0.056): win"),
    9: ("tdLossMid", "same: loss"),
    10: ("tdNoResultMid", "same: no result"),
    11: ("tdScoreMid", "same: score"),
    12: ("tdWinShort", "td value target, nowFactor 1/(1+area*0.016): win"),
    13: ("tdLossShort", "same: loss"),
    14: ("tdNoResultShort", "same: no result"),
    15: ("tdScoreShort", "same: score"),
    16: ("searchWin", "this turn's search value (td with nowFactor 1): win"),
    17: ("searchLoss", "same: loss"),
    18: ("searchNoResult", "same: no result"),
    19: ("searchScore", "same: score"),
    20: ("finalScore", "actual final score, draw-adjusted; 0 when channel 27 is 0"),
    21: ("lead", "points to make the game fair; 0 when channel 29 is 0"),
    22: ("varianceTime", "expected arrival time (turns) of win-loss variance"),
    23: ("unused23", "unused"),
    24: ("oneMinusTdWeight", "1 - weight of the td value targets"),
    25: ("rowWeight", "weight multiplier for the row as a whole"),
    26: ("policyWeight", "weight of policy target C0 (1 full search, 0 none)"),
    27: ("ownershipWeight", "weight of ownership and score distribution targets"),
    28: ("nextPolicyWeight", "weight of policy target C1 (the opponent's next move)"),
    29: ("leadWeight", "weight of the lead target"),
    30: ("policySurprise", "KL of search target vs raw policy (statistics)"),
    31: ("policyEntropy", "entropy of the raw policy (statistics)"),
    32: ("searchEntropy", "entropy of the search target (statistics)"),
    33: ("futurePosWeight", "weight of the future-position targets, valueTargetsNCHW C2-C3"),
    34: ("scoringWeight", "weight of the scoring target, valueTargetsNCHW C4"),
    35: ("oneMinusValueWeight", "1 - weight of the value targets"),
    36: ("useHistory1", "random history masking: use the last move (1) or not"),
    37: ("useHistory2", "same, 2 moves ago"),
    38: ("useHistory3", "same, 3 moves ago"),
    39: ("useHistory4", "same, 4 moves ago"),
    40: ("useHistory5", "same, 5 moves ago"),
    41: ("gameHash0", "128-bit game hash, bits 0-21 of the first half"),
    42: ("gameHash1", "bits 22-43 of the first half"),
    43: ("gameHash2", "bits 44-63 of the first half"),
    44: ("gameHash3", "bits 0-21 of the second half"),
    45: ("gameHash4", "bits 22-43 of the second half"),
    46: ("gameHash5", "bits 44-63 of the second half"),
    47: ("selfKomi", "komi of the player to move, adjusted for draws and bonus points so far"),
    48: ("areaScoringLike", "1 under area scoring or in the second encore phase"),
    49: ("earlierNet", "1 if an earlier net started this game"),
    50: ("netsBehind", "how many nets behind the latest the one playing this move was"),
    51: ("turnIdx", "turn index of the position (0-based)"),
    52: ("hitTurnLimit", "1 if the game was stopped at maxMovesPerGame"),
    53: ("firstTrainingTurn", "first turn played for training (after handicap or policy-init moves)"),
    54: ("numExtraBlack", "extra moves Black got at the start (handicap)"),
    55: ("gameMode", "how the game began; see GAME_MODES"),
    56: ("initialTurnNumber", "turn number corresponding to turn index 0"),
    57: ("rawWinLoss", "raw net win-loss of the position"),
    58: ("rawScoreMean", "raw net score mean of the position"),
    59: ("rawPolicyEntropy", "raw net policy entropy"),
    60: ("unreducedVisits", "visits of the search that produced the row, before any reduction"),
    61: ("bonusPointsAhead", "bonus points the player to move gets from here on (button, handicap)"),
    62: ("gameFinished", "1 if the game ended normally and this is not a side position"),
    63: ("dataVersion", "data format version, always 3"),
    64: ("reanalyzed", "1 if a cheap-search position was re-searched after the game"),
    65: ("reanalysisPolicySurprise", "policy surprise of the original cheap search"),
    66: ("reanalysisValueSurprise", "value surprise of the original cheap search"),
    67: ("reanalysisOriginalVisits", "visits of the original cheap search"),
    68: ("passAliveUnderSuicide", "1 if pass-alive areas were computed as if multi-stone suicide were legal"),
    **{i: (f"unused{i}", "unused, zero") for i in range(69, NUM_GLOBAL_TARGETS)},
}
GLOBAL_TARGET_INDEX: dict[str, int] = {name: i for i, (name, _) in GLOBAL_TARGET_CHANNELS.items()}


class GT:
    """Named globalTargetsNC channel indices used by the writer and readers."""

    WIN, LOSS, NO_RESULT, SCORE = 0, 1, 2, 3
    TD_LONG, TD_MID, TD_SHORT, TD_SEARCH = 4, 8, 12, 16   # each starts 4 channels: win, loss, no result, score
    FINAL_SCORE, LEAD, VARIANCE_TIME = 20, 21, 22
    ONE_MINUS_TD_WEIGHT, ROW_WEIGHT = 24, 25
    POLICY_WEIGHT, OWNERSHIP_WEIGHT, NEXT_POLICY_WEIGHT, LEAD_WEIGHT = 26, 27, 28, 29
    POLICY_SURPRISE, POLICY_ENTROPY, SEARCH_ENTROPY = 30, 31, 32
    FUTURE_POS_WEIGHT, SCORING_WEIGHT, ONE_MINUS_VALUE_WEIGHT = 33, 34, 35
    USE_HISTORY = 36     # 5 channels
    GAME_HASH = 41       # 6 channels
    SELF_KOMI, AREA_SCORING_LIKE = 47, 48
    EARLIER_NET, NETS_BEHIND = 49, 50
    TURN_IDX, HIT_TURN_LIMIT, FIRST_TRAINING_TURN, NUM_EXTRA_BLACK = 51, 52, 53, 54
    GAME_MODE, INITIAL_TURN_NUMBER = 55, 56
    RAW_WINLOSS, RAW_SCORE_MEAN, RAW_POLICY_ENTROPY, UNREDUCED_VISITS = 57, 58, 59, 60
    BONUS_POINTS, GAME_FINISHED, DATA_VERSION = 61, 62, 63
    REANALYZED = 64      # 4 channels
    PASS_ALIVE_UNDER_SUICIDE = 68


NUM_HISTORY_MASK_CHANNELS = 5
NUM_GAME_HASH_CHANNELS = 6
# Bit widths of the six game-hash chunks: each 64-bit half split 22, 22, 20 (floats hold 24 bits exactly).
GAME_HASH_CHUNK_BITS = (22, 22, 20)
# td value targets: (first channel, board-area coefficient of nowFactor = 1 / (1 + area * coeff)).
TD_TARGETS = ((GT.TD_LONG, 0.176), (GT.TD_MID, 0.056), (GT.TD_SHORT, 0.016))

# valueTargetsNCHW channels, player-to-move's view.
VALUE_SPATIAL_CHANNELS: dict[int, tuple[str, str]] = {
    0: ("ownership", "final ownership: 1 own, -1 opponent's, 0 neither"),
    1: ("sekiArea", "area points that ended unowned (e.g. seki): +-1 by whose area they were"),
    2: ("futureBoard8", "stones 8 turns later: 1 own, -1 opponent's"),
    3: ("futureBoard32", "stones 32 turns later"),
    4: ("scoring", "how each point scored, in [-120, 120] (group tax counted)"),
}
FUTURE_BOARD_OFFSETS = (8, 32)

# globalTargetsNC channel 55.
GAME_MODES = {
    0: "normal",
    1: "cleanup training (begins in the encore)",
    2: "fork of another self-play game",
    3: "handicap",
    4: "from an SGF position",
    5: "from a hint position",
    6: "fork of a hint position",
    7: "asymmetric playouts",
}
MODE_NORMAL, MODE_CLEANUP, MODE_FORK, MODE_HANDICAP, MODE_SGFPOS, MODE_HINTPOS, MODE_HINTFORK, MODE_ASYM = range(8)


# ---------------------------------------------------------------------------- helpers


class SchemaError(ValueError):
    """Arrays that do not have KataGo's training-data layout."""


def pos_len_of(arrays: dict[str, np.ndarray]) -> int:
    """Infer the grid edge L from valueTargetsNCHW (the one array that holds it directly)."""
    shape = arrays["valueTargetsNCHW"].shape
    if len(shape) != 4 or shape[2] != shape[3]:
        raise SchemaError(f"valueTargetsNCHW must be [N, 5, L, L], got {shape}")
    return int(shape[2])


def validate_arrays(arrays: dict[str, np.ndarray], pos_len: int | None = None) -> tuple[int, int]:
    """Check names, dtypes and shapes; return (num_rows, pos_len). Raises SchemaError."""
    missing = [name for name in REQUIRED_FIELDS if name not in arrays]
    if missing:
        raise SchemaError(f"missing training arrays: {', '.join(missing)}")
    unknown = [name for name in arrays if name not in FIELDS]
    if unknown:
        raise SchemaError(f"unknown training arrays: {', '.join(unknown)}")
    if pos_len is None:
        pos_len = pos_len_of(arrays)
    num_rows = arrays["globalTargetsNC"].shape[0]
    for name, array in arrays.items():
        field = FIELDS[name]
        if array.dtype != field.dtype:
            raise SchemaError(f"{name} has dtype {array.dtype}, expected {field.dtype}")
        expected = field.shape(num_rows, pos_len)
        if name == "globalTargetsNC" and array.shape == (num_rows, LEGACY_NUM_GLOBAL_TARGETS):
            continue  # a data format version 2 file
        if array.shape != expected:
            raise SchemaError(f"{name} has shape {array.shape}, expected {expected} (pos_len {pos_len})")
    return num_rows, pos_len


def empty_arrays(num_rows: int, pos_len: int, fields=SELFPLAY_FIELDS) -> dict[str, np.ndarray]:
    return {name: np.zeros(FIELDS[name].shape(num_rows, pos_len), FIELDS[name].dtype) for name in fields}


def pad_global_targets(global_targets: np.ndarray) -> np.ndarray:
    """Version 2 rows (64 channels) zero-padded to 80, which reads as "not reanalyzed" (KataGo's trainer)."""
    if global_targets.shape[1] == NUM_GLOBAL_TARGETS:
        return global_targets
    padded = np.zeros((global_targets.shape[0], NUM_GLOBAL_TARGETS), global_targets.dtype)
    padded[:, :global_targets.shape[1]] = global_targets
    return padded


def pack_planes(planes: np.ndarray) -> np.ndarray:
    """[..., C, L, L] binary float planes -> [..., C, ceil(L*L/8)] uint8, KataGo's bit order."""
    flat = planes.reshape(*planes.shape[:-2], planes.shape[-2] * planes.shape[-1])
    return np.packbits(flat.astype(np.uint8), axis=-1)


def unpack_planes(packed: np.ndarray, pos_len: int) -> np.ndarray:
    """Inverse of :func:`pack_planes`: [N, C, bytes] uint8 -> float32 [N, C, L, L]."""
    area = pos_len * pos_len
    bits = np.unpackbits(packed, axis=-1)[..., :area]
    return bits.reshape(*packed.shape[:-1], pos_len, pos_len).astype(np.float32)


def split_game_hash(hash0: int, hash1: int) -> list[float]:
    """Two 64-bit halves -> the six float channels 41..46."""
    out = []
    for half in (hash0, hash1):
        shift = 0
        for bits in GAME_HASH_CHUNK_BITS:
            out.append(float((half >> shift) & ((1 << bits) - 1)))
            shift += bits
    return out


def join_game_hash(channels) -> tuple[int, int]:
    """Inverse of :func:`split_game_hash` (channels 41..46 of one row)."""
    halves = []
    values = [int(round(float(v))) for v in channels]
    for h in range(2):
        half, shift = 0, 0
        for k, bits in enumerate(GAME_HASH_CHUNK_BITS):
            half |= values[3 * h + k] << shift
            shift += bits
        halves.append(half)
    return halves[0], halves[1]


def game_row_ranges(global_targets: np.ndarray) -> np.ndarray:
    """[G, 2] int64 (first row, row count) of runs of consecutive rows sharing a game hash."""
    num_rows = global_targets.shape[0]
    if num_rows == 0:
        return np.zeros((0, 2), np.int64)
    hashes = global_targets[:, GT.GAME_HASH:GT.GAME_HASH + NUM_GAME_HASH_CHANNELS]
    starts = [0] + [i for i in range(1, num_rows) if not np.array_equal(hashes[i], hashes[i - 1])]
    ends = starts[1:] + [num_rows]
    return np.array([(s, e - s) for s, e in zip(starts, ends)], np.int64)


def describe() -> str:
    """Human-readable listing of the layout (used by ``kata convert --describe``)."""
    lines = [f"{FORMAT_NAME} schema {SCHEMA_VERSION} (KataGo data format {DATA_FORMAT_VERSION}, "
             f"inputs V{INPUTS_VERSION}); L = dataBoardLen, N = rows", ""]
    for f in FIELDS.values():
        shape = "x".join(str(d) for d in f.row_shape(MAX_BOARD_LEN))
        opt = "" if f.required else " (optional)"
        lines.append(f"{f.name:<24} {f.dtype.name:<8} [N, {shape}] at L={MAX_BOARD_LEN}{opt}")
        lines.append(f"    {f.description}")
    lines.append("")
    lines.append("globalTargetsNC channels:")
    for i, (name, meaning) in GLOBAL_TARGET_CHANNELS.items():
        if i < 69:
            lines.append(f"  {i:2d} {name:<26} {meaning}")
    lines.append(f"  69-{NUM_GLOBAL_TARGETS - 1} unused, zero")
    lines.append("")
    lines.append("valueTargetsNCHW channels:")
    for i, (name, meaning) in VALUE_SPATIAL_CHANNELS.items():
        lines.append(f"  {i} {name:<14} {meaning}")
    return "\n".join(lines)
