"""The long-horizon family: checkpoints give process rewards through step(); the outcome is
verified independently (hand-made outputs reach checkpoints but earn no outcome)."""

import pytest

from posttrain.domains import DOMAINS, get_domain, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.rollout import replay_score as run_episode
from posttrain.inference.base import SamplingParams
from posttrain.inference.fake import FakeBackend
from posttrain.rollout import play_episode as loop_episode

load_builtin_domains()
LONG = [d for d in DOMAINS.ids() if d.startswith("long_horizon.")]


def test_family_has_four_domains():
    assert len(LONG) >= 4


def _scripted(actions):
    return FakeBackend(lambda msgs, j: actions[sum(m["role"] == "assistant" for m in msgs)])


@pytest.mark.parametrize("did", LONG)
def test_reference_collects_every_checkpoint(did):
    dom = get_domain(did)
    task = sample_task(dom, 0, 2)
    tr = loop_episode(_scripted(dom.reference_actions(task)), dom.make_env(task),
                      SamplingParams(max_new_tokens=100_000))
    assert tr.stop_reason == "done" and tr.score.value == pytest.approx(1.0)
    rewards = [t.reward for t in tr.turns]
    assert sum(rewards) == pytest.approx(1.0)  # every checkpoint once
    assert sum(r > 0 for r in rewards) >= 2  # spread over the episode, not only at the end


def test_hand_written_outputs_reach_checkpoints_not_the_outcome():
    dom = get_domain("long_horizon.data_pipeline")
    task = sample_task(dom, 1, 1)
    probe = dom.probes(task)["hand_written_outputs"]
    tr = loop_episode(_scripted(probe), dom.make_env(task), SamplingParams(max_new_tokens=100_000))
    assert tr.score.value == 0.0


def test_ledger_session_conforms():
    assert check_domain(get_domain("long_horizon.ledger_session"), seeds=(0, 1)).ok


@pytest.mark.parametrize("did", ["long_horizon.rename_refactor", "long_horizon.project_setup"])
def test_probes_floor(did):
    dom = get_domain(did)
    task = sample_task(dom, 2, 3)
    for name, actions in dom.probes(task).items():
        assert run_episode(dom, task, actions).value <= 0.05, name
