"""Sorting single-digit integers ascending: ``sort 3 1 2=`` → ``1 2 3`` (``algorithms.sort-v1``).

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

from posttrain.core.types import Task
from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain

from ._kit import LENGTHS, distinct_probes, strict_check



def _fmt(xs: list[int]) -> str:
    return " ".join(map(str, xs))


def _sort(rng: random.Random, difficulty: int) -> Draft:
    n = LENGTHS[difficulty]
    while True:
        xs = [rng.randint(0, 9) for _ in range(n)]
        if xs != sorted(xs):
            break
    return Draft(f"sort {_fmt(xs)}=", answer=_fmt(sorted(xs)),
                 public={"items": xs})


def _sort_exploits(task: Task) -> dict[str, Any]:
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


register_domain(SingleTurnDomain("algorithms.sort-v1", _sort, strict_check, _sort_exploits,
                                 description=__doc__, difficulties=(1, 2, 3, 4)))
