"""``kata testgpuerror``: how far the network's outputs drift on the GPU and in half precision (KataGo's testgpuerror)."""
from __future__ import annotations

import copy
import sys
import time
from typing import List, Optional

import typer

from katacli.katago_defaults import default_gtp_config
from katacli.cli_support import (
    config_option, exit_on_config_error, load_config, model_option, override_config_option, report_error_and_exit,
)

HELP = """Check that your GPU computes the network correctly, and how much precision float16 costs
(like `katago testgpuerror`).

Positions from real games are evaluated first by the exact reference (float32 on the CPU, one
position at a time), then on the GPU in float32 and in float16, each one position at a time and in
batches. For each of these it prints the average, 90%, 99% and maximum error of the winrate, the
scores, the policy and the ownership against the reference, and how close the worst of them comes to
KataGo's limits (1x = at the limit). It exits with status 0 when every configuration is within them.
float32 should differ only by rounding; float16 a little more. Large errors mean a broken driver,
GPU or library.

Without a GPU it compares this CPU's float16 with its float32 instead (-precision float16,bfloat16 adds bfloat16, held to the same limits, which its 3 fewer mantissa bits can exceed on a healthy machine).

\b
Examples:
  kata testgpuerror -model net.bin.gz                     # 19x19 positions
  kata testgpuerror -model net.bin.gz -boardsize 9 -quick
  kata testgpuerror -model net.bin.gz -sgf mygame.sgf -precision float16,bfloat16
  kata testgpuerror -model net.bin.gz -reference-file ref.jsonl  # saves it, or compares with a saved one

-reference-file: when FILE does not exist the reference is computed and saved there; when it does,
it is read instead of computed (e.g. made on another machine with the same options).
"""

MODE = "benchmark"
EXIT_FAILED = 1
MAX_BATCH_SIZE = 65536
MIN_POLICY_TEMPERATURE = 0.01
MAX_POLICY_TEMPERATURE = 100.0
KATAGO_DATASETS = ("10x14", "rectangle")  # KataGo's non-square position sets: no built-in games here
REDUCED_PRECISIONS = ("float16", "bfloat16")


def parse_precisions(text: Optional[str]) -> Optional[List[str]]:
    from katacli.search.benchmark_positions import BenchmarkError

    if text is None:
        return None
    names = [part.strip() for part in text.split(",") if part.strip()]
    for name in names:
        if name not in REDUCED_PRECISIONS + ("float32",):
            raise BenchmarkError(f"-precision: unknown precision '{name}' (use float16 and/or bfloat16)")
    if not names:
        raise BenchmarkError("-precision: give at least one of float16, bfloat16")
    return names


def load_games(board_size: Optional[str], sgf_files: Optional[List[str]]) -> tuple[list, str]:
    """(games, what the positions are, in words)."""
    from katacli.search.benchmark_positions import (
        DEFAULT_BENCHMARK_BOARD_LEN, BenchmarkError, bundled_game, load_game,
    )

    if sgf_files and board_size is not None:
        raise BenchmarkError("Cannot specify both -sgf and -boardsize at the same time")
    if sgf_files:
        return [load_game(path) for path in sgf_files], ", ".join(sgf_files)
    text = board_size if board_size is not None else str(DEFAULT_BENCHMARK_BOARD_LEN)
    if text in KATAGO_DATASETS:
        raise BenchmarkError(f"-boardsize {text}: katacli has no built-in positions for KataGo's '{text}' set; "
                             "pass -sgf FILE with a game on the board you want")
    if not text.isdigit():
        raise BenchmarkError(f"Board size dataset to test: invalid value {text} (a number from 7 to 19)")
    return [bundled_game(int(text))], f"{text}x{text} (the built-in game)"


def batch_size_from_config(cfg, report) -> int:
    """KataGo's batch size for the batched runs: nnMaxBatchSize, else numSearchThreads, else 16."""
    from katacli.tuning.gpu_error import DEFAULT_BATCH_SIZE

    with exit_on_config_error():
        for key in ("nnMaxBatchSize", "numSearchThreads"):
            if key in cfg:
                size = cfg.get_int(key, minimum=1, maximum=MAX_BATCH_SIZE)
                report(f"For batch test, using batch size from {key} in config: {size}")
                return size
    report(f"For batch test, using default batch size {DEFAULT_BATCH_SIZE}")
    return DEFAULT_BATCH_SIZE


def input_settings_from_config(cfg, report):
    """policyOptimism, playoutDoublingAdvantage and rootPolicyTemperature, when the config sets them (as KataGo)."""
    from katacli.tuning.gpu_error import InputSettings

    with exit_on_config_error():
        settings = InputSettings(
            cfg.get_float("policyOptimism", 0.0, minimum=0.0, maximum=1.0) if "policyOptimism" in cfg else 0.0,
            cfg.get_float("playoutDoublingAdvantage", 0.0, minimum=-3.0, maximum=3.0)
            if "playoutDoublingAdvantage" in cfg else 0.0,
            cfg.get_float("rootPolicyTemperature", 1.0, minimum=MIN_POLICY_TEMPERATURE,
                          maximum=MAX_POLICY_TEMPERATURE) if "rootPolicyTemperature" in cfg else 1.0)
    if settings != InputSettings():
        report(f"Using policyOptimism {settings.policy_optimism:g}, playoutDoublingAdvantage "
               f"{settings.playout_doubling_advantage:g}, policy temperature {settings.policy_temperature:g}")
    return settings


