"""A self-play run: game threads, the writer thread, the model watcher, and clean stopping.

``numGameThreads`` threads each play one game after another with their own search;
all searches send their leaves to the current model's shared BatchingEvaluator, so
the network sees batches of up to one leaf per game in flight. Finished games queue
(at most ``maxDataQueueSize``) for the writer thread, which turns them into rows and
files. A watcher polls the models directory and loads newer networks; new games use
them at once, running games switch over if ``switchNetsMidGame``.

Stopping (SIGINT/SIGTERM, or :meth:`SelfplayRun.request_stop`): games in progress are
dropped, finished ones are written and flushed to complete files, then run() returns.
"""
from __future__ import annotations

import contextlib
import logging
import os
import queue
import random
import signal
import threading
from pathlib import Path
from typing import Callable, Optional

from katacli.selfplay.game import GameRunner, ModelHandle, SearchFactory
from katacli.selfplay.mcts import MctsSelfplaySearch
from katacli.selfplay.model_pool import ModelManager
from katacli.selfplay.output import GameOutput
from katacli.selfplay.records import FinishedGame
from katacli.search.stepping import search_shares
from katacli.selfplay.settings import SelfplaySettings
from katacli.selfplay.stats import TICK_SECONDS, RunStats
from katacli.worker_processes import EXIT_INTERRUPTED, StopSignals

log = logging.getLogger("katacli.selfplay")

RUN_ID_BITS = 64


def default_search_factory(model: ModelHandle, rng: random.Random) -> MctsSelfplaySearch:
    return MctsSelfplaySearch(model.net, rng)


def default_search_drivers(num_game_threads: int, device: str) -> int:
    """Driver threads stepping the games' searches (katacli.search.stepping.search_shares' layout) on a GPU.
    On a GPU they feed it more: a simulated one (2 ms + 5 us a position, 64 games of 8 leaves, AMD EPYC
    2 cores) 308 -> 382 moves/s, 128 games 303 -> 350-391. On the CPU (0) the game threads search
    themselves: there drivers measured no faster (103-109 moves/s either way, 8 games) with smaller batches."""
    return len(search_shares(num_game_threads)) if device == "cuda" else 0


