"""The code repair_* and misc_* domains: references score 1.0 at every level, wrong answers
less, partial credit where the verifiers claim it (conformance is checked elsewhere)."""

import random

import pytest

from posttrain.domains import get_domain, load_builtin_domains, sample_task
from posttrain.envs.tool_env import format_answer

load_builtin_domains()

REPAIR = ["off_by_one", "comparison", "mutable_default", "division", "empty_input",
          "late_binding", "shadowed_builtin", "swallowed_exception", "str_bytes"]


@pytest.mark.parametrize("name", REPAIR)
def test_repair_reference_and_bug(name):
    dom = get_domain(f"code.repair_{name}")
    for d in dom.difficulties:
        task = sample_task(dom, 0, d)
        assert task.public["program"] != task.hidden["reference"]
        assert dom.score(task, dom.solve(task)).value == pytest.approx(1.0), (name, d)
    # the planted bug, submitted unchanged, earns nothing (its pass rate is the baseline)
    assert dom.score(task, format_answer(task.public["program"])).value == 0.0


def test_repair_engine_guarantees_and_partial_credit():
    import importlib

    from posttrain.domains.code._problems import run_source
    from posttrain.domains.code._kit import make_repair

    for name in REPAIR:
        mod = importlib.import_module(f"posttrain.domains.code.repair_{name}")
        for t in mod.TEMPLATES:
            p = make_repair(random.Random(7), (t,), t.level)
            pub_in = [a for a, _ in p.public]
            assert run_source(p.buggy, p.fn, pub_in) != [o for _, o in p.public], t.fn
            assert p.buggy_rate <= 0.75
    dom = get_domain("code.repair_off_by_one")
    task = sample_task(dom, 1, 1)
    fn, ref, h = task.public["function"], task.hidden["reference"], task.hidden
    half = {repr(a): e for a, e in list(zip(h["inputs"], h["expected"]))[:12]}
    hybrid = (f"HALF = {half!r}\n{ref}\n_ref = {fn}\ndef {fn}(*a):\n"
              f"    return _ref(*a) if repr(list(a)) in HALF else 'no'\n")
    s = dom.score(task, format_answer(hybrid))
    assert 0.05 < s.value < 1.0 and s.passed == 12


def test_type_annotate_checker():
    dom = get_domain("code.misc_type_annotate")
    for d in dom.difficulties:
        task = sample_task(dom, 2, d)
        assert dom.score(task, dom.solve(task)).value == 1.0
    ref = task.hidden["reference"]
    # one return annotation removed: partial credit
    head, rest = ref.split(") -> ", 1)
    missing = head + "):" + rest.split(":", 1)[1]
    s = dom.score(task, format_answer(missing))
    assert s.value == pytest.approx((s.total - 1) / s.total)
    # equivalent spellings are accepted; changed code is not
    from posttrain.domains.code.misc_type_annotate import canon
    import ast
    eq = lambda a, b: canon(ast.parse(a, mode="eval").body) == canon(ast.parse(b, mode="eval").body)
    assert eq("Optional[List[int]]", "list[int] | None") and eq("'Dict[str, int]'", "dict[str, int]")
    assert not eq("list[int]", "list[str]")
    assert dom.score(task, format_answer(ref.replace("return", "return  0 or", 1))).value == 0.0


def test_predict_output_scoring():
    dom = get_domain("code.misc_predict_output")
    for d in dom.difficulties:
        task = sample_task(dom, 0, d)
        assert dom.score(task, dom.solve(task)).value == 1.0
    task = next(t for t in (sample_task(dom, s, 3) for s in range(20))
                if len(task_lines := t.hidden["answer"].splitlines()) >= 3)
    lines = task.hidden["answer"].splitlines()
    one_wrong = format_answer("\n".join(lines[:-1] + ["nope"]))
    v = dom.score(task, one_wrong).value
    assert v == pytest.approx(0.5 * (len(lines) - 1) / len(lines))
    assert dom.score(task, dom.solve(task) + dom.solve(task)).value == 0.0  # two answer blocks


def test_mutant_kill_partial_and_floor():
    dom = get_domain("code.misc_mutant_kill")
    for d in dom.difficulties:
        task = sample_task(dom, 0, d)
        assert dom.score(task, dom.solve(task)).value == pytest.approx(1.0)
    # a test that passes the correct code but tolerates the first mutant: partial credit
    fn, muts = task.public["function"], task.hidden["mutants"]
    tolerant = (task.hidden["reference"] + "\n" + muts[0].replace(f"def {fn}(", "def _m(") +
                "\n\ndef _safe(g, args):\n    try:\n        return g(*args)\n    except Exception:\n"
                "        return 'error'\n\ndef check(f):\n    for args in " + task.hidden["reference"].split("cases = ")[1].split("\n")[0] +
                f":\n        assert _safe(f, args) in ({fn}(*args), _safe(_m, args))\n")
    s = dom.score(task, format_answer(tolerant))
    assert s.components["passes_correct"][0] == 1.0 and 0.05 < s.value < 1.0, s
    # a test that checks nothing about behaviour kills nothing
    weak = "def check(f):\n    assert callable(f)\n"
    assert dom.score(task, format_answer(weak)).value == 0.0
    assert dom.score(task, format_answer("def check(f):\n    assert False\n")).value == 0.0


def test_perf_fix_budget_kills_slow_code():
    dom = get_domain("code.misc_perf_fix")
    task = sample_task(dom, 0, 3)  # climbs: exponential recursion vs a loop
    assert dom.score(task, dom.solve(task)).value == pytest.approx(1.0)
    slow = dom.score(task, format_answer("_unused = 0\n" + task.public["program"]))
    assert slow.components["correct"][0] == 1.0 and slow.value == 0.0
    for d in (1, 2):
        t = sample_task(dom, 0, d)
        assert dom.score(t, dom.solve(t)).value == pytest.approx(1.0)


def test_refactor_partial_simplification():
    dom = get_domain("code.misc_refactor")
    for d in dom.difficulties:
        task = sample_task(dom, 0, d)
        assert dom.score(task, dom.solve(task)).value == pytest.approx(1.0)
    assert dom.score(task, format_answer(task.public["program"])).value == 0.0
    # part of the way: the plain if/elif chain with a redundant condition on every branch
    half = task.hidden["reference"].replace(":\n        return", " and x == x:\n        return")
    s = dom.score(task, format_answer(half))
    assert 0.05 < s.value < 1.0, s


def test_tdd_doctest_episode():
    from posttrain.rollout import replay_score as run_episode
    from posttrain.envs.tool_env import format_call

    dom = get_domain("code.tdd_doctest")
    for d in dom.difficulties:
        task = sample_task(dom, 0, d)
        assert run_episode(dom, task, dom.reference_actions(task)).value == pytest.approx(1.0)
    env = dom.make_env(task)
    try:
        env.reset()
        from posttrain.core.types import Completion
        out = env.step(Completion(text=format_call("run_doctests", {})))
        assert "Failed example" in out.observation.messages[0]["content"]  # the bug shows
    finally:
        env.close()
    probes = dom.probes(task)
    for name in ("rewrite_expected", "delete_doctests", "buggy_unchanged"):
        assert run_episode(dom, task, probes[name]).value == 0.0, name
