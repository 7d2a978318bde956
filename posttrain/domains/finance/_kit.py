"""The finance kit: how a finance domain builds its JSON-answer task and the record it registers.

What it is: field constructors (:func:`amount`, :func:`percent`, :func:`ratio`, :func:`choice`,
:func:`days`, :func:`money`, :func:`count`); :func:`build_task` (document + questions + field
specs -> Task); :class:`Field` and :func:`build` (a task whose ``hidden["traps"]`` keeps each
typical-mistake answer that gets every field wrong); :class:`Ctx` and :func:`filing_task` (the
generator loop of the domains that ask metrics of a generated filing); :func:`layout` and
:func:`company_and_doc` (a company and its rendered filing at a difficulty); the record's
functions :func:`check` (the id it scores for comes from ``task.domain``), :func:`solve` and
:func:`exploits`; and :func:`field_domain`, the constructor every light finance domain uses.

A finance task's ``hidden`` part holds ``fields`` (the :class:`FieldSpec` dicts), ``expected``
(name -> value in the asked unit), optional ``gates``, ``traps`` and ``alternates`` (the
wrong-year values); ``public`` holds the asked ``keys``. Scoring is
:func:`posttrain.verifiers.fields.score_fields`: one JSON object with exactly the asked keys,
weighted fraction of correct fields, unit/scale normalised.

The shared probes (:func:`probes`, every finance domain gets them): all fields zero, every
number off by a factor 1000 (wrong scale), every number 10 % off, the reference plus an extra
key, every value a list of candidates, every key written twice, and the reference as prose
instead of JSON. :func:`exploits` adds each kept trap (``trap_<name>``) and the wrong-year
answer where every field has one. A trap is a complete answer computed with one typical
mistake (annual rate used monthly, FIFO and LIFO swapped...); it is kept only when every field
is wrong, so each kept trap must score 0 (a mistake that gives some right fields is honest
partial credit, not an exploit).

Guarantees: everything stored on the task is plain JSON; generators are deterministic given
the rng (a bounded number of redraws, all from it). Does not: check in :func:`build` that the
expected values are away from zero (each generator does, :func:`clear_of_zero`, so the
all-zero and wrong-scale probes stay at the floor).
"""

from __future__ import annotations

import json
import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.domains.finance._company import make_company, unit_multiplier
from posttrain.domains.finance._render import STYLES, render_filing
from posttrain.domains.kit.single_turn import SingleTurnDomain
from posttrain.verifiers.fields import FieldSpec, field_correct, score_fields

UNIT_WORDS = {1.0: "U.S. dollars", 1e3: "thousands of U.S. dollars", 1e6: "millions of U.S. dollars"}
SYSTEM = ("You are a financial analyst. Read the filing and answer with one JSON object only, "
          "with exactly the keys asked for.")


# ---- fields -------------------------------------------------------------------------------

def amount(name: str, scale: float, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "amount", weight, scale, rel_tol=1e-3, abs_tol=1e-9)


def percent(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "percent", weight, rel_tol=0.0, abs_tol=0.06)


def ratio(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "ratio", weight, rel_tol=0.0, abs_tol=0.006)


def choice(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "choice", weight)


def days(name: str, weight: float = 1.0) -> FieldSpec:
    """A number of days (or years, units...) asked to one decimal."""
    return FieldSpec(name, "ratio", weight, rel_tol=0.0, abs_tol=0.06)


def money(name: str, weight: float = 1.0, abs_tol: float = 0.01) -> FieldSpec:
    """An amount in plain dollars (cents allowed): relative 0.1 % or the absolute tolerance."""
    return FieldSpec(name, "amount", weight, 1.0, rel_tol=1e-3, abs_tol=abs_tol)


def count(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "count", weight)


@dataclass(frozen=True)
class Field:
    """One asked field: its spec, its expected value and its question."""

    spec: FieldSpec
    value: Any
    question: str


def fields_from(values: Mapping[str, Any], table: Mapping[str, tuple[Callable[[str], FieldSpec], str]],
                names: Sequence[str]) -> list[Field]:
    """Fields for ``names`` from a ``{name: (spec_factory, question)}`` table and computed values."""
    return [Field(table[n][0](n), values[n], table[n][1]) for n in names]


