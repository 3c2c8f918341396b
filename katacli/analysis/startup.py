"""Building an analysis engine from a KataGo analysis config (used by `kata analysis` and the tests)."""
from __future__ import annotations

import dataclasses
from typing import Optional

from katacli.analysis.backend import AnalysisBackend
from katacli.analysis.engine import AnalysisEngine
from katacli.analysis.output import JsonLineWriter
from katacli.analysis.query import QueryDefaults, perspective_from_config
from katacli.config import Config
from katacli.engine_common import DETERMINISTIC_SEED, stable_seed
from katacli.search.params import SearchParams
from katacli.setup.engine_settings import AnalysisSettings

MODE = "analysis"


def load_search_defaults(cfg: Config, has_human_model: bool = False) -> SearchParams:
    """The analysis search parameters every query starts from (raises ConfigError)."""
    return SearchParams.from_config(cfg, MODE, has_human_model=has_human_model)


def query_defaults(cfg: Config, settings: AnalysisSettings, params: Optional[SearchParams] = None,
                   backend: Optional[AnalysisBackend] = None) -> QueryDefaults:
    has_human_model = bool(backend is not None and backend.human_evaluator is not None)
    return QueryDefaults(
        config=cfg, params=params if params is not None else load_search_defaults(cfg),
        perspective=perspective_from_config(cfg), pv_len=settings.analysis_pv_len,
        prevent_encore=settings.prevent_cleanup_phase,
        assume_multiple_starting_black_moves_are_handicap=settings.assume_multiple_starting_black_moves_are_handicap,
        warn_unused_fields=settings.warn_unused_fields,
        model_uses_human_profile=bool(backend is not None and backend.uses_human_profile),
        model_names=backend.model_names if backend is not None else "",
        has_human_model=has_human_model,
        has_network=bool(backend is not None and backend.has_network),
    )


def engine_seed(cfg: Config, settings: AnalysisSettings) -> Optional[int]:
    """Fixed with forDeterministicTesting or searchRandSeed, else random."""
    if settings.for_deterministic_testing:
        return stable_seed(DETERMINISTIC_SEED)
    text = cfg.get("searchRandSeed", MODE) if "searchRandSeed" in cfg else None
    return stable_seed(text)


def build_engine(cfg: Config, settings: AnalysisSettings, backend: AnalysisBackend, writer: JsonLineWriter,
                 log=None, params: Optional[SearchParams] = None, pattern_table=None) -> AnalysisEngine:
    """The engine for this config and backend (not started); ``pattern_table``: see load_pattern_table."""
    return AnalysisEngine(
        query_defaults(cfg, settings, params, backend), backend, writer, log,
        num_analysis_threads=settings.num_analysis_threads, seed=engine_seed(cfg, settings),
        log_all_requests=settings.log_all_requests, log_errors_and_warnings=settings.log_errors_and_warnings,
        log_search_info=settings.log_search_info, pattern_table=pattern_table,
    )


def load_pattern_table(settings: AnalysisSettings, log):
    """The avoidSgfPattern* table (None without one); PatternAvoidanceError for unusable files."""
    from katacli.search.pattern_avoidance import load_sgf_pattern_table

    return load_sgf_pattern_table(list(settings.sgf_patterns), log.write)


def without_stdout_logging(settings: AnalysisSettings) -> AnalysisSettings:
    """stdout carries the protocol, so logToStdout cannot be honoured."""
    logging = dataclasses.replace(settings.logging, log_to_stdout=False)
    return dataclasses.replace(settings, logging=logging)
