"""Running a test's worker on several threads at once."""
from __future__ import annotations

import threading
from typing import Callable, Optional


def run_in_threads(worker: Callable[[int], None], count: int, timeout: Optional[float] = None) -> None:
    """worker(0) .. worker(count - 1), each on its own thread, all started before any is joined."""
    threads = [threading.Thread(target=worker, args=(k,)) for k in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
