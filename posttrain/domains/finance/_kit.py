"""Shared plumbing of the finance domains: building a JSON-answer task, solving, scoring, probes.

A finance task's ``hidden`` part holds ``fields`` (the :class:`FieldSpec` dicts), ``expected``
(name → value in the asked unit) and optional ``gates``; ``public`` holds the asked ``keys``.
Scoring is :func:`posttrain.verifiers.fields.score_fields`: one JSON object with exactly the
asked keys, weighted fraction of correct fields, unit/scale normalised.

The shared probes (every finance domain uses them): all fields zero, every number off by a
factor 1000 (wrong scale), every number 10 % off, the reference plus an extra key, every value
a list of candidates, every key written twice, and the reference as prose instead of JSON.
"""

from __future__ import annotations

import json
import math
import random
from typing import Any, Mapping, Sequence

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import make_task
from posttrain.verifiers.fields import FieldSpec, score_fields

UNIT_WORDS = {1.0: "U.S. dollars", 1e3: "thousands of U.S. dollars", 1e6: "millions of U.S. dollars"}
SYSTEM = ("You are a financial analyst. Read the filing and answer with one JSON object only, "
          "with exactly the keys asked for.")


def amount(name: str, scale: float, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "amount", weight, scale, rel_tol=1e-3, abs_tol=1e-9)


def percent(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "percent", weight, rel_tol=0.0, abs_tol=0.06)


def ratio(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "ratio", weight, rel_tol=0.0, abs_tol=0.006)


def choice(name: str, weight: float = 1.0) -> FieldSpec:
    return FieldSpec(name, "choice", weight)


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


def specs_of(task: Task) -> list[FieldSpec]:
    return [FieldSpec.from_dict(d) for d in task.hidden["fields"]]


def solve(task: Task) -> str:
    exp = task.hidden["expected"]
    out = {s.name: (exp[s.name] if s.kind == "choice" else round(float(exp[s.name]), 6)) for s in specs_of(task)}
    return json.dumps(out)


def score(task: Task, answer: str, version: str) -> Score:
    return score_fields(answer, specs_of(task), task.hidden["expected"], version, task.hidden.get("gates"))


def _map(task: Task, f) -> dict[str, Any]:
    exp = task.hidden["expected"]
    return {s.name: (exp[s.name] if s.kind == "choice" else f(float(exp[s.name]))) for s in specs_of(task)}


def probes(task: Task) -> dict[str, str]:
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
