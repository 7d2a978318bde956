"""Bug repair: ``code.bug_repair-v1`` (one reply: the fixed program) and
``code.bug_repair_repl-v1`` (multi-turn: the buggy program is ``solution.py`` in a sandbox
with a failing public test; edit, run the tests, resubmit).

Trains: finding and fixing a one-edit bug (a wrong comparison, an off-by-one, a wrong
operand) in a short function, given its specification and a public example it fails.
Difficulty as in :mod:`posttrain.domains.code.synthesis` (the program's complexity).

Reward: as for synthesis, but the baseline of the pass rate is the *buggy program's* hidden
pass rate (the bug fails between a quarter and all of the hidden tests), so submitting the
program unchanged earns 0 and the reward is the share of the broken behaviour repaired.

Probes (≤ 0.05): those of synthesis plus ``buggy_unchanged`` (the program as given).
"""

from __future__ import annotations

import random

from posttrain.core.types import Score, Task
from posttrain.domains.base import register_domain
from posttrain.envs.tool_env import format_answer

from ._common import draw, problem_task, program_probes, repl_env, repl_probes, repl_reference, score_answer
from ._problems import examples_text


class _Repair:
    family = "code"
    difficulties = (1, 2, 3)
    env_kind = "sandbox"
    repl = False

    def generate(self, rng: random.Random, difficulty: int) -> Task:
        prob = draw(rng, difficulty, repair=True)
        how = ("solution.py in the sandbox holds it; fix it with the tools (read_file, edit_file, "
               "write_file, shell, run_tests), then reply <answer>done</answer>." if self.repl else
               "Reply with the whole fixed program inside <answer>...</answer>.")
        prompt = (f"This program should satisfy: {prob.spec}\nIt fails the first example:\n"
                  f"{examples_text(prob.fn, prob.public)}\n```python\n{prob.buggy}```\n{how}")
        return problem_task(self.id, difficulty, prob, prompt)

    def solve(self, task: Task) -> str:
        return format_answer(task.hidden["reference"])

    def score(self, task: Task, answer: str) -> Score:
        return score_answer(self.id, task, answer)

    def probes(self, task: Task) -> dict:
        if self.repl:
            return {**repl_probes(task), "buggy_unchanged": [format_answer("done")]}
        return {k: format_answer(v) for k, v in program_probes(task).items()}


@register_domain
class BugRepair(_Repair):
    id = "code.bug_repair-v1"


@register_domain
class BugRepairRepl(_Repair):
    id = "code.bug_repair_repl-v1"
    repl = True

    def make_env(self, task: Task):
        return repl_env(self.id, task)

    def reference_actions(self, task: Task) -> list[str]:
        return repl_reference(task)

    def solve(self, task: Task) -> str:
        return format_answer("done")
