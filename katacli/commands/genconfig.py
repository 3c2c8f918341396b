"""``kata genconfig``: a wizard that asks how the engine should play, tunes threads, and writes a GTP config."""
from __future__ import annotations

import dataclasses
import os
import re
import sys
from dataclasses import dataclass
from typing import Callable, Optional, TypeVar

import typer

from katacli import config_keys
from katacli.atomic_files import atomic_write_text
from katacli.setup.config_writer import GenConfigChoices
from katacli.cli_support import report_error_and_exit
from katacli.nets import choose_model

HELP = """Write a commented GTP config for your machine, asking a few questions (like `katago genconfig`).

It asks KataGo's questions in KataGo's order (answers piped to `katago genconfig` work here too): which
rules to use, how long to think per move, whether to ponder, which GPU(s) to use and how much memory to
spend on the cache (a forced komi and resignation come from --komi and --resign-threshold / --no-resign,
which take the same defaults as KataGo's example config). Then it benchmarks
the network to choose numSearchThreads (the batch size follows it), and writes a config that `kata gtp`
loads without warnings:

\b
  kata genconfig -model net.bin.gz -output gtp.cfg
  kata gtp -model net.bin.gz -config gtp.cfg

For scripts, --non-interactive takes the answers from flags (defaults otherwise), e.g.

\b
  kata genconfig -model net.bin.gz --non-interactive --rules japanese --max-visits 800

To play like a human of some rank or era instead of at full strength, give KataGo's human SL network
with -human-model: the wizard then asks which players to imitate (--human-profile with
--non-interactive), and the tuning searches with both nets, as `kata gtp` will:

\b
  kata genconfig -model net.bin.gz -human-model b18c384nbt-humanv0.bin.gz -output human.cfg
  kata gtp -model net.bin.gz -human-model b18c384nbt-humanv0.bin.gz -config human.cfg

Without -model the wizard tunes for katacli's default network, the one `kata gtp` plays with when
given no -model; `-model rollouts` writes a config for the network-free rollout engine (no tuning).
An existing file is only overwritten after you confirm (or with --force).
"""

DEFAULT_OUTPUT = "gtp.cfg"
RULES_CHOICES = ("chinese, japanese, korean, tromp-taylor, aga, chinese-ogs, new-zealand, bga, stone-scoring, "
                 "aga-button")
DEFAULT_NONINTERACTIVE_RULES = "tromp-taylor"
DEFAULT_RESIGN_THRESHOLD = GenConfigChoices.resign_threshold
RESIGN_SPEC = config_keys.get_spec("resignThreshold")
LIMIT_KINDS = {"visits": "visits", "visit": "visits", "playouts": "playouts", "playout": "playouts",
               "seconds": "seconds", "second": "seconds"}
MAX_LIMIT = 1_000_000_000
MAX_SECONDS = 1.0e20
MAX_CACHE_GB = 1_000_000.0
MAX_SECONDS_PER_MOVE = 1_000_000.0
SECTION_RULE = "=" * 73
DEFAULT_HUMAN_PROFILE = "rank_5k"
HUMAN_PROFILE_EXAMPLES = ("rank_5k (a modern 5 kyu), preaz_9d (a 9 dan before AlphaZero), rank_3k_5d (Black 3k, "
                          "White 5d), proyear_1990 (professionals of 1990)")
T = TypeVar("T")


class WizardAborted(Exception):
    """The wizard cannot go on (stdin closed, Ctrl-C); nothing is written."""


@dataclass
class GenconfigOptions:
    model: Optional[str]
    output: str
    non_interactive: bool
    force: bool
    rules: Optional[str]
    komi: Optional[float]
    max_visits: Optional[int]
    max_playouts: Optional[int]
    max_time: Optional[float]
    ponder: bool
    max_ponder_time: Optional[float]
    resign: bool
    resign_threshold: float
    devices: Optional[str]
    cache_gb: Optional[float]
    threads: Optional[int]
    tune_visits: Optional[int]
    tune_positions: int
    seconds_per_move: float
    human_model: Optional[str] = None  # a human SL net searched beside the main one while tuning
    human_profile: Optional[str] = None  # humanSLProfile to imitate (--human-profile)


