"""Self-play spread over several worker processes.

One Python process runs Python on one core at a time (the GIL), and self-play has a
lot of Python per move: tree bookkeeping, targets, rows. On a CPU with N cores, N
processes, each with its share of the game threads, its own copy of the network and its
own output files, get through far more games than any number of threads in one.

The parent only supervises: it starts the workers, shows their combined progress and
passes a stop (Ctrl-C, SIGTERM) on to them as SIGTERM; a second one makes them exit at
once, as in a single process. Workers ignore SIGINT themselves (the terminal sends it to
the whole process group, and the parent's SIGTERM must be the only stop they see). They
claim games from a shared counter, so ``-max-games-total`` is exact, and write complete
files under the same output directory with their own run ids. A worker dies with the
parent (PR_SET_PDEATHSIG on Linux, a parent-pid check elsewhere), so killing the parent
with SIGKILL ends the whole run and, as in one process, leaves only complete files.
"""
from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import logging
import multiprocessing as mp
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from katacli.config import Enabled
from katacli.selfplay.stats import TICK_SECONDS, RunStats
from katacli.selfplay.settings import SelfplaySettings
from katacli.settings import NNSettings

log = logging.getLogger("katacli.selfplay")

EXIT_WORKER_FAILED = 3
EXIT_INTERRUPTED = 130
# Workers report their counters at most this often, seconds.
REPORT_SECONDS = 0.5
# How often a worker without PR_SET_PDEATHSIG checks that its parent still lives, seconds.
PARENT_CHECK_SECONDS = 1.0
PR_SET_PDEATHSIG = 1
SEED_STRIDE = 1 << 16
COUNTER_FIELDS = ("games_started", "games_finished", "games_dropped", "moves_played", "rows_written",
                  "rows_produced", "files_written", "queued_games")


def default_num_processes(num_game_threads: int, device: str) -> int:
    """One worker per CPU core on the CPU (never more than games); one with a GPU."""
    if device.startswith("cuda"):
        return 1
    return max(1, min(os.cpu_count() or 1, num_game_threads))


def split_threads(num_game_threads: int, num_processes: int) -> list[int]:
    """numGameThreads shared out as evenly as possible."""
    base, extra = divmod(num_game_threads, num_processes)
    return [base + (1 if i < extra else 0) for i in range(num_processes)]


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