def pick(values: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    return {n: values[n] for n in names}


def clear_of_zero(fields: Sequence[Field]) -> bool:
    """True when no numeric field is within ten tolerances of zero (so all-zero answers earn nothing)."""
    for f in fields:
        if f.spec.kind == "choice":
            continue
        if abs(float(f.value)) <= 10 * max(f.spec.abs_tol, 1e-9):
            return False
    return True


# ---- tasks --------------------------------------------------------------------------------

def asked_scale(rng: random.Random, display_mult: float, difficulty: int) -> float:
    """The unit the answer is asked in: the filing's own at d1, possibly another above."""
    if difficulty <= 1:
        return display_mult
    return rng.choice([display_mult, display_mult, display_mult / 1e3] + ([1e6] if display_mult == 1e3 else []))


def instructions(scale: float | None, keys: Sequence[str]) -> str:
    lines = [f"Answer with a single JSON object with exactly these keys: {', '.join(keys)}."]
    if scale is not None:
        lines.append(f"Give amounts in {UNIT_WORDS[scale]} as plain JSON numbers, exact (do not round), "
                     "negative where the statement shows parentheses.")
    lines.append("Give percentages as numbers in percent rounded to one decimal (12.5 means 12.5%), "
                 "and other ratios rounded to two decimals.")
    return "\n".join(lines)


def build_task(domain_id: str, difficulty: int, document: str, questions: Mapping[str, str],
               specs: Sequence[FieldSpec], expected: Mapping[str, Any], *, scale: float | None,
               gates: Mapping[str, str] | None = None, extra: str = "",
               public: Mapping[str, Any] | None = None) -> Task:
    keys = [s.name for s in specs]
    qs = "\n".join(f"- {k}: {questions[k]}" for k in keys)
    prompt = f"{document}\n\n{extra}Questions:\n{qs}\n\n{instructions(scale, keys)}"
    hidden = {"fields": [s.to_dict() for s in specs], "expected": dict(expected), "gates": dict(gates or {})}
    return make_task(domain_id, difficulty, prompt, hidden=hidden, system=SYSTEM,
                     public={"keys": keys, **dict(public or {})})


def fully_wrong(trap: Mapping[str, Any], specs: Sequence[FieldSpec], expected: Mapping[str, Any]) -> bool:
    return all(not field_correct(trap.get(s.name), expected[s.name], s) for s in specs)


def _plain(v: Any) -> Any:
    return v if isinstance(v, str) else round(float(v), 6)


def build(domain_id: str, difficulty: int, doc: str, fields: Sequence[Field], *, scale: float | None,
          traps: Mapping[str, Mapping[str, Any]] | None = None, gates: Mapping[str, str] | None = None,
          extra: str = "") -> Task:
    """The task of ``fields``, keeping each trap that gets every field wrong (``hidden["traps"]``)."""
    specs = [f.spec for f in fields]
    exp = {f.spec.name: _plain(f.value) for f in fields}
    qs = {f.spec.name: f.question for f in fields}
    task = build_task(domain_id, difficulty, doc, qs, specs, exp, scale=scale, gates=gates, extra=extra)
    kept = {}
    for name, trap in (traps or {}).items():
        t = {s.name: _plain(trap.get(s.name, "none")) for s in specs}
        if fully_wrong(t, specs, exp):
            kept[name] = t
    task.hidden["traps"] = kept
    return task


def scenario_task(domain_id: str, difficulty: int, doc: str, compute: Callable[..., Mapping[str, Any]],
                  p: Mapping[str, Any], table: Mapping[str, tuple[Callable[[str], FieldSpec], str]],
                  names: Sequence[str], mistakes: Sequence[str], *, scale: float | None = 1.0) -> Task:
    """A task over a worked scenario ``p``: the fields ``names`` of ``table`` with the values
    ``compute(p)``, and one trap per typical mistake, ``compute(p, mistake)`` (kept by :func:`build`
    only when it gets every field wrong)."""
    traps = {m: pick(compute(p, m), names) for m in mistakes}
    return build(domain_id, difficulty, doc, fields_from(compute(p), table, names), scale=scale, traps=traps)


def layout(rng: random.Random, difficulty: int, parts: tuple[str, ...]) -> dict[str, Any]:
    """Years, table style, statements shown and length for a difficulty: d1 the needed statements
    in text or markdown, two years; d2 all statements in any style; d3 three years, long, mostly HTML."""
    if difficulty <= 1:
        return {"years": 2, "style": rng.choice(["text", "markdown"]), "parts": parts, "long": False}
    if difficulty == 2:
        return {"years": 2, "style": rng.choice(STYLES), "parts": ("income", "balance", "cashflow", "notes"),
                "long": False}
    return {"years": 3, "style": rng.choice(["html", "html", "markdown", "text"]),
            "parts": ("income", "balance", "cashflow", "notes"), "long": True}


def company_and_doc(rng: random.Random, difficulty: int, parts: tuple[str, ...],
                    overrides: dict | None = None) -> tuple[dict[str, Any], str, dict[str, Any]]:
    """A generated company, its filing rendered at the difficulty's :func:`layout`, and the layout."""
    lay = layout(rng, difficulty, parts)
    co = make_company(rng, lay["years"])
    doc = render_filing(co, rng, lay["style"], parts=lay["parts"], long=lay["long"], overrides=overrides)
    return co, doc, lay


@dataclass(frozen=True)
class Ctx:
    """What a metric function sees: the company, the asked year and the unit conversion."""

    co: dict
    y: int
    k: float  # display units -> asked units
    scale: float
    rng_extra: float  # a per-task random number the metric may use (e.g. a share price draw)

    def amt(self, name: str, weight: float = 1.0) -> FieldSpec:
        return amount(name, self.scale, weight)

    def v(self, statement: str, item: str, year: int | None = None) -> int:
        return int(self.co[statement][self.y if year is None else year][item])


Metrics = Callable[[Ctx, "str | None"], Mapping[str, Field]]


def filing_task(domain_id: str, rng: random.Random, difficulty: int, parts: tuple[str, ...], metrics: Metrics,
                names: Sequence[str] | Callable[[Ctx], Sequence[str]], *, prior: bool = False,
                mistakes: Sequence[str] = (), extra: Callable[[Ctx], str] | None = None,
                gates: Mapping[str, str] | None = None) -> Task:
    """A metric question over a generated filing: draw a company and filing, pick a fiscal year
    (``prior``: one whose prior year is on the page), ask ``metrics(ctx, None)`` for the fields
    ``names`` (a list or a function of the context), redraw while a numeric answer is near zero,
    and keep as traps the same metrics for another year (``wrong_year``) and under each of the
    domain's named ``mistakes`` (``metrics(ctx, mistake)``)."""
    pick_names = names if callable(names) else (lambda _c: list(names))
    for _ in range(80):
        co, doc, _ = company_and_doc(rng, difficulty, parts)
        mult = unit_multiplier(co)
        scale = asked_scale(rng, mult, difficulty)
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


# ---- the record's functions ---------------------------------------------------------------

def specs_of(task: Task) -> list[FieldSpec]:
    return [FieldSpec.from_dict(d) for d in task.hidden["fields"]]


def solve(task: Task) -> str:
    exp = task.hidden["expected"]
    out = {s.name: (exp[s.name] if s.kind == "choice" else round(float(exp[s.name]), 6)) for s in specs_of(task)}
    return json.dumps(out)


def check(task: Task, answer: str) -> Score:
    """:func:`score_fields` of the answer against the task's fields, versioned by ``task.domain``."""
    return score_fields(answer, specs_of(task), task.hidden["expected"], task.domain, task.hidden.get("gates"))


def _map(task: Task, f) -> dict[str, Any]:
    exp = task.hidden["expected"]
    return {s.name: (exp[s.name] if s.kind == "choice" else f(float(exp[s.name]))) for s in specs_of(task)}


def probes(task: Task) -> dict[str, str]:
    """The shared probes (see the module docstring)."""
    ref = json.loads(solve(task))
    keys = list(ref)
    choices = [s.name for s in specs_of(task) if s.kind == "choice"]
    zero = {k: ("none" if k in choices else 0) for k in keys}
    dup = "{" + ", ".join(f'"{k}": 0, "{k}": {json.dumps(v)}' for k, v in ref.items()) + "}"
    return {
        "all_zero": json.dumps(zero),
        "wrong_scale": json.dumps({k: ("none" if k in choices else v) for k, v in _map(task, lambda x: x * 1000).items()}),
        "ten_percent_off": json.dumps({k: ("none" if k in choices else v) for k, v in _map(task, lambda x: x * 1.1 + math.copysign(1, x)).items()}),
        "extra_key": json.dumps({**ref, "notes": "see filing", "confidence": 1.0}),
        "list_values": json.dumps({k: [v, v if isinstance(v, str) else v * 2, 0] for k, v in ref.items()}),
        "duplicate_keys": dup,
        "prose": " ".join(f"The {k} is {v}." for k, v in ref.items()),
    }


def exploits(task: Task) -> dict[str, str]:
    """The shared probes, each kept trap and (where every field has one) the wrong-year answer."""
    out = probes(task)
    for name, vals in (task.hidden.get("traps") or {}).items():
        out[f"trap_{name}"] = json.dumps(vals)
    alt = task.hidden.get("alternates") or {}
    if alt and set(alt) == set(task.public["keys"]):
        out["wrong_year"] = json.dumps(alt)
    return out


def field_domain(domain_id: str, draw: Callable[[random.Random, int], Task], description: str,
                 more_probes: Callable[[Task], Mapping[str, str]] | None = None) -> SingleTurnDomain:
    """The record of a light finance domain: its draw function with the kit's check, reference
    and :func:`exploits` (plus ``more_probes(task)`` where the domain has its own)."""
    probe = exploits if more_probes is None else (lambda task: {**exploits(task), **more_probes(task)})
    return SingleTurnDomain(domain_id, draw, check, probe, reference=solve, description=description)
