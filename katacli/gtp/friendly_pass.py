"""KataGo's friendly pass (PlayUtils::maybeFriendlyPass), applied to genmove's chosen move.

Under area scoring with friendlyPassOk (Chinese, AGA, ... : not Tromp-Taylor), once the opponent has passed
and our pass would end the game, KataGo passes back instead of filling a dame when nothing is left to gain:

* a short noiseless search (conservativePass) gives every point's ownership; chains it judges dead are
  taken off a copy of the board (the final_status_list rule);
* every point owned beyond HIGH_OWNERSHIP must lie in its owner's area on that cleaned board (the borders
  are finished), and the chosen move must neither touch a living opponent stone nor save one of our
  stones in atari;
* two more such searches, after our pass and after our move, must rate the pass at most
  UTILITY_MARGIN / SCORE_MARGIN worse for us.

Whenever the check gets as far as searching, KataGo's game tree is cleared (its searches ran on the game's
bot), so the next genmove starts a fresh tree; kata forgets its tree then too.
"""
from __future__ import annotations

from katacli.game.coords import BLACK, WHITE
from katacli.game.rules import ScoringRule
from katacli.gtp.scoring import alive_by_ownership
from katacli.setup.engine_settings import Enabled

HIGH_OWNERSHIP = 0.75
UTILITY_MARGIN = 0.1
SCORE_MARGIN = 0.25
# Visits for each of its searches: BASE_VISITS + min(MAX_EXTRA_VISITS, the genmove limit / VISITS_DIVISOR).
BASE_VISITS = 8
MAX_EXTRA_VISITS = 1000
VISITS_DIVISOR = 10


def friendly_pass_visits(params) -> int:
    return BASE_VISITS + min(MAX_EXTRA_VISITS, min(params.max_visits, params.max_playouts) // VISITS_DIVISOR)


def _wanted(engine, state, pla: int, move) -> bool:
    settings, rules = engine.settings, engine.rules
    if settings.cleanup_before_pass == Enabled.TRUE or move is None or engine.nogo:
        return False
    if settings.friendly_pass == Enabled.AUTO:
        enabled = rules.friendly_pass_ok and rules.scoring == ScoringRule.AREA
    else:
        enabled = settings.friendly_pass == Enabled.TRUE
    moves = state.moves
    return (enabled and rules.scoring == ScoringRule.AREA and not state.has_button
            and state.pass_would_end_phase(pla) and bool(moves)
            and moves[-1][0] == BLACK + WHITE - pla and moves[-1][1] is None)


def _neighbours(xy, x_size: int, y_size: int):
    x, y = xy
    for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
        if 0 <= nx < x_size and 0 <= ny < y_size:
            yield nx, ny


def _borders_finished(state, ownership, alive) -> tuple[bool, object]:
    """(every highly owned point lies in its owner's area once dead chains are removed, the cleaned board)."""
    from katacli._core.area import area_map

    board = state.board()
    for y, row in enumerate(state.colors()):
        for x, color in enumerate(row):
            if color != 0 and (x, y) not in alive:
                board.set_stone((x, y), 0)
    area = area_map(board, True, True, True, state.suicide_legal_for_pass_alive())
    for y in range(state.y_size):
        for x in range(state.x_size):
            owned = ownership[y * state.x_size + x]
            if (owned > HIGH_OWNERSHIP and area[y][x] != WHITE) or (owned < -HIGH_OWNERSHIP and area[y][x] != BLACK):
                return False, board
    return True, board


def _safe_fill(board, move, pla: int) -> bool:
    """Not next to an opponent stone, and not a point where the opponent would capture one of ours."""
    opp = BLACK + WHITE - pla
    for xy in _neighbours(move, board.x_size, board.y_size):
        color = board.color_at(xy)
        if color == opp or (color == pla and board.liberties_at(xy) == 1):
            return False
    return True


def maybe_friendly_pass(engine, state, pla: int, move):
    """``move``, or None (pass) where KataGo's friendly pass replaces it."""
    if not _wanted(engine, state, pla, move):
        return move
    bot = engine.bot
    visits = friendly_pass_visits(engine.params.genmove)
    bot.forget_tree()

    def decide(stop) -> bool:
        ownership = bot.estimate_ownership(state.copy(), pla, visits, stop)
        finished, cleaned = _borders_finished(state, ownership, alive_by_ownership(state.colors(), ownership))
        if not finished or not _safe_fill(cleaned, move, pla):
            return False
        values = {}
        for label, played in (("pass", None), ("move", move)):
            after = state.copy()
            after.play(played, pla)
            values[label] = bot.side_search_values(after, BLACK + WHITE - pla, visits, stop)
        sign = 1.0 if pla == WHITE else -1.0  # the values are White's
        passed, moved = values["pass"], values["move"]
        return (sign * (passed["utility"] - moved["utility"]) > -UTILITY_MARGIN
                and sign * (passed["score_mean"] - moved["score_mean"]) > -SCORE_MARGIN
                and sign * (passed["lead"] - moved["lead"]) > -SCORE_MARGIN)

    return None if engine.run_in_worker(decide) else move
