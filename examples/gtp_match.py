#!/usr/bin/env python3
"""A small twogtp/gomill-style match runner: two GTP engines play each other, both score every game.

Examples::

    # katacli's default network against itself, 4 games on 9x9, colours alternating
    python examples/gtp_match.py --black "kata gtp -override-config maxVisits=50" \\
        --white "kata gtp -override-config maxVisits=100" --games 4 --size 9

    # the default network against the rollout engine (no network)
    python examples/gtp_match.py --black "kata gtp -override-config maxVisits=100" \\
        --white "kata gtp -model rollouts -override-config maxVisits=1000" --games 4 --size 9

    # against GNU Go (apt-get install gnugo), area scoring, saving the games
    python examples/gtp_match.py --black "kata gtp -model net.bin.gz" --rules chinese \\
        --white "gnugo --mode gtp --chinese-rules --capture-all-dead" --sgf-dir games/

A game ends after two passes in a row, a resignation, or --max-moves moves. Both engines are
then asked for ``final_score``; the result is reported with whether they agree. The exit status
is 1 if any game failed or, with --require-agreement, if the engines disagreed on a score.
"""
from __future__ import annotations

import argparse
import os
import re
import shlex
import sys
from dataclasses import dataclass, field

try:
    from katacli.gtp.client import GtpClient, GtpClientError
    from katacli.game.rules import Rules, RulesError
except ImportError:  # run from a checkout without installing katacli
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from katacli.gtp.client import GtpClient, GtpClientError
    from katacli.game.rules import Rules, RulesError

COLORS = ("b", "w")
SGF_COLUMNS = "abcdefghijklmnopqrstuvwxyz"
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRSTUVWXYZ"
RESULT_RE = re.compile(r"^(?:0|[BW]\+(?:R|\d+(?:\.\d+)?))$")
MOVE_TIMEOUT_SECONDS = 300.0


@dataclass
class GameRecord:
    number: int
    black: str
    white: str
    moves: list = field(default_factory=list)  # (colour, vertex) as GTP writes them
    result: str = ""  # e.g. "B+3.5", "W+R", "0"
    scores: dict = field(default_factory=dict)  # engine name -> its final_score answer
    ended_by: str = ""
    rules: str = ""  # SGF RU: KataGo's compact rules string, or the --rules name

    @property
    def scores_agree(self) -> bool:
        return len(set(self.scores.values())) <= 1

    def winner(self) -> str | None:
        if self.result.startswith("B+"):
            return self.black
        if self.result.startswith("W+"):
            return self.white
        return None


def normalize_score(text: str) -> str:
    """'W+7' and 'W+7.0' are the same result."""
    text = text.strip()
    if text[:2] in ("B+", "W+") and text[2:] not in ("R", "Resign", "T", "F"):
        try:
            value = float(text[2:])
        except ValueError:
            return text
        return "0" if value == 0 else f"{text[:2]}{value:g}"
    return text


def vertex_to_sgf(vertex: str, size: int) -> str:
    if vertex.lower() == "pass":
        return ""
    column = GTP_COLUMNS.index(vertex[0].upper())
    row = size - int(vertex[1:])
    return SGF_COLUMNS[column] + SGF_COLUMNS[row]


def game_sgf(game: GameRecord, size: int, komi: float) -> str:
    moves = "".join(f";{c.upper()}[{vertex_to_sgf(v, size)}]" for c, v in game.moves)
    rules = f"RU[{game.rules}]" if game.rules else ""
    return (f"(;FF[4]GM[1]SZ[{size}]KM[{komi:g}]{rules}PB[{game.black}]PW[{game.white}]"
            f"RE[{game.result}]{moves})\n")


def rules_for_sgf(engines: dict, rules: str | None) -> str:
    """What the game was played under: the rules an engine reports (kata-get-rules) in KataGo's
    compact form, else the --rules name (e.g. for GNU Go, or NoGo, which has no Go rules string)."""
    for engine in engines.values():
        if engine.command("known_command kata-get-rules") == "true":
            try:
                return Rules.parse(engine.command("kata-get-rules")).to_string_no_komi()
            except RulesError:
                break
    return rules or ""


def setup_game(engines: dict, size: int, komi: float, rules: str | None) -> None:
    for engine in engines.values():
        engine.command(f"boardsize {size}")
        engine.command("clear_board")
        engine.command(f"komi {komi:g}")
        if rules and engine.command("known_command kata-set-rules") == "true":
            engine.command(f"kata-set-rules {rules}")


