"""Where and how a network runs: TF32 off by default, the precision and layout a config asks for
(KataGo's useFP16 / cudaUseNHWC meanings), CUDA graph buckets, and on a GPU (``cuda`` marker)
the device's outputs against the CPU's."""
from __future__ import annotations

import os

import numpy as np
import pytest
import torch

from katacli.config import Config
from katacli.nn import device_runner
from katacli.nn.device_runner import GRAPH_BUCKETS, DeviceRunner, graph_bucket, set_tf32
from katacli.nn.evaluator import NNEvaluator, NNRequest
from katacli.setup.engine_settings import NNSettings

from support.paths import BUNDLED_TINY_MODEL, G170_B6, HUMAN_TEST, SHARED_NETS, model_path
from support.compile import needs_cxx_compiler


def test_float32_means_float32_on_cuda_unless_asked():
    # Importing the device layer turns PyTorch's TF32 default off; only a network asking for it turns it on.
    assert torch.backends.cudnn.allow_tf32 is False
    assert torch.backends.cuda.matmul.allow_tf32 is False
    try:
        set_tf32(True)
        assert torch.backends.cudnn.allow_tf32 and torch.backends.cuda.matmul.allow_tf32
    finally:
        set_tf32(False)
    assert NNSettings.from_config(Config(mode="gtp")).use_tf32 is False


def _settings(**keys) -> NNSettings:
    cfg = Config(mode="gtp")
    for key, value in keys.items():
        cfg.set(key, value)
    return NNSettings.from_config(cfg)


@pytest.fixture
def fake_gpu(monkeypatch):
    """torch reports one CUDA device of the given compute capability (nothing runs on it)."""
    def install(capability):
        monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
        monkeypatch.setattr(torch.cuda, "get_device_capability", lambda device=None: capability)
    return install


@pytest.mark.parametrize("use_fp16, capability, want", [
    ("auto", (9, 0), "float16"),    # H100/H200: tensor cores, FP16 as KataGo's auto
    ("auto", (7, 0), "float16"),    # V100
    ("auto", (6, 1), "float32"),    # Pascal: no tensor cores
    ("true", (6, 1), "float16"),
    ("false", (9, 0), "float32"),
])
def test_precision_follows_use_fp16_like_katago(fake_gpu, use_fp16, capability, want):
    fake_gpu(capability)
    options = _settings(useFP16=use_fp16).evaluator_options()
    assert options["precision"] == want
    assert options["device"] == "cuda:0"
    assert options["allow_tf32"] is False and options["cuda_graphs"] is True


def test_backend_prefixed_and_per_model_keys_choose_precision_too(fake_gpu):
    fake_gpu((9, 0))
    assert _settings(cudaUseFP16="false").evaluator_options()["precision"] == "float32"
    cfg = Config(mode="gtp")
    cfg.set("useFP16", "true")
    cfg.set("useFP16-1", "false")
    assert NNSettings.from_config(cfg, model_index=1).evaluator_options()["precision"] == "float32"
    assert NNSettings.from_config(cfg, model_index=0).evaluator_options()["precision"] == "float16"


def test_device_layout_tf32_and_graph_keys(fake_gpu):
    fake_gpu((8, 0))
    options = _settings(cudaDeviceToUse=2, cudaUseNHWC="false", cudaUseTF32="true",
                        cudaUseGraphs="false").evaluator_options()
    assert options == {"device": "cuda:2", "precision": "float16", "channels_last": False, "allow_tf32": True,
                       "cuda_graphs": False, "compile_net": None,  # cudaUseTorchCompile auto: by the net
                       "compile_cache_dir": os.path.join(os.path.expanduser("~/.katago"), "torchcompile"),
                       "default_symmetry": None,  # nnRandomize: a random one each
                       "cache_size_power_of_two": 20}


@pytest.mark.parametrize("value, want", [("auto", None), ("true", True), ("false", False)])
def test_the_torch_compile_key_reaches_the_evaluator(fake_gpu, value, want):
    fake_gpu((9, 0))
    assert _settings(cudaUseTorchCompile=value).evaluator_options()["compile_net"] is want


