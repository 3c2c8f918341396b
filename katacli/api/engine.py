"""A playing engine for Python: ``engine = Engine(net, visits=200)``, ``engine.play("B", "E5")``,
``engine.genmove()``, ``engine.analyze()``.

:class:`Engine` is ``kata gtp`` without the text protocol: it holds the same
:class:`~katacli.gtp.engine.GtpEngine` and runs the same command handlers in-process, so moves,
rules, komi, resignation, pass handling and the search tree are kept exactly as the GTP engine keeps
them. The tree is reused from one search to the next while the game goes on.
"""
from __future__ import annotations

import io
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from katacli.api.analysis import (
    DEFAULT_PV_LENGTH, DEFAULT_VISITS, LIMIT_KEYS, AnalysisResult, checked_visits, result_of,
)
from katacli.api.args import ColorLike, ConfigLike, build_config, color_name, to_color, to_point
from katacli.api.game import Game, board_dimensions
from katacli.game.coords import WHITE
from katacli.game.nogo import is_nogo_rules_name
from katacli.game.rules import Rules

if TYPE_CHECKING:
    from katacli.api.network import Network

MODE = "gtp"
# What genmove answers when the engine gives up.
RESIGN = "resign"
# How GTP play refuses a move the rules forbid.
ILLEGAL_MOVE_GTP_ERROR = "illegal move"


class EngineError(ValueError):
    """A request the engine refused that is no move mistake (``undo`` with nothing to undo, a ``genmove``
    or ``set_param`` the engine cannot do); the message is the GTP error text. Moves raise what
    :meth:`Game.play` raises (CoordError, IllegalMoveError)."""


@dataclass(frozen=True)
class MoveChoice:
    """A move chosen by :meth:`Engine.genmove`. Plain names are the mover's view, ``white_`` names White's.

    >>> choice = Engine(None, size=5, visits=30, seed=1).genmove("W", play=False)
    >>> choice.color, choice.resigned, choice.visits >= 30
    ('W', False, True)
    """

    color: str                # "B" or "W": who moved
    move: str                 # GTP vertex, "pass" or "resign"
    winrate: float            # the mover's winning chance according to the search
    white_winrate: float
    score_lead: float         # points the mover leads by
    white_score_lead: float
    visits: int               # root visits of the search (reused ones included)

    @property
    def resigned(self) -> bool:
        """True when the engine resigned."""
        return self.move == RESIGN


