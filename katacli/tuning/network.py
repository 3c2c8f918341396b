"""Loading the network a benchmark measures, the way `kata gtp` would load it from the same config."""
from __future__ import annotations

from typing import Callable, Optional

from katacli.search.benchmark_positions import BenchmarkError

# Visits of the throw-away search that gets one-time costs (weight upload, kernel choice) out of the way
# before anything is timed.
WARM_UP_VISITS = 5
# Visits per benchmark search when the user names none (KataGo's): high on a GPU, low on a CPU, where a
# network is far slower; the rollout engine is fast.
DEFAULT_VISITS_GPU = 800
DEFAULT_VISITS_CPU = 80
DEFAULT_VISITS_ROLLOUTS = 800
# nnMaxBatchSize is looked up for this mode: the benchmark measures what the GTP engine will do.
ENGINE_MODE = "gtp"


def check_model_path(model_path: str, flag: str = "-model") -> None:
    """A missing, truncated or non-KataGo model file is a BenchmarkError, found before anything is timed."""
    from katacli.nn.model_file_reader import ModelFileError, check_model_file

    try:
        check_model_file(model_path)
    except ModelFileError as exc:
        raise BenchmarkError(f"{flag}: {exc}") from None


def check_model_paths(model_path: Optional[str], human_model_path: Optional[str]) -> None:
    """``-model`` and ``-human-model`` (which needs a main network), as :func:`check_model_path` checks one."""
    from katacli.nn.model_file_reader import HUMAN_MODEL_WITHOUT_MODEL

    if model_path is not None:
        check_model_path(model_path)
    if human_model_path is not None:
        if model_path is None:
            raise BenchmarkError(HUMAN_MODEL_WITHOUT_MODEL)
        check_model_path(human_model_path, "-human-model")


def load_evaluator(model_path: str, nn_settings, max_batch_size: int):
    """An NNEvaluator for model_path on the device the config picks (CUDA when available, else CPU)."""

    from katacli.nn.evaluator import NNEvaluator
    from katacli.startup_objects import freeze_startup_objects

    options = nn_settings.evaluator_options()  # device, precision, layout, orientation, cache (the config's)
    try:
        evaluator = NNEvaluator.from_file(model_path, **options,
                                          max_batch_size=max_batch_size)
    except Exception as exc:  # a corrupt or unsupported file is the user's to fix: one line, no traceback
        raise BenchmarkError(f"could not load the model {model_path}: {exc}") from None
    evaluator.set_parallel_threads()  # as the GTP engine runs it: one search's batch over every core
    freeze_startup_objects()   # no full collection walks torch's objects inside a timed search
    return evaluator


def engine_batch_size(num_threads: int) -> int:
    """nnMaxBatchSize `kata gtp` uses when the config leaves it out, for this many search threads."""
    from katacli.config import Config

    cfg = Config(mode=ENGINE_MODE)
    cfg.set("numSearchThreads", num_threads)
    return cfg.get("nnMaxBatchSize", ENGINE_MODE)


def describe_device(evaluator) -> str:
    """Where the network runs, in words."""
    if evaluator is None:
        return "no network (rollout engine)"
    return evaluator.describe_device()


def is_gpu(evaluator) -> bool:
    return evaluator is not None and evaluator.device.type == "cuda"


def default_visits(evaluator) -> int:
    if evaluator is None:
        return DEFAULT_VISITS_ROLLOUTS
    return DEFAULT_VISITS_GPU if is_gpu(evaluator) else DEFAULT_VISITS_CPU


def warm_up(evaluator, params, board_x: int, board_y: int, seed: Optional[int] = None,
            notify: Optional[Callable[[str], None]] = None) -> None:
    """A tiny search on an empty board, so the first timed search does not pay start-up costs; a compiled
    net is first compiled for every batch size (NNEvaluator.warm_up, which says so through ``notify``)."""
    from katacli._core.game_state import GameState
    from katacli.search import Searcher

    if evaluator is None:
        return
    if getattr(getattr(evaluator, "runner", None), "compiled", False):
        evaluator.warm_up(board_x, board_y, notify=notify)
    state = GameState(board_x, board_y)
    Searcher(state, params.replace(num_search_threads=1, max_visits=WARM_UP_VISITS, max_playouts=WARM_UP_VISITS,
                                   max_time=1.0e20), evaluator, seed=seed).run()
    cache = getattr(evaluator, "cache", None)
    if cache is not None:
        cache.clear()
