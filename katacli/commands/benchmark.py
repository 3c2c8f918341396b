"""``kata benchmark``: measure search speed for several numSearchThreads values (leaves in flight) and recommend one."""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from typing import List, Optional

import typer

from katacli.katago_defaults import default_gtp_config
from katacli.tuning.network import DEFAULT_VISITS_CPU, DEFAULT_VISITS_GPU, DEFAULT_VISITS_ROLLOUTS, default_visits
from katacli.cli_support import (
    config_option, exit_on_config_error, human_model_option, human_model_warning, load_config, model_option,
    override_config_option, report_error_and_exit,
)
from katacli.nets import choose_model

HELP = """Measure search speed and recommend numSearchThreads for your machine (like `katago benchmark`).
numSearchThreads is how many leaves one search keeps in flight per network batch (KataGo's search threads).

It searches positions from a bundled game (or -sgf FILE) with each thread count and prints, per count,
visits per second, network evaluations per second and the average batch size. Then it estimates which
count plays strongest: more threads search faster, but each thread makes the search a little worse;
the estimate weighs both for the time per move you expect (-time, default 5 seconds).
Other programs running at the same time make the figures noisy: the estimate uses each count's median
over positions, a count whose speeds scatter against the first count's is searched again, and more
threads are recommended only when they are better by more than the noise. On a GPU the network is
first timed alone at each batch size: that curve bounds what a search can reach, its knee sets the
thread counts tuning tries, and the repeatability of its batch times (not the positions' scatter) is
the noise; an idle GPU is never searched twice.

\b
Examples:
  kata benchmark -model net.bin.gz                      # tune automatically
  kata benchmark -model net.bin.gz -t 1,2,4,8 -v 400    # just these counts, 400 visits each
  kata benchmark -model net.bin.gz -config gtp.cfg --json
  kata benchmark -model net.bin.gz -human-model b18c384nbt-humanv0.bin.gz -config configs/gtp_human5k_example.cfg

Without -model katacli's default network is measured (the one `kata gtp` plays with when given no
-model); `-model rollouts` measures the rollout engine: random playouts, no network.
"""

MODE = "benchmark"
MIN_VISITS, MAX_VISITS = 2, 1_000_000_000 - 1
MAX_NUM_POSITIONS = 100_000
MAX_SECONDS_PER_MOVE = 1_000_000.0
EXIT_INTERRUPTED = 130
TABLE_MIN_WIDTH = 140


@dataclass
class BenchmarkOptions:
    model: Optional[str]
    config: Optional[List[str]]
    override_config: Optional[List[str]]
    visits: Optional[int]
    threads: Optional[str]
    num_positions: int
    seconds_per_move: float
    tune: bool
    sgf: Optional[str]
    board_size: Optional[int]
    fixed_batch_size: Optional[int]
    half_batch_size: bool
    as_json: bool
    human_model: Optional[str] = None
    second_looks: Optional[bool] = None   # None: on a GPU that launches its calls (katacli.tuning.setting_checks)


def validate(options: BenchmarkOptions) -> Optional[List[int]]:
    """Check the options that need no loading; returns the thread counts asked for (None: tune)."""
    from katacli.tuning.network import check_model_paths
    from katacli.search.benchmark_positions import BenchmarkError, MAX_BENCHMARK_BOARD_LEN, MIN_BENCHMARK_BOARD_LEN
    from katacli.tuning.runner import BatchSizePolicy, parse_thread_list

    check_model_paths(options.model, options.human_model)
    if options.visits is not None and not MIN_VISITS <= options.visits <= MAX_VISITS:
        raise BenchmarkError(f"Number of visits to use: invalid value {options.visits} "
                             f"(must be {MIN_VISITS} to {MAX_VISITS})")
    if not 1 <= options.num_positions <= MAX_NUM_POSITIONS:
        raise BenchmarkError(f"Number of positions per game to use: invalid value {options.num_positions} "
                             f"(must be 1 to {MAX_NUM_POSITIONS})")
    if not 0 < options.seconds_per_move <= MAX_SECONDS_PER_MOVE:
        raise BenchmarkError(f"Number of seconds per game move to assume: invalid value {options.seconds_per_move:g} "
                             f"(must be above 0 and at most {MAX_SECONDS_PER_MOVE:g})")
    if options.sgf is not None and options.board_size is not None:
        raise BenchmarkError("Cannot specify both -sgf and -boardsize at the same time")
    if options.board_size is not None and not MIN_BENCHMARK_BOARD_LEN <= options.board_size <= MAX_BENCHMARK_BOARD_LEN:
        raise BenchmarkError(f"Board size to test: invalid value {options.board_size} (built-in positions exist for "
                             f"{MIN_BENCHMARK_BOARD_LEN} to {MAX_BENCHMARK_BOARD_LEN})")
    try:
        BatchSizePolicy(options.fixed_batch_size, options.half_batch_size)
    except ValueError as exc:
        raise BenchmarkError(str(exc)) from None
    if options.threads is None or not options.threads.strip():
        return None   # -t "" (a script's empty variable) tunes, as in KataGo
    if options.tune:
        raise BenchmarkError("Cannot both automatically tune threads (-s) and specify exact numbers of threads (-t)")
    try:
        return parse_thread_list(options.threads)
    except ValueError as exc:
        raise BenchmarkError(str(exc)) from None


