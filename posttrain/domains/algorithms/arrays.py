"""Array and interval domains: order statistics, intervals, two-sum, maximum subarray,
rotation, spiral order, dedupe, next-greater, sliding-window maxima.

List answers are all-or-nothing unless every position is independently checkable with no
constant-answer baseline (rotation of distinct values); verified answers (two-sum, interval
selection) accept any valid solution.

Not covered: streaming or in-place constraints; arrays beyond a few dozen elements.
"""

from __future__ import annotations

import random
import re

from posttrain.core.types import Score, Task
from posttrain.domains.algorithms._kit import (answer_check, answer_reference, int_probes, list_text,
                                               positions_check)
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.structured import answer_text, parse_int_list


def _others(probes: dict[str, list], answer: list) -> dict[str, str]:
    return {k: list_text(v) for k, v in probes.items() if v != answer}


def _kth_smallest(rng: random.Random, difficulty: int) -> Draft:
    """The k-th smallest value of an unsorted array (duplicates count separately).

    Exact integer. Not covered: selection in streams. Probes: the k-th largest, the element
    at position k, off-by-one.
    """
    a = [rng.randint(1, 99) for _ in range(4 + 4 * difficulty)]
    k = rng.randint(2, len(a) - 1)
    prompt = (f"Array: {list_text(a)}.\nWhat is the {k}-th smallest value (counting duplicates, k=1 is the "
              "minimum)? Answer with one integer.")
    return Draft(prompt, answer=sorted(a)[k - 1],
                 hidden={"kth_largest": sorted(a)[-k], "at_k": a[k - 1]})


def _kth_smallest_exploits(task: Task) -> dict[str, str]:
    return int_probes(task.hidden["answer"], kth_largest=task.hidden["kth_largest"], at_k=task.hidden["at_k"])


register_domain(SingleTurnDomain("algorithms.kth_smallest-v1", _kth_smallest, answer_check,
                                 _kth_smallest_exploits, description=_kth_smallest.__doc__))


PAIR = re.compile(r"\[\s*(-?\d+)\s*,\s*(-?\d+)\s*\]")


def parse_intervals(answer: str) -> list[list[int]] | None:
    t = (answer_text(answer) or "").strip()
    pairs = [[int(a), int(b)] for a, b in PAIR.findall(t)]
    rest = PAIR.sub("", t)
    return pairs if pairs and re.fullmatch(r"[\s,\[\]]*", rest) and rest.count("[") <= 1 else None


def intervals_text(iv: list[list[int]]) -> str:
    return ", ".join(f"[{a}, {b}]" for a, b in iv)


def _interval_merge(rng: random.Random, difficulty: int) -> Draft:
    """Merge overlapping closed intervals (touching ones merge too) and list them sorted.

    Exact list. Not covered: open intervals. Probes: the sorted unmerged intervals, the one
    covering span.
    """
    while True:
        iv = []
        for _ in range(3 + 2 * difficulty):
            s = rng.randint(0, 20 * difficulty)
            iv.append([s, s + rng.randint(0, 6)])
        merged: list[list[int]] = []
        for s, e in sorted(iv):
            if merged and s <= merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], e)
            else:
                merged.append([s, e])
        if 1 < len(merged) < len(iv):
            break
    prompt = (f"Intervals: {intervals_text(iv)}.\nMerge all overlapping or touching intervals. Answer with the "
              "merged intervals sorted by start, as [a, b], [c, d], ... nothing else.")
    return Draft(prompt, answer=merged, public={"intervals": iv})


def _interval_merge_reference(task: Task) -> str:
    return intervals_text(task.hidden["answer"])


def _interval_merge_check(task: Task, answer: str) -> Score:
    v = 1.0 if parse_intervals(answer) == task.hidden["answer"] else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=task.domain)


def _interval_merge_exploits(task: Task) -> dict[str, str]:
    iv, m = task.public["intervals"], task.hidden["answer"]
    return {"unmerged": intervals_text(sorted(iv)), "one_span": intervals_text([[m[0][0], m[-1][1]]])}


