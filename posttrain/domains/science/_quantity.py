"""Task and scoring plumbing shared by the science domains: answers are ``<number> <unit>``.

A task stores the SI value and dimensions of the answer in ``hidden``; any unit of the right
dimension is accepted (``1500 m`` = ``1.5 km``). Reward: 1 within 1 % (relative), linear
decay to 0 at 5 %, 0 for a wrong dimension or a missing unit (see
:func:`posttrain.verifiers.units.quantity_score`). Typical mistakes are probes, kept only when
they are more than 5 % off (otherwise they are not mistakes for that task).
"""

from __future__ import annotations

from typing import Any, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.verifiers.units import Dims, closeness, parse_unit, quantity_score

from ..math_ext._kit import answer_text

REL_TOL = 0.01
FMT = "Reply with only the value and its unit, e.g. '12.5 {u}'."


def fmt(v: float) -> str:
    return f"{v:.5g}"


def qtask(dom_id: str, difficulty: int, prompt: str, value_si: float, unit: str,
          mistakes: Mapping[str, float] | None = None, public: Mapping[str, Any] | None = None) -> Task:
    """A task whose answer is ``value_si`` shown in ``unit``; ``mistakes`` are SI values of wrong answers."""
    factor, dims = parse_unit(unit)  # type: ignore[misc]
    wrong = {k: f"{fmt(v / factor)} {unit}" for k, v in (mistakes or {}).items()
             if closeness(v, value_si, 5 * REL_TOL) == 0.0}
    return make_task(dom_id, difficulty, f"{prompt} {FMT.format(u=unit)}", answer=f"{fmt(value_si / factor)} {unit}",
                     public=dict(public or {}, unit=unit),
                     hidden={"si": value_si, "dims": list(dims), "mistakes": wrong})


def qscore(dom_id: str, task: Task, answer: str) -> Score:
    text = answer_text(answer)
    v, why = quantity_score(text or "", float(task.hidden["si"]), tuple(task.hidden["dims"]), REL_TOL)  # type: ignore[arg-type]
    return Score(v, components={"value": (v, 1.0)}, reason=why, verifier_version=dom_id)


def qprobes(task: Task) -> dict[str, str]:
    num, unit = task.hidden["answer"].split(" ", 1)
    wrong_dim = "kg" if tuple(task.hidden["dims"]) != (0, 1, 0, 0, 0, 0) else "m"
    return {"no_unit": num, "prefix_error": f"{fmt(float(num) * 1000)} {unit}", "wrong_dimension": f"{num} {wrong_dim}",
            "two_values": f"{num} {unit} or {fmt(float(num) * 2)} {unit}", **task.hidden["mistakes"]}


class QuantityPlumbing:
    """solve/score/probes shared by quantity-answer science domains (each writes ``generate``)."""

    family = "science"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"
    id = ""

    def solve(self, task: Task) -> str:
        return task.hidden["answer"]

    def score(self, task: Task, answer: str) -> Score:
        return qscore(self.id, task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        return qprobes(task)


def unit_dims(unit: str) -> Dims:
    return parse_unit(unit)[1]  # type: ignore[index]
