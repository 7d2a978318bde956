"""Missing edge case repair: ``code.repair_empty_input-v1``.

Trains: adding the guard a function needs for empty or degenerate input (an empty list, a
one-element list, an empty word between two spaces): the planted bug deletes or weakens it,
so the program crashes (or returns the wrong thing) on exactly those inputs. Inputs are drawn
so that a third to a half of them are degenerate. Difficulty: 1 = a missing guard at the top (an empty list),
2 = an edge case inside a loop, 3 = either, among unrelated helper functions.

Reward and probes: as every ``code.repair_*`` domain; see
:mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, repair_domain, word


def _short_list(r, lo=-9, hi=30):
    return [r.randint(lo, hi) for _ in range(r.choice([0, 0, 1, 1, 2, 3, 4, 5, 6]))]


TEMPLATES = (
    BugTemplate(
        "max_step", 1,
        "max_step(xs) returns the largest absolute difference between two consecutive elements "
        "of xs, or 0 when xs has fewer than two elements.",
        "def max_step(xs):\n    if len(xs) < 2:\n        return 0\n"
        "    return max(abs(b - a) for a, b in zip(xs, xs[1:]))\n",
        ("    if len(xs) < 2:\n        return 0\n", ""),
        lambda r: {}, lambda r, c: [_short_list(r)]),
    BugTemplate(
        "mean_or", 1,
        "mean_or(xs, d) returns the mean of the integer list xs rounded to 2 digits, or d when "
        "xs is empty.",
        "def mean_or(xs, d):\n    if not xs:\n        return d\n    return round(sum(xs) / len(xs), 2)\n",
        ("    if not xs:\n        return d\n", ""),
        lambda r: {},
        lambda r, c: [[r.randint(-9, 30) for _ in range(r.choice([0, 0, 0, 1, 2, 3, 4]))],
                      r.randint(-5, 5)]),
    BugTemplate(
        "cap_words", 2,
        "cap_words(s) splits s on single spaces (s.split(\" \"), so empty words are kept), "
        "upper-cases the first character of every non-empty word and joins them back with "
        "single spaces.",
        "def cap_words(s):\n    return \" \".join(w[:1].upper() + w[1:] for w in s.split(\" \"))\n",
        ("w[:1].upper()", "w[0].upper()"),
        lambda r: {}, lambda r, c: [r.choice([" ", "  "]).join(word(r, "abcz", 0, 4)
                                                              for _ in range(r.randint(1, 3)))]),
    BugTemplate(
        "ratios", 2,
        "ratios(xs) returns, for each consecutive pair (a, b) of xs, b / a rounded to 3 digits, "
        "or None for a pair whose a is 0.",
        "def ratios(xs):\n    out = []\n    for a, b in zip(xs, xs[1:]):\n"
        "        out.append(round(b / a, 3) if a != 0 else None)\n    return out\n",
        ("round(b / a, 3) if a != 0 else None", "round(b / a, 3)"),
        lambda r: {}, lambda r, c: [[r.choice([0, 0, 1, 2, 3, 5, -4]) for _ in range(r.randint(2, 5))]]),
)

RepairEmptyInput = repair_domain("code.repair_empty_input-v1", "a missing edge case", TEMPLATES, description=__doc__)
