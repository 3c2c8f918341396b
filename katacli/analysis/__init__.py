"""`kata analysis`: KataGo's parallel JSON analysis engine.

Clients write one JSON query per line on stdin; the engine answers on stdout,
one JSON object per line, asynchronously and possibly out of order (see
KataGo's docs/Analysis_Engine.md for the protocol). Modules:

* :mod:`.protocol`  -- JSON in and out as KataGo writes it, rounding, error/warning shapes.
* :mod:`.fields`    -- typed field readers with KataGo's messages.
* :mod:`.query`     -- a query object -> validated :class:`.request.AnalysisRequest` objects, one per turn.
* :mod:`.scheduler` -- the priority queue (higher priority first, then FIFO) and open-request registry.
* :mod:`.worker`    -- analysis threads: one search per request, reports during search, final response.
* :mod:`.responses` -- a search snapshot -> moveInfos / rootInfo / ownership / policy JSON.
* :mod:`.actions`   -- query_version, query_models, clear_cache, terminate, terminate_all.
* :mod:`.backend`   -- the shared network (one BatchingEvaluator for all searches) or rollouts.
* :mod:`.engine`    -- ties them together: handle_line / serve / finish.
* :mod:`.startup`   -- building an engine from an analysis config.

Throughput comes from searching ``numAnalysisThreads`` positions at once, each
keeping ``numSearchThreadsPerAnalysisThread`` leaves in flight, with all leaves
merged into shared network batches.
"""
from katacli.analysis.backend import AnalysisBackend, ModelInfo
from katacli.analysis.engine import AnalysisEngine
from katacli.analysis.output import JsonLineWriter
from katacli.analysis.query import QueryDefaults, QueryParser
from katacli.analysis.startup import build_engine

__all__ = ["AnalysisBackend", "AnalysisEngine", "JsonLineWriter", "ModelInfo", "QueryDefaults", "QueryParser",
           "build_engine"]
