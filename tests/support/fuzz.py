"""Hostile input lines for the GTP and analysis fuzz tests (test_fuzz_protocols.py): random unicode,
invalid UTF-8 bytes (as the engines decode them), 1 MB lines, JSON nested 10,000 deep and hostile file
paths; and a watchdog that tells a hang (one line taking far too long) from slow progress.
"""
from __future__ import annotations

import json
import os
import random
import threading
import time
from pathlib import Path
from typing import Callable, Iterable

from katacli.gtp.identity import KNOWN_COMMANDS

MEGABYTE = 1 << 20
DEEP_NESTING = 10_000
# One in this many lines is a 1 MB line (100,000 lines: about 20 of them).
HUGE_LINE_EVERY = 5_000
# A single line that takes this long means the engine hangs (the slowest legitimate line, a search
# with a few visits on a small board, takes well under a second).
HANG_SECONDS = 120.0
WATCH_INTERVAL_SECONDS = 0.5
# Unicode beyond ASCII: accented letters, CJK, symbols, emoji, and the private-use plane.
UNICODE_RANGES = [(0x80, 0x2FF), (0x370, 0x3FF), (0x4E00, 0x4FFF), (0x2000, 0x206F), (0x1F300, 0x1F6FF),
                  (0xE000, 0xE0FF), (0xFFF0, 0xFFFD)]


# Commands whose random arguments could legitimately run for a long time (a benchmark of a billion
# visits, search limits lifted by kata-set-param) or write files; they get fixed, safe arguments.
SAFE_ONLY = {
    "kata-benchmark": ["x", "", "-1", "0 0"],
    "kata-set-param": ["", "noSuch 1", "cpuctExploration -1", "a b c", "cpuctExploration 1.1"],
    "kata-set-params": ["", "{", "[1]", '{"noSuch":1}'],
    "printsgf": ["", "-", "a b"],
    "loadsgf": ["", "no-such-file.sgf", "no-such-file.sgf 3", "a b c"],
    "quit": [""],  # keep the loop going; quit is tested elsewhere
}
EXTRA_NAMES = ["analyze", "genmove_analyze", "kata-get-params", "kata-set-params", "", "#", "GENMOVE", "play\x00",
               "boardsize:", "=1", "?", "0", "12345678901234567890", "kata-analyze\t", "lz-analyze#x"]
ATOMS = [
    "b", "w", "B", "W", "black", "WHITE", "x", "pass", "PASS", "resign", "A1", "a1", "E5", "J9", "T19", "Z25", "I5",
    "A0", "A-1", "(0,0)", "(4,4)", "(99,99)", "(1,", "0", "1", "2", "5", "7", "9", "19", "20", "-1", "-0", "+3",
    "1e3", "1.5", ".5", "nan", "inf", "-inf", "0x10", "99999999999999999999", "true", "false", "maybe", "all",
    "interval", "minmoves", "maxmoves", "avoid", "allow", "ownership", "rootInfo", "pvVisits", "movesOwnership",
    "chinese", "japanese", "tromp-taylor", "nogo", "aga", "ko", "scoring", "SIMPLE", "TERRITORY", '{"ko":"SIMPLE"}',
    "{", "}", "[]", "none", "absolute", "byoyomi", "canadian", "fischer", "fischer-capped", "alive", "dead", "seki",
    "C3,D4", ",", "9:13", "13:9", "é", "\u00ff", "\x01", "\x7f", "\t", "\r", "#comment", "''", '"', "\\", "%s", "{}",
]


def random_gtp_line(rng: random.Random) -> str:
    """A random GTP command line: known and near-miss names with hostile arguments, some garbage."""
    roll = rng.random()
    if roll < 0.05:  # pure garbage bytes
        return "".join(chr(rng.randrange(0, 256)) for _ in range(rng.randrange(0, 40)))
    name = rng.choice(list(KNOWN_COMMANDS) + EXTRA_NAMES)
    if name in SAFE_ONLY:
        args = rng.choice(SAFE_ONLY[name])
    else:
        args = " ".join(rng.choice(ATOMS) for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4, 6, 12])))
    prefix = str(rng.randrange(1000)) + rng.choice(["", " ", "  "]) if rng.random() < 0.3 else ""
    line = f"{prefix}{name} {args}"
    if rng.random() < 0.05:
        line = line.replace(" ", rng.choice(["\t", "  ", " \r "]))
    if rng.random() < 0.05:
        line += "\r"
    return line


