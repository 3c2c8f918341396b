"""Reading and writing one training-data file (``.h5`` ours, ``.npz`` KataGo's).

Files are written atomically: the data goes to a hidden temporary name in the target
directory, is flushed and fsync'ed, then renamed into place (and the directory
fsync'ed). A reader therefore never sees a half-written ``.h5`` or ``.npz``, even
if the writer is killed; a leftover temporary file is recognisable by its name
(:func:`is_partial_file`) and removed by :func:`remove_stale_partials`.
"""
from __future__ import annotations

import datetime
import io
import os
import tokenize
import zipfile
import zlib
from pathlib import Path
from typing import Iterable, Iterator, Sequence

import h5py
import numpy as np

from katacli import __version__
from katacli.atomic_files import (  # noqa: F401  (re-exported: data.files is their older home)
    PARTIAL_MARKER,
    append_whole,
    atomic_output,
    is_partial_file,
    partial_name,
    remove_stale_partials,
)
from katacli.data.schema import (
    DATA_FORMAT_VERSION,
    FIELDS,
    FORMAT_NAME,
    GAME_ROWS_DATASET,
    H5_SUFFIX,
    INPUTS_VERSION,
    NPZ_SUFFIX,
    REQUIRED_FIELDS,
    SCHEMA_VERSION,
    SchemaError,
    game_row_ranges,
    validate_arrays,
)

# Rows per HDF5 chunk: big enough to compress well, small enough to read a few rows cheaply.
CHUNK_ROWS = 256
# What reading a damaged file raises: a zip's broken deflate stream is a zlib.error (no OSError), a garbled
# .npy header numpy's parser's SyntaxError / tokenize.TokenError; h5py names a broken HDF5 structure in a
# KeyError ("Unable to synchronously open object ..."), a RuntimeError or an OSError.
NPZ_READ_ERRORS = (OSError, ValueError, zipfile.BadZipFile, EOFError, zlib.error, SyntaxError, tokenize.TokenError)
H5_READ_ERRORS = (OSError, KeyError, ValueError, RuntimeError)
# gzip level 4 is within a few percent of level 9's size at a fraction of the time.
GZIP_LEVEL = 4


class TrainingDataError(Exception):
    """A training-data file that is missing, unreadable or not in the expected layout."""


# ---------------------------------------------------------------------------- writing


