"""The kit of the ``text_data`` family: the checkers and references its records share.

What it is: :func:`exact_text` (the whole extracted answer, stripped, equals
``str(hidden["answer"])``; optionally ignoring case), :func:`items_score` (per-item credit of a
``;``-separated list whose every item must match a pattern, the count enforced) and
:func:`joined_answer` (the reference of a list answer: its items joined by a separator) and
:func:`json_answer` (the reference of a JSON answer). Each
domain is a :class:`~posttrain.domains.kit.single_turn.SingleTurnDomain` record built from
these and its own functions; checkers read the id they score for from ``task.domain``.

Guarantees: total functions (a malformed answer scores 0, never raises); stray text around a
list voids it (every item must match its pattern).
"""

from __future__ import annotations

import functools
import json
import re
from typing import Callable

from posttrain.core.types import Score, Task
from posttrain.verifiers.structured import answer_text, sequence_score, split_items


def exact_text(task: Task, answer: str, *, strip_case: bool = False) -> Score:
    """1 when the extracted, stripped answer equals ``str(hidden["answer"])`` (case-blind if asked)."""
    got = (answer_text(answer) or "").strip()
    exp = str(task.hidden["answer"])
    v = 1.0 if (got.lower() == exp.lower() if strip_case else got == exp) else 0.0
    return Score(v, components={"exact": (v, 1.0)}, verifier_version=task.domain)


def items_score(task: Task, answer: str, pattern: str) -> Score:
    """Per-item credit against the list ``hidden["answer"]``; every item must match ``pattern``."""
    got = split_items(answer_text(answer), ";")
    if got is not None and not all(re.fullmatch(pattern, g) for g in got):
        got = None
    v = sequence_score(got, [str(x) for x in task.hidden["answer"]])
    return Score(v, components={"items": (v, 1.0)}, verifier_version=task.domain)


def joined_answer(sep: str) -> Callable[[Task], str]:
    """The reference: ``hidden["answer"]`` itself, or its items joined by ``sep`` when it is a list."""
    return functools.partial(_joined, sep=sep)


def _joined(task: Task, *, sep: str) -> str:
    a = task.hidden["answer"]
    return sep.join(map(str, a)) if isinstance(a, list) else str(a)


def json_answer(task: Task) -> str:
    """The reference of a JSON answer: ``hidden["answer"]`` as JSON."""
    return json.dumps(task.hidden["answer"])
