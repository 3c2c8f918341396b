"""The GTP engine: game state, the command loop, and the background work (analysis, pondering).

:class:`GtpEngine` reads one line at a time. Any input line (even a blank one)
first stops what runs in the background: a running analysis gets its final
blank line, a cancellable search answers ``cancelled``, pondering stops. Then
the command is looked up in :data:`katacli.gtp.handlers.HANDLERS` and its
answer written as ``=ID text`` or ``?ID message``.

The network loads in a background thread (:class:`ModelLoader`) so that
``name``, ``version`` and ``protocol_version`` answer at once; every other
command waits for it. (``kata gtp`` goes further: it answers those before this
engine, the search and torch are even imported; see katacli.commands.gtp.)
"""
from __future__ import annotations

import threading
import traceback
from dataclasses import dataclass, field
from typing import Callable, TextIO

from katacli.engine_log import EngineLog
from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import Rules
from katacli.game.session import GameSession
from katacli.gtp.clock import quick_game
from katacli.gtp.errors import EngineStartupError, GtpError
from katacli.gtp.protocol import Command, EmptyCommand, ResponseWriter, clean_line, parse_command
from katacli.gtp.runtime_params import GtpRuntimeParams
from katacli.nn.human_profile import ProfileNotSetError
from katacli.search.timecontrol import TimeControls
from katacli.setup.engine_settings import GtpSettings

# How often a waiting main thread wakes up, so that Ctrl-C is noticed promptly.
WAIT_POLL_SECONDS = 0.1
DEFAULT_BOARD_LEN = 19


class ModelLoader:
    """Loads the network in a thread; :meth:`get` waits for it (None when playing without a network)."""

    def __init__(self, load: Callable[[], object] | None):
        self._result = None
        self._error: BaseException | None = None
        self._done = threading.Event()
        if load is None:
            self._done.set()
            return

        def run():
            try:
                self._result = load()
            except BaseException as exc:  # reported to the main thread by get()
                self._error = exc
            finally:
                self._done.set()

        threading.Thread(target=run, name="model-loader", daemon=True).start()

    @property
    def ready(self) -> bool:
        return self._done.is_set()

    def get(self):
        while not self._done.wait(WAIT_POLL_SECONDS):
            pass
        if self._error is not None:
            raise EngineStartupError(f"could not load the model: {self._error}")
        return self._result


@dataclass
class EngineOptions:
    """Everything the engine needs from the command line and config."""

    settings: GtpSettings
    params: GtpRuntimeParams
    config: object  # katacli.config.Config, for kata-set-param
    model_path: str | None = None
    human_model_path: str | None = None  # -human-model: a human-SL net beside the main one
    override_version: str | None = None
    nogo: bool = False
    seed: str | None = None
    # Builds the search adapter from the loaded evaluator (None: rollouts); see katacli.gtp.bot.
    make_bot: Callable | None = None
    # avoidSgfPattern* / autoAvoidRepeat* (katacli.gtp.avoid_patterns.GtpPatternAvoidance); None: off.
    avoid_patterns: object = None


@dataclass
class BackgroundTask:
    """Work that runs while the engine reads the next line (analysis, cancellable search, pondering)."""

    thread: threading.Thread
    stop_event: threading.Event
    done: threading.Event  # set by the thread as it ends (see run_in_worker on why not Thread.join)
    on_stopped: Callable[[], None] | None = None  # e.g. print the blank line that ends an analysis
    pondering: bool = False   # a ponder, which commands that leave the game and search alone do not stop

    def stop(self) -> None:
        self.stop_event.set()
        _wait_through_interrupts(self.done)
        if self.on_stopped is not None:
            self.on_stopped()


@dataclass
class GameStats:
    """What the engine remembers about its own searches in the current game."""

    recent_win_loss: list[float] = field(default_factory=list)
    pda_for_white: float = 0.0
    last_search_factor: float = 1.0
    last_genmove_params: object = None  # the SearchParams of the last genmove (its dynamic PDA), for its log
    nn_counts_at_genmove: tuple = (0, 0)  # the network's (rows, batches) when it started (its log counts from there)


