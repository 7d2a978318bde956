"""A deterministic stream of training tasks drawn from a weighted domain mixture.

The i-th task of a run depends only on ``(seed, i)``: the domain is drawn by weight, the
difficulty uniformly from the domain's allowed levels, and the task seed is ``i``. So the
stream's whole state is its position, which checkpoints save: a resumed run draws exactly
the tasks it would have drawn, losing and duplicating nothing.

Training seeds are the positions ``0, 1, 2, ...``; held-out evaluation uses seeds from
``EvalConfig.seed_offset`` upwards (10,000,000 by default), so the two never overlap for any
run shorter than ten million tasks.
"""

from __future__ import annotations

import random
from typing import Any, Sequence

from posttrain.core.config import DomainSpec
from posttrain.core.types import Task
from posttrain.domains.base import get_domain, sample_task


class TaskStream:
    def __init__(self, specs: Sequence[DomainSpec], seed: int = 0):
        self.domains = [get_domain(s.id) for s in specs]
        self.weights = [s.weight for s in specs]
        self.levels = []
        for spec, dom in zip(specs, self.domains):
            levels = list(spec.difficulties or dom.difficulties)
            bad = [d for d in levels if d not in dom.difficulties]
            if bad:
                raise ValueError(f"domain {dom.id}: difficulties {bad} not in {list(dom.difficulties)}")
            self.levels.append(levels)
        self.seed = seed
        self.position = 0

    def task_at(self, i: int) -> Task:
        rng = random.Random(f"stream|{self.seed}|{i}")
        k = rng.choices(range(len(self.domains)), weights=self.weights)[0]
        return sample_task(self.domains[k], seed=i, difficulty=rng.choice(self.levels[k]))

    def next(self, n: int) -> list[Task]:
        tasks = [self.task_at(i) for i in range(self.position, self.position + n)]
        self.position += n
        return tasks

    def state_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "position": self.position}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.seed, self.position = int(state["seed"]), int(state["position"])


def heldout_tasks(spec: DomainSpec, n: int, seed_offset: int) -> list[Task]:
    """``n`` held-out tasks of one domain, cycling through its allowed difficulties."""
    dom = get_domain(spec.id)
    levels = list(spec.difficulties or dom.difficulties)
    return [sample_task(dom, seed=seed_offset + j, difficulty=levels[j % len(levels)])
            for j in range(n)]