class Report:
    """Human output: KataGo's plain lines (greppable) and a rich summary table. With --json it goes to stderr."""

    def __init__(self, to_stderr: bool = False, console=None):
        from rich.console import Console

        self.console = console or Console(stderr=to_stderr, highlight=False, soft_wrap=True)
        self.live = self.console.is_terminal
        if not self.live:  # a file or pipe: rich assumes 80 columns, too narrow for the summary table
            self.console.width = max(self.console.width, TABLE_MIN_WIDTH)

    def line(self, text: str = "", style: Optional[str] = None) -> None:
        self.console.print(text, style=style, markup=False)

    def progress(self, result) -> None:
        if self.live:  # overwrite the same line while positions are searched, as KataGo does
            self.console.file.write("\r" + result.progress_line() + "      ")
            self.console.file.flush()

    def result(self, result, elo_diff=None, is_baseline=False) -> None:
        if self.live:
            self.console.file.write("\r")
        self.line(result.summary_line(elo_diff, is_baseline))

    def noise(self, result, spread: float) -> None:
        if self.live:
            self.console.file.write("\r")
        # Not starting "numSearchThreads = N:": scripts read KataGo's result lines by that prefix.
        self.line(f"Speeds at numSearchThreads = {result.num_threads} scatter by {spread:.0%} against the first count, "
                  "position by position (is the machine busy?): searching the positions again")

    def table(self, recommendation) -> None:
        from rich.table import Table

        table = Table(title="Benchmark summary", title_justify="left")
        for name in ("threads", "batch max", "visits/s", "median", "nnEvals/s", "batch avg", "secs", "Elo"):
            table.add_column(name, justify="right", no_wrap=True)
        table.add_column("", no_wrap=True)
        for i, r in enumerate(recommendation.results):
            best = i == recommendation.best_index
            elo = "baseline" if i == 0 else f"{recommendation.elo_vs_baseline(i):+.0f}"
            table.add_row(str(r.num_threads), "-" if r.max_batch_size is None else str(r.max_batch_size),
                          f"{r.visits_per_second:.1f}", f"{r.median_visits_per_second:.1f}", f"{r.nn_evals_per_second:.1f}", f"{r.average_batch_size:.2f}",
                          f"{r.total_seconds:.1f}", elo, "<- recommended" if best else "",
                          style="bold green" if best else None)
        self.console.print(table)


def _load(options: BenchmarkOptions, report: Report):
    """(config, search params, positions, evaluator or None, the game the positions come from, human net or None)."""
    from katacli.tuning.network import load_evaluator
    from katacli.search.benchmark_positions import (
        DEFAULT_BENCHMARK_BOARD_LEN, bundled_game, load_game, positions_from_game,
    )
    from katacli.search import SearchParams
    from katacli.setup.engine_settings import NNSettings, load_default_board_size

    cfg = load_config(options.config, options.override_config, mode=MODE)
    with exit_on_config_error():
        params = SearchParams.from_config(cfg, MODE, has_human_model=options.human_model is not None)
        nn_settings = NNSettings.from_config(cfg, MODE)
        default_size = load_default_board_size(cfg, MODE)
    if options.sgf is not None:
        game = load_game(options.sgf)
    else:
        board_len = options.board_size or (max(default_size) if default_size else DEFAULT_BENCHMARK_BOARD_LEN)
        report.line(f"Testing with default positions for board size: {board_len}")
        game = bundled_game(board_len)
    positions = positions_from_game(game, options.num_positions)
    evaluator = None
    if options.model is not None:
        report.line("Loading model and initializing benchmark...")
        evaluator = load_evaluator(options.model, nn_settings, max_batch_size=1)
    human_evaluator = None
    if options.human_model is not None:
        human_evaluator = load_evaluator(options.human_model, nn_settings, max_batch_size=1)
        report.line(f"Loaded human SL model {options.human_model}")
        warning = human_model_warning(human_evaluator, "humanSLProfile" in cfg)
        if warning:
            report.line(warning, style="yellow")
    return cfg, params, positions, evaluator, game, human_evaluator


