#!/usr/bin/env python3
"""Play `kata gtp` against GNU Go and report who won.

GNU Go is a classic open-source Go program (about 5-8 kyu at its default level): a good first opponent
to see that an engine plays sensible Go. The games are run by examples/gtp_match.py (both engines
score every game, colours alternate); this script only finds GNU Go and sets the two engines up:

    .venv/bin/python examples/play_vs_gnugo.py --model ../shared/models/g170-b6c96-s175395328-d26788732.bin.gz
    .venv/bin/python examples/play_vs_gnugo.py --games 4 --size 9 --visits 200 --level 10 --sgf-dir games/
    .venv/bin/python examples/play_vs_gnugo.py                # katacli's small default network
    .venv/bin/python examples/play_vs_gnugo.py --model rollouts   # no network: the rollout engine (it will lose)

GNU Go must be installed: `sudo apt-get install gnugo` (Debian/Ubuntu; it lands in /usr/games),
`brew install gnu-go` (macOS), or pass its path with --gnugo. Both engines play Chinese (area)
rules, and GNU Go is told to capture all dead stones, so the two scores agree at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))  # gtp_match.py, beside this file

import gtp_match  # noqa: E402
from katacli.match.results import elo_of_score, wilson_interval  # noqa: E402
from katacli.nets import is_rollouts_model  # noqa: E402

# Where Debian and Ubuntu install GNU Go (not on every user's PATH).
GNUGO_FALLBACK_PATHS = ("/usr/games/gnugo", "/usr/local/bin/gnugo", "/opt/homebrew/bin/gnugo")
DEFAULT_VISITS = 100
DEFAULT_LEVEL = 10  # GNU Go's own default strength (0 weakest .. 10)
RULES = "chinese"
EXIT_NO_GNUGO = 2
INSTALL_HINT = ("GNU Go was not found. Install it (Debian/Ubuntu: sudo apt-get install gnugo; "
                "macOS: brew install gnu-go) or pass its path with --gnugo PATH.")


def find_gnugo(explicit: str | None) -> str | None:
    """The GNU Go executable: --gnugo, else on PATH, else where packages usually put it."""
    if explicit:
        return explicit if os.path.isfile(explicit) and os.access(explicit, os.X_OK) else None
    found = shutil.which("gnugo")
    if found:
        return found
    return next((p for p in GNUGO_FALLBACK_PATHS if os.path.isfile(p) and os.access(p, os.X_OK)), None)


def kata_command(model: str | None, visits: int, seed: int) -> str:
    argv = [sys.executable, "-P", "-m", "katacli.cli", "gtp"]  # -P: not a source tree in the cwd
    if model:
        argv += ["-model", model]
    argv += ["-override-config", f"maxVisits={visits}, searchRandSeed={seed}, logToStderr=false"]
    return shlex.join(argv)


def gnugo_command(gnugo: str, level: int) -> str:
    return shlex.join([gnugo, "--mode", "gtp", "--level", str(level), "--chinese-rules", "--capture-all-dead"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Play kata gtp against GNU Go.")
    parser.add_argument("--model", help="KataGo network for katacli (default: katacli's default network; "
                                        "`rollouts`: the rollout engine, no network)")
    parser.add_argument("--visits", type=int, default=DEFAULT_VISITS, help="katacli's visits per move")
    parser.add_argument("--games", type=int, default=2)
    parser.add_argument("--size", type=int, default=9, help="board size")
    parser.add_argument("--komi", type=float, default=7.5)
    parser.add_argument("--level", type=int, default=DEFAULT_LEVEL, help="GNU Go's strength, 0..10")
    parser.add_argument("--gnugo", help="path of the gnugo executable (default: search PATH and /usr/games)")
    parser.add_argument("--sgf-dir", help="save every game as an SGF file here")
    parser.add_argument("--seed", type=int, default=1, help="katacli's search seed (games vary with it)")
    parser.add_argument("--json-out", help="also write the result (counts, score, 95%% interval, Elo) as JSON here")
    args = parser.parse_args(argv)

    gnugo = find_gnugo(args.gnugo)
    if gnugo is None:
        print(f"error: {INSTALL_HINT}" if not args.gnugo else f"error: {args.gnugo} is not an executable file. "
              f"{INSTALL_HINT}", file=sys.stderr)
        return EXIT_NO_GNUGO
    if args.model and not is_rollouts_model(args.model) and not os.path.isfile(args.model):
        print(f"error: model file not found: {args.model}", file=sys.stderr)
        return 1
    # The engine is started as `python -m katacli.cli`: when katacli came from this checkout (built in
    # place, not installed), make it importable for the engine too.
    import katacli

    if Path(katacli.__file__).resolve().parents[1] == REPO:
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))

    kata = kata_command(args.model, args.visits, args.seed)
    opponent = gnugo_command(gnugo, args.level)
    engine_kind = ("katacli's default network" if not args.model else "rollout engine (no network)"
                   if is_rollouts_model(args.model) else f"network {Path(args.model).name}")
    print(f"katacli ({engine_kind}, {args.visits} visits) vs GNU Go level {args.level}: {args.games} game(s) on "
          f"{args.size}x{args.size}, komi {args.komi:g}, {RULES} rules")
    try:
        # GNU Go counts every game (run with --capture-all-dead, its count is the board's area count): the
        # network under test judged its own games, at times to impossible scores (W+95 on 9x9).
        records = gtp_match.run_match(kata, opponent, args.games, args.size, args.komi, 3 * args.size * args.size,
                                      True, args.sgf_dir, RULES, referee="second")
    except gtp_match.GtpClientError as exc:
        print(f"match aborted: {exc}", file=sys.stderr)
        return 1
    result = summarize(records)
    print(f"katacli {result['wins']} - {result['losses']} GNU Go"
          + (f" ({result['draws']} drawn)" if result["draws"] else "")
          + (f"; the engines disagreed on {result['disagreements']} score(s)" if result["disagreements"] else ""))
    if records:
        low, high = result["score_95"]
        elo = f"about {result['elo']:+.0f} Elo" if result["elo"] is not None else "no finite Elo estimate from a sweep"
        print(f"katacli's score {result['score']:.0%} (95% interval {low:.0%}-{high:.0%}); {elo} against GNU Go "
              f"level {args.level}")
    if args.json_out:
        settings = {"katacli": engine_kind, "model": model_name(args.model), "visits": args.visits,
                    "gnugo_level": args.level, "size": args.size, "komi": args.komi, "rules": RULES}
        Path(args.json_out).write_text(json.dumps({**settings, **result}, indent=1) + "\n")
    return 0


def summarize(records: list) -> dict:
    """katacli's wins, losses and draws (it is engine A), its score (a draw is half a win) with a 95%
    interval, and the Elo difference (None after a sweep)."""
    wins = sum(1 for game in records if (game.winner() or "").startswith("A: "))
    losses = sum(1 for game in records if (game.winner() or "").startswith("B: "))
    draws = len(records) - wins - losses
    score = (wins + draws / 2) / len(records) if records else 0.0
    return {"games": len(records), "wins": wins, "losses": losses, "draws": draws, "score": score,
            "score_95": list(wilson_interval(wins + draws / 2, len(records))),
            "elo": elo_of_score(score) if 0 < score < 1 else None,
            "disagreements": sum(not game.scores_agree for game in records)}


def model_name(model: str | None) -> str:
    """The network's own name (from its file), or "rollouts"."""
    from katacli.nets import ROLLOUTS_MODEL, packaged_default_net
    from katacli.nn.model_file_reader import check_model_file

    if is_rollouts_model(model):
        return ROLLOUTS_MODEL
    path = model or packaged_default_net()
    return check_model_file(path).name if path else ROLLOUTS_MODEL


if __name__ == "__main__":
    sys.exit(main())