register_domain(SingleTurnDomain("algorithms.interval_merge-v1", _interval_merge, _interval_merge_check,
                                 _interval_merge_exploits, reference=_interval_merge_reference,
                                 description=_interval_merge.__doc__))


def _interval_schedule(rng: random.Random, difficulty: int) -> Draft:
    """Choose the most pairwise non-overlapping intervals (sharing an endpoint is allowed).

    Verified: distinct interval numbers, no overlaps; the optimal count scores 1, fewer
    0.5 x (count/optimum)². Not covered: weighted intervals. Probes: every interval, a repeated one.
    """
    iv = []
    for _ in range(4 + 3 * difficulty):
        s = rng.randint(0, 25)
        iv.append([s, s + rng.randint(1, 8)])
    pick, end = [], -1
    for i in sorted(range(len(iv)), key=lambda i: iv[i][1]):
        if iv[i][0] >= end:
            pick.append(i + 1)
            end = iv[i][1]
    lines = ", ".join(f"#{i + 1} [{s}, {e}]" for i, (s, e) in enumerate(iv))
    prompt = (f"Intervals: {lines}.\nSelect as many intervals as possible such that no two overlap (they may share "
              "an endpoint). Answer with the selected interval numbers, comma-separated, nothing else.")
    return Draft(prompt, public={"intervals": iv}, hidden={"pick": sorted(pick)})


def _interval_schedule_reference(task: Task) -> str:
    return list_text(task.hidden["pick"])


def _interval_schedule_check(task: Task, answer: str) -> Score:
    got, iv, opt = parse_int_list(answer), task.public["intervals"], len(task.hidden["pick"])
    ok = bool(got) and len(set(got)) == len(got) and all(1 <= i <= len(iv) for i in got)
    if ok:
        sel = sorted(iv[i - 1] for i in got)
        ok = all(a[1] <= b[0] for a, b in zip(sel, sel[1:]))
    v = 0.0 if not ok else (1.0 if len(got) == opt else 0.5 * (len(got) / opt) ** 2)
    return Score(v, components={"count": (v, 1.0)}, verifier_version=task.domain,
                 reason=f"{len(got)}/{opt} intervals" if ok else "invalid selection")


def _interval_schedule_exploits(task: Task) -> dict[str, str]:
    p = task.hidden["pick"]
    return {"all": list_text(range(1, len(task.public["intervals"]) + 1)), "repeated": list_text(p + p[:1])}


register_domain(SingleTurnDomain("algorithms.interval_schedule-v1", _interval_schedule,
                                 _interval_schedule_check, _interval_schedule_exploits,
                                 reference=_interval_schedule_reference,
                                 description=_interval_schedule.__doc__))


def _two_sum(rng: random.Random, difficulty: int) -> Draft:
    """Find two different positions whose values sum to a target (any valid pair counts).

    Verified by arithmetic. Not covered: k-sum. Probes: one position used twice, the two
    values instead of their positions.
    """
    n = 4 + 4 * difficulty
    a = rng.sample(range(1, 60 * difficulty), n)
    i, j = sorted(rng.sample(range(n), 2))
    prompt = (f"Array (positions start at 0): {list_text(a)}.\nFind two different positions whose values sum to "
              f"{a[i] + a[j]}. Answer with the two positions, comma-separated, nothing else.")
    return Draft(prompt, public={"array": a, "target": a[i] + a[j]},
                 hidden={"pair": [i, j]})


def _two_sum_reference(task: Task) -> str:
    return list_text(task.hidden["pair"])


def _two_sum_check(task: Task, answer: str) -> Score:
    got, a = parse_int_list(answer), task.public["array"]
    ok = (got is not None and len(got) == 2 and got[0] != got[1] and all(0 <= g < len(a) for g in got)
          and a[got[0]] + a[got[1]] == task.public["target"])
    v = 1.0 if ok else 0.0
    return Score(v, components={"pair": (v, 1.0)}, verifier_version=task.domain)


