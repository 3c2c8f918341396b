"""katacli's default network against the rollout engine at equal time per move, with `kata match`, on
9x9 and 13x13 (Chinese-style area scoring, positional superko); prints a table of wins, win rate with
a 95% interval and the Elo difference per board size.

    python3 benchmarks/default_net_vs_rollouts.py                                  # 20 games per board, 1 s/move
    python3 benchmarks/default_net_vs_rollouts.py --json-out benchmarks/default_net_vs_rollouts.json
    python3 benchmarks/default_net_vs_rollouts.py --games 40 --seconds 2 --sgf-dir vs-rollouts/
    python3 benchmarks/default_net_vs_rollouts.py --boards 9 --games 2 --seconds 0.05   # a smoke run
    python3 benchmarks/default_net_vs_rollouts.py --games 40 --from-sgf-dir vs-rollouts/  # recount saved games

Ctrl-C stops the match after the games in progress and reports (and writes) what was played.

Both bots get the same thinking time per move (maxTime, no visit limit) and one CPU core; each match
worker plays one game at a time, so the network gains nothing from batching several games. Each bot
keeps its own number of leaves in flight (numSearchThreads: katacli's search is one OS thread that
sends that many leaves to the network per batch): the network's search evaluates --net-leaves per
batch (a small net on a CPU costs little more per batch of 16 than per single position), the
rollout engine --rollout-leaves.
A 9x9 game lasts about 60-90 moves: 20 games at 1 s/move take roughly half an hour of one core
(`kata match` spreads games over the cores; --processes sets how many).
"""
from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import KATA_ENV  # noqa: E402  (also makes katacli importable from a checkout)

from katacli.nets import ROLLOUTS_MODEL, default_net_path, packaged_default_net  # noqa: E402
from katacli.match.results import MatchResults  # noqa: E402
from katacli.nn.model_file_reader import check_model_file  # noqa: E402
from katacli.worker_processes import EXIT_INTERRUPTED  # noqa: E402

NET_BOT, ROLLOUT_BOT = "default-net", "rollouts"
DEFAULT_BOARDS = (9, 13)
MOVES_PER_POINT = 3           # games stop (and are scored) after this many moves per board point
UNLIMITED_VISITS = 1 << 30    # the time limit alone stops each search
DEFAULT_KOMI = 7.5
# b4c32 on 9x9, one core, 0.5 s/move: about 1,900 visits with 1 leaf per batch, 2,800 with 4,
# 4,000-9,000 with 16 (the rollout engine: about 22,000 playouts).
DEFAULT_NET_LEAVES = 16


def match_config(net: str, size: int, games: int, seconds: float, komi: float, processes: Optional[int],
                 net_leaves: int = 1, rollout_leaves: int = 1) -> str:
    keys = [
        "numBots = 2", f"botName0 = {NET_BOT}", f"botName1 = {ROLLOUT_BOT}",
        f"nnModelFile0 = {net}", f"nnModelFile1 = {ROLLOUTS_MODEL}",
        "koRules = POSITIONAL", "scoringRules = AREA", "taxRules = NONE", "multiStoneSuicideLegals = false",
        "hasButtons = false", f"bSizes = {size}", "bSizeRelProbs = 1", f"komiMean = {komi:g}", "handicapProb = 0.0",
        f"maxMovesPerGame = {MOVES_PER_POINT * size * size}", f"numGamesTotal = {games}",
        f"maxTime = {seconds:g}", f"maxVisits = {UNLIMITED_VISITS}",
        f"numSearchThreads0 = {net_leaves}", f"numSearchThreads1 = {rollout_leaves}",
        "numGameThreads = 1", f"nnMaxBatchSize = {net_leaves}",
        # One core each: no leaf helper thread beside the network bot's search (katacli only).
        "numLeafFeatureThreads = 0",
        "allowResignation = true", "resignThreshold = -0.95", "resignConsecTurns = 6", "logToStdout = false",
    ]
    if processes is not None:
        keys.append(f"numMatchProcesses = {processes}")
    return "\n".join(keys) + "\n"