class Engine:
    """A game and a search kept in step, as in ``kata gtp``.

    >>> engine = Engine(None, size=5, komi=0.5, visits=60, seed=3)   # no network: random playouts
    >>> engine.play("B", "C3").play("W", "B3").game.moves
    [('B', 'C3'), ('W', 'B3')]
    >>> choice = engine.genmove()            # Black to move: search, choose and play
    >>> choice.color, len(engine.game.moves), 0.0 <= choice.winrate <= 1.0
    ('B', 3, True)
    >>> engine.analyze(visits=40).next_player
    'W'
    >>> engine.play("W", "C3")
    Traceback (most recent call last):
    ...
    katacli._core.game_state.IllegalMoveError: illegal move: W C3 (the point is taken, or it is suicide)
    """

    def __init__(self, net: "Network | None" = None, config: ConfigLike = None, *, size: Union[int, tuple] = 19,
                 rules: Union[str, Rules, None] = None, komi: float | None = None, visits: int | None = None,
                 seed: Union[int, str, None] = None, human_net: "Network | None" = None, **settings: Any) -> None:
        """``net``: a Network, or None for random playouts. ``human_net``: a human-SL Network beside it
        (KataGo's -human-model; set humanSLProfile and the humanSL* keys to use it). ``config``: a GTP
        .cfg path, Config or dict;
        ``settings``: more GTP config keys (KataGo names or snake_case). ``visits`` is maxVisits; without
        any limit the engine searches :data:`~katacli.api.analysis.DEFAULT_VISITS` visits per move.
        ``rules`` ("japanese", "nogo", ...) and ``komi`` override the config's. ``seed`` makes the
        engine's random choices repeatable."""
        from katacli.engine_log import EngineLog
        from katacli.gtp.engine import EngineOptions, GtpEngine, ModelLoader
        from katacli.gtp.protocol import ResponseWriter
        from katacli.gtp.runtime_params import GtpRuntimeParams
        from katacli.setup.engine_settings import GtpSettings

        from katacli.api.network import as_evaluator

        evaluator = as_evaluator(net)
        cfg = build_config(config, settings, MODE)
        if visits is not None:
            cfg.apply_overrides({"maxVisits": str(checked_visits(visits))}, origin="Python API")
        elif not any(key in cfg for key in LIMIT_KEYS):
            cfg.apply_overrides({"maxVisits": str(DEFAULT_VISITS)}, origin="Python API default")
        from katacli.gtp.startup import extract_nogo  # `rules = nogo` in a config, as kata gtp reads it

        nogo = extract_nogo(cfg) or isinstance(rules, str) and is_nogo_rules_name(rules)
        gtp_settings = GtpSettings.from_config(cfg)
        human_evaluator = as_evaluator(human_net)
        params = GtpRuntimeParams.from_config(cfg, has_human_model=human_evaluator is not None)
        options = EngineOptions(settings=gtp_settings, params=params, config=cfg,
                                model_path=None if net is None else net.name, nogo=nogo,
                                seed=self._seed_text(seed, gtp_settings),
                                human_model_path=None if human_net is None else human_net.name)
        loader = ModelLoader(None if evaluator is None else (lambda: evaluator))
        human_loader = ModelLoader(None if human_evaluator is None else (lambda: human_evaluator))
        # What kata gtp would tell its user on stderr ("Changed rules to ...") is kept for .messages instead.
        self._log_text = io.StringIO()
        self._gtp = GtpEngine(options, ResponseWriter(io.StringIO()), EngineLog(None, stderr=self._log_text), loader,
                              human_loader)
        self.net = net
        x_size, y_size = board_dimensions(size)
        self._run("rectangular_boardsize", x_size, y_size)
        if rules is not None and not nogo:
            text = rules if isinstance(rules, str) else rules.to_json_string()
            self._run("kata-set-rules", text)
            if komi is None:  # the rules' own komi, as Game(rules=...) takes it
                komi = Rules.parse(rules).komi if isinstance(rules, str) else rules.komi
        if komi is not None:
            self._run("komi", komi)

    @staticmethod
    def _seed_text(seed, gtp_settings) -> str | None:
        """The engine's seed: the argument, else the config's (searchRandSeed, forDeterministicTesting), as kata gtp."""
        from katacli.engine_common import DETERMINISTIC_SEED

        if seed is not None:
            return str(seed)
        return DETERMINISTIC_SEED if gtp_settings.for_deterministic_testing else gtp_settings.search_rand_seed

    # ------------------------------------------------------------------ the game
    @property
    def game(self) -> Game:
        """A copy of the current game."""
        return Game._from_session(self._gtp.session, self._gtp.nogo).copy()

    @property
    def messages(self) -> list[str]:
        """What the engine reported so far (``kata gtp`` prints these on stderr), e.g. "Changed rules to ..."."""
        return self._log_text.getvalue().splitlines()

    @property
    def next_player(self) -> str:
        """"B" or "W": the side to move."""
        return color_name(self._gtp.session.next_player)

    def play(self, color: ColorLike, vertex: str | None = None) -> "Engine":
        """Play a move (``play("B", "E5")``, or ``play("E5")`` for the side to move). Raises what
        :meth:`Game.play` raises, with the same messages: CoordError for a colour or vertex that is not
        one on this board, IllegalMoveError (game unchanged) for a move the rules refuse."""
        from katacli.api.game import illegal_move_error

        if vertex is None:
            color, vertex = self._gtp.session.next_player, color
        pla = to_color(color)
        session = self._gtp.session
        to_point(vertex, session.x_size, session.y_size)  # CoordError, worded as Game's
        try:
            self._run("play", color_name(pla), vertex)
        except EngineError as exc:  # the GTP handler refused a move on the board: the rules forbid it
            if not str(exc).startswith(ILLEGAL_MOVE_GTP_ERROR):
                raise
            raise illegal_move_error(pla, vertex, nogo=self._gtp.nogo) from None
        return self

    def undo(self) -> "Engine":
        """Take back the last move (EngineError when there is none)."""
        self._run("undo")
        return self

    def clear(self) -> "Engine":
        """An empty board (same size, rules and komi)."""
        self._run("clear_board")
        return self

    def set_game(self, game: Game) -> "Engine":
        """Continue from ``game`` (a copy is taken): its size, rules, komi, stones and moves."""
        from katacli.engine_common import network_supported_rules

        gtp = self._gtp
        rules = network_supported_rules(game.rules) if self.net is not None else game.rules
        session = gtp.make_session(game.x_size, game.y_size, rules)
        session.replace_game(game.session.initial_board, game.session.initial_player, game.session.moves)
        if (game.x_size, game.y_size) != (gtp.session.x_size, gtp.session.y_size):
            gtp.bot.on_new_board(game.x_size, game.y_size)
        gtp.session = session
        gtp.nogo = game.nogo
        gtp.new_game_position()
        return self

    def load_sgf(self, source, move_number: int | None = None) -> "Engine":
        """Continue from an SGF file or text (read as :meth:`Game.from_sgf` reads it), as ``kata gtp``'s loadsgf:
        the record's rules (this engine's when it has none; as the network can take them), and its log lines
        in :attr:`messages`. Raises SgfError for a record that cannot be set up, the game unchanged."""
        from katacli.api.game import _read_record
        from katacli.game.rules import RulesError
        from katacli.game.session import SessionError
        from katacli.game.sgf import SgfError
        from katacli.gtp.handlers_game import load_sgf_game

        record = _read_record(source)
        try:
            load_sgf_game(self._gtp, record, move_number, record.file_name)
        except (SessionError, RulesError) as exc:
            raise SgfError(str(exc)) from None
        return self

    def final_score(self) -> str:
        """KataGo's final_score answer for the current position, e.g. "B+3.5" or "0"."""
        return self._run("final_score")

    def set_param(self, key: str, value: Any) -> "Engine":
        """Change a search parameter between moves, as kata-set-param ("maxVisits", 400)."""
        from katacli.api.args import setting_key

        self._run("kata-set-param", setting_key(key), value)
        return self

    # ------------------------------------------------------------------ searching
    def genmove(self, color: ColorLike | None = None, *, play: bool = True) -> MoveChoice:
        """Search for ``color`` (default: the side to move) and choose a move as ``kata gtp``'s genmove does
        (chosen-move temperature, resignation if allowed, cleanup before passing); ``play=False`` leaves the
        game unchanged (kata-genmove_analyze without playing)."""
        from katacli.gtp.errors import GtpError
        from katacli.gtp.handlers_search import generate_move

        pla = self._gtp.session.next_player if color is None else to_color(color)
        try:
            text, _, outcome = generate_move(self._gtp, pla, play=play)
        except GtpError as exc:
            raise EngineError(str(exc)) from None
        white_winrate = 0.5 if outcome is None else 0.5 * (1.0 + outcome.win_loss)
        white_lead = 0.0 if outcome is None else outcome.lead
        sign = 1.0 if pla == WHITE else -1.0
        return MoveChoice(color=color_name(pla), move=text,
                          winrate=white_winrate if sign > 0 else 1.0 - white_winrate, white_winrate=white_winrate,
                          score_lead=sign * white_lead, white_score_lead=white_lead,
                          visits=0 if outcome is None else outcome.visits)

    def analyze(self, visits: int | None = None, color: ColorLike | None = None, *, ownership: bool = True,
                pv_length: int = DEFAULT_PV_LENGTH) -> AnalysisResult:
        """Search the current position (for ``color``, default the side to move) with the engine's analysis
        parameters, reusing the tree, and return what it found; the game is unchanged."""

        from katacli.gtp.analyze_info_lines import AnalyzeOptions
        from katacli.gtp.handlers_search import make_request

        gtp = self._gtp
        pla = gtp.session.next_player if color is None else to_color(color)
        params = gtp.params.analysis
        if visits is not None:
            params = params.replace(max_visits=checked_visits(visits))
        request = make_request(gtp, pla, params, AnalyzeOptions(ownership=ownership))
        request.pv_len = pv_length + 1
        snapshots: list = []
        gtp.run_in_worker(lambda stop: gtp.bot.genmove(request, stop, snapshots.append))
        if not snapshots:
            raise RuntimeError("the search has no results")
        return result_of(snapshots[-1], request.state, pv_length=pv_length,
                         prevent_encore=gtp.settings.prevent_cleanup_phase)

    # ------------------------------------------------------------------ plumbing
    def _run(self, name: str, *args: Any) -> str:
        """Run one GTP command's handler; its error becomes an EngineError with the GTP message."""
        from katacli.gtp.errors import GtpError
        from katacli.gtp.handlers import HANDLERS
        from katacli.gtp.protocol import Command

        command = Command(name, [str(a) for a in args])
        try:
            answer = HANDLERS[name](self._gtp, command)
        except GtpError as exc:
            raise EngineError(str(exc)) from None
        return answer or ""

    def to_sgf(self) -> str:
        """The game so far as SGF text."""
        return self.game.to_sgf()

    def __repr__(self) -> str:
        net = "rollouts" if self.net is None else self.net.name
        return f"Engine({net}, {self.game!r})"


__all__ = ["Engine", "EngineError", "MoveChoice"]
