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
- an engine call that was cancelled (``cancelled``) is not retried;
- a retried group replaces the whole failed group (all ``n`` episodes, the same sampling
  params), so a group is never a mix of attempts; groups come back in task order;
- the backoff is drawn from an RNG seeded by the params' seed, so a run's waits and results
  do not depend on anything but its failures; ``stats`` counts ``rollout/retried_groups``
  and ``rollout/infra_failed_groups`` (still failing after the last attempt — recorded on
  their trajectories and excluded from the loss, as any failure).

- a replayed group resumes from the call's last episode checkpoint (``limits.checkpoint_every``
  rounds; :mod:`posttrain.rollout.checkpoints`) when there is one: its episodes go on from the
  saved round, in a new sandbox holding the saved files, instead of from the first turn
  (``rollout/resumed_episodes`` counts them); checkpoints go to ``checkpoints`` (the run's
  work store, so a killed run's job resumes too) or, by default, stay in memory for this call;
  every key is dropped when the call returns.

Not covered: retrying single episodes inside a group.
"""

from __future__ import annotations

import random
import time
from typing import Any, Sequence

from posttrain.core.types import Task, TrajectoryGroup
from posttrain.inference.base import InferenceBackend, SamplingParams
from posttrain.rollout import EngineTimes, EpisodeLimits, play_groups
from posttrain.rollout.checkpoints import CheckpointStore, MemoryCheckpoints, call_key, subset

from .retry import INFRA_KINDS, backoff_s

BACKOFF_MAX_S = 30.0


def infra_failed(group: TrajectoryGroup) -> bool:
    """Whether an episode of the group failed at an infrastructure boundary."""
    return any(t.error is not None and t.error.kind in INFRA_KINDS for t in group.trajectories)


def play_scheduled(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams, *,
                   limits: EpisodeLimits | None = None, checkpoints: CheckpointStore | None = None,
                   **engine_kw: Any,
                   ) -> tuple[list[TrajectoryGroup], EngineTimes, dict[str, float]]:
    """Groups (in task order), the summed stage times, and the retry counters."""
    limits = limits or EpisodeLimits()
    store = checkpoints if checkpoints is not None else MemoryCheckpoints()
    keys = [call_key(tasks, params.seed, params.n)]
    groups, times = play_groups(backend, tasks, params, limits=limits, checkpoints=store,
                                keep_checkpoint=True, **engine_kw)
    rng = random.Random(f"retry|{params.seed}")
    retried = 0
    cancelled = engine_kw.get("cancelled")
    last = list(range(len(tasks)))  # the positions the last call played
    for attempt in range(1, limits.infra_retries + 1):
        bad = [i for i, g in enumerate(groups) if infra_failed(g)]  # always among ``last``
        if not bad or (cancelled is not None and cancelled()):
            break
        time.sleep(backoff_s(attempt, limits.retry_backoff_s, BACKOFF_MAX_S, rng))
        sub = [tasks[i] for i in bad]
        keys.append(call_key(sub, params.seed, params.n))
        saved = store.load(keys[-2])
        if saved is not None:  # the failed groups go on from the last call's checkpoint
            store.save(keys[-1], subset(saved, [last.index(i) for i in bad], params.n))
        again, more = play_groups(backend, sub, params, limits=limits, checkpoints=store,
                                  keep_checkpoint=True, **engine_kw)
        for i, g in zip(bad, again):
            groups[i] = g
        retried += len(bad)
        last = bad
        for k, v in more.as_dict().items():
            setattr(times, k, getattr(times, k) + v)
    if cancelled is None or not cancelled():  # a cancelled call keeps them: a resumed run goes on
        for key in keys:
            store.drop(key)
    stats = {"rollout/retried_groups": float(retried),
             "rollout/infra_failed_groups": float(sum(infra_failed(g) for g in groups)),
             "rollout/resumed_episodes": float(sum(
                 t.timings.get("checkpoint_resumed", 0.0) for g in groups for t in g.trajectories))}
    return groups, times, stats