# --------------------------------------------------------------------------- answers: parsing


def parse_yes_no(default: Optional[bool]) -> Callable[[str], bool]:
    def parse(text: str) -> bool:
        word = text.lower()
        if word in ("y", "yes"):
            return True
        if word in ("n", "no"):
            return False
        if not word and default is not None:
            return default
        raise ValueError("Please answer y or n")
    return parse


def parse_rules(text: str) -> str:
    from katacli.game.rules import PRESET_ALIASES, Rules, RulesError

    try:
        Rules.parse(text)
    except RulesError as exc:
        raise ValueError(f"{exc}. Known rules: {RULES_CHOICES}") from None
    named = text.strip().lower()
    # A preset's name in lower case; the short form and JSON as given (their keys are case-sensitive).
    return named if named in PRESET_ALIASES else text.strip()


def parse_komi(text: str) -> Optional[float]:
    from katacli.game.rules import MAX_USER_KOMI, MIN_USER_KOMI, Rules, RulesError

    if not text:
        return None
    try:
        komi = float(text)
        Rules.preset("tromp-taylor").with_komi(komi)
    except (ValueError, RulesError):
        raise ValueError(f"Komi must be a whole or half number from {MIN_USER_KOMI:g} to {MAX_USER_KOMI:g}, "
                         "e.g. 7.5 or 6") from None
    return komi


# Numbers as KataGo's genconfig reads them: plain decimal digits (no "1_000", "inf" or "nan", which Python
# would take), a float optionally with an exponent.
INT_ANSWER = re.compile(r"[+-]?[0-9]+")
FLOAT_ANSWER = re.compile(r"[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?")


def parse_number(kind: type, low: float, high: float, blank: Optional[T] = None, *,
                 above_low: bool = False, below_high: bool = False) -> Callable[[str], T]:
    """A number from ``low`` to ``high``; ``above_low`` / ``below_high`` leave that bound out (KataGo's
    "must be positive and less than 1e20" ranges), so the same answers are accepted and refused."""
    pattern = INT_ANSWER if kind is int else FLOAT_ANSWER
    if above_low or below_high:
        bounds = (f"above {low:g}" if above_low else f"at least {low:g}") + " and " + (
            f"below {high:g}" if below_high else f"at most {high:g}")
    else:
        bounds = f"from {low:g} to {high:g}"

    def parse(text: str):
        if not text and blank is not None:
            return blank
        if not pattern.fullmatch(text.strip()):
            raise ValueError(f"Please enter a number {bounds}")
        value = kind(text.strip())
        too_low = value <= low if above_low else value < low
        too_high = value >= high if below_high else value > high
        if too_low or too_high:
            raise ValueError(f"Must be {bounds}")
        return value
    return parse


def parse_key_value(key: str, blank: Optional[float] = None) -> Callable[[str], float]:
    """A number for config key ``key``, checked against the range `kata gtp` accepts for it, so an
    answer the engine would refuse is caught when it is given, not after tuning."""
    spec = config_keys.get_spec(key)
    return parse_number(float, spec.minimum, spec.maximum, blank=blank)


def parse_gigabytes(text: str) -> Optional[float]:
    text = text.lower().removesuffix("gb").strip()
    if not text:
        return None
    return parse_number(float, 0.0, MAX_CACHE_GB, above_low=True, below_high=True)(text)


def parse_human_profile_name(text: str) -> str:
    """A humanSLProfile to imitate, checked now (KataGo's error text for an unknown one)."""
    from katacli.nn.human_profile import HumanProfileError, parse_human_profile

    try:
        profile = parse_human_profile(text)
    except HumanProfileError as exc:
        raise ValueError(f"{exc} (known kinds: {HUMAN_PROFILE_EXAMPLES})") from None
    if not profile.is_set:
        raise ValueError(f"Please name a profile, e.g. {HUMAN_PROFILE_EXAMPLES}")
    return text


def parse_devices(text: str) -> list[int]:
    from katacli.setup.config_writer import parse_device_list

    return parse_device_list(text)


# --------------------------------------------------------------------------- the wizard


