"""Rollout engines as Ray actors, seen by the trainer as one inference backend.

What it is: :class:`EngineActor` builds the policy from the run config and holds one inference
backend over it (``inference.backend``: an HF backend, or a vLLM engine started from a model
folder of its own) on the resources the placement gave it; :class:`EngineGroup` satisfies the
:class:`~posttrain.inference.base.InferenceBackend` protocol for the trainer's rank 0: its
``generate`` deals the prompts of a call to the engines in contiguous chunks (by position,
never by timing) and joins the answers in order; its ``load_weights`` carries a new version to
every engine over the placement's transport:

- ``object_store``: the state dict is put once into Ray's object store
  (:class:`~posttrain.distributed.ray_sync.RayWeightSync`) and every engine pulls that version;
- ``broadcast``: :mod:`.broadcast` — one ``torch.distributed`` broadcast per dtype from the
  trainer's rank 0 to every engine (gloo on CPU, NCCL when trainer and engines hold GPUs).

Guarantees: ``load_weights`` returns only when every engine holds the version whole;
``generate`` returns completions in prompt order, and every completion carries the policy
version it was sampled with, which must be the group's current version — an engine that
answered with another raises :class:`InferenceError` (a stale engine never trains silently).
With an engine that seeds each prompt on its own (``per_prompt_seeds``, the HF engine), the
samples do not depend on how many engines share the call. ``model`` is an unsharded copy of
the policy kept current on rank 0 (the run saves it as ``model/`` at the end).

Not covered: load balancing by engine speed (chunks are equal by count), an engine that dies
mid-run (its call raises; the run stops and resumes from its last checkpoint).
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import ray

from posttrain.core.errors import InferenceError
from posttrain.inference.base import SamplingParams

PER_PROMPT = ("prompt_tools", "prompt_seeds", "prompt_max_new_tokens")
FLAGS = ("per_prompt_tools", "per_prompt_seeds", "per_prompt_budgets")


@ray.remote
class EngineActor:
    def __init__(self, name: str, cfg: Any, out: str, threads: int = 1):
        """Build the policy from ``cfg`` here (its weights arrive with the first sync) and
        the engine ``cfg.inference.backend`` names over it."""
        import torch

        from posttrain.trainer.phases import load_policy

        torch.set_num_threads(threads)
        self.name = name
        model, tokenizer = load_policy(cfg)
        if cfg.inference.backend == "vllm":  # an engine of its own, from a folder of its own
            from pathlib import Path

            from posttrain.trainer.engines import ENGINE_FOLDER, start_vllm

            self.backend = start_vllm(cfg, model, tokenizer, Path(out) / ENGINE_FOLDER / name)
        else:
            from posttrain.inference.hf import HFBackend

            # the GPU Ray gave this actor (it sees that one only), else the CPU
            device = "cuda" if ray.get_gpu_ids() and torch.cuda.is_available() else "cpu"
            self.backend = HFBackend(model.eval(), tokenizer, device=device, policy_version=-1)
        self.receiver = None

    def flags(self) -> dict[str, bool]:
        return {f: bool(getattr(self.backend, f, False)) for f in FLAGS}

    def version(self) -> int:
        return int(self.backend.policy_version)

    def generate(self, prompts: list, params: SamplingParams) -> list:
        return self.backend.generate(prompts, params)

    def pull(self, sync: Any, version: int) -> int:
        """Object store: install ``version`` from the weight store."""
        return sync.pull(self.backend, version)

    def join_broadcast(self, address: str, port: int, rank: int, world: int, layout: list,
                       backend: str) -> None:
        from .broadcast import BroadcastReceiver

        self.receiver = BroadcastReceiver(address, port, rank, world, layout, backend)

    def receive(self, version: int) -> int:
        """Broadcast: take part in the collective rank 0 starts for ``version``."""
        self.backend.load_weights(version, self.receiver.receive())
        return int(self.backend.policy_version)

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()


def _chunks(n: int, parts: int) -> list[range]:
    """``n`` positions in ``parts`` contiguous ranges, sizes differing by at most one."""
    size, extra = divmod(n, parts)
    out, start = [], 0
    for i in range(parts):
        stop = start + size + (1 if i < extra else 0)
        out.append(range(start, stop))
        start = stop
    return [r for r in out if len(r)]


def _slice(params: SamplingParams, part: range) -> SamplingParams:
    """``params`` for the prompts at ``part``: the per-prompt lists cut to match."""
    import dataclasses

    cut = {k: tuple(getattr(params, k)[part.start:part.stop]) for k in PER_PROMPT
           if getattr(params, k) is not None}
    return dataclasses.replace(params, **cut)


class EngineGroup:
    """The engine actors as one InferenceBackend on the trainer's rank 0 (module docstring)."""

    def __init__(self, engines: list[Any], model: Any, tokenizer: Any, *, transport: str = "object_store",
                 version: int = 0, broadcast_backend: str = "gloo", store: Any = None):
        from .ray_sync import RayWeightSync

        self.engines, self.tokenizer, self.transport = list(engines), tokenizer, transport
        self.model = copy.deepcopy(model).eval()  # the run's unsharded policy (saved at the end)
        flags = ray.get(self.engines[0].flags.remote())
        for f in FLAGS:  # the episode engine batches by what every engine honours
            setattr(self, f, flags[f])
        # ``store``: a WeightStore actor its creator kills (else one of this group's: close())
        self.sync = RayWeightSync(store, keep=1) if transport == "object_store" else None
        self.sender = (connect_broadcast(self.engines, self.model.state_dict(), broadcast_backend)
                       if transport == "broadcast" else None)
        self.policy_version = -1
        self.calls = 0
        self.load_weights(version, self.model.state_dict())

    def generate(self, prompts: Sequence[Any], params: SamplingParams) -> list[list[Any]]:
        parts = _chunks(len(prompts), len(self.engines))
        refs = [e.generate.remote(list(prompts[p.start:p.stop]), _slice(params, p))
                for e, p in zip(self.engines, parts)]
        out = [row for rows in ray.get(refs) for row in rows]
        self.calls += 1
        stale = {c.policy_version for row in out for c in row} - {self.policy_version}
        if stale:
            raise InferenceError(f"engine completions carry policy versions {sorted(stale)}, not "
                                 f"the current {self.policy_version}; an engine missed a weight sync")
        return out

    def load_weights(self, version: int, weights: Any) -> None:
        state = weights.state_dict() if hasattr(weights, "state_dict") else weights
        self.model.load_state_dict(state)
        if self.transport == "object_store":
            self.sync.publish(version, state)
            got = ray.get([e.pull.remote(self.sync, version) for e in self.engines])
        else:
            refs = [e.receive.remote(version) for e in self.engines]  # they wait in the collective
            self.sender.send(state)
            got = ray.get(refs)
        if set(got) != {int(version)}:
            raise InferenceError(f"engines hold versions {got} after syncing version {version}")
        self.policy_version = int(version)

    def versions(self) -> list[int]:
        return list(ray.get([e.version.remote() for e in self.engines]))

    def close(self) -> None:
        if self.sync is not None:
            ray.kill(self.sync.store)
        if self.sender is not None:
            self.sender.close()


def start_engines(spec: Any, cfg: Any, out: str, *, threads: int = 1) -> list[Any]:
    """``spec.count`` engine actors with ``spec``'s resources (a placement's ``engines``)."""
    return [EngineActor.options(num_cpus=spec.num_cpus, num_gpus=spec.num_gpus,
                                resources=dict(spec.resources), max_restarts=0).remote(
        f"engine-{i}", cfg, str(out), threads) for i in range(spec.count)]


def connect_broadcast(engines: list[Any], state: Any, backend: str) -> Any:
    """Form the broadcast group (this process rank 0, the engines 1..N): the sender."""
    from .broadcast import BroadcastSender, layout_of

    layout = layout_of(state)
    sender = BroadcastSender(len(engines) + 1, layout, backend)
    address = ray.util.get_node_ip_address()
    joins = [e.join_broadcast.remote(address, sender.port, i + 1, len(engines) + 1, layout, backend)
             for i, e in enumerate(engines)]
    sender.connect()  # blocks until every engine joined
    ray.get(joins)
    return sender