def play(net: str, size: int, args, work: Path) -> dict:
    """One `kata match` on one board size; the net's result against the rollout engine."""
    cfg = work / f"vs-rollouts-{size}x{size}.cfg"
    cfg.write_text(match_config(net, size, args.games_by_board[size], args.seconds, args.komi, args.processes,
                                args.net_leaves, args.rollout_leaves))
    command = [sys.executable, "-P", "-m", "katacli.cli", "match", "-config", str(cfg), "--json", "--quiet",
               "-seed", str(args.seed + size)]
    if args.sgf_dir:
        command += ["-sgf-output-dir", str(Path(args.sgf_dir) / f"{size}x{size}")]
    print(f"{size}x{size}: {args.games_by_board[size]} games at {args.seconds:g} s per move ...", file=sys.stderr,
          flush=True)
    # Ctrl-C reaches kata match too: it finishes with the games played so far (exit status 130 and its
    # JSON), which this script keeps; so it ignores the signal itself while the match runs.
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        done = subprocess.run(command, env=KATA_ENV, stdout=subprocess.PIPE, text=True)
    finally:
        signal.signal(signal.SIGINT, previous)
    if done.returncode not in (0, EXIT_INTERRUPTED) or not done.stdout.strip():
        raise SystemExit(f"error: kata match on {size}x{size} failed (exit status {done.returncode}); "
                         "see its messages above")
    return board_result(json.loads(done.stdout), size, args)


def board_result(report: dict, size: int, args) -> dict:
    """The net's result against the rollout engine from a kata match report (JSON)."""
    pair = next((p for p in report["pairs"] if {p["bot"], p["opponent"]} == {NET_BOT, ROLLOUT_BOT}), None)
    if pair is None:
        raise SystemExit(f"error: no finished game on {size}x{size}")
    if pair["bot"] != NET_BOT:  # the pair seen from the rollout engine's side: turn it round
        pair = dict(pair, wins=pair["losses"], losses=pair["wins"], win_rate=1 - pair["win_rate"],
                    win_rate_95=[1 - pair["win_rate_95"][1], 1 - pair["win_rate_95"][0]],
                    elo_diff=None if pair["elo_diff"] is None else -pair["elo_diff"],
                    elo_diff_95=[None if e is None else -e for e in reversed(pair["elo_diff_95"])])
    return dict(pair, board=size, seconds_per_move=args.seconds, net_leaves=args.net_leaves,
                rollout_leaves=args.rollout_leaves, interrupted=report["interrupted"])


def winner_of(result: str) -> int:
    """KataGo/SGF RE[] text -> katacli's colour code of the winner (0: draw or no result)."""
    result = result.strip().upper()
    return 1 if result.startswith("B+") else 2 if result.startswith("W+") else 0


def tally_sgfs(folder: Path, size: int, args) -> dict:
    """The result on one board size recomputed from the games kata match saved there (an earlier,
    perhaps interrupted, run's -sgf-output-dir); counted the way kata match counts."""
    from sgfmill import sgf

    results = MatchResults([NET_BOT, ROLLOUT_BOT])
    files = sorted(folder.glob("*.sgf"))
    seconds = moves = 0.0
    for path in files:
        try:
            game = sgf.Sgf_game.from_bytes(path.read_bytes())
            root = game.get_root()
            black, white, outcome = (root.get(key) for key in ("PB", "PW", "RE"))
            # kata match's root comment holds each side's search seconds (KataGo's bTimeUsed / wTimeUsed).
            used = dict(part.split("=", 1) for part in (root.get("C") if root.has_property("C") else "").split(",")
                        if "=" in part)
            if "bTimeUsed" in used:
                seconds += float(used["bTimeUsed"]) + float(used.get("wTimeUsed", 0.0))
                moves += sum(1 for node in game.get_main_sequence()[1:] if node.get_move()[0] is not None)
        except (ValueError, KeyError) as exc:
            raise SystemExit(f"error: {path}: not a finished kata match game ({exc})") from None
        if {black, white} != {NET_BOT, ROLLOUT_BOT}:
            raise SystemExit(f"error: {path}: the players are {black} and {white}, not {NET_BOT} and {ROLLOUT_BOT}")
        results.add(black, white, winner_of(outcome))
    if not files:
        raise SystemExit(f"error: no games in {folder}")
    report = {"pairs": [t.as_dict() for t in results.pairs.values()], "interrupted": len(files) < args.games_by_board[size]}
    result = dict(board_result(report, size, args), from_sgfs=True)
    if moves:   # the time the games were played at (measured: slightly above maxTime), not --seconds' default
        result["seconds_per_move"] = round(seconds / moves, 3)
    return result


