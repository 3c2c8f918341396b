"""What evaluates the leaves of every search: one network shared by all analysis threads, or rollouts.

With a model, every search sends its batches of leaves to one
:class:`~katacli.nn.batching.BatchingEvaluator`; its server thread merges the
batches of all concurrent searches into larger network calls (KataGo's
cross-position batching, the point of the analysis engine). Without a model the
searches evaluate leaves by random playouts inside the Cython core.
"""
from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable, Optional

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


class BackgroundNetwork:
    """The -human-model network while a thread loads it, standing in for its batching evaluator.

    ``kata analysis`` says it is ready without waiting for it: a search calls :meth:`evaluate_many` (which
    waits for the load) only when it uses the human net, so a query without humanSLProfile never waits.
    ``needs_metadata`` comes from the model file's start-up check. ``load`` returns (network, ModelInfo,
    batching evaluator); it handles its own failure (``kata analysis`` reports it and exits).
    """

    def __init__(self, path: str, load: Callable[[], tuple], needs_metadata: bool):
        self.path = path
        self.needs_metadata = needs_metadata
        self._parts: Optional[tuple] = None
        self._error: Optional[BaseException] = None
        self._done = threading.Event()

        def run() -> None:
            try:
                self._parts = load()
            except BaseException as exc:  # re-raised to whoever waits
                self._error = exc
            finally:
                self._done.set()

        threading.Thread(target=run, name="human-model-loader", daemon=True).start()

    @property
    def loaded(self) -> bool:
        return self._done.is_set() and self._error is None

    def wait(self) -> tuple:
        """(network, ModelInfo, batching evaluator), once loaded; the load's exception if it failed."""
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._parts

    def evaluate_many(self, requests) -> list:
        return self.wait()[2].evaluate_many(requests)

    def evaluate(self, request):
        return self.evaluate_many([request])[0]


class AnalysisBackend:
    """The evaluator handed to every Searcher (None for rollouts), plus the network's bookkeeping.

    With -human-model a second, human-SL network gets its own batching evaluator (``human_evaluator``),
    or is still loading (``human_loading``, a :class:`BackgroundNetwork`, which is then the evaluator).
    """

    def __init__(self, network=None, model_info: Optional[ModelInfo] = None, *, max_batch_size: int = 1,
                 batch_wait_ms: float = NN_BATCH_WAIT_MS, num_server_threads: int = 1,
                 human_network=None, human_model_info: Optional[ModelInfo] = None,
                 human_loading: Optional[BackgroundNetwork] = None):
        """``network``: an NNEvaluator (or anything with its evaluate_uncached / cache methods); None: rollouts."""
        self.network = network
        self.model_info = model_info
        self._human_network = human_network
        self._human_model_info = human_model_info
        self.human_loading = human_loading
        self.evaluator = self.human_evaluator = None
        if network is not None:
            from katacli.nn.batching import BatchingEvaluator

            self.evaluator = BatchingEvaluator(network, max_batch_size=max_batch_size, max_wait_ms=batch_wait_ms,
                                               num_server_threads=num_server_threads)
            if human_network is not None:
                self.human_evaluator = BatchingEvaluator(human_network, max_batch_size=max_batch_size,
                                                         max_wait_ms=batch_wait_ms, num_server_threads=1)
            elif human_loading is not None:
                self.human_evaluator = human_loading
        self._rows_before = getattr(network, "num_positions_evaluated", 0)
        self._batches_before = getattr(network, "num_batches", 0)

    @property
    def has_network(self) -> bool:
        return self.network is not None

    @property
    def human_network(self):
        """The -human-model NNEvaluator (waiting for it while it loads), or None."""
        if self.human_loading is not None:
            return self.human_loading.wait()[0]
        return self._human_network

    @property
    def human_model_info(self) -> Optional[ModelInfo]:
        """The -human-model net's query_models entry (waiting for it while it loads), or None."""
        if self.human_loading is not None:
            return self.human_loading.wait()[1]
        return self._human_model_info

    @property
    def uses_human_profile(self) -> bool:
        """Whether a model takes SGF metadata (so humanSLProfile matters); known before the human net is loaded."""
        if self.human_loading is not None and self.human_loading.needs_metadata:
            return True
        return any(info is not None and info.uses_human_sl_profile
                   for info in (self.model_info, self._human_model_info))

    @property
    def model_names(self) -> str:
        """The models' names (their paths), as KataGo lists them in its humanSLProfile warning."""
        names = [info.name for info in (self.model_info, self._human_model_info) if info is not None]
        if self.human_loading is not None:
            names.append(self.human_loading.path)
        return " and ".join(names)

    def clear_cache(self) -> None:
        human = self._human_network
        if self.human_loading is not None and self.human_loading.loaded:  # nothing cached before it loaded
            human = self.human_loading.wait()[0]
        for network in (self.network, human):
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
        """Stop the batching threads; a human net still loading is waited for (its failure must not go unseen)."""
        human = self.human_evaluator
        if self.human_loading is not None:
            human = self.human_loading.wait()[2]
        for evaluator in (self.evaluator, human):
            if evaluator is not None:
                evaluator.close()


def default_batch_size(num_analysis_threads: int, num_search_threads: int) -> int:
    return max(MIN_DEFAULT_BATCH_SIZE, num_analysis_threads * num_search_threads)


def load_network_backend(model_path: str, nn_settings, max_batch_size: int,
                         human_model_path: Optional[str] = None,
                         start_human_loading: Optional[Callable[[], BackgroundNetwork]] = None) -> AnalysisBackend:
    """Load the model file (and the -human-model one) for the analysis engine (CPU, or CUDA when there is a GPU).
    ``start_human_loading``: instead of loading the -human-model net here, start its background load
    (:func:`load_human_network_in_background`) once the main net is loaded."""
    network, info = _load_network(model_path, nn_settings, max_batch_size)
    human_network = human_info = None
    if human_model_path is not None:
        human_network, human_info = _load_network(human_model_path, nn_settings, max_batch_size)
    return AnalysisBackend(network, info, max_batch_size=max_batch_size,
                           num_server_threads=nn_settings.num_server_threads,
                           human_network=human_network, human_model_info=human_info,
                           human_loading=start_human_loading() if start_human_loading is not None else None)


def load_human_network_in_background(human_model_path: str, nn_settings, max_batch_size: int, needs_metadata: bool,
                                     on_loaded: Callable[[], None], on_failure: Callable[[BaseException], None]
                                     ) -> BackgroundNetwork:
    """Start loading the -human-model net in a thread (see :class:`BackgroundNetwork`); ``on_loaded`` runs
    once it is ready, ``on_failure`` with the error when it cannot be loaded."""
    from katacli.nn.batching import BatchingEvaluator

    def load() -> tuple:
        try:
            network, info = _load_network(human_model_path, nn_settings, max_batch_size)
        except BaseException as exc:
            on_failure(exc)
            raise
        evaluator = BatchingEvaluator(network, max_batch_size=max_batch_size, max_wait_ms=NN_BATCH_WAIT_MS,
                                      num_server_threads=1)
        on_loaded()
        return network, info, evaluator

    return BackgroundNetwork(human_model_path, load, needs_metadata)


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
