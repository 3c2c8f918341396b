"""``kata evalsgf``: search one position of an SGF file and print the tree (KataGo's evalsgf)."""
from __future__ import annotations

import sys
from typing import List, Optional

import typer

from katacli.cli_support import (
    config_option, exit_on_config_error, human_model_option, load_config, model_option, override_config_option,
    report_error_and_exit,
)
from katacli.nets import DEFAULT_MISSING, FROM_DEFAULT, choose_model

HELP = """Search one position of an SGF game and print the search tree (like `katago evalsgf`).

The position is the game's setup stones and its first -move-num moves (main line), then any -extra
moves. It prints the rules and the board, searches with the config's GTP settings (-visits and
-threads override them), then prints the time, root visits, the best line and the tree: the root and
each searched move, with utility (T), its win/loss (W) and score (S) parts, lower confidence bound,
policy prior, weight, play selection value and visits, from Black's view unless
reportAnalysisWinratesAs says otherwise.

\b
Examples:
  kata evalsgf game.sgf -move-num 120 -model net.bin.gz -config configs/gtp_example.cfg -v 800
  kata evalsgf game.sgf -m 50 -model net.bin.gz -print R16 -print-max-depth 2
  kata evalsgf game.sgf -m 50 -model net.bin.gz -extra "D4 Q16" -print-policy -print-ownership

Without -model the position is searched with katacli's default network (KataGo requires a network);
`-model rollouts` searches by random playouts instead.
"""

EXIT_ERROR = 1
# -print-json's principal variations: the move and this many more (KataGo's evalsgf uses 7).
JSON_PV_LEN = 7


def _one_of(first: Optional[str], second: Optional[str], names: str) -> str:
    if first and second:
        report_error_and_exit(f"{names} both specified")
    return first or second or ""


def run(sgf_path: str, model: Optional[str], human_model: Optional[str], config: Optional[List[str]],
        override_config: Optional[List[str]], request_args: dict, visits: Optional[int], threads: Optional[int]) -> int:
    from katacli.game.sgf import SgfError, load_sgf
    from katacli.search.evalsgf import EvalSgfError, EvalSgfRequest, parse_moves, run_evalsgf

    if visits is not None and visits < 1:
        report_error_and_exit("-visits: invalid value (must be at least 1)")
    if threads is not None and threads < 1:
        report_error_and_exit("-threads: invalid value (must be at least 1)")
    if request_args["print_max_depth"] < 0:
        report_error_and_exit("-print-max-depth: invalid value (must be 0 or more)")
    try:
        game = load_sgf(sgf_path)
    except SgfError as exc:
        report_error_and_exit(str(exc))
    texts = {name: request_args.pop(name) for name in ("print_branch", "extra_moves", "avoid_moves", "hint_loc")}
    try:
        moves = {name: parse_moves(text, game.x_size, game.y_size, "-" + name.replace("_", "-"))
                 for name, text in texts.items()}
    except EvalSgfError as exc:
        report_error_and_exit(str(exc))
    if len(moves["hint_loc"]) > 1:
        report_error_and_exit("-hint-loc: give one move, e.g. -hint-loc D4")
    request = EvalSgfRequest(**request_args, **moves)

    cfg = load_config(config, override_config, mode="gtp")
    with exit_on_config_error():
        params, nn_settings, perspective, seed = _search_settings(cfg, human_model is not None, visits, threads)
    choice = choose_model(model)
    if choice.source in (FROM_DEFAULT, DEFAULT_MISSING):  # an explicit -model needs no comment
        print(choice.note, file=sys.stderr)
    evaluator = _load_network(choice.path, nn_settings, params) if choice.path else None
    human = _load_network(human_model, nn_settings, params) if human_model else None
    try:
        run_evalsgf(game, request, params, evaluator, human, perspective, seed, say=print,
                    search_json=_json_printer(request, has_network=evaluator is not None))
    except EvalSgfError as exc:
        report_error_and_exit(str(exc))
    except KeyboardInterrupt:
        print("Interrupted", file=sys.stderr)
        return 130
    return 0


