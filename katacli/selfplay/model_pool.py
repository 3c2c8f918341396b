"""The models directory: load the newest network and hand it to games with reference counts.

Which file is newest is :mod:`katacli.selfplay.latest_model` (KataGo's findLatestModel). A
watcher polls for newer files while games run; each game holds the model it plays with,
and an old model is closed once no game uses it.
"""
from __future__ import annotations

import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import torch

from katacli.config import Enabled
from katacli.nn.batching import BatchClients, BatchingEvaluator
from katacli.nn.evaluator import NNEvaluator, set_cpu_threads
from katacli.nn.torch_model import KataGoModel, load_model
from katacli.search.stepping import SearchDrivers
from katacli.setup.engine_settings import NNSettings
from katacli.startup_objects import freeze_startup_objects
from katacli.selfplay.game import ModelHandle
from katacli.selfplay.latest_model import ModelFile, NoModelError, find_latest_model
from katacli.selfplay.raw_policy import NetEvaluator

log = logging.getLogger("katacli.selfplay")

# The batching front end waits this long for more positions before running a partial batch.
BATCH_WAIT_MS = 0.5
# Default batch size when nnMaxBatchSize is unset (KataGo requires it in self-play configs).
DEFAULT_MAX_BATCH_SIZE = 64
# The board a compiled net is warmed up (compiled) on at load: most self-play is 19x19, and on a GPU
# boards of several sizes share calls padded to the largest (katacli.nn.mixed_sizes).
COMPILE_WARM_UP_BOARD_LEN = 19


@dataclass
class LoadedModel:
    handle: ModelHandle
    batcher: BatchingEvaluator
    users: int = 0