def test_the_compile_cache_lives_under_the_home_data_dir(tmp_path, monkeypatch):
    assert _settings(homeDataDir=str(tmp_path)).evaluator_options()["compile_cache_dir"] == str(
        tmp_path / "torchcompile")
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "")   # (so that the teardown puts back what was there)
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    device_runner.use_compile_cache(None)   # torch's default stays
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    device_runner.use_compile_cache(str(tmp_path / "a"))
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "a")
    device_runner.use_compile_cache(str(tmp_path / "b"))   # set (by the user, or a first net): it stays
    assert os.environ["TORCHINDUCTOR_CACHE_DIR"] == str(tmp_path / "a")


def test_a_compile_cache_folder_that_cannot_be_made_leaves_torch_its_temp_folder(tmp_path, monkeypatch, caplog):
    # A read-only home (a container, a service user) must not stop the net from loading: torch.compile's
    # import creates its cache folder, so a folder kata cannot write is never handed to it.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "")
    monkeypatch.delenv("TORCHINDUCTOR_CACHE_DIR")
    (tmp_path / "home").write_text("a file where the folder would go")
    with caplog.at_level("WARNING", logger="katacli.nn"):
        device_runner.use_compile_cache(str(tmp_path / "home" / "torchcompile"))
    assert "TORCHINDUCTOR_CACHE_DIR" not in os.environ
    assert "cannot write torch.compile's cache folder" in caplog.text


def test_a_compile_that_cannot_be_set_up_is_logged_and_the_net_loads(monkeypatch, caplog):
    def failing_setup(module, **_kwargs):
        raise OSError(30, "Read-only file system", "/home/user/.katago")

    monkeypatch.setattr(torch, "compile", failing_setup)
    with caplog.at_level("WARNING", logger="katacli.nn"):
        runner = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None,
                                       compile_net=True).runner
    assert not runner.compiled
    assert "torch.compile is not available" in caplog.text and "Read-only file system" in caplog.text
    spatial, global_features = _random_inputs(2)
    assert runner(spatial, global_features, None, True)[0].shape[0] == 2


def test_auto_compile_takes_big_half_precision_nets_on_cuda_only(monkeypatch):
    import torch.utils._triton as triton_probe

    monkeypatch.setattr(triton_probe, "has_triton", lambda: True)
    cuda, cpu = torch.device("cuda:0"), torch.device("cpu")
    b18_per_point = 18.9e9 / 361   # b18c384nbt; g170-b6c96 is 0.7 GFLOP a 19x19 position
    assert device_runner.auto_compile(cuda, "float16", b18_per_point)
    assert not device_runner.auto_compile(cuda, "float16", 0.7e9 / 361)
    assert not device_runner.auto_compile(cuda, "float32", b18_per_point)   # float32: exact, as KataGo's FP32
    assert not device_runner.auto_compile(cpu, "float16", b18_per_point)
    assert not device_runner.auto_compile(cuda, "float16", None)
    monkeypatch.setattr(triton_probe, "has_triton", lambda: False)
    assert not device_runner.auto_compile(cuda, "float16", b18_per_point)   # no Triton: inductor cannot


def _random_inputs(n: int, size: int = 9, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    spatial = (rng.random((n, 22, size, size)) < 0.2).astype(np.float32)
    spatial[:, 0] = 1.0
    global_features = np.zeros((n, 19), np.float32)
    global_features[:, 5] = -0.375
    return spatial, global_features


@needs_cxx_compiler
def test_a_compiled_runner_answers_as_the_eager_net_at_every_batch_size():
    eager = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None, compile_net=False)
    compiled = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None, compile_net=True)
    assert compiled.runner.compiled and "torch.compile" in compiled.describe_device()
    assert not eager.runner.compiled and "torch.compile" not in eager.describe_device()
    for n in (3, 5, 1):   # one compile for 3 and 5 (the batch dimension is dynamic); 1 is specialised
        spatial, global_features = _random_inputs(n, seed=n)
        want = eager.runner(spatial, global_features, None, True)
        got = compiled.runner(spatial, global_features, None, True)
        for g, w in zip(got, want):
            assert g.dtype == np.float32 and g.shape == w.shape
            np.testing.assert_allclose(g, w, atol=1e-4)
    assert compiled.runner.compiled   # still compiled: nothing failed and fell back


