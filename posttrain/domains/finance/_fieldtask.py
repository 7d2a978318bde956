"""Shared plumbing of the added finance domains: fields with their questions, mistake traps.

What it is: :class:`Field` (a :class:`FieldSpec`, its expected value, its question),
:func:`build` (a JSON-answer finance task through :func:`._kit.build_task`, plus ``traps``)
and :class:`FieldDomain` (solve/score/probes shared by every added finance domain; the
verifier is :func:`posttrain.verifiers.fields.score_fields` through ``_kit``).

A *trap* is a complete answer computed with one typical mistake (annual rate used monthly,
FIFO and LIFO swapped, tax on the gross amount...). :func:`build` keeps a trap only when every
one of its fields is wrong, so each kept trap is a probe that must score 0: a mistake that
happens to give some right fields is honest partial credit, not an exploit.

Guarantees: everything stored on the task is plain JSON; ``hidden`` holds fields, expected
values and traps. Does not: check that expected values are away from zero (each generator
does, so the shared all-zero and wrong-scale probes stay at the floor).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Score, Task
from posttrain.domains.finance import _kit
from posttrain.verifiers.fields import FieldSpec, field_correct


@dataclass(frozen=True)
class Field:
    spec: FieldSpec
    value: Any
    question: str


def days(name: str, weight: float = 1.0) -> FieldSpec:
    """A number of days (or years, units...) asked to one decimal."""
    return FieldSpec(name, "ratio", weight, rel_tol=0.0, abs_tol=0.06)


def money(name: str, weight: float = 1.0, abs_tol: float = 0.01) -> FieldSpec:
    """An amount in plain dollars (cents allowed): relative 0.1 % or the absolute tolerance."""
    return FieldSpec(name, "amount", weight, 1.0, rel_tol=1e-3, abs_tol=abs_tol)


def count(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "count", weight)


def fully_wrong(trap: Mapping[str, Any], specs: Sequence[FieldSpec], expected: Mapping[str, Any]) -> bool:
    return all(not field_correct(trap.get(s.name), expected[s.name], s) for s in specs)


def _plain(v: Any) -> Any:
    return v if isinstance(v, str) else round(float(v), 6)


def build(domain_id: str, difficulty: int, doc: str, fields: Sequence[Field], *, scale: float | None,
          traps: Mapping[str, Mapping[str, Any]] | None = None, gates: Mapping[str, str] | None = None,
          extra: str = "") -> Task:
    specs = [f.spec for f in fields]
    exp = {f.spec.name: _plain(f.value) for f in fields}
    qs = {f.spec.name: f.question for f in fields}
    task = _kit.build_task(domain_id, difficulty, doc, qs, specs, exp, scale=scale, gates=gates, extra=extra)
    kept = {}
    for name, trap in (traps or {}).items():
        t = {s.name: _plain(trap.get(s.name, "none")) for s in specs}
        if fully_wrong(t, specs, exp):
            kept[name] = t
    task.hidden["traps"] = kept
    return task


def fields_from(values: Mapping[str, Any], table: Mapping[str, tuple[Callable[[str], FieldSpec], str]],
                names: Sequence[str]) -> list[Field]:
    """Fields for ``names`` from a ``{name: (spec_factory, question)}`` table and computed values."""
    return [Field(table[n][0](n), values[n], table[n][1]) for n in names]


def pick(values: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    return {n: values[n] for n in names}


class FieldDomain:
    """Solve/score/probes of a JSON-answer finance domain (shared probes of ``_kit`` + traps)."""

    family = "finance"
    difficulties = (1, 2, 3)
    env_kind = "single_turn"
    id = "finance.unset-v0"

    def solve(self, task: Task) -> str:
        return _kit.solve(task)

    def score(self, task: Task, answer: str) -> Score:
        return _kit.score(task, answer, self.id)

    def probes(self, task: Task) -> dict[str, str]:
        out = _kit.probes(task)
        for name, vals in (task.hidden.get("traps") or {}).items():
            out[f"trap_{name}"] = json.dumps(vals)
        return out


def clear_of_zero(fields: Sequence[Field]) -> bool:
    """True when no numeric field is within ten tolerances of zero (so all-zero answers earn nothing)."""
    for f in fields:
        if f.spec.kind == "choice":
            continue
        if abs(float(f.value)) <= 10 * max(f.spec.abs_tol, 1e-9):
            return False
    return True
