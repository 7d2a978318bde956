"""Env steps start while the round's call is still decoding (``EpisodeLimits.overlap_env_steps``
with a backend that ``streams_prompts``): an episode whose action is complete is stepped on
the env pool at once, while the longer actions of the round are still being sampled.

What must hold: the overlap really happens (a handed-out episode's step runs during the call;
with the overlap off, never); what every episode gets is the same with and without it; a
prompt handed out before the call fails later is neither sampled nor stepped twice; the HF
backend hands each prompt out exactly once, with exactly the completions it returns.
"""

from __future__ import annotations

import threading
import time

import pytest

from posttrain.core.errors import InferenceError
from posttrain.core.types import Observation, Score, StepResult, Task
from posttrain.inference.base import SamplingParams
from posttrain.inference.fake import FakeBackend
from posttrain.rollout import EpisodeLimits, play_groups


def task(seed: int) -> Task:
    return Task(domain="test.overlap-v1", seed=seed, difficulty=1,
                prompt=({"role": "user", "content": f"task {seed}"},))


class Env:
    """Three turns; each step notes whether a policy call was in progress while it ran (it
    waits up to a second for one) and counts its steps."""

    def __init__(self, t: Task, in_call: threading.Event):
        self.task, self.in_call, self.has_sandbox = t, in_call, True
        self.steps, self.overlapped, self.closed = 0, [], 0

    def reset(self):
        return Observation(messages=self.task.prompt)

    def step(self, action):
        self.overlapped.append(self.in_call.wait(1.0))
        self.steps += 1
        return StepResult(Observation(messages=({"role": "user", "content": f"s{self.steps}"},)),
                          0.0, self.steps >= 3)

    def verify(self, trajectory):
        return Score(1.0)

    def close(self):
        self.closed += 1


class Streaming(FakeBackend):
    """Hands prompts out one by one, 0.1 s apart, with ``in_call`` set meanwhile; with
    ``fail_after`` it raises once that many prompts of a call are out."""

    streams_prompts = True

    def __init__(self, in_call: threading.Event, fail_after: int | None = None):
        super().__init__(lambda messages, j: f"act {j} {len(messages)}")
        self.in_call, self.fail_after, self.sampled = in_call, fail_after, []

    def generate(self, prompts, params, on_prompt=None):
        out = super().generate(prompts, params)
        self.sampled += [p[0]["content"] for p in prompts]
        self.in_call.set()
        try:
            for i, got in enumerate(out):
                time.sleep(0.1)
                if on_prompt is not None:
                    on_prompt(i, got)
                if self.fail_after is not None and len(prompts) > 1 and i + 1 == self.fail_after:
                    raise InferenceError("the engine process died")
            time.sleep(0.1)
            return out
        finally:
            self.in_call.clear()


def _play(overlap: bool, fail_after: int | None = None, tasks: int = 4):
    in_call = threading.Event()
    envs: list[Env] = []

    def make_env(t):
        envs.append(env := Env(t, in_call))
        return env
    backend = Streaming(in_call, fail_after)
    groups, times = play_groups(backend, [task(s) for s in range(tasks)],
                                SamplingParams(n=2, seed=5, max_new_tokens=8),
                                limits=EpisodeLimits(env_workers=8, max_sandbox_episodes=16,
                                                     overlap_env_steps=overlap),
                                make_env=make_env)
    return groups, envs, backend


def _actions(groups):
    return [[t.action.text for t in tr.turns] for g in groups for tr in g.trajectories]


def test_a_handed_out_action_is_stepped_while_the_call_goes_on():
    groups, envs, _ = _play(overlap=True)
    assert all(tr.reward == 1.0 and len(tr.turns) == 3 for g in groups for tr in g.trajectories)
    # every prompt but the call's last is out before the call ends: its steps overlap it
    assert all(all(e.overlapped) for e in envs if e.task.seed != 3)
    assert all(e.closed == 1 for e in envs)


def test_without_the_overlap_no_step_runs_during_a_call_and_the_episodes_are_the_same():
    off, envs, _ = _play(overlap=False)
    assert not any(any(e.overlapped) for e in envs)
    assert _actions(off) == _actions(_play(overlap=True)[0])


def test_a_prompt_handed_out_before_the_call_failed_is_not_sampled_or_stepped_again():
    groups, envs, backend = _play(overlap=True, fail_after=2)
    assert all(tr.reward == 1.0 and len(tr.turns) == 3 for g in groups for tr in g.trajectories)
    assert all(e.steps == 3 for e in envs)  # no episode stepped twice in a turn
    # each round: one call of 4 prompts fails after 2 are out; only the other 2 are resampled
    first_round = backend.sampled[:6]
    assert first_round == ["task 0", "task 1", "task 2", "task 3", "task 2", "task 3"]


def test_hf_hands_each_prompt_out_once_with_the_completions_it_returns():
    from posttrain.inference.hf import HFBackend
    from posttrain.models.tiny import build_tiny_model

    model, tok = build_tiny_model()
    hf = HFBackend(model.eval(), tok)
    prompts = [[{"role": "user", "content": f"q{i}"}] for i in range(5)]
    params = SamplingParams(n=2, max_new_tokens=24, prompt_max_new_tokens=(3, 24, 5, 1, 24), seed=1)
    seen: list[tuple[int, list]] = []
    got = hf.generate(prompts, params, on_prompt=lambda i, c: seen.append((i, list(c))))
    assert got == hf.generate(prompts, params)
    assert sorted(i for i, _ in seen) == list(range(5))
    assert all(got[i] == c for i, c in seen)
    order = [i for i, _ in seen]
    assert order.index(3) < order.index(0) < order.index(2) < order.index(1)  # shortest caps first


@pytest.mark.parametrize("overlap", [True, False])
def test_same_seed_same_trajectories(overlap):
    assert _actions(_play(overlap)[0]) == _actions(_play(overlap)[0])
