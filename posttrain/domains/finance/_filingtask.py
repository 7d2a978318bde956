"""A metric question over a generated filing: the shared generator loop of the filing-based domains.

What it is: :func:`filing_task` draws a company and its filing (``statements.company_and_doc``,
reused as is), picks a fiscal year, asks the domain's metric function for the fields of that
year, keeps the draw only when no numeric answer is near zero, and builds the task with traps:
the same metrics for another fiscal year (``wrong_year``) and with each of the domain's named
mistakes. Each domain supplies ``metrics(ctx, mistake) -> {name: Field}``.

Guarantees: deterministic given the rng (a bounded number of redraws, all from the rng);
amounts are asked in ``ctx.scale`` (the filing's unit at d1, possibly another above).
Does not: pick which metrics are asked — the caller passes the names per difficulty.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Task
from posttrain.domains.finance import _kit
from posttrain.domains.finance._company import unit_multiplier
from posttrain.domains.finance._fieldtask import Field, build, clear_of_zero
from posttrain.domains.finance.statements import company_and_doc


@dataclass(frozen=True)
class Ctx:
    co: dict
    y: int
    k: float  # display units -> asked units
    scale: float
    rng_extra: float  # a per-task random number the metric may use (e.g. a share price draw)

    def amt(self, name: str, weight: float = 1.0):
        return _kit.amount(name, self.scale, weight)

    def v(self, statement: str, item: str, year: int | None = None) -> int:
        return int(self.co[statement][self.y if year is None else year][item])


Metrics = Callable[[Ctx, "str | None"], Mapping[str, Field]]


def filing_task(domain_id: str, rng: random.Random, difficulty: int, parts: tuple[str, ...], metrics: Metrics,
                names: Sequence[str] | Callable[[Ctx], Sequence[str]], *, prior: bool = False, mistakes: Sequence[str] = (),
                extra: Callable[[Ctx], str] | None = None,
                gates: Mapping[str, str] | None = None) -> Task:
    """The task (see the module docstring); ``prior`` requires the year before ``y`` on the page;
    ``names`` may depend on the drawn company (a function of the context)."""
    pick_names = names if callable(names) else (lambda _c: list(names))
    for _ in range(80):
        co, doc, _ = company_and_doc(rng, difficulty, parts)
        mult = unit_multiplier(co)
        scale = _kit.asked_scale(rng, mult, difficulty)
        years = co["years"][1:] if prior else co["years"]
        ctx = Ctx(co, rng.choice(years), mult / scale, scale, rng.random())
        try:
            got = metrics(ctx, None)
            asked = list(pick_names(ctx))
            fields = [got[n] for n in asked]
        except ZeroDivisionError:
            continue
        if clear_of_zero(fields):
            break
    traps: dict[str, dict[str, Any]] = {}
    others = [y for y in years if y != ctx.y]
    if others:
        try:
            alt = metrics(Ctx(co, others[0], ctx.k, scale, ctx.rng_extra), None)
            traps["wrong_year"] = {n: alt[n].value for n in asked}
        except ZeroDivisionError:
            pass
    for m in mistakes:
        try:
            bad = metrics(ctx, m)
            traps[m] = {n: bad[n].value for n in asked}
        except ZeroDivisionError:
            pass
    text = extra(ctx) if extra else ""
    return build(domain_id, difficulty, doc, fields, scale=scale, traps=traps, gates=gates, extra=text)
