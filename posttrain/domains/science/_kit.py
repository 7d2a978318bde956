"""The science family's kit: quantity answers ``<number> <unit>`` and :func:`quantity_domain`.

A quantity domain is ``quantity_domain(id, draw, description)`` whose draw function returns
:func:`quantity_draft`; the checker and probes are shared and read the id from ``task.domain``.

A task stores the SI value and dimensions of the answer in ``hidden``; any unit of the right
dimension is accepted (``1500 m`` = ``1.5 km``). Reward: 1 within 1 % (relative), linear
decay to 0 at 5 %, 0 for a wrong dimension or a missing unit (see
:func:`posttrain.verifiers.units.quantity_score`). Typical mistakes are probes, kept only when
they are more than 5 % off (otherwise they are not mistakes for that task).
"""

from __future__ import annotations

import random
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.verifiers.units import Dims, closeness, parse_unit, quantity_score

from ..math_ext._kit import answer_text

REL_TOL = 0.01
FMT = "Reply with only the value and its unit, e.g. '12.5 {u}'."


def fmt(v: float) -> str:
    return f"{v:.5g}"


def quantity_draft(prompt: str, value_si: float, unit: str, mistakes: Mapping[str, float] | None = None,
                   public: Mapping[str, Any] | None = None) -> Draft:
    """A task whose answer is ``value_si`` shown in ``unit``; ``mistakes`` are SI values of wrong answers."""
    factor, dims = parse_unit(unit)  # type: ignore[misc]
    wrong = {k: f"{fmt(v / factor)} {unit}" for k, v in (mistakes or {}).items()
             if closeness(v, value_si, 5 * REL_TOL) == 0.0}
    return Draft(f"{prompt} {FMT.format(u=unit)}", answer=f"{fmt(value_si / factor)} {unit}",
                 public=dict(public or {}, unit=unit), hidden={"si": value_si, "dims": list(dims), "mistakes": wrong})


def quantity_check(task: Task, answer: str) -> Score:
    """1 within 1 % of the SI value in any unit of the right dimension, linear to 0 at 5 %."""
    text = answer_text(answer)
    v, why = quantity_score(text or "", float(task.hidden["si"]), tuple(task.hidden["dims"]), REL_TOL)  # type: ignore[arg-type]
    return Score(v, components={"value": (v, 1.0)}, reason=why, verifier_version=task.domain)


def quantity_probes(task: Task) -> dict[str, str]:
    num, unit = task.hidden["answer"].split(" ", 1)
    wrong_dim = "kg" if tuple(task.hidden["dims"]) != (0, 1, 0, 0, 0, 0) else "m"
    return {"no_unit": num, "prefix_error": f"{fmt(float(num) * 1000)} {unit}", "wrong_dimension": f"{num} {wrong_dim}",
            "two_values": f"{num} {unit} or {fmt(float(num) * 2)} {unit}", **task.hidden["mistakes"]}


def linear_tolerance(task: Task, err: float, full: float, span: float, unit: str = "") -> Score:
    """1 when the absolute error ``err`` is at most ``full``, falling linearly to 0 at ``full + span``."""
    v = 1.0 if err <= full else max(0.0, 1 - (err - full) / span)
    return Score(v, components={"value": (v, 1.0)}, reason=f"off by {err:.3g}{unit}", verifier_version=task.domain)


def unit_dims(unit: str) -> Dims:
    return parse_unit(unit)[1]  # type: ignore[index]


def quantity_domain(dom_id: str, draw: Callable[[random.Random, int], Draft], description: str) -> SingleTurnDomain:
    """The domain of ``draw`` (which returns :func:`quantity_draft`), scored by :func:`quantity_check`."""
    return SingleTurnDomain(dom_id, draw, quantity_check, quantity_probes, description=description)
