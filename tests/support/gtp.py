"""Helpers for the `kata gtp` tests: building in-process engines, a scripted search, shared models."""
from __future__ import annotations

import io
import sys
import threading
from functools import lru_cache

import numpy as np
import pytest

from katacli.gtp.bot import Bot
from katacli.gtp.engine import ModelLoader
from katacli.gtp.protocol import EmptyCommand, clean_line, parse_command
from katacli.gtp.search_types import SearchOutcome
from katacli.gtp.startup import build_engine
from katacli.search.results import MoveInfo, RootInfo, SearchAnalysis

# Processes started by the tests import the same katacli as the tests: conftest.py sets PYTHONPATH.
from support.paths import MODELS, REPO, SHARED, TRANSCRIPTS, model_path  # noqa: F401  (used by the gtp tests)

ANALYZE_COMMANDS = ("analyze", "lz-analyze", "kata-analyze")
CANCELLABLE_COMMANDS = ("kata-search_cancellable", "kata-search_analyze_cancellable")
# Wait at most this long for a background search to report (the scripted bot reports at once).
REPORT_TIMEOUT_SECONDS = 10.0


@lru_cache(maxsize=None)
def load_evaluator(name: str):
    torch = pytest.importorskip("torch")
    from katacli.nn.evaluator import NNEvaluator

    torch.set_num_threads(1)
    return NNEvaluator.from_file(model_path(name), device="cpu", default_symmetry=0)


class ScriptedBot(Bot):
    """A stand-in search with fixed, easily checked numbers.

    It "likes" the legal points nearest the centre: genmove plays the nearest
    (ties: top row first, then left), analysis reports the two nearest with
    fixed statistics and signals :attr:`reported` after its first report.
    """

    def __init__(self, evaluator, engine):
        super().__init__(evaluator, engine)
        self.reported = threading.Event()
        self.requests = []

    @staticmethod
    def ranked_moves(state, pla):
        cx, cy = (state.x_size - 1) / 2, (state.y_size - 1) / 2
        points = [p for p in state.legal_moves(pla) if p is not None]
        return sorted(points, key=lambda p: ((p[0] - cx) ** 2 + (p[1] - cy) ** 2, p[1], p[0]))

    def snapshot(self, request) -> SearchAnalysis:
        """Fixed numbers (White's view) for the two nearest points, with a two-move PV each."""
        state, area = request.state, request.state.x_size * request.state.y_size
        ranked = self.ranked_moves(state, request.pla)
        moves = []
        for order, move in enumerate(ranked[:2]):
            second = [p for p in ranked[:3] if p != move][:1]  # a plausible reply, for a two-move PV
            visits = 10 - 5 * order
            moves.append(MoveInfo(
                move=move, order=order, visits=visits, edge_visits=visits, weight=visits - 0.5,
                edge_weight=visits - 0.5, winrate=0.625 - 0.25 * order, lcb=0.6 - 0.25 * order,
                utility=0.3 - 0.5 * order, utility_lcb=0.2 - 0.5 * order, score_lead=2.0 - order,
                score_selfplay=1.5 - order, score_stdev=10.0, no_result=0.0, prior=0.4 - 0.1 * order,
                play_selection_value=visits, pv=[move] + second, pv_visits=[visits, 3], pv_edge_visits=[visits, 3],
                ownership=np.full(area, 0.5), ownership_stdev=np.full(area, 0.25)))
        root = RootInfo(visits=16, weight=15.5, winrate=0.5625, score_lead=1.75, score_selfplay=1.25,
                        score_stdev=11.0, utility=0.2, current_player="B" if request.pla == 1 else "W",
                        raw_st_wr_error=0.25, raw_st_score_error=3.0, raw_var_time_left=20.0)
        return SearchAnalysis(root=root, moves=moves, root_player=request.pla, x_size=state.x_size,
                              y_size=state.y_size, ownership=np.full(area, 0.5), ownership_stdev=np.full(area, 0.25))

    def genmove(self, request, stop, on_snapshot=None):
        self.requests.append(request)
        ranked = self.ranked_moves(request.state, request.pla)
        if on_snapshot is not None and request.report_interval is not None:
            on_snapshot(self.snapshot(request))  # the search reports once at the end
        return SearchOutcome(move=ranked[0] if ranked else None, win_loss=0.25, lead=2.0, visits=16, move_prior=0.4)

    def analyze(self, request, stop, on_snapshot):
        self.requests.append(request)
        on_snapshot(self.snapshot(request))
        self.reported.set()
        stop.wait()

    def ponder(self, request, stop):
        self.requests.append(request)
        stop.wait()

    def estimate_lead(self, state, pla, visits, stop):
        return 2.3

    def estimate_ownership(self, state, pla, visits, stop):
        return [1.0] * (state.x_size * state.y_size)


def make_engine(override: str = "", model: str | None = None, scripted: bool = True, config=None,
                human_model: str | None = None):
    """(engine, stdout buffer, stderr buffer) for an in-process engine (``human_model``: -human-model,
    a path under the shared models folder)."""
    out, err = io.StringIO(), io.StringIO()
    loader = human_loader = None
    model_file = human_file = None
    if model is not None:
        evaluator = load_evaluator(model)
        loader = ModelLoader(lambda: evaluator)
        model_file = str(model_path(model))
    if human_model is not None:
        human = load_evaluator(human_model)
        human_loader = ModelLoader(lambda: human)
        human_file = str(model_path(human_model))
    make_bot = ScriptedBot if scripted else None
    engine = build_engine(model_file, config, [override] if override else None, stdout=out, stderr=err,
                          loader=loader, make_bot=make_bot, human_model=human_file, human_loader=human_loader)
    return engine, out, err


def _command_name(line: str) -> str:
    try:
        return parse_command(clean_line(line)).name
    except EmptyCommand:
        return ""


def feed(engine, lines) -> None:
    """Send lines one at a time, making the scripted bot's background work deterministic: wait for a
    scripted analysis to report once, and let a cancellable scripted search finish (the real loop would
    read the next line at once)."""
    for line in lines:
        if engine.quit_requested:
            break  # the real loop stops reading here
        engine.handle_line(line + "\n")
        bot, task = engine._bot, engine.background
        if task is None or not isinstance(bot, ScriptedBot):
            continue
        name = _command_name(line)
        if name in ANALYZE_COMMANDS:
            assert bot.reported.wait(REPORT_TIMEOUT_SECONDS)
            bot.reported.clear()
        elif name in CANCELLABLE_COMMANDS:
            task.thread.join(REPORT_TIMEOUT_SECONDS)


def run_session(lines, **kwargs) -> str:
    engine, out, _ = make_engine(**kwargs)
    feed(engine, lines)
    engine.stop_background()
    return out.getvalue()


def python_cli() -> list[str]:
    return [sys.executable, "-m", "katacli.cli"]
