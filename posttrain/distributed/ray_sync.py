"""Weight sync through Ray's object store (the cross-process, cross-node transport).

``publish`` puts the state dict into the object store once (``ray.put``: one copy in shared
memory per node, zero-copy reads for numpy-backed tensors on the same node) and hands the
reference to a small :class:`WeightStore` actor under its version; a rollout worker asks the
store for the newest ``(version, ref)`` and fetches the tensors only when its own version is
behind. It satisfies :class:`posttrain.trainer.weight_sync.WeightSync` and pickles to actors
(it holds only the store's actor handle).

Guarantees: versions never go backwards; a worker sees a whole version (one object); the
store keeps only the newest reference, so old weights are freed once no worker holds them.
Not covered: GPU-direct transfer (the NCCL path is ``TorchDistributedWeightSync``).
"""

from __future__ import annotations

import time
from typing import Any, Mapping

import ray
import torch


@ray.remote(num_cpus=0)
class WeightStore:
    def __init__(self) -> None:
        self.version = -1
        self.ref: list[Any] = []

    def set(self, version: int, ref_box: list[Any]) -> None:
        if version >= self.version:
            self.version, self.ref = version, ref_box  # the list keeps Ray from dereferencing it

    def get_version(self) -> int:
        return self.version

    def latest(self, have: int) -> tuple[int, list[Any]]:
        return (self.version, self.ref) if self.version > have else (self.version, [])


class RayWeightSync:
    def __init__(self, store: Any = None):
        self.store = store or WeightStore.remote()

    def publish(self, version: int, state_dict: Mapping[str, torch.Tensor]) -> None:
        cpu = {k: v.detach().to("cpu", copy=True) for k, v in state_dict.items()}
        ray.get(self.store.set.remote(int(version), [ray.put(cpu)]))

    def latest_version(self) -> int:
        return int(ray.get(self.store.get_version.remote()))

    def wait_for(self, version: int, timeout: float | None = None) -> bool:
        end = None if timeout is None else time.monotonic() + timeout
        while self.latest_version() < version:
            if end is not None and time.monotonic() >= end:
                return False
            time.sleep(0.005)
        return True

    def pull(self, backend: Any) -> int:
        have = int(backend.policy_version)
        version, box = ray.get(self.store.latest.remote(have))
        if box and version > have:
            backend.load_weights(version, ray.get(box[0]))
        return int(backend.policy_version)