def _json_printer(request, has_network: bool):
    """-print-json's line: the analysis engine's JSON of the search (KataGo's getAnalysisJson with a
    7-move PV, PV visits, and policy / ownership when -print-policy / -print-ownership ask)."""
    from katacli.analysis.protocol import dumps
    from katacli.analysis.request import ReportOptions
    from katacli.analysis.responses import search_json
    from katacli.game.coords import BLACK

    def print_json(searcher, state, perspective: int):
        report = ReportOptions(perspective="B" if perspective == BLACK else "W", pv_len=JSON_PV_LEN,
                               include_ownership=request.print_ownership, include_policy=request.print_policy,
                               include_pv_visits=True)
        body = search_json(searcher, state, report, prevent_encore=False, has_network=has_network)
        return dumps(body) if body is not None else None

    return print_json


# Keys whose `gtp`-mode default is the GTP engine's own adjustment, not KataGo's loadSingleParams default.
GTP_ENGINE_ONLY_DEFAULTS = {"conservativePass": "conservative_pass", "fillDameBeforePass": "fill_dame_before_pass"}


def _search_settings(cfg, has_human_model: bool, visits: Optional[int], threads: Optional[int]):
    """(SearchParams, NNSettings, "B" / "W" / None perspective, seed) from the config, as KataGo's evalsgf
    reads them (GTP search settings; winrates from Black's view unless reportAnalysisWinratesAs is set)."""
    from katacli.engine_common import stable_seed
    from katacli.search import SearchParams
    from katacli.setup.engine_settings import NNSettings

    params = SearchParams.from_config(cfg, "gtp", has_human_model=has_human_model)
    # KataGo's GTP engine turns these on when the config is silent (gtp.cpp, after loading); its evalsgf
    # loads the same GTP settings without that step, so a pass after a pass ends the game there.
    params = params.replace(**{field: False for key, field in GTP_ENGINE_ONLY_DEFAULTS.items() if key not in cfg})
    if visits is not None:
        params = params.replace(max_visits=visits, max_playouts=visits)
    if threads is not None:
        params = params.replace(num_search_threads=threads)
    view = cfg.get("reportAnalysisWinratesAs", "gtp") if "reportAnalysisWinratesAs" in cfg else "BLACK"
    perspective = {"BLACK": "B", "B": "B", "WHITE": "W", "W": "W"}.get(view)
    seed = stable_seed(cfg.get("searchRandSeed", "gtp")) if "searchRandSeed" in cfg else None
    return params, NNSettings.from_config(cfg, "gtp"), perspective, seed


def _load_network(path: str, nn_settings, params):
    from katacli.search.benchmark_positions import BenchmarkError
    from katacli.tuning.network import load_evaluator

    try:
        return load_evaluator(path, nn_settings, max_batch_size=max(1, params.num_search_threads))
    except BenchmarkError as exc:   # already says which model could not be loaded
        report_error_and_exit(str(exc))
    except Exception as exc:  # unreadable, corrupt or not a network: one line, no traceback
        report_error_and_exit(f"could not load the model {path}: {exc}")


