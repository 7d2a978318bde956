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

from posttrain.domains.base import register_domain
from posttrain.domains.kit.single_turn import Draft, SingleTurnDomain
from posttrain.envs.tool_env import format_answer

from ._kit import (ReplDomain, answer_reference, code_check, draw_problem, problem_draft, program_exploits,
                   repl_probes)
from ._problems import examples_text

REPLY = "Reply with the whole fixed program inside <answer>...</answer>."
TOOLS = ("solution.py in the sandbox holds it; fix it with the tools (read_file, edit_file, "
         "write_file, shell, run_tests), then reply <answer>done</answer>.")


def _draw(rng: random.Random, difficulty: int, how: str = REPLY) -> Draft:
    prob = draw_problem(rng, difficulty, repair=True)
    prompt = (f"This program should satisfy: {prob.spec}\nIt fails the first example:\n"
              f"{examples_text(prob.fn, prob.public)}\n```python\n{prob.buggy}```\n{how}")
    return problem_draft(prob, prompt)


def _draw_repl(rng: random.Random, difficulty: int) -> Draft:
    return _draw(rng, difficulty, TOOLS)


def _repl_exploits(task) -> dict:
    return {**repl_probes(task), "buggy_unchanged": [format_answer("done")]}


BugRepair = register_domain(SingleTurnDomain(
    "code.bug_repair-v1", _draw, code_check, program_exploits, reference=answer_reference,
    description="Fix a one-edit bug in a short function, replying with the fixed program.\n\n" + __doc__,
    env_kind="sandbox"))
BugRepairRepl = register_domain(ReplDomain(
    "code.bug_repair_repl-v1", _draw_repl, exploits=_repl_exploits,
    description="Fix a one-edit bug in solution.py with tools, running its failing test.\n\n" + __doc__))
