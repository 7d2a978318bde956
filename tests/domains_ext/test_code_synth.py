"""The ``code.synth_*`` domains: the reference scores 1.0 at every difficulty, the level's seeded
bug scores below 1 (with partial credit on at least one level), and the drivers' guarantees hold
(the submission must define the target itself; a quadratic answer loses the large timed test).

Conformance (probes, determinism, leaks) is run for every registered domain elsewhere
(tests/domains/test_all_domains_conform.py).
"""

from __future__ import annotations

import pytest

from posttrain.domains.base import DOMAINS, load_builtin_domains, sample_task
from posttrain.envs.tool_env import format_answer

load_builtin_domains()
SYNTH = sorted(i for i in DOMAINS.ids() if i.startswith("code.synth_"))


def test_at_least_twenty_synthesis_domains():
    assert len(SYNTH) >= 20, SYNTH


@pytest.mark.parametrize("dom_id", SYNTH)
def test_reference_full_and_bug_partial(dom_id):
    dom = DOMAINS.get(dom_id)
    partial = []
    for d in dom.difficulties:
        task = sample_task(dom, 0, d)
        ref = dom.score(task, dom.solve(task))
        assert ref.value == pytest.approx(1.0), (d, ref.reason)
        assert ref.verifier_version == dom.id and ref.passed == ref.total
        bug = dom.bug_program(task)
        assert bug is not None and bug != task.hidden["reference"]
        got = dom.score(task, format_answer(bug))
        assert got.value < 1.0, (d, got.reason)
        partial.append(0.0 < got.value < 1.0)
    assert any(partial), "no level gives partial credit to its seeded bug"


def test_driver_name_alone_does_not_count():
    dom = DOMAINS.get("code.synth_arith-v1")
    task = sample_task(dom, 0, 3)
    s = dom.score(task, format_answer("def _check(*args):\n    return {'ok': 0}\n"))
    assert s.value == 0.0 and "no top-level function 'calc'" in s.reason


def test_wrong_exception_type_fails_those_tests():
    dom = DOMAINS.get("code.synth_arith-v1")
    task = sample_task(dom, 0, 3)
    wrong = task.hidden["reference"].replace("raise ValueError", "raise KeyError")
    s = dom.score(task, format_answer(wrong))
    assert 0.0 <= s.value < 1.0 and s.passed < s.total


def test_quadratic_answer_loses_the_large_test():
    dom = DOMAINS.get("code.synth_pair_sum-v1")
    task = sample_task(dom, 0, 3)
    # A quadratic answer with an ordinary constant (a tuple per pair). The tightest quadratic
    # generator expression ran in 4.8 s against the 5 s limit on an idle machine and sometimes
    # passed: level 3's margin is too thin for it (noted as its own issue), so it is not used.
    slow = ("def pair_sum(xs, t):\n    n = len(xs)\n"
            "    return sum(1 for i in range(n) for j in range(i + 1, n) if sum((xs[i], xs[j])) == t)\n")
    s = dom.score(task, format_answer(slow))
    assert s.passed == s.total - 1, s.reason  # every small test, not the 20,000-element one
    assert s.value < 0.95


def test_class_driver_uses_injected_clock():
    dom = DOMAINS.get("code.synth_rate_limiter-v1")
    task = sample_task(dom, 0, 1)
    # ignores the injected clock: a single global window never resets
    no_clock = ("class RateLimiter:\n    def __init__(self, limit, window, clock):\n"
                "        self.limit = limit\n        self.n = {}\n"
                "    def allow(self, key):\n        self.n[key] = self.n.get(key, 0) + 1\n"
                "        return self.n[key] <= self.limit\n")
    assert dom.score(task, format_answer(no_clock)).value < 1.0
    assert "clock" in task.prompt[-1]["content"]


def test_large_input_is_not_stored_in_the_task():
    dom = DOMAINS.get("code.synth_window-v1")
    task = sample_task(dom, 1, 3)
    assert "big_seed" in task.hidden and len(str(task.hidden)) < 20_000
    inputs, expected = dom.tests(task)
    assert len(inputs[-1][0]) == 100_000 and len(expected) == len(inputs)
