"""Integer vs float division repair: ``code.repair_division-v1``.

Trains: telling ``/`` (true division, a float) from ``//`` (floor division, an int): a mean
truncated by ``//``, a median index computed with ``/`` (a float index), a per-bucket share.
Difficulty: 1 = one expression, 2 = a division inside index arithmetic or a loop, 3 = either,
among unrelated helper functions with two examples.

Reward and probes: as every ``code.repair_*`` domain (numbers compare as JSON values, floats
to 1e-9 relative); see :mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, ints, repair_domain

TEMPLATES = (
    BugTemplate(
        "mean", 1,
        "mean(xs) returns the arithmetic mean of the integer list xs as a float (0.0 for []).",
        "def mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n",
        ("sum(xs) / len(xs)", "sum(xs) // len(xs)"),
        lambda r: {}, lambda r, c: [ints(r, 0, 7)]),
    BugTemplate(
        "scaled", 1,
        "scaled(xs) returns the list of x * {a} / {b} (true division, floats) for x in xs.",
        "def scaled(xs):\n    return [x * {a} / {b} for x in xs]\n",
        ("x * {a} / {b}", "x * {a} // {b}"),
        lambda r: {"a": r.randint(2, 5), "b": r.choice([3, 4, 7])}, lambda r, c: [ints(r, 1, 5)]),
    BugTemplate(
        "median", 2,
        "median(xs) returns the median of the non-empty integer list xs: the middle element of "
        "the sorted list, or the mean of the two middle ones (a float) when the length is even.",
        "def median(xs):\n    s = sorted(xs)\n    n = len(s)\n    if n % 2:\n        return s[n // 2]\n"
        "    return (s[n // 2 - 1] + s[n // 2]) / 2\n",
        ("        return s[n // 2]\n", "        return s[n / 2]\n"),
        lambda r: {}, lambda r, c: [ints(r, 1, 8, 0, 50)]),
    BugTemplate(
        "bucket_of", 2,
        "bucket_of(xs) returns, for each x of xs (0 <= x < 100), the index of its bucket when "
        "0..99 is cut into {k} equal-width buckets: the integer x * {k} // 100.",
        "def bucket_of(xs):\n    out = []\n    for x in xs:\n        out.append(x * {k} // 100)\n"
        "    return out\n",
        ("x * {k} // 100", "x * {k} / 100"),
        lambda r: {"k": r.choice([3, 6, 7, 9])}, lambda r, c: [ints(r, 1, 5, 0, 99)]),
)

RepairDivision = repair_domain("code.repair_division-v1", "integer vs float division", TEMPLATES, description=__doc__)