@needs_cxx_compiler
def test_warm_up_says_it_compiles_and_compiles_every_batch_size_before_the_first_query():
    from torch._dynamo.utils import counters

    evaluator = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None,
                                      compile_net=True)
    notices = []
    evaluator.warm_up(9, 9, notify=notices.append)
    assert notices == [evaluator.COMPILE_NOTICE]
    graphs = counters["stats"]["unique_graphs"]
    for n in (7, 30, evaluator.max_batch_size):   # a search's batches: no compile waits for them any more
        spatial, global_features = _random_inputs(n, seed=n)
        evaluator.runner(spatial, global_features, None, True)
    assert counters["stats"]["unique_graphs"] == graphs and evaluator.runner.compiled
    plain = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None, compile_net=False)
    plain.warm_up(9, 9, notify=notices.append)
    assert len(notices) == 1   # nothing to say for a net that is not compiled


@needs_cxx_compiler
def test_the_benchmark_and_genconfig_warm_up_compiles_before_anything_is_timed():
    from torch._dynamo.utils import counters

    from katacli.search import SearchParams
    from katacli.tuning.network import warm_up

    evaluator = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", compile_net=True)
    said = []
    warm_up(evaluator, SearchParams.defaults("gtp"), 19, 19, notify=said.append)
    assert said == [evaluator.COMPILE_NOTICE]
    graphs = counters["stats"]["unique_graphs"]
    spatial = np.zeros((30, 22, 19, 19), np.float32)
    spatial[:, 0] = 1.0
    evaluator.runner(spatial, np.zeros((30, 19), np.float32), None, True)
    assert counters["stats"]["unique_graphs"] == graphs
    plain = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", compile_net=False)
    warm_up(plain, SearchParams.defaults("gtp"), 19, 19, notify=said.append)
    assert len(said) == 1


def test_a_compile_that_fails_is_logged_and_the_eager_net_answers(monkeypatch, caplog):
    def failing_compile(module, **_kwargs):
        def run(*_args):
            raise RuntimeError("no compiler for this device\nmore detail")
        return run

    monkeypatch.setattr(torch, "compile", failing_compile)
    eager = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None, compile_net=False)
    runner = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None,
                                   compile_net=True).runner
    assert runner.compiled
    spatial, global_features = _random_inputs(4)
    with caplog.at_level("WARNING", logger="katacli.nn"):
        got = runner(spatial, global_features, None, True)
    assert not runner.compiled and "torch.compile" not in runner.describe()
    assert "torch.compile of the network failed (RuntimeError: no compiler for this device)" in caplog.text
    for g, w in zip(got, eager.runner(spatial, global_features, None, True)):
        np.testing.assert_allclose(g, w, atol=1e-5)


def test_the_orientation_follows_nn_forced_symmetry_then_nn_randomize():
    assert _settings(nnForcedSymmetry=5).evaluator_options()["default_symmetry"] == 5
    assert _settings(nnRandomize="false").evaluator_options()["default_symmetry"] == 0
    assert _settings().evaluator_options()["default_symmetry"] is None


def test_a_negative_cache_size_means_no_cache_for_every_engine():
    # kata gtp (and kata benchmark) handed -1 to the cache, which refused it after "GTP ready".
    assert _settings(nnCacheSizePowerOfTwo=-1).evaluator_options()["cache_size_power_of_two"] is None
    assert _settings(nnCacheSizePowerOfTwo=12).evaluator_options()["cache_size_power_of_two"] == 12


