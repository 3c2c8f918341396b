#!/usr/bin/env python3
"""KataGo's learning loop on one machine: self-play -> train -> gatekeeper -> self-play, with an
Elo table per generation measured by `kata match`.

    generation 0: a random net of --model-kind in WORK/models/ (the accepted nets)
    each generation:
        kata selfplay   -models-dir WORK/models -output-dir WORK/selfplay -max-games-total N
        kata train      -data-dir WORK/selfplay -output-dir WORK/train -export-dir WORK/candidates
                        (training goes on from its checkpoint; each generation adds --train-samples)
        kata gatekeeper -test-models-dir WORK/candidates -accepted-models-dir WORK/models
                        -rejected-models-dir WORK/rejected -quit-if-no-nets-to-test
        kata match      the newly accepted net against the previous accepted net and against the
                        rollout engine (--json, kept in WORK/elo/); the Elo table is printed

Everything runs through the ``kata`` command line (``python3 -m katacli.cli`` unless --kata is
given). A quick look (minutes on a CPU; the net barely improves):

    .venv/bin/python examples/training_loop.py --work-dir /tmp/loop --boards 7 --generations 2 --games 16 --visits 16 \\
        --gating-games 8 --match-games 4

A run that shows a clear gain on a CPU (an hour or more; more generations keep improving):

    .venv/bin/python examples/training_loop.py --work-dir loop9 --model-kind b6c96 --generations 6 --games 200 \\
        --visits 64 --train-samples 100000 --gating-games 40 --match-games 20

Resumable: WORK/progress.json records the steps done per generation; rerunning with the same
--work-dir after Ctrl-C or a reboot continues with the first step not done (training resumes
from its checkpoint, the gatekeeper never moves a half-tested candidate).
"""
from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

from katacli.atomic_files import atomic_write_bytes, atomic_write_text

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
try:
    import katacli  # noqa: F401  (an installed katacli, with its compiled core)
    EXTRA_PATH = ""
except ImportError:  # run from a checkout built in place
    sys.path.insert(0, str(REPO))
    EXTRA_PATH = str(REPO)

SELFPLAY_EXAMPLE_CONFIG = REPO / "configs" / "selfplay_example.cfg"
MAX_MOVES_PER_BOARD_POINT = 3  # match games stop after this many moves per point
RANDOM_NET_NAME = "gen0-random"
MIN_CHEAP_VISITS = 5
HELP_COLUMNS = "250"
MIN_BOARD, MAX_BOARD = 5, 19
UNLIMITED_VISITS = 1 << 30  # self-play refuses searches of fewer visits


class LoopError(Exception):
    """A piece of the loop is missing or failed; the message says which and what to do."""


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


# ------------------------------------------------------------------------------- the kata CLI


