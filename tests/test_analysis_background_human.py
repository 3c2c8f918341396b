"""`kata analysis -human-model`: the human-SL net loads after "ready" (KaTrain waits for that line).

A wrapper process holds the human net's load until the test lets it go, so what happens while it loads
is seen for certain: queries that do not use it are answered, one that does waits, and a load that
fails ends the engine with the model-failure status however its input ended.
"""
from __future__ import annotations


import pytest

from katacli.cli_support import EXIT_MODEL_FAILURE, MODEL_FAILURE_MARK
from support.analysis import HELD_TIMEOUT, e5_query, held_engines
from support.paths import G170_B6, HUMAN_TEST, model_path

TIMEOUT = HELD_TIMEOUT

# Runs `kata analysis` with the human net's load held until the file named by argv[1] exists
# (or failing, when argv[2] is "fail").
HOLD_HUMAN_LOAD = (
    "import os, sys, time\n"
    "from katacli.nn.evaluator import NNEvaluator\n"
    "gate, mode = sys.argv[1], sys.argv[2]\n"
    "real = NNEvaluator.from_file\n"
    "def held(path, *args, **kwargs):\n"
    "    if 'human' in os.fspath(path):\n"
    "        while not os.path.exists(gate):\n"
    "            time.sleep(0.05)\n"
    "        if mode == 'fail':\n"
    "            raise RuntimeError('no memory left on the device')\n"
    "    return real(path, *args, **kwargs)\n"
    "NNEvaluator.from_file = staticmethod(held)\n"
    "from katacli.cli import main\n"
    "main(sys.argv[3:])\n"
)


@pytest.fixture
def held(tmp_path):
    args = ["analysis", "-model", str(model_path(G170_B6)), "-human-model", str(model_path(HUMAN_TEST))]
    yield from held_engines(HOLD_HUMAN_LOAD, tmp_path / "let-the-human-net-load", args)


def test_ready_and_answering_while_the_human_net_loads(held):
    engine = held()
    assert engine.ready.wait(TIMEOUT), engine.stderr
    assert not any("Loaded human SL model" in line for line in engine.stderr)
    engine.send(e5_query("main"))
    answer = engine.answer()  # the human net is still held: this query does not need it
    assert answer["id"] == "main" and "humanPrior" not in answer["moveInfos"][0]
    assert not engine.gate.exists()
    engine.send(e5_query("human", overrideSettings={"humanSLProfile": "rank_1d"}))
    engine.gate.touch()  # the query above waits for the load, then is answered with the human policy
    answer = engine.answer()
    assert answer["id"] == "human" and "humanPrior" in answer["moveInfos"][0]
    assert engine.finish() == 0
    assert any("Loaded human SL model" in line for line in engine.stderr)


@pytest.mark.parametrize("before_failure", ["input ends", "a query answered"])
def test_a_human_net_failing_after_ready_never_ends_in_status_0(held, before_failure):
    engine = held("fail")
    assert engine.ready.wait(TIMEOUT), engine.stderr
    if before_failure == "a query answered":
        engine.send(e5_query("main"))
        assert engine.answer()["id"] == "main"
    engine.process.stdin.close()  # the engine now waits for the human net before it exits
    engine.gate.touch()
    assert engine.wait() == EXIT_MODEL_FAILURE
    failure = [line for line in engine.stderr if line.startswith(MODEL_FAILURE_MARK)]
    assert len(failure) == 1 and "no memory left on the device" in failure[0], engine.stderr
    assert f"could not load the model {model_path(HUMAN_TEST)}" in failure[0]
