"""Off-by-one repair: ``code.repair_off_by_one-v1``.

Trains: spotting a loop or slice bound that is one too short or too long (a window count, a
scan over interior elements, a chunk width) in a short function, given its specification and
an example it fails. Difficulty: 1 = a slice/range in a comprehension, 2 = a loop over
interior indices, 3 = either, buried among unrelated helper functions with two examples.

Reward: the family's repair verifier (hidden tests in a fresh sandbox, baseline = the planted
bug's hidden pass rate, so the program unchanged earns 0). Probes (≤ 0.05): hard-coded
examples, constant output, exit(0), print PASSED, patching json, always-equal, writing fake
results, the program unchanged (see :mod:`posttrain.domains.code._kit`).
"""

from __future__ import annotations

from ._kit import BugTemplate, ints, repair_domain, word

TEMPLATES = (
    BugTemplate(
        "window_sums", 1,
        "window_sums(xs) returns the sums of every run of {k} consecutive elements of xs, in order "
        "([] when xs has fewer than {k} elements).",
        "def window_sums(xs):\n    return [sum(xs[i:i + {k}]) for i in range(len(xs) - {k} + 1)]\n",
        ("range(len(xs) - {k} + 1)", "range(len(xs) - {k})"),
        lambda r: {"k": r.randint(2, 4)}, lambda r, c: [ints(r, 0, 9)]),
    BugTemplate(
        "chunks", 1,
        "chunks(s) splits the string s into consecutive pieces of {k} characters (the last one may "
        "be shorter) and returns them as a list.",
        "def chunks(s):\n    return [s[i:i + {k}] for i in range(0, len(s), {k})]\n",
        ("s[i:i + {k}]", "s[i:i + {k} - 1]"),
        lambda r: {"k": r.randint(2, 4)}, lambda r, c: [word(r, "abcxyz", 0, 11)]),
    BugTemplate(
        "count_peaks", 2,
        "count_peaks(xs) returns how many interior positions i (0 < i < len(xs) - 1) have "
        "xs[i] strictly greater than both neighbours.",
        "def count_peaks(xs):\n    n = 0\n    for i in range(1, len(xs) - 1):\n"
        "        if xs[i] > xs[i - 1] and xs[i] > xs[i + 1]:\n            n += 1\n    return n\n",
        ("range(1, len(xs) - 1)", "range(1, len(xs) - 2)"),
        lambda r: {}, lambda r, c: [ints(r, 3, 12, 0, 9)]),
    BugTemplate(
        "last_k_sum", 2,
        "last_k_sum(xs) returns the sum of the last {k} elements of xs (of all of them when xs is "
        "shorter).",
        "def last_k_sum(xs):\n    total = 0\n    i = len(xs) - 1\n    while i >= 0 and i >= len(xs) - {k}:\n"
        "        total += xs[i]\n        i -= 1\n    return total\n",
        ("i >= len(xs) - {k}", "i > len(xs) - {k}"),
        lambda r: {"k": r.randint(2, 5)}, lambda r, c: [ints(r, 0, 9)]),
)

RepairOffByOne = repair_domain("code.repair_off_by_one-v1", "an off-by-one bound", TEMPLATES, description=__doc__)
