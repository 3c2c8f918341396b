#!/usr/bin/env python3
"""Deterministic search parity with KataGo, position by position (issue 28).

    python3 benchmarks/compare_katago_search.py --katago /path/to/katago --model NET.bin.gz \\
        --config /path/to/KataGo/cpp/configs/gtp_example.cfg [--positions benchmarks/search_parity_positions.json]
        [--visits 200] [--only NAME,...] [--no-walk] [--random N --seed S] [--override K=V,...]
        [--human-model NET]

Both engines (``katago gtp`` and ``kata gtp``) get the same network, the same config and the overrides in
DETERMINISTIC (one search thread, nnRandomize=false, no move temperature, no logging, maxVisits from
--visits). For each position (format: benchmarks/search_parity.py) both are set up with the same GTP
commands, ``kata-search`` the player to move (the answer is the chosen move, with KataGo's genmove hacks:
friendly pass, cleanup before pass) and ``debug_moves`` prints the root's children. Printed per position:
whether the move is the same, the largest child visit difference, and for a mismatch the first differing
node of the two trees (walked with ``debug_moves BRANCH``) with both engines' children side by side.
Positions whose tree the friendly-pass check clears (an opponent's pass under area rules) are searched
again with ``kata-search_debug`` and compared through the genmove log's tree (MATCH10 / MISMAT10).
``--random N`` replaces the list by N positions drawn from ``--seed`` (random legal games on boards from 6x6
to 19x19 and rectangles, every ruleset, handicap stones, trailing passes: benchmarks/random_positions.py), so a
run can check positions nobody tuned against. ``--override`` adds settings for both engines (one at a time
is the way to find which one differs; on 2026-11-27, 15 random positions each, every setting tried matched
15 of 15 except rootNumSymmetriesToSample=2, whose sampled symmetries come from each engine's own random
numbers, and wideRootNoise, whose noise does). The summary counts a position as matching when the move is the same and every child is within
VISIT_TOLERANCE visits. Exit status 0 whatever the rate (this measures; it does not gate).
"""
from __future__ import annotations

import argparse
import queue
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from kata_env import KATA_COMMAND, KATA_ENV
from search_parity import (VISIT_TOLERANCE, Position, add_comparison_arguments, comparison_positions,
                           divergence_table, find_divergence, max_visit_difference, parse_debug_moves,
                           visit_differences)

DETERMINISTIC = ("logToStderr=false, logAllGTPCommunication=false, logSearchInfo=false, logDir=, "
                 "numSearchThreads=1, nnRandomize=false, nnRandSeed=parity, searchRandSeed=parity, "
                 "chosenMoveTemperature=0.0, chosenMoveTemperatureEarly=0.0, ponderingEnabled=false, "
                 "allowResignation=false, maxTime=1000000, maxPlayouts=100000000")
ENGINE_NAMES = ("kata", "katago")
LOG_WAIT_SECONDS = 30.0   # for the first line of a genmove log after the answer
LOG_QUIET_SECONDS = 0.5   # no more log lines for this long: the log has ended
SHOWN_DIFFERENCES = 6


class GtpEngine:
    """A GTP engine on pipes: one command at a time, the answer read up to its blank line."""

    def __init__(self, name: str, argv: list[str], env: dict | None = None):
        self.name = name
        # Started outside the checkout: `python -m katacli.cli` run from the repository root would import the
        # source tree (no compiled core) instead of the installed package.
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, bufsize=1, env=env, cwd=tempfile.gettempdir())
        # stderr carries the genmove log of kata-search_debug (and must be drained in any case).
        self.stderr_lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._drain_stderr, daemon=True).start()

    def _drain_stderr(self) -> None:
        for line in self.proc.stderr:
            self.stderr_lines.put(line.rstrip("\r\n"))

    def search_log(self, command: str) -> str:
        """Run a ``kata-search_debug`` and return the genmove log it wrote on stderr (up to its tree's
        last line: the log has no end mark, so lines are read until none come for a moment)."""
        while not self.stderr_lines.empty():
            self.stderr_lines.get_nowait()
        self.ask(command)
        lines, seen_tree = [], False
        while True:
            try:
                line = self.stderr_lines.get(timeout=LOG_QUIET_SECONDS if seen_tree else LOG_WAIT_SECONDS)
            except queue.Empty:
                return "\n".join(lines)
            seen_tree = seen_tree or line.startswith("Tree:")
            lines.append(line)

    def send(self, command: str) -> None:
        self.proc.stdin.write(command + "\n")
        self.proc.stdin.flush()

    def receive(self, command: str) -> str:
        lines = []
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} exited while answering '{command}'")
            line = line.rstrip("\r\n")
            if not lines and not line.strip():
                continue
            if lines and not line.strip():
                break
            lines.append(line)
        text = "\n".join(lines)
        if text.startswith("?"):
            raise RuntimeError(f"{self.name} refused '{command}': {text}")
        return text[1:].lstrip(" ") if text.startswith("=") else text

    def ask(self, command: str) -> str:
        self.send(command)
        return self.receive(command)

    def close(self) -> None:
        try:
            self.send("quit")
            self.proc.wait(timeout=30)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()


