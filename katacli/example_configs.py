"""The commented example configs (the repository's ``configs/*.cfg``), found wherever katacli runs from.

An installed katacli carries copies in ``katacli/resources/configs/`` (setup.py puts them there at build
time); a source checkout run in place has them in ``configs/`` beside the package.
"""
from __future__ import annotations

from pathlib import Path
from typing import Optional

_PACKAGE = Path(__file__).resolve().parent
PLACES = (_PACKAGE / "resources" / "configs", _PACKAGE.parent / "configs")


def example_config(name: str) -> Optional[Path]:
    """The example config ``name`` (e.g. ``selfplay_example.cfg``), or None where it is not shipped."""
    return next((place / name for place in PLACES if (place / name).is_file()), None)
