"""The single-turn kit: a domain is a :class:`SingleTurnDomain` record of its functions.

A single-turn domain draws a task, knows its reference answer, checks an answer and names the
answers a lazy policy might try. Each of those is a plain function handed to the record::

    ID = "math.digit_sum-v1"

    def _draw(rng, difficulty):
        n = rng.randint(10 ** difficulty, 10 ** (difficulty + 1) - 1)
        return Draft(f"digits {n}=", answer=str(sum(map(int, str(n)))), public={"number": n})

    def _probes(task):
        return {"echo_number": str(task.public["number"])}

    register_domain(SingleTurnDomain(ID, _draw, exact_check, _probes, description=DOC))

Guarantees: ``generate`` is deterministic given the ``random.Random`` (the draw function must
take every choice from it); the Task it returns carries the record's id, so a checker reads
the id it scores for from ``task.domain`` and the same checker serves many domains; ``family``
is the id's prefix. Nothing here is a hook to override: a family that shares a checker or
probes composes them into the record (a constructor function in its kit), it does not subclass.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from posttrain.core.types import Score, Task
from posttrain.domains._helpers import exact_score, make_task


@dataclass(frozen=True)
class Draft:
    """What a draw function returns: the prompt and the data the Task keeps.

    ``answer`` (if given) goes to ``hidden["answer"]``; ``public`` and ``metadata`` are shown to
    the policy, ``hidden`` never is; ``system`` becomes a system message before the prompt.
    """

    prompt: str
    answer: Any = None
    public: Mapping[str, Any] | None = None
    hidden: Mapping[str, Any] | None = None
    system: str | None = None
    metadata: Mapping[str, Any] | None = None


def hidden_answer(task: Task) -> str:
    """The reference answer most domains keep: ``str(task.hidden["answer"])``."""
    return str(task.hidden["answer"])


def exact_check(task: Task, answer: str) -> Score:
    """Whole-answer exact match (whitespace normalised) against ``hidden["answer"]``."""
    return exact_score(task, answer, task.domain)


def no_probes(task: Task) -> dict[str, str]:
    """No domain-specific probes (the conformance check still runs the generic ones)."""
    return {}


@dataclass(frozen=True)
class SingleTurnDomain:
    """One single-turn domain assembled from its functions (see the module docstring).

    ``draw(rng, difficulty) -> Draft`` (a ``Task`` is accepted too, for generators that build
    several messages themselves; its id must be this record's); ``check(task, answer) ->
    Score``; ``exploits(task) -> {name: answer}`` — answers that must score at most 0.05;
    ``reference(task) -> str`` — the reference answer (default ``hidden["answer"]``);
    ``description``: what ``domains list`` and the catalogue show (first line = the skill);
    ``conformance_exempt``: ``(check, why)`` pairs naming generic conformance checks that do not
    apply by design (e.g. retrieval, whose answer is in the prompt); pairs, not a dict, so the
    record stays hashable.
    """

    id: str
    draw: Callable[[random.Random, int], Draft | Task]
    check: Callable[[Task, str], Score]
    exploits: Callable[[Task], Mapping[str, str]] = no_probes
    reference: Callable[[Task], str] = hidden_answer
    description: str = ""
    difficulties: tuple[int, ...] = (1, 2, 3)
    env_kind: str = "single_turn"
    tier: str = "light"
    needs_sandbox: bool = False  # the checker runs code in a sandbox (env_kind stays single-turn)
    conformance_exempt: tuple[tuple[str, str], ...] = ()

    @property
    def family(self) -> str:
        return self.id.split(".", 1)[0]

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        d = self.draw(rng, difficulty)
        if isinstance(d, Task):
            if d.domain != self.id:
                raise ValueError(f"{self.id}: the draw function built a Task for {d.domain!r}")
            return d
        return make_task(self.id, difficulty, d.prompt, answer=d.answer, public=d.public,
                         hidden=d.hidden, system=d.system, metadata=d.metadata)

    def solve(self, task: Task) -> str:
        return self.reference(task)

    def score(self, task: Task, answer: str) -> Score:
        return self.check(task, answer)

    def probes(self, task: Task) -> dict[str, str]:
        return dict(self.exploits(task))
