"""posttrain.rollout: turning tasks into scored trajectory groups (DESIGN.md §2, layer 4).

One episode engine plays every episode in posttrain (:mod:`posttrain.rollout.engine`):

- :func:`play_groups` — ``params.n`` episodes per task, single-turn and multi-turn alike,
  generation batched across every episode waiting for the policy; returns the groups and
  the wall time per stage;
- :func:`run_groups` — the same, groups only (what evaluation and DPO call);
- :func:`play_episode` — one episode of an env the caller built;
- :class:`EpisodeLimits` — the episode budgets (turns, tokens, wall time, context), built
  from the run config's ``episode`` section;
- :class:`ScriptedPolicy` / :func:`replay` — a policy that replays action texts through the
  same engine (references, probes, conformance).
"""

from __future__ import annotations

from .context import ContextConfig, EpisodeContext
from .engine import EngineTimes, env_factory, play_episode, play_groups, run_groups
from .episode import EpisodeLimits
from .scripted import ScriptedPolicy, replay, replay_groups, replay_score

__all__ = [
    "ContextConfig", "EngineTimes", "EpisodeContext", "EpisodeLimits", "ScriptedPolicy",
    "env_factory", "play_episode", "play_groups", "replay", "replay_groups", "replay_score",
    "run_groups",
]
