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
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from posttrain.core.config import DomainSpec
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.rollout import EpisodeLimits
from posttrain.scheduler.rollouts import play_scheduled
from posttrain.trainer.tasks import heldout_tasks


def heldout_accuracy(backend: InferenceBackend, specs: Sequence[DomainSpec], n_per_domain: int,
                     seed_offset: int, max_new_tokens: int = 16, batch_size: int = 256,
                     limits: EpisodeLimits | None = None) -> dict[str, Any]:
    """``{"overall": acc, "per_domain": {id: acc}, "stderr": {...}, "n": ..., "errors": ...,
    "policy_version": v}``."""
    params = SamplingParams(n=1, greedy=True, temperature=1.0, max_new_tokens=max_new_tokens)
    version = int(getattr(backend, "policy_version", -1))
    per_domain: dict[str, float] = {}
    stderr: dict[str, float] = {}
    errors = 0
    for spec in specs:
        tasks = heldout_tasks(spec, n_per_domain, seed_offset)
        rewards: list[float] = []
        for i in range(0, len(tasks), batch_size):
            groups, _, _ = play_scheduled(backend, tasks[i:i + batch_size], params, limits=limits)
            for g in groups:
                t = g.trajectories[0]
                errors += int(not t.usable)
                if t.usable:
                    rewards.append(t.reward)
        acc = sum(rewards) / len(rewards) if rewards else 0.0
        per_domain[spec.id] = acc
        var = sum((r - acc) ** 2 for r in rewards) / max(1, len(rewards) - 1)
        stderr[spec.id] = math.sqrt(var / max(1, len(rewards)))
    overall = sum(per_domain.values()) / len(per_domain)
    return {"overall": overall, "per_domain": per_domain, "stderr": stderr,
            "n": n_per_domain, "errors": errors, "policy_version": version}
