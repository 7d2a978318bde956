"""Weight sync: how new policy weights travel from the trainer to the rollout producers.

One interface, three transports (DESIGN.md §5):

- :class:`InProcessWeightSync` — the embedded default. The trainer ``publish``es a detached
  copy of its state dict under a version; producer threads ``pull`` it into their own backend
  between generate calls (an HF backend is not safe to mutate while it decodes, so a
  producer, never the trainer, decides when its weights change).
- :class:`SharedMemoryWeightSync` — local processes. ``keep`` slots of tensors live in shared
  memory (``Tensor.share_memory_``), created once; ``publish`` copies into the slot of the
  oldest version under a process lock; a worker process copies a slot out under the same
  lock. The object pickles to child processes (spawn or fork) with its shared buffers.
- :class:`TorchDistributedWeightSync` — a ``torch.distributed`` broadcast from rank 0.
  With ``backend="nccl"`` it is the GPU path (tensors on CUDA, one broadcast per tensor,
  needs a device and one process per GPU); ``backend="gloo"`` runs the same code on CPU,
  which is how it is tested here. Ray's object-store transport lives in
  :mod:`posttrain.distributed` (the only package that imports ray) behind the same interface.

The ring: the in-process and shared-memory syncs (and Ray's) hold the ``keep`` newest
versions, not only the newest, because the async loop's deterministic schedule samples the
job of step ``s`` with exactly version ``max(first, v_s - max_policy_lag)``; with at most
``lag + 1`` jobs out, ``keep = lag + 1`` versions is what the schedule can still ask for.
``preload`` puts older versions back after a resume (from the checkpoint), before any job.

Guarantees: ``pull(backend)`` installs the newest version and never one older than the
backend holds (free-running); ``pull(backend, v)`` installs exactly version ``v`` (a version
no longer held raises :class:`WeightVersionError`, never a silent substitute); a pulled
version is whole (never half of one publish and half of the next); ``wait_for(v)`` blocks
until a version ``>= v`` is published (or the timeout passes, returning False).
Not covered: sharded (FSDP/TP) weights — a state dict is gathered before it is published;
the torch.distributed broadcast holds one version (it is step-synchronous: no ring).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Mapping, Protocol, runtime_checkable

import torch

from posttrain.core.errors import PosttrainError

StateDict = Mapping[str, torch.Tensor]


class WeightVersionError(PosttrainError, LookupError):
    """A producer asked for a weights version the sync no longer (or never) held."""

    kind = "weight_sync"


@runtime_checkable
class WeightSync(Protocol):
    """What the async loop needs from a weight transport."""

    def publish(self, version: int, state_dict: StateDict) -> None: ...

    def latest_version(self) -> int: ...

    def wait_for(self, version: int, timeout: float | None = None) -> bool: ...

    def pull(self, backend: Any, version: int | None = None) -> int: ...


def _detached(state_dict: StateDict) -> dict[str, torch.Tensor]:
    return {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}


def _missing(version: int, held: list[int]) -> WeightVersionError:
    return WeightVersionError(f"weights version {version} is not held (held: {sorted(held)}); the "
                              f"ring keeps lag + 1 versions — a job outside the schedule asked for it")


def install(backend: Any, version: int | None, newest: int, fetch) -> int:
    """Shared ``pull`` logic: ``fetch(v)`` gives version ``v``'s state dict (or raises)."""
    have = int(backend.policy_version)
    if version is None:  # free-running: the newest, never going back
        if newest > have:
            backend.load_weights(newest, fetch(newest))
    elif version != have:  # deterministic: exactly this version, older or newer
        backend.load_weights(version, fetch(version))
    return int(backend.policy_version)