def _header(report: Report, options: BenchmarkOptions, cfg, params, evaluator, visits: int, choice) -> None:
    from katacli.tuning.network import describe_device
    from katacli.nets import DEFAULT_MISSING, FROM_DEFAULT

    if options.config:
        report.line(f"Loaded config {', '.join(options.config)}")
    if choice.source in (FROM_DEFAULT, DEFAULT_MISSING):
        report.line(choice.note, style="yellow" if choice.source == DEFAULT_MISSING else None)
    if evaluator is None:
        report.line("Without a network: benchmarking the rollout engine (random playouts instead of a network).",
                    style="yellow")
        report.line("  pass -model NET.bin.gz (or no -model for katacli's default network) to tune a real setup.")
    else:
        report.line(f"Loaded model {options.model}")
    report.line()
    report.line(f"Testing using {visits} visits.")
    if evaluator is not None and visits == default_visits(evaluator):   # KataGo: also when -v names the default
        report.line('  If you have a good GPU, you might increase this using "-visits N" to get more accurate results.')
        report.line("  If you have a weak GPU and this is taking forever, you can decrease it instead to finish the "
                    "benchmark faster.")
    report.line()
    report.line(f"The network runs on: {describe_device(evaluator)}")
    if evaluator is not None:
        report.line(_leaf_helper_line(params))
    if "nnMaxBatchSize" in cfg:
        report.line(f"WARNING: Your nnMaxBatchSize is hardcoded to {cfg.as_dict()['nnMaxBatchSize']}, ignoring it and "
                    "assuming it is >= threads, for this benchmark.", style="yellow")
    if "numSearchThreads" in cfg or "numSearchThreadsPerAnalysisThread" not in cfg:
        report.line(f"Your GTP config is currently set to use numSearchThreads = {params.num_search_threads}")
    else:
        # An analysis config (KataGo's benchmark refuses it): its per-search threads are not numSearchThreads.
        report.line(f"Your config sets no numSearchThreads (it looks like an analysis config: "
                    f"numSearchThreadsPerAnalysisThread = {cfg.as_dict()['numSearchThreadsPerAnalysisThread']}); "
                    f"the baseline is the default, numSearchThreads = {params.num_search_threads}", style="yellow")


def _leaf_helper_line(params) -> str:
    """What numLeafFeatureThreads gives a search of 2 or more threads (one-thread searches never have helpers)."""
    from katacli.search.leaf_threads import SECOND_HELPER_MIN_LEAVES, leaf_feature_threads

    helpers, big = leaf_feature_threads(params, 2), leaf_feature_threads(params, SECOND_HELPER_MIN_LEAVES)
    if helpers == 0:
        return "Leaf inputs are built by each search's own thread (numLeafFeatureThreads = 0, or one CPU core)."
    more = (f" ({big} from {SECOND_HELPER_MIN_LEAVES} leaves a batch: numSearchThreads, halved when pipelined)"
            if big != helpers else "")
    return (f"With 2 or more search threads, {helpers} helper thread(s){more} build the leaves' network inputs beside "
            "each search (numLeafFeatureThreads; 0 turns them off).")


def _advice(report: Report, options: BenchmarkOptions, cfg) -> None:
    where = options.config[-1] if options.config else "your GTP config"
    report.line(f"If you care about performance, you may want to edit numSearchThreads in {where} based on the "
                "above results!")
    if "nnMaxBatchSize" in cfg:
        report.line(f"WARNING: Your nnMaxBatchSize is hardcoded to {cfg.as_dict()['nnMaxBatchSize']}, recommend "
                    "deleting it and using the default (which this benchmark assumes)", style="yellow")
    report.line("If you intend to do much longer searches, configure the seconds per game move you expect with the "
                "'-time' flag and benchmark again.")
    report.line("If you intend to do short or fixed-visit searches, use lower numSearchThreads for better strength, "
                "high threads will weaken strength.")
    if options.config:   # KataGo's last advice line names the config file
        report.line(f"If interested see also other notes about performance and mem usage in the top of {where}")
    report.line()


