r"""Human-SL profiles: the SGF-metadata input row of KataGo's human-style networks.

KataGo's human-SL nets (``b18c384nbt-humanv0`` and later, ``meta_encoder_version`` 1) take, besides
the board features, a 192-float row describing the game the move comes from: the players' ranks,
whether they are human, the time control, the date and the server. ``humanSLProfile`` names a
preset of that description. The names and the row layout are KataGo's (``SGFMetadata``):

=========================  ==========================================================================
profile                    meaning
=========================  ==========================================================================
``rank_R``                 both players rank R (``20k`` .. ``1k``, ``1d`` .. ``9d``), modern (2020) KGS
``preaz_R``                the same before AlphaZero-style play spread (2016 KGS games)
``rank_BR_WR``             Black rank BR, White rank WR (also ``preaz_BR_WR``)
``proyear_YEAR``           professional games of that year: 1800..2020 (GoGoD), 2021..2023 (Go4Go)
``_`` or empty             no profile (a human net that needs one is then not used)
=========================  ==========================================================================

The row is always built for the player to move: "pla" fields describe them, "opp" fields the
other player, so one profile gives different rows for Black and White to move.
"""
from __future__ import annotations

import datetime
import functools
import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

METADATA_INPUT_CHANNELS = 192

# Servers and collections (KataGo's SGFMetadata source ids).
SOURCE_KGS = 2
SOURCE_GOGOD = 5
SOURCE_GO4GO = 6
MAX_SOURCES = 16

# Ranks as KataGo counts them, from the top: 9d = 1, 1d = 9, 1k = 10, 20k = 29.
NUM_DAN_RANKS = 9
NUM_KYU_RANKS = 20
INVERSE_RANK_OF = {f"{d}d": NUM_DAN_RANKS + 1 - d for d in range(1, NUM_DAN_RANKS + 1)}
INVERSE_RANK_OF.update({f"{k}k": NUM_DAN_RANKS + k for k in range(1, NUM_KYU_RANKS + 1)})
PRO_INVERSE_RANK = 1

# The era a preset stands for.
MODERN_AMATEUR_DATE = datetime.date(2020, 3, 1)
PRE_ALPHAZERO_DATE = datetime.date(2016, 9, 1)
HISTORICAL_PRO_YEARS = (1800, 2020)
MODERN_PRO_YEARS = (2021, 2023)
PRO_GAME_MONTH_DAY = (6, 1)
# Amateur presets: KGS's usual byo-yomi (20 minutes main time, 5 periods of 30 seconds).
AMATEUR_MAIN_TIME_SECONDS = 1200.0
AMATEUR_PERIOD_SECONDS = 30.0
AMATEUR_BYO_YOMI_PERIODS = 5

EMPTY_PROFILE_NAMES = ("", "_", '""')

# Layout of the input row (offsets into the 192 floats).
_PLA_HUMAN, _OPP_HUMAN = 0, 1
_PLA_UNRANKED, _OPP_UNRANKED = 2, 3
_PLA_RANK_UNKNOWN, _OPP_RANK_UNKNOWN = 4, 5
_RANK_START = 6
_RANK_LEN_PER_PLAYER = 34
_RATEDNESS = _RANK_START + 2 * _RANK_LEN_PER_PLAYER   # 74
_TIME_CONTROL_START = _RATEDNESS + 1                    # 75..81: one-hot, see TIME_CONTROLS
_MAIN_TIME = 82
_PERIOD_TIME = 83
_BYO_YOMI_PERIODS = 84
_CANADIAN_MOVES = 85
_BOARD_AREA = 86
_DATE_START = 87
_DATE_LEN = 32
_SOURCE_START = _DATE_START + 2 * _DATE_LEN             # 151

TIME_CONTROLS = ("unknown", "none", "absolute", "simple", "byoyomi", "canadian", "fischer")

# Date encoding: sines and cosines of the days since 1970-01-01 at periods from a week up to
# 7 * 80000 days, growing geometrically (KataGo asks the net to see weekday effects too).
_EPOCH = datetime.date(1970, 1, 1)
_SHORTEST_DATE_PERIOD_DAYS = 7.0
_DATE_PERIOD_RANGE = 80000.0
# Caps before the log-scaled time-control inputs.
_MAX_MAIN_TIME_SECONDS = 3.0 * 86400
_MAX_PERIOD_SECONDS = 1.0 * 86400
_MAX_PERIODS_OR_MOVES = 50
_FULL_BOARD_AREA = 361.0


