"""katacli's packaged default network (katacli/nets/): what the commands use without -model,
`-model rollouts`, the fallback when the file is missing, and that the network plays every board
size. Searches are a few visits: these check behaviour, not strength."""
from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import katacli
from katacli import nets
from katacli.cli import app, normalize_argv
from support.gtp import python_cli

TIMEOUT = 120
FEW_VISITS = 8
MOVES_PER_BOARD = 4
VERTEX_RE = re.compile(r"^([A-HJ-T])(\d{1,2})$")
# Runs `kata ...` with katacli.nets looking for its files in another folder (argv[1]): an
# installation without the default network.
WITHOUT_DEFAULT_NET = (
    "import sys; from pathlib import Path; import katacli.nets as nets; nets.NETS_DIR = Path(sys.argv[1]); "
    "from katacli.cli import main; sys.argv = ['kata'] + sys.argv[2:]; main()")


@pytest.fixture(scope="module")
def default_net():
    path = nets.packaged_default_net()
    if path is None:
        pytest.skip(f"the default network is not installed ({nets.default_net_path()})")
    return path


def gtp_session(args: list[str], commands: list[str], prefix: list[str] | None = None):
    """(GTP answers, stderr) of one `kata gtp` process fed ``commands``."""
    argv = (prefix or python_cli()) + ["gtp", *args]
    result = subprocess.run(argv, input="\n".join(commands + ["quit"]) + "\n", capture_output=True, text=True,
                            timeout=TIMEOUT)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    answers = [block.strip() for block in result.stdout.split("\n\n") if block.strip()]
    assert answers[-1] == "="  # quit's
    return answers[:-1], result.stderr


def is_vertex_on_board(move: str, size: int) -> bool:
    match = VERTEX_RE.match(move.upper())
    if match is None:
        return move.lower() == "pass"
    column = "ABCDEFGHJKLMNOPQRST".index(match.group(1))
    return column < size and 1 <= int(match.group(2)) <= size


# --------------------------------------------------------------------------- reading -model


@pytest.mark.parametrize("text", ["rollouts", "Rollouts", "ROLLOUTS", " rollouts "])
def test_rollouts_in_any_case_picks_the_rollout_engine(text):
    choice = nets.choose_model(text)
    assert choice.uses_rollouts and choice.source == nets.FROM_ROLLOUTS and "rollouts" in choice.note


def test_a_model_file_is_used_as_given():
    choice = nets.choose_model("some/net.bin.gz")
    assert choice.path == "some/net.bin.gz" and choice.source == nets.FROM_FILE and choice.note is None


@pytest.mark.parametrize("given", [None, ""])   # an empty -model is none (KataGo)
def test_no_model_means_the_packaged_network(default_net, given, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))   # no ~/.katago/default_model.bin.gz
    choice = nets.choose_model(given)
    assert choice.path == str(default_net) and choice.source == nets.FROM_DEFAULT
    assert str(default_net) in choice.note and "-model rollouts" in choice.note


def test_katagos_default_network_comes_first(default_net, tmp_path, monkeypatch):
    """katago without -model reads default_model.bin.gz beside its executable or in ~/.katago."""
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / ".katago").mkdir()
    katago_default = tmp_path / ".katago" / "default_model.bin.gz"
    katago_default.write_bytes(default_net.read_bytes())
    choice = nets.choose_model(None)
    assert choice.path == str(katago_default) and "KataGo's default network" in choice.note


def test_a_missing_packaged_network_means_rollouts_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(nets, "NETS_DIR", tmp_path)
    choice = nets.choose_model(None)
    assert choice.uses_rollouts and choice.source == nets.DEFAULT_MISSING
    assert choice.note.startswith("WARNING: ") and str(tmp_path / nets.DEFAULT_NET_FILE) in choice.note
    with pytest.raises(FileNotFoundError, match="default network is not installed"):
        katacli.load_default_network()


def test_the_default_network_is_small_and_a_katago_model_file(default_net):
    from katacli.nn.model_file_reader import check_model_file

    assert default_net.stat().st_size < 5 * 1024 * 1024  # a few MB at most: it ships in the package
    check_model_file(default_net)


def test_the_record_describes_this_network(default_net):
    """default.json (benchmarks/default_net_record.py) must be regenerated whenever the network changes."""
    record = nets.default_net_record()
    if record is None:
        pytest.skip(f"no record beside the default network ({nets.default_net_record_path()})")
    assert record["network"]["sha256"] == hashlib.sha256(default_net.read_bytes()).hexdigest()
    assert record["network"]["file"] == nets.DEFAULT_NET_FILE
    assert gzip.decompress(default_net.read_bytes()).split(b"\n", 1)[0].decode() == record["network"]["name"]
    assert record["reproduce"]["command"] and isinstance(record["reproduce"]["seed"], int)
    assert record["elo_curve"] and record["elo_curve"][0]["generation"] == 0


# --------------------------------------------------------------------------- kata gtp


def test_gtp_without_model_plays_with_the_default_network(default_net):
    answers, stderr = gtp_session(["-override-config", f"maxVisits={FEW_VISITS}"],
                                  ["kata-get-models", "boardsize 9", "kata-raw-nn 0", "genmove b"])
    assert f"using katacli's default network {default_net}" in stderr
    models = json.loads(answers[0].removeprefix("= "))
    assert os.path.basename(models[0]["name"]) == nets.DEFAULT_NET_FILE   # the file it loaded, as KataGo names a model
    assert answers[2].startswith("= symmetry 0") and "policy" in answers[2]
    assert is_vertex_on_board(answers[3].removeprefix("= "), 9)