class GtpEngine:
    def __init__(self, options: EngineOptions, output: ResponseWriter, log: EngineLog,
                 model_loader: ModelLoader | None = None, human_model_loader: ModelLoader | None = None):
        self.options = options
        self.settings = options.settings
        self.params = options.params
        self.config = options.config
        self.out = output
        self.log = log
        self.loader = model_loader or ModelLoader(None)
        self.human_loader = human_model_loader or ModelLoader(None)
        self.nogo = options.nogo
        x_size, y_size = self.settings.default_board_size or (DEFAULT_BOARD_LEN, DEFAULT_BOARD_LEN)
        self.session = self.make_session(x_size, y_size, self.settings.rules)
        # With no search limit configured at all, KataGo assumes a quick time control.
        clock = TimeControls.unlimited() if self.settings.has_search_limit else quick_game()
        self.clocks = {BLACK: clock, WHITE: clock}
        self.stats = GameStats()
        self.genmove_time_sum = 0.0
        self.background: BackgroundTask | None = None
        self._bot = None
        self.quit_requested = False
        self.ponder_requested = False
        from katacli.gtp.avoid_patterns import GtpPatternAvoidance

        self.avoid_patterns = options.avoid_patterns or GtpPatternAvoidance.off()

    # ------------------------------------------------------------------ model and search
    @property
    def evaluator(self):
        """The loaded network, or None without one (waits while it loads)."""
        return self.loader.get()

    @property
    def human_evaluator(self):
        """The -human-model network, or None without one (waits while it loads)."""
        return self.human_loader.get()

    @property
    def bot(self):
        """The search adapter, created on first use."""
        if self._bot is None:
            make_bot = self.options.make_bot
            if make_bot is None:
                from katacli.gtp.bot import make_bot
            self._bot = make_bot(self.evaluator, self)
        return self._bot

    @property
    def has_bot(self) -> bool:
        """Whether the search adapter exists (a search has been asked for)."""
        return self._bot is not None

    def make_session(self, x_size: int, y_size: int, rules: Rules) -> GameSession:
        """A new game configured like this engine's (cleanup phase, handicap convention)."""
        return GameSession(
            x_size=x_size, y_size=y_size, rules=rules, prevent_encore=self.settings.prevent_cleanup_phase,
            assume_multiple_starting_black_moves_are_handicap=(
                self.settings.assume_multiple_starting_black_moves_are_handicap),
        )

    @property
    def rules(self) -> Rules:
        return self.session.rules

    def new_game_position(self) -> None:
        """Forget per-game search statistics and the search tree (KataGo does both whenever the position
        is replaced: set-up commands, undo, rule changes)."""
        self.stats = GameStats()
        if self._bot is not None:
            self._bot.forget_tree()

    # ------------------------------------------------------------------ background work
    def start_background(self, target: Callable[[threading.Event], None],
                         on_stopped: Callable[[], None] | None = None, pondering: bool = False) -> None:
        stop_event, done = threading.Event(), threading.Event()
        thread = threading.Thread(target=self._guarded(target, done), args=(stop_event,), name="gtp-background",
                                  daemon=True)
        self.background = BackgroundTask(thread, stop_event, done, on_stopped, pondering)
        thread.start()

    def _guarded(self, target, done: threading.Event):
        def run(stop_event):
            try:
                target(stop_event)
            except ProfileNotSetError as exc:   # a setting the user must give, not a bug
                self.log.info(f"Error in background search: {exc}")
            except Exception:  # a background failure must not kill the engine
                self.log.info("Error in background search:\n" + traceback.format_exc())
            finally:
                done.set()
        return run

    def stop_background(self) -> None:
        task, self.background = self.background, None
        if task is not None:
            task.stop()

    @property
    def pondering(self) -> bool:
        """Whether a ponder is still searching (it ends by itself at maxTimePondering)."""
        task = self.background
        return task is not None and task.pondering and not task.done.is_set()

    def _keeps_pondering(self, command: Command | None) -> bool:
        """Whether this line (its command, None for an empty or id-only line) leaves a running ponder alone.
        KataGo stops its search only for commands that change the game or search with it: a GUI's name,
        showboard or time_left during the opponent's turn must not throw the pondering away (analysis and
        cancellable searches stop at any line)."""
        from katacli.gtp.handlers import HANDLERS, KEEP_PONDERING

        if not self.pondering:
            return False
        return command is None or command.name in KEEP_PONDERING or command.name not in HANDLERS

    def run_in_worker(self, target: Callable[[threading.Event], object]):
        """Run a blocking search in a worker thread so that Ctrl-C reaches the main thread meanwhile."""
        stop_event, done = threading.Event(), threading.Event()
        box: dict = {}

        def run():
            try:
                box["value"] = target(stop_event)
            except BaseException as exc:
                box["error"] = exc
            finally:
                done.set()

        # Waits on our own event, not Thread.join: Python 3.11's join, interrupted by Ctrl-C, can mark a
        # running thread as finished, and a process that then exits with the search still inside torch
        # aborts ("terminate called without an active exception").
        threading.Thread(target=run, name="gtp-search", daemon=True).start()
        try:
            while not done.wait(WAIT_POLL_SECONDS):
                pass
        except KeyboardInterrupt:
            stop_event.set()
            _wait_through_interrupts(done)
            raise
        if "error" in box:
            raise box["error"]
        return box.get("value")

    # ------------------------------------------------------------------ the loop
    def run(self, stream: TextIO) -> None:
        """Serve commands from ``stream`` until ``quit`` or end of input (for embedding the engine;
        ``kata gtp`` has its own loop that starts answering before the engine exists)."""
        try:
            while not self.quit_requested:
                raw = stream.readline()
                if not raw:
                    break
                self.handle_line(raw)
        finally:
            self.stop_background()
            self.save_avoid_patterns(force=True)

    def save_avoid_patterns(self, force: bool = False) -> None:
        """autoAvoidRepeat: write the recorded genmoves once a chunk is full (always with force)."""
        self.avoid_patterns.maybe_save(force, self.log.write, self.log.info)

    def handle_line(self, raw: str) -> None:
        line = clean_line(raw)
        command, empty = None, None
        if line:
            try:
                command = parse_command(line)
            except EmptyCommand as exc:
                empty = exc
        if not self._keeps_pondering(command):
            self.stop_background()
        if not line:
            return
        if self.settings.log_all_gtp_communication:
            self.log.write(f"Controller: {line}")
        if empty is not None:
            self.out.response(empty.command_id, str(empty), is_error=True)
            return
        self.execute(command)

    def execute(self, command: Command) -> None:
        from katacli.gtp.handlers import HANDLERS, NEEDS_NO_MODEL

        handler = HANDLERS.get(command.name)
        if handler is None:
            self.out.response(command.id, "unknown command", is_error=True)
            return
        self.ponder_requested = False  # handlers set it where KataGo starts pondering afterwards
        try:
            if command.name not in NEEDS_NO_MODEL:
                self.loader.get()
                self.human_loader.get()
            text = handler(self, command)
        except GtpError as exc:
            if not getattr(exc, "response_ended", False):
                self.out.response(command.id, str(exc), is_error=True)
            self._maybe_ponder()   # KataGo ponders on after an illegal play too
            return
        except (EngineStartupError, KeyboardInterrupt):
            raise
        except ProfileNotSetError as exc:   # a human SL net without humanSLProfile: kata-set-param can set it
            self.out.response(command.id, str(exc), is_error=True)
            return
        except Exception as exc:  # a bug must not take the engine down with it
            self.log.info(f"Internal error in '{command.name}':\n{traceback.format_exc()}")
            self.out.response(command.id, f"internal error: {exc}", is_error=True)
            return
        if text is not None:
            self.out.response(command.id, text)
        self._maybe_ponder()

    def _maybe_ponder(self) -> None:
        """Ponder after a command that asked for it (KataGo's maybeStartPondering), unless already pondering."""
        if self.ponder_requested and not self.quit_requested and self.params.pondering_enabled and not self.pondering:
            from katacli.gtp.handlers_search import start_pondering

            start_pondering(self)


def _wait_through_interrupts(done: threading.Event) -> None:
    """Wait for ``done`` even if Ctrl-C is pressed again meanwhile (the worker has been told to stop)."""
    while True:
        try:
            if done.wait(WAIT_POLL_SECONDS):
                return
        except KeyboardInterrupt:
            continue
