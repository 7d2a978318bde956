"""The algorithms family's kit: one exact integer, or a list of integers scored per position
(exact length required, so padding earns nothing), and the checker, reference and probes a
domain whose answer is ``hidden["answer"]`` (an int or an int list) composes into its record.

Probes built here never equal the reference answer (they are filtered against it).
"""

from __future__ import annotations

from typing import Any

from posttrain.core.types import Score, Task
from posttrain.verifiers.structured import parse_int, parse_int_list, sequence_score


def int_score(domain_id: str, task: Task, answer: str) -> Score:
    got = parse_int(answer)
    v = 1.0 if got is not None and got == task.hidden["answer"] else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=domain_id,
                 reason="correct" if v else ("not one integer" if got is None else f"got {got}"))


def int_probes(answer: int, **extra: Any) -> dict[str, str]:
    """Off-by-one answers plus named extras, minus any that happen to be correct."""
    cands = {"plus_one": answer + 1, "minus_one": answer - 1, **extra}
    return {k: str(v) for k, v in cands.items() if v != answer}


def list_text(xs: list[Any]) -> str:
    return ", ".join(str(x) for x in xs)


def list_score(domain_id: str, task: Task, answer: str, *, exact: bool = False) -> Score:
    """Per-position credit on an integer list of exactly the expected length (or all-or-nothing)."""
    exp = task.hidden["answer"]
    got = parse_int_list(answer)
    v = sequence_score(got, exp)
    if exact:
        v = float(v == 1.0)
    return Score(v, components={"positions": (v, 1.0)}, verifier_version=domain_id,
                 passed=None if got is None else round(v * len(exp)), total=len(exp),
                 reason="bad format or length" if got is None or len(got) != len(exp) else f"{v:.2f} right")


def answer_reference(task: Task) -> str:
    """``hidden["answer"]`` written as the prompt asks: ``1, 2, 3`` for a list, else the integer."""
    a = task.hidden["answer"]
    return list_text(a) if isinstance(a, list) else str(a)


def answer_check(task: Task, answer: str) -> Score:
    """Exact match of the int or int list ``hidden["answer"]`` (a list is all-or-nothing)."""
    if isinstance(task.hidden["answer"], list):
        return list_score(task.domain, task, answer, exact=True)
    return int_score(task.domain, task, answer)


def positions_check(task: Task, answer: str) -> Score:
    """Per-position credit on the int list ``hidden["answer"]`` (exact length required)."""
    return list_score(task.domain, task, answer)


def answer_probes(task: Task) -> dict[str, str]:
    """Off-by-one integers (for an int answer) plus the named wrong values in ``hidden["probe_values"]``."""
    a = task.hidden["answer"]
    extra = task.hidden.get("probe_values", {})
    if isinstance(a, list):
        return {k: list_text(v) for k, v in extra.items() if v != a}
    return int_probes(a, **extra)
