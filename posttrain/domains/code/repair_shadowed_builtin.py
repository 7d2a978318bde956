"""Shadowed builtin repair: ``code.repair_shadowed_builtin-v1``.

Trains: noticing that a local variable named like a builtin (``min``, ``len``, ``sum``,
``max``) hides the builtin for the whole function, so a later call of it fails — but only on
the inputs that reach that call. The planted bug renames one local variable to the builtin's
name. Difficulty: 1 = the shadowed call in a final branch, 2 = in a branch inside a loop or
after a filter, 3 = either, among unrelated helper functions.

Reward and probes: as every ``code.repair_*`` domain; see
:mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, ints, repair_domain

TEMPLATES = (
    BugTemplate(
        "describe", 1,
        "describe(xs) returns \"empty\" for [], \"long:\" + str(max(xs) - min(xs)) when xs has "
        "more than {k} elements, else \"short:\" + str(max(xs)).",
        "def describe(xs):\n    if not xs:\n        return \"empty\"\n    biggest = xs[0]\n"
        "    for x in xs:\n        if x > biggest:\n            biggest = x\n"
        "    if len(xs) > {k}:\n        return \"long:\" + str(biggest - min(xs))\n"
        "    return \"short:\" + str(biggest)\n",
        ("biggest", "min"),
        lambda r: {"k": r.randint(2, 4)}, lambda r, c: [ints(r, 1, 7)]),
    BugTemplate(
        "pick_total", 1,
        "pick_total(xs) returns the sum of the elements of xs divisible by {m}, or len(xs) when "
        "there is none.",
        "def pick_total(xs):\n    chosen = [x for x in xs if x % {m} == 0]\n    if chosen:\n"
        "        return sum(chosen)\n    return len(xs)\n",
        ("chosen", "len"),
        lambda r: {"m": r.randint(3, 6)}, lambda r, c: [ints(r, 0, 5, 1, 40)]),
    BugTemplate(
        "row_report", 2,
        "row_report(rows) returns, for each list of integers in rows, max(row) when the row has "
        "at least {k} elements, else sum(row) (0 for an empty row).",
        "def row_report(rows):\n    out = []\n    for row in rows:\n        total = 0\n"
        "        for x in row:\n            total += x\n"
        "        out.append(max(row) if len(row) >= {k} else total)\n    return out\n",
        ("total", "max"),
        lambda r: {"k": r.randint(2, 3)},
        lambda r, c: [[ints(r, 0, 4) for _ in range(r.randint(1, 3))]]),
    BugTemplate(
        "word_sizes", 2,
        "word_sizes(s) returns the sorted list of the lengths of the words of s (split on "
        "whitespace) that are longer than {k} characters, or [0] when there is none.",
        "def word_sizes(s):\n    found = []\n    for w in s.split():\n        if len(w) > {k}:\n"
        "            found.append(len(w))\n    return sorted(found) if found else [0]\n",
        ("found", "sorted"),
        lambda r: {"k": r.randint(2, 3)},
        lambda r, c: [" ".join("".join(r.choice("abxy") for _ in range(r.randint(1, 6)))
                               for _ in range(r.randint(0, 3)))]),
)

RepairShadowedBuiltin = repair_domain("code.repair_shadowed_builtin-v1", "a shadowed builtin",
                                      TEMPLATES, description=__doc__)
