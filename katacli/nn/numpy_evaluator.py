"""An :class:`~katacli.nn.evaluator.NNEvaluator` whose network call is the numpy forward pass.

Everything around the call -- symmetries, cache, policy softmax, value and score transforms,
batching -- is NNEvaluator's own code; only ``_forward`` differs (:class:`~katacli.nn.numpy_forward.NumpyNet`
instead of the torch device runner). ``kata analysis`` answers with it while torch is imported and the
torch evaluator built, then hands over (see :mod:`katacli.analysis.backend`). Nothing here imports torch.
"""
from __future__ import annotations

import ctypes
import glob
import os
from typing import Optional

import numpy as np

from katacli.nn.cache import DEFAULT_CACHE_SIZE_POWER_OF_TWO
from katacli.nn.description import ModelDesc
from katacli.nn.evaluator import NNEvaluator
from katacli.nn.numpy_forward import NumpyNet, flops_per_position, supports

# Largest network (floating-point operations for one 19x19 position) worth running in numpy until torch
# is ready. One BLAS thread runs ~50-100 GFLOP/s here: g170-b6c96 (0.72 GFLOP) takes ~7-20 ms a position
# on a 2-core AMD EPYC, so a first 20-visit query costs a fraction of torch's ~1 s import; a b18c384nbt net
# (~20 GFLOP) would take seconds for the same query, longer than loading torch.
NUMPY_MAX_FLOPS_PER_POSITION = 2.0e9
NUMPY_FLOPS_BOARD_AREA = 19 * 19
# Device files of a GPU torch would run the network on (NVIDIA's driver; AMD's ROCm, which torch calls "cuda").
GPU_DEVICE_FILES = ("/dev/nvidia[0-9]*", "/dev/kfd")
# OpenBLAS's entry points that set its thread count (numpy's wheels rename them with a prefix / suffix).
_OPENBLAS_SET_THREADS = ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                         "openblas_set_num_threads64_", "openblas_set_num_threads")


class _CpuDevice:
    """What NNEvaluator and BatchingEvaluator read of a torch.device: the numpy net runs on the CPU."""

    type = "cpu"

    def __str__(self) -> str:
        return "cpu"


def numpy_worthwhile(desc: ModelDesc) -> bool:
    """Whether the numpy forward pass can run ``desc`` and is quick enough to answer while torch loads."""
    return supports(desc) and flops_per_position(desc, NUMPY_FLOPS_BOARD_AREA) <= NUMPY_MAX_FLOPS_PER_POSITION


def gpu_likely() -> bool:
    """Whether torch would probably run the network on a GPU, told without importing torch. The numpy
    stand-in is then left out: the batching evaluator is sized for the CPU it runs on (a server thread
    per core), which would split a GPU's batches small."""
    return any(glob.glob(pattern) for pattern in GPU_DEVICE_FILES)


def use_one_blas_thread() -> bool:
    """Make numpy's OpenBLAS use one thread (True if it could). Its threads busy-wait between calls:
    on two shared cores, with torch importing beside it, two threads ran g170-b6c96 at ~150 ms a
    position against ~7 ms with one. Other BLAS libraries (macOS's Accelerate) are left as they are."""
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for name in _OPENBLAS_SET_THREADS:
            setter = getattr(lib, name, None)
            if setter is not None:
                setter(1)
                return True
    return False


class NumpyEvaluator(NNEvaluator):
    """NNEvaluator running :class:`NumpyNet` (CPU, float32, no torch). ``desc``: a parsed model file."""

    def __init__(self, desc: ModelDesc, cache_size_power_of_two: Optional[int] = DEFAULT_CACHE_SIZE_POWER_OF_TWO,
                 default_symmetry: Optional[int] = None, max_batch_size: int = 1, seed: Optional[int] = None):
        self.device = _CpuDevice()
        self.precision = "float32"
        self.channels_last = True
        self.net = NumpyNet(desc)
        self._max_batch_size = max(1, int(max_batch_size))
        self._init_common(desc.version, desc.name, desc.postprocess, desc.num_policy_channels,
                          desc.trunk.metadata_encoder is not None, cache_size_power_of_two, default_symmetry, seed)

    @property
    def max_batch_size(self) -> int:
        return self._max_batch_size

    @max_batch_size.setter
    def max_batch_size(self, value: int) -> None:
        self._max_batch_size = max(1, int(value))

    def _forward(self, spatial: np.ndarray, global_features: np.ndarray, meta: Optional[np.ndarray], mask_full: bool):
        return self.net(spatial, global_features, meta, mask_full)

    def describe_device(self) -> str:
        return "CPU with numpy (until torch is loaded), float32"
