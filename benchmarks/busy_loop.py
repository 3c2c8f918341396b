"""Busy loops that keep processor cores occupied while an engine is measured (the contention benchmarks).

Each loop is a separate process spinning in pure arithmetic, like another program that never sleeps
(a second engine, a video call, a build). Used as a context manager::

    with BusyLoops(1):
        ... measure ...
"""
from __future__ import annotations

import multiprocessing
from typing import Optional


def _spin() -> None:
    counter = 0
    while True:  # killed by BusyLoops.__exit__
        counter = (counter * 1103515245 + 12345) & 0xFFFFFFFF


class BusyLoops:
    def __init__(self, count: int):
        self.count = count
        self.processes: list[multiprocessing.Process] = []

    def __enter__(self) -> "BusyLoops":
        for _ in range(self.count):
            process = multiprocessing.Process(target=_spin, daemon=True)
            process.start()
            self.processes.append(process)
        return self

    def __exit__(self, *exc: Optional[BaseException]) -> None:
        for process in self.processes:
            process.kill()
        for process in self.processes:
            process.join()
        self.processes.clear()