class HumanProfileError(ValueError):
    """An unknown or malformed humanSLProfile; the message is KataGo's."""


class ProfileNotSetError(HumanProfileError):
    """A network trained on SGF metadata (a human-SL net) asked to evaluate without a humanSLProfile: a setting
    the user has to give, reported in one line (KataGo stops with this message)."""

    def __init__(self) -> None:
        super().__init__("SGFMetadata is required for this network (a human SL net) but humanSLProfile was not set. "
                         "Did you specify humanSLProfile=... in the config or via overrides?")


@dataclass(frozen=True)
class SgfMetadata:
    """What a human-SL net is told about the game (KataGo's SGFMetadata), Black's and White's view."""

    inverse_black_rank: int = 0
    inverse_white_rank: int = 0
    black_is_human: bool = False
    white_is_human: bool = False
    black_unranked: bool = False
    white_unranked: bool = False
    black_rank_unknown: bool = False
    white_rank_unknown: bool = False
    game_is_unrated: bool = False
    ratedness_unknown: bool = False
    time_control: str = "unknown"
    main_time_seconds: float = 0.0
    period_time_seconds: float = 0.0
    byo_yomi_periods: int = 0
    canadian_moves: int = 0
    date: datetime.date = _EPOCH
    source: int = 0

    def row(self, white_to_move: bool, board_area: int) -> np.ndarray:
        """The 192-float input row for the player to move on a board of ``board_area`` points."""
        row = np.zeros(METADATA_INPUT_CHANNELS, np.float32)
        if white_to_move:
            pla = (self.white_is_human, self.white_unranked, self.white_rank_unknown, self.inverse_white_rank)
            opp = (self.black_is_human, self.black_unranked, self.black_rank_unknown, self.inverse_black_rank)
        else:
            pla = (self.black_is_human, self.black_unranked, self.black_rank_unknown, self.inverse_black_rank)
            opp = (self.white_is_human, self.white_unranked, self.white_rank_unknown, self.inverse_white_rank)
        row[_PLA_HUMAN], row[_OPP_HUMAN] = pla[0], opp[0]
        row[_PLA_UNRANKED], row[_OPP_UNRANKED] = pla[1], opp[1]
        row[_PLA_RANK_UNKNOWN], row[_OPP_RANK_UNKNOWN] = pla[2], opp[2]
        # Ranks as thermometers: one 1 per rank step down from the top.
        for offset, (_, unranked, _, inverse_rank) in ((0, pla), (_RANK_LEN_PER_PLAYER, opp)):
            if not unranked:
                start = _RANK_START + offset
                row[start:start + min(inverse_rank, _RANK_LEN_PER_PLAYER)] = 1.0
        row[_RATEDNESS] = 0.5 if self.ratedness_unknown else (1.0 if self.game_is_unrated else 0.0)
        row[_TIME_CONTROL_START + TIME_CONTROLS.index(self.time_control)] = 1.0

        main_time = min(max(self.main_time_seconds, 0.0), _MAX_MAIN_TIME_SECONDS)
        period_time = min(max(self.period_time_seconds, 0.0), _MAX_PERIOD_SECONDS)
        periods = min(max(self.byo_yomi_periods, 0), _MAX_PERIODS_OR_MOVES)
        moves = min(max(self.canadian_moves, 0), _MAX_PERIODS_OR_MOVES)
        row[_MAIN_TIME] = 0.4 * (math.log(main_time + 60.0) - 6.5)
        row[_PERIOD_TIME] = 0.3 * (math.log(period_time + 1.0) - 3.0)
        row[_BYO_YOMI_PERIODS] = 0.5 * (math.log(periods + 2.0) - 1.5)
        row[_CANADIAN_MOVES] = 0.25 * (math.log(moves + 2.0) - 1.5)
        row[_BOARD_AREA] = 0.5 * math.log(board_area / _FULL_BOARD_AREA)

        days = float((self.date - _EPOCH).days)
        factor = _DATE_PERIOD_RANGE ** (1.0 / (_DATE_LEN - 1))
        period = _SHORTEST_DATE_PERIOD_DAYS
        for i in range(_DATE_LEN):
            angle = (days / period) * 2.0 * math.pi
            row[_DATE_START + 2 * i] = math.cos(angle)
            row[_DATE_START + 2 * i + 1] = math.sin(angle)
            period *= factor
        row[_SOURCE_START + self.source] = 1.0
        return row


