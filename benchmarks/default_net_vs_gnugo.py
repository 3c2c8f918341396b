"""The GNU Go moonshot: katacli's default network at 200 visits against GNU Go 3.8 at level 10 on 9x9,
Chinese rules, komi 7 (a draw counts half). Runs examples/play_vs_gnugo.py with these settings and
prints each game, the score with a 95% interval and the Elo difference.

    python3 benchmarks/default_net_vs_gnugo.py --games 20 --json-out benchmarks/default_net_vs_gnugo.json
    python3 benchmarks/default_net_vs_gnugo.py --games 2                      # a quick look

GNU Go must be installed (Debian/Ubuntu: sudo apt-get install gnugo, which puts it in /usr/games);
without it the script says so and exits with status 2. Another version than 3.8 is reported, then
played anyway. One 9x9 game takes a minute or two on a CPU core (GNU Go level 10 thinks too).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "examples"))  # play_vs_gnugo.py and gtp_match.py

import play_vs_gnugo  # noqa: E402

MOONSHOT_VISITS = 200
MOONSHOT_LEVEL = 10
MOONSHOT_SIZE = 9
MOONSHOT_KOMI = 7.0
EXPECTED_GNUGO = "GNU Go 3.8"
VERSION_TIMEOUT_SECONDS = 30


def gnugo_version(gnugo: str) -> str:
    try:
        done = subprocess.run([gnugo, "--version"], capture_output=True, text=True, timeout=VERSION_TIMEOUT_SECONDS)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unknown ({exc})"
    return (done.stdout.splitlines() or ["unknown"])[0].strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--games", type=int, default=20, help="games to play (colours alternate)")
    parser.add_argument("--model", help="the network (default: katacli's default network)")
    parser.add_argument("--gnugo", help="path of the gnugo executable (default: search PATH and /usr/games)")
    parser.add_argument("--sgf-dir", help="save every game as an SGF file here")
    parser.add_argument("--seed", type=int, default=1, help="katacli's search seed")
    parser.add_argument("--json-out", help="also write the result as JSON here (benchmarks/default_net_vs_gnugo.json "
                                           "is shown in benchmarks/default_net.md by default_net_record.py)")
    args = parser.parse_args(argv)
    if args.games < 1:
        parser.error("--games must be at least 1")

    gnugo = play_vs_gnugo.find_gnugo(args.gnugo)
    if gnugo is None:
        print(f"error: GNU Go is not installed, so the moonshot cannot be played. {play_vs_gnugo.INSTALL_HINT}",
              file=sys.stderr)
        return play_vs_gnugo.EXIT_NO_GNUGO
    version = gnugo_version(gnugo)
    if not version.startswith(EXPECTED_GNUGO):
        print(f"note: the moonshot is defined against {EXPECTED_GNUGO}; {gnugo} is {version}", file=sys.stderr)
    print(f"moonshot: {version} ({gnugo}) at level {MOONSHOT_LEVEL}")
    play_args = ["--visits", str(MOONSHOT_VISITS), "--level", str(MOONSHOT_LEVEL), "--size", str(MOONSHOT_SIZE),
                 "--komi", f"{MOONSHOT_KOMI:g}", "--games", str(args.games), "--gnugo", gnugo,
                 "--seed", str(args.seed)]
    if args.model:
        play_args += ["--model", args.model]
    if args.sgf_dir:
        play_args += ["--sgf-dir", args.sgf_dir]
    if args.json_out:
        play_args += ["--json-out", args.json_out]
    return play_vs_gnugo.main(play_args)


if __name__ == "__main__":
    sys.exit(main())