class Wizard:
    """Asks on the console until each answer parses (KataGo's behaviour); EOF aborts."""

    def __init__(self, console):
        self.console = console

    def say(self, text: str = "", style: Optional[str] = None) -> None:
        self.console.print(text, style=style, markup=False, highlight=False)

    def section(self, title: str) -> None:
        self.say()
        self.say(SECTION_RULE)
        self.say(title, style="bold")

    def ask(self, question: str, parse: Callable[[str], T]) -> T:
        self.say()
        while True:
            self.say(question, style="cyan")
            try:
                line = self.console.input("> ")
            except EOFError:
                raise WizardAborted("Stdin was closed - failing and not generating a config") from None
            if not sys.stdin.isatty():  # answers from a pipe or file: show them, so the transcript reads well
                self.say(line)
            try:
                return parse(line.strip())
            except ValueError as exc:
                self.say(str(exc), style="red")


def ask_human_profile(wizard: Wizard, choices, human_model: Optional[str]) -> None:
    """Whether to imitate a human, and which profile (choices.human_sl_profile; None for full strength).

    Asked only when -human-model or --human-profile was given (the config is no use without a human SL
    network); otherwise the wizard only says how to get there."""
    wizard.section("HUMAN-LIKE PLAY")
    if human_model is None and choices.human_sl_profile is None:
        wizard.say("The engine plays at full strength. To imitate human players of a chosen rank or era instead, "
                   "run kata genconfig\nwith -human-model and KataGo's human SL network "
                   "(e.g. b18c384nbt-humanv0.bin.gz).")
        return
    imitate = wizard.ask(
        "Instead of playing its strongest, the engine can imitate human players of a chosen rank or era\n"
        "(kata gtp then needs the human SL network with -human-model). Imitate a human? (y/n, default y):",
        parse_yes_no(True))
    if not imitate:
        if human_model is not None:
            wizard.say(f"Not imitating: {human_model} will not be used, the config plays at full strength.")
        choices.human_sl_profile = None
        return
    default_profile = choices.human_sl_profile or DEFAULT_HUMAN_PROFILE
    choices.human_sl_profile = wizard.ask(
        f"Which players to imitate? For example {HUMAN_PROFILE_EXAMPLES}.\nBlank for {default_profile}:",
        lambda text: parse_human_profile_name(text or default_profile))


