"""Collect finished games' rows and write them as ``.h5`` files of whole games.

Like KataGo's TrainingDataWriter, files are named by a random 64-bit hex number,
hold about ``max_rows_per_file`` rows, and the first file of a run is cut at a
random smaller size (``first_file_rand_min_prop``) so that parallel runs do not
stay in step. Unlike KataGo, a file is only cut between games, so every file
holds whole games (a single game longer than the limit makes a longer file).
"""
from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Optional

import numpy as np

from katacli.data.files import remove_stale_partials, write_h5
from katacli.data.schema import H5_SUFFIX, SELFPLAY_FIELDS, validate_arrays

HEX_NAME_BITS = 64


class TrainingDataWriter:
    """Buffers games' rows; writes a file once ``max_rows_per_file`` rows are buffered.

    Not thread-safe: call from one writer thread.
    """

    def __init__(self, out_dir: str | os.PathLike, pos_len: int, max_rows_per_file: int,
                 first_file_rand_min_prop: float = 1.0, *, rng: Optional[random.Random] = None,
                 attrs: Optional[dict] = None, compression: Optional[str] = "gzip"):
        if max_rows_per_file < 1:
            raise ValueError("max_rows_per_file must be at least 1")
        if not 0.0 <= first_file_rand_min_prop <= 1.0:
            raise ValueError(f"first_file_rand_min_prop must be in [0, 1], got {first_file_rand_min_prop}")
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)
        remove_stale_partials(self.out_dir)
        self.pos_len = pos_len
        self.max_rows_per_file = max_rows_per_file
        self.rng = rng or random.Random()
        self.attrs = dict(attrs or {})
        self.compression = compression
        self._games: list[dict[str, np.ndarray]] = []
        self._buffered_rows = 0
        self._is_first_file = True
        if first_file_rand_min_prop >= 1.0:
            self._first_file_max_rows = max_rows_per_file
        else:
            cut = int(max_rows_per_file * (1.0 - first_file_rand_min_prop) * self.rng.random())
            self._first_file_max_rows = max(1, max_rows_per_file - cut)
        self.files_written: list[Path] = []
        self.rows_written = 0
        self.games_written = 0

    @property
    def buffered_rows(self) -> int:
        return self._buffered_rows

    @property
    def buffered_games(self) -> int:
        return len(self._games)

    def _row_limit(self) -> int:
        return self._first_file_max_rows if self._is_first_file else self.max_rows_per_file

    def add_game(self, arrays: dict[str, np.ndarray]) -> Optional[Path]:
        """Buffer one game's rows (KataGo's arrays); returns the file path if this filled a file."""
        num_rows, pos_len = validate_arrays(arrays, self.pos_len)
        if num_rows == 0:
            return None
        self._games.append(arrays)
        self._buffered_rows += num_rows
        if self._buffered_rows >= self._row_limit():
            return self.flush()
        return None

    def flush(self) -> Optional[Path]:
        """Write everything buffered to a new file (nothing if empty); returns its path."""
        if not self._games:
            return None
        arrays = {name: np.concatenate([g[name] for g in self._games]) for name in SELFPLAY_FIELDS}
        path = self.out_dir / f"{self.rng.getrandbits(HEX_NAME_BITS):016X}{H5_SUFFIX}"
        write_h5(path, arrays, attrs=self.attrs, compression=self.compression)
        self.files_written.append(path)
        self.rows_written += self._buffered_rows
        self.games_written += len(self._games)
        self._games.clear()
        self._buffered_rows = 0
        self._is_first_file = False
        return path

    def close(self) -> Optional[Path]:
        return self.flush()
