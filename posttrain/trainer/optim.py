"""Optimizer and learning-rate schedule from a config.

AdamW with decoupled weight decay applied only to matrices (embeddings and linear weights):
biases and norm gains (tensors of fewer than two dimensions) are never decayed; torch's
fused kernel whenever every parameter is a float tensor on CPU or CUDA. The schedule
is a linear warm-up to the peak rate, then constant or cosine decay to ``min_lr_ratio`` of
it. Both are plain ``torch.optim`` objects whose ``state_dict`` round-trips through
:mod:`posttrain.trainer.checkpoint` exactly (the schedule's multiplier is a picklable
callable object, not a lambda).

Reads ``lr``, and where present ``weight_decay``, ``warmup_steps``, ``steps``, from an
``SFTConfig``/``RLConfig``/``DPOConfig``; anything missing takes the keyword default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable

import torch

from posttrain.core.errors import ConfigError

SCHEDULES = ("constant", "cosine")


def param_groups(model: torch.nn.Module, weight_decay: float) -> list[dict[str, Any]]:
    """Two AdamW groups: decayed matrices and undecayed vectors (biases, norm gains)."""
    decay, no_decay = [], []
    for p in model.parameters():
        if p.requires_grad:
            (decay if p.dim() >= 2 else no_decay).append(p)
    groups = [{"params": decay, "weight_decay": weight_decay}]
    if no_decay:
        groups.append({"params": no_decay, "weight_decay": 0.0})
    return groups


def build_optimizer(model: torch.nn.Module, lr: float, weight_decay: float = 0.0,
                    betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8) -> torch.optim.AdamW:
    if lr <= 0:
        raise ConfigError(f"lr: got {lr}; must be > 0")
    groups = param_groups(model, weight_decay)
    # The fused kernel is one pass over all tensors: ~2.5x faster than torch's per-tensor
    # default on CPU (where foreach is not the default either) for the same update.
    fused = all(p.is_floating_point() and p.device.type in ("cpu", "cuda")
                for g in groups for p in g["params"])
    return torch.optim.AdamW(groups, lr=lr, betas=betas, eps=eps, fused=fused or None)


@dataclass(frozen=True)
class WarmupSchedule:
    """LR multiplier at a step: linear warm-up over ``warmup_steps``, then constant or cosine."""

    warmup_steps: int
    total_steps: int
    kind: str = "constant"
    min_lr_ratio: float = 0.0

    def __call__(self, step: int) -> float:
        if self.warmup_steps > 0 and step < self.warmup_steps:
            return (step + 1) / self.warmup_steps
        if self.kind == "constant":
            return 1.0
        span = max(1, self.total_steps - self.warmup_steps)
        progress = min(1.0, (step - self.warmup_steps) / span)
        cosine = 0.5 * (1.0 + math.cos(math.pi * progress))
        return self.min_lr_ratio + (1.0 - self.min_lr_ratio) * cosine


def build_lr_schedule(optimizer: torch.optim.Optimizer, warmup_steps: int = 0,
                      total_steps: int = 0, kind: str = "constant",
                      min_lr_ratio: float = 0.0) -> torch.optim.lr_scheduler.LambdaLR:
    if kind not in SCHEDULES:
        raise ConfigError(f"lr schedule: got {kind!r}; allowed: {', '.join(SCHEDULES)}")
    if not 0.0 <= min_lr_ratio <= 1.0:
        raise ConfigError(f"min_lr_ratio: got {min_lr_ratio}; must be in [0, 1]")
    fn = WarmupSchedule(int(warmup_steps), int(total_steps), kind, float(min_lr_ratio))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, fn)


def optimizer_from_config(model: torch.nn.Module, config: Any, *, schedule: str = "constant",
                          min_lr_ratio: float = 0.0, betas: Iterable[float] = (0.9, 0.999)):
    """``(optimizer, lr_scheduler)`` from a section of the run config."""
    opt = build_optimizer(model, float(config.lr), float(getattr(config, "weight_decay", 0.0)),
                          betas=tuple(betas))
    sched = build_lr_schedule(opt, int(getattr(config, "warmup_steps", 0)),
                              int(getattr(config, "steps", 0)), schedule, min_lr_ratio)
    return opt, sched
