"""`kata evalsgf`: one SGF position searched and printed as KataGo's evalsgf prints it; its flags and errors."""
from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from katacli.cli import app, normalize_argv

from support.paths import BUNDLED_TINY_MODEL as TINY_MODEL
from support.paths import TRANSCRIPTS
GAME = TRANSCRIPTS / "game.sgf"  # 9x9, setup stones, 9 moves
ROOT_LINE = re.compile(r"^: T +-?\d+\.\d\dc W +-?\d+\.\d\dc S +-?\d+\.\d\dc \( *[-+]\d+\.\d L +[-+]\d+\.\d\) N +(\d+)  --  ")
CHILD_LINE = re.compile(r"^(\S+ +)+: T .* LCB .* P +\d+\.\d\d% WF +\d+\.\d PSV +\d+ N +(\d+)  --  \S")


def evalsgf(*args: str):
    """`kata evalsgf ARGS`; without -model, by the rollout engine (the default network: test_default_net.py)."""
    model = [] if "-model" in args else ["-model", "rollouts"]
    return CliRunner().invoke(app, normalize_argv(["evalsgf", *args, *model, "-override-config",
                                                   "searchRandSeed=evalsgf"]))


def test_prints_position_search_summary_and_tree():
    result = evalsgf(str(GAME), "-move-num", "5", "-v", "40")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == "Rules: koSIMPLEscoreTERRITORYtaxSEKIsui0komi6.5"  # the SGF's RU[Japanese] KM[6.5]
    assert lines[1] == "Encore phase 0" and lines[2].startswith("MoveNum: 5 HASH: ")
    assert "Root visits: 40" in lines
    assert any(line.startswith("True number of tree nodes: ") for line in lines)
    assert next(line for line in lines if line.startswith("PV: ")).split()[1:]
    tree = lines[lines.index("Tree:") + 1:]
    assert ROOT_LINE.match(tree[0]) and int(ROOT_LINE.match(tree[0]).group(1)) == 40
    assert tree[1] == "---Black(^)---"  # Black moves after five moves here; values from Black's view
    children = [CHILD_LINE.match(line) for line in tree[2:]]
    assert children and all(children)
    assert sum(int(c.group(2)) for c in children) == 39


def test_extra_moves_branch_and_depth():
    result = evalsgf(str(GAME), "-m", "5", "-v", "60", "-e", "A1", "-print-max-depth", "2")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[2].startswith("MoveNum: 6 ")  # the extra move is played before searching
    tree = lines[lines.index("Tree:") + 1:]
    assert tree[1] == "---White(v)---"
    assert any(re.match(r"^\S+ +\S+ +: T ", line) for line in tree), "no second level printed"
    best = tree[2].split()[0]
    branch = evalsgf(str(GAME), "-m", "5", "-v", "60", "-e", "A1", "-print", best)
    lines = branch.output.splitlines()
    boards = [i for i, line in enumerate(lines) if line.startswith("MoveNum: ")]
    assert [lines[i].split()[1] for i in boards] == ["6", "7"]  # the position, then after the branch
    tree = lines[lines.index("Tree:") + 1:]
    assert tree[1].startswith(best.ljust(4) + ": ") and tree[2] == "---Black(^)---"
    assert all(line.startswith(best.ljust(4)) for line in tree[3:])


def test_several_move_numbers():
    result = evalsgf(str(GAME), "-m", "2", "-move-num-end", "3", "-v", "5")
    assert result.exit_code == 0, result.output
    assert [line.split()[1] for line in result.output.splitlines() if line.startswith("MoveNum: ")] == ["2", "3"]


