"""The foundation domains' kit: operand sampling, the strict checker, probe hygiene.

Every foundation domain is a :class:`~posttrain.domains.kit.single_turn.SingleTurnDomain` whose
check is :func:`strict_check` (it reads the id from ``task.domain``) and whose exploits go
through :func:`distinct_probes`.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import exact_score
from posttrain.verifiers.text import normalize_text

LENGTHS = {1: 3, 2: 5, 3: 7, 4: 9}  # list / string length per difficulty (sort, reverse)


def operand(rng: random.Random, digits: int) -> int:
    """A non-negative integer with exactly ``digits`` digits (1 digit includes 0)."""
    if digits <= 1:
        return rng.randint(0, 9)
    return rng.randint(10 ** (digits - 1), 10 ** digits - 1)


def strict_score(task: Task, answer: str, version: str) -> Score:
    """Whole-answer exact match, case-sensitive, whitespace collapsed; no partial credit."""
    return exact_score(task, answer, version, case=True)


def strict_check(task: Task, answer: str) -> Score:
    """The single-turn checker of every foundation domain: :func:`strict_score` for ``task.domain``."""
    return strict_score(task, answer, task.domain)


def distinct_probes(task: Task, probes: dict[str, Any]) -> dict[str, Any]:
    """Drop probes that happen to equal the reference (they would rightly score 1.0)."""
    ref = normalize_text(str(task.hidden["answer"]), case=True)
    return {k: v for k, v in probes.items()
            if not isinstance(v, str) or normalize_text(v, case=True) != ref}
