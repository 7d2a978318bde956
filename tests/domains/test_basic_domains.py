"""The six foundation domains: prompt shapes, answers, difficulty scaling and strict scoring."""

import re

import pytest

from posttrain.core.types import Score
from posttrain.domains import get_domain, sample_task
from posttrain.envs import make_env
from posttrain.rollout import replay_score as run_episode
from posttrain.envs.base import SingleTurnEnv

BASIC = ["math.add-v1", "math.sub-v1", "math.mul-v1", "math.compare-v1",
         "text_data.reverse-v1", "algorithms.sort-v1"]
SEEDS = range(40)


def _tasks(did, d):
    dom = get_domain(did)
    return dom, [sample_task(dom, s, d) for s in SEEDS]


@pytest.mark.parametrize("did", BASIC)
def test_registered_with_four_levels_and_compact_prompts(did):
    dom = get_domain(did)  # loads the built-in domains when this test runs first
    assert tuple(dom.difficulties) == (1, 2, 3, 4)
    assert dom.env_kind == "single_turn"
    for d in dom.difficulties:
        task = sample_task(dom, 7, d)
        assert [m["role"] for m in task.prompt] == ["user"]  # no system prompt
        assert task.prompt[0]["content"].endswith("=")
        assert len(task.prompt[0]["content"]) <= 24
        assert set(task.hidden) == {"answer"}
        assert "answer" not in str(task.public_view())
        assert dom.score(task, dom.solve(task)).value == 1.0


@pytest.mark.parametrize("did,sym,fn", [("math.add-v1", "+", lambda a, b: a + b),
                                       ("math.sub-v1", "-", lambda a, b: a - b),
                                       ("math.mul-v1", "*", lambda a, b: a * b)])
@pytest.mark.parametrize("d", [1, 2, 3, 4])
def test_arithmetic_answers_and_digit_counts(did, sym, fn, d):
    _, tasks = _tasks(did, d)
    for t in tasks:
        m = re.fullmatch(rf"(\d+){re.escape(sym)}(\d+)=", t.prompt[0]["content"])
        assert m, t.prompt
        a, b = int(m.group(1)), int(m.group(2))
        assert len(m.group(1)) == len(m.group(2)) == d
        assert t.hidden["answer"] == str(fn(a, b))
    if did == "math.sub-v1" and d >= 2:
        assert any(t.hidden["answer"].startswith("-") for t in tasks)


def test_compare_all_three_symbols_and_shared_prefixes():
    _, tasks = _tasks("math.compare-v1", 3)
    answers = {t.hidden["answer"] for t in tasks}
    assert answers == {"<", ">", "="}
    for t in tasks:
        a, b = map(int, re.fullmatch(r"(\d+)\?(\d+)=", t.prompt[0]["content"]).groups())
        assert t.hidden["answer"] == ("<" if a < b else ">" if a > b else "=")
    assert any(str(a)[0] == str(b)[0] and a != b
               for a, b in (t.public["operands"] for t in tasks))


@pytest.mark.parametrize("d,n", [(1, 3), (2, 5), (3, 7), (4, 9)])
def test_reverse_lengths_and_no_palindromes(d, n):
    _, tasks = _tasks("text_data.reverse-v1", d)
    for t in tasks:
        s = re.fullmatch(r"rev ([a-z]+)=", t.prompt[0]["content"]).group(1)
        assert len(s) == n and s != s[::-1]
        assert t.hidden["answer"] == s[::-1]


@pytest.mark.parametrize("d,n", [(1, 3), (2, 5), (3, 7), (4, 9)])
def test_sort_lengths_and_never_presorted(d, n):
    _, tasks = _tasks("algorithms.sort-v1", d)
    for t in tasks:
        xs = [int(x) for x in re.fullmatch(r"sort ([\d ]+)=", t.prompt[0]["content"]).group(1).split()]
        assert len(xs) == n and xs != sorted(xs)
        assert t.hidden["answer"] == " ".join(map(str, sorted(xs)))


def test_examples_from_the_brief():
    cases = {"math.add-v1": ("12+34=", "46"), "math.sub-v1": ("12-34=", "-22"),
             "math.mul-v1": ("7*8=", "56"), "math.compare-v1": ("12?34=", "<"),
             "text_data.reverse-v1": ("rev abc=", "cba"), "algorithms.sort-v1": ("sort 3 1 2=", "1 2 3")}
    for did, (prompt, answer) in cases.items():
        dom = get_domain(did)
        # Find a generated task with this exact prompt shape class and check the scorer on a
        # hand-made one: the answer key is the only thing the verifier reads.
        task = sample_task(dom, 0, 1)
        from dataclasses import replace
        hand = replace(task, prompt=({"role": "user", "content": prompt},), hidden={"answer": answer})
        assert dom.score(hand, answer).value == 1.0
        assert dom.score(hand, answer + "0").value == 0.0


@pytest.mark.parametrize("answer,value", [
    ("46", 1.0), ("  46\n", 1.0), ("<answer>46</answer>", 1.0), ("<answer> 46 </answer>", 1.0),
    ("046", 0.0), ("+46", 0.0), ("46.0", 0.0), ("46 47", 0.0), ("The answer is 46", 0.0),
    ("4 6", 0.0), ("", 0.0), ("forty-six", 0.0),
])
def test_strict_exact_match(answer, value):
    dom = get_domain("math.add-v1")
    from dataclasses import replace
    task = replace(sample_task(dom, 0, 2), hidden={"answer": "46"})
    s = dom.score(task, answer)
    assert isinstance(s, Score) and s.value == value and s.verifier_version == "math.add-v1"


def test_reverse_is_case_sensitive_and_sort_needs_spaces():
    rev = get_domain("text_data.reverse-v1")
    t = sample_task(rev, 3, 2)
    assert rev.score(t, t.hidden["answer"].upper()).value == 0.0
    srt = get_domain("algorithms.sort-v1")
    t = sample_task(srt, 3, 2)
    assert srt.score(t, t.hidden["answer"].replace(" ", ",")).value == 0.0
    assert srt.score(t, t.hidden["answer"].replace(" ", "  ")).value == 1.0


@pytest.mark.parametrize("did", BASIC)
def test_domain_probes_floor_and_env_is_single_turn(did):
    dom = get_domain(did)
    for d in dom.difficulties:
        t = sample_task(dom, 11, d)
        assert isinstance(make_env(dom, t), SingleTurnEnv)
        probes = dom.probes(t)
        assert len(probes) >= 5
        for name, p in probes.items():
            assert run_episode(dom, t, [p]).value == 0.0, (did, name, p)
        assert run_episode(dom, t, [dom.solve(t)]).value == 1.0