class Kata:
    def __init__(self, command: str):
        self.prefix = shlex.split(command)
        self.env = dict(os.environ)
        if EXTRA_PATH:
            self.env["PYTHONPATH"] = EXTRA_PATH + os.pathsep + os.environ.get("PYTHONPATH", "")

    def argv(self, *args: str) -> list[str]:
        return [*self.prefix, *args]

    def check_available(self, subcommand: str, needed_flags: tuple[str, ...]) -> None:
        """Fail clearly if ``kata SUBCOMMAND`` is missing or lacks a flag this loop needs."""
        try:
            # A wide terminal, so that the help table does not shorten long flag names.
            done = subprocess.run(self.argv(subcommand, "--help"), env=dict(self.env, COLUMNS=HELP_COLUMNS),
                                  capture_output=True, text=True,
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

    def capture(self, *args: str, what: str) -> str:
        """Run ``kata ARGS`` and return its stdout (its stderr shows as usual)."""
        log(f"$ kata {' '.join(shlex.quote(a) for a in args)}")
        done = subprocess.run(self.argv(*args), env=self.env, stdout=subprocess.PIPE, text=True)
        if done.returncode != 0:
            raise LoopError(f"{what} failed (exit status {done.returncode}); see its messages above")
        return done.stdout

    def run(self, *args: str, what: str) -> None:
        log(f"$ kata {' '.join(shlex.quote(a) for a in args)}")
        done = subprocess.run(self.argv(*args), env=self.env)
        if done.returncode != 0:
            raise LoopError(f"{what} failed (exit status {done.returncode}); see its messages above")


# ------------------------------------------------------------------------------- configs


def board_keys(args) -> list[str]:
    """Board sizes (equally likely) and the move limit of the largest."""
    largest = max(args.boards)
    return [f"bSizes = {','.join(map(str, args.boards))}", f"bSizeRelProbs = {','.join('1' for _ in args.boards)}",
            f"maxMovesPerGame = {MAX_MOVES_PER_BOARD_POINT * largest * largest}"]


def write_selfplay_config(work: Path, args) -> Path:
    """Keys layered over configs/selfplay_example.cfg (a later -config wins)."""
    cheap = max(MIN_CHEAP_VISITS, args.visits // 4)
    path = work / "selfplay-loop.cfg"
    path.write_text("\n".join([
        *board_keys(args), f"dataBoardLen = {max(args.boards)}", "allowRectangleProb = 0",
        f"maxVisits = {args.visits}", f"cheapSearchVisits = {cheap}", f"reducedVisitsMin = {cheap}",
        f"numGameThreads = {args.game_threads}", "handicapProb = 0", "logToStdout = false",
        # Asymmetric-playout games would give the weaker side too few visits at these small counts.
        "normalAsymmetricPlayoutProb = 0", "handicapAsymmetricPlayoutProb = 0", "maxAsymmetricRatio = 1.0", "",
    ]))
    return path


def train_overrides(args) -> str:
    half = max(args.batch_size, args.train_samples // 2)
    return ",".join([
        *export_prefix_override(args),
        f"batchSize={args.batch_size}", f"samplesPerEpoch={half}", f"exportEverySamples={args.train_samples}",
        f"checkpointEverySamples={half}", f"windowMinRows={args.window_rows}", "lrWarmupSamples=0",
        f"lrScale={args.lr_scale}", f"swaPeriodSamples={max(args.batch_size, half // 4)}", "swaScale=4",
        f"metricsEverySamples={max(args.batch_size, args.train_samples // 20)}",
    ])


def export_prefix_override(args) -> list[str]:
    """A continued part counts its training samples from zero again, so its exports would be named like
    the earlier part's nets (kata-<kind>-s<samples>-d<rows>) and could collide with the start net in
    models/. Its names carry the generation it started from instead: kata-<kind>-from<G>-s...-d...."""
    if not args.start_from:
        return []
    return [f"exportPrefix=kata-{args.model_kind}-from{args.start_generation}"]


# ------------------------------------------------------------------------------- gating and Elo


def game_keys(args, search: list[str]) -> str:
    """Rules, boards and search of gating and Elo games (one ruleset, the self-play board sizes)."""
    return "\n".join([
        "koRules = POSITIONAL", "scoringRules = AREA", "taxRules = NONE", "multiStoneSuicideLegals = false",
        "hasButtons = false", *board_keys(args), komi_key(args), "handicapProb = 0.0",
        f"numGameThreads = {args.game_threads}", *search, "numSearchThreads = 1",
        "allowResignation = true", "resignThreshold = -0.95", "resignConsecTurns = 6",
        "nnMaxBatchSize = 16", "logToStdout = false", "",
    ])


def komi_key(args) -> str:
    """A fixed komi, or (default) komiAuto: fair komi per board size judged by a network, as self-play does."""
    return "komiAuto = true" if args.komi is None else f"komiMean = {args.komi:g}"


def write_configs(work: Path, args) -> tuple[Path, Path]:
    gate = work / "gatekeeper.cfg"
    gate.write_text(game_keys(args, [f"maxVisits = {args.visits}"]) + f"numGamesPerGating = {args.gating_games}\n")
    if args.match_seconds:  # equal time per move for every bot, the rollout engine included
        search = [f"maxTime = {args.match_seconds:g}", f"maxVisits = {UNLIMITED_VISITS}"]
    else:
        search = [f"maxVisits = {args.visits}", f"maxVisits2 = {args.rollout_visits}"]
    match = work / "match.cfg"
    match.write_text(game_keys(args, search) + "# the bots are added per generation\n")
    return gate, match


def label(model: Path) -> str:
    """A network's name in match tables: its file name without .bin.gz."""
    return model.name.removesuffix(".gz").removesuffix(".bin")


def measure(kata: Kata, match_cfg: Path, new: Path, previous: Path, work: Path, generation: int, args) -> dict:
    """kata match: the new accepted net against the previous one and against the rollout engine."""
    out = work / "elo" / f"gen{generation}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    cfg = work / "elo" / f"gen{generation}.cfg"
    cfg.write_text(match_cfg.read_text() + "\n".join([
        "numBots = 3", f"botName0 = {label(new)}", f"botName1 = {label(previous)}-prev", "botName2 = rollouts",
        f"nnModelFile0 = {new}", f"nnModelFile1 = {previous}", "nnModelFile2 = rollouts",
        "secondaryBots = 1,2",
        f"numGamesTotal = {4 * args.match_games}", ""]))
    done = kata.capture("match", "-config", str(cfg), "-sgf-output-dir", str(work / "elo" / f"gen{generation}-sgfs"),
                        "--json", "-seed", str(args.seed + generation), what=f"the Elo match of generation {generation}")
    out.write_text(done)
    return json.loads(done)


def pair_result(report: dict, bot: str, opponent_prefix: str) -> Optional[dict]:
    for pair in report["pairs"]:
        if pair["bot"] == bot and pair["opponent"].startswith(opponent_prefix):
            return pair
    return None


def elo_table(rows: list[dict]) -> str:
    lines = [f"{'gen':>3}  {'accepted net':<34} {'gating':>9} {'vs previous (W-L-D)':>22} {'Elo':>6} "
             f"{'vs rollouts':>12}"]
    for r in rows:
        prev = r.get("vs_previous")
        roll = r.get("vs_rollouts")
        prev_text = f"{prev['wins']}-{prev['losses']}-{prev['draws']}" if prev else "-"
        roll_text = f"{100 * roll['win_rate']:.0f}%" if roll else "-"
        lines.append(f"{r['generation']:>3}  {r['model']:<34} {r.get('gating', '-'):>9} {prev_text:>22} "
                     f"{r['elo']:>+6.0f} {roll_text:>12}")
    return "\n".join(lines)


# ------------------------------------------------------------------------------- the loop


def newest_model(models_dir: Path) -> Path:
    from katacli.selfplay.latest_model import find_latest_model

    found = find_latest_model(models_dir)
    if found is None:
        raise LoopError(f"no model in {models_dir}")
    return found.path


def write_random_net(models_dir: Path, model_kind: str, seed: int) -> Path:
    from katacli.nn.torch_model import KataGoModel
    from katacli.train.exporting import write_model_atomically

    path = models_dir / f"{RANDOM_NET_NAME}.bin.gz"
    if not path.exists():
        models_dir.mkdir(parents=True, exist_ok=True)
        write_model_atomically(KataGoModel.from_config(model_kind, seed=seed), str(path), RANDOM_NET_NAME)
        log(f"generation 0: random {model_kind} at {path}")
    return path


def copy_start_net(models_dir: Path, start_from: str) -> Path:
    """Generation ``--start-generation`` of a continued run: a copy of an accepted net of an earlier
    part (its weights only; the optimiser starts afresh)."""
    source = Path(start_from)
    if not source.is_file():
        raise LoopError(f"--start-from {source}: no such network file")
    path = models_dir / source.name
    if not path.exists():
        models_dir.mkdir(parents=True, exist_ok=True)
        atomic_write_bytes(path, source.read_bytes())
        log(f"generation 0 of this part: {source.name}, copied from {source}")
    return path


class Progress:
    """WORK/progress.json: the steps done per generation (and when each finished, in seconds since the
    epoch), the Elo rows, and the options of each start; rewritten atomically."""

    def __init__(self, path: Path):
        self.path = path
        self.data = json.loads(path.read_text()) if path.exists() else {"done": {}, "rows": []}

    def is_done(self, generation: int, step: str) -> bool:
        return step in self.data["done"].get(str(generation), [])

    def record_start(self, argv: list[str]) -> None:
        """This start's options and time (a resumed run has several)."""
        self.data.setdefault("starts", []).append({"time": time.time(), "argv": argv})
        self.save()

    def mark(self, generation: int, step: str) -> None:
        self.data["done"].setdefault(str(generation), []).append(step)
        self.data.setdefault("finished", {}).setdefault(str(generation), {})[step] = time.time()
        self.save()

    def save(self) -> None:
        atomic_write_text(self.path, json.dumps(self.data, indent=1))


def run_loop(args, argv: Optional[list[str]] = None) -> dict:
    kata = Kata(args.kata)
    kata.check_available("selfplay", ("-models-dir", "-output-dir", "-max-games-total"))
    kata.check_available("train", ("-data-dir", "-export-dir", "-init-model", "-max-samples"))
    kata.check_available("gatekeeper", ("-test-models-dir", "-quit-if-no-nets-to-test"))
    kata.check_available("match", ("-config", "-json"))
    if not SELFPLAY_EXAMPLE_CONFIG.exists():
        raise LoopError(f"missing example config {SELFPLAY_EXAMPLE_CONFIG}")
    work = Path(args.work_dir)
    models, candidates, rejected = work / "models", work / "candidates", work / "rejected"
    selfplay_dir, train_dir, gating_dir = work / "selfplay", work / "train", work / "gating"
    first = args.start_generation
    gen0 = copy_start_net(models, args.start_from) if args.start_from else write_random_net(models, args.model_kind, args.seed)
    gate_cfg, match_cfg = write_configs(work, args)
    selfplay_cfg = write_selfplay_config(work, args)
    progress = Progress(work / "progress.json")
    if argv is not None:
        progress.record_start(argv)
    if not progress.data["rows"]:
        progress.data["rows"].append({"generation": first, "model": gen0.name, "elo": args.start_elo})
        progress.save()
    for generation in range(first + 1, args.generations + 1):
        if progress.is_done(generation, "elo"):
            continue
        if not progress.is_done(generation, "selfplay"):
            log(f"generation {generation}: self-play with {newest_model(models).name}")
            # A continued run has no data window yet: its first generation plays more games, so that
            # the first training does not pass over a few thousand rows ten times.
            games = args.first_games if generation == first + 1 and args.first_games else args.games
            kata.run("selfplay", "-models-dir", str(models), "-output-dir", str(selfplay_dir),
                     "-config", str(SELFPLAY_EXAMPLE_CONFIG), "-config", str(selfplay_cfg),
                     "-max-games-total", str(games), "-seed", str(args.seed + generation), "--quiet",
                     what=f"self-play of generation {generation}")
            progress.mark(generation, "selfplay")
        if not progress.is_done(generation, "train"):
            log(f"generation {generation}: training (the export goes to {candidates.name}/ for gating)")
            kata.run("train", "-data-dir", str(selfplay_dir), "-output-dir", str(train_dir),
                     "-export-dir", str(candidates), "-init-model", str(gen0),
                     "-max-samples", str(args.train_samples * (generation - first)),
                     "-override-config", train_overrides(args), "-seed", str(args.seed), "--quiet",
                     what=f"training of generation {generation}")
            progress.mark(generation, "train")
        previous = newest_model(models)
        if not progress.is_done(generation, "gate"):
            log(f"generation {generation}: gatekeeper against {previous.name}")
            kata.run("gatekeeper", "-config", str(gate_cfg), "-test-models-dir", str(candidates),
                     "-accepted-models-dir", str(models), "-rejected-models-dir", str(rejected),
                     "-sgf-output-dir", str(gating_dir), "-quit-if-no-nets-to-test", "-seed", str(args.seed),
                     "--quiet", what=f"gating of generation {generation}")
            progress.mark(generation, "gate")
        accepted = newest_model(models)
        last = progress.data["rows"][-1]
        row = {"generation": generation, "model": accepted.name, "elo": last["elo"],
               "gating": "accepted" if accepted.name != last["model"] else "rejected"}
        if row["gating"] == "accepted":
            prior = models / last["model"] if (models / last["model"]).exists() else previous
            report = measure(kata, match_cfg, accepted, prior, work, generation, args)
            row["vs_previous"] = pair_result(report, label(accepted), label(prior))
            row["vs_rollouts"] = pair_result(report, label(accepted), "rollouts")
            elos = report["elo"]   # Bradley-Terry: finite even after a clean sweep
            if label(accepted) in elos and f"{label(prior)}-prev" in elos:
                row["elo"] = last["elo"] + elos[label(accepted)] - elos[f"{label(prior)}-prev"]
        progress.data["rows"].append(row)
        progress.mark(generation, "elo")
        print(elo_table(progress.data["rows"]), flush=True)
    result = {"rows": progress.data["rows"]}
    (work / "results.json").write_text(json.dumps(result, indent=1))
    return result


def board_sizes(text: str) -> list[int]:
    try:
        sizes = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of board sizes like 7,9,13") from None
    if not sizes or any(not MIN_BOARD <= n <= MAX_BOARD for n in sizes):
        raise argparse.ArgumentTypeError(f"board sizes must be {MIN_BOARD}..{MAX_BOARD}")
    return sizes


def build_parser() -> argparse.ArgumentParser:
    """The loop's options (benchmarks/default_net_record.py reads a run's options with it too)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-dir", required=True, help="where models/, selfplay/, train/ and results.json go")
    parser.add_argument("--kata", default=f"{shlex.quote(sys.executable)} -P -m katacli.cli",
                        help="how to run kata (default: this Python with -m katacli.cli)")
    parser.add_argument("--model-kind", default="b4c32", help="architecture of the net (b2c16, b4c32, b6c96, ...)")
    parser.add_argument("--boards", "--board", type=board_sizes, default=[9],
                        help="board size(s) to play, e.g. 9 or 7,9,13 (equally likely)")
    parser.add_argument("--komi", type=float, default=None,
                        help="komi of gating and Elo games (default: komiAuto, a fair komi per board size)")
    parser.add_argument("--generations", type=int, default=3)
    parser.add_argument("--games", type=int, default=40, help="self-play games per generation")
    parser.add_argument("--game-threads", type=int, default=8, help="self-play games in flight at once")
    parser.add_argument("--visits", type=int, default=32, help="search visits in self-play and in the match")
    parser.add_argument("--train-samples", type=int, default=20000, help="training samples per generation")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr-scale", type=float, default=1.0)
    parser.add_argument("--window-rows", type=int, default=20000, help="train on at least this many newest rows")
    parser.add_argument("--gating-games", type=int, default=20, help="games of each candidate against the accepted net")
    parser.add_argument("--match-games", type=int, default=10,
                        help="Elo games per opponent per generation (the new net against the previous one and "
                             "against the rollout engine, half with each colour)")
    parser.add_argument("--rollout-visits", type=int, default=200, help="visits of the rollout engine in the Elo match")
    parser.add_argument("--match-seconds", type=float, default=None,
                        help="Elo match at this many seconds per move for every bot (equal time) instead of visits")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--start-from", default=None, metavar="NET",
                        help="continue an earlier run: start from this accepted net (weights only) instead of "
                             "random weights; combine with --start-generation and --start-elo (this part's nets are "
                             "named kata-<kind>-from<start generation>-s<samples>-d<rows>)")
    parser.add_argument("--start-generation", type=int, default=0,
                        help="the generation number of the start net (the first new one is this plus one)")
    parser.add_argument("--start-elo", type=float, default=0.0, help="the Elo of the start net in the earlier part")
    parser.add_argument("--first-games", type=int, default=None,
                        help="self-play games of the first generation (default --games); a continued run "
                             "has no data yet, so give it several generations' worth")
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    try:
        run_loop(args, argv)
    except LoopError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted; rerun with the same --work-dir to continue", file=sys.stderr)
        return 130
    log(f"done: the Elo table is in {Path(args.work_dir) / 'results.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
