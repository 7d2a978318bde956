"""Sharded training with PyTorch FSDP2: several trainer processes, one policy update.

- :mod:`.dist` — process groups (gloo on CPU, NCCL on GPUs, chosen by device), ``fully_shard``
  per decoder layer and root, :func:`~.dist.spawn` for ``torch.multiprocessing`` children;
- :mod:`.update` — the update step on each rank's slice of a PolicyBatch, micro-batched by a
  token budget, normalised so that N ranks give the one-process gradient;
- :mod:`.state` — full state dicts gathered for weight sync, and checkpoints through
  ``torch.distributed.checkpoint`` (DCP) that resume exactly and reshard between rank counts;
- :mod:`.run` — the entry ``torchrun --nproc-per-node N -m posttrain.trainer.fsdp.run CONFIG``.

docs/scale.md describes what is exact, what is within tolerance, and what has run on GPUs
(nothing yet).
"""
