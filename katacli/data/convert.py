"""Lossless conversion between KataGo's ``.npz`` training files and our ``.h5`` files.

Both hold the same arrays (see :mod:`katacli.data.schema`), so conversion copies them
bit for bit. What npz cannot carry is our file attributes (model name, ...): an
``.h5`` made from an npz gets the standard attributes plus ``source`` (the npz's
name); its game table is rebuilt from the rows' game hashes, exactly as written.
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Optional

from katacli.data.files import (
    TrainingDataError,
    TrainingFile,
    list_training_files,
    read_npz,
    write_h5,
    write_npz,
)
from katacli.data.schema import H5_SUFFIX, NPZ_SUFFIX


def npz_to_h5(src: str | os.PathLike, dst: str | os.PathLike | None = None,
              compression: Optional[str] = "gzip") -> Path:
    """Convert one KataGo ``.npz`` to ``.h5`` (default: same name, ``.h5`` suffix)."""
    src = Path(src)
    dst = Path(dst) if dst is not None else src.with_suffix(H5_SUFFIX)
    arrays = read_npz(src)
    return write_h5(dst, arrays, attrs={"source": src.name}, compression=compression)


def h5_to_npz(src: str | os.PathLike, dst: str | os.PathLike | None = None) -> Path:
    """Convert one ``.h5`` to KataGo's ``.npz`` (default: same name, ``.npz`` suffix)."""
    src = Path(src)
    dst = Path(dst) if dst is not None else src.with_suffix(NPZ_SUFFIX)
    with TrainingFile(src) as f:
        arrays = f.read()
    return write_npz(dst, arrays)


def convert_file(src: str | os.PathLike, dst: str | os.PathLike | None = None) -> Path:
    """Convert by suffix: ``.npz`` -> ``.h5``, ``.h5`` -> ``.npz``. ``dst``: the output file (it must have the
    output format's suffix, so that no file is written under the other format's name, and must not be ``src``)
    or an existing directory to write it into; default: beside ``src``."""
    src = Path(src)
    if src.suffix not in (NPZ_SUFFIX, H5_SUFFIX):
        raise TrainingDataError(f"{src}: expected a .npz or .h5 file")
    to_suffix = H5_SUFFIX if src.suffix == NPZ_SUFFIX else NPZ_SUFFIX
    if dst is not None:
        dst = Path(dst)
        if dst.is_dir():
            dst = dst / src.with_suffix(to_suffix).name
        elif dst.suffix != to_suffix:
            raise TrainingDataError(f"{dst}: a {src.suffix} file converts to {to_suffix}; name the output "
                                    f"{dst.with_suffix(to_suffix).name} (or give a directory)")
        if dst.exists() and dst.resolve() == src.resolve():
            raise TrainingDataError(f"{dst} is the input file; give another output")
    return npz_to_h5(src, dst) if src.suffix == NPZ_SUFFIX else h5_to_npz(src, dst)


def convert_tree(src_dir: str | os.PathLike, dst_dir: str | os.PathLike, to_suffix: str,
                 on_error: Optional[Callable[[Path, TrainingDataError], None]] = None,
                 on_progress: Optional[Callable[[int, int], None]] = None) -> list[Path]:
    """Convert every training file under ``src_dir`` not already in ``to_suffix`` form into
    ``dst_dir``, keeping the relative paths. Returns the files written. ``on_error``: told of each file that
    cannot be read, and the others are converted still (without it, the first such file raises);
    ``on_progress(done, total)`` after each file."""
    src_dir, dst_dir = Path(src_dir), Path(dst_dir)
    if to_suffix not in (H5_SUFFIX, NPZ_SUFFIX):
        raise ValueError(f"to_suffix must be {H5_SUFFIX} or {NPZ_SUFFIX}")
    from_suffix = NPZ_SUFFIX if to_suffix == H5_SUFFIX else H5_SUFFIX
    written = []
    sources = list_training_files(src_dir, suffixes=(from_suffix,))
    for done, src in enumerate(sources, 1):
        dst = (dst_dir / src.relative_to(src_dir)).with_suffix(to_suffix)
        dst.parent.mkdir(parents=True, exist_ok=True)
        try:
            written.append(convert_file(src, dst))
        except TrainingDataError as exc:
            if on_error is None:
                raise
            on_error(src, exc)
        if on_progress is not None:
            on_progress(done, len(sources))
    return written
