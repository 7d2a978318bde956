"""The algorithms family: reference answers score 1, wrong ones less, partial credit where claimed,
determinism, and the shared conformance check (probes at the floor)."""

import pytest
from family_checks import check_conformance, check_reference_and_probes, family_ids, task_of

from posttrain.domains.base import DOMAINS, sample_task

IDS = family_ids("algorithms")


def test_family_size():
    assert len(IDS) >= 25, IDS


@pytest.mark.parametrize("did", IDS)
def test_reference_scores_one_and_wrong_scores_less(did):
    check_reference_and_probes(did)


@pytest.mark.parametrize("did", IDS)
def test_conformance(did):
    check_conformance(did)


def test_maze_longer_path_gets_partial_and_walls_fail():
    dom, t = task_of("algorithms.maze_path-v1")
    ref = dom.solve(t)
    # a detour that stays on open cells: step back and forth along the first move
    back = {"U": "D", "D": "U", "L": "R", "R": "L"}[ref[0]]
    v = dom.score(t, ref[0] + back + ref).value
    assert v == pytest.approx(0.5 * len(ref) / (len(ref) + 2))
    assert dom.score(t, "U" + ref).value == 0  # leaves the grid


def test_topo_any_valid_order_and_partial():
    dom, t = task_of("algorithms.topo_order-v1", d=3)
    n, edges = t.public["n"], t.public["edges"]
    indeg = {v: 0 for v in range(n)}
    for u, v in edges:
        indeg[v] += 1
    order, ready = [], sorted(v for v in range(n) if indeg[v] == 0)[::-1]  # another valid order (Kahn, max first)
    while ready:
        u = ready.pop(0)
        order.append(u)
        for a, b in edges:
            if a == u:
                indeg[b] -= 1
                if indeg[b] == 0:
                    ready.append(b)
        ready.sort(reverse=True)
    assert dom.score(t, ", ".join(map(str, order))).value == 1
    swapped = list(order)
    u, v = edges[0]
    i, j = swapped.index(u), swapped.index(v)
    swapped[i], swapped[j] = swapped[j], swapped[i]
    assert 0 < dom.score(t, ", ".join(map(str, swapped))).value <= 0.5


def test_knapsack_feasible_suboptimal_partial_and_overweight_zero():
    dom, t = task_of("algorithms.knapsack-v1", d=3)
    pick = t.hidden["pick"]
    v = dom.score(t, ", ".join(map(str, pick[:-1]))).value
    assert 0 <= v < 0.5
    assert dom.score(t, ", ".join(map(str, range(1, len(t.public["items"]) + 1)))).value == 0


def test_lis_other_optimal_subsequence_accepted():
    dom = DOMAINS.get("algorithms.lis-v1")
    from posttrain.domains.algorithms.dp import is_subsequence
    import itertools
    for seed in range(5):
        t = sample_task(dom, seed, 1)
        a, opt = t.public["array"], t.hidden["optimum"]
        for comb in itertools.combinations(range(len(a)), opt):
            seq = [a[i] for i in comb]
            if all(x < y for x, y in zip(seq, seq[1:])):
                assert dom.score(t, ", ".join(map(str, seq))).value == 1
        assert is_subsequence(t.hidden["seq"], a)


def test_rotate_partial_credit_per_position():
    dom, t = task_of("algorithms.rotate-v1")
    ans = list(t.hidden["answer"])
    ans[0], ans[1] = ans[1], ans[0]
    assert dom.score(t, ", ".join(map(str, ans))).value == pytest.approx(1 - 2 / len(ans))


def test_union_find_partial_above_baseline():
    dom = DOMAINS.get("algorithms.union_find-v1")
    t = sample_task(dom, 0, 3)
    ans = list(t.hidden["answer"])
    k = len(ans)
    s_ref = dom.score(t, ", ".join(ans)).value
    ans[0] = "yes" if ans[0] == "no" else "no"
    s_one = dom.score(t, ", ".join(ans)).value
    assert s_ref == 1 and s_one < 1
    assert dom.score(t, ", ".join(["yes"] * k)).value == 0


def test_two_sum_and_cycle_accept_any_valid_answer():
    dom, t = task_of("algorithms.two_sum-v1")
    a, target = t.public["array"], t.public["target"]
    for i in range(len(a)):
        for j in range(len(a)):
            if i != j and a[i] + a[j] == target:
                assert dom.score(t, f"{i}, {j}").value == 1
    dom = DOMAINS.get("algorithms.cycle_detect-v1")
    for seed in range(8):
        t = sample_task(dom, seed, 2)
        ref = dom.solve(t)
        if ref != "none":
            c = ref.split(", ")
            rotated = ", ".join(c[1:] + c[:1])
            assert dom.score(t, rotated).value == 1