class SelfplayRun:
    def __init__(self, settings: SelfplaySettings, manager: ModelManager, output_dir: str | os.PathLike, *,
                 models_dir: Optional[str | os.PathLike] = None, max_games_total: Optional[int] = None,
                 poll_seconds: float = 20.0, search_factory: SearchFactory = default_search_factory,
                 seed: Optional[int] = None, claim_game: Optional[Callable[[], bool]] = None,
                 search_drivers: Optional[int] = None):
        """``claim_game``: asked before each new game (e.g. a counter shared between processes);
        False ends this run's game threads. max_games_total applies on top of it. ``search_drivers``:
        threads per model that step the games' searches together (katacli.search.stepping); 0: each
        game thread searches itself; None: :func:`default_search_drivers`."""
        self.settings = settings
        self.manager = manager
        self.output_dir = Path(output_dir)
        self.models_dir = Path(models_dir) if models_dir is not None else None
        self.max_games_total = max_games_total
        self._claim_shared = claim_game
        self.poll_seconds = poll_seconds
        self.rng = random.Random(seed)
        self.run_id = f"{self.rng.getrandbits(RUN_ID_BITS):016X}"
        self.stats = RunStats(current_model=manager.latest_name() or "")
        self.runner = GameRunner(settings, search_factory, on_move=self._count_move)
        if search_drivers is None:
            search_drivers = default_search_drivers(settings.runner.num_game_threads,
                                                    getattr(manager, "device", "cpu"))
        if search_drivers and hasattr(manager, "use_search_drivers"):
            manager.use_search_drivers(search_drivers)
        self._stop = threading.Event()
        self._stop_signals = StopSignals()
        self._force_quit_allowed = True
        self._queue: "queue.Queue[Optional[FinishedGame]]" = queue.Queue(settings.runner.max_data_queue_size)
        self._start_lock = threading.Lock()
        self._errors: list[BaseException] = []
        self._moves_this_game = threading.local()  # per game thread: moves of the game it plays
        r = settings.runner
        self.output = GameOutput(self.output_dir, r.data_board_len, r.max_rows_per_train_file,
                                 r.first_file_rand_min_prop, self.run_id, random.Random(self.rng.getrandbits(64)))

    # ---- control
    def request_stop(self) -> None:
        if not self._stop.is_set():
            log.info("stopping: finishing writes of completed games")
        self.stats.stopping = True
        self._stop.set()

    def _on_signal(self, signum, frame) -> None:
        if self._stop_signals.is_second() and self._force_quit_allowed:
            # A second Ctrl-C: leave at once. Files are renamed into place only when complete,
            # so nothing unreadable is left; the buffered rows are lost.
            log.warning("second signal: exiting without writing buffered games")
            os._exit(EXIT_INTERRUPTED)
        self.request_stop()

    def _count_move(self) -> None:
        self.stats.moves_played += 1
        self._moves_this_game.count = getattr(self._moves_this_game, "count", 0) + 1

    def _tick(self, on_tick: Optional[Callable[[RunStats], None]]) -> None:
        counts = getattr(self.manager, "network_counts", None)  # model sources in tests may have none
        if counts is not None:
            self.stats.nn_positions, self.stats.nn_batches = counts()
        if on_tick is not None:
            on_tick(self.stats)

    def _claim_game(self) -> bool:
        with self._start_lock:
            if self._stop.is_set():
                return False
            if self.max_games_total is not None and self.stats.games_started >= self.max_games_total:
                return False
            if self._claim_shared is not None and not self._claim_shared():
                return False
            self.stats.games_started += 1
            return True

    # ---- threads
    def _game_loop(self, thread_idx: int, seed: int) -> None:
        rng = random.Random(seed)
        # A game thread that searches itself keeps coming back to the network: a batch waits for it. One
        # whose searches run on driver threads does not (the drivers are the clients then).
        clients = None if getattr(self.manager, "search_drivers", 0) else getattr(self.manager, "clients", None)
        try:
            with clients.registered() if clients is not None else contextlib.nullcontext():
                self._play_games(rng)
        except BaseException as exc:  # reported by run(); the other threads stop too
            log.exception("game thread %d failed", thread_idx)
            self._errors.append(exc)
            self.request_stop()

    def _play_games(self, rng: random.Random) -> None:
        while self._claim_game():
            self._moves_this_game.count = 0
            game = self.runner.run_game(rng, self.manager, self._stop.is_set)
            if game is None:
                self.stats.games_dropped += 1
                break
            self.stats.finished_game_moves += self._moves_this_game.count
            self.stats.games_finished += 1
            self._queue.put(game)
            self.stats.queued_games = self._queue.qsize()
            if self.stats.games_finished % self.settings.runner.log_games_every == 0:
                log.info("%d games finished, %d rows written", self.stats.games_finished, self.stats.rows_written)

    def _writer_loop(self) -> None:
        try:
            while True:
                game = self._queue.get()
                self.stats.queued_games = self._queue.qsize()
                if game is None:
                    break
                self.stats.rows_produced += self.output.add(game)
                self.stats.rows_written = self.output.rows_written
                self.stats.files_written = len(self.output.files_written)
        except BaseException as exc:
            log.exception("writer thread failed")
            self._errors.append(exc)
            self.request_stop()
            while self._queue.get() is not None:  # keep draining so game threads never block forever
                pass
        finally:
            try:
                self.output.close()  # flushes the buffered rows: may fail too (a full disk)
            except Exception as exc:
                log.exception("writing the last rows failed")
                if not self._errors:
                    self._errors.append(exc)
            self.stats.rows_written = self.output.rows_written
            self.stats.files_written = len(self.output.files_written)

    def _watch_models(self) -> None:
        while not self._stop.wait(self.poll_seconds):
            try:
                if self.models_dir is not None and self.manager.poll(self.models_dir):
                    self.stats.current_model = self.manager.latest_name() or ""
            except Exception as exc:  # a bad file must not end the run; the old model keeps playing
                log.warning("model directory check failed: %s", exc)

    # ---- the run
    def run(self, on_tick: Optional[Callable[[RunStats], None]] = None, handle_signals: bool = True,
            signals: tuple = (signal.SIGINT, signal.SIGTERM), force_quit: bool = True) -> RunStats:
        """Play until max_games_total or a stop request; returns the final counters.

        ``signals`` stop the run cleanly when handle_signals is set; with ``force_quit``, a second one
        (see katacli.worker_processes.StopSignals) exits at once. A worker process has none: its
        parent leaves at once, and the worker dies with it.
        Raises the first error of a game or writer thread after shutting the others down.
        """
        self._force_quit_allowed = force_quit
        previous = {}
        if handle_signals and threading.current_thread() is threading.main_thread():
            for sig in signals:
                previous[sig] = signal.signal(sig, self._on_signal)
        writer = threading.Thread(target=self._writer_loop, name="selfplay-writer", daemon=True)
        watcher = threading.Thread(target=self._watch_models, name="selfplay-models", daemon=True)
        games = [threading.Thread(target=self._game_loop, args=(i, self.rng.getrandbits(64)),
                                  name=f"selfplay-game-{i}", daemon=True)
                 for i in range(self.settings.runner.num_game_threads)]
        try:
            writer.start()
            watcher.start()
            for t in games:
                t.start()
            while any(t.is_alive() for t in games):
                for t in games:
                    t.join(TICK_SECONDS / len(games))
                self._tick(on_tick)
            self._stop.set()
            self._queue.put(None)
            while writer.is_alive():
                writer.join(TICK_SECONDS)
                self._tick(on_tick)
            watcher.join()
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        self._tick(on_tick)
        if self._errors:
            raise self._errors[0]
        return self.stats
