"""A match spread over worker processes (the CPU case), as self-play spreads its games.

Search is mostly Python per visit, so one process uses about one core whatever its thread
count. Each worker loads the networks itself, plays its share of numGameThreads, takes game
numbers from one shared counter (so numGamesTotal and the pairing rounds are exact across
workers), writes its SGF files and reports every finished game to the parent, which keeps
the results and the progress. Ctrl-C / SIGTERM in the parent stop the workers (SIGTERM);
they die with the parent if it is killed, leaving only whole SGF files, as in one process.
"""
from __future__ import annotations

import dataclasses
import logging
import os
import random
import signal
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from katacli.match.results import MatchResults, MoveTimes
from katacli.match.settings import MatchSettings
from katacli.worker_processes import (
    WORKER_RECORD, WorkerPool, close_worker_log, die_with_parent, open_worker_log, split_threads,
)

log = logging.getLogger("katacli.match")

EXIT_WORKER_FAILED = 3
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
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent's SIGTERM is the only stop a worker obeys
    runs: list = []
    stop = threading.Event()

    def on_term(signum, frame) -> None:
        stop.set()
        for run in runs:
            run.request_stop()

    signal.signal(signal.SIGTERM, on_term)
    handler = open_worker_log("katacli.match", job.log_path, job.index)
    logger = logging.getLogger("katacli.match")
    networks = None
    try:
        from katacli.match.runner import MatchNetworks, MatchRun, Pairer

        networks = MatchNetworks(job.settings, job.nn, job.cpu_threads)
        s = job.settings
        pairer = Pairer(s.pairings, s.num_games_total, job.pair_seed, take_number=numbers.take)
        run = MatchRun(s, networks.nets, Path(job.sgf_dir) if job.sgf_dir else None, job.seed,
                       networks.client_contexts, pairer=pairer,
                       on_game=lambda g, summary: events.put(("game", job.index, (g.black, g.white, g.winner, summary,
                                                                                   g.time_used, g.moves_made))),
                       log_match_totals=False)
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
        close_worker_log(handler)


class MatchProcessRun:
    """The parent: starts the workers, gathers their games; looks like a MatchRun to the caller."""

    def __init__(self, settings: MatchSettings, nn, num_processes: int, cpu_threads: int = 1,
                 sgf_dir: Optional[Path] = None, seed: Optional[int] = None, log_path: Optional[str] = None):
        self.settings = settings
        self.pool = WorkerPool("kata-match")
        self.numbers = _SharedNumbers(self.pool.ctx)
        self.results = MatchResults(settings.bot_names())
        self.move_times = MoveTimes()
        self.games_finished = 0
        self._moves: dict[int, int] = {}
        self._errors: list[str] = []
        self._stopped = False
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
        self.pool.stop_workers()

    def _absorb(self, kind: str, index: int, payload) -> None:
        if kind == "game":
            black, white, winner, summary, time_used, moves_made = payload
            self.results.add(black, white, winner)
            self.games_finished += 1
            # The worker wrote it to the log file; the console's log (logToStdout) gets it from here.
            log.info("%s", summary, extra={WORKER_RECORD: True})
            self.move_times.add(black, white, time_used, moves_made)
            if self.games_finished % self.settings.log_games_every == 0:   # (the match's count, not a worker's)
                log.info("%d games finished", self.games_finished)
            for line in self.move_times.lines_after(self.games_finished):   # (the whole match's: the parent's)
                log.info("%s", line)
        elif kind == "moves":
            self._moves[index] = payload
        elif kind == "error":
            self._errors.append(f"worker {index}: {payload}")
            self.request_stop()

    def _on_worker_died(self) -> None:
        if not self._stopped:
            self.request_stop()  # a worker died: end the match

    def run(self, on_tick: Optional[Callable] = None, handle_signals: bool = True) -> MatchResults:
        self.pool.run(worker_main, [(job.index, (job, self.numbers, self.pool.events, os.getpid()))
                                    for job in self.jobs],
                      self._absorb, lambda *_: self.request_stop(), self._on_worker_died,
                      on_tick=None if on_tick is None else (lambda: on_tick(self)), handle_signals=handle_signals)
        if self._errors:
            raise RuntimeError("; ".join(self._errors))
        if self.pool.failed() and not self._stopped:
            raise RuntimeError(self.pool.failure_text())
        return self.results
