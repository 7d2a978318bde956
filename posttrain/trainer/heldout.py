"""Held-out greedy accuracy per domain: the before/after numbers of a training run.

Uses the same episode engine and verifiers as training (:func:`posttrain.rollout.run_groups`
with one greedy sample per task) on tasks whose seeds never occur in training (see :mod:`posttrain.trainer.tasks`).
Accuracy is the mean verifier reward over the tasks whose verification succeeded; a task
whose verification (or generation) failed is left out of the mean and counted in ``errors``
(DESIGN.md §3: a failed verifier is never silently a 0). The standard error is reported so a gain can be told from noise.
Any backend evaluates (HF, vLLM, ...); ``policy_version`` in the result is the backend's at
the start, so a report says which weights were scored (generations are keyed by version,
DESIGN.md §7). The caller keeps the weights still: nothing here stops another thread from
loading new ones mid-evaluation (the pipeline holds a shared engine's ``exclusive()``).

The same ``(specs, n_per_domain, seed_offset)`` always gives the same tasks in the same
order, and ``rewards`` keeps every task's reward in that order (``None`` where it failed), so
two evaluations of different weights compare task by task: :func:`paired_gain`'s standard
error is that of the per-task differences, far smaller than two independent errors when
most tasks get the same answer before and after.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from posttrain.core.config import DomainSpec
from posttrain.eval.paired import paired_z
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.rollout import EpisodeLimits
from posttrain.scheduler.rollouts import play_scheduled
from posttrain.trainer.tasks import heldout_tasks


def heldout_accuracy(backend: InferenceBackend, specs: Sequence[DomainSpec], n_per_domain: int,
                     seed_offset: int, max_new_tokens: int = 16, batch_size: int = 256,
                     limits: EpisodeLimits | None = None) -> dict[str, Any]:
    """``{"overall": acc, "per_domain": {id: acc}, "stderr": {...}, "rewards": {id: [r | None,
    ...]}, "n": ..., "errors": ..., "policy_version": v}``; ``rewards`` in task order."""
    params = SamplingParams(n=1, greedy=True, temperature=1.0, max_new_tokens=max_new_tokens)
    version = int(getattr(backend, "policy_version", -1))
    per_domain: dict[str, float] = {}
    stderr: dict[str, float] = {}
    per_task: dict[str, list[float | None]] = {}
    errors = 0
    for spec in specs:
        tasks = heldout_tasks(spec, n_per_domain, seed_offset)
        got: list[float | None] = []
        for i in range(0, len(tasks), batch_size):
            groups, _, _ = play_scheduled(backend, tasks[i:i + batch_size], params, limits=limits)
            # play_scheduled keeps the tasks' order: group j is task i + j
            got += [g.trajectories[0].reward if g.trajectories[0].usable else None for g in groups]
        rewards = [r for r in got if r is not None]
        errors += len(got) - len(rewards)
        acc = sum(rewards) / len(rewards) if rewards else 0.0
        per_domain[spec.id] = acc
        var = sum((r - acc) ** 2 for r in rewards) / max(1, len(rewards) - 1)
        stderr[spec.id] = math.sqrt(var / max(1, len(rewards)))
        per_task[spec.id] = got
    overall = sum(per_domain.values()) / len(per_domain)
    return {"overall": overall, "per_domain": per_domain, "stderr": stderr, "rewards": per_task,
            "n": n_per_domain, "errors": errors, "policy_version": version}


def paired_gain(before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """Per-domain and pooled :func:`~posttrain.eval.paired.paired_z` gains between two :func:`heldout_accuracy` results
    of the same tasks: ``{"per_domain": {id: {...}}, "overall": {...}}`` (overall pools every
    task of every domain)."""
    b, a = before.get("rewards", {}), after.get("rewards", {})  # absent: a summary from before per-task rewards were kept
    ids = [d for d in b if d in a]
    per = {d: paired_z(b[d], a[d]) for d in ids}
    pooled = paired_z([r for d in ids for r in b[d]], [r for d in ids for r in a[d]])
    return {"per_domain": per, "overall": pooled}
