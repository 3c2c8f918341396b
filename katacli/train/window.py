"""The training data stream: a shuffled window over the newest rows of the data directory.

Like KataGo's ``shuffle.py`` + ``train.py`` pair, each *epoch* (``samplesPerEpoch`` samples)
rescans the data directory, picks the newest rows with a power-law window size

    window(N) = (N'^e - m^e) / (e * m^(e-1)) * expand + m,   N' = N, clamped to [m, maxRows]

(``m`` = ``windowMinRows``, ``e`` = ``windowTaperExponent``, ``expand`` = ``windowExpandPerRow``,
``N`` = all rows seen), loads those rows in their compact on-disk form and walks a seeded
permutation of them in global batches (rank ``r`` of ``W`` takes slice ``r`` of each). When a
permutation runs out before the epoch ends, a fresh one starts.

Everything needed to continue exactly (epoch, window files, pass, offset, step) is in
:meth:`DataStream.state_dict`; a resumed stream reloads the same files and permutation.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
from dataclasses import asdict, dataclass, field
from typing import Callable, Optional

import numpy as np

from katacli.train import rows as R
from katacli.train.batch import Batch, augment, expand_rows

# Distinct streams of randomness derived from the run seed.
PERMUTATION_STREAM = 1
AUGMENTATION_STREAM = 2
# A saved stream state whose window paths are relative to the data directory (DataStream.portable).
PATHS_IN_DATA_DIR = "paths_in_data_dir"
# epoch_start_samples of a stream whose next batch must begin a new epoch, whatever its sample count.
FORCED_RESCAN_SAMPLES = -(10**18)


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


class NoTrainingDataError(Exception):
    """The data directory has no usable rows (or fewer than one global batch)."""


def no_training_rows(data_dir: str, files: list) -> NoTrainingDataError:
    """The error for a data directory whose scan (``files``) holds no rows to train on, saying where they all
    went when validation holds them out."""
    held_out = sum(1 for f in files if f.validation and f.rows)
    return NoTrainingDataError(f"no training rows under {data_dir} (.h5/.npz files)"
                               + (f"; its {held_out} files with rows are all held out for validation "
                                  "(lower validationFraction)" if held_out else ""))


@dataclass
class DataFile:
    path: str
    rows: int
    mtime: float
    validation: bool = False   # held out of training (validationFraction; katacli.train.validation)


@dataclass
class WindowPart:
    path: str
    start: int  # first row used
    stop: int  # one past the last row used


def desired_window_rows(total_rows: int, min_rows: int, expand_per_row: float, taper_exponent: float,
                        max_rows: int = 0) -> int:
    """KataGo's power-law window size for a run with ``total_rows`` rows so far."""
    x = float(total_rows)
    m = float(min_rows)
    e = taper_exponent
    grown = (x ** e - m ** e) / (e * m ** (e - 1.0)) if x > m else 0.0
    rows = max(int(grown * expand_per_row + m), min_rows)
    if max_rows:
        rows = min(rows, max_rows)
    return rows


class DataScanner:
    """Lists the training files of a directory tree, oldest first, caching row counts."""

    def __init__(self, data_dir: str, log=print, validation_fraction: float = 0.0):
        self.data_dir = data_dir
        self.log = log
        self.validation_fraction = validation_fraction
        self._counts: dict[tuple[str, float, int], int] = {}
        self._reported_bad: set[str] = set()
        self._reported_copies: set[str] = set()
        self._unreadable: set[tuple[str, float, int]] = set()   # headers fine, rows not (found when loaded)

    def scan(self) -> list[DataFile]:
        if not os.path.isdir(self.data_dir):
            raise NoTrainingDataError(f"data directory {self.data_dir} does not exist")
        found = []
        paths, copies = R.split_converted_copies(R.list_files(self.data_dir))
        for path in copies:
            if path not in self._reported_copies:
                self._reported_copies.add(path)
                self.log(f"skipping {path}: the same rows as the .h5 file beside it (a kata convert copy)")
        for path in paths:
            try:
                stat = os.stat(path)
            except OSError:
                continue  # removed while scanning
            key = (path, stat.st_mtime, stat.st_size)
            if key in self._unreadable:
                continue
            if key not in self._counts:
                try:
                    self._counts[key] = R.count_rows(path)
                except R.TrainingFileError as exc:
                    self.report_unreadable(path, exc)
                    continue
            found.append(DataFile(path, self._counts[key], stat.st_mtime,
                                  is_validation_file(path, self.validation_fraction)))
        found.sort(key=lambda f: (f.mtime, f.path))
        return found

    def report_unreadable(self, path: str, exc: Exception, *, exclude: bool = False) -> None:
        """Say once that a file is skipped; ``exclude``: leave it out of later scans too (its rows, not its
        headers, are damaged), until it changes."""
        if path not in self._reported_bad:
            self._reported_bad.add(path)
            self.log(f"skipping unreadable training file: {exc}")
        if exclude:
            with contextlib.suppress(OSError):
                stat = os.stat(path)
                self._unreadable.add((path, stat.st_mtime, stat.st_size))


