"""A deterministic stream of training tasks drawn from a weighted domain mixture.

:class:`TaskStream`: the i-th task of a run depends only on ``(seed, i)``: the domain is drawn by weight, the
difficulty uniformly from the domain's allowed levels, and the task seed is ``i``. So the
stream's whole state is its position, which checkpoints save: a resumed run draws exactly
the tasks it would have drawn, losing and duplicating nothing.

:class:`CurriculumStream` lets the curriculum of :mod:`posttrain.scheduler` choose each
task's (domain, difficulty) cell from live statistics instead (``curriculum.enabled``).

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


class CurriculumStream:
    """Tasks whose (domain, difficulty) cell the curriculum chooses; the TaskStream interface.

    The cell of position ``i`` is drawn from :class:`posttrain.scheduler.Curriculum` the first
    time ``i`` is asked for (positions are drawn in order, so the asynchronous loop's
    look-ahead sees the same cells as a sequential run) and kept until consumed; the task seed
    is ``i``. The curriculum's stage weights follow the training step that position ``i``
    belongs to, ``i // prompts_per_step``. ``update(groups)`` feeds each verified group's rewards back. ``state_dict``
    holds the position, the drawn-but-unconsumed cells and the curriculum's whole state
    (statistics, frontiers, RNG), so a resumed run draws what the original would have.
    """

    def __init__(self, specs: Sequence[DomainSpec], seed: int = 0,
                 config: dict[str, Any] | None = None, prompts_per_step: int = 1):
        from posttrain.scheduler.curriculum import Curriculum, CurriculumDomain

        self._domains = {s.id: get_domain(s.id) for s in specs}
        cells = [CurriculumDomain(dom.id, dom.family,
                                  tuple(sorted(spec.difficulties or dom.difficulties)))
                 for spec, dom in zip(specs, self._domains.values())]
        self.curriculum = Curriculum(cells, {"seed": seed, **(config or {})})
        self.seed = seed
        self.prompts_per_step = max(1, int(prompts_per_step))
        self.position = 0
        self._next_draw = 0
        self._cells: dict[int, tuple[str, int]] = {}

    def task_at(self, i: int) -> Task:
        for k in [k for k in self._cells if k < self.position]:  # consumed (the async loop
            del self._cells[k]                                   # advances position directly)
        while self._next_draw <= i:
            # the stage weights of the step this position trains at (fixed by the position,
            # so the async loop's look-ahead draws what a sequential run draws)
            self.curriculum.set_step(self._next_draw // self.prompts_per_step)
            self._cells[self._next_draw] = self.curriculum.next_cells(1)[0]
            self._next_draw += 1
        domain_id, difficulty = self._cells[i]
        return sample_task(self._domains[domain_id], seed=i, difficulty=int(difficulty))

    def next(self, n: int) -> list[Task]:
        tasks = [self.task_at(i) for i in range(self.position, self.position + n)]
        self.position += n
        for i in [k for k in self._cells if k < self.position]:
            del self._cells[i]
        return tasks

    def update(self, groups: Sequence[Any]) -> None:
        """Feed each group's usable rewards to its cell's statistics."""
        for g in groups:
            rewards = [t.reward for t in g.trajectories if t.usable]
            if rewards:
                self.curriculum.update(g.task.domain, g.task.difficulty, rewards)

    def state_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "position": self.position, "next_draw": self._next_draw,
                "cells": {int(k): list(v) for k, v in self._cells.items()},
                "curriculum": self.curriculum.state_dict()}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.seed, self.position = int(state["seed"]), int(state["position"])
        self._next_draw = int(state["next_draw"])
        self._cells = {int(k): (v[0], int(v[1])) for k, v in state["cells"].items()}
        self.curriculum.load_state_dict(state["curriculum"])


def make_stream(specs: Sequence[DomainSpec], seed: int, curriculum: Any = None,
                prompts_per_step: int = 1):
    """A CurriculumStream when ``curriculum.enabled``, else the weighted TaskStream."""
    if curriculum is not None and curriculum.enabled:
        return CurriculumStream(specs, seed, dict(curriculum.config), prompts_per_step)
    return TaskStream(specs, seed)
