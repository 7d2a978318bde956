"""Mutable default argument repair: ``code.repair_mutable_default-v1``.

Trains: recognising state that leaks between calls through a mutable default argument (a
list or dict created once at definition time). The bug is invisible on the first call and
wrong on later ones: the public examples are called in order, as the hidden tests are (one
process, in order), and the bug's baseline pass rate is measured that way. Difficulty: 1 = a
list default, 2 = a dict default used as a counter, 3 = either, among unrelated helpers.

Reward and probes: as every ``code.repair_*`` domain; see
:mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, ints, repair_domain, word

TEMPLATES = (
    BugTemplate(
        "tag_all", 1,
        "tag_all(words) returns a new list holding \"{p}\" + w for every word w of words, in order "
        "(an optional second argument is a list to extend instead).",
        "def tag_all(words, tags=None):\n    if tags is None:\n        tags = []\n    for w in words:\n"
        "        tags.append(\"{p}\" + w)\n    return tags\n",
        ("tags=None):\n    if tags is None:\n        tags = []\n", "tags=[]):\n"),
        lambda r: {"p": r.choice(["#", "@", "x_", "tag:"])},
        lambda r, c: [[word(r, "abcd", 1, 4) for _ in range(r.randint(0, 3))]]),
    BugTemplate(
        "uniq_sorted", 1,
        "uniq_sorted(xs) returns the distinct elements of xs in increasing order (an optional "
        "second argument is a set of values already seen, to be included too).",
        "def uniq_sorted(xs, seen=None):\n    seen = set() if seen is None else seen\n"
        "    for x in xs:\n        seen.add(x)\n    return sorted(seen)\n",
        ("seen=None):\n    seen = set() if seen is None else seen\n", "seen=set()):\n"),
        lambda r: {}, lambda r, c: [ints(r, 0, 5, 0, 9)]),
    BugTemplate(
        "residue_hist", 2,
        "residue_hist(xs) returns a list of {m} counts: element r counts the elements of xs "
        "whose remainder modulo {m} is r (an optional second argument is a dict of counts to "
        "start from).",
        "def residue_hist(xs, counts=None):\n    counts = {{}} if counts is None else counts\n"
        "    for x in xs:\n        counts[x % {m}] = counts.get(x % {m}, 0) + 1\n"
        "    return [counts.get(r, 0) for r in range({m})]\n",
        ("counts=None):\n    counts = {{}} if counts is None else counts\n", "counts={{}}):\n"),
        lambda r: {"m": r.randint(2, 4)}, lambda r, c: [ints(r, 0, 5, 0, 20)]),
)

RepairMutableDefault = repair_domain("code.repair_mutable_default-v1",
                                     "a mutable default argument", TEMPLATES, description=__doc__)
