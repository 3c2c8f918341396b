"""New games forked from finished ones (KataGo's maybeForkGame and maybeSekiForkGame).

An early fork restarts near the opening with an alternative move; a late fork
anywhere in the game. The alternative is the best, by the raw net's score, of a few
random legal moves. Seki forks replay the end of a game that left unowned points
under freshly drawn scoring rules, to teach how rulesets score seki. A hint fork plays a
hint position's hinted move where the game chose another (KataGo's maybeHintForkGame).
"""
from __future__ import annotations

import math
import random

from katacli.game.rules import rules_of
from katacli.selfplay.game_init import ForkPosition, ForkStore, GameInitializer, GameStart
from katacli.selfplay.raw_policy import NetEvaluator
from katacli.selfplay.opening import best_fork_move, replay_to_move
from katacli.selfplay.records import FinishedGame
from katacli.selfplay.settings import PlaySettings

# Seki forks start this far (as a share of the game, exponentially distributed) before the end.
SEKI_FORK_END_SHARE = 0.10
SEKI_FORKS_PER_GAME = 2


def maybe_fork_game(game: FinishedGame, store: ForkStore, play: PlaySettings, rng: random.Random,
                    net: NetEvaluator) -> None:
    if game.initial_encore_phase != 0:
        return  # games that began in the encore are not forked
    early = rng.random() < play.early_fork_game_prob
    late = not early and play.fork_game_prob > 0 and rng.random() < play.fork_game_prob
    if not early and not late:
        return
    num_moves = len(game.end_state.moves)
    if early:
        area = game.start_state.x_size * game.start_state.y_size
        move_idx = int(math.floor(rng.expovariate(1.0) * play.early_fork_game_expected_move_prop * area))
    else:
        move_idx = rng.randrange(num_moves) if num_moves > 0 else 0
    state = replay_to_move(game.end_state, move_idx, game.end_state.rules_tuple, game.initial_encore_phase,
                           game.pass_alive_under_suicide)
    if state.is_game_finished:
        return
    max_choices = play.early_fork_game_max_choices if early else play.fork_game_max_choices
    num_choices = rng.randint(play.fork_game_min_choices, max_choices)
    legal = state.legal_moves()
    if not legal:
        return
    candidates = [rng.choice(legal) for _ in range(num_choices)]
    move = best_fork_move(net, state, candidates)
    state.play(move, state.next_player)
    if not state.is_game_finished:
        store.add(ForkPosition(state, is_seki_fork=False, training_weight=game.training_weight,
                               initial_turn_number=game.initial_turn_number))


def maybe_seki_fork_game(game: FinishedGame, store: ForkStore, play: PlaySettings, initializer: GameInitializer,
                         rng: random.Random) -> None:
    if play.seki_fork_hack_prob <= 0:
        return
    scored = game.scored_state
    if scored is None or not (scored.is_game_finished and scored.is_scored) or game.initial_encore_phase >= 2:
        return
    if not (game.final_ownership == 0).any():
        return
    num_moves = len(game.end_state.moves)
    for _ in range(SEKI_FORKS_PER_GAME):
        move_idx = int(math.floor(num_moves * (1.0 - SEKI_FORK_END_SHARE * rng.expovariate(1.0)) - 1.0))
        move_idx = min(max(move_idx, 0), num_moves)
        rules = initializer.randomize_scoring_and_tax(rules_of(game.end_state), rng)
        state = replay_to_move(game.end_state, move_idx, rules.to_core_tuple(), game.initial_encore_phase,
                               game.pass_alive_under_suicide)
        if not state.is_game_finished:
            store.add_seki(ForkPosition(state, is_seki_fork=True, training_weight=game.training_weight,
                                        initial_turn_number=game.initial_turn_number), rng)


def maybe_hint_fork_game(game: FinishedGame, store: ForkStore, start: GameStart) -> None:
    """A game from a hint position that did not play the hinted move: a new game plays it there."""
    if game.initial_encore_phase != 0 or not start.hint_applies(game.start_state):
        return
    played = game.end_state.moves
    turn = len(game.start_state.moves)
    if len(played) <= turn or played[turn][1] == start.hint_move:
        return
    state = game.start_state.copy()
    pla = state.next_player
    if state.is_game_finished or not state.is_legal(start.hint_move, pla):
        return
    state.play(start.hint_move, pla)
    if not state.is_game_finished:
        store.add(ForkPosition(state, is_seki_fork=False, training_weight=game.training_weight, is_hint_fork=True,
                               initial_turn_number=game.initial_turn_number))