class InProcessWeightSync:
    """Versioned snapshots shared by threads of one process (see the module docstring)."""

    def __init__(self, version: int = 0, state_dict: StateDict | None = None, *, keep: int = 1):
        self._cv = threading.Condition()
        self.keep = max(1, int(keep))
        self._version = int(version)
        # None: the weights are already in the backends (``load_weights(v, None)``)
        self._ring: dict[int, dict[str, torch.Tensor] | None] = {
            self._version: _detached(state_dict) if state_dict is not None else None}
        self.publishes = 0

    def publish(self, version: int, state_dict: StateDict) -> None:
        snapshot = _detached(state_dict)  # copy outside the lock: publishing must not stall pulls
        with self._cv:
            if version < self._version:
                raise ValueError(f"publish of version {version} after version {self._version}")
            self._version = int(version)
            self._ring[self._version] = snapshot
            for old in sorted(self._ring)[:-self.keep]:  # snapshots are never mutated: a pull
                del self._ring[old]                      # holding one keeps it alive
            self.publishes += 1
            self._cv.notify_all()

    def preload(self, versions: Mapping[int, StateDict]) -> None:
        """Hold older versions again (a resume), within the ring's size; held ones stay."""
        with self._cv:
            for v, sd in versions.items():
                if int(v) < self._version and int(v) not in self._ring:
                    self._ring[int(v)] = _detached(sd)
            for old in sorted(self._ring)[:-self.keep]:
                del self._ring[old]

    def held(self) -> list[int]:
        with self._cv:
            return sorted(self._ring)

    def weights(self, version: int) -> StateDict | None:
        """The snapshot of a held version (read-only: shared with the producers)."""
        with self._cv:
            if version not in self._ring:
                raise _missing(version, list(self._ring))
            return self._ring[version]

    def latest_version(self) -> int:
        with self._cv:
            return self._version

    def wait_for(self, version: int, timeout: float | None = None) -> bool:
        with self._cv:
            return self._cv.wait_for(lambda: self._version >= version, timeout)

    def pull(self, backend: Any, version: int | None = None) -> int:
        """Install the newest weights (``version`` None) or exactly ``version``; the backend's version."""
        return install(backend, version, self.latest_version(), self.weights)


class SharedMemoryWeightSync:
    """Weights in shared memory for worker processes on one machine: a ring of ``keep`` slots."""

    def __init__(self, state_dict: StateDict, version: int = 0, *, ctx: Any = None, keep: int = 1):
        import multiprocessing as mp

        ctx = ctx or mp.get_context("spawn")
        self.keep = max(1, int(keep))
        self._slots = [{k: v.detach().to("cpu", copy=True).share_memory_() for k, v in state_dict.items()}
                       for _ in range(self.keep)]
        # the version each slot holds (-1: empty); the newest version is a separate counter
        self._slot_version = ctx.Array("q", [int(version)] + [-1] * (self.keep - 1), lock=False)
        self._version = ctx.Value("q", int(version), lock=False)
        self._lock = ctx.Lock()

    def _write(self, version: int, state_dict: StateDict) -> None:
        """Copy into the slot of the oldest (or no) version; the caller holds the lock."""
        slot = min(range(self.keep), key=lambda i: self._slot_version[i])
        self._slot_version[slot] = -1  # a crash mid-copy leaves the slot empty, never torn
        with torch.no_grad():
            for k, t in self._slots[slot].items():
                t.copy_(state_dict[k].detach())
        self._slot_version[slot] = int(version)

    def publish(self, version: int, state_dict: StateDict) -> None:
        with self._lock:
            if version < self._version.value:
                raise ValueError(f"publish of version {version} after version {self._version.value}")
            self._write(version, state_dict)
            self._version.value = int(version)

    def preload(self, versions: Mapping[int, StateDict]) -> None:
        """Hold older versions again (a resume): newest first, into free or older slots."""
        with self._lock:
            for v in sorted(versions, reverse=True):
                if v < self._version.value and v > min(self._slot_version[:]) \
                        and v not in self._slot_version[:]:
                    self._write(v, versions[v])

    def held(self) -> list[int]:
        with self._lock:
            return sorted(v for v in self._slot_version[:] if v >= 0)

    def weights(self, version: int) -> dict[str, torch.Tensor]:
        with self._lock:  # copy out under the lock: a version is never torn
            for i in range(self.keep):
                if self._slot_version[i] == version:
                    return {k: t.clone() for k, t in self._slots[i].items()}
            raise _missing(version, [v for v in self._slot_version[:] if v >= 0])

    def latest_version(self) -> int:
        return int(self._version.value)

    def wait_for(self, version: int, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        while self._version.value < version:  # a shared int has no condition variable: poll
            if end is not None and time.monotonic() >= end:
                return False
            time.sleep(0.002)
        return True

    def pull(self, backend: Any, version: int | None = None) -> int:
        return install(backend, version, self.latest_version(), self.weights)


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

    def pull(self, backend: Any, version: int | None = None) -> int:
        if version is not None and version != self._version:
            raise _missing(version, [self._version])  # one version, no ring (step-synchronous)
        if self._received is not None and self._version > int(backend.policy_version):
            backend.load_weights(self._version, self._received)
        return int(backend.policy_version)