def random_unicode(rng: random.Random, length: int) -> str:
    chars = []
    for _ in range(length):
        low, high = rng.choice(UNICODE_RANGES)
        chars.append(chr(rng.randint(low, high)))
    return "".join(chars)


def invalid_utf8(rng: random.Random, length: int, decode: Callable[[bytes], str]) -> str:
    """Random bytes heavy in stray continuation and lead bytes, decoded as the engine decodes stdin."""
    pieces = [bytes([rng.choice([0x80, 0xBF, 0xC0, 0xC1, 0xE0, 0xF0, 0xF5, 0xFE, 0xFF, rng.randrange(256)])])
              for _ in range(length)]
    return decode(b"".join(pieces).replace(b"\n", b" "))


def hostile_paths(tmp_path: Path) -> list[str]:
    """Paths an engine may be asked to read or write: devices, pipes, directories, the impossible. Run
    with ``tmp_path`` as the working directory: relative names that can be written land there, and
    no path names a file outside it that could be created or overwritten."""
    fifo = tmp_path / "a-pipe"
    if not fifo.exists() and hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
    return ["/dev/zero", "/dev/null", "/dev/full", "/dev/urandom", ".", "..", str(tmp_path), str(fifo),
            "no/such/dir/game.sgf", "x" * 5000, "bad\x00name.sgf", "../" * 40 + "no-such-dir/game.sgf", "~", "$HOME",
            "/proc/self/status", "-", "--", " ", "\t", "é.sgf", "\U0001F600.sgf", "CON", "nul:", "a" * 255 + ".sgf"]


def huge_line(rng: random.Random, prefix: str) -> str:
    body = rng.choice(["A", "9", "#", "[", " ", "é", "\x00"]) * MEGABYTE
    return prefix + body


def hostile_gtp_line(rng: random.Random, paths: list[str]) -> str:
    """A GTP line: mostly the plain fuzz mix, plus the hostile kinds."""
    if rng.randrange(HUGE_LINE_EVERY) == 0:
        return huge_line(rng, rng.choice(["play b ", "komi ", "boardsize ", "kata-analyze ", "", "loadsgf "]))
    roll = rng.random()
    if roll < 0.08:
        return rng.choice(["play b ", "name ", "kata-set-rules ", "", "genmove "]) + random_unicode(rng, rng.randrange(1, 60))
    if roll < 0.16:
        return invalid_utf8(rng, rng.randrange(1, 60), lambda b: b.decode("latin-1"))
    if roll < 0.20:
        command = rng.choice(["loadsgf", "printsgf"])
        return f"{command} {rng.choice(paths)}" + rng.choice(["", " 3", " -1", " x"])
    return random_gtp_line(rng)


# ---------------------------------------------------------------------------- analysis queries

SMALL_BOARDS = [2, 3, 5, 7]
FIELD_VALUES = [None, True, False, 0, -1, 1, 2, 3, 1.5, -0.5, 1e308, float("nan"), "", "x", "A1", "pass", [], {},
                [[]], [["B", "A1"]], [["W", "Z99"]], [["B"]], {"a": 1}, "tromp-taylor", "japanese", "\u00e9",
                "\x00", "\uffff", 2 ** 70, -(2 ** 70)]
QUERY_FIELDS = ["id", "moves", "initialStones", "initialPlayer", "rules", "komi", "boardXSize", "boardYSize",
                "analyzeTurns", "maxVisits", "rootPolicyTemperature", "includeOwnership", "includePolicy",
                "includePVVisits", "avoidMoves", "allowMoves", "overrideSettings", "reportDuringSearchEvery",
                "priority", "priorities", "whiteHandicapBonus", "humanSLProfile", "noSuchField"]
# Fields whose random values could make one search run for hours: kept to a few visits.
VISIT_LIMITS = [1, 2, 3]
ACTIONS = ["terminate", "terminate_all", "query_version", "clear_cache", "query_models", "no_such_action", 7]


def small_query(rng: random.Random, query_id) -> dict:
    size = rng.choice(SMALL_BOARDS)
    return {"id": query_id, "moves": [], "rules": "tromp-taylor", "komi": 7.5, "boardXSize": size,
            "boardYSize": size, "maxVisits": rng.choice(VISIT_LIMITS)}


