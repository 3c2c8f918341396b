#!/usr/bin/env python3
"""Differential GTP testing: the same random command streams through `kata gtp` and a KataGo binary.

    python3 benchmarks/compare_katago_gtp.py --katago /path/to/katago --model NET.bin.gz
        [--config gtp.cfg] [--lines 2000] [--seed 1] [--streams 1] [--check-boards]

Both engines get the same network, config and commands. For every command the answers are compared
on `=` / `?` (texts may differ: katacli words some errors its own way, and its board hash is its
own); with --check-boards, `showboard` after each command also compares the stones and the player to
move. The first divergence is reported with the commands before it and both answers; exit status 1.

The streams mix what changes the game (boardsize, clear_board, play, undo, set_position, the handicap
commands, loadsgf of small generated SGF files, komi, kata-set-rules) with queries (known_command
with odd spacing, kata-get-rules, get_komi, showboard). Searches are left out: their moves depend on
timing and randomness. Commands where katacli answers differently on purpose (README, "Where
katacli answers differently") are skipped: see DELIBERATE.

Any two GTP engines can be compared: --kata-command replaces the katacli command line.
"""
from __future__ import annotations

import argparse
import os
import random
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parent))
from kata_env import REPO, require_katago  # noqa: E402

COLUMNS = "ABCDEFGHJKLMNOPQRST"
SIZES = (5, 7, 9, 13, 19)
CONTEXT_LINES = 12
ENGINE_TIMEOUT_SECONDS = 120
# Commands katacli answers differently from KataGo on purpose (see README): (name, predicate on args).
DELIBERATE = {
    "kata-get-rules": lambda args: bool(args),  # KataGo answers `=` with an error text
}
RULES = ("tromp-taylor", "chinese", "japanese", "korean", "aga", "new-zealand", "stone-scoring")
KNOWN_NAMES = ("play", "undo", "genmove", "debug_moves", "frobnicate", "kata-analyze", "loadsgf")


@dataclass
class StreamState:
    """What the generator assumes about the game, to make plausible commands (it needs not be exact)."""

    size: int = 19
    sgf_files: list = field(default_factory=list)


def _vertex(rng: random.Random, size: int, allow_pass: bool = True) -> str:
    if allow_pass and rng.random() < 0.05:
        return "pass"
    if rng.random() < 0.02:
        return rng.choice(["Z99", "I5", "A0", "xx"])  # unparseable or off the board
    return f"{COLUMNS[rng.randrange(size)]}{rng.randrange(size) + 1}"


def _color(rng: random.Random) -> str:
    return rng.choice(["b", "w", "B", "W", "black", "white"])


def write_random_sgf(rng: random.Random, directory: Path, index: int) -> str:
    """A small SGF (setup stones and a few moves, possibly out of turn) for loadsgf."""
    size = rng.choice(SIZES[:3])
    points = [(x, y) for x in range(size) for y in range(size)]
    rng.shuffle(points)
    coord = lambda p: "abcdefghijklmnopqrs"[p[0]] + "abcdefghijklmnopqrs"[p[1]]
    setup = "".join(f"[{coord(p)}]" for p in points[:rng.randrange(3)])
    moves = "".join(f";{rng.choice('BW')}[{coord(p)}]" for p in points[3:3 + rng.randrange(6)])
    text = f"(;FF[4]GM[1]SZ[{size}]KM[{rng.choice(['6.5', '7.5', '0'])}]" + (f"AB{setup}" if setup else "")
    path = directory / f"stream{index}.sgf"
    path.write_text(text + moves + ")")
    return str(path)


def random_command(rng: random.Random, state: StreamState, sgf_dir: Path) -> str:
    """One command of the random stream."""
    size = state.size
    roll = rng.random()
    if roll < 0.30:
        return f"play {_color(rng)} {_vertex(rng, size)}"
    if roll < 0.45:
        return "undo"
    if roll < 0.50:
        state.size = rng.choice(SIZES) if rng.random() < 0.7 else state.size
        return f"boardsize {state.size}"
    if roll < 0.54:
        return "clear_board"
    if roll < 0.58:
        stones = " ".join(f"{_color(rng)} {_vertex(rng, size, False)}" for _ in range(rng.randrange(4)))
        return f"set_position {stones}".rstrip()
    if roll < 0.63:
        vertices = " ".join(_vertex(rng, size, False) for _ in range(rng.randrange(4)))
        return f"set_free_handicap {vertices}".rstrip()
    if roll < 0.66:
        return f"fixed_handicap {rng.randrange(1, 10)}"
    if roll < 0.70:
        if not state.sgf_files or rng.random() < 0.3:
            state.sgf_files.append(write_random_sgf(rng, sgf_dir, len(state.sgf_files)))
        path = rng.choice(state.sgf_files)
        command = f"loadsgf {path}" + (f" {rng.randrange(0, 8)}" if rng.random() < 0.5 else "")
        state.size = 0  # unknown until the next boardsize; vertices below are then guesses
        return command
    if roll < 0.75:
        return f"komi {rng.choice(['6.5', '7', '0.5', '-3', 'x', '1000'])}"
    if roll < 0.78:
        return f"kata-set-rules {rng.choice(RULES)}"
    if roll < 0.85:
        spaces = " " * rng.choice([1, 1, 2])
        return f"known_command{spaces}{rng.choice(KNOWN_NAMES)}"
    if roll < 0.90:
        return "kata-get-rules" + (" x" if rng.random() < 0.2 else "")
    if roll < 0.95:
        return "get_komi"
    return "showboard"


