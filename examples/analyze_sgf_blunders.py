#!/usr/bin/env python3
"""Find the biggest mistakes in an SGF game with `kata analysis` (or KataGo's own analysis engine).

The script starts the analysis engine as a subprocess, sends ONE JSON query that asks for every turn
of the game's main line, reads the results (they arrive in any order), and prints the moves after
which the player who moved lost the most winrate, with the score they lost and the engine's
preferred move.

    .venv/bin/python examples/analyze_sgf_blunders.py game.sgf --model ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz
    .venv/bin/python examples/analyze_sgf_blunders.py game.sgf --visits 50            # katacli's default network
    .venv/bin/python examples/analyze_sgf_blunders.py game.sgf --model rollouts       # no network: rollouts (weak)
    .venv/bin/python examples/analyze_sgf_blunders.py game.sgf --engine "katago analysis -model m.bin.gz -config a.cfg"

All values are read from Black's point of view (reportAnalysisWinratesAs = BLACK, set per query with
overrideSettings) and turned into the mover's loss. Where the search before a move looked at the move
played, its loss is the engine's best move's value minus the played move's, both from that one search
(the engine's own choice loses nothing); otherwise it is the change of the root value over the move,
which also holds the noise between two searches.
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
try:
    import katacli  # noqa: F401  (an installed katacli, with its compiled core)
except ImportError:  # run from a checkout built in place
    sys.path.insert(0, str(REPO))

from katacli.game.coords import BLACK, format_color, format_vertex  # noqa: E402
from katacli.game.rules import Rules  # noqa: E402
from katacli.game.sgf import EMPTY, load_sgf  # noqa: E402

DEFAULT_RULES = "chinese"  # used when the SGF names no rules
DEFAULT_VISITS = 200
DEFAULT_TOP = 10
QUERY_ID = "blunders"


@dataclass
class TurnValues:
    """The root values at one turn, from Black's point of view."""

    winrate: float
    score_lead: float
    best_move: str
    moves: dict = None        # move -> (winrate, score lead) of each move the search looked at


@dataclass
class Mistake:
    move_number: int          # 1-based
    player: str               # "B" / "W"
    move: str
    winrate_loss: float       # for the player who moved, 0..1
    score_loss: float         # points, for the player who moved
    best_move: str            # what the engine preferred instead


def build_query(sgf_path: Path, visits: int) -> tuple[dict, list]:
    """The analysis query for every turn of the game, and its moves as (colour, vertex) pairs."""
    game = load_sgf(str(sgf_path))
    for warning in game.warnings:
        print(f"note: {warning}", file=sys.stderr)
    rules, note = game.rules_or_default(Rules.parse(DEFAULT_RULES))
    if note:
        print(f"note: {note}", file=sys.stderr)
    stones: dict = {}
    for colour, point in game.setup:
        if colour == EMPTY:
            stones.pop(point, None)
        else:
            stones[point] = colour
    x_size, y_size = game.x_size, game.y_size
    moves = [[format_color(colour), format_vertex(point, x_size, y_size)] for colour, point in game.moves]
    query = {
        "id": QUERY_ID,
        "boardXSize": x_size, "boardYSize": y_size,
        "rules": rules.to_json_dict(), "komi": rules.komi,
        "initialStones": [[format_color(c), format_vertex(p, x_size, y_size)] for p, c in stones.items()],
        "initialPlayer": format_color(game.first_player),
        "moves": moves,
        "analyzeTurns": list(range(len(moves) + 1)),
        "maxVisits": visits,
        "overrideSettings": {"reportAnalysisWinratesAs": "BLACK"},
    }
    return query, moves


def engine_command(args) -> list[str]:
    if args.engine:
        return shlex.split(args.engine)
    command = [sys.executable, "-P", "-m", "katacli.cli", "analysis"]  # -P: not a source tree in the cwd
    if args.model:
        command += ["-model", args.model]
    if args.config:
        command += ["-config", args.config]
    return command + ["-analysis-threads", str(args.threads)]


