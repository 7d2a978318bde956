"""Sorting a list of small integers: ``algorithms.sort-v1`` — ``sort 3 1 2=`` → ``1 2 3``.

Trains: ascending sort of single-digit integers (duplicates allowed, kept), answered as the
numbers separated by single spaces. Difficulty d = list length 3/5/7/9 for d1..d4. Already
sorted inputs are never generated: on them copying the input would earn credit.

Does not cover: multi-digit or negative numbers, descending order, sorting by key, or other
separators. The verifier is strict exact match of the whole answer (whitespace runs collapse,
nothing else): ``1,2,3``, ``123``, a de-duplicated or reversed list all score 0. No partial
credit for a partly sorted list.
"""

from __future__ import annotations

import random
from typing import Any

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.base import register_domain

from ._common import distinct_probes, strict_score

LENGTHS = {1: 3, 2: 5, 3: 7, 4: 9}


def _fmt(xs: list[int]) -> str:
    return " ".join(map(str, xs))


@register_domain
class Sort:
    id = "algorithms.sort-v1"
    family = "algorithms"
    difficulties = (1, 2, 3, 4)
    env_kind = "single_turn"

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        n = LENGTHS[difficulty]
        while True:
            xs = [rng.randint(0, 9) for _ in range(n)]
            if xs != sorted(xs):
                break
        return make_task(self.id, difficulty, f"sort {_fmt(xs)}=", answer=_fmt(sorted(xs)),
                         public={"items": xs})

    def solve(self, task: Task) -> str:
        return str(task.hidden["answer"])

    def score(self, task: Task, answer: str) -> Score:
        return strict_score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, Any]:
        xs = list(task.public["items"])
        ys = sorted(xs)
        return distinct_probes(task, {
            "copy_input": _fmt(xs),
            "descending": _fmt(ys[::-1]),
            "no_spaces": "".join(map(str, ys)),
            "commas": ",".join(map(str, ys)),
            "deduplicated": _fmt(sorted(set(xs))),
            "extra_item": _fmt(ys + [ys[-1]]),
            "missing_item": _fmt(ys[:-1]),
            "with_input": f"{_fmt(ys)} {_fmt(xs)}",
        })
