#!/usr/bin/env python3
"""Deterministic search parity with KataGo through the JSON analysis engines (issue 28), position by position.

    python3 benchmarks/compare_katago_analysis_search.py --katago /path/to/katago --model NET.bin.gz \\
        --config /path/to/KataGo/cpp/configs/analysis_example.cfg [--random 100 --seed 1 | --positions LIST]
        [--visits 200]

The GTP sibling (compare_katago_search.py) compares `kata-search` trees; this one sends the same
analysis query for each position (positions as in benchmarks/search_parity.py: the list, or --random N
from --seed) to `kata analysis` and `katago analysis`, both with the given config and DETERMINISTIC's
overrides (one analysis thread, one search thread, nnRandomize=false, no wide root noise), and compares
the answer's moveInfos: a position matches when the first move is the same and every move's visits are
within VISIT_TOLERANCE. Mismatches print both engines' most different moves. Exit status 0 whatever the
rate (this measures; it does not gate).
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

from kata_env import KATA_COMMAND, KATA_ENV, cpu_model
from search_parity import VISIT_TOLERANCE, Position, add_comparison_arguments, comparison_positions

DETERMINISTIC = ("logToStderr=false, logAllRequests=false, logAllResponses=false, logSearchInfo=false, logDir=, "
                 "numAnalysisThreads=1, numSearchThreadsPerAnalysisThread=1, nnRandomize=false, "
                 "nnRandSeed=parity, wideRootNoise=0.0")
ENGINE_NAMES = ("kata", "katago")
SHOWN_DIFFERENCES = 6


def query_for(position: Position, visits: int, index: int) -> dict:
    """The analysis query that sets up ``position`` (handicap stones as initial stones)."""
    query = {"id": f"q{index}", "moves": [[colour, vertex] for colour, vertex in position.moves],
             "rules": position.rules, "komi": position.komi, "boardXSize": position.x_size,
             "boardYSize": position.y_size, "maxVisits": visits}
    if position.handicap:
        query["initialStones"] = [["B", vertex] for vertex in position.handicap]
    if not position.moves:
        query["initialPlayer"] = position.to_move
    return query


class AnalysisEngine:
    """An analysis engine on pipes: a query sent, then its answer read (the JSON line with its id)."""

    def __init__(self, name: str, argv: list[str], env: dict | None = None):
        self.name = name
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     text=True, bufsize=1, env=env, cwd=tempfile.gettempdir())

    def send(self, query: dict) -> None:
        try:
            self.proc.stdin.write(json.dumps(query) + "\n")
            self.proc.stdin.flush()
        except BrokenPipeError:
            raise RuntimeError(f"{self.name} exited (status {self.proc.poll()})") from None

    def answer(self, query_id: str) -> dict:
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError(f"{self.name} exited while answering {query_id}")
            answer = json.loads(line)
            if answer.get("id") == query_id:
                if "error" in answer:
                    raise RuntimeError(f"{self.name} refused {query_id}: {answer['error']}")
                return answer

    def close(self) -> None:
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def compare(answers: dict[str, dict], position: Position) -> bool:
    visits = {name: {info["move"]: info["visits"] for info in answer["moveInfos"]} for name, answer in answers.items()}
    first = {name: answer["moveInfos"][0]["move"] if answer["moveInfos"] else "-" for name, answer in answers.items()}
    a, b = (visits[name] for name in ENGINE_NAMES)
    diffs = {move: (a.get(move, 0), b.get(move, 0)) for move in set(a) | set(b) if a.get(move, 0) != b.get(move, 0)}
    worst = max((abs(x - y) for x, y in diffs.values()), default=0)
    match = first["kata"] == first["katago"] and worst <= VISIT_TOLERANCE
    roots = {name: answer["rootInfo"]["visits"] for name, answer in answers.items()}
    print(f"{'MATCH   ' if match else 'MISMATCH'} {position.name:28s} {position.to_move} to move  "
          f"best {first['kata']:>5s}/{first['katago']:<5s} max move diff {worst:4d}  "
          f"root N {roots['kata']}/{roots['katago']}", flush=True)
    if diffs:
        shown = sorted(diffs.items(), key=lambda item: -abs(item[1][0] - item[1][1]))[:SHOWN_DIFFERENCES]
        print("    moves kata/katago: " + ", ".join(f"{m} {x}/{y}" for m, (x, y) in shown))
    return match


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_comparison_arguments(parser, "KataGo's analysis_example.cfg")
    args = parser.parse_args()
    positions = comparison_positions(args)
    common = ["-config", str(Path(args.config).resolve()), "-model", str(Path(args.model).resolve()),
              "-override-config", DETERMINISTIC]
    engines = {"kata": AnalysisEngine("kata", [*KATA_COMMAND, "analysis", *common], KATA_ENV),
               "katago": AnalysisEngine("katago", [args.katago, "analysis", *common])}
    print(f"CPU: {cpu_model()}; {len(positions)} positions at {args.visits} visits", flush=True)
    matched = 0
    try:
        for i, position in enumerate(positions):
            query = query_for(position, args.visits, i)
            for engine in engines.values():  # both search at once, one thread each
                engine.send(query)
            answers = {name: engine.answer(query["id"]) for name, engine in engines.items()}
            matched += compare(answers, position)
    except RuntimeError as exc:
        sys.exit(f"error: {exc}")
    finally:
        for engine in engines.values():
            engine.close()
    print(f"summary: {matched} of {len(positions)} positions match at {args.visits} visits "
          f"({100.0 * matched / len(positions):.1f}%; same best move and every move within {VISIT_TOLERANCE} visits)")


if __name__ == "__main__":
    main()
