"""The adapter between the GTP engine and the search (:mod:`katacli.search`).

Everything the GTP layer needs from a search goes through :class:`Bot`:
``genmove`` (also for kata-search and genmove_analyze), ``analyze`` (streaming
until stopped), ``ponder``, ``estimate_lead`` / ``estimate_ownership`` (for
final_score and final_status_list), ``benchmark`` and ``clear_cache``. It also
holds the small move-level policies that need no search (cleanup before pass,
free handicap placement).
"""
from __future__ import annotations

import random
import threading

import numpy as np

from katacli.config import Enabled
from katacli.engine.errors import GtpError
from katacli.engine.search_types import SearchOutcome, SearchRequest, SnapshotCallback
from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import ScoringRule

# place_free_handicap samples the network's policy at this temperature (KataGo's playExtraBlack).
FREE_HANDICAP_TEMPERATURE = 0.25
# Without a network, free handicap stones keep this many lines free at the edge: (smallest board side, margin).
FREE_HANDICAP_EDGE_MARGINS = ((13, 3), (7, 2), (4, 1), (0, 0))


class Bot:
    """Search-independent parts of the adapter; subclasses add the searches."""

    def __init__(self, evaluator, engine):
        self.evaluator = evaluator
        self.engine = engine
        self.rng = random.Random(engine.options.seed)

    # ------------------------------------------------------------------ searches (subclasses)
    def genmove(self, request: SearchRequest, stop: threading.Event,
                on_snapshot: SnapshotCallback | None = None) -> SearchOutcome:
        raise GtpError("no search engine is available in this build")

    def analyze(self, request: SearchRequest, stop: threading.Event, on_snapshot: SnapshotCallback) -> None:
        raise GtpError("no search engine is available in this build")

    def ponder(self, request: SearchRequest, stop: threading.Event) -> None:
        return None

    def estimate_lead(self, state, pla: int, visits: int, stop: threading.Event) -> float:
        raise GtpError("no search engine is available in this build")

    def estimate_ownership(self, state, pla: int, visits: int, stop: threading.Event):
        raise GtpError("no search engine is available in this build")

    def benchmark(self, params, visits: int, board_len: int, stop: threading.Event) -> str:
        raise GtpError("no search engine is available in this build")

    def clear_cache(self) -> None:
        cache = getattr(self.evaluator, "cache", None)
        if cache is not None:
            cache.clear()

    def on_new_board(self, x_size: int, y_size: int) -> None:
        """The board size changed (a search tree for the old size is useless)."""

    # ------------------------------------------------------------------ move policies
    def adjust_pass(self, state, pla: int, move):
        """KataGo's cleanupBeforePass: under area rules that want dead stones captured, rather than
        passing, play inside our own pass-alive area next to an opponent stone while there is one."""
        settings = self.engine.settings
        rules = self.engine.rules
        if move is not None or self.engine.nogo or settings.friendly_pass == Enabled.TRUE:
            return move
        if settings.cleanup_before_pass == Enabled.AUTO:
            wanted = not rules.friendly_pass_ok and rules.scoring == ScoringRule.AREA
        else:
            wanted = settings.cleanup_before_pass == Enabled.TRUE
        if not wanted or rules.scoring != ScoringRule.AREA or rules.has_button:
            return move
        from cython_ext.area import area_map

        board = state.board()
        safe = area_map(board, False, True, False, rules.multi_stone_suicide_legal)
        colors = state.colors()
        opp = BLACK + WHITE - pla
        for y in range(state.y_size):
            for x in range(state.x_size):
                if colors[y][x] != 0 or safe[y][x] != pla:
                    continue
                near_opp = any(0 <= nx < state.x_size and 0 <= ny < state.y_size and colors[ny][nx] == opp
                               for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)))
                if near_opp and state.is_legal((x, y), pla):
                    return (x, y)
        return move

    def choose_free_handicap(self, state, count: int) -> list[tuple[int, int]]:
        """Points for place_free_handicap: sampled from the network's policy, else spread evenly."""
        if self.evaluator is not None:
            return self._policy_handicap(state, count)
        return self._spread_handicap(state.x_size, state.y_size, count)

    def _policy_handicap(self, state, count: int) -> list[tuple[int, int]]:
        from katacli.engine.rawnn import evaluate_raw

        state = state.copy()
        points: list[tuple[int, int]] = []
        for _ in range(count):
            state.reset_history_keep_board(BLACK)
            out = evaluate_raw(self.evaluator, state, BLACK, [self.rng.randrange(8)], 0.0)[0]
            policy = np.asarray(out.policy, dtype=np.float64)
            legal = policy > 0
            if not legal.any():
                break
            weights = np.where(legal, np.power(np.where(legal, policy, 1.0), 1.0 / FREE_HANDICAP_TEMPERATURE), 0.0)
            index = self.rng.choices(range(len(weights)), weights=weights.tolist())[0]
            xy = (index % state.x_size, index // state.x_size)
            state.play(xy, BLACK)
            points.append(xy)
        return points

    @staticmethod
    def _spread_handicap(x_size: int, y_size: int, count: int) -> list[tuple[int, int]]:
        """Farthest-point placement, away from the edge: star-point-like spacing without a network."""
        margin = next(m for min_len, m in FREE_HANDICAP_EDGE_MARGINS if min(x_size, y_size) >= min_len)
        candidates = [(x, y) for y in range(margin, y_size - margin) for x in range(margin, x_size - margin)]
        chosen: list[tuple[int, int]] = []
        while candidates and len(chosen) < count:
            def spread(p):
                if not chosen:  # start in the upper right corner, as handicap stones usually do
                    return (p[0] - p[1], 0)
                return (min((p[0] - q[0]) ** 2 + (p[1] - q[1]) ** 2 for q in chosen), -p[1] * x_size - p[0])
            best = max(candidates, key=spread)
            chosen.append(best)
            candidates.remove(best)
        return chosen


def make_bot(evaluator, engine) -> Bot:
    """The search adapter for this engine: network search, or rollouts without a network."""
    return Bot(evaluator, engine)
