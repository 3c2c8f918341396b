"""Search a position: ``result = analyze(game, net, visits=200)``.

This is what one query of ``kata analysis`` does (same parameters, defaults and search), returned as
Python objects instead of JSON. Plain names are for the side to move (``winrate``, ``score_lead``,
``ownership``), ``white_`` names for White, so nothing depends on a reportAnalysisWinratesAs setting.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Optional

import numpy as np

from katacli.api.args import ConfigLike, build_config, color_name
from katacli.game.coords import format_vertex

if TYPE_CHECKING:
    from katacli.api.game import Game
    from katacli.api.network import Network
    from katacli.search.params import SearchParams

# Visits per search when neither the call nor the config sets a limit (KataGo's own default is 2^50,
# a search that never ends).
DEFAULT_VISITS = 200
# Moves after the first one in each PV, as KataGo's analysisPVLen.
DEFAULT_PV_LENGTH = 15
MODE = "analysis"
# best_move when there is no move at all (NoGo, where passing is not allowed): the side to move has lost.
NO_MOVE = "resign"
# Keys any of which means the config chose its own search limit.
LIMIT_KEYS = ("maxVisits", "maxPlayouts", "maxTime")


@dataclass(frozen=True)
class MoveStats:
    """One candidate move of a search. Plain names: the side to move's view; ``white_``: White's.

    >>> from katacli.api.game import Game
    >>> top = analyze(Game(5), visits=30, seed=1).moves[0]
    >>> top.order, top.pv[0] == top.move, top.human_prior is None   # no human_net
    (0, True, True)
    """

    move: str                 # GTP vertex, "pass"
    order: int                # 0 for the move the search would play
    visits: int
    winrate: float
    white_winrate: float
    score_lead: float
    white_score_lead: float
    score_stdev: float
    prior: float              # the network's policy for the move (or the rollout prior)
    lcb: float                # lower confidence bound of winrate
    utility: float
    pv: list                  # principal variation starting with this move, GTP vertices
    human_prior: Optional[float] = None  # the human-SL net's policy for the move (human_net= and a profile)

    def as_row(self) -> dict:
        """The fields as a flat dict (PV joined by spaces), e.g. for csv.DictWriter."""
        row = {name: getattr(self, name) for name in self.__dataclass_fields__}
        row["pv"] = " ".join(self.pv)
        return row


@dataclass(frozen=True)
class AnalysisResult:
    """What a search found. Board arrays are [row, column], row 0 the top row (as :attr:`Game.board`).

    >>> from katacli.api.game import Game
    >>> result = analyze(Game(5).play("C3"), visits=30, seed=1)
    >>> result.next_player, result.best_move == result.moves[0].move, result.policy is None  # no network
    ('W', True, True)
    >>> abs(result.black_winrate - (1 - result.white_winrate)) < 1e-9
    True
    """

    next_player: str          # "B" or "W": whose move was searched
    visits: int               # root visits
    best_move: str            # the move the search would play (GTP vertex)
    winrate: float            # side to move's winning chance after the search
    white_winrate: float
    score_lead: float         # points the side to move leads by
    white_score_lead: float
    score_stdev: float
    pv: list                  # principal variation, GTP vertices
    moves: list               # MoveStats, best first
    ownership: Optional[np.ndarray] = None        # +1: the side to move owns the point
    white_ownership: Optional[np.ndarray] = None
    policy: Optional[np.ndarray] = None           # the network's raw policy at the root (None for rollouts)
    human_policy: Optional[np.ndarray] = None     # the human-SL net's, same layout (human_net= and a profile)
    raw: Any = None           # katacli.search.SearchAnalysis, White's view, internal coordinates

    @property
    def black_winrate(self) -> float:
        """Black's winning chance."""
        return 1.0 - self.white_winrate

    def table(self) -> list[dict]:
        """One dict per candidate move (see :meth:`MoveStats.as_row`)."""
        return [move.as_row() for move in self.moves]


def checked_visits(visits) -> int:
    """A visit limit given to the API: a positive whole number (ValueError otherwise).

    >>> checked_visits(200)
    200
    >>> checked_visits(0)
    Traceback (most recent call last):
    ValueError: visits must be a positive whole number, got 0
    """
    if isinstance(visits, bool) or not isinstance(visits, int) or visits < 1:
        raise ValueError(f"visits must be a positive whole number, got {visits!r}")
    return visits


def search_params(config: ConfigLike = None, visits: int | None = None, mode: str = MODE,
                  human_model: bool = False, **settings: Any) -> "SearchParams":
    """KataGo search parameters: ``mode``'s defaults, then ``config`` (.cfg path, Config or dict), then
    ``settings`` (KataGo key names or snake_case), with ``visits`` as maxVisits. ``human_model``:
    a human-SL net will be searched beside the main one (the humanSL* keys are allowed).

    Without any limit, searches stop at :data:`DEFAULT_VISITS` visits instead of KataGo's endless default.

    >>> params = search_params(visits=50, cpuct_exploration=1.5, rootNoiseEnabled=False)
    >>> params.max_visits, params.cpuct_exploration, params.root_noise_enabled
    (50, 1.5, False)
    >>> search_params(maxVisitz=10)
    Traceback (most recent call last):
    ...
    katacli.api.args.SettingError: unknown setting 'maxVisitz': not a KataGo config key (did you mean 'maxVisits'?)
    """
    from katacli.search.params import SearchParams

    cfg = build_config(config, settings, mode)
    cfg.apply_mode_aliases(mode)
    params = SearchParams.from_config(cfg, mode, has_human_model=human_model)
    if visits is not None:
        return params.replace(max_visits=checked_visits(visits))
    if not any(key in cfg for key in LIMIT_KEYS):
        params = params.replace(max_visits=DEFAULT_VISITS)
    return params