def _standard_attrs(num_rows: int, pos_len: int, num_games: int) -> dict:
    return {
        "format": FORMAT_NAME,
        "schema_version": SCHEMA_VERSION,
        "data_format_version": DATA_FORMAT_VERSION,
        "inputs_version": INPUTS_VERSION,
        "pos_len": pos_len,
        "num_rows": num_rows,
        "num_games": num_games,
        "writer": f"katacli {__version__}",
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def write_h5(path: str | os.PathLike, arrays: dict[str, np.ndarray], *, attrs: dict | None = None,
             compression: str | None = "gzip") -> Path:
    """Write one ``.h5`` training file atomically. ``arrays`` are KataGo's per-row arrays.

    ``attrs`` adds file attributes (strings or numbers), e.g. the model name; the
    standard ones (format, pos_len, num_rows, ...) are always written.
    """
    num_rows, pos_len = validate_arrays(arrays)
    game_rows = game_row_ranges(arrays["globalTargetsNC"])
    path = Path(path)
    # Built in memory, then written with one plain write: HDF5 meeting a full disk half-way through
    # leaves its library in a broken state and raises assorted errors; a plain write raises ENOSPC.
    contents = io.BytesIO()
    with h5py.File(contents, "w") as f:
        for name, array in arrays.items():
            _create_dataset(f, name, array, compression)
        _create_dataset(f, GAME_ROWS_DATASET, game_rows, compression=None)
        for key, value in {**_standard_attrs(num_rows, pos_len, len(game_rows)), **(attrs or {})}.items():
            f.attrs[key] = value
    with atomic_output(path) as temp:
        with open(temp, "wb") as out:
            out.write(contents.getbuffer())
    return path


def _create_dataset(f: h5py.File, name: str, array: np.ndarray, compression: str | None) -> None:
    kwargs = {}
    if array.shape[0] > 0 and compression:
        kwargs = dict(chunks=(min(CHUNK_ROWS, array.shape[0]), *array.shape[1:]), compression=compression,
                      shuffle=True)
        if compression == "gzip":
            kwargs["compression_opts"] = GZIP_LEVEL
    f.create_dataset(name, data=array, **kwargs)


def write_npz(path: str | os.PathLike, arrays: dict[str, np.ndarray]) -> Path:
    """Write KataGo's ``.npz`` (compressed, only KataGo's array names) atomically."""
    validate_arrays(arrays)
    path = Path(path)
    with atomic_output(path) as temp:
        with open(temp, "wb") as out:
            np.savez_compressed(out, **arrays)
    return path


# ---------------------------------------------------------------------------- reading


class TrainingFile:
    """An open ``.h5`` training file. Use as a context manager.

    ``read()`` returns the KataGo arrays (all rows or a slice) as numpy arrays;
    ``game_rows`` holds each game's (first row, row count).
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            self._file = h5py.File(self.path, "r")
        except FileNotFoundError:
            raise TrainingDataError(f"training file not found: {self.path}") from None
        except OSError as exc:
            raise TrainingDataError(f"cannot read {self.path} as HDF5: {exc}") from None
        try:
            self._read_layout()
        except TrainingDataError:
            self._file.close()
            raise
        except H5_READ_ERRORS as exc:   # damaged metadata: h5py raises KeyError / OSError naming the HDF5 fault
            self._file.close()
            raise TrainingDataError(f"corrupt data in {self.path}: {exc}") from None

    def _read_layout(self) -> None:
        attrs = dict(self._file.attrs)
        if attrs.get("format") != FORMAT_NAME:
            raise TrainingDataError(f"{self.path} is not a {FORMAT_NAME} file")
        self.attrs = attrs
        version = attrs.get("inputs_version", INPUTS_VERSION)
        if version != INPUTS_VERSION:   # another feature layout: a net would learn from misread planes
            raise TrainingDataError(f"{self.path} holds V{version} inputs; kata reads V{INPUTS_VERSION} only")
        self.fields = [name for name in FIELDS if name in self._file]
        missing = [name for name in REQUIRED_FIELDS if name not in self.fields]
        if missing:
            raise TrainingDataError(f"{self.path} lacks datasets: {', '.join(missing)}")
        self.num_rows = int(self._file["globalTargetsNC"].shape[0])
        self.pos_len = int(self._file["valueTargetsNCHW"].shape[2])

    @property
    def game_rows(self) -> np.ndarray:
        try:
            if GAME_ROWS_DATASET in self._file:
                return self._file[GAME_ROWS_DATASET][()]
            return game_row_ranges(self._file["globalTargetsNC"][()])
        except H5_READ_ERRORS as exc:
            raise TrainingDataError(f"corrupt data in {self.path}: {exc}") from None

    @property
    def num_games(self) -> int:
        return int(self.game_rows.shape[0])

    def read(self, fields: Sequence[str] | None = None, start: int = 0, stop: int | None = None) -> dict[str, np.ndarray]:
        names = self.fields if fields is None else list(fields)
        unknown = [n for n in names if n not in self.fields]
        if unknown:
            raise TrainingDataError(f"{self.path} has no dataset(s) {', '.join(unknown)}")
        stop = self.num_rows if stop is None else stop
        try:
            return {name: self._file[name][start:stop] for name in names}
        except H5_READ_ERRORS as exc:
            raise TrainingDataError(f"corrupt data in {self.path}: {exc}") from None

    def games(self) -> Iterator[dict[str, np.ndarray]]:
        """Each game's rows, in file order."""
        for first, count in self.game_rows:
            yield self.read(start=int(first), stop=int(first + count))

    def close(self) -> None:
        self._file.close()

    def __enter__(self) -> "TrainingFile":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def read_npz(path: str | os.PathLike) -> dict[str, np.ndarray]:
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except FileNotFoundError:
        raise TrainingDataError(f"training file not found: {path}") from None
    except NPZ_READ_ERRORS as exc:
        # numpy reads a file that is not a zip as a pickle and then advises loading it unsafely: say what it is.
        reason = "not an npz (zip) file" if not zipfile.is_zipfile(path) else str(exc)
        raise TrainingDataError(f"cannot read {path} as npz: {reason}") from None
    try:
        validate_arrays(arrays)
    except SchemaError as exc:
        raise TrainingDataError(f"{path}: {exc}") from None
    return arrays


def load_training_arrays(path: str | os.PathLike, fields: Sequence[str] | None = None) -> dict[str, np.ndarray]:
    """All rows of a ``.h5`` or ``.npz`` training file as KataGo's arrays (what ``np.load`` gives for npz)."""
    path = Path(path)
    if path.suffix == NPZ_SUFFIX:
        arrays = read_npz(path)
        return arrays if fields is None else {name: arrays[name] for name in fields}
    with TrainingFile(path) as f:
        return f.read(fields)


def list_training_files(directory: str | os.PathLike, suffixes: Iterable[str] = (H5_SUFFIX, NPZ_SUFFIX),
                        recursive: bool = True) -> list[Path]:
    """Completed training files under ``directory`` (temporary files excluded), sorted by path."""
    directory = Path(directory)
    suffixes = tuple(suffixes)
    pattern = "**/*" if recursive else "*"
    return sorted(p for p in directory.glob(pattern)
                  if p.is_file() and p.name.endswith(suffixes) and not p.name.startswith("."))
