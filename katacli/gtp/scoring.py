"""``final_score`` and ``final_status_list``, KataGo's way.

* A finished game under rules where every dead stone must be captured (area
  scoring without friendlyPassOk, e.g. Tromp-Taylor) or under territory scoring
  (where the cleanup phase settles life and death) is scored exactly from the
  game history.
* Otherwise (an unfinished game, or a finished one under area scoring with
  friendlyPassOk -- Chinese, AGA, ... -- which may end with dead stones on the board),
  with a network, noiseless searches at a few komi values estimate the lead
  (KataGo's computeLead), rounded to the results the rules allow, and a search
  estimates the ownership of every point; a chain is dead when its average ownership
  is not clearly its own colour or one of its points clearly belongs to the opponent.
  ``printsgf`` writes the same result for a finished game.
* Without a network, the position is counted as it stands (Tromp-Taylor area,
  with stones in pass-dead regions recognised as dead).

In NoGo the side that has no legal move on its turn loses; otherwise there is no result yet.
"""
from __future__ import annotations


from katacli.c_numbers import round_half_away
from katacli.game.coords import BLACK, WHITE, opponent
from katacli.game.nogo import nogo_has_legal_move
from katacli.game.rules import ScoringRule

# Visits for the estimating searches (KataGo: at least these, or 10 / 20 per search thread).
LEAD_VISITS_MIN = 50
LEAD_VISITS_PER_THREAD = 10
STATUS_VISITS_MIN = 100
STATUS_VISITS_PER_THREAD = 20
# Chains whose average ownership for their own colour is at most this, or whose worst point is
# at most WORST_OWNERSHIP_FOR_LIFE, are dead.
AVG_OWNERSHIP_FOR_LIFE = 0.2
WORST_OWNERSHIP_FOR_LIFE = -0.6


def _history_is_authoritative(state, rules) -> bool:
    return state.is_game_finished and (
        (rules.scoring == ScoringRule.AREA and not rules.friendly_pass_ok) or rules.scoring == ScoringRule.TERRITORY)


def _round_lead(lead: float, rules) -> float:
    """To the nearest integer or half-integer, whichever results the rules allow (C rounding)."""
    if rules.game_result_will_be_integer():
        return round_half_away(lead)
    return round_half_away(lead + 0.5) - 0.5


def _tromp_taylor(state) -> tuple[int, float]:
    scored = state.copy()
    scored.end_and_score_now()
    return scored.winner, scored.final_white_minus_black_score


def _nogo_result(engine) -> tuple[int, float]:
    state = engine.session.state
    if nogo_has_legal_move(state, state.next_player):
        return 0, 0.0
    winner = opponent(state.next_player)
    return winner, (1.0 if winner == WHITE else -1.0)


def final_winner_and_score(engine) -> tuple[int, float]:
    """(winner: 0 / BLACK / WHITE, final score White minus Black)."""
    if engine.nogo:
        return _nogo_result(engine)
    state, rules = engine.session.state, engine.rules
    if _history_is_authoritative(state, rules):
        return state.winner, state.final_white_minus_black_score
    if engine.evaluator is None:
        return _tromp_taylor(state)
    visits = max(LEAD_VISITS_MIN, engine.params.genmove.num_search_threads * LEAD_VISITS_PER_THREAD)
    lead = engine.run_in_worker(lambda stop: engine.bot.estimate_lead(state.copy(), state.next_player, visits, stop))
    lead = _round_lead(lead, rules)
    winner = WHITE if lead > 0 else BLACK if lead < 0 else 0
    return winner, lead


def final_score_text(engine) -> str:
    winner, white_minus_black = final_winner_and_score(engine)
    if engine.nogo and winner:
        return "B+R" if winner == BLACK else "W+R"
    if winner == BLACK:
        return "B+%.1f" % -white_minus_black
    if winner == WHITE:
        return "W+%.1f" % white_minus_black
    return "0"


def _chains(colors: list[list[int]]) -> list[list[tuple[int, int]]]:
    y_size, x_size = len(colors), len(colors[0])
    seen = [[False] * x_size for _ in range(y_size)]
    chains = []
    for y0 in range(y_size):
        for x0 in range(x_size):
            color = colors[y0][x0]
            if color == 0 or seen[y0][x0]:
                continue
            seen[y0][x0] = True
            stack, chain = [(x0, y0)], []
            while stack:
                x, y = stack.pop()
                chain.append((x, y))
                for nx, ny in ((x + 1, y), (x - 1, y), (x, y + 1), (x, y - 1)):
                    if 0 <= nx < x_size and 0 <= ny < y_size and not seen[ny][nx] and colors[ny][nx] == color:
                        seen[ny][nx] = True
                        stack.append((nx, ny))
            chains.append(chain)
    return chains


def alive_by_ownership(colors: list[list[int]], white_ownership) -> set[tuple[int, int]]:
    """Stones on living chains, judged from White-perspective ownership (row-major)."""
    x_size = len(colors[0])
    alive = set()
    for chain in _chains(colors):
        color = colors[chain[0][1]][chain[0][0]]
        sign = 1.0 if color == WHITE else -1.0  # ownership in the chain's own colour
        own = [sign * white_ownership[y * x_size + x] for x, y in chain]
        if sum(own) / len(own) > AVG_OWNERSHIP_FOR_LIFE and min(own) > WORST_OWNERSHIP_FOR_LIFE:
            alive.update(chain)
    return alive


def _alive_simple(state) -> set[tuple[int, int]]:
    colors = state.colors()
    stones = {(x, y) for y, row in enumerate(colors) for x, c in enumerate(row) if c != 0}
    if state.is_game_finished and state.is_no_result:
        return stones
    area, _ = state.area_now()
    return {(x, y) for x, y in stones if area[y][x] == colors[y][x]}


def alive_stones(engine) -> set[tuple[int, int]]:
    state, rules = engine.session.state, engine.rules
    if engine.nogo or _history_is_authoritative(state, rules) or engine.evaluator is None:
        if engine.nogo:  # nothing is ever captured in NoGo
            colors = state.colors()
            return {(x, y) for y, row in enumerate(colors) for x, c in enumerate(row) if c != 0}
        return _alive_simple(state)
    visits = max(STATUS_VISITS_MIN, engine.params.genmove.num_search_threads * STATUS_VISITS_PER_THREAD)
    ownership = engine.run_in_worker(
        lambda stop: engine.bot.estimate_ownership(state.copy(), state.next_player, visits, stop))
    return alive_by_ownership(state.colors(), ownership)
