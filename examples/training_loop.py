#!/usr/bin/env python3
"""The whole reinforcement loop on a small board, then a match to measure what it learned.

    generation 0: a random net of --model-kind in WORK/models/
    each generation:
        kata selfplay -models-dir WORK/models -output-dir WORK/selfplay -config C -max-games-total N
        kata train    -data-dir WORK/selfplay -output-dir WORK/train -export-dir WORK/models -max-samples S*g
                      (the export lands in WORK/models, where the next self-play picks it up)
    finally: kata gtp -model <newest> vs kata gtp -model <generation 0 or, with --baseline previous,
             the previous generation's net>, --match-games games,
             in pairs that share a random opening with colours swapped; the win rate and an
             Elo estimate are printed and saved to WORK/results.json.

Everything runs through the ``kata`` command line (``python3 -m katacli.cli`` unless --kata is
given), so this is also an end-to-end check of selfplay, train and gtp together. A quick look
(minutes on a CPU; the net barely improves):

    python3 examples/training_loop.py --work-dir /tmp/loop --generations 2 --games 16 --visits 16 --match-games 4

A run that shows a clear gain on a CPU (an hour or more; more generations keep improving):

    python3 examples/training_loop.py --work-dir loop9 --model-kind b6c96 --generations 6 --games 200 \\
        --visits 64 --train-samples 100000 --match-games 40

Rerunning with the same --work-dir continues where it stopped (training resumes from its
checkpoint; the generations already done are skipped).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import random
import shlex
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))  # run from a checkout without installing

SELFPLAY_EXAMPLE_CONFIG = REPO / "configs" / "selfplay_example.cfg"
GTP_EXAMPLE_CONFIG = REPO / "configs" / "gtp_example.cfg"
MATCH_MOVE_TIMEOUT_SECONDS = 300.0
MAX_MOVES_PER_BOARD_POINT = 3  # match games stop after this many moves per point
ELO_PER_LOG10_ODDS = 400.0
RANDOM_NET_NAME = "gen0-random"
GTP_COLUMNS = "ABCDEFGHJKLMNOPQRST"
MIN_CHEAP_VISITS = 5  # self-play refuses searches of fewer visits


class LoopError(Exception):
    """A piece of the loop is missing or failed; the message says which and what to do."""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ------------------------------------------------------------------------------- the kata CLI


class Kata:
    def __init__(self, command: str):
        self.prefix = shlex.split(command)
        self.env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, *args]

    def check_available(self, subcommand: str, needed_flags: tuple[str, ...]) -> None:
        """Fail clearly if ``kata SUBCOMMAND`` is missing or lacks a flag this loop needs."""
        try:
            done = subprocess.run(self.argv(subcommand, "--help"), env=self.env, capture_output=True, text=True,
                                  timeout=120)
        except FileNotFoundError:
            raise LoopError(f"cannot run {self.prefix[0]!r}; install katacli (pip install -e .) or pass --kata") from None
        if done.returncode != 0:
            raise LoopError(f"`kata {subcommand}` is not available in this katacli ({(done.stderr or done.stdout).strip()[-300:]}); "
                            f"the training loop needs it")
        text = done.stdout.replace("--", "-")
        missing = [flag for flag in needed_flags if flag not in text]
        if missing:
            raise LoopError(f"`kata {subcommand}` lacks {', '.join(missing)}; this example needs a newer katacli")

    def run(self, *args: str, what: str) -> None:
        log(f"$ kata {' '.join(shlex.quote(a) for a in args)}")
        done = subprocess.run(self.argv(*args), env=self.env)
        if done.returncode != 0:
            raise LoopError(f"{what} failed (exit status {done.returncode}); see its messages above")


# ------------------------------------------------------------------------------- configs


def selfplay_overrides(args) -> str:
    cheap = max(MIN_CHEAP_VISITS, args.visits // 4)
    return ",".join([
        f"bSizes={args.board}", "bSizeRelProbs=1", f"dataBoardLen={args.board}", "allowRectangleProb=0",
        f"maxVisits={args.visits}", f"cheapSearchVisits={cheap}", f"reducedVisitsMin={cheap}",
        f"numGameThreads={args.game_threads}", "handicapProb=0", "logToStdout=false",
        # Asymmetric-playout games would give the weaker side too few visits at these small counts.
        "normalAsymmetricPlayoutProb=0", "handicapAsymmetricPlayoutProb=0", "maxAsymmetricRatio=1.0",
        f"maxMovesPerGame={MAX_MOVES_PER_BOARD_POINT * args.board * args.board}",
    ])


def train_overrides(args) -> str:
    half = max(args.batch_size, args.train_samples // 2)
    return ",".join([
        f"batchSize={args.batch_size}", f"samplesPerEpoch={half}", f"exportEverySamples={args.train_samples}",
        f"checkpointEverySamples={half}", f"windowMinRows={args.window_rows}", "lrWarmupSamples=0",
        f"lrScale={args.lr_scale}", f"swaPeriodSamples={max(args.batch_size, half // 4)}", "swaScale=4",
        f"metricsEverySamples={max(args.batch_size, args.train_samples // 20)}",
    ])


# ------------------------------------------------------------------------------- the match


def play_match(kata: Kata, new_model: Path, old_model: Path, args) -> dict:
    from katacli.engine.client import GtpClient

    gtp_overrides = f"maxVisits={args.visits},numSearchThreads=1,logToStderr=false"
    engines = {}
    for label, model in (("new", new_model), ("old", old_model)):
        argv = kata.argv("gtp", "-model", str(model), "-config", str(GTP_EXAMPLE_CONFIG), "-override-config", gtp_overrides)
        engines[label] = GtpClient(argv, name=label, env=kata.env)
    wins = {"new": 0, "old": 0, "draw": 0}
    rng = random.Random(args.seed)
    try:
        for number in range(args.match_games):
            black, white = ("new", "old") if number % 2 == 0 else ("old", "new")
            if number % 2 == 0:
                # Engines are deterministic: each pair of games starts from its own random opening, once per colour.
                opening = random_opening(rng, args.board, args.opening_moves)
            result = play_one_game(engines[black], engines[white], args.board, args.komi, opening)
            winner = black if result.startswith("B+") else white if result.startswith("W+") else "draw"
            wins[winner] += 1
            log(f"match game {number + 1}: new net {'black' if black == 'new' else 'white'}, {result} -> {winner}")
    finally:
        for engine in engines.values():
            engine.close()
    score = wins["new"] + 0.5 * wins["draw"]
    rate = score / max(1, args.match_games)
    clipped = min(max(rate, 0.5 / args.match_games), 1 - 0.5 / args.match_games)
    elo = ELO_PER_LOG10_ODDS * math.log10(clipped / (1 - clipped))
    return {"games": args.match_games, "new_wins": wins["new"], "old_wins": wins["old"], "draws": wins["draw"],
            "new_win_rate": rate, "elo_gain_estimate": elo}


def random_opening(rng: random.Random, size: int, moves: int) -> list[str]:
    """Distinct random points off the first line, as GTP vertices."""
    inner = [f"{GTP_COLUMNS[x]}{y + 1}" for x in range(1, size - 1) for y in range(1, size - 1)]
    return rng.sample(inner, min(moves, len(inner)))


def play_one_game(black, white, size: int, komi: float, opening: list[str]) -> str:
    engines = {"b": black, "w": white}
    for engine in engines.values():
        engine.command(f"boardsize {size}")
        engine.command("clear_board")
        engine.command(f"komi {komi:g}")
    color, passes = "b", 0
    for vertex in opening:
        for engine in engines.values():
            engine.command(f"play {color} {vertex}")
        color = "w" if color == "b" else "b"
    for _ in range(MAX_MOVES_PER_BOARD_POINT * size * size):
        move = engines[color].command(f"genmove {color}", MATCH_MOVE_TIMEOUT_SECONDS).strip()
        if move.lower() == "resign":
            return ("W" if color == "b" else "B") + "+R"
        engines["w" if color == "b" else "b"].command(f"play {color} {move}")
        passes = passes + 1 if move.lower() == "pass" else 0
        if passes == 2:
            break
        color = "w" if color == "b" else "b"
    return black.command("final_score").strip()


# ------------------------------------------------------------------------------- the loop


def newest_model(models_dir: Path) -> Path:
    models = sorted(models_dir.glob("*.bin.gz"), key=lambda p: p.stat().st_mtime)
    if not models:
        raise LoopError(f"no model in {models_dir}")
    return models[-1]


def write_random_net(models_dir: Path, model_kind: str, seed: int) -> Path:
    from katacli.nn.model import KataGoModel
    from katacli.train.exporting import write_model_atomically

    path = models_dir / f"{RANDOM_NET_NAME}.bin.gz"
    if not path.exists():
        models_dir.mkdir(parents=True, exist_ok=True)
        write_model_atomically(KataGoModel.from_config(model_kind, seed=seed), str(path), RANDOM_NET_NAME)
        log(f"generation 0: random {model_kind} at {path}")
    return path


def run_loop(args) -> dict:
    kata = Kata(args.kata)
    kata.check_available("selfplay", ("-models-dir", "-output-dir", "-max-games-total"))
    kata.check_available("train", ("-data-dir", "-export-dir", "-init-model", "-max-samples"))
    kata.check_available("gtp", ("-model", "-config"))
    for config in (SELFPLAY_EXAMPLE_CONFIG, GTP_EXAMPLE_CONFIG):
        if not config.exists():
            raise LoopError(f"missing example config {config}")
    work = Path(args.work_dir)
    models, selfplay_dir, train_dir = work / "models", work / "selfplay", work / "train"
    gen0 = write_random_net(models, args.model_kind, args.seed)
    progress_file = work / "progress.json"
    progress = json.loads(progress_file.read_text()) if progress_file.exists() else {"generations_done": 0}
    progress.setdefault("models", [gen0.name])  # the net each generation ended with, generation 0 first
    for generation in range(progress["generations_done"] + 1, args.generations + 1):
        log(f"generation {generation}: self-play with {newest_model(models).name}")
        kata.run("selfplay", "-models-dir", str(models), "-output-dir", str(selfplay_dir),
                 "-config", str(SELFPLAY_EXAMPLE_CONFIG), "-override-config", selfplay_overrides(args),
                 "-max-games-total", str(args.games), "-seed", str(args.seed + generation), "--quiet",
                 what=f"self-play of generation {generation}")
        log(f"generation {generation}: training")
        kata.run("train", "-data-dir", str(selfplay_dir), "-output-dir", str(train_dir), "-export-dir", str(models),
                 "-init-model", str(gen0), "-max-samples", str(args.train_samples * generation),
                 "-override-config", train_overrides(args), "-seed", str(args.seed), "--quiet",
                 what=f"training of generation {generation}")
        progress["generations_done"] = generation
        progress["models"] = progress["models"][:generation] + [newest_model(models).name]
        progress_file.write_text(json.dumps(progress))
    final = newest_model(models)
    if final == gen0:
        raise LoopError("training exported no model; nothing to compare")
    baseline_index = 0 if args.baseline == "gen0" else max(0, len(progress["models"]) - 2)
    baseline = models / progress["models"][baseline_index]
    log(f"match: {final.name} (new) against {baseline.name} (old, generation {baseline_index}), "
        f"{args.match_games} games on {args.board}x{args.board}")
    result = {"new_model": final.name, "old_model": baseline.name, "old_generation": baseline_index,
              **play_match(kata, final, baseline, args)}
    (work / "results.json").write_text(json.dumps(result, indent=1))
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-dir", required=True, help="where models/, selfplay/, train/ and results.json go")
    parser.add_argument("--kata", default=f"{shlex.quote(sys.executable)} -P -m katacli.cli",
                        help="how to run kata (default: this Python with -m katacli.cli)")
    parser.add_argument("--model-kind", default="b4c32", help="architecture of the net (b2c16, b4c32, b6c96, ...)")
    parser.add_argument("--board", type=int, default=9)
    parser.add_argument("--komi", type=float, default=7.0)
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--games", type=int, default=40, help="self-play games per generation")
    parser.add_argument("--game-threads", type=int, default=8, help="self-play games in flight at once")
    parser.add_argument("--visits", type=int, default=32, help="search visits in self-play and in the match")
    parser.add_argument("--train-samples", type=int, default=20000, help="training samples per generation")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr-scale", type=float, default=1.0)
    parser.add_argument("--window-rows", type=int, default=20000, help="train on at least this many newest rows")
    parser.add_argument("--match-games", type=int, default=10)
    parser.add_argument("--baseline", choices=("gen0", "previous"), default="gen0",
                        help="play the final net against the random generation 0 or the previous generation's net")
    parser.add_argument("--opening-moves", type=int, default=4,
                        help="random moves that open each pair of match games (one game per colour)")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    try:
        result = run_loop(args)
    except LoopError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; rerun with the same --work-dir to continue", file=sys.stderr)
        return 130
    log(f"new net won {result['new_wins']}, lost {result['old_wins']}, drew {result['draws']} "
        f"(win rate {result['new_win_rate']:.0%}, about {result['elo_gain_estimate']:+.0f} Elo) -> "
        f"{Path(args.work_dir) / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
