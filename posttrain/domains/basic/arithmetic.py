"""Integer arithmetic on d-digit operands: ``math.add-v1``, ``math.sub-v1``, ``math.mul-v1``.

Trains: carrying (add), borrowing and the sign of a negative result (sub), and long
multiplication (mul), written as a compact prompt ``12+34=`` whose answer is the plain decimal
result ``46`` (``-22`` for ``12-34=``). Difficulty d = the digit count of both operands
(d1: 0-9, d2: 10-99, d3: 100-999, d4: 1000-9999).

Does not cover: decimals, fractions, operator precedence, word problems, more than two
operands, or answers written any other way (``046``, ``+46``, ``46.0``, ``forty-six`` all score
0: the verifier is strict exact match of the whole answer, no partial credit).
"""

from __future__ import annotations

import operator
import random
from typing import Any, Callable

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain

from ._common import distinct_probes, operand, strict_score


class _Arithmetic:
    """One binary integer operation; instances differ only by symbol and function."""

    family = "math"
    difficulties = (1, 2, 3, 4)
    env_kind = "single_turn"

    def __init__(self, name: str, symbol: str, fn: Callable[[int, int], int]):
        self.id = f"math.{name}-v1"
        self.symbol = symbol
        self.fn = fn

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        a, b = operand(rng, difficulty), operand(rng, difficulty)
        return make_task(self.id, difficulty, f"{a}{self.symbol}{b}=",
                         answer=str(self.fn(a, b)), public={"operands": [a, b]})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        return strict_score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, Any]:
        ref = int(task.hidden["answer"])
        a, b = task.public["operands"]
        return distinct_probes(task, {
            "off_by_one_up": str(ref + 1),
            "off_by_one_down": str(ref - 1),
            "negated": str(-ref),
            "equation": f"{a}{self.symbol}{b}={ref}",
            "doubled": f"{ref}{ref}",
            "neighbours": f"{ref - 1} {ref} {ref + 1}",
            "leading_zero": f"0{ref}",
            "float": f"{ref}.0",
        })


register_domain(_Arithmetic("add", "+", operator.add))
register_domain(_Arithmetic("sub", "-", operator.sub))
register_domain(_Arithmetic("mul", "*", operator.mul))