def ask_both(engines: dict[str, GtpEngine], command: str) -> dict[str, str]:
    """The same command to every engine at once (each searches with one thread), then the answers."""
    for engine in engines.values():
        engine.send(command)
    return {name: engine.receive(command) for name, engine in engines.items()}


def compare_position(engines: dict[str, GtpEngine], position: Position, walk: bool) -> tuple[bool, bool]:
    """(whether the searches match, whether debug_moves had a tree to compare). After an opponent's pass
    under area rules KataGo's friendly-pass check searches again and clears the tree (kata does the
    same), so ``debug_moves`` shows none: the search is then run again with ``kata-search_debug`` and the
    genmove log's tree compared (the root's 10 most visited children, written before the check)."""
    for command in position.setup_commands():
        ask_both(engines, command)
    start = time.perf_counter()
    moves = {name: answer.strip().upper() for name, answer in ask_both(engines, f"kata-search {position.to_move}").items()}
    seconds = time.perf_counter() - start
    trees = {name: parse_debug_moves(answer) for name, answer in ask_both(engines, "debug_moves").items()}
    has_tree = any(tree.node is not None for tree in trees.values())
    if not has_tree:
        trees = {name: parse_debug_moves(engine.search_log(f"kata-search_debug {position.to_move}"))
                 for name, engine in engines.items()}
    a, b = (trees[name] for name in ENGINE_NAMES)
    worst = max_visit_difference(a.children, b.children)
    same_move = moves["kata"] == moves["katago"]
    match = same_move and worst <= VISIT_TOLERANCE
    visits = {name: tree.node.visits if tree.node else 0 for name, tree in trees.items()}
    label = ("MATCH   " if match else "MISMATCH") if has_tree else ("MATCH10 " if match else "MISMAT10")
    print(f"{label} {position.name:28s} {position.to_move} to move  "
          f"move {moves['kata']:>5s}/{moves['katago']:<5s} max child diff {worst:4d}  "
          f"root N {visits['kata']}/{visits['katago']}  ({seconds:.1f}s)")
    differing = visit_differences(a.children, b.children)
    if differing:
        shown = sorted(differing.items(), key=lambda item: -abs(item[1][0] - item[1][1]))[:SHOWN_DIFFERENCES]
        print("    root children kata/katago: " + ", ".join(f"{m} {na}/{nb}" for m, (na, nb) in shown))
    if walk and differing and has_tree:
        def fetcher(name):
            return lambda path: parse_debug_moves(engines[name].ask("debug_moves " + " ".join(path)))
        div = find_divergence(fetcher("kata"), fetcher("katago"), a, b)
        if div is not None:
            print(f"    first differing node: {' '.join(div.path) or 'root'} "
                  f"(depth {len(div.path)}, N {div.a.node.visits if div.a.node else '?'}"
                  f"/{div.b.node.visits if div.b.node else '?'})")
            for line in divergence_table(div, ENGINE_NAMES):
                print(line)
    return match, has_tree


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_comparison_arguments(parser, "KataGo's gtp_example.cfg")
    parser.add_argument("--only", default="", help="comma-separated position names to run")
    parser.add_argument("--no-walk", action="store_true", help="skip the tree walk for mismatches")
    parser.add_argument("--kata-command", default=None,
                        help="command line for kata instead of this Python's `-m katacli.cli`")
    parser.add_argument("--override", default="", metavar="KEY=VALUE,...",
                        help="more -override-config settings for both engines, after the deterministic ones "
                             "(e.g. rootNumSymmetriesToSample=8)")
    parser.add_argument("--human-model", default=None, metavar="NET", help="-human-model for both engines")
    args = parser.parse_args()
    positions = comparison_positions(args)
    if args.only:
        wanted = set(args.only.split(","))
        unknown = wanted - {p.name for p in positions}
        if unknown:
            sys.exit(f"error: no position named {', '.join(sorted(unknown))}")
        positions = [p for p in positions if p.name in wanted]
    common = ["-config", str(Path(args.config).resolve()), "-model", str(Path(args.model).resolve()), "-override-config",
              f"{DETERMINISTIC}, maxVisits={args.visits}" + (f", {args.override}" if args.override else "")]
    if args.human_model:
        common += ["-human-model", str(Path(args.human_model).resolve())]
    kata_argv = args.kata_command.split() if args.kata_command else [*KATA_COMMAND]
    engines = {"kata": GtpEngine("kata", kata_argv + ["gtp"] + common, KATA_ENV),
               "katago": GtpEngine("katago", [args.katago, "gtp"] + common)}
    matched = moves_only = moves_only_matched = 0
    try:
        ask_both(engines, "name")
        for position in positions:
            match, has_tree = compare_position(engines, position, not args.no_walk)
            matched += match
            moves_only += not has_tree
            moves_only_matched += match and not has_tree
    except RuntimeError as exc:
        sys.exit(f"error: {exc}")
    finally:
        for engine in engines.values():
            engine.close()
    print(f"summary: {matched} of {len(positions)} positions match at {args.visits} visits "
          f"({100.0 * matched / len(positions):.1f}%; same move and every child within {VISIT_TOLERANCE} visits)")
    if moves_only:
        print(f"         of which {moves_only} (MATCH10/MISMAT10) compared through the genmove log's 10 most visited "
              f"root children (debug_moves had no tree after the friendly-pass check), {moves_only_matched} matching")


if __name__ == "__main__":
    main()
