"""Group rollouts of single-turn tasks: one batched generate call, then per-sample verification.

``run_groups(backend, tasks, params)`` returns one TrajectoryGroup of ``params.n`` samples per
task. All prompts of the call go to the backend in one batch, so the backend can share each
prompt's prefill across its group and a common prefix across prompts.

Guarantees:
- every task gets a group of exactly ``params.n`` trajectories, whatever fails: an inference
  failure is recorded on each trajectory (``error``, stop reason ``error``), a verifier crash
  is a Score with ``error`` set (the env's ``verify`` never raises) — a bad rollout is data;
- each sample is verified in a fresh env, so no state leaks between samples of a group;
- ``turn.info`` carries ``format_ok`` (the completion ended on its own, not by the token cap,
  and is non-empty) for the evaluation layer matrix.

Multi-turn episodes (tools, sandboxes) go through the agent loop in
:mod:`posttrain.rollout.agent_loop` instead.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

from posttrain.core.errors import ErrorInfo
from posttrain.core.types import Completion, Observation, Task, Trajectory, TrajectoryGroup, Turn
from posttrain.domains.base import get_domain
from posttrain.envs.base import TaskEnv, call_maybe_async
from posttrain.inference.base import InferenceBackend, SamplingParams

EnvFactory = Callable[[Task], TaskEnv]


def default_env_factory(task: Task) -> TaskEnv:
    """The env a task's domain declares (see :func:`posttrain.envs.factory.make_env`)."""
    from posttrain.envs.factory import make_env

    return make_env(get_domain(task.domain), task)


def _failed_group(task: Task, obs: Observation, n: int, err: ErrorInfo, version: int) -> TrajectoryGroup:
    trajs = tuple(Trajectory(task=task, turns=(), score=None, stop_reason="error", error=err)
                  for _ in range(n))
    return TrajectoryGroup(task=task, trajectories=trajs, policy_version=version)


def _one_sample(task: Task, completion: Completion, make_env: EnvFactory,
                gen_s: float) -> Trajectory:
    t0 = time.perf_counter()
    env = make_env(task)
    obs = call_maybe_async(env.reset)
    result = call_maybe_async(env.step, completion)
    format_ok = completion.finish_reason == "stop" and bool(completion.text.strip())
    info: dict[str, Any] = {"format_ok": format_ok, **dict(result.info)}
    turn = Turn(observation=obs, action=completion, reward=float(result.reward), info=info)
    stop = "done" if completion.finish_reason != "length" else "max_tokens"
    traj = Trajectory(task=task, turns=(turn,), stop_reason=stop)
    score = call_maybe_async(env.verify, traj)
    verify_s = time.perf_counter() - t0
    return Trajectory(task=task, turns=(turn,), score=score, stop_reason=stop,
                      timings={"generate_s": gen_s, "verify_s": verify_s})


def run_groups(backend: InferenceBackend, tasks: Sequence[Task], params: SamplingParams,
               make_env: EnvFactory | None = None) -> list[TrajectoryGroup]:
    """Sample ``params.n`` completions per task in one batch and verify each."""
    make_env = make_env or default_env_factory
    version = int(getattr(backend, "policy_version", 0))
    observations = [call_maybe_async(make_env(t).reset) for t in tasks]
    t0 = time.perf_counter()
    try:
        outputs = backend.generate([o.messages for o in observations], params)
        if len(outputs) != len(tasks):
            raise ValueError(f"backend returned {len(outputs)} groups for {len(tasks)} prompts")
    except Exception as exc:  # the inference boundary: record on every trajectory
        err = ErrorInfo.from_exception(exc)
        return [_failed_group(t, o, params.n, err, version) for t, o in zip(tasks, observations)]
    gen_s = (time.perf_counter() - t0) / max(1, sum(len(c) for c in outputs))
    groups = []
    for task, completions in zip(tasks, outputs):
        trajs = tuple(_one_sample(task, c, make_env, gen_s) for c in completions)
        groups.append(TrajectoryGroup(task=task, trajectories=trajs, policy_version=version))
    return groups
