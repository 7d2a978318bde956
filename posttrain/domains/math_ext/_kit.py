"""Shared kit for the extended families (math_ext, science, sql, games): strict parsers and scorers.

Guarantees:
- every parser is total (never raises) and strict: it accepts exactly one value written in the
  format the prompt asks for and returns ``None`` for anything else (extra candidates, prose,
  a wrong item count), so padding an answer with guesses can never earn credit;
- every scorer returns a :class:`Score` in [0, 1] whose ``verifier_version`` is the domain id
  and whose ``components`` name what was checked;
- :func:`drop_correct` removes probes that happen to equal the reference for one task (a
  "probe" that is right is not an exploit, e.g. ``gcd = 1`` when the numbers are coprime).

Does not: know any domain's semantics, or decide partial-credit policy (domains do).
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Callable, Sequence

from posttrain.core.types import Score, Task
from posttrain.verifiers.text import extract_answer, normalize_text

MAX_ANSWER_CHARS = 20_000  # longer answers are rejected before parsing (cheap, and never right)

_INT = re.compile(r"^[+-]?\d{1,200}$")
_FRAC = re.compile(r"^[+-]?\d{1,60}(/\d{1,60})?$")
_DEC = re.compile(r"^[+-]?(\d{1,60}(\.\d{0,30})?|\.\d{1,30})$")


def answer_text(answer: str) -> str | None:
    """The stripped final answer (last ``<answer>`` block or whole text); None when absurdly long."""
    if answer is None or len(answer) > MAX_ANSWER_CHARS:
        return None
    return extract_answer(answer).strip()


def parse_int(text: str | None) -> int | None:
    """One integer written plainly (``-12``); None for anything else."""
    t = (text or "").strip()
    return int(t) if _INT.match(t) else None


def parse_frac(text: str | None) -> Fraction | None:
    """One exact rational: ``3``, ``-3/4`` or a terminating decimal ``0.75``; None otherwise."""
    t = (text or "").strip().replace(" ", "")
    try:
        if _FRAC.match(t):
            f = Fraction(t)
        elif _DEC.match(t):
            f = Fraction(t)
        else:
            return None
    except (ValueError, ZeroDivisionError):
        return None
    return f


def parse_items(text: str | None, n: int | None, item: Callable[[str], Any],
                sep: str = ",") -> list[Any] | None:
    """``n`` items separated by ``sep``, each parsed by ``item``; None on a wrong count or item."""
    if text is None:
        return None
    parts = [p.strip() for p in text.split(sep)] if text.strip() else []
    if n is not None and len(parts) != n:
        return None
    out = [item(p) for p in parts]
    return None if any(v is None for v in out) else out


def fmt_frac(f: Fraction) -> str:
    """``3/4``, ``-3/4`` or ``5`` for an integer-valued fraction."""
    f = Fraction(f)
    return str(f.numerator) if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def check(version: str, ok: bool, name: str = "exact", why: str = "") -> Score:
    """A binary verdict with one component."""
    v = 1.0 if ok else 0.0
    return Score(v, components={name: (v, 1.0)}, verifier_version=version,
                 reason=why or ("correct" if ok else "incorrect"))


def fail(version: str, why: str, name: str = "format") -> Score:
    """Zero with the reason (unparseable answer, wrong item count, illegal move...)."""
    return Score(0.0, components={name: (0.0, 1.0)}, reason=why, verifier_version=version)


def per_item(version: str, got: Sequence[Any] | None, want: Sequence[Any],
             eq: Callable[[Any, Any], bool] = lambda a, b: a == b, label: str = "item") -> Score:
    """Equal-weight credit per position; zero unless exactly ``len(want)`` items were given."""
    if got is None or len(got) != len(want):
        return fail(version, f"expected exactly {len(want)} items in the asked format")
    comps = {f"{label}{i}": (1.0 if eq(g, w) else 0.0, 1.0) for i, (g, w) in enumerate(zip(got, want))}
    right = sum(v for v, _ in comps.values())
    return Score.weighted(comps, passed=int(right), total=len(want),
                          reason=f"{int(right)}/{len(want)} correct", verifier_version=version)


def int_score(version: str, answer: str, want: int) -> Score:
    got = parse_int(answer_text(answer))
    if got is None:
        return fail(version, "not a single integer")
    return check(version, got == want)


def frac_score(version: str, answer: str, want: Fraction) -> Score:
    got = parse_frac(answer_text(answer))
    if got is None:
        return fail(version, "not a single exact number or fraction a/b")
    return check(version, got == Fraction(want))


def int_check(task: Task, answer: str) -> Score:
    """The single-turn checker of a one-integer answer: :func:`int_score` against ``hidden["answer"]``."""
    return int_score(task.domain, answer, int(task.hidden["answer"]))


def frac_check(task: Task, answer: str) -> Score:
    """The single-turn checker of an exact-number answer: :func:`frac_score` against ``hidden["answer"]``."""
    return frac_score(task.domain, answer, Fraction(task.hidden["answer"]))


def drop_correct(probes: dict[str, Any], reference: str) -> dict[str, Any]:
    """Probes minus those whose text equals the reference (they are right, not exploits)."""
    ref = normalize_text(reference)
    return {k: v for k, v in probes.items() if not isinstance(v, str) or normalize_text(v) != ref}