def test_with_a_network_prints_its_values_policy_and_ownership():
    result = evalsgf(str(GAME), "-m", "9", "-v", "8", "-model", str(TINY_MODEL), "-print-root-nn-values",
                     "-print-policy", "-print-log-policy", "-print-ownership")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = lines.index("Ownership map (ROOT position):")
    rows = lines[start + 1:start + 10]
    assert all(len(row.split()) == 9 for row in rows) and lines[start + 10] == ""
    assert all(-100.0 <= float(v) <= 100.0 for row in rows for v in row.split())
    assert any(line.startswith("White win: ") for line in lines)
    assert any(line.startswith("Shortterm score error ") for line in lines)
    policies = [i for i, line in enumerate(lines) if line == "Root policy: "]
    assert len(policies) == 2
    percent = lines[policies[0] + 1:policies[0] + 10]
    total = sum(float(v) for row in percent for v in row.split() if v != "-")
    total += float(lines[policies[0] + 10].split()[1])
    assert total == pytest.approx(100.0, abs=0.5)
    assert lines[policies[1] + 10].startswith("Pass ")
    assert re.search(r"^NN rows: [1-9]", result.output, re.M)


def test_the_ownership_map_is_the_search_roots_own_evaluation():
    # KataGo prints the root node's network ownership; evalsgf used to evaluate the root again (a second
    # network call, in orientation 0, so not the root's own numbers when the root drew another orientation).
    import numpy as np

    from katacli._core.game_state import GameState
    from katacli.nn.evaluator import NNEvaluator
    from katacli.search import SearchParams, Searcher
    from katacli.search.raw_eval import evaluate_raw

    state = GameState(9, 9)
    for xy, pla in (((4, 4), 1), ((2, 2), 2), ((6, 6), 1)):
        state.play(xy, pla)
    for symmetry in (0, 5):
        evaluator = NNEvaluator.from_file(str(TINY_MODEL), device="cpu", default_symmetry=symmetry)
        searcher = Searcher(state, SearchParams().replace(max_visits=4, root_num_symmetries_to_sample=1),
                            evaluator, seed=1)
        searcher.run()
        expected = np.asarray(evaluate_raw(evaluator, state, state.next_player, [symmetry], 0.0)[0].white_ownership)
        assert np.allclose(searcher.root_raw_ownership(), expected, atol=1e-5)


@pytest.mark.parametrize("args, message", [
    (["-m", "99"], "Move num 99 requested but sgf has only 9"),
    (["-m", "-1"], "Move num -1 requested but must be non-negative"),
    (["-m", "5", "-e", "D6"], "Extra illegal move for X: D6"),
    (["-m", "5", "-p", "D4", "-print-branch", "D4"], "-print-branch and -print both specified"),
    (["-m", "5", "-e", "ZZ"], "-extra-moves"),
    (["-m", "5", "-override-rules", "nonsense"], "-override-rules"),
    (["-m", "5", "-v", "0"], "-visits: invalid value"),
    (["-m", "5", "-override-komi", "7.3"], "-override-komi: Komi value is not a half-integer"),
    (["-m", "5", "-move-num-end", "99"], "-move-num-end: move num 99 requested but sgf has only 9"),
])
def test_bad_requests_are_one_line_errors(args, message):
    result = evalsgf(str(GAME), *args)
    assert result.exit_code == 1
    lines = [line for line in result.output.splitlines() if line.startswith("error: ")]
    assert len(lines) == 1 and message in lines[0], result.output


def test_missing_sgf_and_missing_model(tmp_path):
    missing = evalsgf(str(tmp_path / "nope.sgf"), "-m", "1")
    assert missing.exit_code == 1 and "error: " in missing.output and "nope.sgf" in missing.output
    no_model = evalsgf(str(GAME), "-m", "1", "-model", str(tmp_path / "nope.bin.gz"))
    assert no_model.exit_code == 1 and "nope.bin.gz" in no_model.output
    both = evalsgf(str(GAME), "-sgf", str(GAME), "-m", "1")
    assert both.exit_code == 1 and "either as an argument or with -sgf" in both.output


def test_human_model_policy_is_printed_too():
    from support.gtp import model_path

    human = model_path("human/test-b3c48nbt-humanmeta.bin.gz")
    result = evalsgf(str(GAME), "-m", "9", "-v", "4", "-model", str(TINY_MODEL), "-human-model", str(human),
                     "-print-policy", "-override-config", "humanSLProfile=rank_5k")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines.count("Root policy: ") == 1 and lines.count("Root human policy: ") == 1
    start = lines.index("Root human policy: ")
    assert lines[start + 10].startswith("Pass ")