def ask_choices(wizard: Wizard, choices, gpu_names: list[str], human_model: Optional[str] = None) -> None:
    """Fill ``choices`` (a GenConfigChoices) from the user's answers."""
    from katacli.setup.config_writer import cache_gb_for_size, cache_size_for_gb

    wizard.section("RULES")
    choices.rules = wizard.ask("What rules should the engine use by default for play and analysis?\n"
                               f"({RULES_CHOICES}):", parse_rules)
    # KataGo's questions only, in its order, so that answers piped to `katago genconfig` work here too: a forced
    # komi and the resignation threshold come from --komi / --resign-threshold (their defaults otherwise).

    wizard.section("SEARCH LIMITS")
    limit = wizard.ask(
        "When playing games, the engine always obeys the time controls given by the GUI/tournament/server.\n"
        "But you can add a limit to make it move much faster. This does NOT affect analysis/review,\n"
        "only playing games. Add a limit? (y/n) (default n):", parse_yes_no(False))
    if not limit:
        wizard.ask("NOTE: No limits configured. The engine obeys time controls from the GUI, server or match "
                   "script,\nbut if they give none, it may think forever without moving. (press enter to continue)",
                   lambda text: None)
    else:
        def parse_kind(text: str) -> str:
            if text.lower() not in LIMIT_KINDS:
                raise ValueError('Please specify one of "visits", "playouts" or "seconds"')
            return LIMIT_KINDS[text.lower()]
        kind = wizard.ask("What to limit per move? Visits, playouts, or seconds?:", parse_kind)
        if kind == "visits":
            choices.max_visits = wizard.ask("Max visits per move when playing games, blank for 500:",
                                            parse_number(int, 1, MAX_LIMIT, blank=500))
        elif kind == "playouts":
            choices.max_playouts = wizard.ask("Max playouts per move when playing games, blank for 300:",
                                              parse_number(int, 1, MAX_LIMIT, blank=300))
        else:
            choices.max_time = wizard.ask("Max seconds per move when playing games, blank for 10:",
                                          parse_number(float, 0.0, MAX_SECONDS, blank=10.0,
                                                       above_low=True, below_high=True))
    choices.pondering = wizard.ask(
        "The engine can think during the opponent's turn (pondering): faster and stronger in real games, but\n"
        "do NOT enable it for tests with fixed limits, or when two bots share one machine.\n"
        "Enable pondering? (y/n, default n):", parse_yes_no(False))
    if choices.pondering:
        choices.max_ponder_time = wizard.ask("Max seconds to ponder during the opponent's turn, blank for no limit:",
                                             parse_number(float, 0.0, MAX_SECONDS, blank=-1.0,
                                                          above_low=True, below_high=True))
        if choices.max_ponder_time is not None and choices.max_ponder_time < 0:
            choices.max_ponder_time = None

    ask_human_profile(wizard, choices, human_model)

    wizard.section("GPUS AND RAM")
    if gpu_names:
        wizard.say("Devices found:")
        for i, name in enumerate(gpu_names):
            wizard.say(f"  {i}: {name}")
        choices.devices = wizard.ask('Devices to use (e.g. "0,1" for devices 0 and 1), blank for one default GPU:',
                                     parse_devices)
    else:
        wizard.say("No CUDA GPU found: the network will run on the CPU.")
    default_power = config_keys.default_value("nnCacheSizePowerOfTwo", "gtp")
    gigabytes = wizard.ask(
        f"By default the engine caches up to 2^{default_power} network results in RAM (about "
        f"{cache_gb_for_size(default_power):.1f} GB on 19x19),\nbesides what the current search uses. "
        "Enter a different maximum in GB, or leave blank for the default:", parse_gigabytes)
    if gigabytes is not None:
        choices.cache_size_power_of_two = cache_size_for_gb(gigabytes)


# --------------------------------------------------------------------------- output path


def check_output_path(path: str) -> None:
    """Fail early (before any question) when the config could not be written there."""
    from katacli.search.benchmark_positions import BenchmarkError

    if os.path.isdir(path):
        raise BenchmarkError(f"cannot write the config to {path}: it is a directory")
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise BenchmarkError(f"cannot write the config to {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK) or (os.path.exists(path) and not os.access(path, os.W_OK)):
        raise BenchmarkError(f"cannot write the config to {path}: permission denied")


# --------------------------------------------------------------------------- tuning


def gpu_names() -> list[str]:
    import torch

    if not torch.cuda.is_available():
        return []
    return [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())]


def tune_threads(options: GenconfigOptions, choices, wizard: Wizard) -> None:
    """Set choices.num_search_threads / tuning_note by benchmarking the network."""
    from katacli.setup.config_writer import render_config
    from katacli.tuning.network import load_evaluator
    from katacli.tuning.genconfig_tuning import tune
    from katacli.commands.benchmark import Report
    from katacli.config import Config
    from katacli.search import SearchParams
    from katacli.setup.engine_settings import NNSettings

    # Benchmark with the settings chosen so far (device, cache, human play when the human net is given), read
    # the way `kata benchmark` reads a config.
    with_human = options.human_model is not None and choices.human_sl_profile is not None
    tuned_choices = choices if with_human else dataclasses.replace(choices, human_sl_profile=None)
    cfg = Config.from_text(render_config(tuned_choices), source="<answers so far>", mode="benchmark")
    params = SearchParams.from_config(cfg, "benchmark", has_human_model=with_human)
    nn_settings = NNSettings.from_config(cfg, "benchmark")
    from katacli.tuning.noise import busy_machine_warning

    busy = busy_machine_warning()  # before this process adds its own load
    if busy:
        wizard.say(busy)
    wizard.say("Loading model and initializing benchmark...")
    evaluator = load_evaluator(options.model, nn_settings, max_batch_size=1)
    human_evaluator = load_evaluator(options.human_model, nn_settings, max_batch_size=1) if with_human else None
    if with_human:
        wizard.say(f"Searching with the human SL network {options.human_model} too ({choices.human_sl_profile}).")
    report = Report(console=wizard.console)
    outcome = tune(evaluator, params, options.seconds_per_move, visits=options.tune_visits,
                   num_positions=options.tune_positions, say=wizard.say, on_result=report.result,
                   on_progress=report.progress, human_evaluator=human_evaluator, on_noise=report.noise)
    for line in outcome.recommendation.explanation():
        wizard.say(line)
    report.table(outcome.recommendation)
    wizard.say(f"Using {outcome.num_threads} numSearchThreads!", style="bold green")
    choices.num_search_threads = outcome.num_threads
    choices.tuning_note = outcome.note()
    for check in outcome.checks:
        if check.recommended is not None:
            choices.tuned_settings[check.key] = (check.recommended, check.config_note())


