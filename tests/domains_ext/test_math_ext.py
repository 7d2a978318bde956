"""Extended math domains: self-check (reference 1.0, probes and generic exploits at the floor,
determinism, JSON round-trip), wrong answers below 1, and the partial credit each claims."""

from __future__ import annotations

import re

import pytest

import posttrain.domains.math_ext  # noqa: F401  (registers the domains)
from posttrain.domains.base import DOMAINS, sample_task
from posttrain.domains.math_ext._selfcheck import check_domain_quick

IDS = sorted(i for i in DOMAINS.ids() if i.startswith("math.")
             and getattr(getattr(DOMAINS.get(i), "draw", None), "__module__", "").startswith("posttrain.domains.math_ext"))


def test_family_size():
    assert len(IDS) >= 30


@pytest.mark.parametrize("dom_id", IDS)
def test_self_check(dom_id):
    assert check_domain_quick(DOMAINS.get(dom_id), range(4)) == []


def mutate(ref: str) -> str:
    """A near miss: bump the last digit (or change the last letter)."""
    m = list(re.finditer(r"\d", ref))
    if m:
        i = m[-1].start()
        return ref[:i] + str((int(ref[i]) + 1) % 10) + ref[i + 1:]
    return ref[:-1] + ("X" if ref[-1] != "X" else "V")


@pytest.mark.parametrize("dom_id", IDS)
def test_wrong_answer_below_one(dom_id):
    dom = DOMAINS.get(dom_id)
    for d in dom.difficulties:
        for seed in range(3):
            t = sample_task(dom, seed, d)
            ref = dom.solve(t)
            assert dom.score(t, mutate(ref)).value < 1.0, (ref, mutate(ref))


def _score(dom_id, seed, d, answer_fn):
    dom = DOMAINS.get(dom_id)
    t = sample_task(dom, seed, d)
    return dom.score(t, answer_fn(t)).value


def test_factorize_partial_credit_only_with_right_product():
    dom = DOMAINS.get("math.factorize-v1")
    t = sample_task(dom, 1, 2)
    fs = [int(x) for x in dom.solve(t).split(" * ")]
    merged = [fs[0] * fs[1]] + fs[2:]
    assert dom.score(t, " * ".join(map(str, merged))).value == pytest.approx((len(merged) - 1) / len(merged))
    assert dom.score(t, " * ".join(map(str, fs + [2]))).value == 0.0


def test_per_field_partial_credit():
    def half(dom_id, d):
        dom = DOMAINS.get(dom_id)
        t = sample_task(dom, 3, d)
        parts = [p.strip() for p in dom.solve(t).split(",")]
        parts[-1] = mutate(parts[-1])
        return dom.score(t, ", ".join(parts)).value

    assert half("math.divmod-v1", 2) == 0.5
    assert half("math.linear2-v1", 1) == 0.5
    assert half("math.quadratic-v1", 2) == 0.5
    assert half("math.stats-v1", 2) == pytest.approx(2 / 3)
    assert half("math.poly_derivative-v1", 2) == pytest.approx(3 / 4)


def test_matmul_entry_credit_requires_shape():
    dom = DOMAINS.get("math.matmul-v1")
    t = sample_task(dom, 0, 1)
    c = t.hidden["c"]
    wrong = [[v + (1 if (i, j) == (0, 0) else 0) for j, v in enumerate(r)] for i, r in enumerate(c)]
    text = "[" + "; ".join(", ".join(map(str, r)) for r in wrong) + "]"
    assert dom.score(t, text).value == pytest.approx(3 / 4)
    assert dom.score(t, text[:-1] + "; 1, 2]").value == 0.0


def test_fraction_unreduced_half_credit():
    dom = DOMAINS.get("math.fraction_arith-v1")
    for seed in range(20):
        t = sample_task(dom, seed, 2)
        ref = dom.solve(t)
        if "/" in ref:
            p, q = ref.split("/")
            assert dom.score(t, f"{int(p) * 2}/{int(q) * 2}").value == 0.5
            return
    pytest.fail("no fractional answer in 20 seeds")


def test_answers_equal_in_value_accepted():
    assert _score("math.percent-v1", 0, 1, lambda t: t.hidden["answer"] + ("0" if "." in t.hidden["answer"] else ".0")) == 1.0
    assert _score("math.base_convert-v1", 0, 3, lambda t: t.hidden["answer"].upper()) == 1.0
    assert _score("math.to_roman-v1", 0, 3, lambda t: t.hidden["answer"].lower()) == 1.0