G170 = "g170-b6c96-s175395328-d26788732.bin.gz"


def _raw_nn_block(lines: list[str]) -> dict:
    """The numbers of one -raw-nn debug block: name -> value (percent signs and 'c' stripped)."""
    values = {}
    for line in lines:
        name, _, rest = line.partition(" ")
        if name in ("Win", "Loss", "NoResult", "ScoreMean", "Lead", "STWinlossError", "STScoreError"):
            values[name] = float(rest.rstrip("c"))
    return values


def test_raw_nn_matches_gtp_kata_raw_nn_for_the_same_position():
    from support.gtp import run_session
    from support.paths import model_path

    net = model_path(G170)
    result = evalsgf(str(GAME), "-m", "9", "-model", str(net), "-raw-nn")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0].startswith("Rules: ") and lines[1] == "Encore phase 0" and lines[2].startswith("MoveNum: 9 ")
    assert "Root visits" not in result.output  # -raw-nn evaluates, it does not search
    printed = _raw_nn_block(lines)
    policy_rows = lines[lines.index("Policy") + 2:lines.index("Policy") + 11]
    assert all(len(row.split()) == 9 for row in policy_rows)
    permille = sum(int(v) for row in policy_rows for v in row.split() if v != "-")
    permille += int(lines[lines.index("Policy") + 1].removeprefix("Pass"))
    assert abs(permille - 1000) <= 9  # each cell is rounded to a thousandth
    gtp = run_session([f"loadsgf {GAME} 10", "kata-raw-nn 0"], model=G170, scripted=False)
    raw = dict(line.split(" ", 1) for line in gtp.splitlines() if line.startswith(("whiteWin ", "whiteLoss ", "whiteLead ")))
    assert printed["Win"] == pytest.approx(float(raw["whiteWin"]) * 100, abs=0.006)
    assert printed["Loss"] == pytest.approx(float(raw["whiteLoss"]) * 100, abs=0.006)
    assert printed["Lead"] == pytest.approx(float(raw["whiteLead"]), abs=0.006)


def test_print_json_is_the_analysis_engine_json():
    import json

    result = evalsgf(str(GAME), "-m", "9", "-v", "16", "-model", str(TINY_MODEL), "-print-json", "-print-policy",
                     "-print-ownership")
    assert result.exit_code == 0, result.output
    line = next(line for line in result.output.splitlines() if line.startswith("{"))
    data = json.loads(line)
    assert set(data) == {"moveInfos", "rootInfo", "policy", "ownership"}
    assert data["rootInfo"]["visits"] == 16 and data["rootInfo"]["currentPlayer"] == "B"
    assert sum(info["visits"] for info in data["moveInfos"]) == 15
    assert len(data["policy"]) == 82 and len(data["ownership"]) == 81
    assert all(len(info["pv"]) <= 8 and len(info["pvVisits"]) == len(info["pv"]) for info in data["moveInfos"])
    assert line == json.dumps(data, sort_keys=True, separators=(",", ":"))  # KataGo's key order and spacing


def test_score_now_dirichlet_shape_and_lead():
    result = evalsgf(str(GAME), "-m", "9", "-v", "8", "-model", str(TINY_MODEL), "-print-score-now",
                     "-print-dirichlet-shape", "-print-lead")
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    start = lines.index("Score now (ROOT position):")
    area = lines[start + 1:start + 10]
    assert all(len(row) == 9 and set(row) <= set("XO.") for row in area) and lines[start + 10] == ""
    assert lines[start + 11] == "Komi: 6.5" and lines[start + 12].startswith("WBonus: ")
    assert re.fullmatch(r"Final: RE\[(B\+|W\+)[\d.]+\]|Final: RE\[0\]", lines[start + 13])
    shape = lines.index("Dirichlet alphas with 10.83 total concentration: ")
    alphas = [float(v) for row in lines[shape + 1:shape + 10] for v in row.split() if v != "-"]
    assert sum(alphas) == pytest.approx(10.83, abs=0.01) and min(alphas) > 0
    lead = [line for line in lines if line.startswith("LEAD: ")]
    assert len(lead) == 1 and abs(float(lead[0].split()[1])) < 9 * 9 + 20