class ModelManager:
    """Owns the loaded networks; games ``acquire()`` the latest and ``release()`` it when done."""

    def __init__(self, nn_settings: NNSettings, *, device: Optional[str] = None, cpu_threads: int = 1,
                 pass_alive_setting: Enabled = Enabled.AUTO,
                 loader: Optional[Callable[[Path], KataGoModel]] = None,
                 evaluator_factory: Optional[Callable[[KataGoModel], object]] = None):
        """``evaluator_factory``: what evaluates a loaded model's positions (default: an NNEvaluator on
        ``device``); benchmarks and tests pass a stand-in, e.g. :mod:`katacli.selfplay.simulated_gpu`."""
        self.nn = nn_settings
        self._evaluator_factory = evaluator_factory
        self.pass_alive_setting = pass_alive_setting
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        if self.device == "cpu":
            # Tiny batches on a few cores: extra intra-op threads mostly spin and slow things down.
            set_cpu_threads(cpu_threads)
        self._loader = loader or load_model
        self._lock = threading.Lock()
        self._models: dict[str, LoadedModel] = {}
        self._latest: Optional[str] = None
        self._latest_file: Optional[ModelFile] = None
        self._failed: Optional[tuple] = None   # (path, mtime_ns) of a file that would not load: retried once it changes
        self._missing_said = False   # the models folder emptied under a running model: warned
        # The game threads, registered with every model's batcher: a batch waits for their positions.
        self.clients = BatchClients()
        # Positions and batches of the models already closed (network_counts adds the loaded ones).
        self._retired_counts = [0, 0]
        self._search_drivers = 0   # driver threads per model stepping the games' searches (0: none)

    def use_search_drivers(self, count: int) -> None:
        """Step the games' searches on ``count`` driver threads per model (katacli.search.stepping), every
        round of them one batch for the network, instead of each in its game thread."""
        with self._lock:
            self._search_drivers = max(0, count)
            for loaded in self._models.values():
                self._attach_drivers(loaded)

    @property
    def search_drivers(self) -> int:
        return self._search_drivers

    def _attach_drivers(self, loaded: "LoadedModel") -> None:
        net = loaded.handle.net
        if self._search_drivers and getattr(net, "driver", None) is None:
            net.driver = SearchDrivers(loaded.batcher, self._search_drivers)

    # ---- loading
    def _make_evaluator(self, model: KataGoModel) -> NNEvaluator:
        if self._evaluator_factory is not None:
            return self._evaluator_factory(model)
        nn = self.nn
        evaluator = NNEvaluator(model, **nn.evaluator_options(self.device),
                                max_batch_size=nn.max_batch_size or DEFAULT_MAX_BATCH_SIZE)
        if evaluator.runner.compiled:   # compiled now, not in the games' first batches (which would all wait)
            evaluator.warm_up(COMPILE_WARM_UP_BOARD_LEN, COMPILE_WARM_UP_BOARD_LEN,
                              notify=lambda line: log.info("model %s: %s", model.name, line))
        log.info("model %s runs on: %s", model.name, evaluator.describe_device())
        return evaluator

    def install(self, name: str, model: KataGoModel) -> ModelHandle:
        """Make ``model`` the latest (used directly for -random-init and by tests)."""
        evaluator = self._make_evaluator(model)
        batcher = BatchingEvaluator(evaluator, max_batch_size=evaluator.max_batch_size, max_wait_ms=BATCH_WAIT_MS,
                                    num_server_threads=self.nn.num_server_threads, clients=self.clients,
                                    server_per_cpu_core=False)
        handle = ModelHandle(name, NetEvaluator(batcher, name),
                             pass_alive_under_suicide=self._pass_alive_mode(model))
        with self._lock:
            previous = self._latest
            self._models[name] = LoadedModel(handle, batcher)
            self._attach_drivers(self._models[name])
            self._latest = name
            if previous is not None and previous != name:
                self._close_if_unused(previous)
        log.info("now playing with model %s", name)
        return handle

    def install_random(self, config_name: str, seed: Optional[int]) -> ModelHandle:
        """Random weights of a named architecture (e.g. b6c96) to bootstrap a run; the same seed gives
        the same network, so several processes can start from one. ValueError for an unknown name."""
        from katacli.nn.configs import random_description

        desc = random_description(config_name, seed=seed, model_name=f"random-{config_name}")
        return self.install(desc.name, KataGoModel(desc))

    def _pass_alive_mode(self, model: KataGoModel) -> bool:
        """alwaysComputePassAliveUnderSuicideRules: true/false, or auto = what the net was trained with."""
        if self.pass_alive_setting != Enabled.AUTO:
            return self.pass_alive_setting == Enabled.TRUE
        return bool(model.prefer_pass_alive_under_suicide_rules)

    def poll(self, models_dir: str | os.PathLike) -> bool:
        """Load the newest model file if it is new; True if one was loaded. Raises NoModelError when
        nothing was ever loaded and the directory holds no model."""
        found = find_latest_model(models_dir)
        if found is None:
            if self._latest is None:
                raise NoModelError(f"no model in {models_dir}")
            if not self._missing_said:   # KataGo says it every poll; once is enough to notice
                self._missing_said = True
                log.warning("%s was the newest model, but now no model is in %s: going on with it",
                            self._latest, models_dir)
            return False
        self._missing_said = False
        if self._latest_file is not None and found.path == self._latest_file.path \
                and found.mtime_ns == self._latest_file.mtime_ns:
            return False
        if found.name == self._latest:
            self._latest_file = found
            return False
        if self._failed == (found.path, found.mtime_ns):   # said once; a file still being copied in changes
            return False
        try:
            model = self._loader(found.path)
        except Exception as exc:  # a half-copied or broken file: keep the old model, retry once the file changes
            if self._latest is None:
                raise
            self._failed = (found.path, found.mtime_ns)
            log.warning("could not load %s (%s); keeping %s until the file changes", found.path, exc, self._latest)
            return False
        self._latest_file = found
        self.install(found.name, model)
        return True

    def load_first(self, models_dir: str | os.PathLike, random_init: Optional[str], seed: Optional[int]) -> None:
        """The run's first model: the newest file in models_dir, else (with random_init) random weights
        of that architecture. Raises NoModelError, or the loader's error for a broken file."""
        try:
            self.poll(models_dir)
        except NoModelError:
            if random_init is None:
                raise
            self.install_random(random_init, seed)
        # Only after the first: the later models replace each other, and frozen objects of a dropped
        # model that sit in reference cycles would never be collected.
        freeze_startup_objects()

    # ---- games
    def acquire(self) -> ModelHandle:
        with self._lock:
            if self._latest is None:
                raise NoModelError("no model loaded")
            loaded = self._models[self._latest]
            loaded.users += 1
            return loaded.handle

    def release(self, handle: ModelHandle) -> None:
        with self._lock:
            loaded = self._models.get(handle.name)
            if loaded is None:
                return
            loaded.users -= 1
            if handle.name != self._latest:
                self._close_if_unused(handle.name)

    def latest_name(self) -> Optional[str]:
        return self._latest

    def network_counts(self) -> tuple[int, int]:
        """(positions evaluated, batches) over every model this manager loaded, closed ones included."""
        with self._lock:
            positions, batches = self._retired_counts
            for loaded in self._models.values():
                p, b = _counts(loaded)
                positions += p
                batches += b
        return positions, batches

    def _retire(self, loaded: LoadedModel) -> None:
        """Close a model no game uses, keeping its counts."""
        _close_loaded(loaded)
        p, b = _counts(loaded)
        with self._lock:
            self._retired_counts[0] += p
            self._retired_counts[1] += b

    def _close_if_unused(self, name: str) -> None:
        loaded = self._models.get(name)
        if loaded is not None and loaded.users <= 0:
            del self._models[name]
            threading.Thread(target=self._retire, args=(loaded,), daemon=True).start()

    def close(self) -> None:
        with self._lock:
            models = list(self._models.values())
            self._models.clear()
        for loaded in models:
            self._retire(loaded)


def _counts(loaded: LoadedModel) -> tuple[int, int]:
    """(positions, batches) the model's network has run (stand-in evaluators may count neither)."""
    evaluator = loaded.batcher.evaluator
    return getattr(evaluator, "num_positions_evaluated", 0), getattr(evaluator, "num_batches", 0)


def _close_loaded(loaded: LoadedModel) -> None:
    """Stop a model's search drivers and batcher and log KataGo's end-of-run network figures: positions,
    batches, average batch."""
    driver = getattr(loaded.handle.net, "driver", None)
    if driver is not None:
        driver.close()
    loaded.batcher.close()
    positions, batches = _counts(loaded)
    if batches:
        log.info("model %s: %d positions in %d batches (average batch %.2f)", loaded.handle.name, positions,
                 batches, positions / batches)
