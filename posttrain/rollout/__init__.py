"""posttrain.rollout: turning tasks into scored trajectory groups (DESIGN.md §2, layer 4).

- :func:`run_groups` — single-turn domains: one batched generate, then verification;
- :func:`run_groups_multi` — multi-turn domains (tools, sandboxes): the agent loop of
  :mod:`posttrain.rollout.agent_loop`, every live episode's turn batched into one generate;
- :func:`run_any_groups` — what the trainer calls: dispatches each task by its domain's
  ``env_kind`` (``single_turn`` → :func:`run_groups`, else the agent loop) and returns the
  groups in the order of ``tasks``.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from posttrain.core.types import Task, TrajectoryGroup
from posttrain.inference.base import InferenceBackend, SamplingParams

from .agent_loop import EpisodeLimits, run_episode, run_groups_multi
from .context import ContextConfig, EpisodeContext
from .single_turn import run_groups


def _env_kind(task: Task) -> str:
    from posttrain.domains.base import get_domain

    return str(getattr(get_domain(task.domain), "env_kind", "single_turn"))


def run_any_groups(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams,
                   make_env: Callable[[Task], Any] | None = None,
                   limits: EpisodeLimits | None = None,
                   env_kind: Callable[[Task], str] | None = None) -> list[TrajectoryGroup]:
    """One group of ``params.n`` per task, single-turn and multi-turn tasks alike, in order."""
    kind = env_kind or _env_kind
    single = [i for i, t in enumerate(tasks) if kind(t) == "single_turn"]
    multi = [i for i in range(len(tasks)) if i not in set(single)]
    out: list[TrajectoryGroup | None] = [None] * len(tasks)
    if single:
        for i, g in zip(single, run_groups(backend, [tasks[i] for i in single], params, make_env)):
            out[i] = g
    if multi:
        got = run_groups_multi(backend, [tasks[i] for i in multi], params, make_env, limits)
        for i, g in zip(multi, got):
            out[i] = g
    return [g for g in out if g is not None]


__all__ = [
    "ContextConfig", "EpisodeContext", "EpisodeLimits", "run_any_groups", "run_episode",
    "run_groups", "run_groups_multi",
]
