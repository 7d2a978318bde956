"""Weight sync by ``torch.distributed`` broadcast: trainer rank 0 to every rollout engine.

What it is: a process group of its own — rank 0 the trainer's main rank, ranks 1..N the
engines — built from a ``TCPStore`` that rank 0 hosts on a free port, so it lives beside the
trainer's FSDP group without touching the default group. :class:`BroadcastSender` flattens a
state dict into one buffer per dtype and broadcasts each; :class:`BroadcastReceiver` (inside
an engine actor) receives the buffers and cuts them back into named tensors by the layout
both sides agreed on when the group formed. ``gloo`` on CPU; ``nccl`` when both sides hold
GPUs (the buffers then live on the device: a GPU-to-GPU copy, no host round trip).

Guarantees: a receiver gets every tensor of the version whole (names, shapes and dtypes of
the layout; a state dict of another layout is refused before anything is sent); the
collective blocks until every member has joined it, so the sender must start only after the
receivers were asked to receive (``EngineGroup.load_weights`` does).

Not covered: pipelining buffers (one dtype at a time), bucketing very large models (each
buffer is a whole dtype's worth of the policy), re-forming the group after an engine died.
"""

from __future__ import annotations

import datetime
from typing import Any, Mapping

import torch

TIMEOUT = datetime.timedelta(minutes=10)

Layout = list[tuple[str, tuple[int, ...], str]]  # (name, shape, dtype name), in order


def layout_of(state: Mapping[str, torch.Tensor]) -> Layout:
    return [(k, tuple(v.shape), str(v.dtype).removeprefix("torch.")) for k, v in state.items()]


def _group(store: Any, rank: int, world: int, backend: str) -> Any:
    import torch.distributed as dist

    if backend == "nccl":
        return dist.ProcessGroupNCCL(store, rank, world)
    return dist.ProcessGroupGloo(store, rank, world, TIMEOUT)


def _device(backend: str) -> torch.device:
    return torch.device("cuda", torch.cuda.current_device()) if backend == "nccl" else torch.device("cpu")


def _broadcast(group: Any, tensor: torch.Tensor) -> None:
    import torch.distributed as dist

    opts = dist.BroadcastOptions()
    opts.rootRank = 0
    group.broadcast([tensor], opts).wait()


def _dtypes(layout: Layout) -> list[str]:
    return sorted({d for _, _, d in layout})


class BroadcastSender:
    """Rank 0's end: hosts the store; ``send`` broadcasts one version."""

    def __init__(self, world: int, layout: Layout, backend: str = "gloo", host: str = "0.0.0.0"):
        import torch.distributed as dist

        self.store = dist.TCPStore(host, 0, world, True, timeout=TIMEOUT, wait_for_workers=False)
        self.port, self.world, self.layout, self.backend = self.store.port, world, layout, backend
        self.group = None

    def connect(self) -> None:
        """Form the group (blocks until every receiver joined: call while they join)."""
        self.group = _group(self.store, 0, self.world, self.backend)

    def send(self, state: Mapping[str, torch.Tensor]) -> None:
        if layout_of(state) != self.layout:
            raise ValueError("broadcast weight sync: the state dict's names, shapes or dtypes "
                             "differ from the layout the group was formed with")
        device = _device(self.backend)
        for dtype in _dtypes(self.layout):
            parts = [state[k].detach().reshape(-1) for k, _, d in self.layout if d == dtype]
            _broadcast(self.group, torch.cat(parts).to(device))

    def close(self) -> None:
        self.group = None


class BroadcastReceiver:
    """An engine's end: joins the group at construction; ``receive`` returns one version."""

    def __init__(self, address: str, port: int, rank: int, world: int, layout: Layout,
                 backend: str = "gloo"):
        import torch.distributed as dist

        self.store = dist.TCPStore(address, port, world, False, timeout=TIMEOUT)
        self.layout, self.backend = layout, backend
        self.group = _group(self.store, rank, world, backend)

    def receive(self) -> dict[str, torch.Tensor]:
        device = _device(self.backend)
        out: dict[str, torch.Tensor] = {}
        for dtype in _dtypes(self.layout):
            entries = [(k, s) for k, s, d in self.layout if d == dtype]
            numel = sum(int(torch.Size(s).numel()) for _, s in entries)
            flat = torch.empty(numel, dtype=getattr(torch, dtype), device=device)
            _broadcast(self.group, flat)
            at = 0
            for k, s in entries:
                n = int(torch.Size(s).numel())
                out[k] = flat[at:at + n].view(s)
                at += n
        return out