def analyze(game: "Game", net: "Network | None" = None, *, visits: int | None = None, config: ConfigLike = None,
            ownership: bool = True, pv_length: int = DEFAULT_PV_LENGTH, seed: int | None = None,
            human_net: "Network | None" = None, **settings: Any) -> AnalysisResult:
    """Search ``game``'s current position for the side to move, as one ``kata analysis`` query would.

    ``net``: a :class:`~katacli.api.network.Network`, or None to evaluate by random playouts (also how
    NoGo is searched). ``visits``: the visit limit (default: the config's, else :data:`DEFAULT_VISITS`).
    ``config`` and ``settings``: analysis-engine settings (see :func:`search_params`). ``seed`` fixes the
    search's random choices. ``human_net``: a human-SL Network (KataGo's -human-model); with the
    ``humanSLProfile`` setting (e.g. ``humanSLProfile="rank_5k"``) the result carries its policy
    (``result.human_policy``, [row, column] like ``policy``; ``move.human_prior`` for each of
    ``result.moves``) and the humanSL* settings steer the search.

    >>> from katacli.api.game import Game
    >>> game = Game(5).play_moves(["C3", "B3"])
    >>> result = analyze(game, visits=100, seed=7)          # no network: random playouts
    >>> result.next_player, result.visits, result.best_move in game.legal_moves()
    ('B', 100, True)
    >>> round(result.winrate + result.white_winrate, 6)      # Black to move: the two views add up to 1
    1.0
    >>> result.ownership.shape
    (5, 5)
    """
    from katacli.api.network import as_evaluator
    from katacli.engine_common import network_supported_rules
    from katacli.search import Searcher

    from katacli.api.game import Game

    if not isinstance(game, Game):
        raise TypeError(f"analyze() takes a katacli.Game, got {type(game).__name__}")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)):
        raise TypeError(f"seed must be a whole number or None, got {seed!r}")
    params = search_params(config, visits, human_model=human_net is not None, **settings)
    evaluator = None if game.nogo else as_evaluator(net)
    human_evaluator = None if evaluator is None else as_evaluator(human_net)
    if evaluator is not None and network_supported_rules(game.rules) != game.rules:
        game = game.copy().set_rules(network_supported_rules(game.rules))  # as kata analysis does, with a warning
    searcher = Searcher(game.session.state, params, evaluator, nogo=game.nogo, keep_ownership=ownership, seed=seed,
                        human_evaluator=human_evaluator)
    searcher.run()
    snapshot = searcher.analysis(max_pv_len=pv_length + 1, include_ownership=ownership,
                                 include_policy=evaluator is not None)
    return result_of(snapshot, game.session.state, pv_length=pv_length, prevent_encore=game.session.prevent_encore)


def result_of(snapshot, state, *, pv_length: int = DEFAULT_PV_LENGTH, prevent_encore: bool = True) -> AnalysisResult:
    """An :class:`AnalysisResult` from a search snapshot (a SearchAnalysis) of position ``state``.

    >>> from katacli.api.game import Game
    >>> from katacli.search import Searcher
    >>> game = Game(5)
    >>> searcher = Searcher(game.state, search_params(visits=20), None, seed=1)
    >>> searcher.run().visits
    20
    >>> result_of(searcher.analysis(), game.state).visits
    20
    """
    from katacli.analysis.responses import pv_length_up_to_phase_end

    if snapshot.root is None:
        raise RuntimeError("the search has no results (it was stopped before its first visit)")
    x_size, y_size = snapshot.x_size, snapshot.y_size
    mine, white = snapshot.oriented(None), snapshot.oriented("W")

    def vertices(pv) -> list:
        return [format_vertex(p, x_size, y_size) for p in pv[:pv_length_up_to_phase_end(state, pv, prevent_encore)]]

    moves = [MoveStats(move=format_vertex(m.move, x_size, y_size), order=m.order, visits=m.visits,
                       winrate=m.winrate, white_winrate=w.winrate, score_lead=m.score_lead,
                       white_score_lead=w.score_lead, score_stdev=m.score_stdev, prior=m.prior, lcb=m.lcb,
                       utility=m.utility, pv=vertices(m.pv), human_prior=m.human_prior)
             for m, w in zip(mine.moves, white.moves)]

    def board(values) -> Optional[np.ndarray]:
        return None if values is None else np.asarray(values[:x_size * y_size], np.float32).reshape(y_size, x_size)

    return AnalysisResult(
        next_player=color_name(snapshot.root_player), visits=mine.root.visits,
        best_move=moves[0].move if moves else NO_MOVE,
        winrate=mine.root.winrate, white_winrate=white.root.winrate,
        score_lead=mine.root.score_lead, white_score_lead=white.root.score_lead, score_stdev=mine.root.score_stdev,
        pv=moves[0].pv if moves else [], moves=moves,
        ownership=board(mine.ownership), white_ownership=board(white.ownership),
        policy=board(snapshot.policy), human_policy=board(snapshot.human_policy), raw=snapshot,
    )