def _two_sum_exploits(task: Task) -> dict[str, str]:
    i, j = task.hidden["pair"]
    a = task.public["array"]
    out = {"same_twice": list_text([i, i])}
    vals = [a[i], a[j]]
    if not (all(0 <= x < len(a) for x in vals) and vals[0] != vals[1]
            and a[vals[0]] + a[vals[1]] == task.public["target"]):
        out["values"] = list_text(vals)
    return out


register_domain(SingleTurnDomain("algorithms.two_sum-v1", _two_sum, _two_sum_check, _two_sum_exploits,
                                 reference=_two_sum_reference, description=_two_sum.__doc__))


def _max_subarray(rng: random.Random, difficulty: int) -> Draft:
    """Largest sum of a non-empty contiguous subarray (Kadane).

    Exact integer. Not covered: 2-D variants. Probes: the total sum, the largest element,
    the sum of positives (when they differ).
    """
    a = [rng.randint(-20, 20) for _ in range(4 + 4 * difficulty)]
    best = cur = a[0]
    for x in a[1:]:
        cur = max(x, cur + x)
        best = max(best, cur)
    prompt = (f"Array: {list_text(a)}.\nWhat is the largest sum of a non-empty contiguous subarray? "
              "Answer with one integer.")
    return Draft(prompt, answer=best, public={"array": a})


def _max_subarray_exploits(task: Task) -> dict[str, str]:
    a = task.public["array"]
    return int_probes(task.hidden["answer"], total=sum(a), max_element=max(a),
                      positives=sum(x for x in a if x > 0))


register_domain(SingleTurnDomain("algorithms.max_subarray-v1", _max_subarray, answer_check,
                                 _max_subarray_exploits, description=_max_subarray.__doc__))


def _rotate(rng: random.Random, difficulty: int) -> Draft:
    """Rotate an array of distinct values right by k positions.

    Partial credit per position (values are distinct, so no constant answer earns any).
    Not covered: in-place constraints. Probes: the unrotated array, the left rotation.
    """
    n = 3 + 3 * difficulty
    a = rng.sample(range(1, 100), n)
    k = rng.choice([x for x in range(1, 3 * n) if x % n and (2 * x) % n])
    r = k % n
    prompt = (f"Array: {list_text(a)}.\nRotate it right by {k} positions (the last element moves to the front "
              "each step). Answer with the rotated array, comma-separated, nothing else.")
    return Draft(prompt, answer=a[-r:] + a[:-r], public={"array": a, "k": r})


def _rotate_exploits(task: Task) -> dict[str, str]:
    a, r = task.public["array"], task.public["k"]
    return _others({"unrotated": a, "rotated_left": a[r:] + a[:r]}, task.hidden["answer"])


register_domain(SingleTurnDomain("algorithms.rotate-v1", _rotate, positions_check, _rotate_exploits,
                                 reference=answer_reference, description=_rotate.__doc__))


def _spiral(rng: random.Random, difficulty: int) -> Draft:
    """Read a matrix in clockwise spiral order from the top-left corner.

    Exact list. Not covered: counter-clockwise variants. Probes: row-major order, the
    transpose's spiral.
    """
    r, c = 1 + difficulty, 2 + difficulty
    m = [[rng.randint(1, 99) for _ in range(c)] for _ in range(r)]
    out, grid = [], [row[:] for row in m]
    while grid:
        out += grid.pop(0)
        grid = [list(x) for x in zip(*grid)][::-1]
    prompt = ("Matrix:\n" + "\n".join(" ".join(f"{x:2d}" for x in row) for row in m) + "\nList its elements "
              "in clockwise spiral order starting at the top-left, comma-separated, nothing else.")
    return Draft(prompt, answer=out, public={"matrix": m})


