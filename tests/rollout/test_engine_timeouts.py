"""Staged timeouts and cancellation in the one episode engine.

An env call that hangs is abandoned after its stage timeout and recorded as kind "timeout"
(infrastructure: the scheduler plays the group again); a call that only *waits* in the env
pool's queue is not a hung one; a cancelled engine stops at the next round without another
policy call. Every env is closed in every case.
"""

from __future__ import annotations

import threading
import time

from posttrain.core.types import Observation, Score, StepResult, Task
from posttrain.inference.base import SamplingParams
from posttrain.inference.fake import FakeBackend
from posttrain.rollout import EpisodeLimits, play_groups
from posttrain.scheduler.rollouts import play_scheduled


def task(seed):
    return Task(domain="test.timeouts-v1", seed=seed, difficulty=1,
                prompt=({"role": "user", "content": f"task {seed}"},))


class Env:
    """Two turns; ``hang`` names the call that blocks (until close) on the first ``hangs`` envs."""

    made: list["Env"] = []

    def __init__(self, t, hang=None, step_s=0.0):
        self.task, self.hang, self.step_s = t, hang, step_s
        self.unblock = threading.Event()
        self.closed = 0
        self.steps = 0
        Env.made.append(self)

    def _maybe_hang(self, where):
        if self.hang == where:
            self.unblock.wait(30)

    def reset(self):
        self._maybe_hang("reset")
        return Observation(messages=self.task.prompt)

    def step(self, action):
        self._maybe_hang("step")
        time.sleep(self.step_s)
        self.steps += 1
        return StepResult(Observation(messages=({"role": "user", "content": "again"},)), 0.0,
                          self.steps >= 2)

    def verify(self, trajectory):
        self._maybe_hang("verify")
        return Score(1.0)

    def close(self):
        self.closed += 1
        self.unblock.set()  # what closing a sandbox does to a command it was running


def factory(hang_seeds=(), where=None, step_s=0.0):
    Env.made = []
    return lambda t: Env(t, where if t.seed in hang_seeds else None, step_s)


LIMITS = EpisodeLimits(step_timeout_s=0.5, verify_timeout_s=0.5, env_workers=4, retry_backoff_s=0.0)


def test_a_hung_step_times_out_alone_and_every_env_is_closed():
    t0 = time.monotonic()
    groups, _ = play_groups(FakeBackend(["a"]), [task(0), task(1)], SamplingParams(n=2),
                            limits=LIMITS, make_env=factory({0}, "step"))
    assert time.monotonic() - t0 < 5
    hung, fine = groups
    for tr in hung.trajectories:
        assert tr.error.kind == "timeout" and "step took longer than 0.5 s" in tr.error.message
        assert not tr.usable and tr.score is None
        assert len(tr.turns) == 0  # the late step added nothing once abandoned
    for tr in fine.trajectories:
        assert tr.error is None and tr.score.value == 1.0 and len(tr.turns) == 2
    assert all(env.closed >= 1 for env in Env.made) and len(Env.made) == 4


def test_a_hung_reset_and_a_hung_verifier_are_timeouts_too():
    groups, _ = play_groups(FakeBackend(["a"]), [task(0)], SamplingParams(n=1), limits=LIMITS,
                            make_env=factory({0}, "reset"))
    assert groups[0].trajectories[0].error.kind == "timeout"
    groups, _ = play_groups(FakeBackend(["a"]), [task(0)], SamplingParams(n=1), limits=LIMITS,
                            make_env=factory({0}, "verify"))
    tr = groups[0].trajectories[0]
    assert tr.error is None and len(tr.turns) == 2
    assert tr.score.error.kind == "timeout" and not tr.usable  # never a silent score of 0
    assert Env.made[0].closed >= 1


def test_waiting_in_the_pool_queue_is_not_a_timeout():
    # 6 episodes, 1 env worker, 0.2 s per step: the last step of a round starts ~1 s after
    # it was submitted, twice the stage timeout, and still must not count as hung.
    limits = EpisodeLimits(step_timeout_s=0.5, verify_timeout_s=0.5, env_workers=1)
    groups, _ = play_groups(FakeBackend(["a"]), [task(i) for i in range(6)], SamplingParams(n=1),
                            limits=limits, make_env=factory(step_s=0.2))
    assert all(g.trajectories[0].error is None and g.trajectories[0].score.value == 1.0
               for g in groups)


def test_the_scheduler_replays_a_group_whose_env_hung():
    attempts = []

    def make_env(t):
        attempts.append(t.seed)
        return Env(t, "step" if len(attempts) <= 1 else None)

    groups, _, stats = play_scheduled(FakeBackend(["a"]), [task(0)], SamplingParams(n=1),
                                      limits=LIMITS, make_env=make_env)
    assert stats["rollout/retried_groups"] == 1 and stats["rollout/infra_failed_groups"] == 0
    assert groups[0].trajectories[0].score.value == 1.0


def test_cancel_stops_at_the_next_round_without_another_policy_call():
    backend = FakeBackend(["a"])
    rounds = []
    groups, _ = play_groups(backend, [task(0), task(1)], SamplingParams(n=2), limits=LIMITS,
                            make_env=factory(), cancelled=lambda: bool(rounds.append(1)) or len(rounds) > 1)
    assert len(backend.calls) == 1  # the first turn only
    for g in groups:
        for tr in g.trajectories:
            assert tr.stop_reason == "cancelled" and tr.error.kind == "cancelled"
            assert tr.score is None and len(tr.turns) == 1
    assert all(env.closed == 1 for env in Env.made)
    # a cancelled call is not replayed by the scheduler
    _, _, stats = play_scheduled(FakeBackend(["a"]), [task(0)], SamplingParams(n=1),
                                 limits=LIMITS, make_env=factory(), cancelled=lambda: True)
    assert stats["rollout/retried_groups"] == 0