def choose_threads(options: GenconfigOptions, choices, wizard: Wizard, existed: bool) -> None:
    from katacli.setup.config_writer import existing_thread_count

    wizard.section("PERFORMANCE TUNING")
    if options.threads is not None:
        choices.num_search_threads = options.threads
        choices.tuning_note = "Set with `kata genconfig --threads`; `kata benchmark` can tune it."
        return
    if options.model is None:
        wizard.say("No network: the config is for the rollout engine, whose speed does not depend on "
                   "numSearchThreads. Skipping tuning (numSearchThreads = 1).")
        choices.tuning_note = "No network was given to `kata genconfig`; run `kata benchmark -model NET` to tune."
        return
    if existed and not options.non_interactive:
        old_threads = existing_thread_count(options.output)
        if old_threads is None:
            wizard.say("NOTE: the config being overwritten does not set numSearchThreads or could not be read.\n"
                       "Tuning to set it.")
        elif wizard.ask(
                f"{options.output} already sets numSearchThreads = {old_threads}. Skip performance tuning and keep "
                "it\n(all other settings are still overwritten)? (y/n):", parse_yes_no(None)):
            choices.num_search_threads = old_threads
            choices.tuning_note = f"Kept from the previous {options.output}."
            return
    if not options.non_interactive:
        options.tune_visits = wizard.ask(
            "Visits per search for tuning, blank for a default based on your hardware's speed.\n"
            "Use a large number for more accurate results, a small one if this takes forever:",
            parse_number(int, 1, MAX_LIMIT, blank=-1))
        if options.tune_visits is not None and options.tune_visits < 0:
            options.tune_visits = None
        options.seconds_per_move = wizard.ask(
            f"Seconds per move to optimize performance for, blank for {options.seconds_per_move:g}:",
            parse_number(float, 0.0, MAX_SECONDS_PER_MOVE, blank=options.seconds_per_move, above_low=True))
    wizard.section("TUNING NOW")
    tune_threads(options, choices, wizard)


# --------------------------------------------------------------------------- the command


def choices_from_flags(options: GenconfigOptions):
    from katacli.setup.config_writer import cache_size_for_gb, parse_device_list
    from katacli.search.benchmark_positions import BenchmarkError

    limits = [v for v in (options.max_visits, options.max_playouts, options.max_time) if v is not None]
    if len(limits) > 1:
        raise BenchmarkError("choose at most one of --max-visits, --max-playouts and --max-time")
    def flag_value(flag: str, parse: Callable, value):
        """``parse(value)``, its error naming the flag (the prompts' texts do not)."""
        try:
            return parse(value)
        except ValueError as exc:
            raise BenchmarkError(f"{flag}: {exc}") from None

    rules = flag_value("--rules", parse_rules, options.rules or DEFAULT_NONINTERACTIVE_RULES)
    komi = None if options.komi is None else flag_value("--komi", parse_komi, str(options.komi))
    devices = flag_value("--devices", parse_device_list, options.devices) if options.devices else []
    gigabytes = None if options.cache_gb is None else flag_value("--cache-gb", parse_gigabytes, str(options.cache_gb))
    human_profile = (None if options.human_profile is None
                     else flag_value("--human-profile", parse_human_profile_name, options.human_profile))
    try:
        parse_key_value(RESIGN_SPEC.name)(str(options.resign_threshold))
    except ValueError as exc:
        raise BenchmarkError(f"--resign-threshold: {exc}") from None
    for name, value in (("--max-visits", options.max_visits), ("--max-playouts", options.max_playouts)):
        if value is not None and not 1 <= value <= MAX_LIMIT:
            raise BenchmarkError(f"{name} must be from 1 to {MAX_LIMIT}")
    for name, value in (("--max-time", options.max_time), ("--max-ponder-time", options.max_ponder_time)):
        if value is not None and not 0 < value < MAX_SECONDS:
            raise BenchmarkError(f"{name} must be above 0 and below {MAX_SECONDS:g}")
    return GenConfigChoices(
        rules=rules, forced_komi=komi, max_visits=options.max_visits, max_playouts=options.max_playouts,
        max_time=options.max_time, pondering=options.ponder, max_ponder_time=options.max_ponder_time,
        allow_resignation=options.resign, resign_threshold=options.resign_threshold, devices=devices,
        cache_size_power_of_two=None if gigabytes is None else cache_size_for_gb(gigabytes),
        human_sl_profile=human_profile)