def register(app: typer.Typer) -> None:
    @app.command("evalsgf", help=HELP)
    def evalsgf(
        sgf_file: Optional[str] = typer.Argument(None, metavar="SGF", help="The SGF file (or give -sgf FILE)."),
        sgf: Optional[str] = typer.Option(None, "--sgf", metavar="FILE", help="The SGF file."),
        move_num: int = typer.Option(..., "-m", "--move-num", metavar="MOVENUM",
                                     help="Search the position after this many moves of the game."),
        move_num_end: Optional[int] = typer.Option(None, "--move-num-end", metavar="MOVENUM",
                                                   help="Search each position from -move-num to this one."),
        model: Optional[str] = model_option(required=False),
        human_model: Optional[str] = human_model_option(),
        config: Optional[List[str]] = config_option("gtp_example.cfg"),
        override_config: Optional[List[str]] = override_config_option(),
        print_branch: Optional[str] = typer.Option(None, "--print-branch", metavar="MOVES",
                                                   help='Print the tree along these moves, e.g. "D4 Q16".'),
        print_alias: Optional[str] = typer.Option(None, "-p", "--print", metavar="MOVES", help="Same as -print-branch."),
        extra_moves: Optional[str] = typer.Option(None, "--extra-moves", metavar="MOVES",
                                                  help="Play these moves before searching."),
        extra_alias: Optional[str] = typer.Option(None, "-e", "--extra", metavar="MOVES", help="Same as -extra-moves."),
        avoid_moves: Optional[str] = typer.Option(None, "--avoid-moves", metavar="MOVES",
                                                  help="Do not play these moves at the root."),
        hint_loc: Optional[str] = typer.Option(None, "--hint-loc", metavar="MOVE",
                                               help="Search this root move almost as often as the most "
                                                    "searched one (a self-play hint)."),
        visits: Optional[int] = typer.Option(None, "-v", "--visits", metavar="VISITS",
                                             help="Visits (and playouts) for the search, instead of the config's."),
        threads: Optional[int] = typer.Option(None, "-t", "--threads", metavar="THREADS",
                                              help="numSearchThreads (leaves in flight per search), instead of the config's."),
        override_komi: Optional[float] = typer.Option(None, "--override-komi", metavar="KOMI",
                                                      help="Use this komi instead of the game's."),
        override_rules: Optional[str] = typer.Option(None, "--override-rules", metavar="RULES",
                                                     help="Use these rules (e.g. japanese) instead of the game's."),
        print_ownership: bool = typer.Option(False, "--print-ownership",
                                             help="Print the network's ownership of the position."),
        print_root_nn_values: bool = typer.Option(False, "--print-root-nn-values",
                                                  help="Print the network's values for the position."),
        print_policy: bool = typer.Option(False, "--print-policy", help="Print the root policy in percent."),
        print_log_policy: bool = typer.Option(False, "--print-log-policy", help="Print the log of the root policy."),
        print_max_depth: int = typer.Option(1, "--print-max-depth", metavar="DEPTH",
                                            help="How many levels of the tree to print below the branch."),
        print_dirichlet_shape: bool = typer.Option(False, "--print-dirichlet-shape",
                                                   help="Print how root Dirichlet noise would spread over the moves."),
        print_score_now: bool = typer.Option(False, "--print-score-now",
                                             help="Print the area and result if the game were scored as it stands."),
        print_root_ending_bonus: bool = typer.Option(
            False, "--print-root-ending-bonus",
            help="Print each root move's utility without and with the ending score bonus (rootEndingBonusPoints)."),
        print_sharp_score: bool = typer.Option(
            False, "--print-sharp-score",
            help="Print White's sharp score: the score averaged over the tree with the best lines weighted up."),
        print_avg_shortterm_error: bool = typer.Option(
            False, "--print-avg-shortterm-error",
            help="Show in the tree each node's short-term win-loss and score errors (STWL, STS) averaged over "
                 "its subtree."),
        print_graph: bool = typer.Option(
            False, "--print-graph",
            help="Print the search graph as 'parent -> child' lines, nodes numbered from the root (0)."),
        print_lead: bool = typer.Option(False, "--print-lead",
                                        help="Print White's lead, found by short searches at several komis."),
        print_json: bool = typer.Option(False, "--print-json",
                                        help="Print the search as one line of analysis-engine JSON."),
        raw_nn: bool = typer.Option(False, "--raw-nn",
                                    help="Print one raw network evaluation of each position instead of searching."),
        dump_npz_input_to: Optional[str] = typer.Option(None, "--dump-npz-input-to", metavar="NPZFILE",
                                                        help="Write the network's input for the position to this "
                                                             ".npz file and print the network's output."),
    ) -> None:
        if sgf_file and sgf:
            report_error_and_exit("give the SGF file once, either as an argument or with -sgf")
        path = sgf_file or sgf
        if not path:
            report_error_and_exit("give an SGF file, e.g. kata evalsgf game.sgf -move-num 50 -model net.bin.gz")
        request_args = dict(
            move_num=move_num, move_num_end=move_num_end,
            print_branch=_one_of(print_branch, print_alias, "-print-branch and -print"),
            extra_moves=_one_of(extra_moves, extra_alias, "-extra-moves and -extra"),
            avoid_moves=avoid_moves or "", hint_loc=hint_loc or "", override_komi=override_komi, override_rules=override_rules,
            print_ownership=print_ownership, print_root_nn_values=print_root_nn_values, print_policy=print_policy,
            print_log_policy=print_log_policy, print_max_depth=print_max_depth,
            print_dirichlet_shape=print_dirichlet_shape, print_score_now=print_score_now, print_lead=print_lead,
            print_json=print_json, print_sharp_score=print_sharp_score,
            print_root_ending_bonus=print_root_ending_bonus, print_avg_shortterm_error=print_avg_shortterm_error,
            print_graph=print_graph, raw_nn=raw_nn, dump_npz_input_to=dump_npz_input_to,
        )
        raise typer.Exit(run(path, model, human_model, config, override_config, request_args, visits, threads))