def test_the_cpu_always_runs_float32(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    options = _settings(useFP16="true").evaluator_options()
    assert options["device"] == "cpu" and options["precision"] == "float32"


def test_graph_buckets_hold_every_batch_with_little_padding():
    for max_batch in (8, 64, 100, 256, 1000):
        for n in range(1, max_batch + 1):
            bucket = graph_bucket(n, max_batch)
            assert n <= bucket <= max(max_batch, n)
            assert bucket <= 2 * n  # never more than double the work, 1.5x between the larger buckets
    assert graph_bucket(100, 100) == 100  # the largest batch runs at its own size
    assert list(GRAPH_BUCKETS) == sorted(GRAPH_BUCKETS)


def test_cpu_description_and_runner_outputs_match_the_eager_net():
    evaluator = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None)
    assert evaluator.describe_device().startswith("CPU with PyTorch") and "float32" in evaluator.describe_device()
    runner = evaluator.runner
    rng = np.random.default_rng(0)
    spatial = (rng.random((3, 22, 9, 9)) < 0.2).astype(np.float32)
    spatial[:, 0] = 1.0
    global_features = np.zeros((3, 19), np.float32)
    got = runner(spatial, global_features, None, True)
    with torch.inference_mode():
        want = evaluator.net(torch.from_numpy(spatial), torch.from_numpy(global_features), None, mask_full=True)
    for g, w in zip(got, want):
        assert g.dtype == np.float32
        np.testing.assert_allclose(g, w.numpy(), atol=1e-5)


def test_half_check_accepts_a_sound_net_and_rejects_a_broken_one():
    # On the CPU the check runs in bfloat16 (half convolutions need a GPU); the logic is the same.
    net = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None).net
    import copy

    half = copy.deepcopy(net).to(torch.bfloat16)
    assert device_runner._half_agrees(net, half, torch.bfloat16, torch.device("cpu"), channels_last=True)
    broken = copy.deepcopy(half)
    with torch.no_grad():
        next(broken.parameters()).mul_(50.0)
    assert not device_runner._half_agrees(net, broken, torch.bfloat16, torch.device("cpu"), channels_last=True)


def test_a_precision_that_does_not_exist_is_refused():
    net = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None).net
    with pytest.raises(ValueError, match="precision must be one of"):
        DeviceRunner(net, torch.device("cpu"), "float8")


# ---------------------------------------------------------------------------------------------
# On a GPU


def _requests(n: int, size: int, seed: int) -> list[NNRequest]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        spatial = np.zeros((22, size, size), np.float32)
        spatial[0] = 1.0
        stones = rng.random((size, size))
        spatial[1] = stones < 0.15
        spatial[2] = stones > 0.85
        legal = np.concatenate(((spatial[1] + spatial[2]).reshape(-1) == 0, [True]))
        out.append(NNRequest(spatial, np.zeros(19, np.float32), legal, size, size, white_to_move=bool(i % 2),
                             symmetry=i % 8))
    return out


def _max_policy_diff(a, b) -> float:
    return max(float(np.abs(np.asarray(x.policy) - np.asarray(y.policy)).max()) for x, y in zip(a, b))


@pytest.mark.cuda
@pytest.mark.needs_shared
@pytest.mark.parametrize("name", SHARED_NETS)
def test_cuda_float32_matches_the_cpu(name):
    path = model_path(name)
    cpu = NNEvaluator.from_file(path, device="cpu", cache_size_power_of_two=None)
    gpu = NNEvaluator.from_file(path, device="cuda", cache_size_power_of_two=None)
    assert "float32" in gpu.describe_device() and "no TF32" in gpu.describe_device()
    for size, n in ((19, 5), (9, 3), (13, 1)):  # 5 and 3 run padded in graph buckets 8 and 4
        requests = _requests(n, size, seed=size)
        want, got = cpu.evaluate_uncached(requests), gpu.evaluate_uncached(requests)
        assert _max_policy_diff(want, got) < 1e-4
        for w, g in zip(want, got):
            assert g.white_win == pytest.approx(w.white_win, abs=1e-4)
            assert g.white_lead == pytest.approx(w.white_lead, abs=1e-3)


