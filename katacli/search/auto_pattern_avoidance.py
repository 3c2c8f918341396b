"""GTP's autoAvoidRepeat*: remember the moves `genmove` played and steer later games away from them.

As KataGo's gtp.cpp and setup.cpp do it:
* each genmove records the position it was asked on, the player and the move chosen;
* once autoAvoidRepeatSaveChunkSize are waiting (or at quit, always), they are written as KataGo's
  position-sample JSON lines (no moves, the move as hintLoc) to
  ``<autoAvoidRepeatDir>/<X>x<Y>/<16 hex digits>_poses.txt``, only those whose turn number lies
  within autoAvoidRepeatMin/MaxTurnNumber;
* at start-up, and at the clear_board after a save, every ``<X>x<Y>`` folder is read newest file
  first: up to autoAvoidRepeatMaxPoses valid positions, each weighted by autoAvoidRepeatLambda once
  more than the newer one, go into the pattern table; older files beyond that are deleted.
Each setting may be given per board size (autoAvoidRepeatUtility19x19 wins over
autoAvoidRepeatUtility); one given for no board size at all stops the start, and one a board size played
lacks is an error on stderr and in the log at each save (KataGo stops there).
"""
from __future__ import annotations

import json
import os
import random
import re
from dataclasses import dataclass, field
from typing import Callable, Optional

from katacli._core.board import GoBoard
from katacli._core.constants import MAX_BOARD_LEN
from katacli.game.coords import CoordError, format_color, format_vertex, parse_color, parse_vertex
from katacli.search.pattern_avoidance import PatternAvoidanceError, PatternBonusTable

POSES_SUFFIX = "poses.txt"
PARAMS = ("Utility", "Lambda", "MinTurnNumber", "MaxTurnNumber", "MaxPoses")
_SIZE_DIR = re.compile(r"([0-9]+)x([0-9]+)")
_PER_SIZE_KEY = re.compile(r"autoAvoidRepeat(Utility|Lambda|MinTurnNumber|MaxTurnNumber|MaxPoses)([0-9]+)x([0-9]+)")
MIN_BOARD_LEN = 2
_STONE_CHARS = {0: ".", 1: "X", 2: "O"}

Log = Callable[[str], None]


@dataclass(frozen=True)
class AutoAvoidSettings:
    directory: str
    save_chunk_size: int
    plain: dict = field(default_factory=dict)       # param -> value, where set
    per_size: dict = field(default_factory=dict)    # (param, x, y) -> value

    @classmethod
    def from_config(cls, cfg) -> Optional["AutoAvoidSettings"]:
        """None without autoAvoidRepeatDir (then KataGo ignores the other autoAvoidRepeat keys)."""
        if "autoAvoidRepeatDir" not in cfg:
            return None
        plain = {param: cfg.get(f"autoAvoidRepeat{param}") for param in PARAMS if f"autoAvoidRepeat{param}" in cfg}
        per_size = {}
        for key in cfg.keys():
            found = _PER_SIZE_KEY.fullmatch(key)
            if found:
                per_size[(found.group(1), int(found.group(2)), int(found.group(3)))] = cfg.get(key)
        return cls(cfg.get("autoAvoidRepeatDir"), cfg.get("autoAvoidRepeatSaveChunkSize"), plain, per_size)

    def check_complete(self) -> None:
        """Each setting given for some board size at least, else PatternAvoidanceError naming it. KataGo stops
        with that error later: at its first save for the turn limits (at quit, say), at the next start (once a
        board size's folder exists) for the others; katacli stops at start-up, before any game."""
        for name in PARAMS:
            if name not in self.plain and not any(param == name for param, _, _ in self.per_size):
                raise PatternAvoidanceError(f"autoAvoidRepeat{name} was not specified in the config "
                                            "(autoAvoidRepeatDir needs it)")

    def param(self, name: str, x_size: int, y_size: int):
        if (name, x_size, y_size) in self.per_size:
            return self.per_size[(name, x_size, y_size)]
        if name not in self.plain:
            raise PatternAvoidanceError(f"autoAvoidRepeat{name} was not specified in the config")
        return self.plain[name]


