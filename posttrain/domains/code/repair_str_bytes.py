"""String/bytes confusion repair: ``code.repair_str_bytes-v1``.

Trains: telling characters from UTF-8 bytes: a byte length computed as a character count, a
byte checksum computed from code points, a byte-budget truncation that counts characters.
Inputs mix ASCII with two-, three- and four-byte characters, so the bug shows only on some.
Difficulty: 1 = one expression, 2 = a loop over characters with a byte budget, 3 = either,
among unrelated helper functions.

Reward and probes: as every ``code.repair_*`` domain; see
:mod:`posttrain.domains.code._kit`.
"""

from __future__ import annotations

from ._kit import BugTemplate, repair_domain

_CHARS = "abcdxyz" * 3 + "éß€日ü😀"


def _text(r, lo=0, hi=7):
    return "".join(r.choice(_CHARS) for _ in range(r.randint(lo, hi)))


TEMPLATES = (
    BugTemplate(
        "utf8_size", 1,
        "utf8_size(s) returns the number of bytes of s encoded as UTF-8, plus {k}.",
        "def utf8_size(s):\n    return len(s.encode(\"utf-8\")) + {k}\n",
        ("len(s.encode(\"utf-8\"))", "len(s)"),
        lambda r: {"k": r.randint(1, 3)}, lambda r, c: [_text(r)]),
    BugTemplate(
        "byte_checksum", 1,
        "byte_checksum(s) returns the sum of the bytes of the UTF-8 encoding of s, modulo {m}.",
        "def byte_checksum(s):\n    return sum(s.encode(\"utf-8\")) % {m}\n",
        ("sum(s.encode(\"utf-8\"))", "sum(ord(c) for c in s)"),
        lambda r: {"m": r.choice([251, 256, 1000])}, lambda r, c: [_text(r)]),
    BugTemplate(
        "fit_bytes", 2,
        "fit_bytes(s) returns the longest prefix of s (whole characters) whose UTF-8 encoding "
        "is at most {n} bytes long.",
        "def fit_bytes(s):\n    out = \"\"\n    used = 0\n    for ch in s:\n"
        "        size = len(ch.encode(\"utf-8\"))\n        if used + size > {n}:\n            break\n"
        "        out += ch\n        used += size\n    return out\n",
        ("len(ch.encode(\"utf-8\"))", "len(ch)"),
        lambda r: {"n": r.randint(3, 8)}, lambda r, c: [_text(r, 2, 9)]),
)

RepairStrBytes = repair_domain("code.repair_str_bytes-v1", "strings confused with bytes",
                               TEMPLATES, description=__doc__)