@pytest.mark.cuda
@pytest.mark.needs_shared
def test_cuda_compiled_half_net_with_graphs_answers_as_the_uncompiled_one():
    path = model_path(G170_B6)
    plain = NNEvaluator.from_file(path, device="cuda", precision="float16", cache_size_power_of_two=None,
                                  compile_net=False)
    compiled = NNEvaluator.from_file(path, device="cuda", precision="float16", cache_size_power_of_two=None,
                                     compile_net=True)
    for n in (24, 5, 1):   # graph buckets 24, 8 (padded) and 1: recorded from the compiled net
        requests = _requests(n, 19, seed=n)
        want, got = plain.evaluate_uncached(requests), compiled.evaluate_uncached(requests)
        assert _max_policy_diff(want, got) < 5e-3   # fused float16 kernels round differently, rows stay rows
        assert all(g.white_win == pytest.approx(w.white_win, abs=5e-3) for w, g in zip(want, got))
    runner = compiled.runner
    assert runner.compiled and runner.cuda_graphs   # neither the compile nor a capture fell back
    assert "torch.compile" in runner.describe() and "CUDA graphs" in runner.describe()


@pytest.mark.cuda
@pytest.mark.needs_shared
def test_cuda_float16_stays_near_float32_and_graphs_change_nothing():
    path = model_path(G170_B6)
    exact = NNEvaluator.from_file(path, device="cuda", cache_size_power_of_two=None, cuda_graphs=False)
    half = NNEvaluator.from_file(path, device="cuda", precision="float16", cache_size_power_of_two=None)
    half_eager = NNEvaluator.from_file(path, device="cuda", precision="float16", cache_size_power_of_two=None,
                                       cuda_graphs=False)
    assert half.runner.cast_mode == "weights" and "float16" in half.describe_device()
    requests = _requests(24, 19, seed=5)  # a bucket size: graph and eager net run the same batch shape
    want, got, eager = (e.evaluate_uncached(requests) for e in (exact, half, half_eager))
    assert _max_policy_diff(want, got) < 0.02  # FP16: KataGo's own FP16-vs-FP32 differences are of this order
    assert all(g.white_win == pytest.approx(w.white_win, abs=0.02) for w, g in zip(want, got))
    # A graph replays what the eager net computes (a misplaced or mixed-up row would differ by far more).
    assert _max_policy_diff(got, eager) < 2e-3
    # Batches that are padded up to a bucket give each position its own answer.
    singles = [half.evaluate_uncached([r])[0] for r in requests[:3]]
    assert _max_policy_diff(singles, got[:3]) < 0.01


@pytest.mark.cuda
@pytest.mark.needs_shared
def test_cuda_human_net_runs_with_metadata():
    path = model_path(HUMAN_TEST)
    cpu = NNEvaluator.from_file(path, device="cpu", cache_size_power_of_two=None)
    gpu = NNEvaluator.from_file(path, device="cuda", cache_size_power_of_two=None)
    requests = _requests(3, 19, seed=2)
    meta = np.zeros(cpu.net.trunk.metadata_encoder.layer1.in_features, np.float32)
    for r in requests:
        r.meta = meta
    assert _max_policy_diff(cpu.evaluate_uncached(requests), gpu.evaluate_uncached(requests)) < 1e-4


