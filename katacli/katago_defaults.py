"""KataGo's default files: where `katago` looks when it is given no -model or no -config.

KataGo (HomeData::getDefaultFilesDirs, Unix) looks beside its executable, then in ``~/.katago``, for
``default_model.bin.gz`` (or ``default_model.txt.gz``) and, for the commands that read a GTP config (gtp,
benchmark, testgpuerror), ``default_gtp.cfg``. A user who set those up for KataGo gets them from `kata`
too: the directory of the `kata` launcher and ``~/.katago`` are searched the same way, before katacli's
own default network and default settings are used.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Optional, Sequence

DEFAULT_MODEL_FILES = ("default_model.bin.gz", "default_model.txt.gz")
DEFAULT_GTP_CONFIG_FILE = "default_gtp.cfg"
HOME_DATA_DIR = ".katago"


def default_files_dirs() -> list[Path]:
    """The launcher's directory, then ``~/.katago`` (the ones that can be named)."""
    dirs = []
    launcher = sys.argv[0] if sys.argv else ""
    if launcher and os.path.basename(launcher) not in ("", "-c", "-m"):
        dirs.append(Path(os.path.abspath(launcher)).parent)
    home = os.path.expanduser("~")
    if home and home != "~":
        dirs.append(Path(home) / HOME_DATA_DIR)
    return dirs


def find_default_file(names: Sequence[str]) -> Optional[Path]:
    """The first of ``names`` that exists in the first default directory holding one, or None."""
    for folder in default_files_dirs():
        for name in names:
            path = folder / name
            if path.is_file():
                return path
    return None


def default_gtp_config(configs: Optional[Sequence[str]]) -> tuple[Optional[list[str]], Optional[str]]:
    """(-config values to use, a start-up note or None): the given ones, or else KataGo's default_gtp.cfg
    when there is one."""
    if configs:
        return list(configs), None
    found = find_default_file([DEFAULT_GTP_CONFIG_FILE])
    if found is None:
        return configs, None
    return [str(found)], f"No -config given: using KataGo's default config {found}"
