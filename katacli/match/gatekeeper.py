"""KataGo's gatekeeper: test each candidate network against the accepted one before self-play uses it.

The loop: take the newest network in the test directory (a file, or a directory holding
one, as training exports them; that file or directory is what moves); wait while it is still being written; reject it at once
if it is older than the newest accepted network (unless told not to; whole seconds, as KataGo
compares them); otherwise play
numGamesPerGating games against the accepted network (a random one while none is accepted,
as KataGo), both colours in turn -- fewer once the finished games decide it either way, as KataGo --, and
move it
(file or whole directory, by rename) into the accepted directory when it scores at least
requiredCandidateWinProp (the candidate wins ties), else into the rejected directory.
A candidate that cannot be read once it has stopped changing is rejected with the reason
logged. An interrupted gating moves nothing; the candidate is tested afresh next time.
"""
from __future__ import annotations

import contextlib
import logging
import os
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from katacli.config import Config
from katacli.match.results import MatchResults
from katacli.match.processes import MatchProcessRun
from katacli.match.runner import MatchNetworks, MatchRun
from katacli.nn.model_file_reader import read_model_file
from katacli.match.settings import MatchSettings, load_match_positions
from katacli.selfplay.position_pools import PositionPools
from katacli.selfplay.latest_model import MODEL_SUFFIXES, ModelFile, find_latest_model

log = logging.getLogger("katacli.match")

# A candidate must be unchanged (size and time) this long before it is read: a copy in progress
# is waited for, never tested or moved.
SETTLE_SECONDS = 2.0
# How often an empty test directory is looked at again (KataGo: every 4 seconds).
POLL_SECONDS = 4.0
# The candidate wins ties: it needs this much less than the required share.
TIE_EPSILON = 1e-10
SELFPLAY_SUBDIRS = ("sgfs", "tdata", "vadata")
# The random network a run's first candidate plays when nothing is accepted yet: the tiniest architecture.
RANDOM_NETWORK_ARCHITECTURE = "b2c16"
NS_PER_SECOND = 1_000_000_000


class GatekeeperError(Exception):
    """A problem the user must fix (no accepted network, a directory that is not one)."""


@dataclass
class GatingOutcome:
    candidate: str
    accepted: bool
    reason: str
    results: Optional[MatchResults] = None


def _random_network(folder: Path) -> ModelFile:
    """A network of random weights written into ``folder``: the opponent of a run's first candidate.
    (KataGo's is a net whose outputs are random; random weights of a tiny net play as randomly.)"""
    from katacli.nn.configs import random_description
    from katacli.nn.export import write_model_file

    path = folder / "random.bin.gz"
    write_model_file(random_description(RANDOM_NETWORK_ARCHITECTURE, seed=0, model_name="random"), path)
    return ModelFile("random", path, 0)


def _entry_under(path: Path, root: Path) -> Path:
    """What gets moved for the model file ``path`` under ``root``, as KataGo's gatekeeper: the file itself when
    it lies directly in ``root``, else the folder holding it (not the top-level one: candidates exported side
    by side in a batch folder are gated one by one)."""
    return path if path.parent.resolve() == root.resolve() else path.parent


def _is_within(path: Path, folder: Path) -> bool:
    path, folder = path.resolve(), folder.resolve()
    return path == folder or folder in path.parents


def check_directories(test_dir: Path, accepted_dir: Path, rejected_dir: Path) -> None:
    """GatekeeperError unless the three folders lie side by side: a network is looked for anywhere below each
    and moved away whole, so a test folder holding the others (".", a parent) would gate accepted networks
    and move folders into themselves."""
    folders = (("-test-models-dir", test_dir), ("-accepted-models-dir", accepted_dir),
               ("-rejected-models-dir", rejected_dir))
    for i, (name_a, a) in enumerate(folders):
        for name_b, b in folders[i + 1:]:   # (a rejected net inside the accepted folder would be its opponent)
            if _is_within(a, b) or _is_within(b, a):
                raise GatekeeperError(f"{name_a} {a} and {name_b} {b} overlap: give folders side by side "
                                      "(e.g. loop/candidates, loop/models, loop/rejected)")


