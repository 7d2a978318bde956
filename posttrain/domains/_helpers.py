"""Small shared helpers for writing domains: building a Task and scoring exact answers.

These keep each domain module to its generator, its reference solver and its verifier.
"""

from __future__ import annotations

from typing import Any, Mapping

from posttrain.core.types import Score, Task
from posttrain.verifiers.text import exact_match, numeric_match


def make_task(domain_id: str, difficulty: int, prompt: str, *, answer: Any = None,
              public: Mapping[str, Any] | None = None, hidden: Mapping[str, Any] | None = None,
              system: str | None = None, metadata: Mapping[str, Any] | None = None) -> Task:
    """A single-user-message Task; ``answer`` (if given) goes into ``hidden["answer"]``."""
    messages = ([{"role": "system", "content": system}] if system else []) + [
        {"role": "user", "content": prompt}
    ]
    hid = dict(hidden or {})
    if answer is not None:
        hid["answer"] = answer
    return Task(domain=domain_id, seed=0, difficulty=difficulty, prompt=tuple(messages),
                public=dict(public or {}), hidden=hid, metadata=dict(metadata or {}))


def exact_score(task: Task, answer: str, version: str, *, case: bool = False) -> Score:
    """1 when the answer equals ``task.hidden["answer"]`` after whitespace normalisation."""
    v = exact_match(answer, str(task.hidden["answer"]), case=case)
    return Score(v, components={"exact": (v, 1.0)}, reason="exact match" if v else "mismatch",
                 verifier_version=version)


def numeric_score(task: Task, answer: str, version: str, **tol: float) -> Score:
    """1 when the answer is a single number equal (within tolerance) to ``task.hidden["answer"]``."""
    v = numeric_match(answer, float(task.hidden["answer"]), **tol)
    return Score(v, components={"numeric": (v, 1.0)}, reason="numeric match" if v else "mismatch",
                 verifier_version=version)
