"""Multi-GPU / multi-node training through ``torch.distributed`` (DDP), launched by ``torchrun``.

``torchrun`` starts one process per GPU and sets ``RANK``, ``LOCAL_RANK``, ``WORLD_SIZE``,
``MASTER_ADDR`` and ``MASTER_PORT``; :func:`setup_distributed` reads them. Without them
training runs in a single process. Each process trains ``batchSize`` rows of every global
batch; gradients are averaged by DDP and the loss is scaled by the world size so the
per-sample learning rate is that of one process on the whole global batch. Only rank 0
writes checkpoints, exports, metrics and the plot.

One machine with 4 GPUs::

    torchrun --standalone --nproc_per_node=4 -m katacli.cli train -data-dir D -output-dir T -export-dir M

Two machines with 8 GPUs each (run on both, ``--node_rank`` 0 and 1)::

    torchrun --nnodes=2 --nproc_per_node=8 --node_rank=0 --rdzv_backend=c10d \\
        --rdzv_endpoint=HOST0:29500 -m katacli.cli train -data-dir D -output-dir T -export-dir M

(``D`` and ``T`` must be the same shared directories on every node.) CPU-only runs use the
gloo backend, GPUs use NCCL.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import timedelta

import torch
import torch.distributed as dist

# Collectives waiting longer than this mean a peer died; fail instead of hanging forever.
COLLECTIVE_TIMEOUT = timedelta(minutes=30)


class DeviceError(Exception):
    """The requested device is not available."""


@dataclass
class DistributedContext:
    rank: int = 0
    local_rank: int = 0
    world_size: int = 1
    device: torch.device = torch.device("cpu")

    @property
    def is_main(self) -> bool:
        return self.rank == 0

    @property
    def is_distributed(self) -> bool:
        return self.world_size > 1


def _choose_device(choice: str, local_rank: int) -> torch.device:
    if choice == "cuda" or (choice == "auto" and torch.cuda.is_available()):
        if not torch.cuda.is_available():
            raise DeviceError("device = cuda was requested but PyTorch sees no CUDA GPU")
        count = torch.cuda.device_count()
        if local_rank >= count:
            raise DeviceError(f"local rank {local_rank} has no GPU (this node has {count}); lower --nproc_per_node")
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def setup_distributed(device_choice: str = "auto") -> DistributedContext:
    """The process's rank and device; joins the process group when launched by torchrun."""
    world_size = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    device = _choose_device(device_choice, local_rank)
    if world_size > 1 and not dist.is_initialized():
        backend = "nccl" if device.type == "cuda" else "gloo"
        dist.init_process_group(backend=backend, timeout=COLLECTIVE_TIMEOUT,
                                device_id=device if device.type == "cuda" else None)
    return DistributedContext(rank, local_rank, world_size, device)


def teardown_distributed(finished: bool = False) -> None:
    """Leave the process group. ``finished``: every rank got to the end, so wait for the others first:
    a rank that tears down while a peer still talks to it can make gloo's background thread abort the
    peer at exit ("terminate called without an active exception"), failing a finished run."""
    if dist.is_available() and dist.is_initialized():
        if finished:
            dist.barrier()
        dist.destroy_process_group()


def any_rank_true(flag: bool, ctx: DistributedContext) -> bool:
    """Whether ``flag`` is set on any rank (so all ranks stop at the same step)."""
    if not ctx.is_distributed:
        return flag
    t = torch.tensor([1.0 if flag else 0.0], device=ctx.device)
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    return bool(t.item() > 0)


def barrier(ctx: DistributedContext) -> None:
    if ctx.is_distributed:
        dist.barrier()


def broadcast_object(value, ctx: DistributedContext):
    """Rank 0's ``value`` (any picklable object) on every rank."""
    if not ctx.is_distributed:
        return value
    holder = [value if ctx.is_main else None]
    dist.broadcast_object_list(holder, src=0, device=ctx.device if ctx.device.type == "cuda" else None)
    return holder[0]


def gather_objects(value, ctx: DistributedContext) -> list:
    """Every rank's ``value`` (any picklable object), in rank order, on every rank."""
    if not ctx.is_distributed:
        return [value]
    values = [None] * ctx.world_size
    dist.all_gather_object(values, value)
    return values


# How a collective operation fails when another rank has gone (killed, crashed): its connection to this one
# closes (gloo: "Connection closed by peer", a RuntimeError), or the operation waits in vain (NCCL's watchdog,
# the store's timeout). A backend's name alone is no sign: this rank's own faults name it too.
_PEER_LOST_MARKS = ("connection closed by peer", "connection reset by peer", "broken pipe",
                    "communicator was aborted", "timed out", "timeout")


def is_peer_lost(exc: BaseException, ctx: DistributedContext) -> bool:
    """Whether ``exc``, raised in a distributed run, is a collective that failed because another rank
    stopped (not an error of this rank's own)."""
    if not ctx.is_distributed or not isinstance(exc, RuntimeError):
        return False
    text = str(exc).lower()
    return any(mark in text for mark in _PEER_LOST_MARKS)


def first_line(exc: BaseException) -> str:
    """An exception's first line (a communication library's message runs to many), or its class's name."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


def broadcast_int(value: int, ctx: DistributedContext) -> int:
    """Rank 0's ``value`` on every rank."""
    if not ctx.is_distributed:
        return value
    t = torch.tensor([value], dtype=torch.int64, device=ctx.device)
    dist.broadcast(t, src=0)
    return int(t.item())