def _summary(report: Report, options: BenchmarkOptions, cfg, recommendation, tuned: bool, rollouts: bool) -> None:
    """The comparison of the thread counts and the recommendation (nothing for a single count)."""
    results = recommendation.results
    if tuned:
        report.line("Ordered summary of results: ")
        report.line()
        for i, result in enumerate(results):
            report.line(result.summary_line(recommendation.elo_vs_baseline(i) if i else None, is_baseline=i == 0))
    if len(results) > 1 or tuned:
        for text in recommendation.explanation():
            report.line(text)
        report.table(recommendation)
        report.line()
        if rollouts:
            report.line("NOTE: without a network numSearchThreads does not change the speed, so differences between "
                        "the counts above are measurement noise: keep numSearchThreads = 1.", style="yellow")
        _advice(report, options, cfg)


def run(options: BenchmarkOptions) -> int:
    from katacli.search.speed_benchmark import peak_resident_mb
    from katacli.tuning.network import warm_up
    from katacli.search.benchmark_positions import BenchmarkError
    from katacli.tuning.recommend import elo_effect, recommend
    from katacli.tuning.noise import busy_machine_warning
    from katacli.tuning.runner import BatchSizePolicy, Benchmarker
    from katacli.tuning.gpu_curve import measure_gpu_curve
    from katacli.tuning.setting_checks import take_second_looks

    report = Report(to_stderr=options.as_json)
    busy = busy_machine_warning()  # before this process adds its own load
    choice = choose_model(options.model)
    options = replace(options, model=choice.path)
    try:
        thread_counts = validate(options)
        cfg, params, positions, evaluator, game, human_evaluator = _load(options, report)
    except BenchmarkError as exc:
        report_error_and_exit(str(exc))
    visits = options.visits if options.visits is not None else default_visits(evaluator)
    _header(report, options, cfg, params, evaluator, visits, choice)
    if busy:   # measured before this process loaded anything: the load average is the whole machine's
        report.line(busy, style="yellow")
    warm_up(evaluator, params, game.x_size, game.y_size, notify=report.line)
    # On a GPU: the network's own throughput curve, and its batch timing as the measure of noise.
    curve = measure_gpu_curve(evaluator, game.x_size, game.y_size)
    if curve is not None:
        for text in curve.lines():
            report.line(text)
    gpu_quiet = curve is not None and not curve.is_noisy and busy is None
    if evaluator is None and thread_counts is None:
        report.line("The rollout engine evaluates one leaf at a time, so numSearchThreads does not change its speed: "
                    "measuring the configured count only.")
        thread_counts = [params.num_search_threads]
    tuned = thread_counts is None
    printed: list = []

    def on_result(result) -> None:
        if tuned:  # tuning measures out of order: the Elo comparison comes in the ordered summary
            report.result(result)
        elif not printed:
            report.result(result, is_baseline=True)
        else:
            diff = elo_effect(result, options.seconds_per_move) - elo_effect(printed[0], options.seconds_per_move)
            report.result(result, diff)
        printed.append(result)

    benchmarker = Benchmarker(positions, params, evaluator, visits,
                              batch_policy=BatchSizePolicy(options.fixed_batch_size, options.half_batch_size),
                              on_progress=report.progress, on_result=on_result, human_evaluator=human_evaluator,
                              on_noise=report.noise, remeasure_noisy=not gpu_quiet)
    size_text = f"board size {game.x_size}x{game.y_size}"
    try:
        if tuned:
            report.line(f"Automatically trying different numbers of threads to home in on the best ({size_text}): ")
            report.line()
            results = benchmarker.autotune(options.seconds_per_move, on_round=lambda r: report.line(
                "Possible numbers of threads to test: " + ", ".join(map(str, r.candidates))),
                **({"max_threads": curve.autotune_max_threads()} if curve is not None else {}))
        else:
            several = len(thread_counts) > 1
            report.line(f"Testing different numbers of threads ({size_text}): " if several
                        else f"Testing ({size_text}): ")
            results = benchmarker.run_thread_counts(thread_counts)
    except KeyboardInterrupt:
        report.line("\nInterrupted.")
        return EXIT_INTERRUPTED
    recommendation = recommend(results, options.seconds_per_move, noise=curve.noise if gpu_quiet else None)
    _summary(report, options, cfg, recommendation, tuned, rollouts=evaluator is None)
    try:
        # On a GPU (or --second-looks): the best count with searchPipelining the other way and one more helper.
        checks = take_second_looks(benchmarker, recommendation.best, evaluator, human_evaluator, report.line,
                                   options.second_looks)
        if checks:
            report.line()
    except KeyboardInterrupt:
        report.line("\nInterrupted.")
        return EXIT_INTERRUPTED
    peak_mb = peak_resident_mb()
    if peak_mb is not None:
        report.line(f"Peak resident memory of this process: {peak_mb:.0f} MB (network, torch and search trees)")
    if options.as_json:
        data = recommendation.to_dict()
        data.update(visits=visits, board_size=[game.x_size, game.y_size], positions=len(positions),
                    engine="rollouts" if evaluator is None else "network", model=options.model,
                    peak_resident_mb=None if peak_mb is None else round(peak_mb, 1),
                    setting_checks=[check.to_dict() for check in checks])
        sys.stdout.write(json.dumps(data, indent=2) + "\n")
    return 0