def evaluator_factory(model, batch_size: int):
    """Builds each configuration's NNEvaluator on its own copy of the model (moving one to the GPU leaves
    the others where they are); uncached, so every evaluation runs the network."""
    from katacli.nn.evaluator import NNEvaluator

    def make(configuration):
        reduced_on_cpu = configuration.device == "cpu" and configuration.precision != "float32"
        return NNEvaluator(copy.deepcopy(model), device=configuration.device, precision=configuration.precision,
                           cache_size_power_of_two=None, max_batch_size=batch_size,
                           trace=False if reduced_on_cpu else None)  # autocast does not trace reproducibly
    return make


def run(model_arg, config, override_config, board_size, sgf_files, quick, reference_file, precision) -> int:
    import torch

    from katacli import __version__, KATAGO_COMPAT_VERSION
    from katacli.nets import choose_model
    from katacli.nn.torch_model import load_model
    from katacli.search.benchmark_positions import BenchmarkError
    from katacli.tuning import gpu_error as ge
    from katacli.tuning.network import check_model_paths

    def report(line: str = "") -> None:
        print(line, flush=True)

    choice = choose_model(model_arg)
    if choice.path is None:
        report_error_and_exit("kata testgpuerror needs a network: pass -model NET.bin.gz")
    config, config_note = default_gtp_config(config)   # KataGo's default_gtp.cfg, when set up
    if config_note:
        report(config_note)
    cfg = load_config(config, override_config, mode=MODE)
    try:
        check_model_paths(choice.path, None)
        precisions = parse_precisions(precision)
        games, described = load_games(board_size, sgf_files)
        states = ge.game_positions(games, quick)
    except BenchmarkError as exc:
        report_error_and_exit(str(exc))
    report(f"Version katacli {__version__} (KataGo {KATAGO_COMPAT_VERSION} compatible), torch {torch.__version__}")
    report(f"Testing {choice.path}")
    report(f"Testing on {described}: {len(states)} positions" + (" (-quick)" if quick else ""))
    report("Testing average errors between different GPU configurations...")
    batch_size = batch_size_from_config(cfg, report)
    settings = input_settings_from_config(cfg, report)
    cuda = torch.cuda.is_available()
    if cuda:
        report(f"GPU: {torch.cuda.get_device_name()}")
    else:
        report("No CUDA GPU found (torch.cuda.is_available() is false): comparing this CPU's reduced precisions "
               "with its float32 instead.")
    try:
        model = load_model(choice.path)
    except Exception as exc:  # a corrupt or unsupported file: one line, no traceback
        report_error_and_exit(f"could not load the model {choice.path}: {exc}")
    requests = ge.build_requests(states, settings, model.needs_metadata)
    make = evaluator_factory(model, batch_size)
    report("Beginning evaluations! These may take a long time on pure CPU, or on a weak GPU, but on a decent GPU "
           "shouldn't take too long.")
    started = time.perf_counter()
    try:
        reference, how = ge.read_or_make_reference(
            reference_file, requests, lambda: ge.evaluate_all(make(ge.REFERENCE), requests, 1), model.name)
    except (ge.GpuErrorTestError, OSError) as exc:
        report_error_and_exit(str(exc))
    if how == "loaded":
        report(f"Loaded reference values for {len(reference)} positions from: {reference_file}")
    else:
        report(f"Running evaluations in {ge.REFERENCE.label} (the reference): {time.perf_counter() - started:.1f}s")
        if how == "saved":
            report(f"Saved reference values for {len(reference)} positions to: {reference_file}")
    results = []
    for configuration in ge.configurations_to_test(cuda, precisions):
        result = ge.run_configuration(configuration, make, requests, reference, batch_size, how != "loaded", report)
        results.append(result)
    report(f"Computed stats on {len(reference)} positions")
    passed = ge.report_results(results, report)
    failed = [r.configuration.label for r in results if not r.passed()]
    if passed:
        report("All configurations are within KataGo's error limits.")
        return 0
    report(f"FAILED: {', '.join(failed)} outside KataGo's error limits (a margin above 1x, or could not run).")
    return EXIT_FAILED


def register(app: typer.Typer) -> None:
    @app.command("testgpuerror", help=HELP)
    def testgpuerror(
        model: Optional[str] = model_option(required=False, rollouts=False),
        config: Optional[List[str]] = config_option("gtp_example.cfg", katago_default=True),
        override_config: Optional[List[str]] = override_config_option(),
        board_size: Optional[str] = typer.Option(
            None, "--boardsize", metavar="SIZE",
            help="Board size of the built-in game whose positions are tested (7 to 19; default 19)."),
        sgf: Optional[List[str]] = typer.Option(
            None, "--sgf", metavar="FILE", help="Test every position of this game instead (may be repeated)."),
        quick: bool = typer.Option(False, "--quick", help="Faster, shorter test: about 30% of the positions."),
        reference_file: Optional[str] = typer.Option(
            None, "--reference-file", metavar="FILE",
            help="Save the reference to FILE, or read it from FILE when it exists (JSON lines)."),
        precision: Optional[str] = typer.Option(
            None, "--precision", metavar="LIST",
            help="Reduced precisions to compare, comma-separated: float16, bfloat16 (default float16)."),
    ) -> None:
        try:
            code = run(model, config, override_config, board_size, sgf, quick, reference_file, precision)
        except KeyboardInterrupt:
            print("\nInterrupted.", file=sys.stderr)
            code = EXIT_FAILED
        raise typer.Exit(code)