def _stable_signature(entry: Path) -> tuple:
    files = [entry] if entry.is_file() else sorted(p for p in entry.rglob("*") if p.is_file())
    return tuple((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in files)


def companions(entry: Path) -> list[Path]:
    """Files exported beside a model file under its name (kata train's ``NAME.json`` summary)."""
    if not entry.is_file():
        return []
    base = next((entry.name[: -len(s)] for s in MODEL_SUFFIXES if entry.name.endswith(s)), entry.name)
    return [p for p in entry.parent.iterdir() if p != entry and p.is_file() and p.name.startswith(base + ".")
            and not p.name.endswith(MODEL_SUFFIXES)]


def move_entry(entry: Path, into_dir: Path) -> Path:
    """Rename ``entry`` into ``into_dir`` (a copy then a rename across file systems); never overwrites."""
    dest = into_dir / entry.name
    if dest.exists():
        raise GatekeeperError(f"cannot move {entry} to {dest}: it already exists")
    if _is_within(into_dir, entry):   # a folder into itself: the copy's clean-up would delete both
        raise GatekeeperError(f"cannot move {entry} into {into_dir}, a folder inside it")
    try:
        os.rename(entry, dest)
    except OSError:
        temp = into_dir / f".{entry.name}.moving"
        if entry.is_dir():
            shutil.copytree(entry, temp)
        else:
            shutil.copy2(entry, temp)
        os.rename(temp, dest)
        shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    log.info("moved %s to %s", entry, dest)
    return dest


def candidate_points(results: MatchResults, name: str) -> float:
    """The points bot ``name`` scored in ``results`` (a win 1, a draw half)."""
    return sum(t.a_points if t.a == name else t.games - t.a_points for t in results.pairs.values())


class Gatekeeper:
    def __init__(self, cfg: Config, nn_settings, test_dir: Path, accepted_dir: Path, rejected_dir: Path,
                 sgf_dir: Path, selfplay_dir: Optional[Path] = None, required_win_prop: float = 0.5,
                 auto_reject_old: bool = True, cpu_threads: int = 1, seed: Optional[int] = None,
                 settle_seconds: float = SETTLE_SECONDS, poll_seconds: float = POLL_SECONDS,
                 num_processes: int = 1, log_path: Optional[str] = None, positions: Optional[PositionPools] = None):
        """num_processes > 1: gating games in that many worker processes (logging to log_path).
        positions: the start and hint positions, loaded at start-up (None: loaded from cfg now)."""
        self.cfg = cfg
        self.nn = nn_settings
        self.test_dir, self.accepted_dir, self.rejected_dir = test_dir, accepted_dir, rejected_dir
        self.sgf_dir, self.selfplay_dir = sgf_dir, selfplay_dir
        self.required_win_prop = required_win_prop
        self.auto_reject_old = auto_reject_old
        self.cpu_threads = cpu_threads
        self.seed = seed
        self.settle_seconds = settle_seconds
        self.poll_seconds = poll_seconds
        self.num_processes = num_processes
        self.log_path = log_path
        check_directories(test_dir, accepted_dir, rejected_dir)
        self.positions = positions if positions is not None else load_match_positions(cfg)
        self.stopped = False
        self._current: Optional[MatchRun] = None
        for d in (test_dir, accepted_dir, rejected_dir, sgf_dir) + ((selfplay_dir,) if selfplay_dir else ()):
            d.mkdir(parents=True, exist_ok=True)

    def request_stop(self) -> None:
        self.stopped = True
        if self._current is not None:
            self._current.request_stop()

    def _sleep(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.stopped and time.monotonic() < end:
            time.sleep(min(0.1, seconds))

    def settled_candidate(self) -> Optional[ModelFile]:
        """The newest candidate once it has stopped changing; None if the test directory is empty."""
        while not self.stopped:
            found = find_latest_model(self.test_dir)
            if found is None:
                return None
            entry = _entry_under(found.path, self.test_dir)
            before = _stable_signature(entry)
            self._sleep(self.settle_seconds)
            if _stable_signature(entry) == before and find_latest_model(self.test_dir) == found:
                return found
            log.info("%s is still being written; waiting", entry)
        return None

    def _settings(self, candidate: ModelFile, accepted: ModelFile) -> MatchSettings:
        cfg = self.cfg.copy()
        accepted_name = accepted.name if accepted.name != candidate.name else accepted.name + "-accepted"
        for key, value in (("numBots", "2"), ("botName0", candidate.name), ("botName1", accepted_name),
                           ("nnModelFile0", str(candidate.path)), ("nnModelFile1", str(accepted.path))):
            cfg.set(key, value, origin="set by the gatekeeper")
        return MatchSettings.from_config(cfg, num_games_key="numGamesPerGating", gatekeeper=True,
                                         default_num_games=cfg.get("numGamesPerGating", "gtp"),
                                         positions=self.positions)

    def test_one(self, candidate: ModelFile, on_tick: Optional[Callable] = None) -> Optional[GatingOutcome]:
        """Gate one candidate; None when interrupted (nothing moved). With no accepted network yet (a run's
        start), the candidate plays a random network, as KataGo's gatekeeper does."""
        accepted = find_latest_model(self.accepted_dir)
        if accepted is None:
            with tempfile.TemporaryDirectory(prefix="kata-gatekeeper-") as folder:
                log.info("no accepted network in %s yet: testing %s against a random one", self.accepted_dir,
                         candidate.name)
                return self._test_against(candidate, _random_network(Path(folder)), on_tick)
        return self._test_against(candidate, accepted, on_tick)

    def _test_against(self, candidate: ModelFile, accepted: ModelFile,
                      on_tick: Optional[Callable]) -> Optional[GatingOutcome]:
        entry = _entry_under(candidate.path, self.test_dir)
        # KataGo compares the files' times in whole seconds: one copied in the same second is not older
        if self.auto_reject_old and accepted.mtime_ns // NS_PER_SECOND > candidate.mtime_ns // NS_PER_SECOND:
            return self._decide(candidate, entry, False, f"older than the accepted model {accepted.name}")
        try:
            read_model_file(candidate.path)
        except Exception as exc:  # unreadable although it stopped changing: a broken export
            return self._decide(candidate, entry, False, f"cannot be loaded ({exc})")
        settings = self._settings(candidate, accepted)
        name = settings.bots[0].name
        total, decided = settings.num_games_total, []

        def check_decided(run) -> None:
            # As KataGo: once the finished games decide the gating either way, the rest are not played.
            # Game threads add games under the run's lock: the points and the count must be of the same games.
            with getattr(run, "results_lock", None) or contextlib.nullcontext():
                points, games = candidate_points(run.results, name), run.results.games
            remaining = total - games
            if games > 0 and remaining > 0 and not decided:
                if points >= total * self.required_win_prop:
                    decided.append("won")
                elif points + remaining + TIE_EPSILON < total * self.required_win_prop:
                    decided.append("lost")
                if decided:
                    log.info("candidate %s has already %s enough games: the other %d are not played", candidate.name,
                             decided[0], remaining)
                    run.request_stop()

        def tick(run) -> None:
            check_decided(run)   # worker processes' games: counted as their events arrive
            if on_tick is not None:
                on_tick(run)

        networks = None
        try:
            if self.num_processes > 1:
                self._current = MatchProcessRun(settings, self.nn, self.num_processes, self.cpu_threads,
                                                self.sgf_dir / candidate.name, self.seed, self.log_path)
            else:
                networks = MatchNetworks(settings, self.nn, self.cpu_threads)
                self._current = MatchRun(settings, networks.nets, self.sgf_dir / candidate.name, self.seed,
                                         networks.client_contexts)
                run_here = self._current
                run_here.on_game = lambda game, _summary: check_decided(run_here)   # at once, as each game is recorded
            results = self._current.run(on_tick=tick, handle_signals=False)
        finally:
            if networks is not None:
                networks.close()
            run, self._current = self._current, None
        if self.stopped or (run.stopped and not decided):
            return None
        points = candidate_points(results, name)
        games = results.games
        won = points + TIE_EPSILON >= self.required_win_prop * games
        summary = f"scored {points:g} of {games} against {accepted.name}"
        outcome = self._decide(candidate, entry, won, summary)
        outcome.results = results
        return outcome

    def _decide(self, candidate: ModelFile, entry: Path, accept: bool, reason: str) -> GatingOutcome:
        if accept:
            log.info("candidate %s %s: accepting", candidate.name, reason)
            if self.selfplay_dir is not None:
                for sub in SELFPLAY_SUBDIRS:
                    (self.selfplay_dir / candidate.name / sub).mkdir(parents=True, exist_ok=True)
        else:
            log.info("candidate %s %s: rejecting", candidate.name, reason)
        destination = self.accepted_dir if accept else self.rejected_dir
        extras = companions(entry)
        move_entry(entry, destination)  # the model first: from here on it counts as decided
        for extra in extras:
            move_entry(extra, destination)
        return GatingOutcome(candidate.name, accept, reason)

    def run(self, quit_if_no_nets: bool = False, on_outcome: Optional[Callable[[GatingOutcome], None]] = None,
            on_tick: Optional[Callable] = None) -> list[GatingOutcome]:
        outcomes = []
        waiting_logged = False
        while not self.stopped:
            candidate = self.settled_candidate()
            if candidate is None:
                if quit_if_no_nets and not self.stopped:   # a typo in -test-models-dir shows here
                    log.warning("no %snetwork to test in %s: quitting (-quit-if-no-nets-to-test)",
                                "other " if outcomes else "", self.test_dir)
                if quit_if_no_nets or self.stopped:
                    break
                if not waiting_logged:
                    log.info("waiting for a network in %s", self.test_dir)
                    waiting_logged = True
                self._sleep(self.poll_seconds)
                continue
            waiting_logged = False
            log.info("testing candidate %s", candidate.name)
            outcome = self.test_one(candidate, on_tick)
            if outcome is None:
                log.warning("stopped: %s stays in %s and is tested afresh next time (its finished games' SGFs "
                            "are kept)", candidate.name, self.test_dir)
                break
            outcomes.append(outcome)
            if on_outcome is not None:
                on_outcome(outcome)
        return outcomes