@dataclass(frozen=True)
class HumanProfile:
    """A parsed ``humanSLProfile``: its name and metadata (None for the empty profile)."""

    name: str
    metadata: Optional[SgfMetadata]

    @property
    def is_set(self) -> bool:
        return self.metadata is not None

    def row(self, white_to_move: bool, board_area: int) -> np.ndarray:
        if self.metadata is None:
            raise ProfileNotSetError()
        return self.metadata.row(white_to_move, board_area)


def _amateur(inverse_black: int, inverse_white: int, pre_alphazero: bool) -> SgfMetadata:
    return SgfMetadata(
        inverse_black_rank=inverse_black, inverse_white_rank=inverse_white, black_is_human=True, white_is_human=True,
        ratedness_unknown=True, time_control="byoyomi", main_time_seconds=AMATEUR_MAIN_TIME_SECONDS,
        period_time_seconds=AMATEUR_PERIOD_SECONDS, byo_yomi_periods=AMATEUR_BYO_YOMI_PERIODS,
        date=PRE_ALPHAZERO_DATE if pre_alphazero else MODERN_AMATEUR_DATE, source=SOURCE_KGS,
    )


def _professional(year: int, source: int) -> SgfMetadata:
    month, day = PRO_GAME_MONTH_DAY
    return SgfMetadata(
        inverse_black_rank=PRO_INVERSE_RANK, inverse_white_rank=PRO_INVERSE_RANK, black_is_human=True,
        white_is_human=True, time_control="unknown", date=datetime.date(year, month, day), source=source,
    )


def _parse_year(text: str) -> Optional[int]:
    """KataGo's tryStringToInt: an optional sign and ASCII digits, around them whitespace (Python's int()
    would also take "1_990" and other scripts' digits)."""
    text = text.strip()
    digits = text[1:] if text[:1] in ("+", "-") else text
    if not (digits.isascii() and digits.isdigit()):
        return None
    return int(text)


@functools.lru_cache(maxsize=None)
def parse_human_profile(name: str) -> HumanProfile:
    """Parse a ``humanSLProfile`` value; raises :class:`HumanProfileError` with KataGo's message.

    Cached: searches ask for the profile of their parameters on every batch.

    >>> parse_human_profile("rank_3k_5d").metadata.inverse_white_rank
    5
    >>> parse_human_profile("").is_set
    False
    """
    if name in EMPTY_PROFILE_NAMES:
        return HumanProfile(name, None)
    if name.startswith("proyear_"):
        year = _parse_year(name[len("proyear_"):])
        if year is not None and HISTORICAL_PRO_YEARS[0] <= year <= HISTORICAL_PRO_YEARS[1]:
            return HumanProfile(name, _professional(year, SOURCE_GOGOD))
        if year is not None and MODERN_PRO_YEARS[0] <= year <= MODERN_PRO_YEARS[1]:
            return HumanProfile(name, _professional(year, SOURCE_GO4GO))
    for prefix, pre_alphazero in (("rank_", False), ("preaz_", True)):
        if not name.startswith(prefix):
            continue
        ranks = name[len(prefix):]
        if ranks in INVERSE_RANK_OF:
            rank = INVERSE_RANK_OF[ranks]
            return HumanProfile(name, _amateur(rank, rank, pre_alphazero))
        pieces = ranks.split("_")
        if len(pieces) == 2 and pieces[0] in INVERSE_RANK_OF and pieces[1] in INVERSE_RANK_OF:
            return HumanProfile(name, _amateur(INVERSE_RANK_OF[pieces[0]], INVERSE_RANK_OF[pieces[1]], pre_alphazero))
    raise HumanProfileError(f"Unknown human SL network profile: {name}")