def mutated_query(rng: random.Random) -> dict:
    query = small_query(rng, rng.choice(["q", "", 5, None, "\u00e9", "x" * 300]))
    for _ in range(rng.randrange(0, 4)):
        field = rng.choice(QUERY_FIELDS)
        query[field] = rng.choice(FIELD_VALUES)
    if rng.random() < 0.1:
        query["overrideSettings"] = {rng.choice(["maxVisits", "logFile", "rootNumSymmetriesToSample",
                                                 "wideRootNoise", "noSuchKey", "humanSLProfile"]):
                                     rng.choice([1, 2, "/dev/full", "x", -1, None, [1]])}
    # Searches stay short whatever the mutations did: a few visits, no endless limits.
    query["maxVisits"] = rng.choice(VISIT_LIMITS)
    query.setdefault("overrideSettings", {})
    if isinstance(query["overrideSettings"], dict):
        query["overrideSettings"]["maxVisits"] = rng.choice(VISIT_LIMITS)
    return query


def deep_json(rng: random.Random) -> str:
    kind = rng.choice(["array", "object", "in-id", "in-moves"])
    if kind == "array":
        return "[" * DEEP_NESTING + "]" * DEEP_NESTING
    if kind == "object":
        return '{"a":' * DEEP_NESTING + "1" + "}" * DEEP_NESTING
    nested = "[" * DEEP_NESTING + "]" * DEEP_NESTING
    if kind == "in-id":
        return '{"id":' + nested + "}"
    return '{"id":"deep","boardXSize":5,"boardYSize":5,"rules":"tromp-taylor","komi":7.5,"moves":' + nested + "}"


def hostile_analysis_line(rng: random.Random) -> str:
    if rng.randrange(HUGE_LINE_EVERY) == 0:
        return huge_line(rng, rng.choice(['{"id":"', "", '{"id":"big","moves":[']))
    roll = rng.random()
    if roll < 0.02:
        return deep_json(rng)
    if roll < 0.10:
        return '{"id":"' + random_unicode(rng, rng.randrange(1, 40)) + '"' + rng.choice(["}", "", ",", ':"x"}'])
    if roll < 0.18:  # the engine reads stdin as UTF-8 with replacement characters
        return invalid_utf8(rng, rng.randrange(1, 60), lambda b: b.decode("utf-8", errors="replace"))
    if roll < 0.24:
        return json.dumps({"id": rng.choice(["a", "q", 3]), "action": rng.choice(ACTIONS),
                           "terminateId": rng.choice(["q", "a", 5, None])})
    if roll < 0.30:
        text = json.dumps(mutated_query(rng))
        cut = rng.randrange(len(text))
        return text[:cut] + rng.choice(["", "}", "]", '"', "\\", ",,", "\u2028"]) + text[cut:]
    if roll < 0.32:  # a real search now and then (a few visits)
        return json.dumps(small_query(rng, f"ok{rng.randrange(1000)}"))
    return json.dumps(mutated_query(rng), allow_nan=True)


# ---------------------------------------------------------------------------- running with a watchdog


def feed_with_watchdog(handle: Callable[[str], None], lines: Iterable[str], finish: Callable[[], None],
                       output_size: Callable[[], int]) -> None:
    """Feed every line, then ``finish()``, in a thread; fail if the engine raises, or if HANG_SECONDS
    pass with neither a line taken nor any output written (a hang, not slowness: queued searches
    finishing after the last line count as progress)."""
    progress = {"done": 0, "line": "", "error": None, "finished": False}

    def run():
        try:
            for line in lines:
                progress["line"] = line
                handle(line)
                progress["done"] += 1
            progress["line"] = "(finishing)"
            finish()
            progress["finished"] = True
        except BaseException as exc:  # reported with the line that caused it
            progress["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    seen, since = (-1, -1), time.monotonic()
    while worker.is_alive():
        worker.join(WATCH_INTERVAL_SECONDS)
        now = (progress["done"], output_size())
        if now != seen:
            seen, since = now, time.monotonic()
        elif time.monotonic() - since > HANG_SECONDS:
            raise AssertionError(f"hung after {seen[0]} lines on {progress['line'][:200]!r}")
    assert progress["error"] is None, f"died on {progress['line'][:200]!r}: {progress['error']!r}"
    assert progress["finished"]
