"""Positions for the search benchmarks: a game of uniformly random legal moves (no passes while a
move is legal), the same for a given random generator on every run."""
from __future__ import annotations

import random

from kata_env import REPO  # noqa: F401  (makes katacli importable from a checkout)

from katacli._core.history import GameState

BLACK, WHITE = 1, 2


def random_game_state(rng: random.Random, size: int, moves: int) -> GameState:
    """A size x size game after up to ``moves`` random legal moves, Black first (it stops early when
    the player to move has no legal point)."""
    state = GameState(size)
    pla = BLACK
    for _ in range(moves):
        legal = [p for p in state.legal_moves(pla) if p is not None]
        if not legal:
            break
        state.play(rng.choice(legal), pla)
        pla = WHITE if pla == BLACK else BLACK
    return state