def test_dump_npz_input(tmp_path):
    import numpy as np

    target = tmp_path / "input.npz"
    result = evalsgf(str(GAME), "-m", "9", "-v", "4", "-model", str(TINY_MODEL), "-dump-npz-input-to", str(target))
    assert result.exit_code == 0, result.output
    assert f"Wrote to {target}" in result.output and any(line.startswith("Win ") for line in result.output.splitlines())
    with np.load(target) as data:
        spatial, global_features = data["binaryInputNCHW"], data["globalInputNC"]
    assert spatial.shape == (1, 22, 9, 9) and global_features.shape == (1, 19)
    assert spatial[0, 0].sum() == 81  # feature 0: on the board
    bad = evalsgf(str(GAME), "-m", "9", "-v", "4", "-dump-npz-input-to", str(tmp_path / "no" / "such" / "x.npz"))
    assert bad.exit_code == 1 and "-dump-npz-input-to: cannot write" in bad.output


def test_raw_nn_and_lead_need_a_network():
    for flag in ("-raw-nn", "-print-lead"):
        result = evalsgf(str(GAME), "-m", "5", flag)
        assert result.exit_code == 1 and f"{flag} needs a network (-model)" in result.output


def _root_child_visits(output: str) -> dict:
    tree = output.splitlines()[output.splitlines().index("Tree:") + 3:]
    return {m.group(1).split()[0]: int(m.group(2)) for m in map(CHILD_LINE.match, tree) if m}


def test_hint_loc_searches_the_hinted_move_almost_as_much_as_the_best():
    plain = evalsgf(str(GAME), "-m", "9", "-v", "200", "-model", str(TINY_MODEL))
    assert plain.exit_code == 0, plain.output
    visits = _root_child_visits(plain.output)
    hint = min(visits, key=visits.get)  # the least searched move without a hint
    hinted = evalsgf(str(GAME), "-m", "9", "-v", "200", "-model", str(TINY_MODEL), "-hint-loc", hint)
    assert hinted.exit_code == 0, hinted.output
    with_hint = _root_child_visits(hinted.output)
    assert with_hint[hint] > visits[hint] and with_hint[hint] >= 0.5 * max(with_hint.values())
    two = evalsgf(str(GAME), "-m", "9", "-hint-loc", "A1 B1")
    assert two.exit_code == 1 and "-hint-loc: give one move" in two.output


@pytest.mark.parametrize("override,komi", [("chinese", 7.5), ("koSIMPLEscoreAREAsui0komi5", 5.0)])
def test_override_rules_bring_their_own_komi(override, komi):
    """KataGo's evalsgf takes -override-rules whole (its Rules::parseRules): the preset's usual komi, or the
    one the rules text names, not the SGF's KM."""
    from katacli.game.sgf import read_sgf
    from katacli.search.evalsgf import EvalSgfRequest, initial_rules

    game = read_sgf("(;GM[1]FF[4]SZ[9]KM[6.5]RU[Japanese];B[ee];W[cc];B[gg])")
    rules = initial_rules(game, EvalSgfRequest(move_num=3, override_rules=override), lambda line: None)
    assert rules.komi == komi


def test_evalsgf_leaves_the_gtp_engines_own_pass_defaults_off_as_katago():
    # KataGo's GTP engine turns conservativePass / fillDameBeforePass on when the config is silent; its
    # evalsgf does not, so the pass after a pass is scored as the game's end there (W -100c, not a net value).
    from katacli.commands.evalsgf import _search_settings
    from katacli.config import Config

    params = _search_settings(Config({}, mode="gtp"), False, None, None)[0]
    assert not params.conservative_pass and not params.fill_dame_before_pass
    params = _search_settings(Config({"conservativePass": "true"}, mode="gtp"), False, None, None)[0]
    assert params.conservative_pass and not params.fill_dame_before_pass
