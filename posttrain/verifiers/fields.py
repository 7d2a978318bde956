"""Field-level scoring of structured (JSON object) answers, with unit and scale normalisation.

What it is: the verifier of the finance family (and any domain whose answer is "a JSON object
with these keys"). A :class:`FieldSpec` names a field, its kind and its weight; the answer must
be **one JSON object with exactly the asked keys**; each field is compared with numeric
tolerance after normalisation; the reward is the weighted fraction of correct fields.

Normalisation of a value (``parse_quantity``):
- numbers are taken as written, in the unit the question asked for;
- strings may carry a currency sign or code (``$ € £ ¥ USD EUR GBP``), thousands separators,
  a leading minus (ASCII or U+2212) or accounting parentheses for negatives (``(1,234)``),
  a scale word or suffix on amounts (``k``/``thousand``, ``m``/``mn``/``million``,
  ``b``/``bn``/``billion``; the value is then converted to the asked unit) and a ``%`` sign on
  percentages (``"12.5%"`` and ``12.5`` are the same answer; the fraction ``0.125`` is not).

Guarantees (reward hacking): the whole answer is 0 when it is not exactly one JSON object, when
the object repeats a key, or when it has any key that was not asked (padding with guesses
never pays); a field whose value is a list, an object, a boolean (for numeric kinds) or a
string holding more than one number earns nothing. Every function is total (never raises on
any answer) and every score is in [0, 1].

Not covered: free-text fields beyond case/whitespace-insensitive equality; unit conversions
between currencies; dates.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from posttrain.core.types import Score
from posttrain.verifiers.structured import answer_text

KINDS = ("amount", "percent", "ratio", "count", "choice")
_SCALES = {"k": 1e3, "thousand": 1e3, "thousands": 1e3, "m": 1e6, "mn": 1e6, "mm": 1e6,
           "million": 1e6, "millions": 1e6, "b": 1e9, "bn": 1e9, "billion": 1e9, "billions": 1e9}
_CURRENCY = re.compile(r"(US\$|USD|EUR|GBP|JPY|[$€£¥])", re.I)
_QTY = re.compile(r"^(?P<num>\d+(?:\.\d*)?|\.\d+)\s*(?P<suffix>[a-z]+|%)?$", re.I)


@dataclass(frozen=True)
class FieldSpec:
    """One asked field. ``scale`` (amounts only) is the unit the answer is asked in: 1e6 means
    "in millions", so ``"$2.5 billion"`` normalises to 2500."""

    name: str
    kind: str = "amount"
    weight: float = 1.0
    scale: float = 1.0
    rel_tol: float = 1e-3
    abs_tol: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, "weight": self.weight, "scale": self.scale,
                "rel_tol": self.rel_tol, "abs_tol": self.abs_tol}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "FieldSpec":
        return cls(**{k: d[k] for k in ("name", "kind", "weight", "scale", "rel_tol", "abs_tol") if k in d})


def _strip_sign(t: str) -> tuple[str, float] | None:
    """Remove accounting parentheses / a leading minus; None when signs are contradictory."""
    sign = 1.0
    if t.startswith("(") and t.endswith(")"):
        t, sign = t[1:-1].strip(), -1.0
    if t[:1] in "-\u2212":
        if sign < 0:
            return None
        t, sign = t[1:].strip(), -1.0
    elif t[:1] == "+":
        t = t[1:].strip()
    return t, sign


def parse_quantity(value: Any, kind: str, scale: float = 1.0) -> float | None:
    """The value of an answer field in the asked unit, or None when it is not one quantity."""
    if isinstance(value, bool) or kind not in KINDS or kind == "choice":
        return None
    if isinstance(value, (int, float)):
        v = float(value)
        return v if math.isfinite(v) else None
    if not isinstance(value, str) or len(value) > 64:
        return None
    t = value.strip()
    if kind == "amount":
        t = _CURRENCY.sub("", t, count=1).strip()
        if _CURRENCY.search(t):  # two currency marks: not one quantity
            return None
    parts = _strip_sign(t)
    if parts is None:
        return None
    t, sign = parts
    t = _CURRENCY.sub("", t, count=1).strip() if kind == "amount" else t
    m = _QTY.match(t.replace(",", "").replace("_", ""))
    if not m:
        return None
    num = float(m.group("num")) * sign
    suffix = (m.group("suffix") or "").lower()
    if not suffix:
        return num
    if kind == "percent":
        return num if suffix == "%" else None
    if kind == "amount" and suffix in _SCALES:
        return num * _SCALES[suffix] / scale
    return None


def _loads_strict(text: str) -> Any:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        if len(set(keys)) != len(keys):
            raise ValueError("duplicate key")
        return dict(pairs)

    return json.loads(text, object_pairs_hook=hook)


def parse_object(answer: str) -> tuple[dict[str, Any] | None, str]:
    """``(object, "")`` when the answer is exactly one JSON object without repeated keys,
    else ``(None, why)``."""
    t = answer_text(answer or "")
    if t is None:
        return None, "answer too long"
    if not t:
        return None, "empty answer"
    try:
        obj = _loads_strict(t)
    except (ValueError, RecursionError):
        return None, "not exactly one JSON object (or a key is repeated)"
    if not isinstance(obj, dict):
        return None, "the answer is JSON but not an object"
    return obj, ""


def field_correct(got: Any, expected: Any, spec: FieldSpec) -> bool:
    """Whether one answered value matches the expected one under ``spec``."""
    if spec.kind == "choice":
        return isinstance(got, str) and " ".join(got.lower().split()) == str(expected).lower()
    v = parse_quantity(got, spec.kind, spec.scale)
    if v is None:
        return False
    if spec.kind == "count":
        return v == float(expected)
    return math.isclose(v, float(expected), rel_tol=spec.rel_tol, abs_tol=spec.abs_tol)


def score_fields(answer: str, specs: Sequence[FieldSpec], expected: Mapping[str, Any],
                 version: str, gates: Mapping[str, str] | None = None) -> Score:
    """Weighted fraction of correct fields; 0 for anything but one object with exactly the keys.

    ``gates`` maps a field to another field that must be correct before it counts (a
    guessable choice field gated on a computed amount, so guessing the choice earns nothing).
    """
    obj, why = parse_object(answer)
    zeros = {s.name: (0.0, s.weight) for s in specs}
    if obj is None:
        return Score(0.0, components=zeros, reason=why, verifier_version=version)
    names = {s.name for s in specs}
    extra = sorted(set(obj) - names)
    if extra:
        return Score(0.0, components=zeros, reason=f"keys not asked for: {extra[:5]}",
                     verifier_version=version)
    ok = {s.name: s.name in obj and field_correct(obj[s.name], expected[s.name], s) for s in specs}
    for field, needs in (gates or {}).items():
        ok[field] = ok[field] and ok.get(needs, False)
    comps = {s.name: (1.0 if ok[s.name] else 0.0, s.weight) for s in specs}
    wrong = [n for n, good in ok.items() if not good]
    reason = "all fields correct" if not wrong else f"wrong or missing: {wrong[:6]}"
    return Score.weighted(comps, passed=sum(ok.values()), total=len(specs), reason=reason,
                          verifier_version=version)
