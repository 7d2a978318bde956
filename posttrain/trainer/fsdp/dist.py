"""Process groups and FSDP2 wrapping: one code path for gloo on CPU and NCCL on GPUs.

What it is: :func:`init_distributed` joins (or skips) a ``torch.distributed`` process group —
from torchrun's environment (``RANK``/``WORLD_SIZE``/``MASTER_ADDR``/``MASTER_PORT``) or from
explicit arguments (:func:`spawn` sets them for ``torch.multiprocessing`` children) — with
the backend chosen by device: ``nccl`` when CUDA is available, ``gloo`` otherwise
(``distributed.backend: auto``); :func:`shard_model` applies ``fully_shard`` to every
decoder layer (the classes a Hugging Face model names in ``_no_split_modules``) and then to
the root, so one layer's parameters are gathered at a time.

Guarantees: FSDP2 *averages* gradients over ranks (its default, and the only reduction gloo
offers it: a divide factor of 1 needs ``PREMUL_SUM``, which gloo lacks), so :mod:`.update`
multiplies each rank's share of the global loss by the world size; without a process group (one process) :func:`shard_model` returns the model
unchanged and every helper here acts as rank 0 of 1 — the same trainer code runs plain.

Not covered: tensor or pipeline parallelism, HSDP meshes (one flat mesh over all ranks),
CPU offload of parameters. The NCCL path is written for and selected on CUDA devices but has
not run on a GPU (this machine has none; docs/scale.md says what has run).
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from typing import Any, Callable

import torch

from posttrain.core.errors import ConfigError

BACKENDS = ("auto", "gloo", "nccl")


@dataclass(frozen=True)
class DistInfo:
    """This process's place in the group (rank 0 of 1 without a process group)."""

    rank: int
    world_size: int
    backend: str | None  # None: no process group (a single plain process)
    device: torch.device

    @property
    def is_main(self) -> bool:
        return self.rank == 0


def choose_backend(backend: str = "auto") -> str:
    """``nccl`` on CUDA, ``gloo`` on CPU for ``auto``; an explicit ``nccl`` needs CUDA."""
    if backend not in BACKENDS:
        raise ConfigError(f"distributed.backend: got {backend!r}; allowed: {', '.join(BACKENDS)}")
    if backend == "auto":
        return "nccl" if torch.cuda.is_available() else "gloo"
    if backend == "nccl" and not torch.cuda.is_available():
        raise ConfigError('distributed.backend: got "nccl" but CUDA is not available here; '
                          'allowed on CPU: "gloo" or "auto"')
    return backend


def _device(backend: str, local_rank: int) -> torch.device:
    if backend == "nccl":  # one GPU per rank, by local rank (torchrun's LOCAL_RANK)
        torch.cuda.set_device(local_rank)
        return torch.device("cuda", local_rank)
    return torch.device("cpu")


def current() -> DistInfo:
    """The process group already joined (or rank 0 of 1 when there is none)."""
    import torch.distributed as dist

    if not (dist.is_available() and dist.is_initialized()):
        return DistInfo(0, 1, None, torch.device("cpu"))
    backend = dist.get_backend()
    local = int(os.environ.get("LOCAL_RANK", dist.get_rank()))
    device = torch.device("cuda", local) if backend == "nccl" else torch.device("cpu")
    return DistInfo(dist.get_rank(), dist.get_world_size(), backend, device)


def init_distributed(backend: str = "auto", *, rank: int | None = None,
                     world_size: int | None = None) -> DistInfo:
    """Join the process group torchrun (or :func:`spawn`) describes; a no-op when alone.

    Without ``WORLD_SIZE`` in the environment and no ``world_size`` given, nothing is
    initialised: one plain process. Idempotent.
    """
    import torch.distributed as dist

    if dist.is_initialized():
        return current()
    world = int(world_size if world_size is not None else os.environ.get("WORLD_SIZE", 1))
    if world <= 1 and "MASTER_PORT" not in os.environ:
        return DistInfo(0, 1, None, torch.device("cpu"))
    rank = int(rank if rank is not None else os.environ.get("RANK", 0))
    chosen = choose_backend(backend)
    device = _device(chosen, int(os.environ.get("LOCAL_RANK", rank)))
    dist.init_process_group(chosen, rank=rank, world_size=world,
                            device_id=device if chosen == "nccl" else None)
    return DistInfo(rank, world, chosen, device)


def close_distributed() -> None:
    import torch.distributed as dist

    if dist.is_initialized():
        dist.barrier()
        dist.destroy_process_group()


def decoder_layers(model: torch.nn.Module) -> list[torch.nn.Module]:
    """The repeated blocks to shard one by one: the classes ``_no_split_modules`` names."""
    names = set(getattr(model, "_no_split_modules", None) or ())
    layers = [m for m in model.modules() if type(m).__name__ in names]
    if not layers:  # not an HF model that names its blocks: every ModuleList's items
        layers = [m for ml in model.modules() if isinstance(ml, torch.nn.ModuleList) for m in ml]
    return layers


def shard_model(model: torch.nn.Module, *, reshard_after_forward: bool = True) -> torch.nn.Module:
    """``fully_shard`` per decoder layer and on the root; gradients summed over ranks.

    Without a process group the model is returned as it is (a plain single process).
    """
    info = current()
    if info.backend is None:
        return model
    from torch.distributed.fsdp import fully_shard

    model.to(info.device)
    for layer in decoder_layers(model):
        fully_shard(layer, reshard_after_forward=reshard_after_forward)
    fully_shard(model, reshard_after_forward=reshard_after_forward)
    return model


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _spawned(rank: int, fn: Callable[..., Any], world_size: int, port: int, backend: str,
             threads: int, args: tuple) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size))
    torch.set_num_threads(threads)
    init_distributed(backend, rank=rank, world_size=world_size)
    try:
        fn(rank, *args)
    finally:
        close_distributed()


def spawn(fn: Callable[..., Any], nproc: int, *args: Any, backend: str = "auto",
          threads: int = 1) -> None:
    """Run ``fn(rank, *args)`` in ``nproc`` fresh processes joined in one group on 127.0.0.1.

    ``fn`` must be importable by the children (a module-level function). Raises when any
    child fails (``torch.multiprocessing``'s ProcessRaisedException carries its traceback).
    """
    import torch.multiprocessing as mp

    mp.start_processes(_spawned, args=(fn, nproc, free_port(), backend, threads, args),
                       nprocs=nproc, join=True, start_method="spawn")
