"""Field-level scoring of document answers: scale phrases, and internal-consistency checks.

What it is: the verifier of the real-tier filing domains, on top of
:mod:`posttrain.verifiers.fields` (same answer contract: one JSON object with exactly the
asked keys; same :class:`~posttrain.verifiers.fields.FieldSpec`, tolerances per field).
It adds:

- scale phrases as filings print them: ``"1,200 (in thousands)"``, ``"1,200 in thousands of
  U.S. dollars"``, ``"$1.2 million"``, ``"USD 1.2 millions"``, ``"(300) thousand"`` —
  :func:`normalise` rewrites the phrase to the scale word :func:`fields.parse_quantity`
  reads, which then converts to the asked unit; parentheses negatives and percentages are
  the base parser's;
- :class:`Check`, a linear relation between asked amounts that a correct answer satisfies
  (totals reconcile, assets = liabilities + equity, restated − original = change): it holds
  when ``|Σ coef·value| <= rel_tol · max |coef·value|`` on the answer's own values.

Reward: ``fields × (1 − 0.5 · (1 − consistency))`` where ``fields`` is the weighted fraction of
correct fields and ``consistency`` the fraction of checks that hold. Multiplicative on
purpose: an answer copied from another year (or scaled wholesale) is internally consistent
but has no correct field, and must stay at 0; consistency only lowers the credit of an answer
whose fields contradict each other. Components: ``field:<name>`` (weight = the field's) and
``check:<name>`` (weight 0, reported). Every function is total; scores are in [0, 1].

Does not: accept a scale phrase inside a list or next to a second number (one quantity per
field, as in the base parser), or check non-linear relations (ratios are fields of their own).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from posttrain.core.types import Score
from posttrain.verifiers.fields import FieldSpec, field_correct, parse_object, parse_quantity

_PHRASE = re.compile(
    r"^(?P<body>.*?)\s*\(?\s*(?:in\s+)?(?P<scale>thousands?|millions?|billions?)"
    r"(?:\s+of)?(?:\s+(?:u\.?s\.?|us)\s*)?(?:\s*(?:dollars|usd))?\s*\)?\s*$", re.I)
_DOLLARS = re.compile(r"\s*(?:u\.?s\.?\s+)?dollars\s*$", re.I)


def normalise(value: Any) -> Any:
    """``"1,200 (in thousands)"`` → ``"1,200 thousand"``; other values unchanged."""
    if not isinstance(value, str) or len(value) > 64:
        return value
    t = _DOLLARS.sub("", value.strip())
    m = _PHRASE.match(t)
    if m and m.group("body").strip():
        word, body = m.group("scale").lower().rstrip("s"), m.group("body").strip()
        if body.startswith("(") and body.endswith(")"):  # "(300) thousand": the sign wraps the number only
            body = "-" + body[1:-1].strip()
        return f"{body} {word}"
    return t


def value_of(got: Any, spec: FieldSpec) -> float | None:
    """The answered quantity in the asked unit, or None when it is not one quantity."""
    return parse_quantity(normalise(got), spec.kind, spec.scale)


def correct(got: Any, expected: Any, spec: FieldSpec) -> bool:
    return field_correct(normalise(got), expected, spec)


@dataclass(frozen=True)
class Check:
    """``Σ terms[name] · value(name) == 0`` within ``rel_tol`` of the largest term."""

    name: str
    terms: Mapping[str, float]
    rel_tol: float = 2e-3

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "terms": dict(self.terms), "rel_tol": self.rel_tol}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Check":
        return cls(d["name"], dict(d["terms"]), float(d.get("rel_tol", 2e-3)))

    def holds(self, values: Mapping[str, float | None]) -> bool:
        parts = [values.get(n) for n in self.terms]
        if any(v is None for v in parts):
            return False
        terms = [c * v for c, v in zip(self.terms.values(), parts)]  # type: ignore[operator]
        scale = max(abs(t) for t in terms) if terms else 0.0
        return math.isfinite(scale) and abs(sum(terms)) <= self.rel_tol * scale + 1e-9


def score_document_fields(answer: str, specs: Sequence[FieldSpec], expected: Mapping[str, Any],
                          checks: Sequence[Check], version: str,
                          gates: Mapping[str, str] | None = None) -> Score:
    """The reward of a document answer (see the module docstring)."""
    obj, why = parse_object(answer)
    zeros = {f"field:{s.name}": (0.0, s.weight) for s in specs}
    if obj is None:
        return Score(0.0, components=zeros, reason=why, verifier_version=version)
    extra = sorted(set(obj) - {s.name for s in specs})
    if extra:
        return Score(0.0, components=zeros, reason=f"keys not asked for: {extra[:5]}", verifier_version=version)
    ok = {s.name: s.name in obj and correct(obj[s.name], expected[s.name], s) for s in specs}
    for field, needs in (gates or {}).items():
        ok[field] = ok[field] and ok.get(needs, False)
    total_w = sum(s.weight for s in specs) or 1.0
    fields = sum(s.weight for s in specs if ok[s.name]) / total_w
    values = {s.name: value_of(obj.get(s.name), s) for s in specs if s.kind != "choice"}
    held = {c.name: c.holds(values) for c in checks}
    consistency = sum(held.values()) / len(held) if held else 1.0
    comps = {f"field:{s.name}": (1.0 if ok[s.name] else 0.0, s.weight) for s in specs}
    comps.update({f"check:{n}": (1.0 if h else 0.0, 0.0) for n, h in held.items()})
    wrong = [n for n, good in ok.items() if not good]
    broken = [n for n, h in held.items() if not h]
    reason = ("all fields correct" if not wrong else f"wrong or missing: {wrong[:6]}") + (
        f"; inconsistent: {broken[:4]}" if broken else "")
    return Score(fields * (1.0 - 0.5 * (1.0 - consistency)), components=comps, passed=sum(ok.values()),
                 total=len(specs), reason=reason, verifier_version=version)