def test_gtp_with_model_rollouts_has_no_network():
    answers, stderr = gtp_session(["-model", "Rollouts", "-override-config", f"maxVisits={FEW_VISITS}"],
                                  ["boardsize 7", "kata-raw-nn 0", "genmove b"])
    assert "-model rollouts: playing by Monte Carlo rollouts" in stderr
    assert answers[1].startswith("? ")  # no network to ask
    assert is_vertex_on_board(answers[2].removeprefix("= "), 7)


@pytest.mark.parametrize("size", [5, 19])
def test_gtp_default_network_plays_legal_moves(default_net, size):
    commands = [f"boardsize {size}", "clear_board"] + [f"genmove {'bw'[i % 2]}" for i in range(MOVES_PER_BOARD)]
    answers, _ = gtp_session(["-override-config", f"maxVisits={FEW_VISITS},searchRandSeed=1"], commands)
    moves = [answer.removeprefix("= ") for answer in answers[2:]]
    assert len(moves) == MOVES_PER_BOARD and all(is_vertex_on_board(m, size) for m in moves), moves


def test_gtp_without_the_packaged_network_warns_and_plays_rollouts(tmp_path):
    prefix = [sys.executable, "-c", WITHOUT_DEFAULT_NET, str(tmp_path)]
    answers, stderr = gtp_session(["-override-config", f"maxVisits={FEW_VISITS}"],
                                  ["boardsize 7", "kata-raw-nn 0", "genmove b"], prefix=prefix)
    warnings = [line for line in stderr.splitlines() if "default network" in line]
    assert len(warnings) == 1 and "WARNING: no -model given" in warnings[0] and "rollouts" in warnings[0]
    assert answers[1].startswith("? ") and is_vertex_on_board(answers[2].removeprefix("= "), 7)


# --------------------------------------------------------------------------- the Python API: every size


@pytest.mark.parametrize("size", [5, 7, 13, 19])
def test_default_network_plays_legal_moves_on_every_size(default_net, size):
    net = katacli.load_default_network(symmetry=0)
    engine = katacli.Engine(net, size=size, rules="chinese", visits=FEW_VISITS, seed=size)
    replay = katacli.Game(size, rules="chinese")
    for _ in range(MOVES_PER_BOARD):
        choice = engine.genmove()
        assert choice.move != "resign"
        replay.play(choice.color, choice.move)  # raises on an illegal move
    assert len(engine.game.moves) == MOVES_PER_BOARD


# --------------------------------------------------------------------------- kata analysis


def analysis_session(queries: list[dict], args: list[str], prefix: list[str] | None = None):
    argv = (prefix or python_cli()) + ["analysis", *args]
    result = subprocess.run(argv, input="".join(json.dumps(q) + "\n" for q in queries), capture_output=True,
                            text=True, timeout=TIMEOUT)
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()], result.stderr


QUERY = {"id": "q", "moves": [["B", "D4"]], "rules": "chinese", "komi": 7, "boardXSize": 7, "boardYSize": 7,
         "maxVisits": FEW_VISITS}


def test_analysis_without_model_uses_the_default_network(default_net):
    responses, stderr = analysis_session([{"id": "m", "action": "query_models"}, QUERY], [])
    assert "using katacli's default network" in stderr
    by_id = {r["id"]: r for r in responses}
    assert by_id["m"]["models"][0]["name"] == str(default_net)
    assert by_id["q"]["moveInfos"] and "rawWinrate" in by_id["q"]["rootInfo"]  # network values at the root


def test_analysis_without_the_packaged_network_warns_and_uses_rollouts(tmp_path):
    prefix = [sys.executable, "-c", WITHOUT_DEFAULT_NET, str(tmp_path)]
    responses, stderr = analysis_session([QUERY], [], prefix=prefix)
    assert len([line for line in stderr.splitlines() if "WARNING: no -model given" in line]) == 1
    assert responses[0]["moveInfos"] and "rawWinrate" not in responses[0]["rootInfo"]


# --------------------------------------------------------------------------- evalsgf, benchmark and genconfig


def test_evalsgf_without_model_searches_with_the_default_network(default_net):
    from typer.testing import CliRunner

    game = Path(__file__).resolve().parent / "gtp_transcripts" / "game.sgf"
    r = CliRunner().invoke(app, normalize_argv(["evalsgf", str(game), "-m", "5", "-v", str(FEW_VISITS),
                                                "-print-root-nn-values"]))
    assert r.exit_code == 0, r.output
    assert "using katacli's default network" in r.stderr
    assert f"Root visits: {FEW_VISITS}" in r.stdout and "White win: " in r.stdout  # the network's own values


def test_benchmark_without_model_measures_the_default_network(default_net):
    from typer.testing import CliRunner

    r = CliRunner().invoke(app, normalize_argv(["benchmark", "-v", str(FEW_VISITS), "-n", "1", "-t", "1",
                                                "--boardsize", "9", "--json"]))
    assert r.exit_code == 0, r.output
    data = json.loads(r.stdout)
    assert data["engine"] == "network" and data["model"] == str(default_net)
    assert "using katacli's default network" in r.stderr


def test_genconfig_without_model_tunes_for_the_default_network(default_net, tmp_path):
    from typer.testing import CliRunner

    out = tmp_path / "gtp.cfg"
    r = CliRunner().invoke(app, normalize_argv(["genconfig", "-output", str(out), "--non-interactive",
                                                "--tune-visits", str(FEW_VISITS), "--tune-positions", "1"]))
    assert r.exit_code == 0, r.output
    assert "using katacli's default network" in r.stdout and "Skipping tuning" not in r.stdout
    assert f"kata gtp -config '{out}'" in r.stdout  # no -model: kata gtp plays the same network
    assert f"# Tuned for the network {default_net}" in out.read_text()
