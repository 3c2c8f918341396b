"""The queue of requests waiting for an analysis thread, and the registry of open requests.

Ordering is KataGo's: higher ``priority`` first, then first come first served
(a sequence number breaks ties, so the turns of one query keep their order).
A request stays *open* from the moment it is queued until its worker finishes
it; ``terminate`` / ``terminate_all`` act on open requests only.

Termination of a queued request happens here, under the queue's lock, so a
request is either taken by a worker or terminated, never both; the caller then
writes its ``noResults`` response. A running request gets its stop event set
and its worker writes whatever the search found.

While the network loads the queue is *held* (:meth:`RequestQueue.hold`): requests
queue up (and can be terminated) but no worker takes one until :meth:`release`,
so they are then taken in priority order.
"""
from __future__ import annotations

import heapq
import itertools
import threading
from typing import Callable, Iterable, Optional

from katacli.analysis.request import AnalysisRequest, RequestStatus


class RequestQueue:
    def __init__(self):
        self._cond = threading.Condition()
        self._heap: list[tuple[int, int, AnalysisRequest]] = []
        self._arrival = itertools.count()
        self._open: dict[int, AnalysisRequest] = {}
        self._closed = False
        self._held = False

    def push(self, requests: Iterable[AnalysisRequest]) -> None:
        with self._cond:
            if self._closed:
                raise RuntimeError("the analysis queue is closed")
            for request in requests:
                self._open[request.internal_id] = request
                # heapq pops the smallest: negate the priority so that higher comes first.
                heapq.heappush(self._heap, (-request.priority, next(self._arrival), request))
                self._cond.notify()

    def pop(self, block: bool = True) -> Optional[AnalysisRequest]:
        """The next request to analyse, marked RUNNING. Blocks (also while held) until there is one, or
        returns None once the queue is closed and empty; with ``block=False`` None also when none is ready."""
        with self._cond:
            while True:
                while self._heap and not self._held:
                    _, _, request = heapq.heappop(self._heap)
                    if request.status is RequestStatus.QUEUED:
                        request.status = RequestStatus.RUNNING
                        return request
                if (self._closed and not self._heap) or not block:
                    return None
                self._cond.wait()

    def hold(self) -> None:
        """Keep requests queued, none taken, until :meth:`release` (the network is still loading)."""
        with self._cond:
            self._held = True

    def release(self) -> None:
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def finish(self, request: AnalysisRequest) -> None:
        """The worker is done with the request (its final response is written)."""
        with self._cond:
            request.status = RequestStatus.DONE
            self._open.pop(request.internal_id, None)
            self._cond.notify_all()

    def terminate(self, matches: Callable[[AnalysisRequest], bool]) -> list[AnalysisRequest]:
        """Stop every open request that ``matches``; returns those that never started (to report as noResults)."""
        never_started = []
        with self._cond:
            for request in sorted(self._open.values(), key=lambda r: r.internal_id):
                if not matches(request):
                    continue
                if request.status is RequestStatus.QUEUED:
                    request.status = RequestStatus.TERMINATED
                    del self._open[request.internal_id]
                    never_started.append(request)
                elif request.status is RequestStatus.RUNNING:
                    request.status = RequestStatus.TERMINATED
                    request.stop_event.set()
            self._cond.notify_all()
        return never_started

    def close(self) -> None:
        """No more requests will come: workers finish what is queued, then stop."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()

    def abandon(self) -> None:
        """Quit now: drop everything queued, stop running searches, and close."""
        with self._cond:
            self._closed = True
            for request in list(self._open.values()):
                request.stop_event.set()
                if request.status is RequestStatus.QUEUED:
                    request.status = RequestStatus.TERMINATED
                    del self._open[request.internal_id]
            self._heap.clear()
            self._cond.notify_all()

    def wait_idle(self, timeout: Optional[float] = None) -> bool:
        """Block until no request is open; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._open, timeout)

    @property
    def num_open(self) -> int:
        with self._cond:
            return len(self._open)

    @property
    def num_queued(self) -> int:
        with self._cond:
            return sum(1 for r in self._open.values() if r.status is RequestStatus.QUEUED)
