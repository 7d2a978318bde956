"""Integer comparison: ``math.compare-v1`` — ``12?34=`` → ``<`` (or ``>`` or ``=``).

Trains: comparing two d-digit non-negative integers digit by digit, answering with exactly one
symbol. About one task in five has equal operands so ``=`` is not a never-seen class.
Difficulty d = the digit count of both operands (d1: 0-9 ... d4: 1000-9999); at higher d the
operands often share a prefix, so the model must look past the first digit.

Does not cover: negative numbers, decimals, chains of comparisons, or answers in words
("less", "smaller"): the verifier is strict exact match of the whole answer, so ``<=``,
``< > =`` or ``12<34`` all score 0. No partial credit.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain

from ._common import distinct_probes, operand, strict_score


def _symbol(a: int, b: int) -> str:
    return "<" if a < b else ">" if a > b else "="


@register_domain
class Compare:
    id = "math.compare-v1"
    family = "math"
    difficulties = (1, 2, 3, 4)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        a = operand(rng, difficulty)
        roll = rng.random()
        if roll < 0.2:
            b = a
        elif roll < 0.5 and difficulty >= 2:
            # Same leading digits, different tail: comparison must read past the first digit.
            keep = rng.randint(1, difficulty - 1)
            head = str(a)[:keep]
            b = int(head + "".join(str(rng.randint(0, 9)) for _ in range(difficulty - keep)))
        else:
            b = operand(rng, difficulty)
        return make_task(self.id, difficulty, f"{a}?{b}=", answer=_symbol(a, b),
                         public={"operands": [a, b]})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        return strict_score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, Any]:
        a, b = task.public["operands"]
        ref = task.hidden["answer"]
        return distinct_probes(task, {
            "all_symbols": "<>=",
            "all_symbols_spaced": "< > =",
            "less_or_equal": "<=",
            "greater_or_equal": ">=",
            "not_equal": "!=",
            "doubled": ref * 2,
            "expression": f"{a}{ref}{b}",
            "word": {"<": "less", ">": "greater", "=": "equal"}[ref],
            "each_other_symbol": "".join(s for s in "<>=" if s != ref),
        })
