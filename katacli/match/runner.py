"""A whole match: networks loaded once each, game threads sharing their batches, SGFs, results.

``numGameThreads`` threads each play one game after another. A game's two bots send their
leaves to their networks' shared batching evaluators (one per distinct model file, as
KataGo loads each model once), so every network sees batches from all games in flight.
Pairings cycle through KataGo's round (every pair, both colours) in shuffled order until
numGamesTotal games have started. Every finished game is written as its own SGF file,
renamed into place when complete, so an interrupted match leaves only whole files.
"""
from __future__ import annotations

import contextlib
import logging
import random
import signal
import threading
from pathlib import Path
from typing import Callable, Optional

from katacli.data.files import atomic_output, remove_stale_partials
from katacli.match.game import MatchBot, MatchGame, play_game, start_game
from katacli.match.results import MatchResults, MoveTimes
from katacli.match.settings import MatchSettings
from katacli.nn.human_profile import ProfileNotSetError
from katacli.search.pattern_avoidance import load_sgf_pattern_table
from katacli.selfplay.raw_policy import NetEvaluator

log = logging.getLogger("katacli.match")

SEED_BITS = 64
TICK_SECONDS = 0.25
ROUND_SEED_STRIDE = 1 << 20


class Pairer:
    """Hands out games: (game number, (black bot, white bot)), numGamesTotal in all.

    Game n is entry n % len(round) of round n // len(round), a shuffle of KataGo's round (every
    pairing once) drawn from the seed and the round number, so processes that share only the
    game counter (``take_number``) still play whole rounds.
    """

    def __init__(self, pairings, num_games: int, seed: int, take_number: Optional[Callable[[], int]] = None):
        self.pairings = list(pairings)
        self.num_games = num_games
        self.seed = seed
        self._next = 0
        self._lock = threading.Lock()
        self._take = take_number or self._take_local

    def _take_local(self) -> int:
        with self._lock:
            number = self._next
            self._next += 1
            return number

    def round_order(self, round_index: int) -> list:
        order = list(self.pairings)
        random.Random(self.seed * ROUND_SEED_STRIDE + round_index).shuffle(order)
        return order

    def next(self) -> Optional[tuple[int, tuple[int, int]]]:
        number = self._take()
        if number >= self.num_games:
            return None
        size = len(self.pairings)
        return number, self.round_order(number // size)[number % size]


def load_pattern_tables(settings: MatchSettings) -> dict:
    """Each bot's avoidSgfPattern* table (None without one); PatternAvoidanceError for unusable files."""
    return {bot.index: load_sgf_pattern_table(list(bot.sgf_patterns), log.info, f"bot {bot.index}")
            for bot in settings.bots}


class MatchRun:
    def __init__(self, settings: MatchSettings, nets: dict[str, Optional[NetEvaluator]],
                 sgf_dir: Optional[Path] = None, seed: Optional[int] = None, client_contexts=(),
                 pairer: Optional[Pairer] = None, on_game: Optional[Callable[[MatchGame, str], None]] = None,
                 pattern_tables: Optional[dict] = None, log_match_totals: bool = True):
        """nets: model path (or "rollouts") -> evaluator (None for rollouts). client_contexts: callables
        giving each game thread's registration with the networks' batchers. pairer: shared with other
        processes (default: this run's own). on_game: called with every finished game and its log line. pattern_tables: bot
        index -> its avoidSgfPattern* table, as load_pattern_tables gives (default: loaded here). log_match_totals:
        log the games finished and the bots' average move times (False in a worker process: its parent logs
        the whole match's)."""
        self.settings = settings
        self.nets = nets
        self.sgf_dir = sgf_dir
        self.rng = random.Random(seed)
        self.run_id = f"{self.rng.getrandbits(SEED_BITS):016X}"
        self.pairer = pairer or Pairer(settings.pairings, settings.num_games_total, self.rng.getrandbits(SEED_BITS))
        self.on_game = on_game
        self._net_bot_index = next((b.index for b in settings.bots if self.nets.get(b.model) is not None), None)
        self.results = MatchResults(settings.bot_names())
        self.move_times = MoveTimes() if log_match_totals else None
        self.client_contexts = list(client_contexts)
        self.games_started = self.games_finished = self.moves_played = 0
        self.sgf_files: list[Path] = []
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._errors: list[BaseException] = []
        self.pattern_tables = pattern_tables if pattern_tables is not None else load_pattern_tables(settings)

    @property
    def results_lock(self) -> threading.Lock:
        """Held while a finished game is added to ``results``: read several of its numbers under it."""
        return self._lock

    def request_stop(self) -> None:
        if not self._stop.is_set():
            log.info("stopping: games in progress are dropped, finished ones are kept")
        self._stop.set()

    def _on_signal(self, signum, frame) -> None:
        self.request_stop()

    def _bot(self, index: int, rng: random.Random) -> MatchBot:
        spec = self.settings.bots[index]
        bot = MatchBot(spec, self.nets[spec.model], random.Random(rng.getrandbits(SEED_BITS)))
        bot.search.pattern_table = self.pattern_tables.get(index)
        return bot

    def _count_move(self, bot: MatchBot, choice: tuple) -> None:
        with self._lock:
            self.moves_played += 1
        if self.settings.log_moves or self.settings.log_search_info:
            move, win_loss, lead, visits = choice
            log.info("%s played %s (%d visits, White win-loss %.3f, lead %.1f)", bot.spec.name, move, visits,
                     win_loss, lead)

    def _record(self, game: MatchGame, game_number: int) -> None:
        with self._lock:
            self.results.add(game.black, game.white, game.winner)
            self.games_finished += 1
            finished = self.games_finished
            times = None
            if self.move_times is not None:
                self.move_times.add(game.black, game.white, game.time_used, game.moves_made)
                times = self.move_times.lines_after(finished)
        if self.sgf_dir is not None:
            path = self.sgf_dir / f"match-{self.run_id}-{game_number:06d}.sgf"
            with atomic_output(path) as temp:
                temp.write_text(game.sgf() + "\n", encoding="utf-8")
            with self._lock:
                self.sgf_files.append(path)
        summary = game.summary(game_number)
        log.info("%s", summary)
        if self.on_game is not None:
            self.on_game(game, summary)
        if self.move_times is not None and finished % self.settings.log_games_every == 0:
            log.info("%d games finished", finished)   # (a worker's count is not the match's: its parent logs it)
        for line in times or ():
            log.info("%s", line)

    def _game_loop(self, seed: int) -> None:
        rng = random.Random(seed)
        try:
            with contextlib.ExitStack() as stack:
                for registered in self.client_contexts:
                    stack.enter_context(registered())
                while not self._stop.is_set():
                    claimed = self.pairer.next()
                    if claimed is None:
                        return
                    number, pair = claimed
                    number += 1  # games are numbered from 1 in logs and file names
                    with self._lock:
                        self.games_started += 1
                    black, white = self._bot(pair[0], rng), self._bot(pair[1], rng)
                    referee = None
                    if black.net is None and white.net is None and self._net_bot_index is not None:
                        referee = self._bot(self._net_bot_index, rng)  # judges komiAuto for rollout pairs
                    start = start_game(self.settings, rng, black, white, referee)
                    game = play_game(self.settings, start, black, white, self._stop.is_set, self._count_move)
                    if game is None:
                        return
                    self._record(game, number)
        except BaseException as exc:  # reported by run(); the other threads stop too
            if isinstance(exc, ProfileNotSetError):   # a setting to give, not a bug: no traceback
                log.error(f"game thread stopped: {exc}")
            else:
                log.exception("game thread failed")
            self._errors.append(exc)
            self.request_stop()

    def run(self, on_tick: Optional[Callable[["MatchRun"], None]] = None, handle_signals: bool = True) -> MatchResults:
        """Play the match (Ctrl-C/SIGTERM stop it, keeping finished games); returns the results so far."""
        previous = {}
        if handle_signals and threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, self._on_signal)
        if self.sgf_dir is not None:
            self.sgf_dir.mkdir(parents=True, exist_ok=True)
            remove_stale_partials(self.sgf_dir)  # what a killed earlier match was still writing
        threads = [threading.Thread(target=self._game_loop, args=(self.rng.getrandbits(SEED_BITS),),
                                    name=f"match-game-{i}", daemon=True)
                   for i in range(self.settings.num_game_threads)]
        try:
            for t in threads:
                t.start()
            while any(t.is_alive() for t in threads):
                for t in threads:
                    t.join(TICK_SECONDS / len(threads))
                if on_tick is not None:
                    on_tick(self)
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if self._errors:
            raise self._errors[0]
        return self.results

    @property
    def stopped(self) -> bool:
        return self._stop.is_set()


class MatchNetworks:
    """Each distinct model file of the bots loaded once, with its shared batching evaluator."""

    def __init__(self, settings: MatchSettings, nn_settings, cpu_threads: int = 1, loader=None):
        from katacli.nn.torch_model import load_model
        from katacli.selfplay.model_pool import ModelManager

        self.nets: dict[str, Optional[NetEvaluator]] = {}
        self.managers = []
        load = loader or load_model
        used = {i for pair in settings.pairings for i in pair}
        for bot in settings.bots:
            if bot.index not in used or bot.model in self.nets:
                continue
            if bot.uses_rollouts:
                self.nets[bot.model] = None
                continue
            manager = ModelManager(nn_settings, cpu_threads=cpu_threads)
            handle = manager.install(Path(bot.model).name, load(Path(bot.model)))
            self.managers.append(manager)
            self.nets[bot.model] = handle.net

    @property
    def client_contexts(self) -> list:
        return [m.clients.registered for m in self.managers]

    def close(self) -> None:
        for manager in self.managers:
            manager.close()
