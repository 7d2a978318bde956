"""The code family and its verifier: static gate, hidden tests in a fresh sandbox, tampering."""

import pytest

from posttrain.domains import DOMAINS, get_domain, load_builtin_domains, sample_task
from posttrain.rollout.conformance import check_domain
from posttrain.rollout import replay_score as run_episode
from posttrain.envs.tool_env import format_answer, format_call, pool_lease
from posttrain.verifiers.code import extract_code, static_check, verify_function

load_builtin_domains()
CODE = [d for d in DOMAINS.ids() if d.startswith("code.")]


def test_family_has_four_domains_two_multi_turn():
    assert len(CODE) >= 4
    assert sum(hasattr(DOMAINS.get(d), "make_env") for d in CODE) >= 2


@pytest.mark.parametrize("did", ["code.fn_synthesis", "code.bug_repair"])
def test_single_turn_conform(did):
    rep = check_domain(get_domain(did), seeds=(0,))
    assert rep.ok, rep.failures


def test_static_gate():
    ok = "def f(x):\n    return x + 1\n"
    assert static_check(ok, "f") is None
    assert "no top-level" in static_check(ok, "g")
    for bad in ["import os\n" + ok, "from subprocess import run\n" + ok, ok + "exit(0)\n",
                ok + "x = eval('1')\n", ok + "y = f.__globals__\n", "def f(x):\n    return open('a')\n",
                "def f(x)\n  return 1", ok * 2000]:
        assert static_check(bad, "f") is not None, bad


def test_extract_code_is_strict():
    prog = "def f(x):\n    return x"
    assert extract_code(f"thinking...\n<answer>\n```python\n{prog}\n```\n</answer>") == prog
    assert extract_code(f"<answer>{prog}</answer><answer>{prog}</answer>") == ""
    assert extract_code(f"<answer>{prog}</answer> and also 42") == ""


def _verify(code, task):
    h = task.hidden
    return verify_function(code, fn_name=task.public["function"], inputs=h["inputs"],
                           expected=h["expected"], reference=h["reference"],
                           sandbox_factory=pool_lease(), version="t", baseline=h.get("baseline"))


def test_runtime_defences_and_partial_credit():
    dom = get_domain("code.fn_synthesis")
    task = sample_task(dom, 3, 1)
    fn, ref = task.public["function"], task.hidden["reference"]
    full = _verify(ref, task)
    assert full.value == pytest.approx(1.0) and full.passed == full.total == 20
    # right on half of the hidden inputs only
    half = {repr(a): e for a, e in list(zip(task.hidden["inputs"], task.hidden["expected"]))[:10]}
    part = _verify(f"HALF = {half!r}\n{ref}\n_ref = {fn}\ndef {fn}(*a):\n"
                   f"    return _ref(*a) if repr(list(a)) in HALF else 'no'\n", task)
    assert part.passed == 10 and 0.05 < part.value < 1.0
    tamper = _verify("import json\njson.dumps = lambda *a, **k: '{\"i\": 0, \"ok\": true}'\n" + ref, task)
    assert tamper.value == 0.0 and "tamper" in tamper.reason
    assert _verify(f"raise SystemExit(0)\n{ref}", task).value == 0.0
    eq = _verify(f"class E:\n    def __eq__(self, o):\n        return True\ndef {fn}(*a):\n    return E()\n", task)
    assert eq.value == 0.0 and eq.passed == 0


def test_multi_turn_repair_episode_and_probes():
    dom = get_domain("code.bug_repair_repl")
    task = sample_task(dom, 0, 2)
    assert run_episode(dom, task, dom.reference_actions(task)).value == pytest.approx(1.0)
    # the hidden inputs are nowhere in the episode's sandbox
    look = run_episode(dom, task, [format_call("shell", {"command": "cat /work/* ; ls -a /work"}),
                                   format_answer("done")])
    assert look.value == 0.0
    for name, actions in dom.probes(task).items():
        assert run_episode(dom, task, actions).value <= 0.05, name