def register(app: typer.Typer) -> None:
    @app.command("benchmark", help=HELP)
    def benchmark(
        model: Optional[str] = model_option(required=False),
        human_model: Optional[str] = human_model_option(),
        config: Optional[List[str]] = config_option("gtp_example.cfg", katago_default=True),
        override_config: Optional[List[str]] = override_config_option(),
        visits: Optional[int] = typer.Option(
            None, "-v", "--visits", metavar="VISITS",
            help=f"Visits per search (default {DEFAULT_VISITS_GPU} on a GPU, {DEFAULT_VISITS_CPU} on a CPU, "
                 f"{DEFAULT_VISITS_ROLLOUTS} without a network)."),
        threads: Optional[str] = typer.Option(
            None, "-t", "--threads", metavar="LIST",
            help="Test these numSearchThreads values (leaves one search keeps in flight), comma-separated, e.g. "
                 "4,8,12,16. Default: tune automatically."),
        num_positions: int = typer.Option(10, "-n", "--numpositions", metavar="NUM",
                                          help="How many positions to search from the game."),
        seconds_per_move: float = typer.Option(
            5.0, "-i", "--time", metavar="SECONDS",
            help="Typical time per move you play with; the recommendation depends on it."),
        tune: bool = typer.Option(False, "-s", "--tune",
                                  help="Search automatically for the best number of threads (the default without -t)."),
        sgf: Optional[str] = typer.Option(None, "--sgf", metavar="FILE",
                                          help="Take the positions from this game instead of the built-in one."),
        board_size: Optional[int] = typer.Option(None, "--boardsize", metavar="SIZE",
                                                 help="Board size of the built-in positions (7 to 19; default 19)."),
        fixed_batch_size: Optional[int] = typer.Option(None, "--fixed-batch-size", metavar="NUM",
                                                       help="Limit network batches to this size."),
        half_batch_size: bool = typer.Option(False, "--half-batch-size",
                                             help="Limit network batches to half the number of threads."),
        as_json: bool = typer.Option(False, "--json",
                                     help="Print the results as JSON on stdout (the usual report goes to stderr)."),
        second_looks: Optional[bool] = typer.Option(
            None, "--second-looks/--no-second-looks",
            help="Search the best thread count again with searchPipelining (two batches in flight) the other way "
                 "and with one more leaf helper thread (numLeafFeatureThreads, where cores allow), and recommend "
                 "what is clearly faster. Default: on a GPU, from 16 threads."),
    ) -> None:
        config, config_note = default_gtp_config(config)   # KataGo's default_gtp.cfg, when set up
        if config_note:
            print(config_note, file=sys.stderr, flush=True)
        options = BenchmarkOptions(model, config, override_config, visits, threads, num_positions, seconds_per_move,
                                   tune, sgf, board_size, fixed_batch_size, half_batch_size, as_json, human_model,
                                   second_looks)
        raise typer.Exit(run(options))
