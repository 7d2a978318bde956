"""Every multi-turn domain has a reference trajectory, and the conformance checker holds it to it.

The property (``posttrain.rollout.conformance.reference_trajectory_problems``): replayed
through the episode engine, the reference episode scores 1.0, has at least two turns, is
ended by the env on its last scripted action, makes well-formed valid tool calls before it
and ends with a final answer. Checked here over every domain with ``make_env`` at every
difficulty (seed 0; ``posttrain domains check`` runs more seeds), and the checker must fail
a domain whose reference is only a final answer, a malformed call, or has actions the env
never reads.
"""

from __future__ import annotations

import pytest

from posttrain.domains.base import DOMAINS, get_domain, load_builtin_domains, sample_task
from posttrain.rollout import EpisodeLimits, replay_groups
from posttrain.rollout.conformance import check_domain, reference_trajectory_problems
from posttrain.tools.calls import format_answer

load_builtin_domains()
MULTI = [i for i in DOMAINS.ids() if callable(getattr(get_domain(i), "make_env", None))]
LIMITS = EpisodeLimits(env_workers=4)  # the default budgets (8 turns), as RL and the checker use


def _script(task):
    return get_domain(task.domain).reference_actions(task)


def test_every_multi_turn_domain_replays_a_reference_trajectory_at_every_difficulty():
    assert len(MULTI) >= 50, "the multi-turn domains did not load"
    # one engine call per level: two levels of a domain may share a prompt (the data differ)
    levels = max(len(get_domain(i).difficulties) for i in MULTI)
    groups = []
    for k in range(levels):
        tasks = [sample_task(get_domain(i), seed=0, difficulty=list(get_domain(i).difficulties)[k])
                 for i in MULTI if k < len(get_domain(i).difficulties)]
        groups += replay_groups(tasks, _script, limits=LIMITS)
    assert len(groups) == sum(len(get_domain(i).difficulties) for i in MULTI)
    bad = {}
    for group in groups:
        traj = group.trajectories[0]
        problems = reference_trajectory_problems(traj, _script(group.task))
        if traj.score is None or traj.score.value < 1.0 - 1e-9:
            problems.append(f"scored {traj.reward:.2f}: {traj.score.reason if traj.score else traj.error}")
        if problems:
            bad[group.task.key] = problems
    assert not bad, bad


class _Wrapped:
    """A real multi-turn domain whose reference is rewritten by ``rewrite(task, actions)``."""

    def __init__(self, base_id, rewrite):
        self._base, self._rewrite = get_domain(base_id), rewrite

    def __getattr__(self, name):
        return getattr(self._base, name)

    def reference_actions(self, task):
        return self._rewrite(task, list(self._base.reference_actions(task)))


def _failures(rewrite, base="tools.single_call-v1"):
    rep = check_domain(_Wrapped(base, rewrite), seeds=(0,), difficulties=[1])
    return [f for f in rep.failures if "ref_trajectory" in f or "not a trajectory" in f
            or "turns played" in f or "tool call" in f or "stopped by" in f]


def test_the_unchanged_reference_passes():
    rep = check_domain(_Wrapped("tools.single_call-v1", lambda t, a: a), seeds=(0,), difficulties=[1])
    assert rep.ok, rep.failures


@pytest.mark.parametrize("rewrite,needle", [
    (lambda t, a: a[-1:], "a final answer, not a trajectory"),
    (lambda t, a: ["<tool_call>{not json</tool_call>"] + a, "not a well-formed, valid tool call"),
    (lambda t, a: a + [format_answer("and one more")], "turns played for"),
], ids=["final_answer_only", "malformed_call", "unread_action"])
def test_the_checker_fails_a_reference_that_is_not_a_trajectory(rewrite, needle):
    failures = _failures(rewrite)
    assert any(needle in f for f in failures), failures