def play_game(number: int, black: GtpClient, white: GtpClient, size: int, komi: float, max_moves: int,
              rules: str | None = None, referee: GtpClient | None = None) -> GameRecord:
    """One game; its result is the ``referee``'s final_score (default: Black's engine) unless someone resigned."""
    engines = {"b": black, "w": white}
    game = GameRecord(number, black.name, white.name)
    setup_game(engines, size, komi, rules)
    game.rules = rules_for_sgf(engines, rules)
    passes = 0
    color = "b"
    while len(game.moves) < max_moves:
        mover, other = engines[color], engines["w" if color == "b" else "b"]
        move = mover.command(f"genmove {color}", MOVE_TIMEOUT_SECONDS).strip()
        if move.lower() == "resign":
            game.result = ("W" if color == "b" else "B") + "+R"
            game.ended_by = f"{mover.name} resigned"
            break
        other.command(f"play {color} {move}")
        game.moves.append((color, move))
        passes = passes + 1 if move.lower() == "pass" else 0
        if passes == 2:
            game.ended_by = "two passes"
            break
        color = "w" if color == "b" else "b"
    else:
        game.ended_by = f"move limit ({max_moves})"
    for engine in (black, white):
        answer = normalize_score(engine.command("final_score"))
        if not RESULT_RE.match(answer):
            raise GtpClientError(f"{engine.name}: final_score answered {answer!r}")
        game.scores[engine.name] = answer
    if not game.result:
        game.result = game.scores[(referee or black).name]
    return game


def run_match(black_cmd: str, white_cmd: str, games: int, size: int, komi: float, max_moves: int,
              alternate: bool, sgf_dir: str | None, rules: str | None = None, log=print,
              referee: str = "black") -> list[GameRecord]:
    """``referee``: whose final_score decides a game that ends by passes: "black" (the engine playing Black),
    "first" or "second" (the engine of black_cmd / white_cmd whatever colour it plays): a weak engine under
    test should not count its own games."""
    first = GtpClient(shlex.split(black_cmd), name="A: " + black_cmd)
    second = GtpClient(shlex.split(white_cmd), name="B: " + white_cmd)
    records = []
    try:
        for number in range(1, games + 1):
            swap = alternate and number % 2 == 0
            black, white = (second, first) if swap else (first, second)
            judge = {"black": None, "first": first, "second": second}[referee]
            game = play_game(number, black, white, size, komi, max_moves, rules, judge)
            records.append(game)
            agreement = "scores agree" if game.scores_agree else f"scores DISAGREE: {game.scores}"
            log(f"game {number}: {game.result} ({game.ended_by}, {len(game.moves)} moves; {agreement})")
            if sgf_dir:
                os.makedirs(sgf_dir, exist_ok=True)
                with open(os.path.join(sgf_dir, f"game{number:03d}.sgf"), "w") as f:
                    f.write(game_sgf(game, size, komi))
    finally:
        first.close()
        second.close()
    return records


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Play a match between two GTP engines.")
    parser.add_argument("--black", required=True, help="command line of the first engine (Black in game 1)")
    parser.add_argument("--white", required=True, help="command line of the second engine")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--size", type=int, default=9)
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--rules", default=None,
                        help="kata-set-rules value for engines that support it (e.g. chinese against GNU Go, "
                             "which does not allow suicide)")
    parser.add_argument("--max-moves", type=int, default=None, help="default: 3 times the board area")
    parser.add_argument("--no-alternate", action="store_true", help="keep the same colours every game")
    parser.add_argument("--sgf-dir", default=None, help="write each game as an SGF file here")
    parser.add_argument("--referee", choices=("black", "first", "second"), default="black",
                        help="whose final_score decides a game ended by passes: the engine playing Black (default), "
                             "or always the first (--black) or second (--white) engine, e.g. a trusted one")
    parser.add_argument("--require-agreement", action="store_true",
                        help="exit with status 1 when the engines disagree on a score")
    args = parser.parse_args(argv)
    max_moves = args.max_moves or 3 * args.size * args.size
    try:
        records = run_match(args.black, args.white, args.games, args.size, args.komi, max_moves,
                            not args.no_alternate, args.sgf_dir, args.rules, referee=args.referee)
    except GtpClientError as exc:
        print(f"match aborted: {exc}", file=sys.stderr)
        return 1
    wins: dict = {}
    for game in records:
        winner = game.winner()
        if winner:
            wins[winner] = wins.get(winner, 0) + 1
    for name, count in sorted(wins.items()):
        print(f"{name}: {count} win(s)")
    disagreements = sum(not g.scores_agree for g in records)
    print(f"{len(records)} game(s), {disagreements} score disagreement(s)")
    return 1 if args.require_agreement and disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
