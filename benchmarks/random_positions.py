"""Positions for the search benchmarks: a game of uniformly random legal moves (no passes while a
move is legal), the same for a given random generator on every run."""
from __future__ import annotations

import random

from kata_env import REPO  # noqa: F401  (makes katacli importable from a checkout)

try:
    from katacli._core.game_state import GameState
except ImportError:   # a build from before GameState left history.pyx, measured side by side from a copy
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


# Unseen positions for compare_katago_search.py --random: the shapes the issue names (square boards from 6x6
# to 19x19, rectangles, every ruleset, handicap stones, positions after a pass), drawn afresh from a seed.
PARITY_SIZES = (6, 7, 9, 9, 9, 11, 13, 13, 19, 19, 19, (7, 9), (9, 7), (11, 13), (13, 9))
PARITY_RULES = ("tromp-taylor", "chinese", "japanese", "korean", "aga", "new-zealand", "stone-scoring",
                "aga-button")
PARITY_KOMIS = (7.5, 7.5, 6.5, 7.0, 5.5, 0.5, -2.5, 9.0)
HANDICAP_CHANCE = 0.2      # of boards 13x13 and larger
PASS_CHANCE = 0.02         # per random move (never two passes in a row: that could end the game)
END_WITH_PASS_CHANCE = 0.15
MAX_FILL = 0.55            # at most this share of the points get a move


def random_parity_position(rng: random.Random, index: int) -> dict:
    """One position in benchmarks/search_parity.py's list format, from uniformly random legal moves."""
    from katacli import Game

    size = rng.choice(PARITY_SIZES)
    x_size, y_size = size if isinstance(size, tuple) else (size, size)
    rules = rng.choice(PARITY_RULES)
    komi = rng.choice(PARITY_KOMIS)
    game = Game((x_size, y_size), rules=rules, komi=komi)
    handicap: list[str] = []
    if min(x_size, y_size) >= 13 and rng.random() < HANDICAP_CHANCE:
        game.place_handicap(rng.randint(2, 4))
        handicap = [f"{chr(ord('A') + x + (x >= 8))}{y_size - y}"
                    for y in range(y_size) for x in range(x_size) if game.board[y, x] == BLACK]
    moves: list[str] = []
    for _ in range(rng.randint(0, int(MAX_FILL * x_size * y_size))):
        pla = game.next_player
        legal = [v for v in game.legal_moves(pla) if v.lower() != "pass"]
        last_was_pass = bool(moves) and moves[-1].endswith("pass")
        if not legal or (rng.random() < PASS_CHANCE and not last_was_pass):
            if last_was_pass:
                break
            vertex = "pass"
        else:
            vertex = rng.choice(legal)
        game.play(pla, vertex)
        moves.append(f"{pla} {vertex}")
    if moves and not moves[-1].endswith("pass") and rng.random() < END_WITH_PASS_CHANCE:
        moves.append(f"{game.next_player} pass")
    label = f"{x_size}x{y_size}" if x_size != y_size else str(x_size)
    name = f"random{index}-{label}-{rules}-h{len(handicap)}-m{len(moves)}"
    entry = {"name": name, "size": size if isinstance(size, int) else f"{x_size}x{y_size}", "rules": rules,
             "komi": komi, "moves": moves}
    if handicap:
        entry["handicap"] = handicap
    return entry


def random_parity_positions(count: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    return [random_parity_position(rng, i) for i in range(count)]
