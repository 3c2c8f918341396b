"""The record of how katacli's default network was made, read from the examples/training_loop.py run
that trained it: the command and seed, the budget, the machine, and the Elo curve per generation.

    python3 benchmarks/default_net_record.py --work-dir RUN              # print the record and the Elo table
    python3 benchmarks/default_net_record.py --work-dir RUN --install    # copy the run's newest accepted net into
                                                                          # katacli/nets/default.bin.gz, then write
                                                                          # katacli/nets/default.json and
                                                                          # benchmarks/default_net.md

    python3 benchmarks/default_net_record.py --base-record benchmarks/default_net_part2.json \\
        --net distilled.bin.gz --refinement distill-log.json --install   # a net refined from the recorded one
                                                                          # by examples/distill_openings.py

RUN is the loop's --work-dir (progress.json, models/, elo/; results.json once finished). The loop's
options come from progress.json (the loop records each start) or --loop-args; they are checked
against the configs the run wrote, so the recorded command is the one that made the network.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import platform
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Optional

REPO = Path(__file__).resolve().parents[1]
try:
    import katacli  # noqa: F401  (an installed katacli)
except ImportError:  # a checkout built in place
    sys.path.insert(0, str(REPO))

from katacli.data.files import atomic_output  # noqa: E402
from katacli.nets import DEFAULT_NET_FILE, DEFAULT_NET_RECORD_FILE  # noqa: E402
from katacli.nn.model_file_reader import ModelFileError, check_model_file  # noqa: E402

LOOP_SCRIPT = REPO / "examples" / "training_loop.py"
PACKAGE_NETS = REPO / "katacli" / "nets"
MARKDOWN = REPO / "benchmarks" / "default_net.md"
RECORD_FORMAT = 1
# The work dir as the recorded command names it (the real one is a path of the training machine).
PUBLIC_WORK_DIR = "default-net-run"
# Options of the training machine: its work dir (renamed) and how kata was started there (the default works anywhere).
MACHINE_SPECIFIC_OPTIONS = ("--work-dir", "--kata", "--start-from")
# A continued run (--previous-part): the earlier part's work dir is PUBLIC_WORK_DIR, this one's:
CONTINUED_WORK_DIR = PUBLIC_WORK_DIR + "-part{part}"
LOOP_CONFIGS = ("selfplay-loop.cfg", "gatekeeper.cfg", "match.cfg")
# What benchmarks/default_net_vs_rollouts.py and default_net_vs_gnugo.py wrote with --json-out.
STRENGTH_FILES = {"vs_rollouts": REPO / "benchmarks" / "default_net_vs_rollouts.json",
                  "vs_gnugo": REPO / "benchmarks" / "default_net_vs_gnugo.json"}
SECONDS_PER_HOUR = 3600.0
# A refined network (--base-record): the log examples/distill_openings.py wrote, as the command names it.
REFINEMENT_LOG = "distill-log.json"
REFINEMENT_ROWS = "distill-rows.json"


class RecordError(Exception):
    """The run cannot be recorded as it is; the message says why."""


# ------------------------------------------------------------------------------- the run


def load_loop():
    spec = importlib.util.spec_from_file_location("training_loop", LOOP_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise RecordError(f"{path} not found: is this a training_loop.py --work-dir?") from None
    except ValueError as exc:
        raise RecordError(f"{path} is not valid JSON: {exc}") from None


def loop_argv(progress: dict, loop_args: Optional[str]) -> list[str]:
    if loop_args is not None:
        return shlex.split(loop_args)
    starts = progress.get("starts") or []
    if not starts:
        raise RecordError("progress.json does not record the loop's options (a run started by an older "
                          "training_loop.py): pass them with --loop-args \"--model-kind ... --seed N\"")
    return list(starts[-1]["argv"])


def public_command(argv: list[str], work_dir: str = PUBLIC_WORK_DIR, start_from: Optional[str] = None) -> str:
    """The loop's command line with the work dir renamed and machine-specific options left out
    (a continued run's --start-from names the earlier part's net in that part's public work dir)."""
    out: list[str] = []
    skip_value = False
    for arg in argv:
        if skip_value:
            skip_value = False
            continue
        if arg.split("=", 1)[0] in MACHINE_SPECIFIC_OPTIONS:
            skip_value = "=" not in arg  # the value is the next argument
            continue
        out.append(arg)
    start = ["--start-from", start_from] if start_from else []
    return shlex.join(["python3", "examples/training_loop.py", "--work-dir", work_dir, *start, *out])


def check_configs(loop, args, work: Path) -> None:
    """The configs these options write must be the ones in the run: else the options are not the run's."""
    with tempfile.TemporaryDirectory() as temp:
        fresh = Path(temp)
        loop.write_selfplay_config(fresh, args)
        loop.write_configs(fresh, args)
        for name in LOOP_CONFIGS:
            ran = work / name
            if ran.exists() and ran.read_text() != (fresh / name).read_text():
                raise RecordError(f"{ran} differs from what these options write: the loop options are not "
                                  "this run's (pass the right ones with --loop-args)")


def newest_accepted(rows: list[dict]) -> dict:
    # The first row is the start net (random weights, or where a continued run started).
    accepted = [row for i, row in enumerate(rows) if i == 0 or row.get("gating") == "accepted"]
    return accepted[-1]


def step_times(loop, progress: dict, work: Path) -> tuple[Optional[float], dict[int, float]]:
    """(start time, {generation: time its last step finished}); from progress.json where the loop
    recorded them, else from the files the run wrote (the random net, then each Elo match)."""
    starts = progress.get("starts") or []
    start = starts[0]["time"] if starts else None
    if start is None:
        first = work / "models" / f"{loop.RANDOM_NET_NAME}.bin.gz"
        start = first.stat().st_mtime if first.exists() else None
    ends: dict[int, float] = {}
    for generation, steps in (progress.get("finished") or {}).items():
        ends[int(generation)] = max(steps.values())
    for path in (work / "elo").glob("gen*.json"):
        generation = int(path.stem.removeprefix("gen"))
        ends.setdefault(generation, path.stat().st_mtime)
    return start, ends


# ------------------------------------------------------------------------------- the record


def network_facts(path: Path, work: Path, rows: list[dict], args) -> dict:
    try:
        header = check_model_file(path)
    except ModelFileError as exc:
        raise RecordError(str(exc)) from None
    data = path.read_bytes()
    trained_as = path.name
    generation = next((row["generation"] for row in rows if row["model"] == trained_as), None)
    sidecar = work / "models" / (trained_as.removesuffix(".bin.gz") + ".json")
    training = json.loads(sidecar.read_text()) if sidecar.exists() else {}
    return {"file": DEFAULT_NET_FILE, "name": header.name, "trained_as": trained_as, "generation": generation,
            "architecture": args.model_kind, "model_version": header.version, "bytes": len(data),
            "sha256": hashlib.sha256(data).hexdigest(), "training_samples": training.get("samples"),
            "selfplay_rows": training.get("data_rows")}


def machine_facts(note: Optional[str]) -> dict:
    import torch

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    gpu = torch.cuda.get_device_name(0) if torch.cuda.is_available() else None
    from katacli import __version__

    facts = {"cpu": cpu, "cpu_cores": os.cpu_count(), "gpu": gpu, "os": platform.system(),
             "python": platform.python_version(), "torch": torch.__version__, "katacli": __version__}
    if note:
        facts["note"] = note
    return facts


def elo_curve(rows: list[dict], start: Optional[float], ends: dict[int, float]) -> list[dict]:
    curve = []
    for row in rows:
        prev, roll = row.get("vs_previous"), row.get("vs_rollouts")
        generation = row["generation"]
        curve.append({
            "generation": generation, "model": row["model"], "gating": row.get("gating", "-"),
            "elo": round(row["elo"], 1),
            "vs_previous": None if prev is None else {k: prev[k] for k in ("wins", "losses", "draws")},
            "vs_rollouts": None if roll is None else {
                "wins": roll["wins"], "losses": roll["losses"], "draws": roll["draws"],
                "win_rate": roll["win_rate"], "win_rate_95": roll["win_rate_95"]},
            "hours": (round((ends[generation] - start) / SECONDS_PER_HOUR, 2)
                      if start is not None and generation in ends else (0.0 if generation == 0 else None)),
        })
    return curve


def elo_method(args) -> str:
    search = (f"{args.match_seconds:g} s per move for every bot (equal time)" if args.match_seconds
              else f"{args.visits} visits per move for the nets, {args.rollout_visits} for the rollout engine")
    return (f"kata match after each accepted generation: the new net against its predecessor and against the "
            f"rollout engine, {2 * args.match_games} games each (both colours, boards "
            f"{','.join(map(str, args.boards))}, area scoring, {search}); the Elo column adds up the "
            "Bradley-Terry difference to the predecessor, generation 0 (random weights) being 0")


def strength(network_name: str) -> dict:
    """The strength measurements of this very network (by its name) that the benchmarks saved."""
    found = {}
    for key, path in STRENGTH_FILES.items():
        if path.exists():
            data = read_json(path)
            if data.get("model") == network_name:
                found[key] = data
    return found


def without_pauses(ends: dict[int, float], pauses: list[tuple[int, float]]) -> dict[int, float]:
    """Step times with the pauses taken out: a pause (generation, hours) -- the run stopped during
    that generation and was resumed that many hours later -- is not counted from that generation on."""
    return {generation: time - SECONDS_PER_HOUR * sum(hours for first, hours in pauses if generation >= first)
            for generation, time in ends.items()}


def pause_arg(text: str) -> tuple[int, float]:
    try:
        generation, hours = text.split("=")
        return int(generation), float(hours)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not GEN=HOURS, e.g. 11=1.39") from None


def previous_part_of(previous: dict, args, work: Path) -> dict:
    """The earlier part's record, checked: this run must have started from that part's network."""
    if not args.start_from:
        raise RecordError("--previous-part is for a run continued with --start-from; this run started from random weights")
    started = work / "models" / Path(args.start_from).name
    if not started.is_file() or sha256_of(started) != previous["network"]["sha256"]:
        raise RecordError(f"{started} is not the earlier part's network {previous['network']['name']}: "
                          "this run did not continue that part")
    accepted_in, ran = previous["network"]["generation"], previous["budget"]["generations_run"]
    if not accepted_in <= args.start_generation <= ran:
        raise RecordError(f"--start-generation {args.start_generation}: the earlier part accepted its net in "
                          f"generation {accepted_in} and ran {ran}")
    return previous


def continued(record: dict, previous: dict, args) -> dict:
    """One record for two parts: the earlier part's curve and budget, then this part's on top."""
    before = previous["budget"]
    part = len(previous.get("reproduce", {}).get("parts", [None])) + 1
    earlier_dir = previous["reproduce"].get("work_dir", PUBLIC_WORK_DIR)
    work_dir = CONTINUED_WORK_DIR.format(part=part)
    start_from = f"{earlier_dir}/models/{previous['network']['trained_as']}"
    earlier = previous["reproduce"].get("parts") or [previous["reproduce"]["command"]]
    command = public_command(record["reproduce"]["argv"], work_dir, start_from)
    record["reproduce"] = {
        "command": command, "seed": args.seed, "work_dir": work_dir, "parts": [*earlier, command],
        "then": f"python3 benchmarks/default_net_record.py --work-dir {work_dir} --previous-part "
                f"benchmarks/default_net_part{part - 1}.json --install"}
    offset = before["wall_time_hours"] or 0.0
    mine = [row for row in record["elo_curve"] if row["generation"] > args.start_generation]
    for row in mine:
        if row["hours"] is not None:
            row["hours"] = round(row["hours"] + offset, 2)
    record["elo_curve"] = [row for row in previous["elo_curve"] if row["generation"] <= args.start_generation] + mine
    budget, net = record["budget"], record["network"]
    budget["selfplay_games"] += before["selfplay_games"]
    budget["wall_time_hours"] = None if budget["wall_time_hours"] is None else round(
        budget["wall_time_hours"] + offset, 2)
    budget["wall_time_from"] += f"; parts: {len(record['reproduce']['parts'])}, times added up"
    for key in ("training_samples", "selfplay_rows"):
        if net[key] is not None:
            net[key] += previous["network"][key] or 0
    return record


def refined_record(base: dict, base_name: str, net: Path, log: dict, machine_note: Optional[str] = None) -> dict:
    """The record of a network made from the one ``base`` records by examples/distill_openings.py (whose
    --log-out is ``log``): the run's record (curve, budget), this file's facts and what was done to it."""
    try:
        header = check_model_file(net)
    except ModelFileError as exc:
        raise RecordError(str(exc)) from None
    before = base["network"]
    data = net.read_bytes()
    record = json.loads(json.dumps(base))   # a deep copy
    record["network"] = dict(before, name=header.name, trained_as=net.name, model_version=header.version,
                             bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    options, generated = log["options"], log["generated_by"]
    source = f"{base['reproduce'].get('work_dir', PUBLIC_WORK_DIR)}/models/{before['trained_as']}"
    script = ["python3", "examples/distill_openings.py", "--model", source]
    train = ["--epochs", str(options["epochs"]), "--lr", str(options["lr"]), "--seed", str(options["seed"])]
    if options["train_sizes"]:
        train += ["--train-sizes", options["train_sizes"]]
    if options.get("anchor_sizes"):
        train += ["--anchor-sizes", options["anchor_sizes"]]
    if options.get("policy_head_only"):
        train += ["--policy-head-only"]
    search = ["--sizes", generated["sizes"], "--positions", str(generated["positions"]), "--visits",
              str(generated["visits"]), "--seed", str(generated["seed"]), "--processes", str(generated["processes"])]
    if options["rows_in"]:   # generated first, trained on from the saved rows
        commands = [shlex.join([*script, "--out", "unused.bin.gz", *search, "--rows-out", REFINEMENT_ROWS]),
                    shlex.join([*script, "--out", net.name, "--rows-in", REFINEMENT_ROWS, *train,
                                "--log-out", REFINEMENT_LOG])]
    else:
        commands = [shlex.join([*script, "--out", net.name, *search, *train, "--log-out", REFINEMENT_LOG])]
    command = "\n    ".join(commands)
    record["refinement"] = {
        "from": {"name": before["name"], "sha256": before["sha256"]},
        "command": command, "positions": log["positions"], "visits": generated["visits"],
        "sizes": sorted({int(size) for size in (options["train_sizes"] or generated["sizes"]).split(",")}),
        "anchor_sizes": sorted(int(size) for size in (options.get("anchor_sizes") or "").split(",") if size),
        "policy_head_only": bool(options.get("policy_head_only")), "epochs": options["epochs"],
        "lr": options["lr"], "seed": options["seed"],
        "hours": round((log["seconds"] - log.get("generate_seconds", 0.0)) / SECONDS_PER_HOUR, 2),
        "generate_hours": (round(log["generate_seconds"] / SECONDS_PER_HOUR, 2) if log.get("generate_seconds")
                           else round(generated["seconds"] / SECONDS_PER_HOUR, 2) if generated.get("seconds")
                           else None),
        "losses": log["epochs"], "policy_by_line": log["policy_by_line"], "machine": machine_facts(machine_note)}
    record["reproduce"]["refine"] = command
    record["reproduce"]["then"] = (f"python3 benchmarks/default_net_record.py --base-record benchmarks/{base_name} "
                                   f"--net {net.name} --refinement {REFINEMENT_LOG} --install")
    record["strength"] = strength(header.name)
    return record


def build_record(work: Path, net: Path, loop_args: Optional[str], wall_hours: Optional[float],
                 machine_note: Optional[str], pauses: Optional[list[tuple[int, float]]] = None,
                 previous: Optional[dict] = None) -> dict:
    loop = load_loop()
    progress = read_json(work / "progress.json")
    results_path = work / "results.json"
    finished = results_path.exists()
    rows = read_json(results_path)["rows"] if finished else progress["rows"]
    argv = loop_argv(progress, loop_args)
    args = loop.build_parser().parse_args(argv)
    check_configs(loop, args, work)
    start, ends = step_times(loop, progress, work)
    ends = without_pauses(ends, pauses or [])
    generations_run = max((int(g) for g, steps in progress["done"].items() if "elo" in steps), default=0)
    hours = wall_hours if wall_hours is not None else (
        round((max(ends.values()) - start) / SECONDS_PER_HOUR, 2) if start is not None and ends else None)
    network = network_facts(net, work, rows, args)
    if previous is not None:
        previous_part_of(previous, args, work)
    # The self-play behind this network: one batch of games per generation up to its own (the first of
    # a continued run has --first-games).
    own = (generations_run if network["generation"] is None else network["generation"]) - args.start_generation
    games = args.games * own + ((args.first_games or args.games) - args.games if own > 0 else 0)
    record = {
        "format": RECORD_FORMAT,
        "network": network,
        "reproduce": {"command": public_command(argv), "seed": args.seed, "argv": argv,
                      "then": f"python3 benchmarks/default_net_record.py --work-dir {PUBLIC_WORK_DIR} --install"},
        "budget": {
            "generations_run": generations_run, "generations_planned": args.generations,
            "run_finished": finished, "selfplay_games": games,
            "games_per_generation": args.games, "visits": args.visits, "boards": args.boards,
            "training_samples_per_generation": args.train_samples, "batch_size": args.batch_size,
            "gating_games": args.gating_games, "elo_games_per_opponent": 2 * args.match_games,
            "wall_time_hours": hours,
            "wall_time_from": "given" if wall_hours is not None else (
                "the run's recorded times / file times" + (", without the pauses between its parts" if pauses else "")),
        },
        "machine": machine_facts(machine_note),
        "elo_method": elo_method(args),
        "elo_curve": elo_curve(rows, start, ends),
        "strength": strength(network["name"]),
    }
    if previous is not None:
        record = continued(record, previous, args)
    record["reproduce"].pop("argv", None)  # names paths of the training machine
    return record


# ------------------------------------------------------------------------------- output


def win_text(result: Optional[dict]) -> str:
    return "-" if result is None else f"{result['wins']}-{result['losses']}-{result['draws']}"


def rollouts_text(result: Optional[dict]) -> str:
    if result is None:
        return "-"
    low, high = result["win_rate_95"]
    return f"{100 * result['win_rate']:.0f}% [{100 * low:.0f}-{100 * high:.0f}]"


def curve_table(curve: list[dict]) -> str:
    lines = ["| gen | net | gating | vs previous (W-L-D) | Elo | vs rollouts (95%) | hours |",
             "|---:|---|---|---:|---:|---:|---:|"]
    for row in curve:
        hours = "-" if row["hours"] is None else f"{row['hours']:.2f}"
        lines.append(f"| {row['generation']} | {row['model']} | {row['gating']} | {win_text(row['vs_previous'])} | "
                     f"{row['elo']:+.0f} | {rollouts_text(row['vs_rollouts'])} | {hours} |")
    return "\n".join(lines)


def percent_interval(value: float, interval: list) -> str:
    return f"{100 * value:.0f}% [{100 * interval[0]:.0f}-{100 * interval[1]:.0f}]"


def strength_lines(found: dict, rewrite_command: str = "python3 benchmarks/default_net_record.py --work-dir RUN "
                                                     "--write") -> list[str]:
    lines = ["## Strength", ""]
    rollouts = found.get("vs_rollouts")
    if rollouts:
        lines += ["Against the rollout engine at equal time per move (`benchmarks/default_net_vs_rollouts.py`):", "",
                  "| board | s/move | games | W-L-D | win rate (95%) |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {r['board']}x{r['board']} | {r['seconds_per_move']:g} | {r['games']}"
                  f"{' (stopped early)' if r.get('interrupted') else ''} | "
                  f"{r['wins']}-{r['losses']}-{r['draws']} | {percent_interval(r['win_rate'], r['win_rate_95'])} |"
                  for r in rollouts["results"]]
        lines.append("")
    gnugo = found.get("vs_gnugo")
    if gnugo:
        elo = "no finite Elo estimate" if gnugo["elo"] is None else f"{gnugo['elo']:+.0f} Elo"
        lines += [f"Against GNU Go level {gnugo['gnugo_level']} (`benchmarks/default_net_vs_gnugo.py`, "
                  f"{gnugo['size']}x{gnugo['size']}, {gnugo['rules']} rules, komi {gnugo['komi']:g}, "
                  f"{gnugo['visits']} visits): {gnugo['wins']}-{gnugo['losses']}-{gnugo['draws']} in "
                  f"{gnugo['games']} games, score {percent_interval(gnugo['score'], gnugo['score_95'])}, {elo}.", ""]
    if not rollouts or not gnugo:
        lines += ["Not measured for this network yet: "
                  + " and ".join(f"`python3 benchmarks/default_net_{key}.py --json-out "
                                 f"benchmarks/default_net_{key}.json`" for key in STRENGTH_FILES if key not in found)
                  + f", then `{rewrite_command}`.", ""]
    return lines


def markdown(record: dict) -> str:
    net, budget, machine = record["network"], record["budget"], record["machine"]
    refinement = record.get("refinement")
    state = "finished" if budget["run_finished"] else "not finished: no results.json yet"
    return "\n".join([
        "# katacli's default network",
        "",
        "Written by `benchmarks/default_net_record.py` from the training run; regenerate it, do not edit it.",
        "",
        f"`katacli/nets/{net['file']}` is `{net['name']}` ({net['architecture']}, model version "
        f"{net['model_version']}, {net['bytes'] / 1024:.0f} KiB, sha256 `{net['sha256'][:16]}...`), the net "
        f"accepted in generation {net['generation']} of an `examples/training_loop.py` run from random weights "
        "on katacli's own self-play, no other network's data"
        + (", then refined by `examples/distill_openings.py` (its own searches of opening positions distilled "
           "into its policy; see Refinement)" if refinement else "")
        + ". `kata gtp`, `kata analysis`, `kata benchmark`, "
        "`kata genconfig` and `kata evalsgf` use it when given no `-model`; `-model rollouts` picks the "
        "network-free rollout engine.",
        "",
        "## Reproduce",
        "",
        *("    " + command for command in record["reproduce"].get("parts", [record["reproduce"]["command"]])),
        *(["    " + record["reproduce"]["refine"]] if refinement else []),
        "    " + record["reproduce"]["then"],
        "",
        *(["The run was made in parts: each continues from the network the part before it accepted last "
           "(`--start-from`: its weights; the optimiser, the self-play data window and the learning-rate "
           "schedule start afresh, so its first generation plays `--first-games` games).", ""]
          if len(record["reproduce"].get("parts", [])) > 1 else []),
        f"Seed {record['reproduce']['seed']}. A rerun plays the same kind of games with the same budget; it is "
        "not bit-for-bit the same run (parallel games and network batches interleave differently), so expect "
        "a similar, not an identical, Elo curve.",
        "",
        "## Budget",
        "",
        f"- generations: {budget['generations_run']} run of {budget['generations_planned']} planned ({state})",
        f"- self-play behind this network: {budget['selfplay_games']} games ({budget['games_per_generation']} per "
        f"generation) at {budget['visits']} visits, boards {', '.join(map(str, budget['boards']))}; "
        f"{net['selfplay_rows']} training rows",
        f"- training: {net['training_samples']} samples ({budget['training_samples_per_generation']} per "
        f"generation, batch {budget['batch_size']})",
        f"- gating: {budget['gating_games']} games per candidate; Elo: {budget['elo_games_per_opponent']} games "
        "per opponent per accepted generation",
        f"- wall time of the run: {budget['wall_time_hours']} hours ({budget['wall_time_from']})",
        *([refinement_budget(refinement)] if refinement else []),
        f"- machine: {machine['cpu']}, {machine['cpu_cores']} cores"
        + (f", {machine['gpu']}" if machine["gpu"] else ", no GPU")
        + f"; torch {machine['torch']}, Python {machine['python']}, katacli {machine['katacli']}"
        + (f"; {machine['note']}" if machine.get("note") else ""),
        "",
        "## Elo curve",
        "",
        curve_table(record["elo_curve"]),
        "",
        record["elo_method"] + ".",
        "",
        *(refinement_lines(refinement) if refinement else []),
        *strength_lines(record["strength"], *([record["reproduce"]["then"].replace("--install", "--write")]
                                               if refinement else [])),
    ])


def refinement_budget(refinement: dict) -> str:
    """The refinement's line of the budget: positions, boards, epochs and time."""
    held = refinement.get("anchor_sizes") or []
    generated = refinement.get("generate_hours")
    return (f"- refinement: {refinement['positions']} opening positions searched at {refinement['visits']} visits "
            f"(trained on boards {', '.join(map(str, refinement['sizes']))}"
            + (f"; boards {', '.join(map(str, held))} held" if held else "") + f"), {refinement['epochs']} epochs; "
            + (f"{generated} hours generating the positions, " if generated is not None
               else "the positions' generation time not recorded, ")
            + f"{refinement['hours']} hours training")


def refinement_lines(refinement: dict) -> list[str]:
    """The refinement's section: what was done and the empty-board policy by line before and after."""
    lines = ["## Refinement", "",
             f"From `{refinement['from']['name']}` (the run's net above): {refinement['positions']} positions of "
             "random openings (up to 12 moves, each sampled from the search) searched by the net itself at "
             f"{refinement['visits']} visits; its policy trained towards those searches' visits on boards "
             f"{', '.join(f'{n}x{n}' for n in refinement['sizes'])} for {refinement['epochs']} epochs (learning "
             f"rate {refinement['lr']:g})"
             + (f", the positions of boards {', '.join(f'{n}x{n}' for n in refinement['anchor_sizes'])} held to "
                "the original net's own policy" if refinement.get("anchor_sizes") else "")
             + ("; only the policy head's weights trained, so the value, score and ownership outputs are "
                "exactly the original's" if refinement.get("policy_head_only")
                else ", its value, score and ownership outputs held to the original's")
             + ". The empty board's policy by line (1 = the edge), before -> after:", "",
             "| board | line 1 | line 2 | line 3 | line 4 | line 5 |", "|---|---:|---:|---:|---:|---:|"]
    for size, profile in sorted(refinement["policy_by_line"].items(), key=lambda item: -int(item[0])):
        before, after = profile["before"], profile["after"]
        cells = [f"{100 * before[str(line)]:.0f}% -> {100 * after[str(line)]:.0f}%" for line in range(1, 6)
                 if str(line) in before]
        lines.append(f"| {size}x{size} | " + " | ".join(cells) + " |")
    return lines + [""]


def write_text(path: Path, text: str) -> None:
    with atomic_output(path) as temp:
        Path(temp).write_text(text)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_file_of_packaged_net(work: Path) -> Path:
    """The run's accepted network that is the packaged one (to record it again, e.g. with new strength results)."""
    packaged = PACKAGE_NETS / DEFAULT_NET_FILE
    if not packaged.is_file():
        raise RecordError(f"{packaged} is missing: pass --install to copy a network of the run there")
    digest = sha256_of(packaged)
    found = next((path for path in sorted((work / "models").glob("*.bin.gz")) if sha256_of(path) == digest), None)
    if found is None:
        raise RecordError(f"{packaged} is none of the networks in {work / 'models'}: pass --install (or --net)")
    return found


def install(net: Path) -> Path:
    target = PACKAGE_NETS / DEFAULT_NET_FILE
    with atomic_output(target) as temp:
        shutil.copyfile(net, temp)
    return target


def main(argv: Optional[list[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--work-dir", type=Path, help="the training_loop.py run")
    parser.add_argument("--net", type=Path,
                        help="the network to record (default: the run's newest accepted one, in WORK/models)")
    parser.add_argument("--install", action="store_true",
                        help=f"copy the network to katacli/nets/{DEFAULT_NET_FILE} and write the record files")
    parser.add_argument("--write", action="store_true",
                        help=f"write katacli/nets/{DEFAULT_NET_RECORD_FILE} and {MARKDOWN.name} without copying "
                             "the network (it must already be the packaged one)")
    parser.add_argument("--loop-args", help="the loop's options, when progress.json does not record them")
    parser.add_argument("--wall-hours", type=float, help="the run's wall time, instead of its recorded times")
    parser.add_argument("--pause", action="append", type=pause_arg, default=[], metavar="GEN=HOURS",
                        help="the run was stopped during generation GEN and resumed HOURS later: leave that "
                             "time out of the hours (repeatable; file times cannot tell a pause from work)")
    parser.add_argument("--machine-note", help='a note on the machine, e.g. "2 cores shared with other jobs"')
    parser.add_argument("--previous-part", type=Path, metavar="RECORD.json",
                        help="the run continued an earlier one (training_loop.py --start-from): that part's "
                             "record (e.g. benchmarks/default_net_part1.json); the record covers both parts")
    parser.add_argument("--base-record", type=Path, metavar="RECORD.json",
                        help="record a network refined from the one this record describes (with --net and "
                             "--refinement) instead of a run's network")
    parser.add_argument("--refinement", type=Path, metavar="LOG.json",
                        help="with --base-record: what examples/distill_openings.py --log-out wrote")
    args = parser.parse_args(argv)
    if args.base_record is None and args.work_dir is None:
        parser.error("give --work-dir (a training_loop.py run) or --base-record (a refined network)")
    if args.base_record is not None and (args.net is None or args.refinement is None):
        parser.error("--base-record needs --net (the refined network) and --refinement (its log)")
    work = args.work_dir
    try:
        if args.base_record is not None:
            if not args.net.is_file():
                raise RecordError(f"network not found: {args.net}")
            net = args.net
            record = refined_record(read_json(args.base_record), args.base_record.name, net,
                                    read_json(args.refinement), args.machine_note)
        else:
            net, record = run_record(work, args)
        if args.install:
            install(net)
        if args.install or args.write:
            packaged = PACKAGE_NETS / DEFAULT_NET_FILE
            if not packaged.is_file() or sha256_of(packaged) != record["network"]["sha256"]:
                raise RecordError(f"{packaged} is not {net}: pass --install to copy it there first")
            write_text(PACKAGE_NETS / DEFAULT_NET_RECORD_FILE, json.dumps(record, indent=1) + "\n")
            write_text(MARKDOWN, markdown(record))
    except RecordError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(markdown(record))
    if args.install or args.write:
        print(f"[{time.strftime('%H:%M:%S')}] wrote katacli/nets/{DEFAULT_NET_RECORD_FILE} and "
              f"benchmarks/{MARKDOWN.name}" + (f"; installed {net.name} as katacli/nets/{DEFAULT_NET_FILE}"
                                               if args.install else ""))
    return 0


def run_record(work: Path, args) -> tuple[Path, dict]:
    """The network of a training_loop.py run to record (--net, the packaged one, or the newest accepted) and
    its record."""
    progress = read_json(work / "progress.json")
    if args.net:
        net = args.net
    elif args.write and not args.install:
        net = run_file_of_packaged_net(work)
    else:
        net = work / "models" / newest_accepted(progress["rows"])["model"]
    if not net.is_file():
        raise RecordError(f"network not found: {net}")
    previous = read_json(args.previous_part) if args.previous_part else None
    return net, build_record(work, net, args.loop_args, args.wall_hours, args.machine_note, args.pause, previous)


if __name__ == "__main__":
    sys.exit(main())