def random_stream(seed: int, lines: int, sgf_dir: Path) -> list[str]:
    rng = random.Random(seed)
    state = StreamState()
    out = ["boardsize 19"]
    while len(out) < lines:
        command = random_command(rng, state, sgf_dir)
        if state.size == 0:
            state.size = 9  # after loadsgf: most generated files are 9x9 or smaller
        out.append(command)
    return out


class GtpProcess:
    """A GTP engine as a subprocess: send a command, read its answer up to the blank line."""

    def __init__(self, argv: list[str]):
        self.argv = argv
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, text=True)

    def ask(self, command: str) -> str:
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RuntimeError(f"{shlex.join(self.argv)} exited (status {self.proc.poll()}) before {command!r}") from None
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{shlex.join(self.argv)} stopped answering after {command!r}")
            line = line.rstrip("\n")
            if not line and lines:
                return "\n".join(lines)
            if line or lines:
                lines.append(line)

    def close(self) -> None:
        try:
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(timeout=ENGINE_TIMEOUT_SECONDS)
        except (BrokenPipeError, subprocess.TimeoutExpired, ValueError):
            self.proc.kill()


def board_of(showboard: str) -> tuple:
    """The stones and the player to move from a showboard answer (the hash line and captures left out)."""
    rows = [line for line in showboard.splitlines()[1:] if line[:3].strip().isdigit()]
    stones = tuple(" ".join(ch for ch in row[3:] if ch in ".XO") for row in rows)
    to_move = next((line for line in showboard.splitlines() if line.startswith("Next player")), "")
    return stones, to_move


@dataclass
class Divergence:
    index: int
    command: str
    answers: tuple
    context: list

    def report(self) -> str:
        out = [f"first divergence at command {self.index + 1}: {self.command}"]
        out += ["  context (commands before it, with katacli's answer):"]
        out += [f"    > {c}\n      {a.splitlines()[0] if a else ''}" for c, a in self.context]
        out += [f"  katacli: {self.answers[0]!r}", f"  other:   {self.answers[1]!r}"]
        return "\n".join(out)


def compare(stream: list[str], first: GtpProcess, second: GtpProcess, check_boards: bool) -> Divergence | None:
    """Play ``stream`` through both engines; the first command whose `=` / `?` (or board) differs."""
    history: list = []
    for index, command in enumerate(stream):
        a, b = first.ask(command), second.ask(command)
        name, *args = command.split()
        deliberate = DELIBERATE.get(name)
        if a[:1] != b[:1] and not (deliberate and deliberate(args)):
            return Divergence(index, command, (a, b), history[-CONTEXT_LINES:])
        if check_boards and not command.startswith("showboard"):
            board_a, board_b = board_of(first.ask("showboard")), board_of(second.ask("showboard"))
            if board_a != board_b:
                return Divergence(index, command + "  (then showboard)", ("\n".join(board_a[0]) + "\n" + board_a[1],
                                  "\n".join(board_b[0]) + "\n" + board_b[1]), history[-CONTEXT_LINES:])
        history.append((command, a))
    return None


def engine_argv(command: str | None, model: str | None, config: str | None) -> list[str]:
    argv = shlex.split(command) if command else [sys.executable, "-P", "-m", "katacli.cli"]
    argv.append("gtp")
    if model:
        argv += ["-model", model]
    if config:
        argv += ["-config", config]
    return argv


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--katago", default=os.environ.get("KATAGO_BINARY"),
                        help="KataGo binary (default: $KATAGO_BINARY)")
    parser.add_argument("--kata-command", default=None, help="katacli command line (default: this Python's katacli)")
    parser.add_argument("--model", help="network for both engines")
    parser.add_argument("--config", help="GTP config for both engines")
    parser.add_argument("--lines", type=int, default=2000, help="commands per stream")
    parser.add_argument("--streams", type=int, default=1, help="number of streams (seeds seed, seed+1, ...)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check-boards", action="store_true", help="also compare showboard after each command")
    args = parser.parse_args(argv)
    if not args.katago:
        parser.error("give --katago PATH or set KATAGO_BINARY")
    other = shlex.split(args.katago)
    require_katago(other[0])
    if not args.config:   # KataGo's gtp needs one (as the other comparison scripts, the shipped example)
        args.config = str(REPO / "configs" / "gtp_example.cfg")
    other_argv = other + ([] if other[-1] == "gtp" else ["gtp"])
    if args.model:
        other_argv += ["-model", args.model]
    if args.config:
        other_argv += ["-config", args.config]
    with tempfile.TemporaryDirectory() as tmp:
        for stream_index in range(args.streams):
            stream = random_stream(args.seed + stream_index, args.lines, Path(tmp))
            kata, katago = GtpProcess(engine_argv(args.kata_command, args.model, args.config)), GtpProcess(other_argv)
            try:
                divergence = compare(stream, kata, katago, args.check_boards)
            except RuntimeError as exc:  # an engine died or could not start
                print(f"error: {exc}", file=sys.stderr)
                return 2
            finally:
                kata.close()
                katago.close()
            if divergence is not None:
                print(f"stream {stream_index} (seed {args.seed + stream_index}):\n{divergence.report()}")
                return 1
            print(f"stream {stream_index} (seed {args.seed + stream_index}): {len(stream)} commands, no divergence")
    return 0


if __name__ == "__main__":
    sys.exit(main())
