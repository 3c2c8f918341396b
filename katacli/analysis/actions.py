"""Special action queries: query_version, query_models, clear_cache, terminate, terminate_all.

Each is acknowledged by echoing the query object back (with ``version`` /
``git_hash`` or ``models`` added where KataGo adds them). Terminating does not
wait: requests still queued get their ``noResults`` response before the
acknowledgement, running searches are stopped and report what they found soon
after.
"""
from __future__ import annotations

from typing import Callable

from katacli import KATAGO_COMPAT_VERSION, __version__
from katacli.analysis.backend import AnalysisBackend
from katacli.analysis.fields import read_int_list
from katacli.analysis.protocol import QueryError, error
from katacli.analysis.responses import no_results_response
from katacli.analysis.scheduler import RequestQueue

ACTIONS = ("query_version", "query_models", "clear_cache", "terminate", "terminate_all")
UNKNOWN_ACTION_MESSAGE = ("'action' field must be 'query_version' or 'query_models' or 'clear_cache' "
                          "or 'terminate' or 'terminate_all'")
TURN_NUMBERS_MESSAGE = "If provided, must be an array of integers indicating turns to terminate"
# KataGo reports the release it was built from and its git revision; we report the release we follow.
VERSION = KATAGO_COMPAT_VERSION
GIT_HASH = f"katacli-{__version__}"


class ActionHandler:
    def __init__(self, queue: RequestQueue, backend: AnalysisBackend, emit: Callable[[dict], None],
                 report_error: Callable[[dict], None] | None = None, eval_cache=None):
        """``emit`` writes an answer; ``report_error`` writes (and logs) a general error; ``eval_cache``: the
        queries' shared eval cache (useEvalCache), emptied with the network caches by clear_cache."""
        self.queue = queue
        self.backend = backend
        self.eval_cache = eval_cache
        self.emit = emit
        self.report_error = report_error or emit

    def handle(self, query: dict) -> None:
        """Answer one action query (``query["action"]`` is a string); raises QueryError for bad fields."""
        action = query["action"]
        if action == "query_version":
            self.emit({**query, "version": VERSION, "git_hash": GIT_HASH})
        elif action == "query_models":
            self.emit({**query, "models": self.backend.models()})
        elif action == "clear_cache":
            self.backend.clear_cache()
            if self.eval_cache is not None:
                self.eval_cache.clear()
            self.emit(dict(query))
        elif action == "terminate":
            target = query.get("terminateId")
            if not isinstance(target, str):
                raise QueryError("terminateId", 'Requests for a terminate action must have a string "terminateId" field')
            self._terminate(query, lambda request: request.query_id == target)
        elif action == "terminate_all":
            self._terminate(query, lambda request: True)
        else:
            self.report_error(error(UNKNOWN_ACTION_MESSAGE))

    def _terminate(self, query: dict, same_id: Callable) -> None:
        turns = None
        if "turnNumbers" in query:
            turns = set(read_int_list(query, "turnNumbers", TURN_NUMBERS_MESSAGE))
        for request in self.queue.terminate(
                lambda request: same_id(request) and (turns is None or request.turn_number in turns)):
            self.emit(no_results_response(request))
        self.emit(dict(query))