def analyse(command: list[str], query: dict) -> dict[int, TurnValues]:
    """Run the engine on the query; turn number -> values. Stops at the first error."""
    expected = len(query["analyzeTurns"])
    results: dict[int, TurnValues] = {}
    # The engine's log goes to a file that is shown only when something goes wrong.
    with tempfile.TemporaryFile("w+", encoding="utf-8") as log, subprocess.Popen(
            command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
            encoding="utf-8") as engine:
        engine.stdin.write(json.dumps(query) + "\n")
        engine.stdin.close()  # the engine finishes the queued turns, then exits
        for line in engine.stdout:
            response = json.loads(line)
            if "error" in response:
                engine.kill()
                raise SystemExit(f"engine error: {response['error']} (field {response.get('field')})")
            if "warning" in response:
                print(f"engine warning: {response['warning']}", file=sys.stderr)
                continue
            if response.get("isDuringSearch") or response.get("id") != QUERY_ID or "rootInfo" not in response:
                continue
            root = response["rootInfo"]
            best = response["moveInfos"][0]["move"] if response["moveInfos"] else "pass"
            looked_at = {info["move"]: (info["winrate"], info["scoreLead"]) for info in response["moveInfos"]}
            results[response["turnNumber"]] = TurnValues(root["winrate"], root["scoreLead"], best, looked_at)
            print(f"\ranalysed {len(results)}/{expected} turns", end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        engine.wait()
        if len(results) != expected:
            log.seek(0)
            raise SystemExit(f"{log.read()}\nthe engine stopped after {len(results)} of {expected} turns "
                             f"(exit code {engine.returncode})")
    return results


def find_mistakes(moves: list, values: dict[int, TurnValues]) -> list[Mistake]:
    """Each move's loss for its player (Black's values, negated for White): the best move's value minus the
    played one's where the search before the move looked at it, else the root's change over the move."""
    mistakes = []
    for index, (player, move) in enumerate(moves):
        before, after = values[index], values[index + 1]
        sign = 1.0 if player == format_color(BLACK) else -1.0
        looked_at = before.moves or {}
        if move in looked_at and before.best_move in looked_at:
            (best_winrate, best_lead), (played_winrate, played_lead) = looked_at[before.best_move], looked_at[move]
        else:
            (best_winrate, best_lead), (played_winrate, played_lead) = ((before.winrate, before.score_lead),
                                                                        (after.winrate, after.score_lead))
        mistakes.append(Mistake(
            move_number=index + 1, player=player, move=move,
            winrate_loss=sign * (best_winrate - played_winrate),
            score_loss=sign * (best_lead - played_lead),
            best_move=before.best_move,
        ))
    return sorted(mistakes, key=lambda m: (m.winrate_loss, m.score_loss), reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sgf", type=Path, help="the game record")
    parser.add_argument("--model", help="network file for `kata analysis` (default: katacli's default network; "
                                        "`rollouts`: no network, weak)")
    parser.add_argument("--config", help="analysis config for `kata analysis`")
    parser.add_argument("--visits", type=int, default=DEFAULT_VISITS, help="visits per position")
    parser.add_argument("--threads", type=int, default=2, help="positions searched at once")
    parser.add_argument("--top", type=int, default=DEFAULT_TOP, help="how many mistakes to list")
    parser.add_argument("--engine", help="a full engine command line instead (e.g. KataGo's own)")
    args = parser.parse_args()

    query, moves = build_query(args.sgf, args.visits)
    if not moves:
        raise SystemExit("the game has no moves")
    values = analyse(engine_command(args), query)
    mistakes = find_mistakes(moves, values)[: args.top]
    print(f"{'move':>5} {'player':>6} {'played':>7} {'winrate lost':>13} {'points lost':>12} {'engine liked':>13}")
    for m in mistakes:
        print(f"{m.move_number:5d} {m.player:>6} {m.move:>7} {100 * m.winrate_loss:12.1f}% {m.score_loss:12.1f} "
              f"{m.best_move:>13}")


if __name__ == "__main__":
    main()
