"""The start and hint positions of a self-play run: loaded once at start-up, drawn per game.

As KataGo's GameInitializer: with ``startPosesFromSgfDir`` every unique position of every
SGF below those directories (all variations, files named in ``startPosesSgfExcludes``
skipped) is kept with probability ``startPosesLoadProb``; with ``hintPosesDir`` every line
of the ``*.hintposes.txt``, ``*.startposes.txt`` and ``*.bookposes.txt`` files there is a
sample. A sample is drawn by its weight times ``exp(-turn * startPosesTurnWeightLambda)``
(hint positions: weight only). A game starts from a start position with chance
``startPosesProb``, else from a hint position with chance ``hintPosesProb``.

A directory or file that cannot be read stops the run at start-up with a one-line error
naming it. SGFs that do not parse and position lines that do not read are skipped and
counted, as KataGo logs and skips them; if nothing usable is left, that kind of start is
switched off with a warning, as in KataGo.
"""
from __future__ import annotations

import bisect
import itertools
import math
import os
import random
from dataclasses import dataclass, field
from typing import Callable, Optional

from katacli.config import ConfigError
from katacli.config_keys.fields import config_field
from katacli.game.sgf import MAX_BOARD_LEN, SgfError, invalid_sgf_line, read_file_bytes
from katacli.game.sgf_variations import read_sgf_tree
from katacli.selfplay.sgf_positions import ExcludesError, read_excludes, unique_positions
from katacli.selfplay.start_positions import PositionLineError, PositionSample

SGF_SUFFIXES = (".sgf", ".SGF")
POSITION_FILE_SUFFIXES = (".hintposes.txt", ".startposes.txt", ".bookposes.txt")
# KataGo refuses unnormalised probabilities beyond this size.
MAX_UNNORMALIZED_PROB = 1e200
# Keeps the effective sample size finite when every weight is 0.
ESS_EPSILON = 1e-200
# The keys are self-play keys (match and gatekeeper read them the same way).
CONFIG_MODE = "selfplay"


class PositionLoadError(ConfigError):
    """A start-position directory or file that cannot be used; the message names it."""


@dataclass(frozen=True)
class StartPositionSettings:
    """The config keys of start and hint positions (None: the directory key is absent). The directory
    keys switch loading on and are read by the caller; the others are registry fields."""

    sgf_dirs: Optional[tuple[str, ...]] = None
    sgf_excludes: tuple[str, ...] = ()
    start_poses_prob: float = config_field("startPosesProb", default_mode=CONFIG_MODE)
    load_prob: float = config_field("startPosesLoadProb", default_mode=CONFIG_MODE)
    turn_weight_lambda: float = config_field("startPosesTurnWeightLambda", default_mode=CONFIG_MODE)
    hint_dirs: Optional[tuple[str, ...]] = None
    hint_poses_prob: float = config_field("hintPosesProb", default_mode=CONFIG_MODE)


class WeightedPositions:
    """Samples drawn by weight (KataGo's generateCumProbs and nextIndexCumulative)."""

    def __init__(self, samples: list[PositionSample], turn_weight_lambda: float, what: str):
        self.samples = samples
        min_initial_turn = min([0] + [s.initial_turn_number for s in samples])
        probs = []
        for s in samples:
            try:
                prob = math.exp(-(s.current_turn_number - min_initial_turn) * turn_weight_lambda) * s.weight
            except OverflowError:
                prob = math.inf
            if not -MAX_UNNORMALIZED_PROB < prob < MAX_UNNORMALIZED_PROB:
                raise PositionLoadError(f"{what}: a position at turn {s.current_turn_number} gets the unusable "
                                        f"probability {prob}; use a smaller startPosesTurnWeightLambda")
            probs.append(prob)
        total, squares = sum(probs), sum(p * p for p in probs)
        self.effective_sample_size = total * total / (squares + ESS_EPSILON)
        self.cumulative = list(itertools.accumulate(probs))
        self.total = self.cumulative[-1] if self.cumulative else 0.0

    def __len__(self) -> int:
        return len(self.samples)

    def choose(self, rng: random.Random) -> PositionSample:
        index = bisect.bisect_right(self.cumulative, rng.random() * self.total)
        return self.samples[min(index, len(self.samples) - 1)]


@dataclass
class PositionPools:
    """What games draw their start from; empty pools and zero chances mean ordinary games."""

    start: Optional[WeightedPositions] = None
    start_prob: float = 0.0
    hints: Optional[WeightedPositions] = None
    hint_prob: float = 0.0
    log_lines: list[str] = field(default_factory=list)   # KataGo's start-up log of the loading
    warnings: list[str] = field(default_factory=list)    # worth showing on the terminal too

    def choose(self, rng: random.Random) -> Optional[PositionSample]:
        if self.start_prob > 0 and rng.random() < self.start_prob:
            return self.start.choose(rng)
        if self.hint_prob > 0 and rng.random() < self.hint_prob:
            return self.hints.choose(rng)
        return None


