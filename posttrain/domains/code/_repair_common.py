"""The engine behind the bug-class repair domains (``code.repair_*``): templates that plant
one *class* of bug into a generated program.

What it is: a :class:`BugTemplate` is a parametrised function (specification, reference
source, one planted edit of a given bug class, constants and an input generator). Each
``repair_<class>.py`` module lists a few templates of its class and registers one domain
through :func:`repair_domain`. Expected outputs come from running *our own* reference (and
the planted bug, for the baseline) on the host at generation time.

Guarantees: the planted bug fails at least one public example (called in order) and at most 75% of the hidden
tests; the most common hidden output covers at most half of them; the bug's hidden pass rate
is measured by running it on the hidden inputs alone, in order, in a fresh namespace — as the
harness runs them — so stateful bugs (a mutable default, a cache) are measured as they will
be scored. Difficulty: 1 and 2 pick among the templates of that level; 3 takes any template
and buries it among unrelated helper functions, with only two public examples.

Scoring reuses the family's verifier (:func:`posttrain.domains.code._common.score_answer`:
static gate, hidden tests in a fresh sandbox compared on the host, baseline = the bug's pass
rate) and its probes (hard-coding, constant output, exit(0), patching, always-equal, and the
program unchanged).

Does not: plant more than one bug, or check *how* the bug was fixed (only behaviour counts).
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Any, Callable

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer

from ._common import problem_task, program_probes, score_answer
from ._problems import Problem, examples_text, run_source


@dataclass(frozen=True)
class BugTemplate:
    fn: str
    level: int
    spec: str  # format string over the constants
    source: str  # reference, format string over the constants
    bug: tuple[str, str]  # (old, new): every occurrence of old in the reference becomes new
    consts: Callable[[random.Random], dict[str, Any]]
    inputs: Callable[[random.Random, dict[str, Any]], list[Any]]


NOISE = (
    "def _clamp(v, lo, hi):\n    return max(lo, min(hi, v))\n",
    "def _pairs(xs):\n    return [(xs[i], xs[i + 1]) for i in range(len(xs) - 1)]\n",
    "def _title(words):\n    return \" \".join(w[:1].upper() + w[1:] for w in words)\n",
    "def _mean(xs):\n    return sum(xs) / len(xs) if xs else 0.0\n",
    "def _flatten(rows):\n    return [x for row in rows for x in row]\n",
)


def ints(rng: random.Random, lo_n: int, hi_n: int, lo: int = -9, hi: int = 30) -> list[int]:
    return [rng.randint(lo, hi) for _ in range(rng.randint(lo_n, hi_n))]


def word(rng: random.Random, alphabet: str = "abcde", lo: int = 0, hi: int = 8) -> str:
    return "".join(rng.choice(alphabet) for _ in range(rng.randint(lo, hi)))


def _inputs(rng: random.Random, t: BugTemplate, c: dict, n: int) -> list[list[Any]]:
    seen, out = set(), []
    for _ in range(20 * n):
        args = t.inputs(rng, c)
        key = json.dumps(args)
        if key not in seen:
            seen.add(key)
            out.append(args)
            if len(out) == n:
                break
    return out


def make_repair(rng: random.Random, templates: tuple[BugTemplate, ...], difficulty: int,
                n_hidden: int = 16) -> Problem:
    """A repair problem of this bug class (see the module docstring for the guarantees)."""
    pool = [t for t in templates if t.level == difficulty] or list(templates)
    n_public = 2 if difficulty >= 3 else 3
    for _ in range(60):
        t = rng.choice(pool)
        c = t.consts(rng)
        ref = t.source.format(**c)
        buggy = ref.replace(t.bug[0].format(**c), t.bug[1].format(**c))
        inputs = _inputs(rng, t, c, n_public + n_hidden)
        if len(inputs) < n_public + n_hidden or buggy == ref:
            continue
        hid_in, pub_in = inputs[n_public:], inputs[:n_public]
        hid_out = run_source(ref, t.fn, hid_in)
        if max(hid_out.count(o) for o in hid_out) > n_hidden // 2:
            continue
        b_hid = run_source(buggy, t.fn, hid_in)
        rate = sum(a == b for a, b in zip(b_hid, hid_out)) / n_hidden
        pub_out = run_source(ref, t.fn, pub_in)
        b_pub = run_source(buggy, t.fn, pub_in)
        if b_pub == pub_out or rate > 0.75:  # public examples are called in order, like the tests
            continue
        public = list(zip(pub_in, pub_out))
        if difficulty >= 3:
            noise = rng.sample(NOISE, 2)
            ref, buggy = noise[0] + "\n\n" + ref + "\n\n" + noise[1], noise[0] + "\n\n" + buggy + "\n\n" + noise[1]
        return Problem(t.fn, t.spec.format(**c), ref, public, hid_in, hid_out, buggy, rate)
    raise RuntimeError(f"could not plant a bug at difficulty {difficulty}")


def repair_domain(domain_id: str, bug_class: str, templates: tuple[BugTemplate, ...]) -> Any:
    """Register and return the single-turn repair domain of one bug class."""

    class RepairDomain:
        id = domain_id
        family = "code"
        difficulties = (1, 2, 3)
        env_kind = "sandbox"

        def generate(self, rng: random.Random, difficulty: int) -> Task:
            prob = make_repair(rng, templates, difficulty)
            prompt = (f"This program should satisfy: {prob.spec}\nIt has a bug ({bug_class}) and "
                      f"fails at least one of these examples (called in this order):\n{examples_text(prob.fn, prob.public)}\n"
                      f"```python\n{prob.buggy}```\n"
                      "Reply with the whole fixed program inside <answer>...</answer>.")
            return problem_task(self.id, difficulty, prob, prompt)

        def solve(self, task: Task) -> str:
            return format_answer(task.hidden["reference"])

        def score(self, task: Task, answer: str) -> Score:
            return score_answer(self.id, task, answer)

        def probes(self, task: Task) -> dict:
            return {k: format_answer(v) for k, v in program_probes(task).items()}

    RepairDomain.__name__ = RepairDomain.__qualname__ = "Repair_" + domain_id.split(".")[1].split("-")[0]
    register_domain(RepairDomain)
    return RepairDomain