def elo_text(value: Optional[float], interval: list) -> str:
    def one(v: Optional[float], unbounded: str) -> str:
        return unbounded if v is None else f"{v:+.0f}"

    return f"{one(value, 'sweep')} [{one(interval[0], '-inf')}, {one(interval[1], '+inf')}]"


def table(results: list[dict], net_name: str) -> str:
    lines = [f"default network ({net_name}) against the rollout engine, equal time per move",
             "",
             "| board | s/move | games | W-L-D | win rate (95%) | Elo (95%) |",
             "|---|---:|---:|---:|---:|---:|"]
    for r in results:
        low, high = r["win_rate_95"]
        lines.append(f"| {r['board']}x{r['board']} | {r['seconds_per_move']:g} | {r['games']} | "
                     f"{r['wins']}-{r['losses']}-{r['draws']} | {100 * r['win_rate']:.0f}% "
                     f"[{100 * low:.0f}-{100 * high:.0f}] | {elo_text(r['elo_diff'], r['elo_diff_95'])} |"
                     + (" (interrupted)" if r["interrupted"] else ""))
    return "\n".join(lines)


def board_list(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of board sizes like 9,13") from None


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--boards", type=board_list, default=list(DEFAULT_BOARDS), help="board sizes, e.g. 9,13")
    parser.add_argument("--games", default="20",
                        help="games per board size (colours alternate): one number, or one per --boards entry "
                             "(e.g. --boards 9,13,19 --games 20,20,10)")
    parser.add_argument("--seconds", type=float, default=1.0, help="seconds per move for both bots")
    parser.add_argument("--komi", type=float, default=DEFAULT_KOMI)
    parser.add_argument("--model", help="the network (default: katacli's default network)")
    parser.add_argument("--processes", type=int, help="match worker processes (default: kata match's, one per core)")
    parser.add_argument("--sgf-dir", help="save the games here, one folder per board size")
    parser.add_argument("--json-out", help="also write the results as JSON here (benchmarks/default_net_vs_rollouts.json "
                                           "is shown in benchmarks/default_net.md by default_net_record.py)")
    parser.add_argument("--net-leaves", type=int, default=DEFAULT_NET_LEAVES,
                        help="numSearchThreads of the network bot: leaves per network batch")
    parser.add_argument("--rollout-leaves", type=int, default=1, help="numSearchThreads of the rollout engine")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--from-sgf-dir", metavar="DIR",
                        help="play nothing: recount the games an earlier run saved with --sgf-dir DIR (e.g. one "
                             "stopped with Ctrl-C); --games is the number that run planned per board")
    args = parser.parse_args(argv)
    try:
        games = [int(g) for g in str(args.games).split(",")]
    except ValueError:
        parser.error(f"--games takes numbers separated by commas, got {args.games!r}")
    if len(games) == 1:
        games *= len(args.boards)
    if len(games) != len(args.boards):
        parser.error(f"--games gives {len(games)} numbers for {len(args.boards)} board sizes")
    args.games_by_board = dict(zip(args.boards, games))
    if min(games) < 2 or args.seconds <= 0:
        parser.error("--games must be at least 2 (one per colour) and --seconds above 0")
    if args.net_leaves < 1 or args.rollout_leaves < 1:
        parser.error("--net-leaves and --rollout-leaves must be at least 1")
    net = args.model or packaged_default_net()
    if net is None:
        print(f"error: katacli's default network is not installed ({default_net_path()}); pass --model",
              file=sys.stderr)
        return 1
    results = []
    if args.from_sgf_dir:
        results = [tally_sgfs(Path(args.from_sgf_dir) / f"{size}x{size}", size, args) for size in args.boards]
    else:
        with tempfile.TemporaryDirectory() as temp:
            for size in args.boards:
                results.append(play(str(net), size, args, Path(temp)))
                if results[-1]["interrupted"]:
                    break   # Ctrl-C: report what was played
    name = check_model_file(net).name
    print(table(results, name))
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"model": name, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
