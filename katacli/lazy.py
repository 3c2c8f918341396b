"""Package attributes imported on first use (PEP 562), so a light import does not load torch."""
from __future__ import annotations

import sys
from importlib import import_module
from typing import Callable


def lazy_attributes(package: str, exports: dict[str, str]) -> Callable[[str], object]:
    """A module ``__getattr__`` for ``package``: ``exports`` maps each name to the module defining it.

    The first use imports that module and keeps the value in the package, so later uses are plain lookups.
    """
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str):
        if name in exports:
            value = getattr(import_module(exports[name]), name)
            namespace[name] = value
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
