"""KataGo's eval cache (``useEvalCache``) on the Python side: which table a search uses and under which key.

The cache itself is the core's :class:`katacli._core.search_evalcache.EvalCache` (see its ``.pxd`` for
what is stored and how searches use it). Entries are keyed by a node's graph hash xor a hash of every
search parameter, as KataGo's ``SearchParams::getHash`` folds in all of them (limits included), so that
a search never reuses results found with other settings. It works with graph search only.

Lifetime, as in KataGo: a GTP engine keeps one table for its whole run (across games; ``clear_cache``
empties it), the analysis engine shares one between all queries (its ``clear_cache`` action empties it),
and a :class:`~katacli.search.Searcher` given none makes its own.
"""
from __future__ import annotations

import dataclasses
import hashlib
from typing import Optional

from katacli._core.search_evalcache import EvalCache
from katacli.search.params import SearchParams

PARAMS_HASH_BITS = 128

__all__ = ["EvalCache", "eval_cache_active", "new_eval_cache", "params_hash"]


def eval_cache_active(params: SearchParams) -> bool:
    """Whether searches with these parameters read and write an eval cache (KataGo: graph search only)."""
    return bool(params.use_eval_cache and params.use_graph_search)


def new_eval_cache(params: SearchParams) -> Optional[EvalCache]:
    """A table for an engine whose default parameters are ``params``, or None when they do not ask for one."""
    return EvalCache() if params.use_eval_cache else None


def params_hash(params: SearchParams) -> int:
    """A 128-bit hash of every search parameter (field name and value), stable across runs."""
    text = "\n".join(f"{f.name}={getattr(params, f.name)!r}" for f in dataclasses.fields(params))
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:PARAMS_HASH_BITS // 8], "little")
