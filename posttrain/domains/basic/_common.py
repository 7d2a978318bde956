"""Shared pieces of the foundation domains: operand sampling, the strict scorer, probe hygiene."""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import exact_score
from posttrain.verifiers.text import normalize_text


def operand(rng: random.Random, digits: int) -> int:
    """A non-negative integer with exactly ``digits`` digits (1 digit includes 0)."""
    if digits <= 1:
        return rng.randint(0, 9)
    return rng.randint(10 ** (digits - 1), 10 ** digits - 1)


def strict_score(task: Task, answer: str, version: str) -> Score:
    """Whole-answer exact match, case-sensitive, whitespace collapsed; no partial credit."""
    return exact_score(task, answer, version, case=True)


def distinct_probes(task: Task, probes: dict[str, Any]) -> dict[str, Any]:
    """Drop probes that happen to equal the reference (they would rightly score 1.0)."""
    ref = normalize_text(str(task.hidden["answer"]), case=True)
    return {k: v for k, v in probes.items()
            if not isinstance(v, str) or normalize_text(v, case=True) != ref}
