"""The trainer group: FSDP2 ranks as Ray actors, running the sharded RL entry unchanged.

What it is: :class:`TrainerRank` is one rank of :mod:`posttrain.trainer.fsdp` inside a Ray
actor placed by the placement's ``trainer`` resources. The ranks set up their own
rendezvous: rank 0 reports its node's address and a free port, the driver hands both to every
rank, and each rank sets ``MASTER_ADDR``/``MASTER_PORT``/``RANK``/``WORLD_SIZE`` before
:func:`posttrain.trainer.fsdp.run.train` joins the process group — gloo on CPU, NCCL when the
ranks hold GPUs (``distributed.backend: auto``; Ray gives each GPU actor one visible device, so
``LOCAL_RANK`` is 0 in every actor). The training step, the DCP checkpoints and the resume
are that module's; what the placement changes is where rank 0's rollouts run: rank 0 samples
through an :class:`~posttrain.distributed.engine_group.EngineGroup` of engine actors instead
of an in-process engine, and the episodes' sandboxes (tool calls, sandboxed verification)
are leased from the sandbox actors (:mod:`.sandbox_hosts`) instead of a local pool.

Guarantees: every rank runs the same ``train`` with the same config, so the run is the
sharded entry's run (same steps, checkpoints, resume rules) — only the engine and the
sandboxes are elsewhere; the process group is destroyed when ``run`` returns or raises.
Not covered: restarting a dead rank in place (the run fails; start it again and it resumes
from its newest ``dcp/step-N``).
"""

from __future__ import annotations

import os
import socket
from typing import Any

import ray


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("", 0))  # every interface: ranks on other nodes connect to it
        return int(s.getsockname()[1])


@ray.remote
class TrainerRank:
    def __init__(self, rank: int, world: int):
        self.rank, self.world = rank, world

    def address(self) -> tuple[str, int]:
        """Rank 0: where the others meet it (this node's address, a free port)."""
        return ray.util.get_node_ip_address(), _free_port()

    def node(self) -> str:
        return ray.get_runtime_context().get_node_id()

    def run(self, cfg: Any, out: str, master: tuple[str, int], engines: list[Any] | None = None,
            hosts: list[Any] | None = None, store: Any = None) -> dict[str, Any]:
        """This rank's share of the run; rank 0 also gets the engines, the sandbox hosts and
        the object store transport's WeightStore actor (the driver owns and kills it)."""
        from posttrain.trainer.fsdp.dist import close_distributed

        os.environ.update(MASTER_ADDR=master[0], MASTER_PORT=str(master[1]), RANK=str(self.rank),
                          WORLD_SIZE=str(self.world), LOCAL_RANK="0")
        try:
            summary = self._train(cfg, out, engines, hosts, store)
        except BaseException:
            _abandon_group()  # no barrier: the other ranks may sit in a collective forever
            raise
        close_distributed()
        return summary

    def _train(self, cfg: Any, out: str, engines: list[Any] | None, hosts: list[Any] | None,
               store: Any) -> dict[str, Any]:
        from contextlib import nullcontext

        from posttrain.envs.tool_env import use_pool
        from posttrain.trainer.fsdp.run import train

        from .sandbox_hosts import RemoteSandboxPool

        make = None
        if self.rank == 0:
            make = _engine_factory(engines or [], cfg, store)
        pool = use_pool(RemoteSandboxPool(hosts)) if hosts else nullcontext()
        with pool:
            return train(cfg, out, make_backend=make)


def _abandon_group() -> None:
    """Leave the process group without the closing barrier (the peers' collectives fail)."""
    import torch.distributed as dist

    if dist.is_initialized():
        dist.destroy_process_group()


def _engine_factory(engines: list[Any], cfg: Any, store: Any):
    """Rank 0's ``make_backend``: the engine actors as one backend, over the chosen transport."""
    def make(cfg_: Any, model: Any, tokenizer: Any, out: Any) -> Any:
        from posttrain.trainer.fsdp.dist import current

        from .engine_group import EngineGroup

        nccl = current().backend == "nccl" and cfg.placement.engines.num_gpus >= 1
        return EngineGroup(engines, model, tokenizer, transport=cfg.placement.weight_transport,
                           broadcast_backend="nccl" if nccl else "gloo", store=store)

    return make


def start_trainer_group(spec: Any) -> list[Any]:
    """``spec.count`` ranks with ``spec``'s resources (a placement's ``trainer``)."""
    return [TrainerRank.options(num_cpus=spec.num_cpus, num_gpus=spec.num_gpus,
                                resources=dict(spec.resources), max_restarts=0).remote(r, spec.count)
            for r in range(spec.count)]