@pytest.mark.cuda
@pytest.mark.needs_shared
def test_cuda_launched_calls_answer_as_waited_calls_and_overlap():
    """DeviceRunner.launch queues a call and returns; two launches in flight on one thread each get
    their own lane and their own answers, the same as calls waited for."""
    net = NNEvaluator.from_file(model_path(G170_B6), device="cuda", cache_size_power_of_two=None)
    runner = net.runner
    assert net.launches_async
    batches = []
    for seed, n in ((1, 5), (2, 16)):
        rng = np.random.default_rng(seed)
        spatial = np.zeros((n, 22, 19, 19), np.float32)
        spatial[:, 0] = 1.0
        spatial[:, 1] = rng.random((n, 19, 19)) < 0.1
        batches.append((spatial, np.zeros((n, 19), np.float32)))
    waited = [runner(s, g, None, True) for s, g in batches]
    first = runner.launch(*batches[0], None, True)
    second = runner.launch(*batches[1], None, True)   # while the first is still queued
    for launched, want in ((second, waited[1]), (first, waited[0])):
        for got, expected in zip(launched.wait(), want):
            np.testing.assert_allclose(got, expected, atol=1e-5)
        assert launched.done()   # (asked without waiting; after wait() it is over)
    again = runner.launch(*batches[0], None, True)
    while not again.done():   # done() never blocks; the call ends on its own
        pass
    for got, expected in zip(again.wait(), waited[0]):
        np.testing.assert_allclose(got, expected, atol=1e-5)


@pytest.mark.cuda
@pytest.mark.needs_shared
def test_cuda_capture_lanes_records_the_size_on_every_lane():
    """kata benchmark's network curve records each batch size on both lanes, so that a pipelined search
    (a call in flight per lane) never captures a graph inside a timed run."""
    from katacli.nn.device_runner import CUDA_LANES

    runner = NNEvaluator.from_file(model_path(G170_B6), device="cuda", cache_size_power_of_two=None).runner
    spatial = np.zeros((24, 22, 19, 19), np.float32)
    spatial[:, 0] = 1.0
    runner.capture_lanes(spatial, np.zeros((24, 19), np.float32), None, True)
    lanes = [runner._take_lane() for _ in range(CUDA_LANES)]
    try:
        assert all(any(key[0] == 24 for key in lane.graphs) for lane in lanes)
    finally:
        for lane in lanes:
            runner._lanes.put(lane)


@pytest.mark.cuda
@pytest.mark.needs_shared
def test_cuda_record_graphs_records_every_size_on_every_lane():
    """bench_analysis records the graphs before timing, as kata benchmark does."""
    from katacli.nn.device_runner import CUDA_LANES
    from katacli.tuning.gpu_curve import record_graphs

    evaluator = NNEvaluator.from_file(model_path(G170_B6), device="cuda", cache_size_power_of_two=None)
    assert record_graphs(evaluator, 19, 19, 16) == [1, 2, 4, 8, 12, 16]
    lanes = [evaluator.runner._take_lane() for _ in range(CUDA_LANES)]
    try:
        for lane in lanes:
            assert {key[0] for key in lane.graphs} >= {1, 2, 4, 8, 12, 16}
    finally:
        for lane in lanes:
            evaluator.runner._lanes.put(lane)


def test_record_graphs_off_cuda_records_nothing():
    from katacli.tuning.gpu_curve import record_graphs

    net = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None)
    assert record_graphs(net, 9, 9, 16) == []


def test_capture_lanes_off_cuda_just_runs_the_batch():
    net = NNEvaluator.from_file(BUNDLED_TINY_MODEL, device="cpu", cache_size_power_of_two=None)
    spatial = np.zeros((2, 22, 9, 9), np.float32)
    spatial[:, 0] = 1.0
    calls = []
    runner = net.runner
    original = runner._run_plain
    runner._run_plain = lambda *args: calls.append(args) or original(*args)
    runner.capture_lanes(spatial, np.zeros((2, 19), np.float32), None, True)
    assert len(calls) == 1


@pytest.mark.cuda
@pytest.mark.needs_shared
def test_cuda_pipelined_search_launches_on_its_own_thread():
    from katacli._core.game_state import GameState
    from katacli.search import SearchParams, Searcher

    net = NNEvaluator.from_file(model_path(G170_B6), device="cuda")
    params = SearchParams.defaults("gtp").replace(num_search_threads=32, max_visits=1000)
    searcher = Searcher(GameState(19, 19), params, net, seed=1, pipeline=True)
    assert searcher.pipelined
    stats = searcher.run()
    assert stats.visits == 1000 and searcher.tree.total_virtual_losses() == 0
    assert searcher.tree.check_invariants()
