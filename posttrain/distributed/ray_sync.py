"""Weight sync through Ray's object store (the cross-process, cross-node transport).

``publish`` puts the state dict into the object store once (``ray.put``: one copy in shared
memory per node, zero-copy reads for numpy-backed tensors on the same node) and hands the
reference to a small :class:`WeightStore` actor under its version; a rollout worker asks the
store for the ``(version, ref)`` it needs — the newest (free-running) or exactly the version
the async loop's schedule gives the job — and fetches the tensors only when its own version
differs. It satisfies :class:`posttrain.trainer.weight_sync.WeightSync` and pickles to
actors (it holds only the store's actor handle).

Guarantees: the newest version never goes backwards; a worker sees a whole version (one
object); the store keeps the references of the ``keep`` newest versions (the ring the
deterministic schedule needs, ``max_policy_lag + 1``), so older weights are freed once no
worker holds them; asking for a version outside the ring raises
:class:`~posttrain.trainer.weight_sync.WeightVersionError`.
Not covered: GPU-direct transfer (the NCCL path is ``TorchDistributedWeightSync``).
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import ray
import torch

from posttrain.trainer.weight_sync import WeightVersionError, install


@ray.remote(num_cpus=0)
class WeightStore:
    def __init__(self, keep: int = 1) -> None:
        self.version, self.keep = -1, max(1, int(keep))
        self.refs: dict[int, list[Any]] = {}  # version -> [ref]: the list keeps Ray from dereferencing it

    def set(self, version: int, ref_box: list[Any]) -> None:
        if version in self.refs or (version < self.version and len(self.refs) >= self.keep
                                    and version < min(self.refs)):
            return  # already held, or older than the whole ring (nothing will ask for it)
        self.refs[version] = ref_box
        self.version = max(self.version, version)
        for old in sorted(self.refs)[:-self.keep]:
            del self.refs[old]

    def get_version(self) -> int:
        return self.version

    def held(self) -> list[int]:
        return sorted(self.refs)

    def fetch(self, version: int | None, have: int) -> tuple[int, list[Any]]:
        """``(version, [ref])`` of ``version`` (None: the newest); ``[]`` when ``have`` is it
        already, ``(-2, [])`` when the version is not held."""
        v = self.version if version is None else version
        if v not in self.refs:
            return -2, []
        return (v, []) if v == have else (v, self.refs[v])


class RayWeightSync:
    def __init__(self, store: Any = None, *, keep: int = 1):
        self.store = store or WeightStore.remote(keep)

    def publish(self, version: int, state_dict: Mapping[str, torch.Tensor]) -> None:
        cpu = {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}
        ray.get(self.store.set.remote(int(version), [ray.put(cpu)]))

    def preload(self, versions: Mapping[int, Mapping[str, torch.Tensor]]) -> None:
        """Hold older versions again (a resume), before any job."""
        for v in sorted(versions):
            self.publish(v, versions[v])

    def held(self) -> list[int]:
        return list(ray.get(self.store.held.remote()))

    def weights(self, version: int) -> dict[str, torch.Tensor]:
        v, box = ray.get(self.store.fetch.remote(int(version), -1))
        if v == -2:
            raise WeightVersionError(f"weights version {version} is not held (held: {self.held()})")
        return ray.get(box[0])

    def latest_version(self) -> int:
        return int(ray.get(self.store.get_version.remote()))

    def wait_for(self, version: int, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        while self.latest_version() < version:
            if end is not None and time.monotonic() >= end:
                return False
            time.sleep(0.005)
        return True

    def pull(self, backend: Any, version: int | None = None) -> int:
        have = int(backend.policy_version)
        v, box = ray.get(self.store.fetch.remote(version, have))
        if v == -2:
            raise WeightVersionError(f"weights version {version} is not held (held: {self.held()})")
        if version is None and v <= have:
            return have  # free-running never goes back
        return install(backend, v, v, lambda _: ray.get(box[0])) if box else have
