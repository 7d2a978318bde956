"""The tools family: conformance, hidden values, scoring semantics of calls and answers."""

import pytest

from posttrain.domains import DOMAINS, get_domain, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.rollout import replay_score as run_episode
from posttrain.tools.calls import format_answer, format_calls

load_builtin_domains()
TOOLS = [d for d in DOMAINS.ids() if d.startswith("tools.")]


def test_family_has_four_domains():
    assert len(TOOLS) >= 4


@pytest.mark.parametrize("did", TOOLS)
def test_conforms(did):
    rep = check_domain(DOMAINS.get(did), seeds=(0, 1))
    assert rep.ok, rep.failures


@pytest.mark.parametrize("did", TOOLS)
def test_values_are_hidden(did):
    dom = get_domain(did)
    task = sample_task(dom, 5, 3)
    ans = task.hidden.get("answer_value")
    shown = str(task.public_view())
    assert "hidden" not in task.public_view()
    if ans and len(ans) > 3:
        assert ans not in shown


def test_single_call_partial_credit_and_gates():
    dom = get_domain("tools.single_call")
    task = sample_task(dom, 2, 2)
    call = task.hidden["calls"][0]
    right = (call["name"], call["arguments"])
    full = run_episode(dom, task, [format_calls(right), format_answer(task.hidden["answer_value"])])
    wrong_answer = run_episode(dom, task, [format_calls(right), format_answer("-1")])
    extra = run_episode(dom, task, [format_calls(right, right), format_answer(task.hidden["answer_value"])])
    assert full.value == pytest.approx(1.0)
    assert wrong_answer.value == pytest.approx(0.3)  # the calls part only
    assert 0.05 < extra.value < full.value  # a redundant call costs precision²
    assert set(full.components) >= {"calls", "answer", "validity"}


def test_ledger_state_comes_from_the_env_not_claims():
    dom = get_domain("tools.ledger_ops")
    task = sample_task(dom, 0, 2)
    ref = dom.reference_actions(task)
    env = dom.make_env(task)
    s = run_episode(dom, task, ref)
    assert s.value == pytest.approx(1.0) and s.components["state"][0] == 1.0
    # dropping the dependent transfer makes the withdrawal fail and the state wrong
    calls = [(c["name"], c["arguments"]) for c in task.hidden["calls"]][1:]
    s2 = run_episode(dom, task, [format_calls(*calls), format_answer("done")])
    assert s2.components["state"][0] == 0.0 and s2.value < 0.3
    env.close()
