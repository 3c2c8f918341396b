"""``one_cpu_thread``: an autouse fixture for training tests (import it into the test module).

Training tests use one torch thread: faster on small nets, and reproducible across processes.
"""
from __future__ import annotations

import pytest
import torch


@pytest.fixture(autouse=True)
def one_cpu_thread():
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)
