"""Group rollouts in three timed stages: sampling, environment execution, verification.

``rollout_groups(backend, tasks, params, ...)`` does what ``single_turn.run_groups`` does —
one batched generate call for the first turn of every episode, each sample in its own
fresh env — but keeps the stages apart so the async loop can account for where time goes
and hand verification to a reward service (its own workers, never the trainer):

1. **sample** — ``backend.generate`` (turn 1: all P prompts, ``params.n`` each, one call);
2. **env** — ``env.step`` of every live episode, spread over ``env_pool`` (tool and sandbox
   latency overlaps instead of adding up); multi-turn episodes go back to 1 with ``n=1``
   until ``done`` or ``max_turns``;
3. **verify** — ``reward.batch_evaluate`` over the finished trajectories.

For single-turn tasks the trajectories equal ``run_groups``'s (same prompts, same generate
call, same turn info and stop reasons, same scores), which is what lets the async loop
reproduce the reference loop exactly.

Partial rollouts: ``between_turns()`` is called before every turn after the first; the
async loop uses it to install newer weights, so a long episode continues across a weight
update and each turn records the policy version that produced it.

Guarantees: a group of exactly ``params.n`` trajectories per task whatever fails (an
inference failure is recorded on every trajectory of the call, an env crash on its
trajectory); returned timings are wall seconds per stage. Not done: context management
or tool-call parsing (the agent loop's job); turns after the first are not prompt-shared.
"""

from __future__ import annotations

import time
from concurrent.futures import Executor
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Sequence

from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Completion, Observation, Task, Trajectory, TrajectoryGroup, Turn
from posttrain.envs.base import TaskEnv, call_maybe_async
from posttrain.inference.base import InferenceBackend, SamplingParams

from .reward_service import RewardService, VerifierSource, batch_evaluate
from .single_turn import default_env_factory

EnvFactory = Callable[[Task], TaskEnv]


@dataclass
class _Episode:
    task: Task
    env: TaskEnv
    obs: Observation
    turns: list[Turn] = field(default_factory=list)
    stop: str = "done"
    error: ErrorInfo | None = None
    done: bool = False


@dataclass
class StageTimes:
    sample_s: float = 0.0
    env_s: float = 0.0
    verify_s: float = 0.0

    def as_dict(self) -> dict[str, float]:
        return {"sample_s": self.sample_s, "env_s": self.env_s, "verify_s": self.verify_s}


def _step(ep: _Episode, action: Completion, last_turn: bool) -> None:
    """One env step (runs on an env worker); failures are recorded on the episode."""
    try:
        result = call_maybe_async(ep.env.step, action)
    except Exception as exc:  # the env/sandbox boundary: the episode fails, the group survives
        ep.error, ep.stop, ep.done = ErrorInfo.from_exception(exc), "error", True
        return
    format_ok = action.finish_reason == "stop" and bool(action.text.strip())
    info: dict[str, Any] = {"format_ok": format_ok, **dict(result.info)}
    ep.turns.append(Turn(observation=ep.obs, action=action, reward=float(result.reward), info=info))
    ep.stop = "done" if action.finish_reason != "length" else "max_tokens"
    if result.done or result.observation is None:
        ep.done = True
    elif last_turn:
        ep.done, ep.stop = True, "max_turns"
    else:
        ep.obs = result.observation


def _run_env(episodes: list[tuple[_Episode, Completion]], pool: Executor | None, last: bool) -> None:
    if pool is None or len(episodes) < 2:
        for ep, action in episodes:
            _step(ep, action, last)
        return
    for f in [pool.submit(_step, ep, a, last) for ep, a in episodes]:
        f.result()


def _generate(backend: InferenceBackend, prompts: list, params: SamplingParams):
    try:
        out = backend.generate(prompts, params)
        if len(out) != len(prompts):
            raise ValueError(f"backend returned {len(out)} groups for {len(prompts)} prompts")
        return out, None
    except Exception as exc:  # the inference boundary: recorded on every trajectory
        return None, ErrorInfo.from_exception(exc)


def _later_turns(backend, live: list[_Episode], params: SamplingParams, turn: int,
                 env_pool, max_turns: int, times: StageTimes, between_turns) -> None:
    if between_turns is not None:
        between_turns()
    one = replace(params, n=1, seed=None if params.seed is None else params.seed + 7919 * turn)
    t0 = time.perf_counter()
    outs, err = _generate(backend, [list(ep.obs.messages) for ep in live], one)
    times.sample_s += time.perf_counter() - t0
    if err is not None:
        for ep in live:
            ep.error, ep.stop, ep.done = err, "error", True
        return
    t0 = time.perf_counter()
    _run_env([(ep, o[0]) for ep, o in zip(live, outs)], env_pool, turn + 1 >= max_turns)
    times.env_s += time.perf_counter() - t0


def rollout_groups(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams, *,
                   make_env: EnvFactory | None = None, reward: RewardService | None = None,
                   env_pool: Executor | None = None, max_turns: int = 1,
                   between_turns: Callable[[], None] | None = None,
                   ) -> tuple[list[TrajectoryGroup], StageTimes]:
    """``params.n`` scored trajectories per task, and the wall time of each stage."""
    make_env = make_env or default_env_factory
    times = StageTimes()
    version = int(getattr(backend, "policy_version", 0))
    t0 = time.perf_counter()
    episodes = [[_Episode(t, env, call_maybe_async(env.reset))
                 for env in (make_env(t) for _ in range(params.n))] for t in tasks]
    times.env_s += time.perf_counter() - t0
    t0 = time.perf_counter()
    outs, err = _generate(backend, [list(g[0].obs.messages) for g in episodes], params)
    times.sample_s += time.perf_counter() - t0
    if err is not None:
        for ep in (e for g in episodes for e in g):
            ep.error, ep.stop, ep.done = err, "error", True
    else:
        t0 = time.perf_counter()
        _run_env([(ep, c) for g, o in zip(episodes, outs) for ep, c in zip(g, o)], env_pool,
                 max_turns <= 1)
        times.env_s += time.perf_counter() - t0
        for turn in range(1, max_turns):
            live = [ep for g in episodes for ep in g if not ep.done]
            if not live:
                break
            _later_turns(backend, live, params, turn, env_pool, max_turns, times, between_turns)
    trajs = [Trajectory(task=ep.task, turns=tuple(ep.turns), stop_reason=ep.stop, error=ep.error)
             for g in episodes for ep in g]
    t0 = time.perf_counter()
    scores = (reward.batch_evaluate(trajs) if reward is not None
              else batch_evaluate(trajs, [(VerifierSource(make_env), 1.0)]))
    times.verify_s += time.perf_counter() - t0
    scored = iter(t.with_score(s) for t, s in zip(trajs, scores))
    groups = [TrajectoryGroup(task=t, trajectories=tuple(next(scored) for _ in range(params.n)),
                              policy_version=version) for t in tasks]
    return groups, times
