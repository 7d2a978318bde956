"""Sandboxed batches play in two cohorts of tasks: one cohort's env steps run on the env pool
while the policy generates for the other (``EpisodeLimits.overlap_env_steps``).

What must hold: the overlap really happens (a step of cohort 0 sees the generation for
cohort 1 begin while it runs — with the overlap off it never does); a task's episodes stay in
one call on their first turn; calls never mix cohorts; the same seed gives the same
trajectories run after run; batches without sandboxes keep one call per round.
"""

from __future__ import annotations

import threading
import time

import pytest

from posttrain.core.types import Observation, Score, StepResult, Task
from posttrain.inference.base import SamplingParams
from posttrain.inference.fake import FakeBackend
from posttrain.rollout import EpisodeLimits, play_groups


def task(seed: int) -> Task:
    return Task(domain="test.cohorts-v1", seed=seed, difficulty=1,
                prompt=({"role": "user", "content": f"task {seed}"},))


class SandboxedEnv:
    """Three turns; each step notes whether a policy call was in progress while it ran
    (it waits up to a second for one)."""

    def __init__(self, t: Task, generating: threading.Event, sandboxed: bool):
        self.task, self.generating, self.has_sandbox = t, generating, sandboxed
        self.steps, self.overlapped, self.closed = 0, [], 0

    def reset(self):
        return Observation(messages=self.task.prompt)

    def step(self, action):
        self.overlapped.append(self.generating.wait(1.0))
        self.steps += 1
        return StepResult(Observation(messages=({"role": "user", "content": f"s{self.steps}"},)),
                          0.0, self.steps >= 3)

    def verify(self, trajectory):
        return Score(1.0)

    def close(self):
        self.closed += 1


class SignallingBackend(FakeBackend):
    """``generating`` is set while a policy call is in progress (each takes 0.2 s); records
    each call's task seeds."""

    def __init__(self, generating: threading.Event):
        super().__init__(lambda messages, j: f"act {j}")
        self.generating, self.seeds_per_call = generating, []

    def generate(self, prompts, params):
        self.seeds_per_call.append(sorted({int(p[0]["content"].split()[1]) for p in prompts}))
        self.generating.set()
        try:
            time.sleep(0.2)
            return super().generate(prompts, params)
        finally:
            self.generating.clear()


def _play(overlap: bool, sandboxed: bool = True, tasks: int = 4, n: int = 2):
    generating = threading.Event()
    envs: list[SandboxedEnv] = []

    def make_env(t):
        envs.append(env := SandboxedEnv(t, generating, sandboxed))
        return env
    backend = SignallingBackend(generating)
    groups, _ = play_groups(backend, [task(s) for s in range(tasks)],
                            SamplingParams(n=n, seed=5, max_new_tokens=8),
                            limits=EpisodeLimits(env_workers=8, max_sandbox_episodes=16,
                                                 overlap_env_steps=overlap),
                            make_env=make_env)
    return groups, envs, backend


def test_one_cohorts_steps_run_while_the_other_generates():
    groups, envs, backend = _play(overlap=True)
    assert all(tr.reward == 1.0 and len(tr.turns) == 3 for g in groups for tr in g.trajectories)
    # every step of cohort 0 (tasks 0 and 2) ran beside cohort 1's call of its round; cohort
    # 1's did beside cohort 0's next call (its last step has no call left to run beside)
    assert all(all(e.overlapped) for e in envs if e.task.seed % 2 == 0)
    assert all(e.overlapped[:-1] == [True, True] for e in envs if e.task.seed % 2 == 1)
    # calls never mix cohorts, and a task's two episodes share its first-turn call
    assert all(len({s % 2 for s in call}) == 1 for call in backend.seeds_per_call)
    assert backend.seeds_per_call[:2] == [[0, 2], [1, 3]]
    assert all(e.closed == 1 for e in envs)


def test_without_the_overlap_no_step_runs_beside_a_policy_call():
    groups, envs, backend = _play(overlap=False)
    assert all(tr.reward == 1.0 for g in groups for tr in g.trajectories)
    assert backend.seeds_per_call == [[0, 1, 2, 3]] * 3  # one call per round
    assert not any(any(e.overlapped) for e in envs)


def test_batches_without_sandboxes_keep_one_call_per_round():
    _, _, backend = _play(overlap=True, sandboxed=False)
    assert backend.seeds_per_call == [[0, 1, 2, 3]] * 3


@pytest.mark.parametrize("overlap", [True, False])
def test_same_seed_same_trajectories(overlap):
    def actions(groups):
        return [[t.action.text for t in tr.turns] for g in groups for tr in g.trajectories]
    assert actions(_play(overlap)[0]) == actions(_play(overlap)[0])
