"""Where finished games go: training rows into ``tdata/*.h5`` and records into ``sgfs/*.sgfs``.

One :class:`GameOutput` runs on the writer thread. Each model gets its own
:class:`~katacli.data.TrainingDataWriter` (files hold one model's games, like KataGo's
per-model tdata directories); when games of a newer model arrive, the older models'
buffered rows are flushed. SGFs are appended one game per line (KataGo's ``.sgfs``)
with a single ``write`` each, so a killed process leaves at most whole lines.
"""
from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Optional

from katacli.data.schema import (MODE_ASYM, MODE_CLEANUP, MODE_FORK, MODE_HANDICAP, MODE_HINTFORK, MODE_HINTPOS,
                                  MODE_NORMAL, MODE_SGFPOS)
from katacli.data.files import append_whole
from katacli.data.writer import TrainingDataWriter
from katacli._core.game_state import GameState
from katacli.game.coords import BLACK, WHITE, Point
from katacli.game.rules import format_komi, rules_of
from katacli.game.sgf import SgfGame, values_comment, with_passes_for_ko, with_result_comment, write_sgf
from katacli.game.sgf import passes_for_ko as find_passes_for_ko
from katacli.selfplay.opening import initial_position
from katacli.selfplay.records import FinishedGame
from katacli.selfplay.rows import game_rows

TDATA_DIR = "tdata"
SGFS_DIR = "sgfs"
SGFS_SUFFIX = ".sgfs"


def result_string(game: FinishedGame) -> str:
    """SGF RE: "B+3.5", "W+12", "0" for a draw, "Void" for no result."""
    scored = game.scored_state or game.end_state
    if scored.is_no_result:
        return "Void"
    if scored.winner not in (BLACK, WHITE):
        return "0"
    if scored.is_resignation:
        return ("B" if scored.winner == BLACK else "W") + "+R"
    return ("B" if scored.winner == BLACK else "W") + "+" + format_komi(abs(scored.final_white_minus_black_score))


GAME_TYPE_NAMES = {MODE_NORMAL: "normal", MODE_CLEANUP: "cleanuptraining", MODE_FORK: "fork",
                   MODE_HANDICAP: "handicap", MODE_SGFPOS: "sgfpos", MODE_HINTPOS: "hintpos",
                   MODE_HINTFORK: "hintfork", MODE_ASYM: "asym"}


def game_comment(game: FinishedGame) -> str:
    """The root comment KataGo's self-play SGFs carry: where training starts, the game's hash and type."""
    sign = 1 if game.pda_player == WHITE else -1
    return game_data_comment(game.start_turn_idx, game.initial_turn_number, game.game_hash, game.mode,
                             initial_encore_phase=game.initial_encore_phase,
                             used_initial_position=game.used_initial_position,
                             pda_white=sign * game.playout_doubling_advantage, changed_nets=game.changed_nets)


def game_data_comment(start_turn_idx: int, initial_turn_number: int, game_hash: tuple[int, int], mode: int, *,
                      initial_encore_phase: int = 0, used_initial_position: bool = False, pda_white: float = 0.0,
                      changed_nets=(), time_used: tuple[float, float] = (0.0, 0.0)) -> str:
    """KataGo's root comment of a self-play or match game (WriteSgf from FinishedGameData): where training
    starts, the turn number of the history's first board (0 unless the game began at a start or hint
    position), the game's hash and type, then what applies; ``time_used``: Black's and White's search
    seconds (match games)."""
    low, high = game_hash
    parts = [f"startTurnIdx={start_turn_idx}", f"initTurnNum={initial_turn_number}",
             f"gameHash={high:016X}{low:016X}", f"gtype={GAME_TYPE_NAMES.get(mode, 'other')}"]
    if initial_encore_phase:
        parts.append(f"beganInEncorePhase={initial_encore_phase}")
    if used_initial_position:
        parts.append("usedInitialPosition=1")
    if pda_white:
        parts.append(f"pdaWhite={pda_white:g}")
    parts += [f"newNeuralNetTurn{turn}={name}" for name, turn in changed_nets]
    if time_used[0] > 0 or time_used[1] > 0:   # (C++ stream formatting: 6 significant digits)
        parts += [f"bTimeUsed={time_used[0]:.6g}", f"wTimeUsed={time_used[1]:.6g}"]
    return ",".join(parts)


def move_comments(game: FinishedGame) -> list[str]:
    """Per move, as in KataGo's SGFs: the search's White win/loss/no-result and score, visits, row weight."""
    comments = [""] * len(game.end_state.moves)
    for i, turn in enumerate(game.turns):
        index = game.start_turn_idx + i
        if index >= len(comments):
            break
        v = turn.targets.value
        weight = turn.target_weight if turn.target_weight_unrounded is None else turn.target_weight_unrounded
        comments[index] = (values_comment(v.win, v.loss, v.no_result, v.score, turn.targets.unreduced_visits)
                           + f" weight={weight:.2f}")
    if comments and game.end_state.is_game_finished and not game.hit_turn_limit:
        comments = with_result_comment(comments, result_string(game))
    return comments