def _die_with_parent(parent_pid: int) -> None:
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0:
                if os.getppid() != parent_pid:  # the parent died before prctl took effect
                    os._exit(EXIT_INTERRUPTED)
                return

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(EXIT_INTERRUPTED)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def worker_main(job: WorkerJob, counter: SharedGameCounter, events, parent_pid: int) -> None:
    """Entry point of a worker process: play this worker's share of the games."""
    _die_with_parent(parent_pid)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A stop that arrives while this worker is still loading must not kill it uncleanly.
    early_stop = threading.Event()
    started: list = []  # the SelfplayRun, once made

    def stop_while_loading(signum, frame) -> None:
        early_stop.set()
        for run in started:
            run.request_stop()

    signal.signal(signal.SIGTERM, stop_while_loading)
    logger = logging.getLogger("katacli.selfplay")
    logger.setLevel(logging.INFO)
    logger.propagate = False
    logging.raiseExceptions = False  # a log line that cannot be written (full disk) is dropped quietly
    handler = logging.FileHandler(job.log_path, encoding="utf-8")  # appends: all workers share the log
    handler.setFormatter(logging.Formatter(f"%(asctime)s [worker {job.index}] %(levelname)s %(message)s"))
    logger.addHandler(handler)
    manager = None
    try:
        from katacli.selfplay.models import ModelManager
        from katacli.selfplay.runner import SelfplayRun

        manager = ModelManager(job.nn, device=job.device, cpu_threads=job.cpu_threads,
                               pass_alive_setting=job.pass_alive)
        manager.load_first(job.models_dir, job.random_init, job.random_init_seed)
        run = SelfplayRun(job.settings, manager, job.output_dir, models_dir=job.models_dir,
                          poll_seconds=job.poll_seconds, seed=job.seed, claim_game=counter.claim)
        last = [0.0]

        def report(stats: RunStats) -> None:
            now = time.monotonic()
            if now - last[0] >= REPORT_SECONDS:
                last[0] = now
                events.put(("stats", job.index, _counters(stats)))

        started.append(run)
        if early_stop.is_set():
            run.request_stop()
        stats = run.run(on_tick=report, signals=(signal.SIGTERM,))
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
        with contextlib.suppress(OSError):  # its last flush may meet the same full disk
            handler.close()


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
        self.ctx = mp.get_context("spawn")  # a clean interpreter: no inherited torch threads or locks
        self.counter = SharedGameCounter(self.ctx, max_games_total)
        self.events = self.ctx.Queue()
        self.stats = RunStats(current_model="")
        self._latest: dict[int, dict] = {}
        self._errors: list[str] = []
        self._signals = 0
        self._procs: list = []

    def _on_signal(self, signum, frame) -> None:
        self._signals += 1
        self.stats.stopping = True
        self._stop_workers()
        if self._signals == 1:
            log.info("stopping: workers finish writing completed games")
        else:  # a second Ctrl-C: leave at once, as a single process does (workers die with us)
            log.warning("second signal: exiting without writing buffered games")
            os._exit(EXIT_INTERRUPTED)

    def _stop_workers(self) -> None:
        for proc in self._procs:
            if proc.is_alive() and proc.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(proc.pid, signal.SIGTERM)

    def _absorb(self, kind: str, index: int, payload) -> None:
        if kind == "error":
            self._errors.append(f"worker {index}: {payload}")
            self.stats.stopping = True
            self._stop_workers()
        else:
            self._latest[index] = payload
        for name in COUNTER_FIELDS:
            setattr(self.stats, name, sum(v[name] for v in self._latest.values()))
        models = [v["current_model"] for v in self._latest.values() if v["current_model"]]
        if models:
            self.stats.current_model = max(set(models), key=models.count)

    def _drain(self, timeout: float) -> None:
        try:
            self._absorb(*self.events.get(timeout=timeout))
            while True:
                self._absorb(*self.events.get_nowait())
        except queue.Empty:
            pass

    def run(self, on_tick: Optional[Callable[[RunStats], None]] = None) -> RunStats:
        """Run every job to the end; raises WorkerFailed if a worker failed."""
        in_main = threading.current_thread() is threading.main_thread()
        previous = {}
        if in_main:  # workers start with SIGINT ignored (inherited), the parent's handlers come after
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.SIG_IGN)
            previous[signal.SIGTERM] = signal.getsignal(signal.SIGTERM)
        # Workers get this process's sys.path: put the directory katacli was imported from first, so
        # that they load the same (compiled) package even when a source checkout is on the path too.
        package_root = str(Path(__file__).resolve().parents[2])
        saved_path = list(sys.path)
        sys.path.insert(0, package_root)
        try:
            for job in self.jobs:
                proc = self.ctx.Process(target=worker_main, args=(job, self.counter, self.events, os.getpid()),
                                        name=f"kata-selfplay-{job.index}")
                proc.start()
                self._procs.append(proc)
            sys.path[:] = saved_path
            if in_main:
                for sig in (signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, self._on_signal)
            while any(p.is_alive() for p in self._procs):
                self._drain(TICK_SECONDS)
                if not self.stats.stopping and any(p.exitcode not in (0, None) for p in self._procs):
                    self.stats.stopping = True  # a worker died (killed, out of memory): end the run
                    self._stop_workers()
                if on_tick is not None:
                    on_tick(self.stats)
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
        if on_tick is not None:
            on_tick(self.stats)
        failed = [p for p in self._procs if p.exitcode not in (0, None)]
        if self._errors:
            raise WorkerFailed("; ".join(self._errors))
        if failed:
            raise WorkerFailed(", ".join(f"{p.name} exited with status {p.exitcode}" for p in failed))
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


__all__ = ["ProcessRun", "WorkerFailed", "WorkerJob", "default_num_processes", "make_jobs", "split_threads"]
