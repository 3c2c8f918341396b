"""kata-raw-nn through the real GTP command loop, against KataGo 1.17.2's recorded outputs.

For each network and each query form (one symmetry, all eight, a colour given) the reference case on
the smallest board is replayed command by command; the text answer must have KataGo's exact layout
and its numbers must match the recording within the reference README's tolerances.
"""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from support.gtp import feed, make_engine
from support.paths import reference_path

REFERENCE = reference_path("kata-raw-nn.jsonl", module=True)
pytestmark = pytest.mark.needs_shared

PROB_TOLERANCE = 1e-4
SCORE_TOLERANCE = 0.01
SCORE_SQ_RELATIVE_TOLERANCE = 1e-3
SCALAR_LINES = [
    ("whiteWin", r"-?\d+\.\d{6}"), ("whiteLoss", r"-?\d+\.\d{6}"), ("noResult", r"-?\d+\.\d{6}"),
    ("whiteLead", r"-?\d+\.\d{3}"), ("whiteScoreSelfplay", r"-?\d+\.\d{3}"), ("whiteScoreSelfplaySq", r"-?\d+\.\d{3}"),
    ("varTimeLeft", r"-?\d+\.\d{3}"), ("shorttermWinlossError", r"-?\d+\.\d{3}"),
    ("shorttermScoreError", r"-?\d+\.\d{3}"),
]
POLICY_CELL = re.compile(r"(    NAN |\d\.\d{6} )")
OWNERSHIP_CELL = re.compile(r"(-?\d\.\d{7} )")  # %9.7f: negatives overflow the width


def _board_area(case) -> int:
    for command in case["commands"]:
        name, *args = command.split()
        if name == "boardsize":
            return int(args[0]) ** 2
        if name == "rectangular_boardsize":
            return int(args[0]) * int(args[1])
    return 19 * 19


def _query_kind(case) -> str:
    args = case["query"].split()[1:]
    return "color" if len(args) == 2 else ("all" if args[0] == "all" else "one")


def _selected_cases():
    cases = [json.loads(line) for line in REFERENCE.read_text().splitlines() if line.strip()]
    chosen = {}
    for case in sorted(cases, key=lambda c: (_board_area(c), c["id"])):
        chosen.setdefault((case["model_file"], _query_kind(case)), case)
    return [chosen[key] for key in sorted(chosen)]


CASES = _selected_cases()


def parse_blocks(text: str, x_size: int, y_size: int, scalar_lines=SCALAR_LINES) -> list[dict]:
    """Check the exact line layout of a kata-raw-nn answer and read its numbers."""
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        block = {}
        m = re.fullmatch(r"symmetry (\d)", lines[i])
        assert m, f"line {i}: {lines[i]!r}"
        block["symmetry"] = int(m.group(1))
        i += 1
        for key, number in scalar_lines:
            m = re.fullmatch(rf"{key} ({number})", lines[i])
            assert m, f"line {i}: expected {key}, got {lines[i]!r}"
            block[key] = float(m.group(1))
            i += 1
        assert lines[i] == "policy"
        i += 1
        policy = []
        for _ in range(y_size):
            cells = POLICY_CELL.findall(lines[i])
            assert "".join(cells) == lines[i] and len(cells) == x_size, f"policy row {lines[i]!r}"
            policy += [None if c.strip() == "NAN" else float(c) for c in cells]
            i += 1
        block["policy"] = policy
        m = re.fullmatch(r"policyPass (\d\.\d{6}) ", lines[i])
        assert m, f"line {i}: {lines[i]!r}"
        block["policyPass"] = float(m.group(1))
        i += 1
        assert lines[i] == "whiteOwnership"
        i += 1
        ownership = []
        for row in range(y_size):
            line = lines[i] if row < y_size - 1 or i + 1 < len(lines) else lines[i] + " "  # last one is trimmed
            cells = OWNERSHIP_CELL.findall(line)
            assert "".join(cells) == line and len(cells) == x_size, f"ownership row {lines[i]!r}"
            ownership += [float(c) for c in cells]
            i += 1
        block["whiteOwnership"] = ownership
        blocks.append(block)
        if i < len(lines):
            assert lines[i] == "", "blocks are separated by one blank line"
            i += 1
    return blocks


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_kata_raw_nn_through_gtp(case):
    engine, out, err = make_engine(model=case["model_file"])
    feed(engine, case["commands"])
    assert "?" not in out.getvalue(), out.getvalue()
    before = len(out.getvalue())
    feed(engine, ["77 " + case["query"]])
    answer = out.getvalue()[before:]
    assert answer.startswith("=77 ") and answer.endswith("\n\n")
    session = engine.session
    blocks = parse_blocks(answer[len("=77 "):-2], session.x_size, session.y_size)
    assert_blocks_match(blocks, case["expected"], score_keys=(
        "whiteLead", "whiteScoreSelfplay", "varTimeLeft", "shorttermWinlossError", "shorttermScoreError"),
        score_sq_key="whiteScoreSelfplaySq")