@dataclass(frozen=True)
class GenmoveSample:
    """A position genmove was asked on and the move it chose (KataGo's moveless PositionSample)."""

    board: GoBoard
    player: int
    turn_number: int
    move: Optional[tuple[int, int]]    # None: pass

    def to_json_line(self) -> str:
        x_size, y_size = self.board.x_size, self.board.y_size
        rows = self.board.colors()
        data = {
            "board": "".join("".join(_STONE_CHARS[c] for c in row) + "/" for row in rows),
            "hintLoc": format_vertex(self.move, x_size, y_size), "initialTurnNumber": self.turn_number,
            "moveLocs": [], "movePlas": [], "nextPla": format_color(self.player), "weight": 1.0,
            "xSize": x_size, "ySize": y_size,
        }
        return json.dumps(data, sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json_line(cls, line: str) -> tuple["GenmoveSample", int]:
        """The sample and its number of moves (valid saved samples have none). ValueError if unreadable."""
        data = json.loads(line)
        try:
            x_size, y_size = int(data["xSize"]), int(data["ySize"])
            rows = [row for row in str(data["board"]).split("/") if row]
            if len(rows) != y_size or any(len(row) != x_size for row in rows):
                raise ValueError("board does not match xSize / ySize")
            board = GoBoard.from_diagram("\n".join(row.replace("*", ".") for row in rows))
            player = parse_color(str(data["nextPla"]))
            move = parse_vertex(str(data["hintLoc"]), x_size, y_size)
            num_moves = len(data["moveLocs"])
            return cls(board, player, int(data["initialTurnNumber"]), move), num_moves
        except (KeyError, TypeError, CoordError) as e:
            raise ValueError(f"bad position line: {e}") from None


class AutoAvoidRecorder:
    """The genmove samples not yet saved, and whether the table should be reloaded."""

    def __init__(self, settings: AutoAvoidSettings, rng: random.Random):
        self.settings = settings
        self.rng = rng
        self.samples: list[GenmoveSample] = []
        self.should_reload = False

    def record(self, sample: GenmoveSample) -> None:
        self.samples.append(sample)

    def maybe_save(self, force: bool, log: Log) -> Optional[str]:
        """Write the waiting samples once a chunk is full (always when force), KataGo's maybeSaveAvoidPatterns;
        -> the error, when a board size played lacks its turn limits (the samples wait: the game goes on)."""
        if not self.samples or (not force and len(self.samples) < self.settings.save_chunk_size):
            return None
        try:
            saved = save_samples(self.samples, self.settings, self.rng, log)
        except PatternAvoidanceError as exc:
            return str(exc)
        if saved:
            self.samples = []
            self.should_reload = True
        return None


def save_samples(samples: list[GenmoveSample], settings: AutoAvoidSettings, rng: random.Random, log: Log) -> bool:
    file_name = f"{rng.getrandbits(64):016x}_{POSES_SUFFIX}"
    lines_by_size: dict[tuple[int, int], list[str]] = {}
    for sample in samples:
        x_size, y_size = sample.board.x_size, sample.board.y_size
        lo = settings.param("MinTurnNumber", x_size, y_size)
        hi = settings.param("MaxTurnNumber", x_size, y_size)
        if lo <= sample.turn_number <= hi:
            lines_by_size.setdefault((x_size, y_size), []).append(sample.to_json_line())
    for (x_size, y_size), lines in lines_by_size.items():
        path = os.path.join(settings.directory, f"{x_size}x{y_size}", file_name)
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write("".join(line + "\n" for line in lines))
        except OSError as e:
            log(f"ERROR: could not open {path}: {e.strerror or e}")
            return False
    log(f"Saved {len(samples)} avoid poses to {settings.directory}")
    return True


def load_and_prune(settings: AutoAvoidSettings, log: Log) -> PatternBonusTable:
    """The table of every board size's saved moves; deletes the files beyond MaxPoses."""
    base = settings.directory
    try:
        names = sorted(os.listdir(base))
    except OSError as e:
        raise PatternAvoidanceError(f"autoAvoidRepeatDir: cannot read directory {base}: {e.strerror or e}") from None
    table = PatternBonusTable()
    for name in names:
        found = _SIZE_DIR.fullmatch(name)
        path = os.path.join(base, name)
        if not found or not os.path.isdir(path):
            continue
        x_size, y_size = int(found.group(1)), int(found.group(2))
        if not (MIN_BOARD_LEN <= x_size <= MAX_BOARD_LEN and MIN_BOARD_LEN <= y_size <= MAX_BOARD_LEN):
            continue
        _load_size_dir(table, path, settings, x_size, y_size, log)
    return table


def _load_size_dir(table: PatternBonusTable, path: str, settings: AutoAvoidSettings, x_size: int, y_size: int,
                   log: Log) -> None:
    penalty = settings.param("Utility", x_size, y_size)
    decay = settings.param("Lambda", x_size, y_size)
    lo = settings.param("MinTurnNumber", x_size, y_size)
    hi = settings.param("MaxTurnNumber", x_size, y_size)
    max_poses = settings.param("MaxPoses", x_size, y_size)
    files = []
    for root, _, names in os.walk(path):
        files.extend(os.path.join(root, n) for n in names if n.endswith(POSES_SUFFIX))
    files.sort(key=lambda f: os.stat(f).st_mtime_ns, reverse=True)
    used = invalid = errors = 0
    factor = 1.0
    index = 0
    for index, file_path in enumerate(files):  # index: where the pruning starts
        if used >= max_poses:
            break
        seen = PatternBonusTable()
        try:
            with open(file_path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError:
            lines = []   # removed meanwhile by another process pruning the same folder
        for line in lines:
            if not line.strip():
                continue
            try:
                sample, num_moves = GenmoveSample.from_json_line(line)
            except ValueError:
                errors += 1
                continue
            board = sample.board
            legal = sample.move is None or board.is_legal(sample.move, sample.player, True)
            if not (lo <= sample.turn_number <= hi) or num_moves != 0 or not legal:
                invalid += 1
                continue
            table.add_move(board, sample.move, sample.player, penalty * factor, seen, True)
            used += 1
            factor *= decay
    else:
        index = len(files)
    for old in files[index:]:
        log(f"Removing old pos file: {old}")
        try:
            os.remove(old)
        except OSError:
            pass
    log(f"Loaded avoid poses from {path}: numPosesUsed = {used}, numPosesInvalid = {invalid}, "
        f"numPosLoadErrors = {errors}")