def _spiral_exploits(task: Task) -> dict[str, str]:
    m = task.public["matrix"]
    return _others({"row_major": [x for row in m for x in row],
                    "column_major": [x for col in zip(*m) for x in col]}, task.hidden["answer"])


register_domain(SingleTurnDomain("algorithms.spiral-v1", _spiral, answer_check, _spiral_exploits,
                                 reference=answer_reference, description=_spiral.__doc__))


def _dedupe(rng: random.Random, difficulty: int) -> Draft:
    """Remove duplicates, keeping the first occurrence of each value in its original order.

    Exact list. Not covered: dedupe by key. Probes: sorted distinct values, the last
    occurrences instead of the first.
    """
    a = [rng.randint(1, 4 + 4 * difficulty) for _ in range(5 + 4 * difficulty)]
    seen, out = set(), []
    for x in a:
        if x not in seen:
            seen.add(x)
            out.append(x)
    prompt = (f"List: {list_text(a)}.\nRemove duplicates keeping the first occurrence of each value, in original "
              "order. Answer comma-separated, nothing else.")
    return Draft(prompt, answer=out, public={"array": a})


def _dedupe_exploits(task: Task) -> dict[str, str]:
    a = task.public["array"]
    last = list(dict.fromkeys(a[::-1]))[::-1]
    return _others({"sorted": sorted(set(a)), "last_occurrence": last, "original": a}, task.hidden["answer"])


register_domain(SingleTurnDomain("algorithms.dedupe-v1", _dedupe, answer_check, _dedupe_exploits,
                                 reference=answer_reference, description=_dedupe.__doc__))


def _next_greater(rng: random.Random, difficulty: int) -> Draft:
    """For each element, the first larger element to its right, or -1 (monotonic stack).

    Exact list. Not covered: circular arrays. Probes: all -1, the maximum to the right.
    """
    a = [rng.randint(1, 30) for _ in range(3 + 3 * difficulty)]
    out = [next((y for y in a[i + 1:] if y > x), -1) for i, x in enumerate(a)]
    prompt = (f"Array: {list_text(a)}.\nFor each element give the first element to its right that is strictly "
              "larger, or -1 if none. Answer with the list, comma-separated, nothing else.")
    return Draft(prompt, answer=out, public={"array": a})


def _next_greater_exploits(task: Task) -> dict[str, str]:
    a = task.public["array"]
    right_max = [max([y for y in a[i + 1:] if y > x], default=-1) for i, x in enumerate(a)]
    return _others({"all_minus_one": [-1] * len(a), "max_to_right": right_max}, task.hidden["answer"])


register_domain(SingleTurnDomain("algorithms.next_greater-v1", _next_greater, answer_check,
                                 _next_greater_exploits, reference=answer_reference,
                                 description=_next_greater.__doc__))


def _sliding_max(rng: random.Random, difficulty: int) -> Draft:
    """Maximum of every window of width w sliding over an array.

    Exact list. Not covered: minimum/median windows. Probes: window minima, the global
    maximum repeated.
    """
    a = [rng.randint(1, 50) for _ in range(5 + 3 * difficulty)]
    w = rng.randint(2, 2 + difficulty)
    out = [max(a[i:i + w]) for i in range(len(a) - w + 1)]
    prompt = (f"Array: {list_text(a)}.\nGive the maximum of every window of {w} consecutive elements, from left "
              "to right, comma-separated, nothing else.")
    return Draft(prompt, answer=out, public={"array": a, "w": w})


def _sliding_max_exploits(task: Task) -> dict[str, str]:
    a, w = task.public["array"], task.public["w"]
    n = len(a) - w + 1
    return _others({"minima": [min(a[i:i + w]) for i in range(n)], "global_max": [max(a)] * n},
                   task.hidden["answer"])


register_domain(SingleTurnDomain("algorithms.sliding_max-v1", _sliding_max, answer_check,
                                 _sliding_max_exploits, reference=answer_reference,
                                 description=_sliding_max.__doc__))