def choose_window(files: list[DataFile], window_rows: int) -> list[WindowPart]:
    """The newest ``window_rows`` rows: whole files from the newest back, the oldest one cut."""
    parts: list[WindowPart] = []
    needed = window_rows
    for f in reversed(files):
        if needed <= 0:
            break
        if f.rows == 0:
            continue
        take = min(f.rows, needed)
        parts.append(WindowPart(f.path, f.rows - take, f.rows))
        needed -= take
    parts.reverse()
    return parts


@dataclass
class StreamState:
    epoch: int = -1
    epoch_start_samples: int = 0
    total_rows_seen: int = 0
    window: list[WindowPart] = field(default_factory=list)
    pass_index: int = 0
    offset: int = 0
    step: int = 0  # global batches drawn so far


class DataStream:
    """Global batches over the current window; each rank gets its own slice."""

    def __init__(self, data_dir: str, batch_size: int, world_size: int, rank: int, seed: int,
                 samples_per_epoch: int, window_min_rows: int, window_expand_per_row: float,
                 window_taper_exponent: float, window_max_rows: int = 0, with_meta: bool = False,
                 symmetries: bool = True, history_dropout: bool = True, log=print, validation_fraction: float = 0.0):
        self.scanner = DataScanner(data_dir, log, validation_fraction)
        self.batch_size = batch_size
        self.world_size = world_size
        self.rank = rank
        self.seed = seed
        self.samples_per_epoch = samples_per_epoch
        self.window_args = (window_min_rows, window_expand_per_row, window_taper_exponent, window_max_rows)
        self.with_meta = with_meta
        self.symmetries = symmetries
        self.history_dropout = history_dropout
        self.log = log
        self.state = StreamState()
        self._rows: Optional[R.RowBlock] = None
        self._order: Optional[np.ndarray] = None

    @property
    def global_batch(self) -> int:
        return self.batch_size * self.world_size

    @property
    def pos_len(self) -> int:
        self._ensure_loaded()
        return self._rows.pos_len

    @property
    def window_rows(self) -> int:
        return sum(p.stop - p.start for p in self.state.window)

    # ---------------------------------------------------------------------------- window

    def epoch_due(self, samples: int) -> bool:
        """Whether the batch at ``samples`` starts a new epoch (and so needs a rescan)."""
        return self.state.epoch < 0 or samples - self.state.epoch_start_samples >= self.samples_per_epoch

    def scan(self) -> list[DataFile]:
        return self.scanner.scan()

    def begin_epoch(self, samples: int, files: list[DataFile]) -> None:
        """Start the next epoch on the newest rows of ``files`` (a scan, possibly made by another rank); files
        held out for validation are left out."""
        held_out = sum(1 for f in files if f.validation and f.rows)
        training = [f for f in files if not f.validation]
        total = sum(f.rows for f in training)
        if total == 0:
            raise no_training_rows(self.scanner.data_dir, files)
        files = training
        size = desired_window_rows(total, *self.window_args)
        st = self.state
        st.epoch += 1
        st.epoch_start_samples = samples
        st.total_rows_seen = total
        st.window = choose_window(files, size)
        st.pass_index = 0
        st.offset = 0
        self._load()
        self.log(f"epoch {st.epoch}: window of {self.window_rows} newest rows out of {total} in {len(st.window)} files"
                 + (f" ({held_out} files held out for validation)" if held_out else ""))

    def _load(self) -> None:
        blocks, readable = [], []
        for part in self.state.window:
            try:
                blocks.append(R.read_rows(part.path, part.start, part.stop))
                readable.append(part)
            except R.TrainingFileError as exc:   # one damaged file costs its rows, not the run
                self.scanner.report_unreadable(part.path, exc, exclude=True)
        self.state.window = readable
        if not blocks:
            raise NoTrainingDataError(f"no readable training rows in the window under {self.scanner.data_dir}")
        pos_lens = {b.pos_len for b in blocks}
        if len(pos_lens) > 1:
            example = {}
            for block, part in zip(blocks, readable):
                example.setdefault(block.pos_len, part.path)
            which = ", ".join(f"{path} has {pos_len}" for pos_len, path in sorted(example.items()))
            raise R.TrainingFileError(f"training files mix board edges {sorted(pos_lens)} (e.g. {which}); train on one "
                                      "pos_len at a time")
        self._rows = R.RowBlock.concatenate(blocks)
        if len(self._rows) < self.global_batch:
            raise NoTrainingDataError(
                f"the window has {len(self._rows)} rows, fewer than one global batch of {self.global_batch}; "
                "generate more data or lower batchSize")
        self._order = None

    @property
    def rescan_forced(self) -> bool:
        """Whether the next batch begins a new epoch whatever its sample count (a restored window's files are gone)."""
        return self.state.epoch_start_samples == FORCED_RESCAN_SAMPLES

    def force_rescan(self) -> None:
        self.state.epoch_start_samples = FORCED_RESCAN_SAMPLES

    def load_window(self) -> None:
        """Read the current window's rows now (a restored stream reads them at its first batch otherwise)."""
        self._load()

    def restrict_window(self, paths: list[str]) -> None:
        """Keep only the window's parts in ``paths`` (those every rank could read) and load them again."""
        keep = set(paths)
        self.state.window = [part for part in self.state.window if part.path in keep]
        self._load()

    def _ensure_loaded(self) -> None:
        if self._rows is None:
            if self.state.epoch < 0:
                self.begin_epoch(0, self.scan())
            else:
                self._load()

    def _permutation(self) -> np.ndarray:
        if self._order is None:
            rng = np.random.default_rng([self.seed, PERMUTATION_STREAM, self.state.epoch, self.state.pass_index])
            self._order = rng.permutation(len(self._rows))
        return self._order

    # ---------------------------------------------------------------------------- batches

    def next_batch(self, samples_so_far: int) -> Batch:
        """This rank's part of the next global batch (augmented, on the CPU)."""
        st = self.state
        if self.epoch_due(samples_so_far):
            # The trainer begins epochs itself (on its main thread, agreed between ranks); standalone use rescans here.
            self.begin_epoch(samples_so_far, self.scan())
        self._ensure_loaded()
        gb = self.global_batch
        if st.offset + gb > len(self._rows):
            st.pass_index += 1
            st.offset = 0
            self._order = None
        indices = self._permutation()[st.offset: st.offset + gb]
        rank_slice = slice(self.rank * self.batch_size, (self.rank + 1) * self.batch_size)
        batch = expand_rows(self._rows.take(indices[rank_slice]), self.with_meta)
        # Draws are made per position in the global batch, so any split over ranks sees the same ones.
        seed_sequence = np.random.SeedSequence([self.seed, AUGMENTATION_STREAM, st.step])
        batch = augment(batch, seed_sequence, rank_slice, gb, self.symmetries, self.history_dropout)
        st.offset += gb
        st.step += 1
        return batch

    # ---------------------------------------------------------------------------- resume

    def state_dict(self) -> dict:
        return self.portable(asdict(self.state))

    def portable(self, state: dict) -> dict:
        """A saved stream state (asdict of a StreamState) with its window's paths relative to the data
        directory: a restart from another working directory, or with the data folder moved, finds them. A state
        already portable is returned as it is."""
        if state.get(PATHS_IN_DATA_DIR):
            return state
        data_dir = os.path.abspath(self.scanner.data_dir)
        window = []
        for part in state["window"]:
            path = os.path.abspath(part["path"])
            inside = os.path.commonpath([path, data_dir]) == data_dir
            window.append({**part, "path": os.path.relpath(path, data_dir) if inside else path})
        return {**state, "window": window, PATHS_IN_DATA_DIR: True}

    def _resolve(self, path: str, relative_to_data_dir: bool, files_by_name: Callable[[], dict]) -> str:
        if relative_to_data_dir:
            return os.path.join(self.scanner.data_dir, path)
        if os.path.exists(path):
            return path
        # A checkpoint from before portable(): its paths relative to where that run was started.
        return files_by_name().get(os.path.basename(path), path)

    def _files_by_name(self) -> dict:
        """Base name -> path of the data directory's files (a listing made once per restore: see load_state_dict)."""
        paths = R.list_files(self.scanner.data_dir) if os.path.isdir(self.scanner.data_dir) else []
        return {os.path.basename(p): p for p in paths}

    def load_state_dict(self, state: dict) -> None:
        state = dict(state)
        relative = bool(state.pop(PATHS_IN_DATA_DIR, False))
        files_by_name = functools.cache(self._files_by_name)
        window = [WindowPart(**{**p, "path": self._resolve(p["path"], relative, files_by_name)}) for p in state["window"]]
        self.state = StreamState(**{**state, "window": window})
        self._rows = None
        self._order = None
        missing = [p.path for p in window if not os.path.exists(p.path)]
        if missing:
            # The files of the interrupted window are gone: continue with a fresh window.
            self.log(f"{len(missing)} training files of the checkpointed window are gone (e.g. {missing[0]}); "
                     "starting a new epoch")
            self.force_rescan()
