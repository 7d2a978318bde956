"""Comparing two d-digit integers, answering one symbol: ``12?34=`` → ``<`` (``math.compare-v1``).

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

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

from ._kit import distinct_probes, operand, strict_check


def _symbol(a: int, b: int) -> str:
    return "<" if a < b else ">" if a > b else "="


def _compare(rng: random.Random, difficulty: int) -> Draft:
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
    return Draft(f"{a}?{b}=", answer=_symbol(a, b),
                 public={"operands": [a, b]})


def _compare_exploits(task: Task) -> dict[str, Any]:
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


register_domain(SingleTurnDomain("math.compare-v1", _compare, strict_check, _compare_exploits,
                                 description=__doc__, difficulties=(1, 2, 3, 4)))