def _collect_files(dirs: tuple[str, ...], key: str, accept: Callable[[str], bool]) -> list[str]:
    """Files below `dirs` whose names `accept` takes, sorted; PositionLoadError for an unreadable directory."""
    def fail(error: OSError):
        raise PositionLoadError(f"{key}: cannot read directory {error.filename}: {error.strerror or error}")

    files: list[str] = []
    for directory in dirs:
        directory = directory.strip()
        if not directory:
            continue
        if not os.path.isdir(directory):
            what = "is not a directory" if os.path.exists(directory) else "does not exist"
            raise PositionLoadError(f"{key}: {directory} {what}")
        for root, _, names in os.walk(directory, onerror=fail):
            files.extend(os.path.join(root, name) for name in names if accept(name))
    return sorted(files)


def _fits(sample: PositionSample, max_len: int) -> bool:
    return sample.x_size <= max_len and sample.y_size <= max_len


def load_sgf_positions(settings: StartPositionSettings, max_len: int, rng: random.Random,
                       log: list[str]) -> list[PositionSample]:
    files = _collect_files(settings.sgf_dirs, "startPosesFromSgfDir", lambda name: name.endswith(SGF_SUFFIXES))
    try:
        excludes = read_excludes(list(settings.sgf_excludes))
    except ExcludesError as e:
        raise PositionLoadError(f"startPosesSgfExcludes: {e}") from None
    log.append(f"Found {len(files)} sgf files")
    log.append(f"Loaded {len(excludes)} excludes")
    kept: list[PositionSample] = []
    seen: set = set()
    num_excluded = num_invalid = num_too_large = 0

    def keep(sample: PositionSample) -> None:
        nonlocal num_too_large
        if rng.random() < settings.load_prob:
            if _fits(sample, max_len):
                kept.append(sample)
            else:
                num_too_large += 1

    for path in files:
        try:
            data = read_file_bytes(path)
        except SgfError as e:
            raise PositionLoadError(f"startPosesFromSgfDir: {e}") from None
        try:
            tree = read_sgf_tree(data, file_name=path, max_board_len=MAX_BOARD_LEN)
            if tree.file_hash in excludes:
                num_excluded += 1
                continue
            unique_positions(tree, seen, keep)
        except SgfError as e:
            num_invalid += 1
            log.append(invalid_sgf_line(path, e))
    log.append(f"Kept {len(kept)} start positions")
    log.append(f"Excluded {num_excluded}/{len(files)} sgf files")
    if num_invalid:
        log.append(f"{num_invalid} sgf files could not be used (see above)")
    if num_too_large:
        log.append(f"Skipped {num_too_large} positions larger than dataBoardLen {max_len}")
    return kept


def load_hint_positions(settings: StartPositionSettings, max_len: int, log: list[str]) -> list[PositionSample]:
    files = _collect_files(settings.hint_dirs, "hintPosesDir", lambda name: name.endswith(POSITION_FILE_SUFFIXES))
    samples: list[PositionSample] = []
    num_bad = num_too_large = 0
    for path in files:
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, UnicodeDecodeError) as e:
            raise PositionLoadError(f"hintPosesDir: cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                sample = PositionSample.from_json_line(line)
            except PositionLineError as e:
                num_bad += 1
                log.append(f"ERROR parsing hintpos: {path} line {number}: {e}")
                continue
            if _fits(sample, max_len):
                samples.append(sample)
            else:
                num_too_large += 1
    log.append(f"Loaded {len(samples)} hint positions")
    if num_bad:
        log.append(f"Skipped {num_bad} unreadable lines of hint position files")
    if num_too_large:
        log.append(f"Skipped {num_too_large} hint positions larger than dataBoardLen {max_len}")
    return samples


def _pool(samples: list[PositionSample], turn_weight_lambda: float, what: str, prob: float,
          pools: PositionPools) -> tuple[Optional[WeightedPositions], float]:
    weighted = WeightedPositions(samples, turn_weight_lambda, what)
    if not samples or weighted.total <= 0.0:
        message = (f"No {what} loaded" if not samples else f"All {what} have weight 0") + \
            f", disabling {what[:-1]} logic"
        pools.log_lines.append(message)
        if prob > 0:
            pools.warnings.append(message)
        return None, 0.0
    pools.log_lines.append(f"Cumulative unnormalized probability for {what}: {weighted.total:.6g}")
    pools.log_lines.append(f"Effective sample size for {what}: {weighted.effective_sample_size:.6g}")
    return weighted, prob


def load_position_pools(settings: StartPositionSettings, max_len: int,
                        rng: Optional[random.Random] = None) -> PositionPools:
    """Read everything the settings name; PositionLoadError when a directory or file cannot be read.
    Positions larger than `max_len` (dataBoardLen) are skipped and counted."""
    rng = rng or random.Random()
    pools = PositionPools()
    if settings.sgf_dirs is not None:
        samples = load_sgf_positions(settings, max_len, rng, pools.log_lines)
        pools.start, pools.start_prob = _pool(samples, settings.turn_weight_lambda, "start positions",
                                              settings.start_poses_prob, pools)
    if settings.hint_dirs is not None:
        samples = load_hint_positions(settings, max_len, pools.log_lines)
        pools.hints, pools.hint_prob = _pool(samples, 0.0, "hint positions", settings.hint_poses_prob, pools)
    return pools
