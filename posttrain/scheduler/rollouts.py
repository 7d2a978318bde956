"""Rollouts on the training path: the episode engine plus infrastructure retries with backoff.

What it is: :func:`play_scheduled` plays a batch of tasks with the one episode engine
(:func:`posttrain.rollout.play_groups`) and then plays again, after an exponential backoff
with jitter (:func:`~posttrain.scheduler.retry.backoff_s`), every group in which an episode
failed at an *infrastructure* boundary — a sandbox that broke, an inference call that failed,
a lost worker (:data:`~posttrain.scheduler.retry.INFRA_KINDS`) — up to
``limits.infra_retries`` more times. Both training loops (the reference loop and the async
producers) and held-out evaluation call it.

Guarantees:
- task failures are never retried: a wrong answer, a run out of turns or tokens, a timeout
  inside the episode, a verifier that scored 0 are data; a verifier crash is recorded, not
  retried (re-running a buggy verifier only burns compute);
- a retried group replaces the whole failed group (all ``n`` episodes, the same sampling
  params), so a group is never a mix of attempts; groups come back in task order;
- the backoff is drawn from an RNG seeded by the params' seed, so a run's waits and results
  do not depend on anything but its failures; ``stats`` counts ``rollout/retried_groups``
  and ``rollout/infra_failed_groups`` (still failing after the last attempt — recorded on
  their trajectories and excluded from the loss, as any failure).

Not covered: retrying single episodes inside a group, and resuming an episode from a
checkpoint mid-way (a retried group starts from its first turn).
"""

from __future__ import annotations

import random
import time
from typing import Any, Sequence

from posttrain.core.types import Task, TrajectoryGroup
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.rollout import EngineTimes, EpisodeLimits, play_groups

from .retry import INFRA_KINDS, backoff_s

BACKOFF_MAX_S = 30.0


def infra_failed(group: TrajectoryGroup) -> bool:
    """Whether an episode of the group failed at an infrastructure boundary."""
    return any(t.error is not None and t.error.kind in INFRA_KINDS for t in group.trajectories)


def play_scheduled(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams, *,
                   limits: EpisodeLimits | None = None, **engine_kw: Any,
                   ) -> tuple[list[TrajectoryGroup], EngineTimes, dict[str, float]]:
    """Groups (in task order), the summed stage times, and the retry counters."""
    limits = limits or EpisodeLimits()
    groups, times = play_groups(backend, tasks, params, limits=limits, **engine_kw)
    rng = random.Random(f"retry|{params.seed}")
    retried = 0
    for attempt in range(1, limits.infra_retries + 1):
        bad = [i for i, g in enumerate(groups) if infra_failed(g)]
        if not bad:
            break
        time.sleep(backoff_s(attempt, limits.retry_backoff_s, BACKOFF_MAX_S, rng))
        again, more = play_groups(backend, [tasks[i] for i in bad], params, limits=limits,
                                  **engine_kw)
        for i, g in zip(bad, again):
            groups[i] = g
        retried += len(bad)
        for k, v in more.as_dict().items():
            setattr(times, k, getattr(times, k) + v)
    stats = {"rollout/retried_groups": float(retried),
             "rollout/infra_failed_groups": float(sum(infra_failed(g) for g in groups))}
    return groups, times, stats