def validate(options: GenconfigOptions) -> None:
    from katacli.tuning.network import check_model_paths
    from katacli.search.benchmark_positions import BenchmarkError
    from katacli.tuning.runner import MAX_THREADS_PER_SEARCH

    check_model_paths(options.model, options.human_model)
    if options.human_model is not None and options.non_interactive and options.human_profile is None:
        raise BenchmarkError("-human-model is only used to imitate a human: pass --human-profile too "
                             f"(e.g. {DEFAULT_HUMAN_PROFILE})")
    check_output_path(options.output)
    if options.threads is not None and not 1 <= options.threads <= MAX_THREADS_PER_SEARCH:
        raise BenchmarkError(f"--threads must be from 1 to {MAX_THREADS_PER_SEARCH}")
    if options.tune_visits is not None and not 2 <= options.tune_visits <= MAX_LIMIT:
        raise BenchmarkError(f"--tune-visits must be from 2 to {MAX_LIMIT}")
    if options.tune_positions < 1:
        raise BenchmarkError("--tune-positions must be at least 1")
    if not 0 < options.seconds_per_move <= 1e6:
        raise BenchmarkError("-time (seconds per move) must be above 0 and at most 1e6")


def run(options: GenconfigOptions) -> int:
    from rich.console import Console

    from katacli.setup.config_writer import GeneratedConfigError, check_config_text, render_config
    from katacli.search.benchmark_positions import BenchmarkError

    wizard = Wizard(Console(highlight=False, soft_wrap=True))
    given_model = options.model
    choice = choose_model(given_model)
    options.model = choice.path
    if given_model is None and choice.note:   # (KataGo's default_model.bin.gz, katacli's own net, or none)
        wizard.say(choice.note)
    try:
        validate(options)
        choices = choices_from_flags(options)
        existed = os.path.exists(options.output)
        if existed and not options.force:
            if options.non_interactive:
                raise BenchmarkError(f"{options.output} already exists; pass --force to overwrite it")
            if not wizard.ask(f"File {options.output} already exists, okay to overwrite it with an entirely new "
                              "config (y/n)?", parse_yes_no(None)):
                wizard.say("Please provide an alternate file path to output the generated config to via "
                           "'-output NEWFILEPATH'")
                return 0
        if not options.non_interactive:
            ask_choices(wizard, choices, gpu_names(), options.human_model)
        choose_threads(options, choices, wizard, existed)
        text = render_config(choices, options.model, human_model_path=options.human_model)
        check_config_text(text, source=f"the generated config (not written to {options.output})",
                          has_human_model=choices.human_sl_profile is not None)
        wizard.section("DONE")
        wizard.say(f"Writing new config file to {options.output}")
        atomic_write_text(options.output, text)
    except (BenchmarkError, GeneratedConfigError, WizardAborted) as exc:
        report_error_and_exit(str(exc))
    except OSError as exc:
        report_error_and_exit(f"cannot write the config to {options.output}: {exc.strerror or exc}")
    except KeyboardInterrupt:
        report_error_and_exit("interrupted; no config written")
    model_part = f" -model '{given_model}'" if given_model else ""
    if choices.human_sl_profile is not None:
        model_part += f" -human-model '{options.human_model or 'HUMAN_NET.bin.gz'}'"
    wizard.say("You should be now able to run the engine with this config via something like:")
    wizard.say(f"kata gtp{model_part} -config '{options.output}'", style="bold")
    wizard.say()
    wizard.say("Feel free to look at and edit the config further by hand in a text editor; configs/gtp_example.cfg "
               "documents the usual keys.")
    return 0


