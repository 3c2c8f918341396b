"""Neural net evaluation and GPU keys.

KataGo reads these in Setup::initializeNNEvaluators. Device keys come in many
spellings (generic or backend-prefixed, optionally per model and per server
thread), so they are families. Keys of backends katacli does not have
(TensorRT, Metal, OpenCL, Eigen) are accepted and ignored, as KataGo itself
silently skips keys of backends it was not built with.
"""
from __future__ import annotations

from katacli.config_keys.builders import bool_key, enabled_key, int_key, section, str_key
from katacli.config_keys.spec import (
    MAX_BOARD_LEN, NUM_SYMMETRIES, DerivedDefault, Enabled, KeyFamily, Unsupported,
)

MAX_NN_BATCH_SIZE = 65536
MAX_SERVER_THREADS = 1024
MAX_DEVICE_INDEX = 1023
# GTP sizes batches from the thread count: rounded up to a multiple of 4, at least 8.
GTP_MIN_BATCH_SIZE = 8
GTP_BATCH_ROUNDING = 4
NN_SECTION = "Neural net and GPU"


def _gtp_default_batch_size(resolver) -> int:
    threads = resolver.value("numSearchThreads")
    rounded_up = (threads + GTP_BATCH_ROUNDING - 1) // GTP_BATCH_ROUNDING * GTP_BATCH_ROUNDING
    return max(GTP_MIN_BATCH_SIZE, rounded_up)


NN_KEYS = section(NN_SECTION, [
    int_key("nnMaxBatchSize", None, 1, MAX_NN_BATCH_SIZE, "Most positions sent to the GPU in one batch.",
            mode_defaults={"gtp": DerivedDefault("numSearchThreads rounded up to a multiple of 4, at least 8",
                                                 _gtp_default_batch_size)},
            required_in=("analysis", "selfplay")),
    int_key("nnCacheSizePowerOfTwo", 20, -1, 48, "Log2 of the number of cached network evaluations (the main RAM use).",
            mode_defaults={"analysis": 23}, required_in=("selfplay",)),
    int_key("nnMutexPoolSizePowerOfTwo", 16, -1, 24, "Log2 of the number of locks guarding the cache.",
            mode_defaults={"analysis": 17}, required_in=("selfplay",)),
    int_key("numNNServerThreadsPerModel", 1, 1, MAX_SERVER_THREADS,
            "Threads feeding the network; usually one per GPU."),
    bool_key("nnRandomize", True, "Evaluate each position in a random board orientation."),
    int_key("nnForcedSymmetry", None, 0, NUM_SYMMETRIES - 1, "Always evaluate in this one orientation (0-7)."),
    bool_key("debugSkipNeuralNet", False, "Debugging only (KataGo): a random network instead of the model file.",
             unsupported=Unsupported("katacli always evaluates the model given (-model rollouts searches without a "
                                     "network)", off=False)),
    int_key("numEigenThreadsPerModel", None, 1, MAX_SERVER_THREADS,
            "Threads PyTorch uses inside one network evaluation on the CPU (default: PyTorch's, one per core)."),
    bool_key("nnNumpyUntilTorch", True,
             "katacli only: `kata analysis` answers its first queries with a numpy copy of a small network "
             "while PyTorch is imported (about a second of CPU), then PyTorch takes over; false: wait for it."),
    bool_key("cudaDisableGraphSDPA", False, "Do not use fused attention kernels."),
    bool_key("cudaDisableWarmup", False, "Skip warming up GPU kernels at startup."),
    enabled_key("cudaUseNHWC", "Use channels-last memory layout on the GPU (auto: yes, as KataGo's CUDA backend on tensor-core GPUs)."),
    # katacli's own: PyTorch would use TF32 for float32 by default on Ampere and later GPUs.
    bool_key("cudaUseTF32", False, "Let float32 convolutions and matmuls on the GPU use TF32 (faster, about 1e-3 "
                                   "relative error; KataGo's FP32 mode never does)."),
    bool_key("cudaUseGraphs", True, "Replay captured CUDA graphs for the network (fewer kernel launches)."),
    # katacli's own: torch.compile of the network (inductor fuses the steps between convolutions).
    enabled_key("cudaUseTorchCompile", "Compile the network with torch.compile (auto: half-precision nets of "
                                       "10+ GFLOP a 19x19 position, e.g. b18c384nbt: 1.4x on an H100; loading "
                                       "then takes about 20 s longer, less once the compile cache holds it)."),
    enabled_key("cudaUse1x1Matmul", "Run 1x1 convolutions as matrix multiplies (auto: in FP16).",
                unsupported=Unsupported("PyTorch chooses how to run 1x1 convolutions", off=Enabled.AUTO)),
])

NN_FAMILIES = [
    KeyFamily(r"nnRandSeed[0-9]*", str_key(
        "nnRandSeed<N>", None, "Fixed seed for the random orientations (default: random).", section=NN_SECTION)),
    # Without these keys GTP sizes buffers for the current board and self-play
    # for its largest board; the analysis engine always takes the largest size.
    KeyFamily(r"maxBoard(X|Y)?SizeForNNBuffer[0-9]*", int_key(
        "maxBoard[X|Y]SizeForNNBuffer<N>", None, 2, MAX_BOARD_LEN,
        "Largest board the network buffers are sized for.", section=NN_SECTION,
        mode_defaults={"analysis": MAX_BOARD_LEN})),
    KeyFamily(r"requireMaxBoardSize[0-9]*", bool_key(
        "requireMaxBoardSize<N>", None, "Promise that every board is exactly the buffer size (faster).",
        section=NN_SECTION, mode_defaults={
            "analysis": False,
            "gtp": DerivedDefault("true unless gtpForceMaxNNSize", lambda r: not r.value("gtpForceMaxNNSize")),
        }, unsupported=Unsupported("katacli's network takes every board size at the same cost, so queries for "
                                   "smaller boards are answered (KataGo refuses them)", off=False,
                                   modes=frozenset({"analysis"})))),
    KeyFamily(r"(useFP16|cudaUseFP16)(-[0-9]+)?", enabled_key(
        "[cuda]UseFP16[-<N>]", "Half precision on the GPU: true, false or auto.", section=NN_SECTION)),
    KeyFamily(r"(inputsUseNHWC|cudaInputsUseNHWC)[0-9]*", bool_key(
        "[cuda]InputsUseNHWC<N>", None, "Feed network inputs channels-last.", section=NN_SECTION)),
    KeyFamily(r"(deviceToUse|gpuToUse|cudaDeviceToUse|cudaGpuToUse)(Model[0-9]+)?(Thread[0-9]+)?", int_key(
        "[cuda]DeviceToUse[Model<M>][Thread<N>]", None, 0, MAX_DEVICE_INDEX,
        "GPU index for all, one model's, or one server thread's evaluations.", section=NN_SECTION)),
    KeyFamily(r"(trt|metal|opencl|eigen|dummybackend)[A-Z][A-Za-z0-9_-]*", str_key(
        "<otherBackend>...", None, "Setting for a backend katacli does not have; accepted and ignored.",
        section=NN_SECTION, unsupported=Unsupported("katacli evaluates networks with PyTorch, not this backend"))),
]
