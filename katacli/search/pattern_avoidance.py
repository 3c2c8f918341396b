"""Pattern avoidance: steer the search away from local shapes played before (KataGo 1.17.2).

Two sources of remembered shapes, both kept in a core PatternBonusTable (search_patterns.pxd
explains the hash and the sign convention):
* avoidRepeatedPatternUtility: the moves the player the search is for already played in this
  game, rebuilt at every search (:func:`search_pattern_table`);
* avoidSgf<N>Pattern* (GTP, analysis, match): the moves of SGF files, loaded once at start-up
  (:func:`load_sgf_pattern_table`), newest file first, each older file's penalty multiplied by
  Lambda once more; autoAvoidRepeat* (GTP) adds moves saved by earlier games
  (katacli.search.auto_pattern_avoidance).
The search adds the table's bonus to the utility of every node reached by a move of the player
it searches for whose shape is in the table.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Callable, Optional

from katacli._core.game_state import GameState
from katacli._core.search_patterns import PatternBonusTable, move_pattern_hash
from katacli.config_keys import default_value
from katacli.game.coords import BLACK, WHITE
from katacli.game.sgf import SgfError, invalid_sgf_line
from katacli.game.sgf_replay import SgfReplayError, replay_moves
from katacli.game.sgf_variations import load_sgf_tree

__all__ = ["PatternAvoidanceError", "PatternBonusTable", "SgfPatternSet", "load_sgf_pattern_table",
           "move_pattern_hash", "search_pattern_table", "collect_sgf_files"]

SGF_SUFFIXES = (".sgf", ".SGF")
# An SGF comment with this marker excludes its node's move (KataGo's).
SKIP_MARKER = "%SKIP%"

Log = Callable[[str], None]


class PatternAvoidanceError(ValueError):
    """Pattern files that cannot be used: a missing or unreadable directory, an unreplayable game."""


@dataclass(frozen=True)
class SgfPatternSet:
    """One avoidSgf<N>Pattern* group of a config (:meth:`of` fills in the registry's defaults)."""

    dirs: tuple[str, ...]
    utility: float                  # penalty per matching move, in utility (negative: attract)
    decay: float                    # Lambda: each older file's penalty is this times the next newer one's
    min_turn_number: int            # ignore moves before this many moves of history
    max_files: int                  # only the newest this many files
    allowed_names: tuple[str, ...] = ()   # only moves by players (PB / PW) with these names; empty: all
    dirs_key: str = "avoidSgfPatternDirs"  # the key that named `dirs`, for error messages

    @classmethod
    def of(cls, dirs: tuple[str, ...], utility: float, **changes) -> "SgfPatternSet":
        """A group with the registry's defaults for what `changes` leaves out (scripts, tests)."""
        defaults = {"decay": default_value("avoidSgfPatternLambda"),
                    "min_turn_number": default_value("avoidSgfPatternMinTurnNumber"),
                    "max_files": default_value("avoidSgfPatternMaxFiles")}
        return cls(tuple(dirs), utility, **{**defaults, **changes})


def search_pattern_table(external: Optional[PatternBonusTable], repeated_utility: float, state: GameState,
                         pla: int) -> Optional[PatternBonusTable]:
    """The table one search uses (KataGo rebuilds it at each beginSearch): the external (SGF or
    saved-move) table plus, with avoidRepeatedPatternUtility, every move `pla` already played in
    `state`'s game. None when neither applies."""
    if repeated_utility == 0.0:
        return external
    table = external.copy() if external is not None else PatternBonusTable()
    table.add_game_moves(state, repeated_utility if pla == BLACK else -repeated_utility, pla)
    return table


def collect_sgf_files(dirs_or_files: tuple[str, ...], key: str) -> list[str]:
    """The .sgf files in (below) each directory, or the files named; one-line error otherwise."""
    def fail(error: OSError):
        raise PatternAvoidanceError(f"{key}: cannot read directory {error.filename}: {error.strerror or error}")

    files: list[str] = []
    for entry in dirs_or_files:
        path = entry if os.path.exists(entry) else entry.strip()
        if not path:
            continue
        if os.path.isfile(path):
            if not path.endswith(SGF_SUFFIXES):
                raise PatternAvoidanceError(f"{key}: {path} is not an .sgf file")
            files.append(path)
            continue
        if not os.path.isdir(path):
            raise PatternAvoidanceError(f"{key}: {path} does not exist")
        if not os.access(path, os.R_OK | os.X_OK):
            raise PatternAvoidanceError(f"{key}: cannot read directory {path}")
        for root, _, names in os.walk(path, onerror=fail):
            files.extend(os.path.join(root, name) for name in sorted(names) if name.endswith(SGF_SUFFIXES))
    return files


def newest_first(files: list[str]) -> list[str]:
    """By modification time, newest first (ties keep their order, as a stable sort)."""
    return sorted(files, key=lambda path: os.stat(path).st_mtime_ns, reverse=True)


def add_sgf_patterns(table: PatternBonusTable, patterns: SgfPatternSet, log: Log, source: str = "bot 0") -> None:
    """KataGo's avoidRepeatedSgfMoves: the moves of the newest max_files files into `table`.

    A file that cannot be parsed is logged and skipped (KataGo's "Invalid SGF"); a move that cannot
    be replayed stops with PatternAvoidanceError naming the file, as it stops KataGo."""
    factor = 1.0
    key = patterns.dirs_key
    for path in newest_first(collect_sgf_files(patterns.dirs, key))[:patterns.max_files]:
        try:
            tree = load_sgf_tree(path)
        except SgfError as e:
            log(invalid_sgf_line(path, e))
            continue
        names = patterns.allowed_names
        allowed = {BLACK: not names or tree.black_name in names, WHITE: not names or tree.white_name in names}
        seen = PatternBonusTable()   # each shape counts once per file
        try:
            for played in replay_moves(tree):
                if SKIP_MARKER in played.comment or played.moves_in_history < patterns.min_turn_number:
                    continue
                if allowed[played.player]:
                    table.add_move(played.board_before, played.move, played.player, patterns.utility * factor,
                                   seen, True)
        except SgfReplayError as e:
            raise PatternAvoidanceError(f"{key}: {e}") from None
        log(f"Added {len(seen)} shapes to penalize repeats for {source} from {path}")
        factor *= patterns.decay


def load_sgf_pattern_table(pattern_sets: list[SgfPatternSet], log: Log,
                           source: str = "bot 0") -> Optional[PatternBonusTable]:
    """One bot's table from its avoidSgf<N>Pattern* groups; None when it has none."""
    if not pattern_sets:
        return None
    table = PatternBonusTable()
    for patterns in pattern_sets:
        add_sgf_patterns(table, patterns, log, source)
    return table


# ---- config ------------------------------------------------------------------------------------
_SGF_GROUP_KEY = re.compile(r"avoidSgf([0-9]*)Pattern(Dirs|Utility|Lambda|MinTurnNumber|MaxFiles|AllowedNames)([0-9]*)")


def sgf_pattern_key_bot(key: str) -> Optional[int]:
    """The bot index an avoidSgf<N>Pattern* key ends with (avoidSgfPatternUtility3 -> 3), else None."""
    found = _SGF_GROUP_KEY.fullmatch(key)
    return int(found.group(3)) if found and found.group(3) else None


def sgf_pattern_sets_from_config(cfg, bot_index: int = 0) -> list[SgfPatternSet]:
    """The avoidSgf<N>Pattern* groups of one bot, as KataGo's loadAvoidSgfPatternBonusTables reads them:
    group N (none = 1) is used when its Utility is set; each key may carry the bot's index as a suffix
    (avoidSgfPatternUtility0), which wins over the plain key. Every key of a used group is read."""
    groups: set[str] = set()
    for key in cfg.keys():
        found = _SGF_GROUP_KEY.fullmatch(key)
        # Group 1 is spelled without a number; KataGo never reads avoidSgf0Pattern* or avoidSgf1Pattern*.
        if found and found.group(3) in ("", str(bot_index)) and (found.group(1) == "" or int(found.group(1)) >= 2):
            groups.add(found.group(1))
    sets = []
    for group in sorted(groups, key=lambda g: int(g or 1)):
        def key_of(suffix: str, group=group) -> str:
            """The bot's own key, else the plain one (which, unset, gives the registry's default)."""
            plain = f"avoidSgf{group}Pattern{suffix}"
            return next((name for name in (plain + str(bot_index), plain) if name in cfg), plain)

        if cfg.get(key_of("Utility")) is None:
            continue  # KataGo reads a group only when its utility is set: its other keys are then unused
        values = {suffix: cfg.get(key_of(suffix)) for suffix in ("Dirs", "Utility", "Lambda", "MinTurnNumber",
                                                                 "MaxFiles", "AllowedNames")}
        if not values["Dirs"]:
            raise PatternAvoidanceError(f"avoidSgf{group}PatternUtility is set but avoidSgf{group}PatternDirs is not")
        sets.append(SgfPatternSet(
            dirs=tuple(values["Dirs"]), utility=values["Utility"], decay=values["Lambda"],
            min_turn_number=values["MinTurnNumber"], max_files=values["MaxFiles"],
            allowed_names=tuple(name.strip() for name in values["AllowedNames"] or () if name.strip()),
            dirs_key=key_of("Dirs"),
        ))
    return sets