def assert_blocks_match(blocks: list[dict], expected: list[dict], score_keys, score_sq_key: str) -> None:
    """Parsed answer blocks against KataGo's recorded ones, within the reference README's tolerances."""
    assert len(blocks) == len(expected)
    for got, want in zip(blocks, expected):
        assert got["symmetry"] == want["symmetry"]
        for key in ("whiteWin", "whiteLoss", "noResult", "policyPass"):
            assert abs(got[key] - want[key]) <= PROB_TOLERANCE, key
        for key in score_keys:
            assert abs(got[key] - want[key]) <= SCORE_TOLERANCE, key
        sq = want[score_sq_key]
        assert abs(got[score_sq_key] - sq) <= max(SCORE_SQ_RELATIVE_TOLERANCE * abs(sq), 0.001)
        assert [p is None for p in got["policy"]] == [p is None for p in want["policy"]]
        legal = [i for i, p in enumerate(want["policy"]) if p is not None]
        diff = np.abs(np.array([got["policy"][i] for i in legal]) - np.array([want["policy"][i] for i in legal]))
        assert diff.max(initial=0.0) <= PROB_TOLERANCE
        own = np.abs(np.array(got["whiteOwnership"]) - np.array(want["whiteOwnership"]))
        assert own.max() <= PROB_TOLERANCE


RAW_NN_USAGE = (" for kata-raw-nn (expected an optional color, a symmetry 'all' or index [0-7], "
                "and an optional optimism [0-1])")
RAW_HUMAN_NN_USAGE = " for kata-raw-human-nn (expected an optional color followed by a symmetry 'all' or index [0-7])"


@pytest.mark.parametrize("command, error", [
    ("kata-raw-nn", "Expected a symmetry argument 'all' or index [0-7]" + RAW_NN_USAGE),
    ("kata-raw-nn 8", "Expected a symmetry argument 'all' or index [0-7] but got '8'" + RAW_NN_USAGE),
    ("kata-raw-nn b", "Expected a symmetry argument 'all' or index [0-7]" + RAW_NN_USAGE),
    ("kata-raw-nn w x", "Expected a symmetry argument 'all' or index [0-7] but got 'x'" + RAW_NN_USAGE),
    ("kata-raw-nn 0 1.5", "Expected an optimism value in [0,1] but got '1.5'" + RAW_NN_USAGE),
    ("kata-raw-nn 0 0.5 extra", "Unexpected extra argument 'extra'" + RAW_NN_USAGE),
    ("kata-raw-human-nn 0", "Cannot run kata-raw-human-nn, -human-model was not provided"),
    ("kata-raw-human-nn 0 0.5", "Unexpected extra argument '0.5'" + RAW_HUMAN_NN_USAGE),
])
def test_kata_raw_nn_argument_errors(command, error):
    engine, out, _ = make_engine(model="test-b4c32.bin.gz")
    feed(engine, ["boardsize 5", command])
    assert out.getvalue() == f"= \n\n? {error}\n\n"


def test_kata_raw_nn_optional_forms_answer():
    engine, out, _ = make_engine(model="test-b4c32.bin.gz")
    feed(engine, ["boardsize 5", "kata-raw-nn all 0", "kata-raw-nn W 3 1", "kata-raw-nn black 7"])
    answers = out.getvalue().split("\n\n=")
    assert len(answers) == 4 and "?" not in out.getvalue()
    assert answers[1].count("symmetry") == 8
    assert answers[2].startswith(" symmetry 3\n") and answers[3].startswith(" symmetry 7\n")


def test_kata_raw_nn_without_a_network_is_an_error():
    engine, out, _ = make_engine()
    feed(engine, ["kata-raw-nn 0"])
    assert out.getvalue() == "? kata-raw-nn needs a neural network: start the engine with -model\n\n"
