"""Infrastructure failures on the training path are played again with backoff; task failures never."""

import pytest

from posttrain.core.errors import SandboxError
from posttrain.domains.base import get_domain, sample_task
from posttrain.envs.factory import make_env
from posttrain.inference.base import SamplingParams
from posttrain.inference.fake import FakeBackend
from posttrain.rollout import EpisodeLimits
from posttrain.scheduler.rollouts import play_scheduled

ADD = get_domain("math.add-v1")
TASKS = [sample_task(ADD, s, 1) for s in range(3)]
ANSWERS = {t.prompt[-1]["content"]: ADD.solve(t) for t in TASKS}


class Flaky:
    """The task's real env, whose sandbox "breaks" in step() for the first ``breaks`` envs."""

    made: dict = {}

    def __init__(self, task, breaks):
        self.task, self.inner, self.breaks = task, make_env(ADD, task), breaks
        Flaky.made[task.key] = Flaky.made.get(task.key, 0) + 1
        self.nth = Flaky.made[task.key]

    def reset(self):
        return self.inner.reset()

    def step(self, action):
        if self.nth <= self.breaks:
            raise SandboxError("sandbox supervisor died")
        return self.inner.step(action)

    def verify(self, trajectory):
        return self.inner.verify(trajectory)


def _run(breaks_for, answer=None, retries=2):
    Flaky.made = {}
    backend = FakeBackend(lambda m, j: answer if answer is not None else ANSWERS[m[-1]["content"]])
    limits = EpisodeLimits(infra_retries=retries, retry_backoff_s=0.001)
    return play_scheduled(backend, TASKS, SamplingParams(n=2, max_new_tokens=40, seed=1),
                          limits=limits, make_env=lambda t: Flaky(t, breaks_for(t)))


def test_a_group_hit_by_a_sandbox_failure_is_played_again():
    # task 1's first env breaks: its whole group (2 episodes) is replayed once
    groups, _, stats = _run(lambda t: 1 if t.seed == 1 else 0)
    assert stats == {"rollout/retried_groups": 1.0, "rollout/infra_failed_groups": 0.0,
                     "rollout/resumed_episodes": 0.0}  # one turn: nothing to resume from
    assert [g.task for g in groups] == TASKS
    assert all(t.usable and t.reward == 1.0 for g in groups for t in g.trajectories)
    assert Flaky.made == {TASKS[0].key: 2, TASKS[1].key: 4, TASKS[2].key: 2}


def test_a_permanent_failure_stops_after_the_retries_and_stays_recorded():
    groups, _, stats = _run(lambda t: 99 if t.seed == 2 else 0, retries=2)
    assert stats == {"rollout/retried_groups": 2.0, "rollout/infra_failed_groups": 1.0,
                     "rollout/resumed_episodes": 0.0}
    assert Flaky.made[TASKS[2].key] == 2 * 3  # first attempt + 2 retries, 2 episodes each
    bad = groups[2].trajectories
    assert all(t.error is not None and t.error.kind == "sandbox" and not t.usable for t in bad)


def test_task_failures_are_data_not_retried():
    groups, _, stats = _run(lambda t: 0, answer="-12345")
    assert stats["rollout/retried_groups"] == 0.0
    assert all(t.usable and t.reward == 0.0 for g in groups for t in g.trajectories)
    assert all(n == 2 for n in Flaky.made.values())


@pytest.mark.parametrize("retries", [0])
def test_retries_off(retries):
    groups, _, stats = _run(lambda t: 1 if t.seed == 0 else 0, retries=retries)
    assert stats["rollout/infra_failed_groups"] == 1.0 and stats["rollout/retried_groups"] == 0.0
