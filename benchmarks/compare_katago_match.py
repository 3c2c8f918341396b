#!/usr/bin/env python3
"""Equal-visit match: `kata gtp` against a KataGo binary, same network, same config, same visits.

    python3 benchmarks/compare_katago_match.py --katago /path/to/katago --model NET.bin.gz \\
        [--config configs/gtp_example.cfg] [--visits 200] [--pairs 10] [--size 9] [--komi 7] [--json]

Each pair of games starts from one random opening (--opening-moves stones, off the first line),
played once with kata as Black and once with KataGo as Black, so neither side profits from a
lucky opening or from the colour. Both engines get Tromp-Taylor rules: a game ends with two passes,
a resignation or the move limit, and is scored by katacli's own Tromp-Taylor count of the final
board (every stone on the board counts; neither engine's `final_score` is asked). A draw is possible
with an integer komi.

Printed: each game, then kata's wins / losses / draws, its score rate with a 95% interval and the
Elo difference it implies. With search parity the rate is 50% within noise. --json writes the
summary and every game as JSON on stdout instead.

Any two GTP engines can be compared: --kata-command and --katago-command replace the command lines
(the model, config and visits are then up to you).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import KATA_COMMAND, KATA_ENV, REPO  # noqa: E402  (also makes katacli importable from a checkout)

from katacli.gtp.client import GtpClient, GtpClientError  # noqa: E402

from katacli.game.coords import BLACK, WHITE, CoordError, format_vertex, parse_vertex
from katacli.game.rules import Rules
from katacli.game.session import GameSession, SessionError
from katacli.match.results import elo_of_score, wilson_interval

RULES = "tromp-taylor"
MOVE_TIMEOUT_SECONDS = 600.0
MAX_MOVES_PER_POINT = 3          # games stop after this many moves per board point
# Settings both engines get so that their searches differ only in the engine: fixed visits, no
# pondering, one search thread (the visit count is then exact), and no time limit.
SHARED_OVERRIDES = ("ponderingEnabled=false", "numSearchThreads=1", "maxTime=1000000", "maxPlayouts=1000000000")
ENGINES = ("kata", "katago")


@dataclass
class Game:
    pair: int
    opening: list
    black: str                                   # "kata" or "katago"
    moves: list = field(default_factory=list)    # GTP vertices after the opening
    result: str = ""                             # "B+3", "W+R", "0"
    winner: str = ""                             # "kata", "katago" or "" for a draw
    ended_by: str = ""


def random_opening(rng: random.Random, size: int, count: int) -> list[str]:
    """``count`` distinct points off the first line (alternating colours from Black), as GTP vertices."""
    inner = [(x, y) for x in range(1, size - 1) for y in range(1, size - 1)]
    return [format_vertex(point, size, size) for point in rng.sample(inner, min(count, len(inner)))]


def score_tromp_taylor(size: int, komi: float, moves: list[str]) -> tuple[str, int]:
    """(SGF result, winner colour or 0) of the moves under Tromp-Taylor rules, by katacli's own count."""
    session = GameSession(x_size=size, y_size=size, rules=Rules.parse(RULES).with_komi(komi))
    player = BLACK
    for vertex in moves:
        try:
            session.play(player, parse_vertex(vertex, size, size))
        except (CoordError, SessionError) as exc:
            raise GtpClientError(f"cannot replay {vertex}: {exc}") from None
        player = BLACK + WHITE - player
    state = session.state.copy()
    state.end_and_score_now()
    margin = state.final_white_minus_black_score
    if state.winner == WHITE:
        return f"W+{margin:g}", WHITE
    if state.winner == BLACK:
        return f"B+{-margin:g}", BLACK
    return "0", 0


def new_game(engines: dict, size: int, komi: float) -> None:
    for engine in engines.values():
        engine.command(f"boardsize {size}")
        engine.command("clear_board")
        engine.command(f"kata-set-rules {RULES}")
        engine.command(f"komi {komi:g}")


def play(engines: dict, game: Game, size: int, komi: float) -> Game:
    """Play one game from its opening; ``engines`` maps "kata"/"katago" to GtpClients."""
    new_game(engines, size, komi)
    black, white = game.black, ("katago" if game.black == "kata" else "kata")
    by_colour = {"b": black, "w": white}
    colour = "b"
    for vertex in game.opening:
        for engine in engines.values():
            engine.command(f"play {colour} {vertex}")
        colour = "w" if colour == "b" else "b"
    passes, limit = 0, MAX_MOVES_PER_POINT * size * size
    while len(game.opening) + len(game.moves) < limit:
        mover = by_colour[colour]
        move = engines[mover].command(f"genmove {colour}", MOVE_TIMEOUT_SECONDS).strip().upper()
        if move == "RESIGN":
            game.result = ("W" if colour == "b" else "B") + "+R"
            game.winner = by_colour["w" if colour == "b" else "b"]
            game.ended_by = f"{mover} resigned"
            return game
        engines["katago" if mover == "kata" else "kata"].command(f"play {colour} {move}")
        game.moves.append(move)
        passes = passes + 1 if move == "PASS" else 0
        if passes == 2:
            game.ended_by = "two passes"
            break
        colour = "w" if colour == "b" else "b"
    else:
        game.ended_by = f"move limit ({limit})"
    game.result, winner = score_tromp_taylor(size, komi, game.opening + game.moves)
    game.winner = {BLACK: black, WHITE: white}.get(winner, "")
    return game


