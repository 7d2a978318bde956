"""Full state dicts for weight sync, and DCP checkpoints that reshard between rank counts.

What it is: :func:`full_model_state` gathers the sharded policy into ordinary CPU tensors on
rank 0 (the rollout side loads them: ``backend.load_weights``); :func:`save_sharded` /
:func:`load_sharded` write and read model + optimizer through ``torch.distributed.checkpoint``
(each rank writes its own shards; the metadata records the global shapes), plus a small
``trainer.pt`` from rank 0 with what is not a tensor shard: step, policy version, LR schedule,
task-stream state, samples seen.

Guarantees: a checkpoint saved by ``N`` ranks loads on ``M`` ranks (1 and 2 tested both
ways; a plain unsharded process counts as 1): DCP reshards by parameter name, so the model
*and* AdamW moments come back bit-identical to the saved global tensors; a resume on the
same rank count continues bit-identically to the uninterrupted run. The folder appears
whole or not at all (written under ``.tmp``, renamed by rank 0 after every rank finished).

Not covered: async (background) saves, pruning of old checkpoints, RNG state (the sharded
update draws no random numbers; rollout sampling is seeded per step by the loop).
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path
from typing import Any

import torch

from .dist import current

TRAINER_FILE = "trainer.pt"


def _barrier() -> None:
    import torch.distributed as dist

    if current().backend is not None:
        dist.barrier()


def full_model_state(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The whole policy as CPU tensors on rank 0 (an empty dict on the other ranks).

    A collective under FSDP: every rank must call it.
    """
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

    if current().backend is None:
        return {k: v.detach().to("cpu", copy=True) for k, v in model.state_dict().items()}
    opts = StateDictOptions(full_state_dict=True, cpu_offload=True)
    return get_model_state_dict(model, options=opts)


def full_optimizer_state(model: torch.nn.Module, optimizer: torch.optim.Optimizer) -> dict:
    """The optimizer's state keyed by parameter name, gathered whole on rank 0 (tests, audits)."""
    from torch.distributed.checkpoint.state_dict import StateDictOptions, get_optimizer_state_dict

    full = current().backend is not None
    opts = StateDictOptions(full_state_dict=full, cpu_offload=full)
    # Copied: a plain process gets the live tensors, and so does a gathered one for the
    # scalar ``step`` tensors that are not sharded (already on the CPU: nothing to offload).
    return copy.deepcopy(get_optimizer_state_dict(model, optimizer, options=opts))


def save_sharded(path: str | Path, model: torch.nn.Module, optimizer: torch.optim.Optimizer,
                 trainer: dict[str, Any] | None = None) -> Path:
    """Write ``path`` (a folder) through DCP; every rank calls it."""
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict

    final = Path(path)
    tmp = final.with_name(final.name + ".tmp")
    info = current()
    if info.is_main and tmp.exists():
        shutil.rmtree(tmp)  # a save killed earlier left it half written
    _barrier()
    model_sd, optim_sd = get_state_dict(model, optimizer)
    dcp.save({"model": model_sd, "optim": optim_sd}, checkpoint_id=str(tmp),
             no_dist=info.backend is None)
    if info.is_main:
        torch.save(dict(trainer or {}), tmp / TRAINER_FILE)
    _barrier()
    if info.is_main:
        if final.exists():
            shutil.rmtree(final)
        tmp.rename(final)
    _barrier()
    return final


def load_sharded(path: str | Path, model: torch.nn.Module,
                 optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """Load a :func:`save_sharded` folder into this (possibly differently sharded) model.

    Returns the ``trainer`` dict it was saved with. Every rank calls it.
    """
    import torch.distributed.checkpoint as dcp
    from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict

    path = Path(path)
    if not (path / TRAINER_FILE).exists():
        raise FileNotFoundError(f"{path} is not a sharded checkpoint (no {TRAINER_FILE})")
    model_sd, optim_sd = get_state_dict(model, optimizer)
    state = {"model": model_sd, "optim": optim_sd}
    dcp.load(state, checkpoint_id=str(path), no_dist=current().backend is None)
    set_state_dict(model, optimizer, model_state_dict=state["model"],
                   optim_state_dict=state["optim"])
    return torch.load(path / TRAINER_FILE, weights_only=False)


def _complete_sharded(run_dir: str | Path) -> list[tuple[int, Path]]:
    """``(step, folder)`` of a run's complete ``dcp/step-N`` folders, oldest first."""
    root = Path(run_dir) / "dcp"
    return sorted((int(p.name.split("-")[1]), p) for p in root.glob("step-*")
                  if p.is_dir() and not p.name.endswith(".tmp") and (p / TRAINER_FILE).exists())


def latest_sharded(run_dir: str | Path) -> Path | None:
    """The newest ``dcp/step-N`` folder of a run (half-written ``.tmp`` ones are ignored)."""
    steps = _complete_sharded(run_dir)
    return steps[-1][1] if steps else None


def prune_sharded(run_dir: str | Path, keep_last: int) -> list[Path]:
    """Delete all but the ``keep_last`` newest complete ``dcp/step-N`` folders (each holds the
    whole model and AdamW state: a long run would otherwise fill the disk); returns them.
    Only complete ones count, so a save killed mid-way never costs the last good one."""
    steps = _complete_sharded(run_dir)
    doomed = [p for _, p in steps[:max(0, len(steps) - keep_last)]]
    for p in doomed:
        shutil.rmtree(p, ignore_errors=True)
    return doomed
