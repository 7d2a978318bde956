"""Weight sync: how new policy weights travel from the trainer to the rollout producers.

One interface, three transports (DESIGN.md §5):

- :class:`InProcessWeightSync` — the embedded default. The trainer ``publish``es a detached
  copy of its state dict under a version; producer threads ``pull`` it into their own backend
  between generate calls (an HF backend is not safe to mutate while it decodes, so a
  producer, never the trainer, decides when its weights change).
- :class:`SharedMemoryWeightSync` — local processes. The tensors live in shared memory
  (``Tensor.share_memory_``) created once; ``publish`` copies into them under a process
  lock and bumps a shared version counter; a worker process copies out when the version
  moved. The object pickles to child processes (spawn or fork) with its shared buffers.
- :class:`TorchDistributedWeightSync` — a ``torch.distributed`` broadcast from rank 0.
  With ``backend="nccl"`` it is the GPU path (tensors on CUDA, one broadcast per tensor,
  needs a device and one process per GPU); ``backend="gloo"`` runs the same code on CPU,
  which is how it is tested here. Ray's object-store transport lives in
  :mod:`posttrain.distributed` (the only package that imports ray) behind the same interface.

Guarantees: ``pull`` never installs a version older than the one a backend holds; a pulled
version is whole (never half of one publish and half of the next); ``wait_for(v)`` blocks
until a version ``>= v`` is published (or the timeout passes, returning False).
Not covered: sharded (FSDP/TP) weights — a state dict is gathered before it is published.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Mapping, Protocol, runtime_checkable

import torch

StateDict = Mapping[str, torch.Tensor]


@runtime_checkable
class WeightSync(Protocol):
    """What the async loop needs from a weight transport."""

    def publish(self, version: int, state_dict: StateDict) -> None: ...

    def latest_version(self) -> int: ...

    def wait_for(self, version: int, timeout: float | None = None) -> bool: ...

    def pull(self, backend: Any) -> int: ...


def _detached(state_dict: StateDict) -> dict[str, torch.Tensor]:
    return {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}


class InProcessWeightSync:
    """Versioned snapshots shared by threads of one process (see the module docstring)."""

    def __init__(self, version: int = 0, state_dict: StateDict | None = None):
        self._cv = threading.Condition()
        self._version = int(version)
        self._state = _detached(state_dict) if state_dict is not None else None
        self.publishes = 0

    def publish(self, version: int, state_dict: StateDict) -> None:
        snapshot = _detached(state_dict)  # copy outside the lock: publishing must not stall pulls
        with self._cv:
            if version < self._version:
                raise ValueError(f"publish of version {version} after version {self._version}")
            self._version, self._state = int(version), snapshot
            self.publishes += 1
            self._cv.notify_all()

    def latest_version(self) -> int:
        with self._cv:
            return self._version

    def wait_for(self, version: int, timeout: float | None = None) -> bool:
        with self._cv:
            return self._cv.wait_for(lambda: self._version >= version, timeout)

    def pull(self, backend: Any) -> int:
        """Install the newest published weights into ``backend`` if it is behind; its version."""
        with self._cv:
            version, state = self._version, self._state
        if version > int(backend.policy_version):
            backend.load_weights(version, state)  # state is never mutated after publish
        return int(backend.policy_version)


class SharedMemoryWeightSync:
    """Weights in shared memory for worker processes on one machine."""

    def __init__(self, state_dict: StateDict, version: int = 0, *, ctx: Any = None):
        import multiprocessing as mp

        ctx = ctx or mp.get_context("spawn")
        self._tensors = {k: v.detach().to("cpu", copy=True).share_memory_()
                         for k, v in state_dict.items()}
        self._version = ctx.Value("q", int(version), lock=False)
        self._lock = ctx.Lock()

    def publish(self, version: int, state_dict: StateDict) -> None:
        with self._lock, torch.no_grad():
            for k, t in self._tensors.items():
                t.copy_(state_dict[k].detach())
            self._version.value = int(version)

    def latest_version(self) -> int:
        return int(self._version.value)

    def wait_for(self, version: int, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        while self._version.value < version:  # a shared int has no condition variable: poll
            if end is not None and time.monotonic() >= end:
                return False
            time.sleep(0.002)
        return True

    def pull(self, backend: Any) -> int:
        if self._version.value > int(backend.policy_version):
            with self._lock:  # copy out under the lock: a version is never torn
                version = int(self._version.value)
                state = {k: t.clone() for k, t in self._tensors.items()}
            backend.load_weights(version, state)
        return int(backend.policy_version)


class TorchDistributedWeightSync:
    """Broadcast from rank 0 over an initialised ``torch.distributed`` process group.

    Every rank calls ``publish`` (rank 0 with the trainer's weights, the others with their own
    model's state dict as receive buffers) — a collective, so it is step-synchronous by design:
    the GPU path of a colocated or disaggregated trainer/inference pair. ``device`` is where
    the broadcast buffers live ("cuda" for NCCL). The NCCL path needs a GPU per rank.
    """

    def __init__(self, template: StateDict, *, device: str = "cpu", src: int = 0, group: Any = None):
        import torch.distributed as dist

        if not dist.is_initialized():
            raise RuntimeError("TorchDistributedWeightSync needs torch.distributed.init_process_group first")
        self._dist, self.src, self.group = dist, src, group
        self.device = torch.device(device)
        self._buffers = {k: torch.empty_like(v, device=self.device) for k, v in template.items()}
        self._version = 0
        self._received: dict[str, torch.Tensor] | None = None

    def publish(self, version: int, state_dict: StateDict) -> None:
        dist = self._dist
        is_src = dist.get_rank(self.group) == self.src if self.group is not None else dist.get_rank() == self.src
        head = torch.tensor([int(version)], dtype=torch.long, device=self.device)
        dist.broadcast(head, self.src, group=self.group)
        for name in sorted(self._buffers):  # same order on every rank
            buf = self._buffers[name]
            if is_src:
                buf.copy_(state_dict[name].detach())
            dist.broadcast(buf, self.src, group=self.group)
        self._version = int(head.item())
        self._received = self._buffers

    def latest_version(self) -> int:
        return self._version

    def wait_for(self, version: int, timeout: float | None = None) -> bool:
        return self._version >= version  # collectives already synchronised the ranks

    def pull(self, backend: Any) -> int:
        if self._received is not None and self._version > int(backend.policy_version):
            backend.load_weights(self._version, self._received)
        return int(backend.policy_version)
