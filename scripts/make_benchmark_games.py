"""Maintainer tool: regenerate ``katacli/resources/benchmark_games.sgf``, the games `kata benchmark` searches.

Not needed at run time. The games are played by a real network (by default KataGo's g170 6-block net
from ``../shared/models``) sampling moves from its raw policy, so the positions look like real play
(joseki, fights, endgame) rather than random stones. One game per board size from
:data:`MIN_BENCHMARK_BOARD_LEN` to :data:`MAX_BENCHMARK_BOARD_LEN`, all in one SGF collection::

    python scripts/make_benchmark_games.py [--model NET.bin.gz] [--seed 1]

The output only changes when this is rerun; benchmark numbers stay comparable between releases.
"""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

import numpy as np

from katacli.atomic_files import atomic_write_text
from katacli.search.benchmark_positions import (
    BENCHMARK_GAMES_PATH, BENCHMARK_KOMI, MAX_BENCHMARK_BOARD_LEN, MIN_BENCHMARK_BOARD_LEN,
)

# A maintainer tool of the checkout (not installed): it writes into the source tree it lives in.
REPO = Path(__file__).resolve().parents[1]
OUTPUT = REPO / "katacli" / "resources" / BENCHMARK_GAMES_PATH.name
DEFAULT_MODEL = REPO.parent / "shared" / "models" / "g170-b6c96-s175395328-d26788732.bin.gz"
# Sharpens the policy before sampling: mostly the net's favourite moves, with some variety.
POLICY_TEMPERATURE = 0.5
# Games stop after this share of the board area in moves (the dame and passes teach a benchmark nothing).
GAME_LENGTH_AREA_FRACTION = 0.75
# Before this share of the board area, the net may not pass (an untrained opening pass would end the game early).
NO_PASS_AREA_FRACTION = 0.5
NUM_SPATIAL, NUM_GLOBAL = 22, 19


def sample_move(evaluator, state, rng: random.Random, allow_pass: bool):
    """A move drawn from the network's policy for the player to move; None is a pass."""
    from katacli._core.features import encode_v7
    from katacli.nn.evaluator import NNRequest

    x_size, y_size = state.x_size, state.y_size
    spatial = np.zeros((NUM_SPATIAL, y_size, x_size), np.float32)
    global_features = np.zeros(NUM_GLOBAL, np.float32)
    legal = np.zeros(x_size * y_size + 1, np.uint8)
    encode_v7(state, 0, spatial, global_features, legal)
    request = NNRequest(spatial, global_features, legal.astype(bool), board_x=x_size, board_y=y_size,
                        white_to_move=state.next_player == 2, symmetry=rng.randrange(8))
    out = evaluator.evaluate([request])[0]
    probs = np.append(np.asarray(out.policy, np.float64), float(out.policy_pass))
    probs = np.where(probs > 0, probs, 0.0) ** (1.0 / POLICY_TEMPERATURE)
    if not allow_pass:
        probs[-1] = 0.0
    if probs.sum() <= 0:
        return None
    index = rng.choices(range(len(probs)), weights=probs.tolist())[0]
    return None if index == x_size * y_size else (index % x_size, index // x_size)


def play_game(evaluator, board_len: int, rng: random.Random):
    """One self-play game on a board_len board; returns an SgfGame."""
    from katacli.game.rules import Rules
    from katacli.game.session import GameSession
    from katacli.game.sgf import SgfGame

    session = GameSession(board_len, board_len, rules=Rules.preset("tromp-taylor").with_komi(BENCHMARK_KOMI))
    area = board_len * board_len
    passes = 0
    while len(session.moves) < int(area * GAME_LENGTH_AREA_FRACTION) and passes < 2:
        if session.state.is_game_finished:
            break
        move = sample_move(evaluator, session.state, rng, len(session.moves) >= area * NO_PASS_AREA_FRACTION)
        session.play(session.next_player, move)
        passes = passes + 1 if move is None else 0
    return SgfGame(x_size=board_len, y_size=board_len, komi=BENCHMARK_KOMI, moves=list(session.moves),
                   black_name="g170-b6c96 policy", white_name="g170-b6c96 policy")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=str(DEFAULT_MODEL), help="network that plays the games")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--output", default=str(OUTPUT))
    args = parser.parse_args(argv)
    from katacli.nn.evaluator import NNEvaluator

    evaluator = NNEvaluator.from_file(args.model, device="cpu", cache_size_power_of_two=None)
    rng = random.Random(args.seed)
    games = []
    for board_len in range(MIN_BENCHMARK_BOARD_LEN, MAX_BENCHMARK_BOARD_LEN + 1):
        game = play_game(evaluator, board_len, rng)
        print(f"{board_len}x{board_len}: {len(game.moves)} moves", file=sys.stderr)
        games.append(game.to_sgf())
    atomic_write_text(args.output, "\n".join(games) + "\n")
    print(f"wrote {args.output}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
