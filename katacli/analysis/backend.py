"""What evaluates the leaves of every search: one network shared by all analysis threads, or rollouts.

With a model, every search sends its batches of leaves to one
:class:`~katacli.nn.batching.BatchingEvaluator`; its server thread merges the
batches of all concurrent searches into larger network calls (KataGo's
cross-position batching, the point of the analysis engine). Without a model the
searches evaluate leaves by random playouts inside the Cython core.
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Callable, Iterator, Optional

# How long the batching thread waits for other searches' leaves after the first arrives, milliseconds.
# Searches submit whole batches at once, so a short wait is enough to merge them.
NN_BATCH_WAIT_MS = 2.0
# Batch size when the config does not give nnMaxBatchSize: room for every search's leaves at once.
MIN_DEFAULT_BATCH_SIZE = 8
# When the numpy evaluator answers first, torch is imported once the queries waiting at start-up have their
# answers: an import beside a search holds the GIL most of the time (g170-b6c96, a 20-visit 19x19 query,
# 2 cores at load 8: first answer 1.75-4.4 s with both at once, 0.94-1.0 s one after the other).
# The network unused this long after an answer: the searches that were waiting have ended.
TAKE_OVER_IDLE_S = 0.1
# No network call at all this long after the numpy net is ready: no query is waiting.
TAKE_OVER_NO_QUERY_S = 0.5
# A long search keeps torch out no longer than this (numpy is 2-4x slower than torch's traced net).
TAKE_OVER_LATEST_S = 3.0
TAKE_OVER_POLL_S = 0.02


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
    """A network while a thread loads it, standing in for its batching evaluator until then.

    ``kata analysis`` says it is ready without waiting for its networks (KaTrain waits for that line):
    the main net's queries stay queued until it is loaded (:meth:`when_done` releases the queue), and a
    search uses the -human-model net through :meth:`evaluate_many`, which waits for it, so a query
    without humanSLProfile never waits for that one. ``needs_metadata`` comes from the model file's
    start-up check. ``load`` returns (network, ModelInfo, batching evaluator) and reports its own failure
    (``kata analysis`` prints it and exits). ``after``: a load to let finish first (on two cores, two
    loads at once would delay the net every query needs). Nothing runs before :meth:`start`.

    ``load`` may return a fourth item, a take-over: the network it returned is a stand-in (the numpy
    evaluator, answering while torch is imported) and ``take_over()``, run in the same thread once the
    waiters are released, builds the real one, hands it to the batching evaluator and returns it. The
    load is *settled* (:meth:`wait_settled`) when that is done; ``replaced`` keeps the stand-ins (their
    counters are part of the engine's summary).
    """

    def __init__(self, path: str, load: Callable[[], tuple], needs_metadata: bool, *, name: str = "model-loader",
                 after: Optional["BackgroundNetwork"] = None):
        self.path = path
        self.needs_metadata = needs_metadata
        self._load = load
        self._after = after
        self._parts: Optional[tuple] = None
        self._error: Optional[BaseException] = None
        self._done = threading.Event()
        self._settled = threading.Event()
        self.replaced: list = []
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], None]] = []
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Begin loading (once)."""
        with self._lock:
            if self._thread.ident is None:
                self._thread.start()

    @property
    def started(self) -> bool:
        return self._thread.ident is not None

    def _run(self) -> None:
        if self._after is not None:
            self._after.wait_settled()
        take_over = None
        try:
            parts = self._load()
            self._parts, take_over = tuple(parts[:3]), (parts[3] if len(parts) > 3 else None)
        except BaseException as exc:  # re-raised to whoever waits
            self._error = exc
        finally:
            with self._lock:
                self._done.set()
                callbacks, self._callbacks = self._callbacks, []
            for callback in callbacks:
                callback()
        try:
            if take_over is not None:
                network = take_over()  # reports its own failure, as load does
                with self._lock:
                    self.replaced.append(self._parts[0])
                    self._parts = (network,) + self._parts[1:]
        finally:
            self._settled.set()

    def when_done(self, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the load has ended, loaded or failed (at once if it has)."""
        with self._lock:
            if not self._done.is_set():
                self._callbacks.append(callback)
                return
        callback()

    @property
    def loaded(self) -> bool:
        return self._done.is_set() and self._error is None

    def wait_done(self) -> None:
        """Block until the load has ended, loaded or failed (starting it if nobody has)."""
        self.start()
        self._done.wait()

    def wait_settled(self) -> None:
        """Block until the load and any take-over have ended (starting the load if nobody has)."""
        self.start()
        self._settled.wait()

    def wait(self) -> tuple:
        """(network, ModelInfo, batching evaluator), once loaded; the load's exception if it failed."""
        self.wait_done()
        if self._error is not None:
            raise self._error
        return self._parts

    @property
    def evaluator(self):
        """The batching evaluator, once loaded."""
        return self.wait()[2]

    def evaluate_many(self, requests) -> list:
        return self.evaluator.evaluate_many(requests)

    def evaluate(self, request):
        return self.evaluate_many([request])[0]


def loaded_evaluator(evaluator):
    """``evaluator`` itself, or for a network still loading its batching evaluator once loaded."""
    return evaluator.evaluator if isinstance(evaluator, BackgroundNetwork) else evaluator


class AnalysisBackend:
    """The evaluator handed to every Searcher (None for rollouts), plus the network's bookkeeping.

    A network is given loaded (``network``) or loading (``loading``, a :class:`BackgroundNetwork`, which
    is then ``evaluator`` until a worker asks for the real one with :func:`loaded_evaluator`); the
    -human-model one likewise (``human_network`` / ``human_loading``) with its own batching evaluator
    (``human_evaluator``). Loads start with :meth:`start_loading` (the engine's ``start``).
    ``model_info`` / ``human_model_info``: their query_models entries, which a file's start-up check
    gives before it loads (:func:`model_info_from_header`).
    """

    def __init__(self, network=None, model_info: Optional[ModelInfo] = None, *, max_batch_size: int = 1,
                 batch_wait_ms: float = NN_BATCH_WAIT_MS, num_server_threads: int = 1,
                 human_network=None, human_model_info: Optional[ModelInfo] = None,
                 human_loading: Optional[BackgroundNetwork] = None, loading: Optional[BackgroundNetwork] = None):
        """``network``: an NNEvaluator (or anything with its evaluate_uncached / cache methods); None: rollouts."""
        self._network = network
        self.loading = loading
        self.model_info = model_info
        self._human_network = human_network
        self._human_model_info = human_model_info
        self.human_loading = human_loading
        self.evaluator = self.human_evaluator = None
        if loading is not None:
            self.evaluator = loading
            self.human_evaluator = human_loading
        elif network is not None:
            from katacli.nn.batching import BatchingEvaluator

            self.evaluator = BatchingEvaluator(network, max_batch_size=max_batch_size, max_wait_ms=batch_wait_ms,
                                               num_server_threads=num_server_threads)
            if human_network is not None:
                self.human_evaluator = BatchingEvaluator(human_network, max_batch_size=max_batch_size,
                                                         max_wait_ms=batch_wait_ms, num_server_threads=1)
            elif human_loading is not None:
                self.human_evaluator = human_loading
        # A network loading now starts from zero.
        self._rows_before = getattr(network, "num_positions_evaluated", 0)
        self._batches_before = getattr(network, "num_batches", 0)

    def start_loading(self) -> None:
        """Start the background loads, if any (the main net first, then the human one)."""
        for loading in (self.loading, self.human_loading):
            if loading is not None:
                loading.start()

    @property
    def has_network(self) -> bool:
        return self._network is not None or self.loading is not None

    @property
    def network(self):
        """The main NNEvaluator (waiting for it while it loads), or None for rollouts."""
        if self.loading is not None:
            return self.loading.wait()[0]
        return self._network

    @property
    def human_network(self):
        """The -human-model NNEvaluator (waiting for it while it loads), or None."""
        if self.human_loading is not None:
            return self.human_loading.wait()[0]
        return self._human_network

    @property
    def human_model_info(self) -> Optional[ModelInfo]:
        """The -human-model net's query_models entry (waiting for the net only when the file's check gave none)."""
        if self._human_model_info is None and self.human_loading is not None:
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
        if self.human_loading is not None and self._human_model_info is None:
            names.append(self.human_loading.path)
        return " and ".join(names)

    def clear_cache(self) -> None:
        """Empty the networks' caches; a net still loading has nothing cached and is not waited for."""
        networks = []
        for loaded, loading in ((self._network, self.loading), (self._human_network, self.human_loading)):
            if loading is not None:
                loaded = loading.wait()[0] if loading.loaded else None
            networks.append(loaded)
        for network in networks:
            cache = getattr(network, "cache", None)
            if cache is not None:
                cache.clear()

    def models(self) -> list[dict]:
        """query_models' list: the main network, then the -human-model one (as KataGo lists them)."""
        return [info.to_json() for info in (self.model_info, self.human_model_info) if info is not None]

    def summary_lines(self) -> list[str]:
        """What KataGo logs at exit: rows and batches the network ran, and the mean batch size."""
        if not self.has_network or (self.loading is not None and not self.loading.started):
            return []
        if self.loading is not None:
            self.loading.wait_settled()  # the stand-in's rows and the real network's, all counted
        networks = [self.network] + (self.loading.replaced if self.loading is not None else [])
        rows = sum(getattr(network, "num_positions_evaluated", 0) for network in networks) - self._rows_before
        batches = sum(getattr(network, "num_batches", 0) for network in networks) - self._batches_before
        average = rows / batches if batches else 0.0
        name = self.model_info.name if self.model_info is not None else "network"
        return [name, f"NN rows: {rows}", f"NN batches: {batches}", f"NN avg batch size: {average:.6g}"]

    def close(self) -> None:
        """Stop the batching threads; a net still loading is waited for (its failure must not go unseen),
        one whose load never started is left alone."""
        for evaluator in (self.evaluator, self.human_evaluator):
            if isinstance(evaluator, BackgroundNetwork) and not evaluator.started:
                continue
            if isinstance(evaluator, BackgroundNetwork):
                evaluator.wait_settled()  # a take-over still loading torch ends before the process does
            evaluator = loaded_evaluator(evaluator)
            if evaluator is not None:
                evaluator.close()


def default_batch_size(num_analysis_threads: int, num_search_threads: int) -> int:
    return max(MIN_DEFAULT_BATCH_SIZE, num_analysis_threads * num_search_threads)


def model_info_from_header(header, nn_settings, max_batch_size: int) -> ModelInfo:
    """A model's query_models entry from its start-up check (a ModelFileHeader): known before it loads."""
    return _model_info(header.path, header.name, header.version, header.takes_metadata, nn_settings, max_batch_size)


def _model_info(path: str, internal_name: str, version: int, takes_metadata: bool, nn_settings,
                max_batch_size: int) -> ModelInfo:
    return ModelInfo(name=path, internal_name=internal_name, max_batch_size=max_batch_size,
                     uses_human_sl_profile=bool(takes_metadata), version=int(version),
                     using_fp16=str(getattr(nn_settings.use_fp16, "value", nn_settings.use_fp16)))


def network_backend_in_background(header, nn_settings, max_batch_size: int, human_header=None, *,
                                  on_loaded: Callable[[str, object, bool], None],
                                  on_failure: Callable[[BaseException], None],
                                  notify: Optional[Callable[[str], None]] = None) -> AnalysisBackend:
    """The analysis engine's backend for the checked model file ``header`` (and the -human-model one), its
    networks loading in threads once :meth:`AnalysisBackend.start_loading` is called (CPU, or CUDA when
    there is a GPU): the main net first, then the human one. ``on_loaded(path, network, human)`` runs as
    each is ready, ``on_failure(error)`` when one cannot be loaded; ``notify(line)`` says what a long wait
    while loading is (a network being compiled)."""
    loading = _network_in_background(header, nn_settings, max_batch_size, nn_settings.num_server_threads,
                                     on_loaded, on_failure, human=False, notify=notify)
    human_loading = human_info = None
    if human_header is not None:
        human_loading = _network_in_background(human_header, nn_settings, max_batch_size, 1, on_loaded, on_failure,
                                               human=True, after=loading, notify=notify)
        human_info = model_info_from_header(human_header, nn_settings, max_batch_size)
    return AnalysisBackend(model_info=model_info_from_header(header, nn_settings, max_batch_size),
                           loading=loading, human_loading=human_loading, human_model_info=human_info)


def _network_in_background(header, nn_settings, max_batch_size: int, num_server_threads: int, on_loaded,
                           on_failure, human: bool, after: Optional[BackgroundNetwork] = None,
                           notify: Optional[Callable[[str], None]] = None) -> BackgroundNetwork:
    def load() -> tuple:
        from katacli.nn.batching import BatchingEvaluator
        from katacli.startup_objects import freeze_startup_objects

        desc = None
        try:
            if human:  # no query waits for the human net first: torch has been imported by then
                network, info = _load_network(header.path, nn_settings, max_batch_size, header.contents,
                                              notify=notify)
            else:
                network, info, desc = _numpy_or_torch_network(header, nn_settings, max_batch_size, notify)
        except BaseException as exc:
            on_failure(exc)
            raise
        evaluator = BatchingEvaluator(network, max_batch_size=max_batch_size, max_wait_ms=NN_BATCH_WAIT_MS,
                                      num_server_threads=num_server_threads)
        on_loaded(header.path, network, human)
        if desc is None:
            freeze_startup_objects()   # torch's and the net's objects: no full collection walks them again
            return network, info, evaluator

        def take_over():
            """The torch evaluator, built from the same description, takes over between network calls."""
            wait_for_quiet(evaluator)
            try:
                torch_network, _ = _load_network(header.path, nn_settings, max_batch_size, desc=desc, notify=notify)
            except BaseException as exc:
                on_failure(exc)
                raise
            # The numpy answers are the torch net's (float32, same arithmetic): its cache stays valid.
            torch_network.cache = network.cache
            evaluator.replace_evaluator(torch_network)
            on_loaded(header.path, torch_network, human)
            freeze_startup_objects()
            return torch_network

        return network, info, evaluator, take_over

    name = "human-model-loader" if human else "model-loader"
    return BackgroundNetwork(header.path, load, header.takes_metadata, name=name, after=after)


WARM_UP_BOARD_LEN = 19


class NetworkLoadError(Exception):
    """A model file that could not be loaded; the message names the file."""


def wait_for_quiet(evaluator, clock: Callable[[], float] = time.monotonic,
                   sleep: Callable[[float], None] = time.sleep) -> None:
    """Return once ``evaluator`` (a BatchingEvaluator) has answered the queries that were waiting (see
    TAKE_OVER_IDLE_S and the others), or after TAKE_OVER_LATEST_S."""
    start = clock()
    while True:
        now = clock()
        busy, last_answered = evaluator.activity()
        if now - start >= TAKE_OVER_LATEST_S or (not busy and (
                now - start >= TAKE_OVER_NO_QUERY_S if last_answered is None
                else now - last_answered >= TAKE_OVER_IDLE_S)):
            return
        sleep(TAKE_OVER_POLL_S)


def _numpy_or_torch_network(header, nn_settings, max_batch_size: int, notify=None) -> tuple:
    """(network, ModelInfo, description): the numpy evaluator and the parsed file when the net is one it
    computes quickly (the torch one then takes over from the description), else (torch network, info, None)."""
    from katacli.nn.model_file_reader import read_model_file
    from katacli.nn.numpy_evaluator import NumpyEvaluator, gpu_likely, numpy_worthwhile, use_one_blas_thread

    with _load_errors(header.path):
        desc = read_model_file(header.path, header.contents)
    if not (nn_settings.numpy_until_torch and numpy_worthwhile(desc)) or gpu_likely():
        network, info = _load_network(header.path, nn_settings, max_batch_size, desc=desc, notify=notify)
        return network, info, None
    from katacli.engine_common import stable_seed

    use_one_blas_thread()
    network = NumpyEvaluator(desc, cache_size_power_of_two=nn_settings.cache_size_option,
                             default_symmetry=nn_settings.default_symmetry, max_batch_size=max_batch_size,
                             seed=stable_seed(nn_settings.rand_seed))
    return network, _model_info(header.path, desc.name, desc.version, network.needs_metadata, nn_settings,
                                max_batch_size), desc


@contextmanager
def _load_errors(model_path: str) -> Iterator[None]:
    """Any failure inside as a NetworkLoadError naming the file."""
    try:
        yield
    except Exception as exc:
        raise NetworkLoadError(f"could not load the model {model_path}: {exc}") from exc


def _load_network(model_path: str, nn_settings, max_batch_size: int, contents=None, desc=None, notify=None):
    with _load_errors(model_path):
        return _load_network_unchecked(model_path, nn_settings, max_batch_size, contents, desc, notify)


def _load_network_unchecked(model_path: str, nn_settings, max_batch_size: int, contents=None, desc=None,
                            notify=None):
    from katacli.engine_common import stable_seed
    from katacli.nn.evaluator import NNEvaluator

    options = nn_settings.evaluator_options()  # device, precision, layout, orientation, cache (the config's)
    nn_settings.apply_cpu_threads(options["device"])
    seed = stable_seed(nn_settings.rand_seed)
    if desc is not None:  # the file already parsed (for the numpy evaluator)
        from katacli.nn.torch_model import KataGoModel

        network = NNEvaluator(KataGoModel.from_description(desc).eval(), **options, max_batch_size=max_batch_size,
                              seed=seed)
    else:
        # The file as its start-up check inflated it (contents), not read and inflated a second time.
        network = NNEvaluator.from_file(model_path, contents, **options, max_batch_size=max_batch_size, seed=seed)
    # Most queries are 19x19: build and optimise that traced network while loading (after "ready"),
    # rather than in the first query's search (seconds on a CPU).
    network.warm_up(WARM_UP_BOARD_LEN, WARM_UP_BOARD_LEN, notify=notify)
    return network, _model_info(model_path, network.model_name, network.version, network.needs_metadata,
                                nn_settings, max_batch_size)
