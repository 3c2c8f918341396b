"""A match spread over worker processes (the CPU case), as self-play spreads its games.

Search is mostly Python per visit, so one process uses about one core whatever its thread
count. Each worker loads the networks itself, plays its share of numGameThreads, takes game
numbers from one shared counter (so numGamesTotal and the pairing rounds are exact across
workers), writes its SGF files and reports every finished game to the parent, which keeps
the results and the progress. Ctrl-C / SIGTERM in the parent stop the workers (SIGTERM);
they die with the parent if it is killed, leaving only whole SGF files, as in one process.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import multiprocessing as mp
import os
import queue
import random
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from katacli.match.results import MatchResults
from katacli.match.settings import MatchSettings
from katacli.selfplay.processes import _die_with_parent, split_threads

log = logging.getLogger("katacli.match")

EXIT_WORKER_FAILED = 3
TICK_SECONDS = 0.25
SEED_STRIDE = 1 << 16


@dataclass(frozen=True)
class MatchJob:
    index: int
    settings: MatchSettings
    nn: object                  # NNSettings
    cpu_threads: int
    sgf_dir: Optional[str]
    seed: Optional[int]
    pair_seed: int
    log_path: Optional[str]


class _SharedNumbers:
    """Game numbers 0, 1, 2, ... handed out across processes."""

    def __init__(self, ctx):
        self.value = ctx.Value("q", 0)

    def take(self) -> int:
        with self.value.get_lock():
            number = self.value.value
            self.value.value += 1
            return number


def worker_main(job: MatchJob, numbers: _SharedNumbers, events, parent_pid: int) -> None:
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's SIGTERM is the only stop a worker obeys
    runs: list = []
    stop = threading.Event()

    def on_term(signum, frame) -> None:
        stop.set()
        for run in runs:
            run.request_stop()

    signal.signal(signal.SIGTERM, on_term)
    logger = logging.getLogger("katacli.match")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    handler = None
    if job.log_path:
        handler = logging.FileHandler(job.log_path, encoding="utf-8")
        handler.setFormatter(logging.Formatter(f"%(asctime)s [worker {job.index}] %(levelname)s %(message)s"))
        logger.addHandler(handler)
    networks = None
    try:
        from katacli.match.runner import MatchNetworks, MatchRun, Pairer

        networks = MatchNetworks(job.settings, job.nn, job.cpu_threads)
        s = job.settings
        pairer = Pairer(s.pairings, s.num_games_total, job.pair_seed, take_number=numbers.take)
        run = MatchRun(s, networks.nets, Path(job.sgf_dir) if job.sgf_dir else None, job.seed,
                       networks.client_contexts, pairer=pairer,
                       on_game=lambda g: events.put(("game", job.index, (g.black, g.white, g.winner))))
        runs.append(run)
        if stop.is_set():
            run.request_stop()
        run.run(on_tick=lambda r: events.put(("moves", job.index, r.moves_played)), handle_signals=False)
        events.put(("done", job.index, run.stopped))
    except BaseException as exc:
        logger.exception("worker %d failed", job.index)
        events.put(("error", job.index, f"{exc}"))
        sys.exit(EXIT_WORKER_FAILED)
    finally:
        if networks is not None:
            networks.close()
        if handler is not None:
            handler.close()


class MatchProcessRun:
    """The parent: starts the workers, gathers their games; looks like a MatchRun to the caller."""

    def __init__(self, settings: MatchSettings, nn, num_processes: int, cpu_threads: int = 1,
                 sgf_dir: Optional[Path] = None, seed: Optional[int] = None, log_path: Optional[str] = None):
        self.settings = settings
        self.ctx = mp.get_context("spawn")
        self.numbers = _SharedNumbers(self.ctx)
        self.events = self.ctx.Queue()
        self.results = MatchResults(settings.bot_names())
        self.games_finished = 0
        self._moves: dict[int, int] = {}
        self._errors: list[str] = []
        self._stopped = False
        self._procs: list = []
        rng = random.Random(seed)
        pair_seed = rng.getrandbits(32)
        self.jobs = []
        for index, threads in enumerate(split_threads(settings.num_game_threads, num_processes)):
            if threads == 0:
                continue
            job_settings = dataclasses.replace(settings, num_game_threads=threads)
            self.jobs.append(MatchJob(index, job_settings, nn, cpu_threads, str(sgf_dir) if sgf_dir else None,
                                      None if seed is None else seed * SEED_STRIDE + index, pair_seed, log_path))

    @property
    def moves_played(self) -> int:
        return sum(self._moves.values())

    @property
    def stopped(self) -> bool:
        return self._stopped

    def request_stop(self) -> None:
        self._stopped = True
        for proc in self._procs:
            if proc.is_alive() and proc.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)

    def _absorb(self, kind: str, index: int, payload) -> None:
        if kind == "game":
            black, white, winner = payload
            self.results.add(black, white, winner)
            self.games_finished += 1
        elif kind == "moves":
            self._moves[index] = payload
        elif kind == "error":
            self._errors.append(f"worker {index}: {payload}")
            self.request_stop()

    def _drain(self, timeout: float) -> None:
        try:
            self._absorb(*self.events.get(timeout=timeout))
            while True:
                self._absorb(*self.events.get_nowait())
        except queue.Empty:
            pass

    def run(self, on_tick: Optional[Callable] = None, handle_signals: bool = True) -> MatchResults:
        in_main = handle_signals and threading.current_thread() is threading.main_thread()
        previous = {}
        if in_main:  # workers start with SIGINT ignored (inherited); the parent's handlers come after
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
            previous[signal.SIGTERM] = signal.getsignal(signal.SIGTERM)
        package_root = str(Path(__file__).resolve().parents[2])
        saved_path = list(sys.path)
        sys.path.insert(0, package_root)  # workers import the same (compiled) katacli as this process
        try:
            for job in self.jobs:
                proc = self.ctx.Process(target=worker_main, args=(job, self.numbers, self.events, os.getpid()),
                                        name=f"kata-match-{job.index}")
                proc.start()
                self._procs.append(proc)
            sys.path[:] = saved_path
            if in_main:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, lambda *_: self.request_stop())
            while any(p.is_alive() for p in self._procs):
                self._drain(TICK_SECONDS)
                if any(p.exitcode not in (0, None) for p in self._procs) and not self._stopped:
                    self.request_stop()  # a worker died: end the match
                if on_tick is not None:
                    on_tick(self)
            for proc in self._procs:
                proc.join()
            self._drain(0.0)
        finally:
            sys.path[:] = saved_path
            for proc in self._procs:
                if proc.is_alive():
                    proc.kill()
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if self._errors:
            raise RuntimeError("; ".join(self._errors))
        failed = [p for p in self._procs if p.exitcode not in (0, None)]
        if failed and not self._stopped:
            raise RuntimeError(", ".join(f"{p.name} exited with status {p.exitcode}" for p in failed))
        return self.results
