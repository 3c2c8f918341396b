"""Self-play spread over several worker processes.

One Python process runs Python on one core at a time (the GIL), and self-play has a
lot of Python per move: tree bookkeeping, targets, rows. On a CPU with N cores, N
processes, each with its share of the game threads, its own copy of the network and its
own output files, get through far more games than any number of threads in one.

The parent only supervises: it starts the workers, shows their combined progress and
passes a stop (Ctrl-C, SIGTERM) on to them as SIGTERM; a second one makes them exit at
once, as in a single process. Workers claim games from a shared counter, so
``-max-games-total`` is exact, and write complete files under the same output directory with
their own run ids. The process handling (SIGINT, dying with the parent, supervision) is
:mod:`katacli.worker_processes`, shared with ``kata match``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Callable, Optional

from katacli.config import Enabled
from katacli.selfplay.stats import RunStats
from katacli.selfplay.settings import SelfplaySettings
from katacli.setup.engine_settings import NNSettings
from katacli.worker_processes import (
    EXIT_INTERRUPTED, StopSignals, WorkerPool, close_worker_log, die_with_parent, open_worker_log, split_threads,
)

log = logging.getLogger("katacli.selfplay")

EXIT_WORKER_FAILED = 3
# Workers report their counters at most this often, seconds.
REPORT_SECONDS = 0.5
SEED_STRIDE = 1 << 16
COUNTER_FIELDS = ("games_started", "games_finished", "games_dropped", "moves_played", "finished_game_moves",
                  "rows_written", "rows_produced", "files_written", "queued_games", "nn_positions", "nn_batches")


@dataclass(frozen=True)
class WorkerJob:
    """Everything a worker process needs (pickled to it)."""

    index: int
    settings: SelfplaySettings
    nn: NNSettings
    cpu_threads: int
    pass_alive: Enabled
    models_dir: str
    output_dir: str
    poll_seconds: float
    seed: Optional[int]
    random_init: Optional[str]
    random_init_seed: int
    log_path: str
    device: Optional[str] = None
    search_drivers: Optional[int] = None   # SelfplayRun's (None: its default for the device)


class SharedGameCounter:
    """Games started across all workers, capped at max_games_total (None: no cap)."""

    def __init__(self, ctx, max_games_total: Optional[int]):
        self.value = ctx.Value("q", 0)
        self.max_games_total = max_games_total

    def claim(self) -> bool:
        with self.value.get_lock():
            if self.max_games_total is not None and self.value.value >= self.max_games_total:
                return False
            self.value.value += 1
            return True


# ---------------------------------------------------------------------------- worker side


def worker_main(job: WorkerJob, counter: SharedGameCounter, events, parent_pid: int) -> None:
    """Entry point of a worker process: play this worker's share of the games."""
    die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A stop that arrives while this worker is still loading must not kill it uncleanly.
    early_stop = threading.Event()
    started: list = []  # the SelfplayRun, once made

    def stop_while_loading(signum, frame) -> None:
        early_stop.set()
        for run in started:
            run.request_stop()

    signal.signal(signal.SIGTERM, stop_while_loading)
    handler = open_worker_log("katacli.selfplay", job.log_path, job.index)
    logger = logging.getLogger("katacli.selfplay")
    manager = None
    try:
        from katacli.selfplay.model_pool import ModelManager
        from katacli.selfplay.runner import SelfplayRun

        manager = ModelManager(job.nn, device=job.device, cpu_threads=job.cpu_threads,
                               pass_alive_setting=job.pass_alive)
        manager.load_first(job.models_dir, job.random_init, job.random_init_seed)
        run = SelfplayRun(job.settings, manager, job.output_dir, models_dir=job.models_dir,
                          poll_seconds=job.poll_seconds, seed=job.seed, claim_game=counter.claim,
                          search_drivers=job.search_drivers)
        last = [0.0]

        def report(stats: RunStats) -> None:
            now = time.monotonic()
            if now - last[0] >= REPORT_SECONDS:
                last[0] = now
                events.put(("stats", job.index, _counters(stats)))

        started.append(run)
        if early_stop.is_set():
            run.request_stop()
        stats = run.run(on_tick=report, signals=(signal.SIGTERM,), force_quit=False)
        events.put(("done", job.index, _counters(stats)))
    except BaseException as exc:
        logger.exception("worker %d failed", job.index)
        events.put(("error", job.index, f"{exc}"))
        with contextlib.suppress(OSError):  # the log file may sit on the same full disk
            handler.flush()
        sys.exit(EXIT_WORKER_FAILED)
    finally:
        if manager is not None:
            manager.close()
        close_worker_log(handler)


