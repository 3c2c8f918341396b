"""Batches prepared on a worker thread while the current one trains, and staged for the GPU there."""

from __future__ import annotations

import contextlib
import copy
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import asdict
from typing import Callable, Optional

from katacli.train.batch import Batch
from katacli.train.window import DataStream, StreamState


class Prefetcher:
    """Prepares the next batch on a worker thread while the current one trains.

    ``stage`` (e.g. :meth:`Batch.staged_for_gpu`) runs on the worker too, so layout changes and
    pinning cost the training thread nothing. Remembers the stream's state from before each
    pending batch, which is what a checkpoint must record (the pending batch has not been trained yet).
    """

    def __init__(self, stream: DataStream, stage: Optional[Callable[[Batch], Batch]] = None):
        self.stream = stream
        self.stage = stage
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="batch-prefetch")
        self.pending: Optional[Future] = None
        self.state_before_pending: Optional[StreamState] = None
        self._state_before_taken: Optional[StreamState] = None

    def _next(self, samples_at_batch: int) -> Batch:
        batch = self.stream.next_batch(samples_at_batch)
        return self.stage(batch) if self.stage is not None else batch

    def request(self, samples_at_batch: int) -> None:
        self.state_before_pending = copy.deepcopy(self.stream.state)
        self.pending = self.pool.submit(self._next, samples_at_batch)

    def take(self) -> Batch:
        batch = self.pending.result()
        self.pending = None
        self._state_before_taken = self.state_before_pending
        return batch

    def resume_state(self) -> dict:
        """The stream position of the next untrained batch (the pending one, if any)."""
        state = self.state_before_pending if self.pending is not None else self.stream.state
        return asdict(state)

    def state_before_taken(self) -> Optional[dict]:
        """The stream position of the batch last taken (when it will not be trained after all); None before
        the first is taken."""
        return None if self._state_before_taken is None else asdict(self._state_before_taken)

    def close(self) -> None:
        if self.pending is not None:
            with contextlib.suppress(Exception):
                self.pending.result()
        self.pool.shutdown(wait=True)