def summary(games: list[Game]) -> dict:
    """kata's wins, losses, draws, score rate with a 95% (Wilson) interval, and the implied Elo difference;
    draws count half a game won. The interval and Elo are kata match's own (katacli.match.results)."""
    wins = sum(g.winner == "kata" for g in games)
    losses = sum(g.winner == "katago" for g in games)
    draws = len(games) - wins - losses
    n = len(games)
    rate = (wins + 0.5 * draws) / n
    low, high = wilson_interval(wins + 0.5 * draws, n)
    return {"games": n, "kata_wins": wins, "kata_losses": losses, "draws": draws, "kata_score_rate": rate,
            "rate_95_low": low, "rate_95_high": high, "elo": _elo(rate), "elo_95_low": _elo(low),
            "elo_95_high": _elo(high)}


def _elo(rate: float) -> float:
    """The Elo difference of a score rate; infinite for a sweep either way (printed as +inf / -inf)."""
    if rate <= 0.0:
        return float("-inf")
    if rate >= 1.0:
        return float("inf")
    return elo_of_score(rate)


def engine_commands(args) -> dict:
    overrides = [f"maxVisits={args.visits}", *SHARED_OVERRIDES, *args.override]
    kata = (shlex.split(args.kata_command) if args.kata_command else
            [*KATA_COMMAND, "gtp", "-model", args.model, "-config", args.config,
             "-override-config", ",".join(overrides)])
    katago = (shlex.split(args.katago_command) if args.katago_command else
              [args.katago, "gtp", "-model", args.model, "-config", args.config,
               "-override-config", ",".join([*overrides, "logToStderr=false"])])
    return {"kata": kata, "katago": katago}


def run(args, log) -> list[Game]:
    rng = random.Random(args.seed)
    commands = engine_commands(args)
    games: list[Game] = []
    with tempfile.TemporaryDirectory() as cwd:  # KataGo's gtp_example.cfg writes logs to ./gtp_logs
        engines = {name: GtpClient(commands[name], name=name, cwd=cwd, env=KATA_ENV) for name in ENGINES}
        try:
            for pair in range(1, args.pairs + 1):
                opening = random_opening(rng, args.size, args.opening_moves)
                for black in ENGINES:
                    game = play(engines, Game(pair, opening, black), args.size, args.komi)
                    games.append(game)
                    log(f"pair {pair} ({' '.join(opening)}), {black} Black: {game.result} -> "
                        f"{game.winner or 'draw'} ({game.ended_by}, {len(game.opening) + len(game.moves)} moves)")
        finally:
            for engine in engines.values():
                engine.close()
    return games


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--katago", default=os.environ.get("KATAGO_BINARY"),
                        help="KataGo binary (default: $KATAGO_BINARY)")
    parser.add_argument("--model", help="network for both engines")
    parser.add_argument("--config", default=str(REPO / "configs" / "gtp_example.cfg"), help="GTP config for both")
    parser.add_argument("--visits", type=int, default=200, help="maxVisits of every move, both engines")
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="one more config override for both engines (repeatable), e.g. useGraphSearch=false")
    parser.add_argument("--pairs", type=int, default=10, help="opening pairs (two games each)")
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--komi", type=float, default=7.0)
    parser.add_argument("--opening-moves", type=int, default=2, help="random stones before the engines play")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--kata-command", default=None, help="replaces the kata command line")
    parser.add_argument("--katago-command", default=None, help="replaces the KataGo command line")
    parser.add_argument("--json", action="store_true", help="print the summary and the games as JSON")
    args = parser.parse_args(argv)
    if not args.katago_command and not args.katago:
        parser.error("give --katago (or set KATAGO_BINARY) or --katago-command")
    if not (args.kata_command and args.katago_command) and not args.model:
        parser.error("give --model (the network both engines use)")
    if args.pairs < 1 or args.visits < 1 or not 2 <= args.size <= 19:
        parser.error("--pairs and --visits must be at least 1, --size within 2..19")
    log = (lambda text: print(text, file=sys.stderr, flush=True)) if args.json else (lambda text: print(text, flush=True))
    try:
        games = run(args, log)
    except (GtpClientError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    result = summary(games)
    if args.json:
        # An infinite Elo (a sweep) is null in JSON: strict parsers refuse Infinity.
        finite = {k: (v if not isinstance(v, float) or math.isfinite(v) else None) for k, v in result.items()}
        print(json.dumps({"summary": finite, "visits": args.visits, "size": args.size, "komi": args.komi,
                          "games": [asdict(g) for g in games]}, indent=1, allow_nan=False))
    else:
        print(f"\n{result['games']} games at {args.visits} visits on {args.size}x{args.size}, komi {args.komi:g}: "
              f"kata {result['kata_wins']} wins, {result['kata_losses']} losses, {result['draws']} draws")
        print(f"kata score rate {result['kata_score_rate']:.1%} (95%: {result['rate_95_low']:.1%} .. "
              f"{result['rate_95_high']:.1%}), Elo {result['elo']:+.0f} ({result['elo_95_low']:+.0f} .. "
              f"{result['elo_95_high']:+.0f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
