"""The logic family: reference answers score 1, wrong ones less, partial credit where claimed,
determinism, and the shared conformance check (probes at the floor)."""

import pytest
from family_checks import check_conformance, check_reference_and_probes, family_ids, task_of

from posttrain.domains.base import DOMAINS, sample_task

IDS = family_ids("logic")


def test_family_size():
    assert len(IDS) >= 20, IDS


@pytest.mark.parametrize("did", IDS)
def test_reference_scores_one_and_wrong_scores_less(did):
    check_reference_and_probes(did)


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    check_conformance(did)


def test_truth_table_partial_credit():
    dom, t = task_of("logic.truth_table-v1")
    ref = dom.solve(t)
    one_off = ("1" if ref[0] == "0" else "0") + ref[1:]
    assert 0 < dom.score(t, one_off).value < 1


def test_zebra_partial_credit_per_cell():
    dom, t = task_of("logic.zebra-v1", d=3)
    lines = dom.solve(t).splitlines()
    a, b = lines[0].split(": ")[1].split(", "), lines[1].split(": ")[1].split(", ")
    a[0], b[0] = b[0], a[0]  # swap one category between two houses: 2 cells wrong
    lines[0], lines[1] = "house 1: " + ", ".join(a), "house 2: " + ", ".join(b)
    v = dom.score(t, "\n".join(lines)).value
    assert v == pytest.approx(1 - 2 / 12)


def test_ordering_partial_and_permutation_required():
    dom, t = task_of("logic.ordering-v1")
    o = t.hidden["answer"]
    swapped = [o[1], o[0]] + o[2:]
    assert 0 < dom.score(t, ", ".join(swapped)).value < 1
    assert dom.score(t, ", ".join(o[:-1])).value == 0


def test_seating_partial_credit_counts_constraints():
    dom = DOMAINS.get("logic.seating-v1")
    for seed in range(10):
        t = sample_task(dom, seed, 3)
        order = t.hidden["order"][::-1]
        s = dom.score(t, ", ".join(order))
        assert s.value == (1.0 if s.passed == s.total else 0.5 * s.passed / s.total)


def test_schedule_valid_but_slow_gets_partial():
    dom, t = task_of("logic.precedence_schedule-v1")
    start = dict(t.hidden["start"])
    last = max(start, key=lambda j: start[j] + t.public["dur"][j])
    start[last] += 5
    v = dom.score(t, ", ".join(f"{j}={s}" for j, s in start.items())).value
    assert 0 < v < 0.25


def test_water_jugs_extra_step_lowers_score():
    dom, t = task_of("logic.water_jugs-v1")
    ref = dom.solve(t)
    v = dom.score(t, "empty A\n" + ref).value
    assert v == pytest.approx(len(ref.splitlines()) / (len(ref.splitlines()) + 1))
    assert dom.score(t, "fill A\npour A A\n" + ref).value == 0


def test_verified_domains_accept_other_valid_answers():
    dom, t = task_of("logic.magic_square-v1", d=3)
    assert dom.score(t, dom.solve(t)).value == 1
    dom, t = task_of("logic.equivalence-v1", seed=1)
    if not t.hidden["equivalent"]:
        from posttrain.domains.logic.propositional import evaluate, rows
        f, g, names = t.public["f"], t.public["g"], t.public["vars"]
        wits = [r for r in rows(names) if evaluate(f, r) != evaluate(g, r)]
        for r in wits:
            assert dom.score(t, ", ".join(f"{n}={int(r[n])}" for n in names)).value == 1


def test_nonogram_one_cell_flip_partial():
    dom, t = task_of("logic.nonogram-v1")
    rows_ = dom.solve(t).splitlines()
    rows_[0] = ("." if rows_[0][0] == "#" else "#") + rows_[0][1:]
    assert 0 < dom.score(t, "\n".join(rows_)).value <= 0.5


def test_sat_any_satisfying_assignment_counts():
    dom, t = task_of("logic.sat_assign-v1", d=1)
    n, clauses = t.public["n"], t.public["clauses"]
    import itertools
    for bits in itertools.product([0, 1], repeat=n):
        env = {i + 1: b for i, b in enumerate(bits)}
        sat = all(any((l > 0) == bool(env[abs(l)]) for l in c) for c in clauses)
        ans = ", ".join(f"x{i}={b}" for i, b in env.items())
        assert dom.score(t, ans).value == (1.0 if sat else 0.0)