def _counters(stats: RunStats) -> dict:
    values = {name: getattr(stats, name) for name in COUNTER_FIELDS}
    values["current_model"] = stats.current_model
    values["stopping"] = stats.stopping
    return values


# ---------------------------------------------------------------------------- parent side


class WorkerFailed(Exception):
    """A worker process stopped with an error (the message says which and why)."""


class ProcessRun:
    """Runs WorkerJobs in processes and combines their progress into one RunStats."""

    def __init__(self, jobs: list[WorkerJob], max_games_total: Optional[int]):
        self.jobs = jobs
        self.pool = WorkerPool("kata-selfplay")
        self.counter = SharedGameCounter(self.pool.ctx, max_games_total)
        self.stats = RunStats(current_model="")
        self._latest: dict[int, dict] = {}
        self._errors: list[str] = []
        self._stop_signals = StopSignals()

    def request_stop(self) -> None:
        """Stop as a first Ctrl-C does: workers drop the games in progress and write the finished ones."""
        self.stats.stopping = True
        self.pool.stop_workers()

    def _on_signal(self, signum, frame) -> None:
        first = self._stop_signals.first_at is None
        second = self._stop_signals.is_second()
        self.stats.stopping = True
        self.pool.stop_workers()
        if first:
            log.info("stopping: workers finish writing completed games")
        elif second:
            # a second Ctrl-C: leave at once, as a single process does (workers die with us)
            log.warning("second signal: exiting without writing buffered games")
            os._exit(EXIT_INTERRUPTED)

    def _absorb(self, kind: str, index: int, payload) -> None:
        if kind == "error":
            self._errors.append(f"worker {index}: {payload}")
            self.stats.stopping = True
            self.pool.stop_workers()
        else:
            self._latest[index] = payload
        for name in COUNTER_FIELDS:
            setattr(self.stats, name, sum(v[name] for v in self._latest.values()))
        models = [v["current_model"] for v in self._latest.values() if v["current_model"]]
        if models:
            self.stats.current_model = max(set(models), key=models.count)

    def _on_worker_died(self) -> None:
        if not self.stats.stopping:
            self.stats.stopping = True  # a worker died (killed, out of memory): end the run
            self.pool.stop_workers()

    def run(self, on_tick: Optional[Callable[[RunStats], None]] = None) -> RunStats:
        """Run every job to the end; raises WorkerFailed if a worker failed."""
        self.pool.run(worker_main, [(job.index, (job, self.counter, self.pool.events, os.getpid()))
                                    for job in self.jobs],
                      self._absorb, self._on_signal, self._on_worker_died,
                      on_tick=None if on_tick is None else (lambda: on_tick(self.stats)))
        if on_tick is not None:
            on_tick(self.stats)
        if self._errors:
            raise WorkerFailed("; ".join(self._errors))
        if self.pool.failed():
            raise WorkerFailed(self.pool.failure_text())
        return self.stats


def make_jobs(settings: SelfplaySettings, num_processes: int, **common) -> list[WorkerJob]:
    """One WorkerJob per process with its share of numGameThreads and its own seed."""
    seed = common.pop("seed")
    jobs = []
    for index, threads in enumerate(split_threads(settings.runner.num_game_threads, num_processes)):
        if threads == 0:
            continue
        job_settings = dataclasses.replace(settings, runner=dataclasses.replace(settings.runner,
                                                                                 num_game_threads=threads))
        jobs.append(WorkerJob(index=index, settings=job_settings,
                              seed=None if seed is None else seed * SEED_STRIDE + index, **common))
    return jobs


__all__ = ["ProcessRun", "WorkerFailed", "WorkerJob", "make_jobs"]
