"""The kit of the ``long_context`` family: its record constructor, shared checkers and probes.

What it is: :func:`lc_domain` builds a domain's
:class:`~posttrain.domains.kit.single_turn.SingleTurnDomain` (difficulties 1-4, optional
conformance exemptions); :func:`exact_cased_check`, :func:`fields_check` (field-level JSON
scoring of ``hidden["fields"]`` against ``hidden["expected"]``) and :func:`set_check` are
checkers that read the id they score for from ``task.domain``; :func:`expected_json` and
:func:`joined_reference` the references of the JSON- and list-answer domains, and
:func:`trap_probes` the probes of the JSON domains with planted traps. :func:`parse_names`
reads an answer that is exactly one line of comma-separated names (each matching a pattern,
no repeats); :func:`set_credit` scores a set of names against
the expected set as ``max(0, (hits - false) / expected)``; :func:`order_credit` scores an
ordering by pairwise agreement rescaled so a random order earns 0 on average and the reverse
earns 0.

Guarantees: total functions (never raise); a padded answer (every candidate listed) earns
nothing once the wrong names are at least as many as the right ones, which each domain
arranges; multi-line answers, repeats and malformed names earn 0. Does not: fuzzy matching.
"""

from __future__ import annotations

import functools
import json
import random
import re
from typing import Callable, Iterable, Mapping, Sequence

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import exact_score
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain, hidden_answer
from posttrain.verifiers.fields import FieldSpec, score_fields
from posttrain.verifiers.structured import answer_text

DIFFICULTIES = (1, 2, 3, 4)


def parse_names(answer: str, pattern: str) -> list[str] | None:
    text = answer_text(answer or "")
    if text is None or not text or "\n" in text:
        return None
    items = [p.strip() for p in text.strip("[]").split(",")]
    rx = re.compile(pattern)
    if any(not rx.fullmatch(i) for i in items) or len(set(items)) != len(items):
        return None
    return items


def set_credit(got: Iterable[str], expected: Iterable[str]) -> tuple[float, int, int]:
    """(credit, hits, false) for a set answer; credit = max(0, (hits - false) / |expected|)."""
    exp, g = set(expected), set(got)
    hits, false = len(g & exp), len(g - exp)
    return (max(0.0, (hits - false) / len(exp)) if exp else float(not g)), hits, false


def set_score(answer: str, expected: Sequence[str], pattern: str, version: str) -> Score:
    got = parse_names(answer, pattern)
    if got is None:
        return Score(0.0, components={"set": (0.0, 1.0)}, reason="not one line of distinct comma-separated names",
                     verifier_version=version)
    credit, hits, false = set_credit(got, expected)
    return Score(credit, components={"set": (credit, 1.0)}, passed=hits, total=len(expected),
                 reason=f"{hits}/{len(expected)} right, {false} wrong", verifier_version=version)


def order_credit(got: Sequence[str], expected: Sequence[str]) -> float:
    """Pairwise agreement 2c - 1 clipped at 0 (c = share of pairs in the right order); 0 unless the
    answer is a permutation of the expected items."""
    if sorted(got) != sorted(expected) or len(expected) < 2:
        return float(list(got) == list(expected)) if len(expected) < 2 else 0.0
    pos = {x: i for i, x in enumerate(got)}
    pairs = [(a, b) for i, a in enumerate(expected) for b in expected[i + 1:]]
    c = sum(pos[a] < pos[b] for a, b in pairs) / len(pairs)
    return max(0.0, 2 * c - 1)


def set_check(pattern: str, key: str) -> Callable[[Task, str], Score]:
    """A checker: the answer's names (each matching ``pattern``) against ``hidden[key]`` by :func:`set_score`."""
    return functools.partial(_set_check, pattern=pattern, key=key)


def _set_check(task: Task, answer: str, *, pattern: str, key: str) -> Score:
    return set_score(answer, task.hidden[key], pattern, task.domain)


def exact_cased_check(task: Task, answer: str) -> Score:
    """Whole-answer exact match, case-sensitive (codes), against ``hidden["answer"]``."""
    return exact_score(task, answer, task.domain, case=True)


def fields_check(task: Task, answer: str) -> Score:
    """One JSON object scored field by field: ``hidden["fields"]`` specs, ``hidden["expected"]`` values."""
    specs = [FieldSpec.from_dict(d) for d in task.hidden["fields"]]
    return score_fields(answer, specs, task.hidden["expected"], task.domain)


def expected_json(task: Task) -> str:
    """The reference of a JSON-answer domain: ``hidden["expected"]`` as JSON."""
    return json.dumps(task.hidden["expected"])


def joined_reference(key: str) -> Callable[[Task], str]:
    """The reference of a name-list domain: ``hidden[key]`` joined by ", " on one line."""
    return functools.partial(_joined, key=key)


def _joined(task: Task, *, key: str) -> str:
    return ", ".join(task.hidden[key])


def trap_probes(task: Task, extra: Mapping[str, str]) -> dict[str, str]:
    """Probes of a JSON-answer domain with planted traps: each ``hidden["traps"]`` answer, the
    values as a list, and the expected object with the ``extra`` keys added."""
    exp = task.hidden["expected"]
    out = {f"trap_{n}": json.dumps(t) for n, t in task.hidden["traps"].items()}
    out["as_list"] = json.dumps(list(exp.values()))
    out["extra_key"] = json.dumps({**exp, **extra})
    return out


def lc_domain(dom_id: str, draw: Callable[[random.Random, int], Draft], check: Callable[[Task, str], Score],
              exploits: Callable[[Task], Mapping[str, str]], *, description: str,
              reference: Callable[[Task], str] = hidden_answer,
              exempt: Mapping[str, str] | None = None) -> SingleTurnDomain:
    """A long-context record: difficulties 1-4 (length and distractor density grow with them);
    ``exempt`` names the generic conformance checks that do not apply by design, with why."""
    return SingleTurnDomain(dom_id, draw, check, exploits, reference=reference, description=description,
                            difficulties=DIFFICULTIES, conformance_exempt=tuple(sorted((exempt or {}).items())))
