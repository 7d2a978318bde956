"""Swallowed exception repair: ``code.repair_swallowed_exception-v1``.

Trains: exception handling at the wrong granularity: a ``try`` around a whole loop (one bad
item silently drops every later one), a handler that catches too much and returns a default.
The reference handles the error per item (or checks before acting). Difficulty: 1 = parsing
a list of strings, 2 = a table lookup or a running computation, 3 = either, among unrelated
helper functions.

Reward and probes: as every ``code.repair_*`` domain; see
:mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, repair_domain

_TOKENS = ("1", "7", "-3", "12", "x", "4a", "", "05", "2.5", "-0", "99")

TEMPLATES = (
    BugTemplate(
        "parse_ints", 1,
        "parse_ints(items) returns the integers int(s) of the strings s of items that are valid "
        "integer literals, in order, skipping the others.",
        "def parse_ints(items):\n    out = []\n    for s in items:\n        try:\n"
        "            out.append(int(s))\n        except ValueError:\n            continue\n"
        "    return out\n",
        ("    for s in items:\n        try:\n            out.append(int(s))\n"
         "        except ValueError:\n            continue\n",
         "    try:\n        for s in items:\n            out.append(int(s))\n"
         "    except Exception:\n        pass\n"),
        lambda r: {}, lambda r, c: [[r.choice(_TOKENS) for _ in range(r.randint(1, 5))]]),
    BugTemplate(
        "lookup_all", 2,
        "lookup_all(keys) returns, for each key, TABLE[key] * 2 where TABLE = {table!r}, or -1 "
        "for a key not in TABLE.",
        "TABLE = {table!r}\n\n\ndef lookup_all(keys):\n    out = []\n    for k in keys:\n"
        "        if k in TABLE:\n            out.append(TABLE[k] * 2)\n        else:\n"
        "            out.append(-1)\n    return out\n",
        ("    for k in keys:\n        if k in TABLE:\n            out.append(TABLE[k] * 2)\n"
         "        else:\n            out.append(-1)\n",
         "    try:\n        for k in keys:\n            out.append(TABLE[k] * 2)\n"
         "    except Exception:\n        return out\n"),
        lambda r: {"table": {k: r.randint(1, 9) for k in r.sample("abcdefg", 4)}},
        lambda r, c: [[r.choice("abcdefg") for _ in range(r.randint(1, 5))]]),
    BugTemplate(
        "safe_means", 2,
        "safe_means(rows) returns, for each list of integers in rows, its mean rounded to 2 "
        "digits, or None for an empty row.",
        "def safe_means(rows):\n    out = []\n    for row in rows:\n        try:\n"
        "            out.append(round(sum(row) / len(row), 2))\n"
        "        except ZeroDivisionError:\n            out.append(None)\n    return out\n",
        ("    for row in rows:\n        try:\n            out.append(round(sum(row) / len(row), 2))\n"
         "        except ZeroDivisionError:\n            out.append(None)\n",
         "    try:\n        for row in rows:\n            out.append(round(sum(row) / len(row), 2))\n"
         "    except Exception:\n        out.append(None)\n"),
        lambda r: {},
        lambda r, c: [[[r.randint(0, 9) for _ in range(r.choice([0, 1, 2, 3]))]
                       for _ in range(r.randint(1, 4))]]),
)

RepairSwallowedException = repair_domain("code.repair_swallowed_exception-v1",
                                         "an exception handled at the wrong place", TEMPLATES, description=__doc__)
