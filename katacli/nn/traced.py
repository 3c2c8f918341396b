"""TorchScript copies of a network for CPU inference, one per input shape.

Why: an eager PyTorch forward pass is about a hundred Python-level calls, and between
them the calling thread must win the GIL back. With search or game threads busy in
Python, a network server thread waits up to the interpreter's switch interval at each
of them, and a small network spends most of its time waiting (test-b4c32 on 9x9, two
server threads, one thread busy in Python: 0 evaluations/s eager, about 600 traced).
A traced module runs the whole graph in C++ with the GIL released, and is faster even
alone (2.6k vs 0.8k evaluations/s at batch 1).

Tracing records one input shape's control flow, so there is one trace per (height,
width, mask_full, metadata) key, built on first use; the batch dimension stays free.
Nets that cannot be traced keep running eagerly (:attr:`TracedForward.failed`).
"""
from __future__ import annotations

import logging
import threading
import warnings
from typing import Optional

import torch

log = logging.getLogger("katacli.nn")

# Batch size used to record a trace (any size >1 works; the trace is batch-agnostic), and the
# batch size and tolerance of the check against the eager network.
TRACE_BATCH_SIZE = 2
CHECK_BATCH_SIZE = 3
CHECK_TOLERANCE = 1e-4
# warnings.catch_warnings swaps the process-wide filter list: two nets tracing at once on two threads
# (a match's two players) could restore each other's filters mid-trace and let torch's deprecation
# warnings through. Tracing happens once per input shape, so all of it takes turns.
_TRACING = threading.Lock()


class _Wrapped(torch.nn.Module):
    def __init__(self, net: torch.nn.Module, mask_full: bool, with_meta: bool):
        super().__init__()
        self.net = net
        self.mask_full = mask_full
        self.with_meta = with_meta

    def forward(self, spatial: torch.Tensor, global_features: torch.Tensor, meta: Optional[torch.Tensor] = None):
        return tuple(self.net(spatial, global_features, meta if self.with_meta else None, mask_full=self.mask_full))


class TracedForward:
    """Runs ``net(spatial, global_features, meta, mask_full=...)`` through cached traces."""

    def __init__(self, net: torch.nn.Module):
        self.net = net
        self._traces: dict[tuple, torch.jit.ScriptModule] = {}
        self._lock = threading.Lock()
        self.failed = False

    def __call__(self, spatial: torch.Tensor, global_features: torch.Tensor, meta: Optional[torch.Tensor],
                 mask_full: bool):
        if not self.failed:
            key = (spatial.shape[1], spatial.shape[2], spatial.shape[3], bool(mask_full), meta is not None,
                   spatial.dtype, spatial.device)
            traced = self._traces.get(key) or self._trace(key, spatial, global_features, meta, mask_full)
            if traced is not None:
                args = (spatial, global_features, meta) if meta is not None else (spatial, global_features)
                return list(traced(*args))
        return list(self.net(spatial, global_features, meta, mask_full=mask_full))

    def _trace(self, key, spatial, global_features, meta, mask_full) -> Optional[torch.jit.ScriptModule]:
        with self._lock:
            if key in self._traces:
                return self._traces[key]
            if self.failed:
                return None
            wrapped = _Wrapped(self.net, bool(mask_full), meta is not None).eval()
            present = [t for t in (spatial, global_features, meta) if t is not None]
            try:
                with _TRACING, warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # TracerWarnings about shape constants: intended
                    # Not torch.jit.freeze'd: a frozen copy of the weights stays in TorchScript's process-wide
                    # compilation unit after the net is gone (~10 MB per g170 load in a loop over checkpoints),
                    # and the net's norms are already folded, so freezing measured no faster (g170 19x19 batch 8,
                    # b4c32 9x9 batch 1, CPU).
                    traced = torch.jit.trace(wrapped, tuple(_example(t, TRACE_BATCH_SIZE) for t in present),
                                             check_trace=False)
                # A trace that baked in something it should not have (a batch size, a data-dependent
                # branch) would be silently wrong: check it on another batch size first.
                check = tuple(_example(t, CHECK_BATCH_SIZE) for t in present)
                for got, want in zip(traced(*check), wrapped(*check)):
                    if got.shape != want.shape or not torch.allclose(got, want, atol=CHECK_TOLERANCE, rtol=CHECK_TOLERANCE):
                        raise ValueError("the trace does not reproduce the eager network")
            except Exception as exc:  # an unusual net: stay eager rather than fail or be wrong
                log.warning("could not trace the network (%s); running it eagerly", exc)
                self.failed = True
                return None
            self._traces[key] = traced
            return traced


def _example(t: torch.Tensor, batch: int) -> torch.Tensor:
    """A batch of ``batch`` rows cycled from ``t``'s: same dtype, device, layout and kind of values."""
    index = torch.arange(batch, device=t.device) % t.shape[0]
    rows = t[index]
    if t.dim() == 4 and not t.is_contiguous() and t.is_contiguous(memory_format=torch.channels_last):
        rows = rows.contiguous(memory_format=torch.channels_last)  # record the layout that will be served
    return rows.clone(memory_format=torch.preserve_format)