def register(app: typer.Typer) -> None:
    @app.command("genconfig", help=HELP)
    def genconfig(
        model: Optional[str] = typer.Option(
            None, "--model", metavar="FILE",
            help="The network to tune for (.bin.gz); default: the one `kata gtp` uses without -model (KataGo's "
                 "default_model.bin.gz beside kata or in ~/.katago, else katacli's built-in network). `rollouts`: "
                 "the network-free engine (no tuning)."),
        output: str = typer.Option(DEFAULT_OUTPUT, "--output", metavar="FILE", help="Where to write the config."),
        non_interactive: bool = typer.Option(False, "--non-interactive",
                                             help="Ask nothing: take the answers from the flags below."),
        force: bool = typer.Option(False, "--force", help="Overwrite an existing output file without asking."),
        rules: Optional[str] = typer.Option(None, "--rules", help=f"Rules ({RULES_CHOICES}); default tromp-taylor."),
        komi: Optional[float] = typer.Option(None, "--komi",
                                             help="Always use this komi (default: what the GUI sends)."),
        max_visits: Optional[int] = typer.Option(None, "--max-visits", help="Limit visits per move in games."),
        max_playouts: Optional[int] = typer.Option(None, "--max-playouts", help="Limit playouts per move in games."),
        max_time: Optional[float] = typer.Option(None, "--max-time", help="Limit seconds per move in games."),
        ponder: bool = typer.Option(False, "--ponder/--no-ponder", help="Think during the opponent's turn."),
        max_ponder_time: Optional[float] = typer.Option(None, "--max-ponder-time", help="Limit pondering, in seconds."),
        resign: bool = typer.Option(True, "--resign/--no-resign", help="Resign clearly lost games."),
        resign_threshold: float = typer.Option(DEFAULT_RESIGN_THRESHOLD, "--resign-threshold",
                                               help="Resign below this win/loss value (-1..1)."),
        devices: Optional[str] = typer.Option(None, "--devices", metavar="LIST", help='GPUs to use, e.g. "0,1".'),
        cache_gb: Optional[float] = typer.Option(None, "--cache-gb", help="RAM for the network cache, in GB."),
        threads: Optional[int] = typer.Option(None, "--threads", help="Use this numSearchThreads (leaves one search keeps in flight); skips tuning."),
        tune_visits: Optional[int] = typer.Option(None, "--tune-visits",
                                                  help="Visits per tuning search (default: calibrated)."),
        tune_positions: int = typer.Option(10, "--tune-positions", help="Positions per tuning run."),
        seconds_per_move: float = typer.Option(5.0, "-i", "--time", metavar="SECONDS",
                                               help="Seconds per move to optimize the thread count for."),
        human_model: Optional[str] = typer.Option(
            None, "--human-model", metavar="FILE",
            help="A human SL network (e.g. b18c384nbt-humanv0.bin.gz) to tune with, for human-like play."),
        human_profile: Optional[str] = typer.Option(
            None, "--human-profile", metavar="PROFILE",
            help="Imitate these human players (humanSLProfile), e.g. rank_5k, preaz_9d, proyear_1990; "
                 "`kata gtp` then needs -human-model."),
    ) -> None:
        options = GenconfigOptions(model, output, non_interactive, force, rules, komi, max_visits, max_playouts,
                                   max_time, ponder, max_ponder_time, resign, resign_threshold, devices, cache_gb,
                                   threads, tune_visits, tune_positions, seconds_per_move, human_model, human_profile)
        raise typer.Exit(run(options))
