"""Wrong comparison operator repair: ``code.repair_comparison-v1``.

Trains: finding a comparison that is strict where it should not be (or the reverse) on
boundary values: an inclusive range count, the first strict descent, a threshold filter, a
tie-break. Difficulty: 1 = a single comparison in a comprehension, 2 = a comparison inside a
loop with state, 3 = either, buried among unrelated helper functions with two examples.

Reward and probes: as every ``code.repair_*`` domain (hidden tests, baseline = the bug's pass
rate; hard-coding, constant, exit(0), PASSED, json patching, always-equal, fake results,
unchanged program ≤ 0.05); see :mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, ints, repair_domain

TEMPLATES = (
    BugTemplate(
        "count_between", 1,
        "count_between(xs) returns how many elements x of xs satisfy {lo} <= x <= {hi}.",
        "def count_between(xs):\n    return sum(1 for x in xs if {lo} <= x <= {hi})\n",
        ("{lo} <= x", "{lo} < x"),
        lambda r: (lambda lo: {"lo": lo, "hi": lo + r.randint(2, 5)})(r.randint(-3, 5)),
        lambda r, c: [ints(r, 0, 9, c["lo"] - 2, c["hi"] + 2)]),
    BugTemplate(
        "at_least", 1,
        "at_least(xs) returns the elements of xs that are greater than or equal to {t}, in order.",
        "def at_least(xs):\n    return [x for x in xs if x >= {t}]\n",
        ("x >= {t}", "x > {t}"),
        lambda r: {"t": r.randint(0, 6)}, lambda r, c: [ints(r, 0, 8, c["t"] - 3, c["t"] + 3)]),
    BugTemplate(
        "first_drop", 2,
        "first_drop(xs) returns the smallest index i >= 1 with xs[i] < xs[i - 1] (a strict "
        "drop), or -1 when there is none.",
        "def first_drop(xs):\n    for i in range(1, len(xs)):\n        if xs[i] < xs[i - 1]:\n"
        "            return i\n    return -1\n",
        ("xs[i] < xs[i - 1]", "xs[i] <= xs[i - 1]"),
        lambda r: {}, lambda r, c: [sorted(ints(r, 2, 7, 0, 4)) + ints(r, 0, 3, 0, 4)]),
    BugTemplate(
        "argmax_first", 2,
        "argmax_first(xs) returns the index of the first occurrence of the largest element of "
        "the non-empty list xs.",
        "def argmax_first(xs):\n    best = 0\n    for i in range(1, len(xs)):\n"
        "        if xs[i] > xs[best]:\n            best = i\n    return best\n",
        ("xs[i] > xs[best]", "xs[i] >= xs[best]"),
        lambda r: {}, lambda r, c: [ints(r, 1, 8, 0, 3)]),
)

RepairComparison = repair_domain("code.repair_comparison-v1", "a wrong comparison operator",
                                 TEMPLATES, description=__doc__)
