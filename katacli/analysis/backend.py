"""What evaluates the leaves of every search: one network shared by all analysis threads, or rollouts.

With a model, every search sends its batches of leaves to one
:class:`~katacli.nn.batching.BatchingEvaluator`; its server thread merges the
batches of all concurrent searches into larger network calls (KataGo's
cross-position batching, the point of the analysis engine). Without a model the
searches evaluate leaves by random playouts inside the Cython core.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

# How long the batching thread waits for other searches' leaves after the first arrives, milliseconds.
# Searches submit whole batches at once, so a short wait is enough to merge them.
NN_BATCH_WAIT_MS = 2.0
# Batch size when the config does not give nnMaxBatchSize: room for every search's leaves at once.
MIN_DEFAULT_BATCH_SIZE = 8


@dataclass(frozen=True)
class ModelInfo:
    """One entry of query_models' "models" list."""

    name: str
    internal_name: str
    max_batch_size: int
    uses_human_sl_profile: bool
    version: int
    using_fp16: str

    def to_json(self) -> dict:
        return {"name": self.name, "internalName": self.internal_name, "maxBatchSize": self.max_batch_size,
                "usesHumanSLProfile": self.uses_human_sl_profile, "version": self.version,
                "usingFP16": self.using_fp16}


class AnalysisBackend:
    """The evaluator handed to every Searcher (None for rollouts), plus the network's bookkeeping.

    With -human-model a second, human-SL network gets its own batching evaluator (``human_evaluator``).
    """

    def __init__(self, network=None, model_info: Optional[ModelInfo] = None, *, max_batch_size: int = 1,
                 batch_wait_ms: float = NN_BATCH_WAIT_MS, num_server_threads: int = 1,
                 human_network=None, human_model_info: Optional[ModelInfo] = None):
        """``network``: an NNEvaluator (or anything with its evaluate_uncached / cache methods); None: rollouts."""
        self.network = network
        self.model_info = model_info
        self.human_network = human_network
        self.human_model_info = human_model_info
        self.evaluator = self.human_evaluator = None
        if network is not None:
            from katacli.nn.batching import BatchingEvaluator

            self.evaluator = BatchingEvaluator(network, max_batch_size=max_batch_size, max_wait_ms=batch_wait_ms,
                                               num_server_threads=num_server_threads)
            if human_network is not None:
                self.human_evaluator = BatchingEvaluator(human_network, max_batch_size=max_batch_size,
                                                         max_wait_ms=batch_wait_ms, num_server_threads=1)
        self._rows_before = getattr(network, "num_positions_evaluated", 0)
        self._batches_before = getattr(network, "num_batches", 0)

    @property
    def has_network(self) -> bool:
        return self.network is not None

    @property
    def uses_human_profile(self) -> bool:
        """Whether a loaded model takes SGF metadata (so humanSLProfile matters)."""
        return any(info is not None and info.uses_human_sl_profile
                   for info in (self.model_info, self.human_model_info))

    @property
    def model_names(self) -> str:
        """The loaded models' names, as KataGo lists them in its humanSLProfile warning."""
        return " and ".join(info.name for info in (self.model_info, self.human_model_info) if info is not None)

    def clear_cache(self) -> None:
        for network in (self.network, self.human_network):
            cache = getattr(network, "cache", None)
            if cache is not None:
                cache.clear()

    def models(self) -> list[dict]:
        """query_models' list: the main network, then the -human-model one (as KataGo lists them)."""
        return [info.to_json() for info in (self.model_info, self.human_model_info) if info is not None]

    def summary_lines(self) -> list[str]:
        """What KataGo logs at exit: rows and batches the network ran, and the mean batch size."""
        if self.network is None:
            return []
        rows = getattr(self.network, "num_positions_evaluated", 0) - self._rows_before
        batches = getattr(self.network, "num_batches", 0) - self._batches_before
        average = rows / batches if batches else 0.0
        name = self.model_info.name if self.model_info is not None else "network"
        return [name, f"NN rows: {rows}", f"NN batches: {batches}", f"NN avg batch size: {average:.6g}"]

    def close(self) -> None:
        for evaluator in (self.evaluator, self.human_evaluator):
            if evaluator is not None:
                evaluator.close()


def default_batch_size(num_analysis_threads: int, num_search_threads: int) -> int:
    return max(MIN_DEFAULT_BATCH_SIZE, num_analysis_threads * num_search_threads)


def load_network_backend(model_path: str, nn_settings, max_batch_size: int,
                         human_model_path: Optional[str] = None) -> AnalysisBackend:
    """Load the model file (and the -human-model one) for the analysis engine (CPU, or CUDA when there is a GPU)."""
    network, info = _load_network(model_path, nn_settings, max_batch_size)
    human_network = human_info = None
    if human_model_path is not None:
        human_network, human_info = _load_network(human_model_path, nn_settings, max_batch_size)
    return AnalysisBackend(network, info, max_batch_size=max_batch_size,
                           num_server_threads=nn_settings.num_server_threads,
                           human_network=human_network, human_model_info=human_info)


WARM_UP_BOARD_LEN = 19


class NetworkLoadError(Exception):
    """A model file that could not be loaded; the message names the file."""


def _load_network(model_path: str, nn_settings, max_batch_size: int):
    try:
        return _load_network_unchecked(model_path, nn_settings, max_batch_size)
    except Exception as exc:
        raise NetworkLoadError(f"could not load the model {model_path}: {exc}") from exc


def _load_network_unchecked(model_path: str, nn_settings, max_batch_size: int):
    from katacli.engine_common import stable_seed
    from katacli.nn.evaluator import NNEvaluator

    options = nn_settings.evaluator_options()  # device, precision (useFP16), layout, TF32, CUDA graphs
    device = options["device"]
    symmetry = nn_settings.forced_symmetry if nn_settings.forced_symmetry is not None else (
        None if nn_settings.randomize else 0)
    cache_power = nn_settings.cache_size_power_of_two if nn_settings.cache_size_power_of_two >= 0 else None
    nn_settings.apply_cpu_threads(device)
    network = NNEvaluator.from_file(model_path, **options,
                                    cache_size_power_of_two=cache_power, default_symmetry=symmetry,
                                    max_batch_size=max_batch_size, seed=stable_seed(nn_settings.rand_seed))
    # Most queries are 19x19: build and optimise that traced network before the engine says it is ready,
    # rather than in the first query (seconds on a CPU).
    network.warm_up(WARM_UP_BOARD_LEN, WARM_UP_BOARD_LEN)
    info = ModelInfo(name=model_path, internal_name=network.model_name, max_batch_size=max_batch_size,
                     uses_human_sl_profile=bool(network.needs_metadata), version=int(network.version),
                     using_fp16=str(getattr(nn_settings.use_fp16, "value", nn_settings.use_fp16)))
    return network, info
