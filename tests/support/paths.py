"""Where the tests find the repository and the shared data, and how they skip without it.

``shared/`` beside the checkout holds KataGo networks (``models/``) and KataGo 1.17.2 reference
outputs (``reference/``). It is not part of the repository: a test that needs it skips, naming the
missing file, and carries the ``needs_shared`` marker so ``-m "not needs_shared"`` leaves it out.
"""
from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
CONFIGS = REPO / "configs"
TRANSCRIPTS = TESTS / "gtp_transcripts"
# The tiny random-weight net `kata runtests` ships (no shared/ needed).
BUNDLED_TINY_MODEL = REPO / "katacli" / "selfcheck" / "data" / "tiny-b2c16.bin.gz"
SHARED = REPO.parent / "shared"
MODELS = SHARED / "models"
REFERENCE = SHARED / "reference"

# The shared networks the tests use.
G170_B6 = "g170-b6c96-s175395328-d26788732.bin.gz"  # KataGo's g170 6-block net, most reference outputs
TEST_B4 = "test-b4c32.bin.gz"                       # the tiniest real net: fast tests of plumbing
HUMAN_TEST = "human/test-b3c48nbt-humanmeta.bin.gz"  # a tiny human-SL net (SGF metadata encoder)
TEST_NBT = "test-b3c48nbt.bin.gz"                   # nested-bottleneck blocks (version 15)
TEST_NBT_MISH = "test-b3c48nbt-mish-bng.bin.gz"     # the same with mish and batch norm gammas
TEST_TRANSFORMER = "b7c96h3tfrs-test5-cnorm.bin.gz"  # transformer blocks (version 17)
# One of each architecture the model code handles.
SHARED_NETS = [G170_B6, TEST_NBT, TEST_NBT_MISH, TEST_B4, TEST_TRANSFORMER]

MISSING_HINT = "the shared/ folder beside the checkout"


def require(path: Path, *, module: bool = False) -> Path:
    """``path`` if it exists; otherwise skip the test (or, with ``module``, the whole module)."""
    if not path.exists():
        pytest.skip(f"{path} not found ({MISSING_HINT})", allow_module_level=module)
    return path


def model_path(name: str, *, module: bool = False) -> Path:
    """A shared network by file name (relative to ``shared/models``), or skip."""
    return require(MODELS / name, module=module)


def reference_path(name: str, *, module: bool = False) -> Path:
    """A KataGo reference output by name (relative to ``shared/reference``), or skip."""
    return require(REFERENCE / name, module=module)


def import_script(relative: str):
    """A script of the checkout (``examples/gtp_match.py``, ``scripts/make_selfcheck_reference.py``) as a
    module, registered under its file name (dataclasses look their module up in sys.modules)."""
    import importlib.util
    import sys

    path = REPO / relative
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
