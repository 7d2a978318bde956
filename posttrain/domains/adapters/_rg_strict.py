"""Strict checks that wrap single reasoning-gym scorers (see :mod:`.reasoning_gym`).

:mod:`._rg_scoring` hardens every generator the same way (padding, floods, partial credit).
Some scorers read an answer too generously in a way only that generator's rules can tell:

- ``propositional_logic`` accepts any non-trivial conclusion entailed by the premises, so a
  premise copied from the prompt (or the premises joined by ``∧``) scored 1.0 on 38 of 50
  tasks. :func:`restates_premises` rejects every answer logically *equivalent* to a premise
  or to a conjunction of premises (a reordered, re-bracketed or double-negated copy too), and
  :func:`propositional_reference` replaces the rare example answer that is such a copy;
- ``knights_knaves`` pulls ``<name> ... <role>`` pairs out of any text, so a statement from
  the prompt that happens to name the right roles scored 1.0; the answer must be a list of
  ``<Name> is a/an <role>`` clauses and nothing else;
- ``quantum_lock`` reads every letter A-C anywhere in the text as a button press (``B: Add 2
  (when any)`` reads as ``B A A``); the answer must be button letters and arrows only.

:func:`wrap` gives the scorer a generator is scored with: its own, with the check in front.
Each guarded generator's domain is version 2 (:data:`VERSIONS`): its rewards changed.

Does not: change what counts as right for an answer of the expected shape, or reject a
one-step weakening such as ``(premise ∨ Q)`` (a valid conclusion, and the shape of many of
reasoning-gym's own example answers).
"""

from __future__ import annotations

import itertools
import re
from typing import Any, Callable

Scorer = Callable[[str, dict], Any]

# A clause "Name is a/an role", clauses separated by commas, semicolons, "and" or periods.
_KK_CLAUSE = re.compile(r"[A-Za-z][A-Za-z'-]* is an? [A-Za-z]+")
_KK_SEP = re.compile(r"\s*(?:[,;.]\s*(?:and\s+)?|\s+and\s+)\s*")
_BUTTONS = re.compile(r"[A-Z](?:\s*(?:→|->|,)?\s*[A-Z])*")
MAX_VARIABLES = 12  # 4096 rows: the truth table stays a few milliseconds


def knights_knaves_shape(answer: str) -> bool:
    clauses = [c for c in _KK_SEP.split(answer.strip().rstrip(".")) if c.strip()]
    return bool(clauses) and all(_KK_CLAUSE.fullmatch(c.strip()) for c in clauses)


def buttons_shape(answer: str) -> bool:
    return bool(_BUTTONS.fullmatch(answer.strip()))


def _truth_table(answer: str, entry: dict) -> list[tuple[bool, list[bool]]] | None:
    """(answer's value, premises' values) for every assignment; None when it cannot be read."""
    from reasoning_gym.logic.propositional_logic import Expression

    names = sorted(set(entry["metadata"]["variables"]) | set(re.findall(r"[A-Z]", answer)))
    if len(names) > MAX_VARIABLES:
        return None
    try:
        premises = [Expression.from_string(p) for p in entry["metadata"]["premises"]]
        expr = Expression.from_string(answer)
        rows = []
        for values in itertools.product((False, True), repeat=len(names)):
            env = dict(zip(names, values))
            rows.append((expr.evaluate(env), [p.evaluate(env) for p in premises]))
    except Exception:  # noqa: BLE001 - an answer that does not parse or evaluate restates nothing
        return None
    return rows


def restates_premises(answer: str, entry: dict) -> bool:
    """True when ``answer`` is equivalent to the conjunction of some non-empty set of the
    entry's premises (one premise is such a set).

    If the answer A is equivalent to the conjunction of a set S, then A entails every premise
    in S, so with T = {premises A entails} ⊇ S we get A ⊨ ∧T ⊨ ∧S ≡ A: it is enough to test
    the one set T, in a single pass over the truth table.
    """
    rows = _truth_table(answer, entry)
    if not rows:
        return False
    entailed = [i for i in range(len(rows[0][1])) if all(p[i] for a, p in rows if a)]
    return bool(entailed) and all(a for a, p in rows if all(p[i] for i in entailed))


def _good_conclusion(text: str, entry: dict) -> bool:
    """Entailed by the premises, not a tautology, and no restatement of them."""
    rows = _truth_table(text, entry)
    return bool(rows) and all(a for a, p in rows if all(p)) and not all(a for a, _ in rows) \
        and not restates_premises(text, entry)


def propositional_reference(item: dict) -> str:
    """reasoning-gym's example conclusion, unless it restates the premises (1 item in 50:
    the example is a premise copied); then the first good one of: two variables joined by
    ∨ ∧ → ↔, then a premise widened by ``∨`` another variable."""
    meta = item["metadata"]
    example = str(meta["example_answer"])
    if not restates_premises(example, item):
        return example
    names = sorted(meta["variables"])
    pairs = [f"({a} {op} {b})" for a, b in itertools.permutations(names, 2) for op in "∨∧→↔"]
    widened = [f"({p} ∨ {v})" for p in meta["premises"] for v in names]
    return next((c for c in pairs + widened if _good_conclusion(c, item)), example)


def _propositional_logic(base: Scorer, answer: str, entry: dict) -> float:
    raw = float(base(answer, entry))
    return 0.0 if raw >= 1.0 - 1e-9 and restates_premises(answer, entry) else raw


def _shaped(shape: Callable[[str], bool]) -> Callable[[Scorer, str, dict], float]:
    def check(base: Scorer, answer: str, entry: dict) -> float:
        return float(base(answer, entry)) if shape(answer) else 0.0

    return check


GUARDS: dict[str, Callable[[Scorer, str, dict], float]] = {
    "propositional_logic": _propositional_logic,
    "knights_knaves": _shaped(knights_knaves_shape),
    "quantum_lock": _shaped(buttons_shape),
}


# A generator whose reward semantics a guard changed gets a new domain version (DESIGN §3).
VERSIONS: dict[str, int] = {name: 2 for name in GUARDS}


def wrap(name: str, base: Scorer) -> Scorer:
    """``base`` with the generator's strict check in front (``base`` itself when it has none)."""
    guard = GUARDS.get(name)
    if guard is None:
        return base
    return lambda answer, entry: guard(base, answer, entry)
