"""Scoring helpers of the added long-context domains: strict name lists and set credit.

What it is: :func:`parse_names` reads an answer that is exactly one line of comma-separated
names (each matching a pattern, no repeats); :func:`set_credit` scores a set of names against
the expected set as ``max(0, (hits - false) / expected)``; :func:`order_credit` scores an
ordering by pairwise agreement rescaled so a random order earns 0 on average and the reverse
earns 0.

Guarantees: total functions (never raise); a padded answer (every candidate listed) earns
nothing once the wrong names are at least as many as the right ones, which each domain
arranges; multi-line answers, repeats and malformed names earn 0. Does not: fuzzy matching.
"""

from __future__ import annotations

import re
from typing import Iterable, Sequence

from posttrain.core.types import Score
from posttrain.verifiers.structured import answer_text


def parse_names(answer: str, pattern: str) -> list[str] | None:
    text = answer_text(answer or "")
    if text is None or not text or "\n" in text:
        return None
    items = [p.strip() for p in text.strip("[]").split(",")]
    rx = re.compile(pattern)
    if any(not rx.fullmatch(i) for i in items) or len(set(items)) != len(items):
        return None
    return items


def set_credit(got: Iterable[str], expected: Iterable[str]) -> tuple[float, int, int]:
    """(credit, hits, false) for a set answer; credit = max(0, (hits - false) / |expected|)."""
    exp, g = set(expected), set(got)
    hits, false = len(g & exp), len(g - exp)
    return (max(0.0, (hits - false) / len(exp)) if exp else float(not g)), hits, false


def set_score(answer: str, expected: Sequence[str], pattern: str, version: str) -> Score:
    got = parse_names(answer, pattern)
    if got is None:
        return Score(0.0, components={"set": (0.0, 1.0)}, reason="not one line of distinct comma-separated names",
                     verifier_version=version)
    credit, hits, false = set_credit(got, expected)
    return Score(credit, components={"set": (credit, 1.0)}, passed=hits, total=len(expected),
                 reason=f"{hits}/{len(expected)} right, {false} wrong", verifier_version=version)


def order_credit(got: Sequence[str], expected: Sequence[str]) -> float:
    """Pairwise agreement 2c - 1 clipped at 0 (c = share of pairs in the right order); 0 unless the
    answer is a permutation of the expected items."""
    if sorted(got) != sorted(expected) or len(expected) < 2:
        return float(list(got) == list(expected)) if len(expected) < 2 else 0.0
    pos = {x: i for i, x in enumerate(got)}
    pairs = [(a, b) for i, a in enumerate(expected) for b in expected[i + 1:]]
    c = sum(pos[a] < pos[b] for a, b in pairs) / len(pairs)
    return max(0.0, 2 * c - 1)
