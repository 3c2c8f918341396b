"""Playing strength sanity: the no-network rollout engine beats a random player on 9x9 every game.

The random player picks uniformly among legal moves that do not fill one of its own one-point
eyes (a player that fills its eyes would be too easy), and passes when none is left. Colours
alternate; komi 7 under Tromp-Taylor rules. Each game is played to the end (two passes) and
scored by the rules engine.
"""
import random

import pytest

from katacli._core.game_state import GameState
from katacli.game.rules import Rules
from katacli.search import SearchParams, Searcher

BLACK, WHITE = 1, 2
BOARD_SIZE = 9
GAMES = 4
ROLLOUT_VISITS = 400
KOMI = 7.0
# Guards against a game that never ends; real games on 9x9 end long before.
MAX_MOVES = 400


def random_move(state: GameState, rng: random.Random):
    pla = state.next_player
    colors = state.colors()
    size_y, size_x = len(colors), len(colors[0])

    def fills_own_eye(x, y):
        neighbours = [(x + dx, y + dy) for dx, dy in ((1, 0), (-1, 0), (0, 1), (0, -1))]
        return all(colors[ny][nx] == pla for nx, ny in neighbours if 0 <= nx < size_x and 0 <= ny < size_y)

    candidates = [p for p in state.legal_moves(pla) if p is not None and not fills_own_eye(*p)]
    return rng.choice(candidates) if candidates else None


def play_game(engine_color: int, seed: int) -> float:
    """Returns the final score from the engine's point of view."""
    rng = random.Random(seed)
    params = SearchParams().replace(max_visits=ROLLOUT_VISITS, chosen_move_temperature=0.0,
                                    chosen_move_temperature_early=0.0)
    state = GameState(BOARD_SIZE, rules=Rules.preset("tromp-taylor").with_komi(KOMI).to_core_tuple())
    for _ in range(MAX_MOVES):
        if state.is_game_finished:
            break
        pla = state.next_player
        if pla == engine_color:
            searcher = Searcher(state, params, None, seed=seed)
            searcher.run()
            move = searcher.best_move()
        else:
            move = random_move(state, rng)
        state.play(move, pla)
    assert state.is_game_finished, "the game did not end"
    white_minus_black = state.final_white_minus_black_score
    return white_minus_black if engine_color == WHITE else -white_minus_black


@pytest.mark.parametrize("game", range(GAMES))
def test_rollout_engine_beats_a_random_player_on_9x9(game):
    engine_color = BLACK if game % 2 == 0 else WHITE
    margin = play_game(engine_color, seed=1000 + game)
    assert margin > 0, f"the rollout engine ({'black' if engine_color == BLACK else 'white'}) lost by {-margin}"
