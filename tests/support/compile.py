"""torch.compile on the CPU writes and builds C++ kernels: tests that compile need a C++ compiler."""
from __future__ import annotations

import shutil

import pytest

needs_cxx_compiler = pytest.mark.skipif(not (shutil.which("c++") or shutil.which("g++")),
                                        reason="torch.compile on the CPU needs a C++ compiler")