def passes_for_ko(end: GameState, initial_encore_phase: int, pass_alive_under_suicide: bool) -> dict[int, Point]:
    """Move index -> point, for the moves of the game ending in ``end`` that were a "pass for ko" in the encore
    (territory scoring), replayed from its start in ``initial_encore_phase``."""
    if end.encore_phase == 0 and initial_encore_phase == 0:
        return {}
    state = initial_position(end, encore_phase=initial_encore_phase, pass_alive_under_suicide=pass_alive_under_suicide)
    return find_passes_for_ko(state, end.moves, lambda position, player, move: position.play(move, player))


def game_sgf(game: FinishedGame) -> str:
    """The whole game (handicap stones as setup, every move) as one SGF line, commented as KataGo does.

    A pass for ko is written as KataGo writes it: a pass, its point marked TR, "Pass for ko".
    """
    end = game.end_state
    record = SgfGame(
        x_size=end.x_size, y_size=end.y_size, komi=end.komi, rules=rules_of(end),
        handicap=game.handicap_for_sgf, setup=list(end.initial_stones()), first_player=end.initial_player,
        # No RE for a game stopped at maxMovesPerGame, as in KataGo's SGFs (its training targets are scored).
        moves=list(end.moves), result=None if game.hit_turn_limit else result_string(game),
        black_name=game.model_name, white_name=game.model_name,
        root_comment=game_comment(game), move_comments=move_comments(game),
    )
    ko_passes = passes_for_ko(end, game.initial_encore_phase, game.pass_alive_under_suicide)
    return write_sgf(with_passes_for_ko(record, ko_passes))


class GameOutput:
    """Writes finished games' rows and SGFs below ``output_dir`` (single writer thread)."""

    def __init__(self, output_dir: str | os.PathLike, pos_len: int, max_rows_per_file: int,
                 first_file_rand_min_prop: float, run_id: str, rng: Optional[random.Random] = None):
        self.output_dir = Path(output_dir)
        self.tdata_dir = self.output_dir / TDATA_DIR
        self.sgfs_dir = self.output_dir / SGFS_DIR
        self.tdata_dir.mkdir(parents=True, exist_ok=True)
        self.sgfs_dir.mkdir(parents=True, exist_ok=True)
        self.pos_len = pos_len
        self.max_rows_per_file = max_rows_per_file
        self.first_file_rand_min_prop = first_file_rand_min_prop
        self.run_id = run_id
        self.rng = rng or random.Random()
        self._writers: dict[str, TrainingDataWriter] = {}
        self._newest_model: Optional[str] = None
        self.sgf_path = self.sgfs_dir / f"{run_id}{SGFS_SUFFIX}"
        self._sgf_fd = os.open(self.sgf_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.rows_written = 0
        self.files_written: list[Path] = []
        self.games_written = 0

    def _writer_for(self, model_name: str) -> TrainingDataWriter:
        writer = self._writers.get(model_name)
        if writer is None:
            writer = TrainingDataWriter(self.tdata_dir, self.pos_len, self.max_rows_per_file,
                                        self.first_file_rand_min_prop, rng=random.Random(self.rng.getrandbits(64)),
                                        attrs={"model": model_name, "run": self.run_id})
            self._writers[model_name] = writer
        return writer

    def _note_file(self, path: Optional[Path], writer: TrainingDataWriter, rows_before: int) -> None:
        if path is not None:
            self.files_written.append(path)
            self.rows_written += writer.rows_written - rows_before

    def add(self, game: FinishedGame) -> int:
        """Write one game's SGF line and buffer its rows; returns its row count."""
        line = (game_sgf(game) + "\n").encode("utf-8")
        append_whole(self._sgf_fd, line, self.sgf_path)
        if game.model_name != self._newest_model:
            if self._newest_model is not None:
                self._flush_all(except_model=game.model_name)
            self._newest_model = game.model_name
        rows = game_rows(game, self.pos_len, self.rng)
        writer = self._writer_for(game.model_name)
        before = writer.rows_written
        self._note_file(writer.add_game(rows), writer, before)
        self.games_written += 1
        return int(rows["globalTargetsNC"].shape[0])

    def _flush_all(self, except_model: Optional[str] = None) -> None:
        for name, writer in self._writers.items():
            if name != except_model:
                before = writer.rows_written
                self._note_file(writer.flush(), writer, before)

    @property
    def buffered_rows(self) -> int:
        return sum(w.buffered_rows for w in self._writers.values())

    def close(self) -> None:
        """Flush every buffered row to files and close the SGF file."""
        self._flush_all()
        if self._sgf_fd >= 0:
            os.fsync(self._sgf_fd)
            os.close(self._sgf_fd)
            self._sgf_fd = -1
