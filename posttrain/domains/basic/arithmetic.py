"""Integer arithmetic on d-digit operands: ``math.add-v1``, ``math.sub-v1``, ``math.mul-v1``.

Three records of the same functions, differing only by symbol and operation.

Trains: carrying (add), borrowing and the sign of a negative result (sub), and long
multiplication (mul), written as a compact prompt ``12+34=`` whose answer is the plain decimal
result ``46`` (``-22`` for ``12-34=``). Difficulty d = the digit count of both operands
(d1: 0-9, d2: 10-99, d3: 100-999, d4: 1000-9999).

Does not cover: decimals, fractions, operator precedence, word problems, more than two
operands, or answers written any other way (``046``, ``+46``, ``46.0``, ``forty-six`` all score
0: the verifier is strict exact match of the whole answer, no partial credit).
"""

from __future__ import annotations

import functools
import operator
import random
from typing import Any, Callable

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

from ._kit import distinct_probes, operand, strict_check


def _draw(symbol: str, fn: Callable[[int, int], int], rng: random.Random, difficulty: int) -> Draft:
    a, b = operand(rng, difficulty), operand(rng, difficulty)
    return Draft(f"{a}{symbol}{b}=", answer=str(fn(a, b)), public={"operands": [a, b]})


def _exploits(symbol: str, task: Task) -> dict[str, Any]:
    ref = int(task.hidden["answer"])
    a, b = task.public["operands"]
    return distinct_probes(task, {
        "off_by_one_up": str(ref + 1),
        "off_by_one_down": str(ref - 1),
        "negated": str(-ref),
        "equation": f"{a}{symbol}{b}={ref}",
        "doubled": f"{ref}{ref}",
        "neighbours": f"{ref - 1} {ref} {ref + 1}",
        "leading_zero": f"0{ref}",
        "float": f"{ref}.0",
    })


SKILLS = {"add": "Adding two d-digit integers (carrying).",
          "sub": "Subtracting two d-digit integers (borrowing, negative results).",
          "mul": "Multiplying two d-digit integers (long multiplication)."}

# functools.partial of module-level functions (not closures) keeps the records picklable
for _name, _symbol, _fn in (("add", "+", operator.add), ("sub", "-", operator.sub), ("mul", "*", operator.mul)):
    register_domain(SingleTurnDomain(f"math.{_name}-v1", functools.partial(_draw, _symbol, _fn), strict_check,
                                     functools.partial(_exploits, _symbol),
                                     description=f"{SKILLS[_name]}\n\n{__doc__}", difficulties=(1, 2, 3, 4)))
